"""Closed-loop simulation in one process: a control law on a plant at a fixed rate, recorded as a real robot would be.

* :mod:`.runner`: :func:`~pardyn.simulation.runner.run_closed_loop`, the in-process twin of the
  ``sim`` + ``controller`` nodes (same law, velocity filter, eq. 50 projection, saturation), no ROS:
  deterministic and fast, for tests, benchmarks, the identification's closed-loop estimators
  (:mod:`pardyn.identification.model_simulation`) and the studies;
* :mod:`.identification_runs`: the robot *as built* (nominal parameters perturbed) on the MuJoCo
  plant, exciting runs recorded as rosbag2 bags with their reference and controller, the shipped
  robots' payloads (:data:`~pardyn.simulation.identification_runs.PAYLOADS`) -- what the
  identification tests, ``pardyn demo``, the ``identification_runs`` node and the studies record.

Two layers: the runner sits on control, plants and trajectories, below identification (whose
closed-loop estimators simulate the model in it); the identification runs sit above identification
(they design their exciting trajectories with :mod:`pardyn.excitation.design`), below the studies (:mod:`pardyn.experiments`),
the nodes and the CLI.
"""
