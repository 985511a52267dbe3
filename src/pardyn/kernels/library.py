"""Compile a robot's kernels with the system C compiler at first use, cache them, load them with ctypes.

Cache: ``$PARDYN_KERNEL_CACHE`` or ``~/.cache/pardyn/kernels``, one folder per robot and
:func:`pardyn.kernels.codegen.description_hash` (``NAME-HASH/``: the sources and ``libkernels.so``).
A build goes to a temporary folder renamed into place only when the compiler succeeded, so
processes compiling the same robot at once never load a half-written library, and a compile
stopped half-way (a terminal's Ctrl-C reaches the compiler too: it runs in the caller's process
group, so that a stop ends the whole work at once) leaves nothing a later run loads. The build
writes the library's SHA-256 beside it (``libkernels.sha256``), checked before each load: a cached
library that differs (truncated by a crash before the disk had it, written by something else) is
built again -- a truncated library is no load error but a crash (SIGBUS) of the process that maps
it. A library that does not load or lacks a kernel is also built again; a staging
folder left by a process that ended mid-build is removed an hour later. Nothing here runs in a 1 kHz callback:
:func:`load_kernels` is called when a robot's solver or dynamics is built.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pardyn.kernels.codegen import c_name, check_supported, description_hash, generate_sources

if TYPE_CHECKING:
    from pardyn.dynamics.parameters import DynamicParameters
    from pardyn.kinematics.solver import ClosureSolver
    from pardyn.mechanism import Mechanism

__all__ = ["CompileError", "KernelLibrary", "ObservationKernel", "cache_root", "compiler", "load_kernels"]

COMPILE_FLAGS = ["-O2", "-fPIC", "-shared", "-std=c99", "-fno-math-errno"]
"""No -ffast-math: the kernels must agree with the Python path to the last digits."""


class CompileError(Exception):
    """No C compiler, or it failed (message: the command and its first error lines)."""


class _Info(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("iterations", ctypes.c_int), ("residual", ctypes.c_double),
                ("serial", ctypes.c_double), ("parallel", ctypes.c_double)]


class _ObservationLayout(ctypes.Structure):  # pardyn_observation_layout of the generated header
    _fields_ = [("n_body", ctypes.c_int), ("body_start", ctypes.c_void_p), ("body_source", ctypes.c_void_p),
                ("body_value", ctypes.c_void_p), ("n_drive", ctypes.c_int), ("drive", ctypes.c_void_p),
                ("left", ctypes.c_void_p), ("gravity", ctypes.c_double * 3)]


def cache_root() -> Path:
    return Path(os.environ.get("PARDYN_KERNEL_CACHE") or Path.home() / ".cache" / "pardyn" / "kernels")


def compiler() -> str | None:
    """The system C compiler (``$CC``, else ``cc``/``gcc``), or None."""
    for candidate in (os.environ.get("CC"), "cc", "gcc"):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


def _compile(robot: Mechanism, folder: Path, solver: ClosureSolver, nominal: DynamicParameters) -> None:
    cc = compiler()
    if cc is None:
        raise CompileError("no C compiler found (set CC, or install gcc)")
    files = generate_sources(robot, folder, solver=solver, nominal=nominal)
    command = [cc, *COMPILE_FLAGS, "-o", str(folder / "libkernels.so"), str(files["model"]), str(files["solver"]), "-lm"]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode < 0:  # killed: a stop signal to the process group (Ctrl-C), not a compiler error
        raise CompileError(f"{cc} stopped by {signal.Signals(-result.returncode).name} before it finished")
    if result.returncode != 0:
        lines = (result.stderr or result.stdout).strip().splitlines()[:3]
        raise CompileError(f"{' '.join(command)} failed: {' | '.join(lines)}")
    library = folder / "libkernels.so"
    with open(library, "rb") as written:
        os.fsync(written.fileno())  # on the disk before the rename makes it the cache's
    (folder / DIGEST).write_text(_digest(library) + "\n")


DIGEST = "libkernels.sha256"


def _digest(library: Path) -> str:
    return hashlib.sha256(library.read_bytes()).hexdigest()


def _intact(folder: Path) -> bool:
    """Whether ``folder``'s library is the one its build wrote (its SHA-256, ~0.1 ms for 100 kB)."""
    try:
        return (folder / DIGEST).read_text().strip() == _digest(folder / "libkernels.so")
    except OSError:
        return False


