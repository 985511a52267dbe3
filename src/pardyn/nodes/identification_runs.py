"""Identification runs recorded through the ROS 2 nodes of ``config/bringup/identification.yaml``.

The in-process :func:`pardyn.simulation.identification_runs.record_runs` simulates the
same protocol without ROS; here each run is what a user of a real robot does: the ``sim``
node (MuJoCo, the robot *as built*: :func:`~pardyn.simulation.identification_runs.as_built_parameters`,
quantized encoders, torque noise, lockstep at 1 kHz), the ``controller`` node (the joint
PD of :func:`~pardyn.simulation.identification_runs.controller`: 15 Hz, damping 0.7),
the ``trajectory`` node (an exciting trajectory, seeded) and the ``recorder`` node
(``joint_states`` to a rosbag2 MCAP bag), run in one process by
:func:`pardyn.nodes.bringup.run_nodes` until the simulated clock passes the end of the
trajectory and the recorder holds the sim's last state (:class:`RunEnd`: a lockstep run's bag, and the fit from
it, the same whatever the load). Used by ``pardyn demo`` and the ``hexapod_identification`` experiment.

Each call runs its nodes in a namespace of its own (``/pardyn_<8 hex digits>``, ``/clock``
included: :func:`pardyn.nodes.bringup.namespace_remappings`): two demos in one ROS domain --
two people of a lab on one network, or two terminals -- would otherwise take each other's
states and commands and break each other's bags.

A run whose bag lost some of the sim's states (the recorder fell behind by more than its queue on a loaded
machine; the recorder's gap record says how many and where) is recorded again, at most :data:`RECORD_ATTEMPTS`
times in all: a lockstep run is the same run every time, so the bag kept is one with every state; each new attempt
is said in one line, and the run's figures count them (``attempts``). Seen in the test suite on 2 cores: a 0.56 s gap in a validation bag
(560 states) that the identification then refused ("too large to resample").
"""

from __future__ import annotations

import shutil
import sys
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pardyn.errors import PardynError
from pardyn.simulation.identification_runs import RecordedRuns, Run, as_built_parameters, controller
from pardyn.robot import load_robot

__all__ = ["RECORD_ATTEMPTS", "RunEnd", "record_run", "record_through_nodes"]

SETTLE_S = 0.3
"""Simulated time recorded after the trajectory ends (s)."""
STUCK_S = 60.0
"""Wall time without a simulated step after which a run is given up (the sim waits for every command: its
``stall_timeout`` is 0, so that the data do not depend on the load; a controller that never answers is an error)."""


RECORD_ATTEMPTS = 3
"""Recordings of one run at most, while its bag lost states (module docstring)."""

TAIL_S = 10.0
"""Wall time the run waits, after the sim's last step, for the recorder to write the sim's last state (its own node:
the states come to it through DDS and its callbacks; a bag cut short of its tail gave two loaded five-bar demos'
fits that differed in the third digit, 0.26293 vs 0.26203 %)."""


class RunEnd:
    """The stop condition of one run (:func:`pardyn.nodes.bringup.run_nodes`'s ``until``), with its progress lines.

    True once the sim's clock has passed ``end_s`` *and* the recorder has written the sim's last state (its
    ``joint_states`` stamp ``step * period``): the bag then holds every step the run asked for, whatever the load,
    so that a lockstep run's bag -- and the fit from it -- is the same in every run. Also true when the sim's clock
    stood still for :data:`STUCK_S` s (``stuck``) or the recorder is still short of the last state :data:`TAIL_S`
    s after the sim's end (``tail_missing``: the last stamp it holds, ns). At the end, ``states_lost``: the sim's
    states missing from the bag before its last stamp (a recorder that fell over its queue's depth behind on a
    loaded machine; the bag, and the fit from it, then differ from another run's). ``clock``: wall time (tests give
    theirs).
    """

    def __init__(self, end_s: float, *, label: str, show_progress: bool, clock=time.perf_counter,
                 interactive: bool | None = None) -> None:
        self.end_s, self.label, self.show_progress, self.clock = end_s, label, show_progress, clock
        self.interactive = sys.stdout.isatty() if interactive is None else interactive  # progress lines on a terminal
        now = clock()
        self.start, self.last_shown, self.step, self.moved = now, -float("inf"), -1, now
        self.ended_at: float | None = None  # wall time of the sim's end
        self.stuck = False
        self.tail_missing: tuple[int | None, int] | None = None  # (the recorder's last stamp, the sim's), ns
        self.states_lost = 0

    def __call__(self, nodes: dict) -> bool:
        sim = nodes["sim"]
        now = sim.step * sim.period_s
        wall = self.clock()
        if now >= self.end_s:
            if self.ended_at is None:
                self.ended_at = wall
                self._progress(now, wall)
            recorder = nodes["recorder"]
            last, wanted = recorder.latest_stamp_ns("joint_states"), sim.step * sim.period_ns
            if last is not None and last >= wanted:
                self.states_lost = _lost(recorder, sim.period_ns)
                return True
            if wall - self.ended_at > TAIL_S:
                self.tail_missing = (last, wanted)
                self.states_lost = _lost(recorder, sim.period_ns)
                return True
            return False
        if sim.step != self.step:
            self.step, self.moved = sim.step, wall
        elif wall - self.moved > STUCK_S:
            self.stuck = True
            return True
        if wall - self.last_shown > 2.0:
            self._progress(now, wall)
        return False

    def _progress(self, now: float, wall: float) -> None:
        if self.show_progress and self.interactive:
            self.last_shown = wall
            print(f"  {self.label}: simulated {now:6.2f} / {self.end_s:.2f} s "
                  f"({now / max(wall - self.start, 1e-9):.2f}x real time)", flush=True)


