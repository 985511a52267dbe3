"""Exciting trajectories for identification, in one room: their shape, their bounds and their design.

* :mod:`.fourier`: :class:`~pardyn.excitation.fourier.FourierTrajectory`, finite Fourier series in task
  coordinates faded in and out (Swevers et al.'s parametrization);
* :mod:`.bounds`: a robot's excitation bounds (:class:`~pardyn.excitation.bounds.ExcitationSettings`: the robot
  YAML's ``excitation:`` section, :mod:`pardyn.description.excitation`, else derived from its limits and home);
* :mod:`.design`: :func:`~pardyn.excitation.design.design_exciting_trajectory`, the coefficients ranked and
  optimised by the condition number of the base-parameter observation matrix.

Two layers, as :mod:`pardyn.simulation`: the series and the bounds sit on trajectories and the description,
below identification (which reads the bounds); the design sits on identification's base parameters, above it,
below the identification runs (:mod:`pardyn.simulation.identification_runs`), the ``trajectory`` node and the
studies. ``test/test_package.py`` holds the line between them.
"""
