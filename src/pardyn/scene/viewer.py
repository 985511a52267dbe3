"""The robot in a browser with viser: sliders on the actuated joints, a replay with a timeline, or a live feed.

:class:`SceneView` draws a :class:`~pardyn.scene.geometry.RobotScene` in a ``viser.ViserServer`` (bodies as their
meshes or inertia ellipsoids coloured by the singularity of the configuration, the skeleton, the closing links in
orange, the closure frames green when the loops are closed and red when not, the platform's axes) and moves it
with :meth:`SceneView.show`. Three ways to drive it, each adding its panel to the GUI:

* :func:`add_sliders`: one slider per actuated joint; every move solves the forward problem warm-started at the
  last answer (the loops close live); an unreachable value keeps the last configuration and says why;
* :func:`add_replay`: a :class:`~pardyn.scene.recording.Recording` on a timeline (play, pause, speed), with its
  torques and identification residuals against time beside the scene;
* a live feed: the ``pardyn view --live`` command's node calls :meth:`SceneView.show` with the solved joint states
  and feeds the efforts to :func:`add_live_torques` (the last seconds against time).

``pardyn view`` (:mod:`pardyn.cli.view`) serves it; the GUI shows the condition number and the closure residual.
"""

from __future__ import annotations

import math
import threading
from collections import deque
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pardyn.errors import PardynError
from pardyn.robot import Robot
from pardyn.scene.geometry import RobotScene, SceneFrame, singularity_colour
from pardyn.scene.messages import CLOSED_RESIDUAL
from pardyn.scene.recording import Recording

__all__ = ["LiveTorques", "Replay", "SceneView", "Sliders", "add_live_torques", "add_replay", "add_sliders",
           "start_server", "stop_server"]

_GREY, _ORANGE, _GREEN, _RED = (90, 90, 90), (255, 140, 0), (25, 180, 50), (230, 15, 15)


def _rgb(colour: tuple[float, float, float]) -> tuple[int, int, int]:
    return tuple(int(round(255 * c)) for c in colour)  # type: ignore[return-value]


def _wxyz(matrix: np.ndarray) -> np.ndarray:
    import pinocchio as pin  # noqa: PLC0415

    x, y, z, w = pin.Quaternion(np.asarray(matrix[:3, :3])).coeffs()
    return np.array([w, x, y, z])


def start_server(host: str = "127.0.0.1", port: int = 8080):
    """A quiet ``viser.ViserServer`` on ``host:port`` (port 0: a free one; ``server.get_port()`` tells).

    Quiet: viser's banner is kept off the terminal (the caller says where to look), and its share button, which
    opens a tunnel through viser's public relay, is hidden: the view stays on this machine and its network.
    """
    import contextlib  # noqa: PLC0415
    import io  # noqa: PLC0415

    import viser  # noqa: PLC0415 - the `view` extra

    with contextlib.redirect_stdout(io.StringIO()):
        server = viser.ViserServer(host=host, port=port, verbose=False)
    server.gui.configure_theme(show_share_button=False, show_logo=False)
    return server


def stop_server(server) -> None:
    """Stop ``server`` without its goodbye line."""
    import contextlib  # noqa: PLC0415
    import io  # noqa: PLC0415

    with contextlib.redirect_stdout(io.StringIO()):
        server.stop()


