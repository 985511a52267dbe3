"""Which nodes may command the sim: publisher identities through the ROS graph, without ROS (transport).

The sim accepts commands only from the nodes it names, identifying the publisher of each message by its gid
through the ROS graph. The graph can list a publisher before it knows its node's name (the DDS endpoint is
discovered before the node's name arrives): such a publisher is *unresolved*, its commands are rejected, and
it is looked up again at its next message, so the verdict is never final before the graph names the node
(issue 27: one launch in five never moved).

The sim node (:mod:`pardyn.nodes.sim`) hands :class:`CommandSources` each command's publisher gid and a
lookup of the graph; nothing here reads a clock or the graph itself.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

__all__ = ["CommandSources", "SourceEvent"]


@dataclass(frozen=True)
class SourceEvent:
    """Something :class:`CommandSources` says once: ``kind`` is ``"foreign"`` (a named node not in the
    sources: its commands are rejected), ``"unresolved"`` (the graph does not name the publisher's node yet:
    rejected until it does) or ``"resolved"`` (a publisher first unresolved is now named; ``held`` of its
    commands were rejected meanwhile; ``accepted`` says whether it is a source)."""

    kind: str
    node: str | None
    held: int = 0
    accepted: bool = False


@dataclass
class _Publisher:
    node: str | None = None  # fully qualified, None while the graph does not name it
    rejected: int = 0  # commands rejected
    held: int = 0  # of which while unresolved
    said: str = ""  # the last SourceEvent kind reported for it
    checked_s: float = -float("inf")


@dataclass
class CommandSources:
    """Whether the publisher of a command is one of the named source nodes (see the module docstring).

    Args:
        sources: fully qualified node names accepted (``/ns/controller``).
        lookup: the graph's publishers of the command topic now, as ``(gid bytes, node)`` pairs, ``node``
            the fully qualified name or None when the graph does not name it yet.
        recheck_s: an unresolved publisher is looked up again at its next message once this long has
            passed since its last look-up (s): the graph changes on discovery, not per message.
    """

    sources: frozenset[str]
    lookup: Callable[[], Iterable[tuple[bytes, str | None]]]
    recheck_s: float = 0.02
    lookups: int = 0
    _publishers: dict[bytes, _Publisher] = field(default_factory=dict)

    def accepts(self, gid: bytes, now_s: float) -> tuple[str, SourceEvent | None]:
        """The verdict on a command of the publisher ``gid`` and what to say about it (once per publisher).

        The verdict is ``"accepted"``, ``"unresolved"`` (rejected: the graph does not name the
        publisher's node yet) or ``"foreign"`` (rejected: a node that is not a source).
        """
        publisher = self._publishers.get(gid)
        if publisher is None or (publisher.node is None and now_s - publisher.checked_s >= self.recheck_s):
            self._refresh(now_s)
            publisher = self._publishers.setdefault(gid, _Publisher(checked_s=now_s))
        if publisher.node is None:
            publisher.rejected += 1
            publisher.held += 1
            if publisher.said:
                return "unresolved", None
            publisher.said = "unresolved"
            return "unresolved", SourceEvent("unresolved", None)
        accepted = publisher.node in self.sources
        verdict = "accepted" if accepted else "foreign"
        if not accepted:
            publisher.rejected += 1
        if publisher.said == "unresolved":
            publisher.said = "resolved"
            return verdict, SourceEvent("resolved", publisher.node, publisher.held, accepted)
        if not accepted and not publisher.said:
            publisher.said = "foreign"
            return verdict, SourceEvent("foreign", publisher.node)
        return verdict, None

    def _refresh(self, now_s: float) -> None:
        self.lookups += 1
        for gid, node in self.lookup():
            publisher = self._publishers.setdefault(bytes(gid), _Publisher())
            publisher.checked_s = now_s
            if publisher.node is None and node is not None:
                publisher.node = node  # a gid's node never changes once named

    def rejected(self) -> dict[str, int]:
        """Commands rejected per publisher: ``{node or "unnamed publisher": count}`` (held ones included)."""
        counts: Counter[str] = Counter()
        for publisher in self._publishers.values():
            if publisher.rejected:
                counts[publisher.node or "unnamed publisher"] += publisher.rejected
        return dict(counts)

    def describe(self) -> str:
        """What was rejected and why, for a summary: ``"12 from /ns/controller before the graph named it"``."""
        parts = []
        for publisher in self._publishers.values():
            if publisher.held:
                parts.append(f"{publisher.held} from {publisher.node or 'a publisher'} before the graph named it")
            foreign = publisher.rejected - publisher.held
            if foreign:
                parts.append(f"{foreign} from {publisher.node} (not a command source)")
        return ", ".join(parts) or "none"