def _lost(recorder, period_ns: int) -> int:
    """The sim's states (stamps ``k * period_ns`` from 0) missing from the recorder's bag up to its last one."""
    record = recorder.gap_record("joint_states")
    if record is None or not record.received:
        return 0
    return record.lost + record.first_ns // period_ns


def _run(bringup, overrides: dict, *, end_s: float, label: str, show_progress: bool, namespace: str) -> dict:
    """Run one bringup until the sim's clock passes ``end_s`` and the recorder holds its last state; its figures."""
    from pardyn.nodes.bringup import run_nodes  # noqa: PLC0415 - imports rclpy

    until = RunEnd(end_s, label=label, show_progress=show_progress)
    nodes = run_nodes(bringup.with_parameters(overrides), namespace=namespace, until=until)
    sim, trajectory = nodes["sim"], nodes["trajectory"]
    if until.stuck:
        raise PardynError(f"{label}: simulated time stood still at {sim.step * sim.period_s:.3f} s for {STUCK_S:g} s "
                          f"of wall time (no command from the controller): run given up")
    wall = until.clock() - until.start
    design = getattr(trajectory, "design", None)
    tail = until.tail_missing
    return {"steps": sim.step, "simulated_s": sim.step * sim.period_s, "wall_s": wall,
            "max_closure_violation": sim.max_closure_violation,
            "excitation_condition_number": None if design is None else design.condition_number,
            "commands_rejected": sum(sim.rejected.values()), "missed_periods": sim.missed_periods,
            "watchdog_ms": 1e3 * sim.watchdog_s, "stalled_steps": sim.stalls, "stall_timeout_s": sim.stall_timeout_s,
            "states_lost": until.states_lost,
            "recorder_short_s": 0.0 if tail is None else (tail[1] - (tail[0] if tail[0] is not None else -1)) * 1e-9}


def record_run(bringup, overrides: dict, bag: Path, *, end_s: float, label: str, show_progress: bool = False,
               namespace: str = "") -> dict:
    """One lockstep run of ``bringup`` with ``overrides`` (its recorder writing ``bag``) until the sim's clock passes
    ``end_s`` and the bag holds the sim's last state; again while the bag lost states, at most
    :data:`RECORD_ATTEMPTS` times (module docstring). The run's figures (``steps``, ``max_closure_violation``,
    ``states_lost``, ``attempts``...), said in one line with ``show_progress``."""
    for attempt in range(1, RECORD_ATTEMPTS + 1):
        numbers = _run(bringup, overrides, end_s=end_s, label=label, show_progress=show_progress, namespace=namespace)
        numbers["attempts"] = attempt
        if not (numbers["states_lost"] or numbers["recorder_short_s"]) or attempt == RECORD_ATTEMPTS:
            break
        if show_progress:
            print(f"  {label}: {_warnings(numbers).removeprefix('; ')}; recorded again "
                  f"(attempt {attempt + 1} of {RECORD_ATTEMPTS})", flush=True)
        shutil.rmtree(bag)  # the same lockstep run again: this bag is a copy with holes
    if show_progress:
        print(f"  {label}: {numbers['steps']} steps in {numbers['wall_s']:.1f} s, max closure violation "
              f"{numbers['max_closure_violation']:.1e} m{_warnings(numbers)} -> {bag}", flush=True)
    return numbers


def _warnings(numbers: dict) -> str:
    """The run line's warnings: missed periods (time held, nothing lost), stalled steps (zero torque: only with a
    ``stall_timeout`` given in ``sim_parameters``; the demo's sim waits for every command) and a bag short of the
    sim's last states (the recorder still behind :data:`TAIL_S` s after the sim's end) or some before them."""
    late = (f"; warning: {numbers['missed_periods']} missed periods (a command later than the "
            f"{numbers['watchdog_ms']:g} ms watchdog: simulated time held, nothing lost; a loaded machine)"
            if numbers["missed_periods"] else "")
    if numbers["stalled_steps"]:  # zero torque after stall_timeout of wall time: the run depends on the load
        late += (f"; warning: {numbers['stalled_steps']} stalled steps (no command for "
                 f"{numbers['stall_timeout_s']:g} s of wall time: stepped with zero torque)")
    if numbers.get("states_lost"):
        late += (f"; warning: the recorder lost {numbers['states_lost']} of the sim's states (behind by more than its "
                 "queue on a loaded machine: the bag, and the fit from it, differ from another run's)")
    if numbers.get("recorder_short_s"):
        late += (f"; warning: the bag misses the last {numbers['recorder_short_s']:.3f} s of the run (the recorder "
                 f"was still behind {TAIL_S:g} s after the sim's end: a loaded machine)")
    return late