class SceneView:
    """``robot`` drawn in ``server``'s scene under ``/robot`` (module docstring).

    Attributes:
        frame: the :class:`SceneFrame` shown last (None before the first :meth:`show`).
    """

    def __init__(self, server: Any, robot: Robot) -> None:
        self.server = server
        self.robot = robot
        self.scene = RobotScene(robot)
        self.frame: SceneFrame | None = None
        self._lock = threading.Lock()
        first = self.scene.frame(robot.home)
        scene = server.scene
        scene.set_up_direction("+z")
        points = first.skeleton.reshape(-1, 3) if len(first.skeleton) else np.zeros((1, 3))
        reach = max(float(np.ptp(points, axis=0).max()), 0.2)
        centre = 0.5 * (points.min(axis=0) + points.max(axis=0))
        self.centre, self.reach = centre, reach
        scene.add_grid("/grid", width=2 * reach, height=2 * reach, cell_size=reach / 10, plane="xy",
                       position=(float(centre[0]), float(centre[1]), float(points[:, 2].min())))
        camera = server.initial_camera  # above and in front of the robot, the whole of it in view
        camera.look_at = tuple(centre)
        camera.position = tuple(centre + reach * np.array([0.5, -0.9, 1.3]))
        camera.up = (0.0, 0.0, 1.0)
        self.root = scene.add_frame("/robot", show_axes=False)  # hide it and the robot is gone
        self._bodies = []
        for index, (shape, _) in enumerate(first.shapes):
            name = f"/robot/bodies/{index}_{shape.name}"
            if shape.kind == "mesh":
                import trimesh  # noqa: PLC0415 - viser's dependency

                mesh = trimesh.load(shape.mesh, force="mesh")
                mesh.apply_scale(shape.size)
                self._bodies.append(scene.add_mesh_trimesh(name, mesh))
            else:
                self._bodies.append(scene.add_icosphere(name, radius=1.0, scale=tuple(0.5 * shape.size),
                                                        color=_GREY, opacity=0.85, subdivisions=3))
        self._skeleton = scene.add_line_segments("/robot/skeleton", first.skeleton if len(first.skeleton) else
                                                 np.zeros((1, 2, 3)), _GREY, thickness=0.004)
        self._closing = scene.add_line_segments("/robot/closing_links", first.closing if len(first.closing) else
                                                np.zeros((1, 2, 3)), _ORANGE, thickness=0.006)
        self._closures = [scene.add_icosphere(f"/robot/closures/{k}", radius=0.007, color=_GREEN)
                          for k in range(len(first.closure_points))]
        self._platform = scene.add_frame("/robot/platform", axes_length=0.06, axes_radius=0.003)
        self.show(robot.home)

    def show(self, q: np.ndarray) -> SceneFrame:
        """Draw the robot at ``q`` (nv,); the frame drawn."""
        frame = self.scene.frame(q)
        colour = _rgb(singularity_colour(frame.singularity))
        with self._lock, self.server.atomic():
            for handle, (shape, pose) in zip(self._bodies, frame.shapes):
                handle.position = pose[:3, 3]
                handle.wxyz = _wxyz(pose)
                if shape.kind != "mesh":
                    handle.color = colour
            if len(frame.skeleton):
                self._skeleton.points = frame.skeleton
            if len(frame.closing):
                self._closing.points = frame.closing
            closed = frame.residual < CLOSED_RESIDUAL
            for handle, point in zip(self._closures, frame.closure_points):
                handle.position = point
                handle.color = _GREEN if closed else _RED
            self._platform.position = frame.platform[:3, 3]
            self._platform.wxyz = _wxyz(frame.platform)
            self.frame = frame
        return frame

    def describe(self) -> str:
        """The GUI's status line of the frame shown: conditioning and closure residual."""
        frame = self.frame
        if frame is None:
            return ""
        condition = "inf" if math.isinf(frame.condition) else f"{frame.condition:.3g}"
        state = "singular" if frame.singularity >= 1.0 else "near a singularity" if frame.singularity > 0.5 else "regular"
        return (f"condition number {condition} ({state}; singular above {self.scene.max_condition:.0e})  \n"
                f"closure residual {frame.residual:.1e} ({'closed' if frame.residual < CLOSED_RESIDUAL else 'OPEN'})")


# --------------------------------------------------------------------------- sliders
@dataclass
class Sliders:
    """The actuated-joint sliders of :func:`add_sliders`: ``sliders[k]`` drives ``robot.actuated_names[k]``."""

    view: SceneView
    sliders: list
    status: Any
    q: np.ndarray
    refused: int = 0
    message: str = ""

    def solve(self) -> bool:
        """Solve the forward problem of the sliders' values (warm start: the last answer); whether it could."""
        robot = self.view.robot
        values = np.array([float(s.value) for s in self.sliders])
        try:
            solution = robot.solve_forward(values, start=self.q, checks=False)
        except PardynError as error:
            self.refused += 1
            self.message = f"not assembled at these values: {error}"
            self.status.content = f"**{self.message}**"
            return False
        self.q = solution.q
        self.view.show(self.q)
        self.message = ""
        task = ", ".join(f"{n} {v:.4g} {u}" for n, v, u in zip(robot.task_names, robot.task_values(self.q),
                                                               robot.task_units))
        self.status.content = f"{task}  \n{self.view.describe()}"
        return True


def _slider_range(robot: Robot, index: int) -> tuple[float, float]:
    """Home +- 90 degrees (revolute) or +- 0.1 m (prismatic), within the model's joint limits."""
    from pardyn.kinematics.solver import revolute_mask  # noqa: PLC0415

    model, home = robot.model, float(robot.home[index])
    revolute = bool(revolute_mask(model)[index])
    low, high = float(model.lowerPositionLimit[index]), float(model.upperPositionLimit[index])
    span = math.pi / 2 if revolute else 0.1
    low = max(low, home - span) if np.isfinite(low) and low <= home else home - span
    high = min(high, home + span) if np.isfinite(high) and high >= home else home + span
    return low, high


def add_sliders(view: SceneView) -> Sliders:
    """One slider per actuated joint (module docstring); the forward problem solved on every move."""
    robot, gui = view.robot, view.server.gui
    from pardyn.kinematics.solver import revolute_mask  # noqa: PLC0415

    revolute = revolute_mask(robot.model)
    folder = gui.add_folder("Actuated joints")
    sliders = []
    with folder:
        for name, index in zip(robot.actuated_names, robot.actuated_indices):
            low, high = _slider_range(robot, int(index))
            unit = "rad" if revolute[index] else "m"
            sliders.append(gui.add_slider(f"{name} ({unit})", min=low, max=high, step=1e-3,
                                          initial_value=float(robot.home[index])))
        home = gui.add_button("Home")
    status = gui.add_markdown("")
    panel = Sliders(view, sliders, status, robot.home.copy())

    def on_move(_event) -> None:
        panel.solve()

    for slider in sliders:
        slider.on_update(on_move)

    @home.on_click
    def _(_event) -> None:
        panel.q = robot.home.copy()
        for slider, index in zip(sliders, robot.actuated_indices):
            slider.value = float(robot.home[index])
        panel.solve()

    panel.solve()
    return panel


