"""The integrators a plant offers by name: one table, read by the plant and by the ``sim`` node's parameter table.

Apart from the MuJoCo plant itself so that the node tables (:mod:`pardyn.node_parameters`) do not
import MuJoCo.
"""

from __future__ import annotations

__all__ = ["MUJOCO_INTEGRATORS"]

MUJOCO_INTEGRATORS = ("RK4", "implicitfast", "implicit", "Euler")
"""MuJoCo integrators accepted by :class:`pardyn.plants.mujoco_plant.MujocoPlant` (``option/integrator``):
its default ``RK4`` keeps free motion's energy to 3e-8 over 1 s; ``implicitfast`` costs ~1/3 per step
(``bench/plants.py``) at first-order accuracy."""
