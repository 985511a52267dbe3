
/* ---- control laws in one call (laws.c, appended to the solver's translation unit) -----------------
 *
 * A controller's whole answer to one joint state, so that a 1 kHz host pays one foreign call per
 * message (pardyn.control.compiled). Each mirrors, operation by operation, the Python path it replaces:
 *
 *   pd_step:  tau = sat(Kp (q_ref - q_a) + Kd (qdot_ref - qdot_a))          pardyn.control.pd.JointPD
 *             then, when project: q = forward(q_a) from the warm start (checked),
 *             tau = sat(J (J^T J)^-1 J^T tau)                                eq. (50), redundancy.py
 *   ctc_step: v = qddot_ref + Kd (qdot_ref - qdot_a) + Kp (q_ref - q_a)      eq. (37)
 *             q = forward(q_a) (checked), qdot, qddot from (qdot_a, v)       eqs. (21), (24)
 *             tau = sat(minimum-norm inverse dynamics (q, qdot, qddot))      eqs. (19), (26), (35)
 *                                                  pardyn.control.computed_torque.ComputedTorque, actuated space
 *
 * gains: kp (N_ACTUATED,), kd (N_ACTUATED,), limits (N_ACTUATED,) one after the other. q (NV,): the warm
 * start in, the closed configuration out (written only on success). Returns 0, or a PARDYN_STATUS_* code
 * (non-finite input: PD_STATUS_UNSUPPORTED) and then writes nothing: the host re-runs its Python path,
 * which gives the same answer or raises the typed error.
 */

static int pd_all_finite(const double *x, int n) {
  for (int i = 0; i < n; ++i) if (!isfinite(x[i])) return 0;
  return 1;
}

/* np.minimum(np.maximum(u, -limit), limit) on finite values. */
static double pd_saturate(double u, double limit) {
  double v = u > -limit ? u : -limit;
  return v < limit ? v : limit;
}

int PD_API(pd_step)(const double *position, const double *velocity, const double *q_ref, const double *qdot_ref,
                    const double *gains, int project, double *q, double *tau, pardyn_info *info) {
  const int na = PD_N_ACTUATED;
  const double *kp = gains, *kd = gains + na, *limits = gains + 2 * na;
  double out[PD_N_ACTUATED + 1], projected[PD_N_ACTUATED + 1], solved[PD_NV + 1];
  info->status = PD_STATUS_UNSUPPORTED;
  if (!pd_all_finite(position, na) || !pd_all_finite(velocity, na) || !pd_all_finite(q_ref, na) ||
      !pd_all_finite(qdot_ref, na)) return info->status;
  for (int i = 0; i < na; ++i) {
    double p = kp[i] * (q_ref[i] - position[i]), d = kd[i] * (qdot_ref[i] - velocity[i]);
    out[i] = pd_saturate(p + d, limits[i]);
  }
  if (project) {
    if (PD_API(solve)(PARDYN_FORWARD, position, q, 1, solved, info)) return info->status;
    int status = PD_API(project)(solved, out, projected);
    if (status) { info->status = status; return status; }
    for (int i = 0; i < na; ++i) out[i] = pd_saturate(projected[i], limits[i]);
    memcpy(q, solved, sizeof(double) * PD_NV);
  }
  memcpy(tau, out, sizeof(double) * na);
  info->status = PD_STATUS_OK;
  return PD_STATUS_OK;
}

int PD_API(ctc_step)(const double *position, const double *velocity, const double *q_ref, const double *qdot_ref,
                     const double *qddot_ref, const double *gains, const double *params, double *q, double *tau,
                     pardyn_info *info) {
  const int na = PD_N_ACTUATED;
  const double *kp = gains, *kd = gains + na, *limits = gains + 2 * na;
  double command[PD_N_ACTUATED + 1], out[PD_N_ACTUATED + 1], solved[PD_NV + 1], qdot[PD_NV + 1], qddot[PD_NV + 1];
  info->status = PD_STATUS_UNSUPPORTED;
  if (!pd_all_finite(position, na) || !pd_all_finite(velocity, na) || !pd_all_finite(q_ref, na) ||
      !pd_all_finite(qdot_ref, na) || !pd_all_finite(qddot_ref, na)) return info->status;
  for (int i = 0; i < na; ++i) {
    double d = kd[i] * (qdot_ref[i] - velocity[i]), p = kp[i] * (q_ref[i] - position[i]);
    command[i] = (qddot_ref[i] + d) + p;
  }
  if (PD_API(solve)(PARDYN_FORWARD, position, q, 1, solved, info)) return info->status;
  int status = PD_API(states)(PARDYN_FORWARD, solved, velocity, command, qdot, qddot, 0);
  if (!status) status = PD_API(inverse_dynamics)(solved, qdot, qddot, params, 0, out);
  if (status) { info->status = status; return status; }
  for (int i = 0; i < na; ++i) tau[i] = pd_saturate(out[i], limits[i]);
  memcpy(q, solved, sizeof(double) * PD_NV);
  info->status = PD_STATUS_OK;
  return PD_STATUS_OK;
}
