"""Experiments: control laws run on a plant, recorded as a real robot would be.

:mod:`pardyn.experiments.runner` runs a law on a plant in one process (no ROS:
deterministic and fast, for tests, benchmarks and batch identification runs);
the ROS nodes (``sim``, ``controller``, ``recorder``) run the same laws over DDS.
"""
