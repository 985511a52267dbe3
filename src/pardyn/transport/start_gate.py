"""When the sim publishes state 0: the nodes it waits for are up, without ROS (transport).

With nodes to wait for, the sim publishes state 0 (and simulated time starts) only once each is up, whatever
the order in which their processes come up: a node is up when the graph lists a topic of its own (not
``/rosout``, ``/parameter_events`` nor the clock, which rclpy creates before the node's construction; pardyn's
nodes create their endpoints at its end), and a node that subscribes the sim's states is up only once the
state publisher is matched with every subscription the graph lists on it (a recorder would miss the first
states otherwise). After ``timeout_s`` it starts without the missing ones.

The sim node (:mod:`pardyn.nodes.sim`) asks the ROS graph; :class:`StartGate` decides. Times are seconds
of a monotonic clock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["StartGate"]


@dataclass
class StartGate:
    """When the sim may publish state 0 (see the module docstring).

    Args:
        nodes: fully qualified names of the nodes to wait for.
        timeout_s: wall time after ``since_s`` when the sim starts without the missing ones (s).
        since_s: when the wait began (s, monotonic).
    """

    nodes: frozenset[str]
    timeout_s: float
    since_s: float

    def missing(self, up: Callable[[str], tuple[bool, bool]], matched: int, listed: int) -> list[str]:
        """The nodes not up yet, sorted.

        ``up(node)``: (whether the graph lists a topic of its own, whether it subscribes the sim's states);
        ``matched``: subscriptions matched with the state publisher; ``listed``: subscriptions of the state
        topic in the graph.
        """
        missing = []
        for node in sorted(self.nodes):
            present, subscribes = up(node)
            if not present or (subscribes and matched < listed):
                missing.append(node)
        return missing

    def verdict(self, missing: list[str], now_s: float) -> str:
        """``"open"`` (none missing), ``"timeout"`` (some missing after ``timeout_s``) or ``"wait"``."""
        if not missing:
            return "open"
        return "timeout" if now_s - self.since_s >= self.timeout_s else "wait"
