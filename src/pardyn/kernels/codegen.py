"""C sources of one robot's kernels: CasADi-generated model functions + the generic solver.

:func:`generate_sources` writes, for a robot named ``NAME`` (sanitized to a C identifier):

* ``pardyn_NAME.h``: the public API (sizes, index lists, the functions below);
* ``pardyn_NAME_data.h``: the constants the solver reads (sizes, indices, tolerances, home,
  mode signs, nominal parameters) and the model functions' prototypes;
* ``pardyn_NAME_model.c``: CasADi's C of five functions of the symbolic tree
  (:mod:`pardyn.kernels.symbolic`):
  ``closure(q) -> (phi (m,), K (m, nv) column-major)``,
  ``modes(q) -> signed values of the working then assembly mode conditions``,
  ``drift(q, v) -> Kdot v (m,)`` (the forward-mode derivative of ``K(q) v`` along ``v``),
  ``regressor(q, qdot, qddot, gravity) -> d tau_t / d inertial`` (nv, 10 (njoints - 1)), exact (RNEA is linear);
  its structural nonzeros only (column-major, the pattern in ``pd_regressor_colind``/``pd_regressor_row``:
  5-15 % of the matrix), which the closed-loop observation matrices multiply by ``W^T`` directly,
  ``rnea(q, qdot, qddot, params) -> tau_t (nv,)`` with the drive terms of eq. (5);
* ``pardyn_NAME.c``: the generic solver (``solver.c`` of this package) bound to the data header, then the
  control laws in one call (``laws.c``: PD + eq. 50, actuated computed torque).

Parameter vector ``params`` (``PARDYN_NAME_N_PARAMS``,): the ten pinocchio-ordered inertial
parameters of every joint (bodies lumped, ``DynamicParameters.joint_parameters``), then the
tree vectors ``ia``, ``fv``, ``fs``, ``offset`` (nv each, zero off the drive joints), then
gravity (3,), m/s^2.
"""

from __future__ import annotations

import hashlib
import json
import re
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pardyn.kernels.joints import UnsupportedModel, joint_kind
from pardyn.kinematics.solver import revolute_mask

if TYPE_CHECKING:
    from pardyn.dynamics.parameters import DynamicParameters
    from pardyn.kernels.symbolic import SymbolicTree
    from pardyn.kinematics.solver import ClosureSolver
    from pardyn.mechanism import Mechanism

# CasADi (~0.3 s to import) is imported by the functions that generate code only: loading cached kernels
# (check_supported, description_hash) does without it

__all__ = ["GENERATOR_VERSION", "check_supported", "description_hash", "generate_sources", "parameter_vector"]

GENERATOR_VERSION = "6"
"""Bumped when the generated code changes: part of the cache key."""

SOLVER_SOURCE = Path(__file__).with_name("solver.c")
LAWS_SOURCE = Path(__file__).with_name("laws.c")
"""Control laws in one call (PD + eq. 50, actuated computed torque), appended to the solver's source."""

STATUS = {"OK": 0, "NOT_CONVERGED": 1, "SINGULAR": 2, "BRANCH": 3, "SINGULARITY": 4, "UNSUPPORTED": 5}
PROBLEMS = {"INVERSE": 0, "FORWARD": 1, "FORWARD_SENSED": 2}


C_NAME_LENGTH = 40
"""Longest robot-name fragment in C identifiers and file names (``pardyn_<name>_model.c`` stays a short name)."""


