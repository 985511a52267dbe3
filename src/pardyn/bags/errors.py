"""Errors of :mod:`pardyn.bags`: one type, :class:`BagError`, naming the bag, the topic and the time."""

from __future__ import annotations

from pathlib import Path

from pardyn.errors import InputError

__all__ = ["BagError", "BagIncompleteError", "format_time"]


def format_time(stamp_ns: int) -> str:
    """``stamp_ns`` as seconds, exact, without trailing zeros (``1234000000`` -> ``"1.234"``)."""
    sign = "-" if stamp_ns < 0 else ""
    seconds, nanoseconds = divmod(abs(int(stamp_ns)), 1_000_000_000)
    fraction = f"{nanoseconds:09d}".rstrip("0")
    return f"{sign}{seconds}.{fraction}" if fraction else f"{sign}{seconds}"


def at(stamp_ns: int) -> str:
    """``"t=1.234 s"``: the time of a message in an error."""
    return f"t={format_time(stamp_ns)} s"


class BagError(InputError):
    """A bag cannot be written or read as asked; the message names the bag, topic and time.

    Attributes:
        bag: the bag directory (or storage file).
        topic: the topic concerned, None if none.
        t_s: the time of the message at fault (s, header stamp or bag time), None if none.
        kind: ``"exists"``, ``"format"``, ``"type"``, ``"topic"``, ``"timestamp"``,
            ``"data"``, ``"closed"``, ``"incomplete"``, ``"count"``, ``"stamps"``,
            ``"names"``, ``"lengths"``, ``"non_finite"``, ``"units"``, ``"outlier"`` or ``"kinematics"``.
    """

    def __init__(
        self,
        message: str,
        *,
        bag: Path | str,
        kind: str,
        topic: str | None = None,
        t_s: float | None = None,
    ) -> None:
        where = f"{bag}" if topic is None else f"{bag}: topic {topic}"
        super().__init__(f"{where}: {message}")
        self.bag = Path(bag)
        self.topic = topic
        self.t_s = t_s
        self.kind = kind
        self._message = message

    def __reduce__(self):
        # keyword-only arguments: pickle (worker processes) needs to be told how to rebuild it
        return _rebuild_bag_error, (type(self), self._message, self.bag, self.kind, self.topic, self.t_s)


def _rebuild_bag_error(cls, message, bag, kind, topic, t_s):
    error = cls.__new__(cls)
    BagError.__init__(error, message, bag=bag, kind=kind, topic=topic, t_s=t_s)
    return error


class BagIncompleteError(BagError):
    """The bag was not closed (its writer was killed or is still writing).

    :func:`pardyn.bags.repair.repair_bag` rebuilds it from its complete chunks.
    """

    def __init__(self, message: str, *, bag: Path | str) -> None:
        super().__init__(message, bag=bag, kind="incomplete")