class KernelLibrary:
    """The loaded kernels of one robot (ctypes), with numpy-friendly calls.

    Attributes:
        folder: where the sources and the library are.
        built_s: generation + compilation time of this load (0 when cached), s.
        load_s: hashing + loading time, s.
    """

    def __init__(self, robot: Mechanism, folder: Path, built_s: float, load_s: float) -> None:
        self.robot = robot
        self.folder = folder
        self.built_s = built_s
        self.load_s = load_s
        self.nv = robot.nv
        self.m = robot.closures.size
        self.n_actuated = len(robot.actuated_indices)
        self.n_task = len(robot.task_indices)
        self._given_counts = (self.n_task, self.n_actuated, len(robot.measured_indices))  # per problem 0, 1, 2
        self._prefix = f"pardyn_{c_name(robot.name)}_"
        self._bind()

    def _bind(self) -> None:
        """Load the library and take the buffers' addresses (again after unpickling)."""
        prefix = self._prefix
        self._lib = lib = ctypes.CDLL(str(self.folder / "libkernels.so"))
        address = ctypes.c_void_p
        self._functions = {}
        integer_first = {"solve", "states", "joint_regressors"}  # (int problem or count, pointers...)
        for name, count in (("closure", 3), ("solve", 6), ("states", 7), ("inverse_dynamics", 6),
                            ("tree_torques", 5), ("project", 3), ("joint_regressors", 6)):
            function = getattr(lib, prefix + name)
            function.argtypes = ([ctypes.c_int] if name in integer_first else [address]) + [address] * (count - 1)
            function.restype = ctypes.c_int
            self._functions[name] = function
        self._solve_function = self._functions["solve"]
        self._functions["observations"] = function = getattr(lib, prefix + "observations")
        function.argtypes, function.restype = [ctypes.c_int] + [address] * 7, ctypes.c_int
        self._functions["series"] = function = getattr(lib, prefix + "series")
        function.argtypes = [ctypes.c_int, ctypes.c_int] + [address] * 4 + [ctypes.c_double, ctypes.c_int] + [address] * 4
        function.restype = ctypes.c_int
        for name, signature in (("pd_step", "pppppippp"), ("ctc_step", "pppppppppp")):  # laws.c: one call per message
            # called with the interpreter lock held (PYFUNCTYPE): a 10-20 us call that let go of it would invite
            # the process's other threads in, and the controller's state thread would wait up to a switch
            # interval to get it back (pardyn.nodes.realtime)
            prototype = ctypes.PYFUNCTYPE(ctypes.c_int, *[ctypes.c_int if kind == "i" else address for kind in signature])
            self._functions[name] = prototype(ctypes.cast(getattr(lib, prefix + name), ctypes.c_void_p).value)
        # buffers with their addresses taken once: a call copies its inputs in (no ctypes object per call)
        nv = self.nv
        self._q_in, self._v_in, self._a_in, self._out = (np.zeros(nv) for _ in range(4))
        self._values = np.zeros(nv)
        self._accelerations = np.zeros(nv)
        self._stress = np.zeros(max(self.n_actuated, 1))
        self._info = _Info()
        self._addresses = {name: getattr(self, name).ctypes.data
                           for name in ("_q_in", "_v_in", "_a_in", "_out", "_values", "_stress", "_accelerations")}
        self._info_address = ctypes.addressof(self._info)
        self._params_object, self._params_pointer = None, 0
        self._torques_out = np.zeros(max(self.n_actuated, 1))
        self._inverse_function = self._functions["inverse_dynamics"]
        self._inverse_arguments = (self._addresses["_q_in"], self._addresses["_v_in"], self._addresses["_a_in"])
        self._stress_address, self._torques_address = self._addresses["_stress"], self._torques_out.ctypes.data

    _UNPICKLED = ("_lib", "_functions", "_solve_function", "_info", "_addresses", "_info_address", "_params_object",
                  "_params_pointer", "_inverse_function", "_inverse_arguments")

    def __getstate__(self) -> dict:  # ctypes handles do not pickle: the other process reloads the library
        return {k: v for k, v in self.__dict__.items() if k not in self._UNPICKLED}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._bind()

    @staticmethod
    def _address(array: np.ndarray) -> int:
        return array.ctypes.data

    def closure(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``phi`` (m,) and ``K`` (m, nv) at ``q`` (nv,)."""
        self._q_in[:] = q
        phi = np.empty(self.m)
        jacobian = np.empty((self.m, self.nv), order="F")
        self._functions["closure"](self._addresses["_q_in"], phi.ctypes.data, jacobian.ctypes.data)
        return phi, jacobian

    def solve(self, problem: int, values: np.ndarray, start: np.ndarray, checks: bool) -> tuple[np.ndarray, _Info]:
        """The C Newton solve (``problem``: 0 inverse, 1 forward, 2 forward with sensed joints);
        returns ``q`` (nv,) and the info struct (``status`` 0 when it holds)."""
        q = np.empty(self.nv)
        addresses = self._addresses
        self._values[: len(values)] = values
        self._q_in[:] = start
        self._solve_function(problem, addresses["_values"], addresses["_q_in"], 1 if checks else 0, q.ctypes.data,
                             self._info_address)
        return q, self._info

    def states(self, problem: int, q, rates, accelerations=None, velocity_map: bool = False):
        """``(qdot, qddot, W)`` (nv,), (nv,) or None, (nv, k) or None from the rates (k,) and accelerations (k,)
        of the problem's given coordinates (0 task, 1 actuated, 2 measured); None if the C path declines."""
        a = self._addresses
        count = len(rates)
        self._q_in[:] = q
        self._values[:count] = rates
        qdot = np.empty(self.nv)
        qddot = None if accelerations is None else np.empty(self.nv)
        if accelerations is not None:
            self._accelerations[:count] = accelerations
        matrix = np.empty((self.nv, count), order="F") if velocity_map else None
        status = self._functions["states"](problem, a["_q_in"], a["_values"],
                                           None if qddot is None else a["_accelerations"], qdot.ctypes.data,
                                           None if qddot is None else qddot.ctypes.data,
                                           None if matrix is None else matrix.ctypes.data)
        return None if status else (qdot, qddot, matrix)

    def law_function(self, name: str):
        """The ctypes function of a control law of ``laws.c`` (``"pd_step"``, ``"ctc_step"``): pointers are
        addresses (int), see :mod:`pardyn.control.compiled`; returns a ``PARDYN_STATUS_*`` code."""
        return self._functions[name]

    def new_info(self) -> tuple[_Info, int]:
        """A fresh info struct and its address (for a caller that keeps its own buffers)."""
        info = _Info()
        return info, ctypes.addressof(info)

    def joint_regressors(self, q: np.ndarray, qdot: np.ndarray, qddot: np.ndarray, gravity) -> np.ndarray:
        """Joint regressors of N states (N, nv) each: (N, nv, 10 (njoints - 1)) (a transposed view), as
        pinocchio's ``computeJointTorqueRegressor`` per state, in one C loop."""
        q, qdot, qddot = (np.ascontiguousarray(a, dtype=float) for a in (q, qdot, qddot))
        count = q.shape[0]
        gravity = np.ascontiguousarray(gravity, dtype=float)
        out = np.empty((count, (self.robot.model.njoints - 1) * 10, self.nv))
        self._functions["joint_regressors"](count, q.ctypes.data, qdot.ctypes.data, qddot.ctypes.data,
                                            gravity.ctypes.data, out.ctypes.data)
        return out.transpose(0, 2, 1)

    def observations(self, body_map: np.ndarray, drives, left, gravity) -> ObservationKernel:
        """The identification model's observation matrices through this library (:class:`ObservationKernel`)."""
        return ObservationKernel(self, body_map, drives, left, gravity)

    def series(self, problem: int, readings: np.ndarray, rates: np.ndarray, accelerations: np.ndarray,
               start: np.ndarray, step_s: float, check_every: int) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
        """The closed-loop states of a recorded series (N, n_given) each, sample by sample in one C call
        (``pardyn_NAME_series``): ``(done, q, qdot, qddot)`` (N, nv) each, the first ``done`` samples solved in the
        plain case (``done < N``: the Python path takes over at sample ``done``)."""
        readings, rates, accelerations = (np.ascontiguousarray(a, dtype=float) for a in (readings, rates, accelerations))
        count = readings.shape[0]
        shape = (count, self._given_counts[problem])
        if readings.shape != shape or rates.shape != shape or accelerations.shape != shape or len(start) != self.nv:
            raise ValueError(f"series: readings, rates, accelerations {shape} and start ({self.nv},) expected")
        q, qdot, qddot = (np.empty((count, self.nv)) for _ in range(3))
        start = np.ascontiguousarray(start, dtype=float)
        done = self._functions["series"](problem, count, readings.ctypes.data, rates.ctypes.data,
                                         accelerations.ctypes.data, start.ctypes.data, float(step_s), int(check_every),
                                         q.ctypes.data, qdot.ctypes.data, qddot.ctypes.data, self._info_address)
        return done, q, qdot, qddot

    def _state(self, q, qdot, qddot) -> None:
        self._q_in[:] = q
        self._v_in[:] = qdot
        self._a_in[:] = qddot

    def _params_address(self, params: np.ndarray) -> int:
        """The address of a parameter vector, taken once per vector (``ndarray.ctypes`` costs ~1 us a call)."""
        if params is not self._params_object:
            self._params_object, self._params_pointer = params, params.ctypes.data  # holds the vector alive
        return self._params_pointer

    def tree_torques(self, q, qdot, qddot, params: np.ndarray) -> np.ndarray:
        """Tree efforts (nv,) with the drive terms (eq. 1, 5); ``params`` C-contiguous (n_params,)."""
        self._state(q, qdot, qddot)
        a = self._addresses
        self._functions["tree_torques"](a["_q_in"], a["_v_in"], a["_a_in"], self._params_address(params), a["_out"])
        return self._out.copy()

    def inverse_dynamics(self, q, qdot, qddot, params: np.ndarray, stress: np.ndarray | None = None) -> np.ndarray | None:
        """Minimum-norm actuator torques (n_a,) plus the projected internal stress; None if singular.

        One C call on fixed buffers whose addresses were taken once (a controller's or a simulation's per-state
        call: the ctypes and numpy overhead is most of its cost)."""
        self._q_in[:] = q
        self._v_in[:] = qdot
        self._a_in[:] = qddot
        if stress is None:
            status = self._inverse_function(*self._inverse_arguments, self._params_address(params), None,
                                            self._torques_address)
        else:
            self._stress[:] = stress
            status = self._inverse_function(*self._inverse_arguments, self._params_address(params),
                                            self._stress_address, self._torques_address)
        return None if status else self._torques_out.copy()

    def project(self, q, tau) -> np.ndarray | None:
        """Eq. (50): ``J (J^T J)^-1 J^T tau`` (n_a,); None if singular."""
        self._q_in[:] = q
        self._stress[:] = tau
        out = np.empty(self.n_actuated)
        status = self._functions["project"](self._addresses["_q_in"], self._addresses["_stress"], out.ctypes.data)
        return None if status else out


class ObservationKernel:
    """The observation matrices of an identification model in C (``pardyn_NAME_observations``), eqs. (19), (30), (36).

    Args:
        library: the robot's kernels.
        body_map: ``B`` (10 (njoints - 1), n_body) of :meth:`pardyn.dynamics.parameters.DynamicParameters.body_map`.
        drives: the drive joints' indices (n_d,): four columns each after the body columns (eq. 5).
        left: the n (task count) joints whose rates give the rows: ``W_left^T Y_t`` with ``W_left`` the velocity
            map from their rates, i.e. ``J_1^-T W^T Y_t`` with ``J_1 = W[left]`` (the task joints: ``W^T Y_t``,
            eq. 30; the actuated: eq. 19; the kept actuators: eq. 36).
        gravity: (3,), m/s^2.
    """

    def __init__(self, library: KernelLibrary, body_map: np.ndarray, drives, left, gravity) -> None:
        self._arguments = (library, body_map, drives, left, gravity)
        self.library = library
        body_map = np.asarray(body_map, dtype=float)
        body, source = np.nonzero(body_map.T)  # B's nonzeros column by column (CSC)
        self._start = np.ascontiguousarray(np.searchsorted(body, np.arange(body_map.shape[1] + 1)), dtype=np.intc)
        self._source = np.ascontiguousarray(source, dtype=np.intc)
        self._value = np.ascontiguousarray(body_map.T[body, source])
        self._drives = np.ascontiguousarray(drives, dtype=np.intc)
        self._left = np.ascontiguousarray(left, dtype=np.intc)
        self.rows = library.n_task
        self.columns = body_map.shape[1] + 4 * len(self._drives)
        layout = self._layout = _ObservationLayout()
        layout.n_body = body_map.shape[1]
        layout.body_start, layout.body_source = self._start.ctypes.data, self._source.ctypes.data
        layout.body_value = self._value.ctypes.data
        layout.n_drive, layout.drive = len(self._drives), self._drives.ctypes.data
        layout.left = self._left.ctypes.data
        layout.gravity[:] = [float(g) for g in gravity]
        self._function = library._functions["observations"]  # noqa: SLF001 (the library's own binding)
        self._layout_address = ctypes.addressof(layout)
        nv = library.nv
        self._state = np.zeros((3, nv))  # one state's q, qdot, qddot, addresses taken once
        self._torques = np.zeros(max(library.n_actuated, 1))
        self._out = np.zeros((self.rows, self.columns))
        self._measured = np.zeros(self.rows)
        self._addresses = (self._state[0].ctypes.data, self._state[1].ctypes.data, self._state[2].ctypes.data,
                           self._layout_address, self._torques.ctypes.data, self._out.ctypes.data,
                           self._measured.ctypes.data)

    def __reduce__(self):  # ctypes pointers do not pickle: rebuilt from the arguments (the library reloads itself)
        return ObservationKernel, self._arguments

    def __call__(self, q: np.ndarray, qdot: np.ndarray, qddot: np.ndarray, torques: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray | None] | None:
        """``(Y (N, rows, columns), P J^T tau (N, rows) or None)`` of N states (N, nv) and torques (N, n_a);
        None when a state is singular (the Python path decides)."""
        q, qdot, qddot = (np.ascontiguousarray(a, dtype=float) for a in (q, qdot, qddot))
        count = q.shape[0]
        if q.shape != (count, self.library.nv) or qdot.shape != q.shape or qddot.shape != q.shape:
            raise ValueError(f"observations: q, qdot, qddot ({count}, {self.library.nv}) expected")
        out = np.empty((count, self.rows, self.columns))
        measured = None
        if torques is not None:
            torques = np.ascontiguousarray(torques, dtype=float)
            if torques.shape != (count, self.library.n_actuated):
                raise ValueError(f"observations: torques ({count}, {self.library.n_actuated}) expected")
            measured = np.empty((count, self.rows))
        status = self._function(count, q.ctypes.data, qdot.ctypes.data, qddot.ctypes.data, self._layout_address,
                                None if torques is None else torques.ctypes.data, out.ctypes.data,
                                None if measured is None else measured.ctypes.data)
        return None if status else (out, measured)

    def single(self, q: np.ndarray, qdot: np.ndarray, qddot: np.ndarray, torques: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray | None] | None:
        """One state (nv,) each: ``(Y (rows, columns), P J^T tau (rows,) or None)`` through fixed buffers, or None.
        Not reentrant (one set of buffers per kernel, as the library's own calls): one thread per Regressor."""
        state = self._state
        state[0], state[1], state[2] = q, qdot, qddot
        a = self._addresses
        if torques is None:
            status = self._function(1, a[0], a[1], a[2], a[3], None, a[5], None)
        else:
            self._torques[:] = torques
            status = self._function(1, a[0], a[1], a[2], a[3], a[4], a[5], a[6])
        if status:
            return None
        return self._out.copy(), None if torques is None else self._measured.copy()


def load_kernels(robot: Mechanism, *, solver: ClosureSolver, nominal: DynamicParameters, cache: Path | None = None,
                 ) -> KernelLibrary:
    """The robot's compiled kernels, built at first use and cached by :func:`description_hash` (``solver``
    and ``nominal``: :func:`pardyn.kernels.codegen.generate_sources`).

    Raises:
        pardyn.kernels.symbolic.UnsupportedModel: the generator cannot write this robot.
        CompileError: no compiler, or compilation failed.
    """
    start = time.perf_counter()
    check_supported(robot)  # before the cache: a cached build never serves an unsupported robot
    root = cache or cache_root()
    folder = root / f"{c_name(robot.name)}-{description_hash(robot, solver, nominal)}"
    built = 0.0
    if folder.is_dir():
        try:
            library = KernelLibrary(robot, folder, built, 0.0) if _intact(folder) else None
        except (OSError, AttributeError):  # not a loadable library, or one without a kernel
            library = None
        if library is not None:
            library.load_s = time.perf_counter() - start
            return library
        _discard(folder)  # built again below
    root.mkdir(parents=True, exist_ok=True)
    begin = time.perf_counter()
    _remove_stale_staging(root, folder.name)
    staging = Path(tempfile.mkdtemp(prefix=folder.name + STAGING, dir=root))
    try:
        _compile(robot, staging, solver, nominal)
        try:
            staging.rename(folder)
        except OSError:  # another process finished first: use its build
            pass
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    built = time.perf_counter() - begin
    library = KernelLibrary(robot, folder, built, 0.0)
    library.load_s = time.perf_counter() - start - built
    return library


STAGING = ".build-"  # NAME-HASH.build-XXXX: a build under way (or left by a process that ended mid-build)
STALE_STAGING_S = 3600.0


def _discard(folder: Path) -> None:
    """Take a broken cached build out of the way (renamed first: a process loading it meanwhile keeps its copy)."""
    aside = Path(tempfile.mkdtemp(prefix=folder.name + ".broken-", dir=folder.parent))
    try:
        folder.rename(aside / folder.name)
    except OSError:  # another process took it away first
        pass
    shutil.rmtree(aside, ignore_errors=True)


def _remove_stale_staging(root: Path, name: str) -> None:
    """Staging folders of ``name`` older than :data:`STALE_STAGING_S`: their process ended before its rename (a
    node stopped mid-build ends with ``os._exit``); a build under way is younger."""
    now = time.time()
    for staging in root.glob(f"{name}{STAGING}*"):
        try:
            if now - staging.stat().st_mtime > STALE_STAGING_S:
                shutil.rmtree(staging, ignore_errors=True)
        except OSError:
            pass
