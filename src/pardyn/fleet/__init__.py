"""Fleets: every robot of a cell identified from its nightly runs, and the parameters' drift.

* :mod:`.layout`: the folder of a fleet (one folder per robot, one entry per run);
* :mod:`.identify`: every new run identified as a task of :mod:`pardyn.distributed`;
* :mod:`.summary`: base parameters per robot and date with sigma, drift, outliers, unusable runs;
* :mod:`.simulate`: a simulated fleet (scattered parameters, friction growing over nights).
"""
