"""The scene of a robot following recorded joint states: markers and ``/tf`` for a bag, at a rate of their own.

:class:`SceneTrack` takes the joint states a recorder writes (``sensor_msgs/JointState``: the actuated joints,
plus the sensed passive ones when present), solves the loops (:class:`pardyn.kinematics.tracker.ClosureTracker`,
warm-started), and every ``1 / rate_hz`` of their stamps gives the serialized ``visualization_msgs/MarkerArray``
and ``tf2_msgs/TFMessage`` of the solved configuration (:mod:`pardyn.scene.messages`), stamped as the joint
state they come from. The recorder writes them beside the joint states, so a bag opened in Foxglove (or played
to RViz) shows the robot moving through its loops; ``robot_description`` (the URDF, latched) goes in once.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime
from rosbags.typesys.store import Typestore

from pardyn.errors import PardynError
from pardyn.kinematics.tracker import ClosureTracker
from pardyn.robot import Robot
from pardyn.scene.geometry import RobotScene
from pardyn.scene.messages import MARKERS_TYPE, TF_TYPE, marker_array, message, serialize, tf_message

__all__ = ["DESCRIPTION_TOPIC", "DESCRIPTION_TYPE", "LATCHED_QOS", "MARKERS_TOPIC", "TF_TOPIC", "SceneTrack",
           "robot_description"]

MARKERS_TOPIC = "robot_markers"
"""Relative name of the MarkerArray topic (resolved in the node's namespace)."""
TF_TOPIC = "/tf"
DESCRIPTION_TOPIC = "robot_description"
DESCRIPTION_TYPE = "std_msgs/msg/String"

_INFINITE = QosTime(9223372036, 854775807)
LATCHED_QOS = Qos(QosHistory.KEEP_LAST, 1, QosReliability.RELIABLE, QosDurability.TRANSIENT_LOCAL, _INFINITE,
                  _INFINITE, QosLiveliness.AUTOMATIC, _INFINITE, False)
"""The QoS ``robot_description`` is offered with (as robot_state_publisher's): ``ros2 bag play`` latches it."""


def robot_description(robot: Robot) -> str:
    """The robot's URDF text (what RViz's RobotModel and Foxglove take); empty for a model that is not a URDF."""
    path = Path(robot.urdf)
    return path.read_text(encoding="utf-8") if path.suffix.lower() == ".urdf" else ""


class SceneTrack:
    """Markers and ``/tf`` of a robot from its joint states (module docstring).

    Args:
        robot: the robot the joint states are of.
        typestore: message definitions (the bag's).
        rate_hz: scene messages per second of joint-state stamps (30: a smooth replay, small bags).
        frame_id: the base frame of the markers and parent of ``/tf``; the URDF's root link by default.
    """

    def __init__(self, robot: Robot, typestore: Typestore, *, rate_hz: float = 30.0, frame_id: str = "") -> None:
        self.robot = robot
        self.typestore = typestore
        self.scene = RobotScene(robot)
        self.tracker = ClosureTracker(robot)
        self.period_ns = int(round(1e9 / rate_hz))
        self.frame_id = frame_id or self.scene.root
        self.description = robot_description(robot)
        self._next_ns: int | None = None
        self.dropped = 0  # joint states that could not be solved (kept out of the scene)
        self.last_error = ""

    def topics(self, markers_topic: str = MARKERS_TOPIC, description_topic: str = DESCRIPTION_TOPIC
               ) -> list[tuple[str, str, list[Qos]]]:
        """``(topic, type, offered QoS)`` of what :meth:`update` gives (``robot_description`` if a URDF)."""
        topics = [(markers_topic, MARKERS_TYPE, []), (TF_TOPIC, TF_TYPE, [])]
        if self.description:
            topics.append((description_topic, DESCRIPTION_TYPE, [LATCHED_QOS]))
        return topics

    def description_cdr(self) -> bytes:
        """The serialized ``std_msgs/String`` of :attr:`description`."""
        return serialize(self.typestore, message(self.typestore, DESCRIPTION_TYPE, data=self.description))

    def solve(self, names: Sequence[str], positions: Sequence[float]):
        """The configuration (nv,) of a joint state, warm-started at the last one; None when it cannot be solved
        (wrong names, unreachable: counted in :attr:`dropped`, the reason in :attr:`last_error`)."""
        try:
            return self.tracker.update(list(names), list(positions), []).q
        except PardynError as error:
            self.dropped += 1
            self.last_error = str(error)
            return None

    def messages(self, q, stamp_ns: int, *, with_tf: bool = True) -> tuple[bytes, bytes | None]:
        """``(markers CDR, tf CDR or None)`` of the configuration ``q`` (nv,), stamped ``stamp_ns``."""
        frame = self.scene.frame(q)
        markers = serialize(self.typestore, marker_array(self.typestore, frame, stamp_ns=stamp_ns,
                                                         frame_id=self.frame_id))
        if not with_tf:
            return markers, None
        return markers, serialize(self.typestore, tf_message(self.typestore, frame, stamp_ns=stamp_ns,
                                                             frame_id=self.frame_id))

    def due(self, stamp_ns: int) -> bool:
        """Whether :meth:`update` makes a scene of a joint state stamped ``stamp_ns`` (if it can be solved): a
        caller that has the state serialized decodes only these (the recorder: ``rate_hz`` of its 1 kHz)."""
        return not (self._next_ns is not None and self._next_ns - 2 * self.period_ns <= stamp_ns < self._next_ns)

    def update(self, names: Sequence[str], positions: Sequence[float], stamp_ns: int) -> tuple[bytes, bytes] | None:
        """``(markers CDR, tf CDR)`` of the joint state at ``stamp_ns``, or None when no scene is due.

        Only the joint states that make a scene are solved (:meth:`solve`, warm-started at the last scene's
        configuration, a period before): a recorder at 1 kHz pays for ``rate_hz`` solves a second. None too
        for a state that cannot be solved (the next state is tried).
        """
        if not self.due(stamp_ns):
            return None
        q = self.solve(names, positions)
        if q is None:
            return None
        # the next one a period after this one's slot (not after this stamp): rate_hz on average whatever the
        # joint-state rate; after a gap or a stamp going back (a new run), a period after this stamp
        due = self.period_ns + (stamp_ns if self._next_ns is None else self._next_ns)
        self._next_ns = due if stamp_ns < due <= stamp_ns + self.period_ns else stamp_ns + self.period_ns
        return self.messages(q, stamp_ns)
