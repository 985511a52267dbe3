"""The integrators a plant offers by name: one table, read by the plant and by the ``sim`` node's parameter table.

Apart from the MuJoCo plant itself so that the node tables (:mod:`pardyn.node_parameters`) do not
import MuJoCo.
"""

from __future__ import annotations

__all__ = ["MUJOCO_INTEGRATORS"]

MUJOCO_INTEGRATORS = ("RK4", "implicitfast", "implicit", "Euler")
"""MuJoCo integrators accepted by :class:`pardyn.plants.mujoco_plant.MujocoPlant` (``option/integrator``):
its default ``RK4`` keeps free motion's energy to 3e-8 over 1 s; ``implicitfast`` costs ~1/3 per step at
first-order accuracy. On the DualV (``bench/plants.py``, 2 s under joint PD against RK4 at 0.05 ms, two
runs) ``RK4`` at 0.5 ms costs 148-152 us a 1 ms period and strays 6.6e-5 rad, ``implicitfast`` at 0.1 ms
192-202 us and 1.8e-4 rad (the default, RK4 at 0.1 ms: 654-666 us, 8.1e-6 rad)."""
