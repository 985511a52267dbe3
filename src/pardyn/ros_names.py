"""ROS 2 names checked before rcl sees them: a bad one is a line naming the file and key, not ``RCLInvalidROSArgsError``.

The rules of ROS 2's ``rcl`` (design article "Topic and Service name mapping"),
without rclpy: a *token* is ``[A-Za-z_][A-Za-z0-9_]*`` (substitutions such as
``{node}`` are not used by pardyn and refused); a topic name is tokens joined by
``/``, optionally absolute (``/``) or private (``~/``), with no ``//`` and no
trailing ``/``; a namespace is the same without ``~``; a node name is one token.
"""

from __future__ import annotations

import re

from pardyn.errors import DescriptionError, PardynError
from pardyn.textio import shown

__all__ = ["check_namespace", "check_node_name", "check_topic"]

_TOKEN = r"[A-Za-z_][A-Za-z0-9_]*"
_TOPIC = re.compile(rf"^(~/|/)?{_TOKEN}(/{_TOKEN})*$|^~$")
_NAMESPACE = re.compile(rf"^/?({_TOKEN}(/{_TOKEN})*)?$")
_NODE = re.compile(rf"^{_TOKEN}$")
_LONGEST = 255


def _check(pattern: re.Pattern, value: object, what: str, where: str, error: type[PardynError]) -> str:
    if not isinstance(value, str) or len(value) > _LONGEST or not pattern.match(value):
        raise error(f"{where}: {shown(value)} is not a valid ROS {what} (letters, digits and _ in "
                    f"'/'-separated parts, none starting with a digit)")
    return value


def check_topic(value: object, where: str, *, error: type[PardynError] = DescriptionError) -> str:
    """A topic (or service) name as a remapping takes it; ``error`` naming ``where`` otherwise."""
    return _check(_TOPIC, value, "topic name", where, error)


def check_namespace(value: object, where: str, *, error: type[PardynError] = DescriptionError) -> str:
    """A namespace (``""``, ``r1``, ``/r1/arm``); ``error`` naming ``where`` otherwise."""
    return _check(_NAMESPACE, value, "namespace", where, error)


def check_node_name(value: object, where: str, *, error: type[PardynError] = DescriptionError) -> str:
    """A node name (one token); ``error`` naming ``where`` otherwise."""
    return _check(_NODE, value, "node name", where, error)