def _payload_parameters(payload) -> dict[str, Any]:
    """The sim node's ``payload_*`` parameters of ``payload`` (inertia as ixx iyy izz ixy ixz iyz)."""
    inertia = payload.inertia
    return {"payload_mass": float(payload.mass), "payload_frame": payload.frame,
            "payload_com": [float(v) for v in payload.com],
            "payload_inertia": [float(inertia[i, j]) for i, j in ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))]}


def record_through_nodes(
    robot_name: str,
    runs: Sequence[Run],
    out_dir: Path | str,
    *,
    truth_path: Path | str | None = None,
    truth_seed: int = 7,
    start_s: float = 0.5,
    sim_parameters: Mapping[str, Any] | None = None,
    show_progress: bool = True,
    namespace: str | None = None,
) -> RecordedRuns:
    """Record ``runs`` of ``robot_name`` through the nodes; bags ``out_dir/<run>``.

    Args:
        robot_name: a robot name (or YAML path).
        runs: the runs (name, trajectory and noise seed, duration of the exciting trajectory, payload).
        out_dir: directory of the bags (an existing bag is an error: nothing is overwritten).
        truth_path: where the as-built parameters go (the sim node reads them); ``out_dir/truth.json``
            by default.
        truth_seed: seed of the as-built perturbation.
        start_s: simulated time at which the trajectory starts (the controller holds before).
        sim_parameters: more parameters of the sim node (e.g. ``counts_per_revolution``, ``torque_noise``;
            ``config/sim.yaml``'s by default, but ``stall_timeout`` 0: the sim waits for every command).
        namespace: the nodes' namespace; default a fresh ``pardyn_<8 hex digits>`` (module docstring).

    Raises:
        FileExistsError: a run's bag exists.
        PardynError: a run's simulated time stood still for :data:`STUCK_S` s of wall time.
        DescriptionError: a node could not start (the message names it).
    """
    from pardyn.dynamics.parameters import write_parameter_file  # noqa: PLC0415
    from pardyn.nodes.bringup import load_bringup  # noqa: PLC0415
    from pardyn.resources import share_directory  # noqa: PLC0415

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    robot = load_robot(robot_name)
    truth = as_built_parameters(robot.nominal_parameters, seed=truth_seed)
    truth_path = Path(truth_path) if truth_path is not None else out_dir / "truth.json"
    write_parameter_file(truth_path, truth,
                         note=f"the simulated robot as built: nominal parameters perturbed (seed {truth_seed})")
    law = controller(robot)
    bringup = load_bringup(share_directory() / "config" / "bringup" / "identification.yaml")
    namespace = namespace or f"pardyn_{uuid.uuid4().hex[:8]}"
    if show_progress:
        source = Path(bringup.source).resolve()
        if source.is_relative_to(Path.cwd().resolve()):  # the clone's own file: shown as the README writes it
            source = source.relative_to(Path.cwd().resolve())
        print(f"identification runs of {robot.name} through the ROS 2 nodes ({source}, namespace /{namespace}):",
              flush=True)
    bags, figures = {}, {}
    for run in runs:
        bag = out_dir / run.name
        if bag.exists():
            raise FileExistsError(f"{bag} exists: choose another output directory or remove it")
        end_s = start_s + run.duration_s + SETTLE_S
        # the sim stops at end_s itself: its command thread steps between the run's checks of its end
        # stall_timeout 0: the sim waits for every command, so that the data do not depend on the load (a step
        # stalled after 2 s of wall time was taken with zero torque: two loaded demos' fits differed)
        sim = {"stall_timeout": 0.0, **(sim_parameters or {}), "robot": robot.reference, "parameters_file": str(truth_path), "seed": run.seed,
               "lockstep": True, "end_time": end_s}
        if run.payload is not None:
            sim.update(_payload_parameters(run.payload))
        overrides = {
            "sim": sim,
            "controller": {"robot": robot.reference, "kp": [float(k) for k in law.kp], "kd": [float(k) for k in law.kd]},
            "trajectory": {"robot": robot.reference, "kind": "exciting", "seed": run.seed, "duration": run.duration_s,
                           "start_time": start_s},
            "recorder": {"bag_path": str(bag), "autostart": True, "robot": robot.reference},
        }
        figures[run.name] = record_run(bringup, overrides, bag, end_s=end_s, label=run.name,
                                       show_progress=show_progress, namespace=namespace)
        bags[run.name] = bag
    payloads = {run.name: run.payload for run in runs if run.payload is not None}
    return RecordedRuns(bags=bags, truth=truth, payloads=payloads, figures=figures, controller=law)
