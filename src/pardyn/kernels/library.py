"""Compile a robot's kernels with the system C compiler at first use, cache them, load them with ctypes.

Cache: ``$PARDYN_KERNEL_CACHE`` or ``~/.cache/pardyn/kernels``, one folder per robot and
:func:`pardyn.kernels.codegen.description_hash` (``NAME-HASH/``: the sources and ``libkernels.so``).
A build goes to a temporary folder renamed into place, so processes compiling the same
robot at once never load a half-written library. Nothing here runs in a 1 kHz callback:
:func:`load_kernels` is called when a robot's solver or dynamics is built.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pardyn.kernels.codegen import c_name, description_hash, generate_sources

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = ["CompileError", "KernelLibrary", "cache_root", "compiler", "load_kernels"]

COMPILE_FLAGS = ["-O2", "-fPIC", "-shared", "-std=c99", "-fno-math-errno"]
"""No -ffast-math: the kernels must agree with the Python path to the last digits."""


class CompileError(Exception):
    """No C compiler, or it failed (message: the command and its first error lines)."""


class _Info(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("iterations", ctypes.c_int), ("residual", ctypes.c_double),
                ("serial", ctypes.c_double), ("parallel", ctypes.c_double)]


def cache_root() -> Path:
    return Path(os.environ.get("PARDYN_KERNEL_CACHE") or Path.home() / ".cache" / "pardyn" / "kernels")


def compiler() -> str | None:
    """The system C compiler (``$CC``, else ``cc``/``gcc``), or None."""
    for candidate in (os.environ.get("CC"), "cc", "gcc"):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


def _compile(robot: Robot, folder: Path) -> None:
    cc = compiler()
    if cc is None:
        raise CompileError("no C compiler found (set CC, or install gcc)")
    files = generate_sources(robot, folder)
    command = [cc, *COMPILE_FLAGS, "-o", str(folder / "libkernels.so"), str(files["model"]), str(files["solver"]), "-lm"]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        lines = (result.stderr or result.stdout).strip().splitlines()[:3]
        raise CompileError(f"{' '.join(command)} failed: {' | '.join(lines)}")


class KernelLibrary:
    """The loaded kernels of one robot (ctypes), with numpy-friendly calls.

    Attributes:
        folder: where the sources and the library are.
        built_s: generation + compilation time of this load (0 when cached), s.
        load_s: hashing + loading time, s.
    """

    def __init__(self, robot: Robot, folder: Path, built_s: float, load_s: float) -> None:
        self.robot = robot
        self.folder = folder
        self.built_s = built_s
        self.load_s = load_s
        self.nv = robot.nv
        self.m = robot.closures.size
        self.n_actuated = len(robot.actuated_indices)
        prefix = f"pardyn_{c_name(robot.name)}_"
        self._lib = lib = ctypes.CDLL(str(folder / "libkernels.so"))
        pointer = ctypes.POINTER(ctypes.c_double)
        self._closure = getattr(lib, prefix + "closure")
        self._closure.argtypes = [pointer, pointer, pointer]
        self._solve = getattr(lib, prefix + "solve")
        self._solve.argtypes = [ctypes.c_int, pointer, pointer, ctypes.c_int, pointer, ctypes.POINTER(_Info)]
        self._inverse = getattr(lib, prefix + "inverse_dynamics")
        self._inverse.argtypes = [pointer, pointer, pointer, pointer, pointer, pointer]
        self._tree = getattr(lib, prefix + "tree_torques")
        self._tree.argtypes = [pointer, pointer, pointer, pointer, pointer]
        self._project = getattr(lib, prefix + "project")
        self._project.argtypes = [pointer, pointer, pointer]
        self._info = _Info()
        self._info_ref = ctypes.byref(self._info)
        self._pointer = pointer

    def _ptr(self, array: np.ndarray):
        return array.ctypes.data_as(self._pointer)

    @staticmethod
    def _vector(values, size: int) -> np.ndarray:
        array = np.ascontiguousarray(values, dtype=float)
        if array.shape != (size,):
            raise ValueError(f"expected ({size},), got {array.shape}")
        return array

    def closure(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``phi`` (m,) and ``K`` (m, nv) at ``q`` (nv,)."""
        q = self._vector(q, self.nv)
        phi = np.empty(self.m)
        jacobian = np.empty((self.m, self.nv), order="F")
        self._closure(self._ptr(q), self._ptr(phi), jacobian.ctypes.data_as(self._pointer))
        return phi, jacobian

    def solve(self, problem: int, values: np.ndarray, start: np.ndarray, checks: bool) -> tuple[np.ndarray, _Info]:
        """The C Newton solve (``problem``: 0 inverse, 1 forward, 2 forward with sensed joints);
        returns ``q`` (nv,) and the info struct (``status`` 0 when it holds)."""
        q = np.empty(self.nv)
        values = np.ascontiguousarray(values, dtype=float)
        start = np.ascontiguousarray(start, dtype=float)
        self._solve(problem, self._ptr(values), self._ptr(start), int(checks), self._ptr(q), self._info_ref)
        return q, self._info

    def tree_torques(self, q, qdot, qddot, params: np.ndarray) -> np.ndarray:
        """Tree efforts (nv,) with the drive terms (eq. 1, 5)."""
        out = np.empty(self.nv)
        q, qdot, qddot = (np.ascontiguousarray(a, dtype=float) for a in (q, qdot, qddot))
        self._tree(self._ptr(q), self._ptr(qdot), self._ptr(qddot), self._ptr(params), self._ptr(out))
        return out

    def inverse_dynamics(self, q, qdot, qddot, params: np.ndarray, stress: np.ndarray | None = None) -> np.ndarray | None:
        """Minimum-norm actuator torques (n_a,) plus the projected internal stress; None if singular."""
        out = np.empty(self.n_actuated)
        q, qdot, qddot = (np.ascontiguousarray(a, dtype=float) for a in (q, qdot, qddot))
        stress_ptr = None if stress is None else self._ptr(np.ascontiguousarray(stress, dtype=float))
        status = self._inverse(self._ptr(q), self._ptr(qdot), self._ptr(qddot), self._ptr(params), stress_ptr,
                               self._ptr(out))
        return None if status else out

    def project(self, q, tau) -> np.ndarray | None:
        """Eq. (50): ``J (J^T J)^-1 J^T tau`` (n_a,); None if singular."""
        out = np.empty(self.n_actuated)
        q, tau = (np.ascontiguousarray(a, dtype=float) for a in (q, tau))
        status = self._project(self._ptr(q), self._ptr(tau), self._ptr(out))
        return None if status else out


def load_kernels(robot: Robot, *, cache: Path | None = None) -> KernelLibrary:
    """The robot's compiled kernels, built at first use and cached by :func:`description_hash`.

    Raises:
        pardyn.kernels.symbolic.UnsupportedModel: the generator cannot write this robot.
        CompileError: no compiler, or compilation failed.
    """
    start = time.perf_counter()
    root = cache or cache_root()
    folder = root / f"{c_name(robot.name)}-{description_hash(robot)}"
    built = 0.0
    if not (folder / "libkernels.so").is_file():
        root.mkdir(parents=True, exist_ok=True)
        begin = time.perf_counter()
        staging = Path(tempfile.mkdtemp(prefix=folder.name + ".", dir=root))
        try:
            _compile(robot, staging)
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