# --------------------------------------------------------------------------- replay
@dataclass
class Replay:
    """The timeline of :func:`add_replay`; :meth:`seek` shows the frame at a time."""

    view: SceneView
    recording: Recording
    timeline: Any
    playing: Any
    speed: Any
    status: Any
    shown: int = -1
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def seek(self, time_s: float) -> int:
        """Show the frame at ``time_s`` (s from the start); its index."""
        index = self.recording.frame_at(time_s)
        if index != self.shown:
            self.view.show(self.recording.q[index])
            self.shown = index
            self.status.content = f"t = {self.recording.t[index]:.3f} s  \n{self.view.describe()}"
        return index

    def _run(self) -> None:
        last = time.monotonic()
        while not self._stop.wait(1.0 / 30.0):
            now = time.monotonic()
            if self.playing.value:
                end = float(self.recording.t[-1])
                value = float(self.timeline.value) + (now - last) * float(self.speed.value)
                self.timeline.value = value if value <= end else 0.0  # loops
            last = now

    def close(self) -> None:
        """Stop the playing thread (waits up to 2 s for it)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2.0)


def _plot(gui, title: str, t: np.ndarray, values: np.ndarray, names, unit: str, points: int = 1500):
    import viser.uplot as uplot  # noqa: PLC0415

    step = max(1, len(t) // points)
    data = (np.asarray(t[::step], dtype=float), *(np.asarray(values[::step, k], dtype=float)
                                                   for k in range(values.shape[1])))
    series = (uplot.Series(label="t (s)"), *(uplot.Series(label=f"{name} ({unit})", stroke=f"hsl({70 * k}, 70%, 45%)",
                                                          width=1.5) for k, name in enumerate(names)))
    return gui.add_uplot(data, series, title=title, aspect=1.6)


def add_replay(view: SceneView, recording: Recording, *, play: bool = True) -> Replay:
    """A timeline over ``recording`` (module docstring), its torques and residuals plotted against time."""
    gui = view.server.gui
    end = float(recording.t[-1])
    with gui.add_folder(f"Replay: {recording.name}"):
        timeline = gui.add_slider("t (s)", min=0.0, max=max(end, 1e-3), step=1e-3, initial_value=0.0)
        playing = gui.add_checkbox("Play", initial_value=play)
        speed = gui.add_slider("speed (x real time)", min=0.1, max=4.0, step=0.1, initial_value=1.0)
    status = gui.add_markdown("")
    replay = Replay(view, recording, timeline, playing, speed, status)
    timeline.on_update(lambda _event: replay.seek(float(timeline.value)))
    unit = "N m"
    if np.isfinite(recording.torque).any():
        _plot(gui, "recorded torques", recording.torque_t, recording.torque, recording.joints, unit)
    if recording.residual is not None and recording.residual_t is not None:
        _plot(gui, "identification residuals", recording.residual_t, recording.residual, recording.joints, unit)
        gui.add_markdown(f"residuals: {recording.residual_note}")
    replay.seek(0.0)
    replay._thread = threading.Thread(target=replay._run, name="pardyn-replay", daemon=True)  # noqa: SLF001
    replay._thread.start()  # noqa: SLF001
    return replay


# --------------------------------------------------------------------------- live torques
@dataclass
class LiveTorques:
    """The efforts of the last ``window_s`` seconds, plotted against time (:func:`add_live_torques`)."""

    plot: Any
    window_s: float
    samples: deque = field(default_factory=deque)

    def append(self, t_s: float, efforts: np.ndarray) -> None:
        """One sample: time (s) and the actuated efforts (n_a,); older than the window are dropped."""
        self.samples.append((float(t_s), np.asarray(efforts, dtype=float)))
        while self.samples and self.samples[0][0] < t_s - self.window_s:
            self.samples.popleft()

    def refresh(self) -> None:
        """Send the window to the plot (a few times per second: each update is one message to every browser)."""
        if len(self.samples) < 2:
            return
        t = np.array([sample[0] for sample in self.samples])
        values = np.array([sample[1] for sample in self.samples])
        step = max(1, len(t) // 1000)
        self.plot.data = (t[::step], *(np.ascontiguousarray(values[::step, k]) for k in range(values.shape[1])))


def add_live_torques(view: SceneView, window_s: float = 10.0) -> LiveTorques:
    """A plot of the actuated efforts of the last ``window_s`` seconds (N m), fed by :meth:`LiveTorques.append`."""
    names = view.robot.actuated_names
    plot = _plot(view.server.gui, f"torques, last {window_s:g} s", np.zeros(2), np.zeros((2, len(names))), names,
                 "N m")
    return LiveTorques(plot, window_s)