def c_name(robot_name: str) -> str:
    """The robot's name as a C identifier fragment: ``[A-Za-z][A-Za-z0-9]*`` words joined by single underscores.

    Other characters become ``_``, runs of ``_`` one, none leading or trailing (CasADi refuses function names
    with ``__`` or a trailing ``_``: ``dualv-``, ``dualv (copy)``); a leading digit gets an ``r``; a name longer
    than :data:`C_NAME_LENGTH` is cut and ends with 8 hex digits of its hash (still unique, a file name that
    opens).
    """
    name = re.sub(r"_+", "_", re.sub(r"[^0-9a-zA-Z]", "_", robot_name)).strip("_") or "robot"
    if name[0].isdigit():
        name = "r" + name
    if len(name) > C_NAME_LENGTH:
        digest = hashlib.sha256(robot_name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        name = name[: C_NAME_LENGTH - 9].rstrip("_") + "_" + digest
    return name


def check_supported(robot: Mechanism) -> None:
    """Raise :class:`UnsupportedModel` naming what the generator cannot write for this robot."""
    model = robot.model
    if model.nq != model.nv:
        raise UnsupportedModel(f"nq = {model.nq} != nv = {model.nv}")
    for j in range(1, model.njoints):
        try:
            joint_kind(model.joints[j])
        except UnsupportedModel as error:
            raise UnsupportedModel(f"joint {model.names[j]!r}: {error}") from None
    if robot.frame_task is not None:
        raise UnsupportedModel(f"task read from frame {robot.frame_task.frame!r} (joint tasks only)")
    if len(robot.internal_indices):
        raise UnsupportedModel("internal motions (minimum-norm Newton steps)")
    if robot.closures.couplings:
        raise UnsupportedModel("joint couplings (closure type 'coupling' is not in the generated model)")
    extra = set(vars(robot.description)) & {"springs", "couplings", "joint_springs", "joint_couplings"}
    for key in sorted(extra):
        if getattr(robot.description, key):
            raise UnsupportedModel(f"description key {key!r} (not in the generated model)")


def _model_record(robot: Mechanism, solver: ClosureSolver, nominal: DynamicParameters) -> dict:
    """Everything the generator reads, JSON-ready (the cache key hashes it)."""
    model = robot.model
    joints = []
    for j in range(1, model.njoints):
        kind, axis = joint_kind(model.joints[j])
        placement = model.jointPlacements[j]
        joints.append([kind, axis.tolist(), int(model.parents[j]), placement.rotation.tolist(),
                       placement.translation.tolist(), int(model.joints[j].idx_v)])
    frames = {}
    for closure in robot.closures.closures:
        for name in closure.frames:
            frame = model.frames[model.getFrameId(name)]
            frames[name] = [int(frame.parentJoint), frame.placement.rotation.tolist(),
                            frame.placement.translation.tolist()]
    conditions = [
        [c.point, list(c.reference), c.kind, c.sign, c.axis]
        for c in (*robot.working_mode, *robot.assembly_mode)
    ]
    for c in (*robot.working_mode, *robot.assembly_mode):
        for name in c.frames:
            frame = model.frames[model.getFrameId(name)]
            frames[name] = [int(frame.parentJoint), frame.placement.rotation.tolist(),
                            frame.placement.translation.tolist()]
    return {
        "generator": GENERATOR_VERSION,
        "casadi": version("casadi"),  # = casadi.__version__, without importing it
        "name": robot.name,
        "joints": joints,
        "frames": frames,
        "closures": [[c.frames, c.type, list(c.components), c.length] for c in robot.closures.closures],
        "conditions": conditions,
        "n_working": len(robot.working_mode),
        "task": robot.task_indices.tolist(),
        "actuated": robot.actuated_indices.tolist(),
        "measured": robot.measured_indices.tolist(),
        "home": robot.home.tolist(),
        "solver": [solver.tolerance, solver.max_iterations, solver.max_condition],
        "nominal": parameter_vector(robot, nominal).tolist(),
        "solver_source": hashlib.sha256(SOLVER_SOURCE.read_bytes()).hexdigest(),
        "laws_source": hashlib.sha256(LAWS_SOURCE.read_bytes()).hexdigest(),
    }


def description_hash(robot: Mechanism, solver: ClosureSolver, nominal: DynamicParameters) -> str:
    """Cache key of the robot's kernels: SHA-256 of what the generator reads (first 16 hex digits): the
    mechanism, the solver's settings and the nominal parameters."""
    text = json.dumps(_model_record(robot, solver, nominal), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def parameter_vector(robot: Mechanism, params: DynamicParameters) -> np.ndarray:
    """The kernels' ``params`` (module docstring) of a parameter set, (10 (njoints - 1) + 4 nv + 3,)."""
    nv = robot.nv
    drives = np.zeros((4, nv))
    drives[:, params.drive_indices] = params.drive_values().T
    return np.concatenate([params.joint_parameters().reshape(-1), drives.reshape(-1),
                           np.asarray(params.gravity, dtype=float)])


def _closure_expressions(robot: Mechanism, tree: SymbolicTree):
    import casadi as ca  # noqa: PLC0415 - see the imports

    from pardyn.kernels.symbolic import log3  # noqa: PLC0415

    model = robot.model
    residual, rows = [], []
    for closure in robot.closures.closures:
        ia, ib = (model.getFrameId(name) for name in closure.frames)
        rotation_a, position_a = tree.frame_placement(ia)
        rotation_b, position_b = tree.frame_placement(ib)
        relative = tree.frame_jacobian(ib) - tree.frame_jacobian(ia)
        delta = position_b - position_a
        if closure.type == "distance":
            distance = ca.sqrt(ca.dot(delta, delta))
            residual.append(distance - closure.length)
            rows.append((delta / distance).T @ relative[:3, :])
            continue
        error = ca.vertcat(delta, log3(rotation_b @ rotation_a.T) if any(k >= 3 for k in closure.components)
                           else ca.SX.zeros(3))
        for k in closure.components:
            residual.append(error[k])
            rows.append(relative[k, :])
    if not residual:
        return ca.SX.zeros(0), ca.SX.zeros(0, model.nv)
    return ca.vertcat(*residual), ca.vertcat(*rows)


def _mode_expressions(robot: Mechanism, tree: SymbolicTree):
    import casadi as ca  # noqa: PLC0415 - see the imports

    model = robot.model
    values = []
    for condition in (*robot.working_mode, *robot.assembly_mode):
        positions = {name: tree.frame_placement(model.getFrameId(name))[1] for name in condition.frames}
        values.append(condition.signed_value(positions))
    return ca.vertcat(*values) if values else ca.SX.zeros(0)


def _array(name: str, ctype: str, values) -> str:
    values = list(values) or [0]
    text = ", ".join(repr(float(v)) if ctype == "double" else str(int(v)) for v in values)
    return f"static const {ctype} {name}[{len(values)}] = {{{text}}};\n"


def generate_sources(robot: Mechanism, out: Path, *, solver: ClosureSolver, nominal: DynamicParameters,
                     ) -> dict[str, Path]:
    """Write the four source files of the robot's kernels into ``out``; return them by role. ``solver`` gives
    the tolerances, ``nominal`` the parameters the C library carries (``robot.solver``,
    ``robot.nominal_parameters`` of a loaded robot).

    Raises:
        UnsupportedModel: the robot has something the generator does not write (message says what).
    """
    import casadi as ca  # noqa: PLC0415 - see the imports

    from pardyn.kernels.symbolic import SymbolicTree  # noqa: PLC0415

    check_supported(robot)
    out.mkdir(parents=True, exist_ok=True)
    model = robot.model
    nv, m = model.nv, robot.closures.size
    name = c_name(robot.name)
    prefix = f"pardyn_{name}"
    q = ca.SX.sym("q", nv)
    tree = SymbolicTree(model, q)
    phi, jacobian = _closure_expressions(robot, tree)
    modes = _mode_expressions(robot, tree)
    qdot, qddot = ca.SX.sym("qdot", nv), ca.SX.sym("qddot", nv)
    n_inertial = 10 * (model.njoints - 1)
    n_params = n_inertial + 4 * nv + 3
    params = ca.SX.sym("params", n_params)
    drive = [params[n_inertial + k * nv: n_inertial + (k + 1) * nv] for k in range(4)]
    tau = (tree.rnea(qdot, qddot, params[:n_inertial], params[n_params - 3:])
           + drive[0] * qddot + drive[1] * qdot + drive[2] * ca.sign(qdot) + drive[3])
    velocity = ca.SX.sym("v", nv)
    drift = ca.jtimes(jacobian @ velocity, q, velocity) if m else ca.SX.zeros(0)  # Kdot v: d(K(q) v)/dq v
    gravity = ca.SX.sym("gravity", 3)
    inertial = ca.SX.sym("inertial", n_inertial)
    joint_regressor = ca.jacobian(tree.rnea(qdot, qddot, inertial, gravity), inertial)  # exact: RNEA is linear
    pattern = joint_regressor.sparsity()
    functions = [
        ca.Function(f"{prefix}_closure_cg", [q], [ca.densify(phi), ca.densify(jacobian)]),
        ca.Function(f"{prefix}_regressor_cg", [q, qdot, qddot, gravity], [joint_regressor]),  # its nonzeros only
        ca.Function(f"{prefix}_drift_cg", [q, velocity], [ca.densify(drift)]),
        ca.Function(f"{prefix}_modes_cg", [q], [ca.densify(modes)]),
        ca.Function(f"{prefix}_rnea_cg", [q, qdot, qddot, params], [ca.densify(tau)]),
    ]
    generator = ca.CodeGenerator(f"{prefix}_model.c", {"with_header": False, "prefix": f"{prefix}_cg_"})
    for function in functions:
        generator.add(function)
    generator.generate(str(out) + "/")
    upper = prefix.upper()
    angles = revolute_mask(model).astype(int)
    all_indices = np.arange(nv)
    conditions = (*robot.working_mode, *robot.assembly_mode)
    public = f"""/* {prefix}.h: compiled closed-loop kernels of the robot '{robot.name}' (generated by pardyn).
 *
 * Coordinates q (nv,) in the order of pardyn's robot.joint_names (rad, m); matrices column-major.
 * Every function is reentrant (stack work arrays, no allocation); return 0 on success, else a
 * PARDYN_STATUS_* code (then fall back to pardyn's Python path, which reports the cause).
 */
#ifndef {upper}_H
#define {upper}_H
#ifdef __cplusplus
extern "C" {{
#endif

#define {upper}_NV {nv}                /* tree coordinates */
#define {upper}_M {m}                 /* closure equations */
#define {upper}_N_TASK {len(robot.task_names)}
#define {upper}_N_ACTUATED {len(robot.actuated_indices)}
#define {upper}_N_MEASURED {len(robot.measured_indices)}   /* actuated then sensed */
#define {upper}_N_PARAMS {n_params}

#ifndef PARDYN_STATUS_OK
#define PARDYN_STATUS_OK 0
#define PARDYN_STATUS_NOT_CONVERGED 1   /* Newton's budget spent: pardyn's continuation from home is needed */
#define PARDYN_STATUS_SINGULAR 2        /* a linear system was exactly singular */
#define PARDYN_STATUS_BRANCH 3          /* converged on another working/assembly mode */
#define PARDYN_STATUS_SINGULARITY 4     /* serial or parallel condition number above the limit */
#define PARDYN_STATUS_UNSUPPORTED 5
#define PARDYN_INVERSE 0                /* values: task coordinates */
#define PARDYN_FORWARD 1                /* values: actuated joints */
#define PARDYN_FORWARD_SENSED 2         /* values: actuated then sensed joints */
typedef struct pardyn_info {{
  int status;        /* PARDYN_STATUS_* */
  int iterations;    /* Newton iterations */
  double residual;   /* max |phi(q)|, m and rad */
  double serial;     /* condition number of K on the non-task joints (0 without checks) */
  double parallel;   /* condition number of K on the non-actuated joints (0 without checks) */
}} pardyn_info;
#endif
#ifndef PARDYN_OBSERVATION_LAYOUT
#define PARDYN_OBSERVATION_LAYOUT
/* Columns and rows of the identification model's observation matrices (pardyn.dynamics.regressor.Regressor). */
typedef struct pardyn_observation_layout {{
  int n_body;               /* body columns: column c = sum_k body_value[k] * joint-regressor column body_source[k], */
  const int *body_start;    /*   k in [body_start[c], body_start[c + 1]) (B of DynamicParameters.body_map, CSC) */
  const int *body_source;
  const double *body_value;
  int n_drive;              /* drive joints drive[0..n_drive): 4 columns each after the body columns, eq. (5) */
  const int *drive;
  const int *left;          /* N_TASK joints: rows W_left^T Y_t, W_left the velocity map from their rates: the task */
                            /* joints W^T Y_t (eq. 30), the actuated J^-T W^T Y_t (19), the kept ones J_1^-T W^T Y_t (36) */
  double gravity[3];        /* m/s^2 */
}} pardyn_observation_layout;
#endif

/* phi (M,) and K = dphi/dq (M x NV, column-major) at q (NV,). */
int {prefix}_closure(const double *q, double *phi, double *jacobian);
/* Newton from start (NV,) with q[given] = values; checks: mode conditions and conditioning. */
int {prefix}_solve(int problem, const double *values, const double *start, int checks, double *q, pardyn_info *info);
/* qdot (NV,) and qddot (NV,) from the given coordinates' rates (n_given,) and accelerations (n_given,) or NULL,
 * eqs. (9)-(10), (21)-(24): K qdot = 0, K qddot + Kdot qdot = 0 (least squares with redundant readings);
 * velocity_map: W (NV x n_given, column-major) with qdot = W rates, or NULL (square problems only). */
int {prefix}_states(int problem, const double *q, const double *rates, const double *accelerations,
                    double *qdot, double *qddot, double *velocity_map);
/* Joint regressors of N states (q, qdot, qddot: N x NV row-major): out (N, 10 (njoints - 1), NV) row-major, i.e.
 * each state's Y (NV x 10 (njoints - 1), tau_t = Y inertial, without drive terms) column-major. */
int {prefix}_joint_regressors(int count, const double *q, const double *qdot, const double *qddot,
                              const double *gravity, double *out);
/* Closed-loop states of a recorded series (N samples, h = step s apart): Newton from the previous sample's
 * second-order prediction (the first from start (NV,)), branch and conditioning checked every check_every samples,
 * then qdot, qddot from the given joints' readings, rates, accelerations (N x n_given each, row-major); q, qdot,
 * qddot (N x NV). Returns the count of samples solved; info: the status of the next (fall back from there). */
int {prefix}_series(int problem, int count, const double *readings, const double *rates, const double *accelerations,
                    const double *start, double step, int check_every, double *q, double *qdot, double *qddot,
                    pardyn_info *info);
/* Closed-loop observation matrices of N closed states (q, qdot, qddot: N x NV row-major), eqs. (19), (30), (36):
 * out (N, N_TASK, n_body + 4 n_drive) row-major, rows P W^T Y_t with W the task velocity map (qdot = W xdot) and
 * P = J_1^-T, J_1 = W[layout->left] (I for the task joints); with torques (N x N_ACTUATED) and measured (N x N_TASK)
 * non-NULL, measured = P J^T tau. Returns PARDYN_STATUS_SINGULAR at the first state where the joints other than
 * layout->left do not close the loops regularly (the later states are not written). */
int {prefix}_observations(int count, const double *q, const double *qdot, const double *qddot,
                          const pardyn_observation_layout *layout, const double *torques, double *out, double *measured);
/* Tree efforts tau_t (NV,) by RNEA with the drive terms of eq. (5); params (N_PARAMS,). */
int {prefix}_tree_torques(const double *q, const double *qdot, const double *qddot, const double *params, double *tau);
/* Minimum-norm actuator torques (N_ACTUATED,) of a closed state, eqs. (19), (26); stress (N_ACTUATED,) or NULL. */
int {prefix}_inverse_dynamics(const double *q, const double *qdot, const double *qddot, const double *params,
                              const double *stress, double *tau_a);
/* Eq. (50): tau* = J (J^T J)^-1 J^T tau, the internal stress removed from tau (N_ACTUATED,). */
int {prefix}_project(const double *q, const double *tau, double *tau_star);
/* A controller's answer to one state in one call (laws.c): gains = kp, kd, limits (N_ACTUATED, each); q (NV,)
 * warm start in, closed configuration out; tau (N_ACTUATED,). PD (+ eq. 50 when project), actuated CTC (eq. 37). */
int {prefix}_pd_step(const double *position, const double *velocity, const double *q_ref, const double *qdot_ref,
                     const double *gains, int project, double *q, double *tau, pardyn_info *info);
int {prefix}_ctc_step(const double *position, const double *velocity, const double *q_ref, const double *qdot_ref,
                      const double *qddot_ref, const double *gains, const double *params, double *q, double *tau,
                      pardyn_info *info);
/* The robot description's nominal parameters (N_PARAMS,). */
void {prefix}_nominal_parameters(double *params);

#ifdef __cplusplus
}}
#endif
#endif
"""
    model_prototypes = "".join(
        f"int {f.name()}(const double **arg, double **res, long long int *iw, double *w, int mem);\n"
        for f in functions
    )
    data = (
        f"/* {prefix}_data.h: constants of the generic solver for '{robot.name}' (generated by pardyn). */\n"
        f"#ifndef {upper}_DATA_H\n#define {upper}_DATA_H\n#include \"{prefix}.h\"\n"
        f"#define PD_API(x) {prefix}_##x\n"
        f"#define PD_NV {nv}\n#define PD_M {m}\n#define PD_N_TASK {len(robot.task_names)}\n"
        f"#define PD_N_ACTUATED {len(robot.actuated_indices)}\n#define PD_N_MEASURED {len(robot.measured_indices)}\n"
        f"#define PD_N_WORKING {len(robot.working_mode)}\n"
        f"#define PD_N_ASSEMBLY {len(robot.assembly_mode)}\n#define PD_N_PARAMS {n_params}\n"
        f"#define PD_TOLERANCE {solver.tolerance!r}\n#define PD_MAX_ITERATIONS {solver.max_iterations}\n"
        f"#define PD_MAX_CONDITION {solver.max_condition!r}\n"
        + "".join(f"#define PD_STATUS_{k} {v}\n" for k, v in STATUS.items())
        + f"#define PD_CLOSURE_FN {prefix}_closure_cg\n#define PD_MODES_FN {prefix}_modes_cg\n"
        f"#define PD_RNEA_FN {prefix}_rnea_cg\n#define PD_DRIFT_FN {prefix}_drift_cg\n"
        f"#define PD_REGRESSOR_FN {prefix}_regressor_cg\n#define PD_N_INERTIAL {n_inertial}\n"
        + model_prototypes
        + _array("pd_task", "int", robot.task_indices)
        + _array("pd_actuated", "int", robot.actuated_indices)
        + _array("pd_measured", "int", robot.measured_indices)
        + _array("pd_non_task", "int", np.setdiff1d(all_indices, robot.task_indices))
        + _array("pd_non_actuated", "int", np.setdiff1d(all_indices, robot.actuated_indices))
        + _array("pd_angles", "char", angles)
        + _array("pd_home", "double", robot.home)
        + _array("pd_mode_signs", "int", [c.sign for c in conditions])
        + _array("pd_nominal", "double", parameter_vector(robot, nominal))
        + f"#define PD_REGRESSOR_NNZ {pattern.nnz()}\n"
        + _array("pd_regressor_colind", "int", pattern.colind())
        + _array("pd_regressor_row", "int", pattern.row())
        + "#endif\n"
    )
    files = {
        "header": out / f"{prefix}.h",
        "data": out / f"{prefix}_data.h",
        "model": out / f"{prefix}_model.c",
        "solver": out / f"{prefix}.c",
    }
    files["header"].write_text(public)
    files["data"].write_text(data)
    files["solver"].write_text(SOLVER_SOURCE.read_text().replace("@DATA_HEADER@", f"{prefix}_data.h")
                               + LAWS_SOURCE.read_text())
    return files
