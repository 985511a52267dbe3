/* pardyn closed-loop kernels: Newton solve, conditioning, closed-loop inverse dynamics.
 *
 * Generic over robots: every size, index list and tolerance comes from the generated data
 * header; the model itself (closure residual and Jacobian, mode-condition values, RNEA) is
 * CasADi-generated C. Column-major matrices throughout (K is m x nv, K[r + m c]).
 * Reentrant: no static state (work arrays on the stack), no allocation, no system call.
 * Mirrors pardyn.kinematics.solver.ClosureSolver (the Python reference) step by step.
 */
#include <math.h>
#include <string.h>
#include "@DATA_HEADER@"

#define PD_PI 3.14159265358979323846
#define PD_GIVEN_TOLERANCE 1e-10
#define PD_FIT_STEP_TOLERANCE 1e-10

static double pd_wrap(double x) { /* to [-pi, pi) as Python's (x + pi) % (2 pi) - pi */
  double r = fmod(x + PD_PI, 2.0 * PD_PI);
  if (r < 0.0) r += 2.0 * PD_PI;
  return r - PD_PI;
}

static double pd_max_abs(const double *x, int n) {
  double out = 0.0;
  for (int i = 0; i < n; ++i) { double a = fabs(x[i]); if (a > out) out = a; }
  return out;
}

/* LU factorization with partial pivoting of A (column-major n x n) in place, row swaps in piv
 * (LAPACK dgetrf's algorithm). Returns 0, or 1 on an exactly zero pivot. */
static int pd_lu_factor(double *a, int n, int *piv) {
  for (int k = 0; k < n; ++k) {
    int p = k;
    double best = fabs(a[k + n * k]);
    for (int i = k + 1; i < n; ++i) { double v = fabs(a[i + n * k]); if (v > best) { best = v; p = i; } }
    piv[k] = p;
    if (best == 0.0) return 1;
    if (p != k) for (int j = 0; j < n; ++j) { double t = a[k + n * j]; a[k + n * j] = a[p + n * j]; a[p + n * j] = t; }
    double inv = 1.0 / a[k + n * k];
    for (int i = k + 1; i < n; ++i) a[i + n * k] *= inv;
    for (int j = k + 1; j < n; ++j) {
      double f = a[k + n * j];
      if (f != 0.0) for (int i = k + 1; i < n; ++i) a[i + n * j] -= a[i + n * k] * f;
    }
  }
  return 0;
}

/* b (n x nrhs, column-major) <- A^-1 b from pd_lu_factor's output. */
static void pd_lu_apply(const double *a, int n, const int *piv, double *b, int nrhs) {
  for (int r = 0; r < nrhs; ++r) {
    double *x = b + n * r;
    for (int k = 0; k < n; ++k) /* P b: the row swaps in order (the stored L is in the final row order) */
      if (piv[k] != k) { double t = x[k]; x[k] = x[piv[k]]; x[piv[k]] = t; }
    for (int k = 0; k < n; ++k) {
      double f = x[k];
      if (f != 0.0) for (int i = k + 1; i < n; ++i) x[i] -= a[i + n * k] * f;
    }
    for (int k = n - 1; k >= 0; --k) {
      x[k] /= a[k + n * k];
      double f = x[k];
      if (f != 0.0) for (int i = 0; i < k; ++i) x[i] -= a[i + n * k] * f;
    }
  }
}

/* Solve A x = b in place (b overwritten by x, nrhs columns). Returns 0, or 1 if A is exactly singular. */
static int pd_lu_solve(double *a, int n, double *b, int nrhs) {
  int piv[PD_NV + PD_M + 1];
  if (pd_lu_factor(a, n, piv)) return 1;
  pd_lu_apply(a, n, piv, b, nrhs);
  return 0;
}

/* 2-norm condition number of the columns cols[0..c) of K (m x nv) by one-sided Jacobi SVD
 * (Hestenes): accurate to a few ulps; the slow, exact path. */
static double pd_condition_jacobi(const double *k, const int *cols, int c) {
  int m = PD_M;
  double a[PD_M * PD_NV > 0 ? PD_M * PD_NV : 1];
  int r, n; /* the thinner orientation: columns of A (r x n), n <= r */
  if (c <= m) { r = m; n = c; for (int j = 0; j < c; ++j) memcpy(a + r * j, k + m * cols[j], sizeof(double) * m); }
  else { r = c; n = m; for (int i = 0; i < m; ++i) for (int j = 0; j < c; ++j) a[j + r * i] = k[i + m * cols[j]]; }
  for (int sweep = 0; sweep < 60; ++sweep) {
    double off = 0.0;
    for (int p = 0; p < n - 1; ++p) for (int q = p + 1; q < n; ++q) {
      double alpha = 0.0, beta = 0.0, gamma = 0.0;
      double *x = a + r * p, *y = a + r * q;
      for (int i = 0; i < r; ++i) { alpha += x[i] * x[i]; beta += y[i] * y[i]; gamma += x[i] * y[i]; }
      if (gamma == 0.0) continue;
      double scale = fabs(gamma) / sqrt(alpha * beta);
      if (!(scale > 1e-15)) continue;
      if (scale > off) off = scale;
      double zeta = (beta - alpha) / (2.0 * gamma);
      double t = (zeta >= 0.0 ? 1.0 : -1.0) / (fabs(zeta) + sqrt(1.0 + zeta * zeta));
      double cs = 1.0 / sqrt(1.0 + t * t), sn = cs * t;
      for (int i = 0; i < r; ++i) { double u = x[i], v = y[i]; x[i] = cs * u - sn * v; y[i] = sn * u + cs * v; }
    }
    if (off <= 1e-15) break;
  }
  double largest = 0.0, smallest = INFINITY;
  for (int j = 0; j < n; ++j) {
    double s = 0.0;
    for (int i = 0; i < r; ++i) s += a[i + r * j] * a[i + r * j];
    s = sqrt(s);
    if (s > largest) largest = s;
    if (s < smallest) smallest = s;
  }
  return smallest > 0.0 ? largest / smallest : INFINITY;
}

/* Every eigenvalue of the symmetric tridiagonal (d (n,), e (n,): e[i] = T[i+1, i], e[n-1] = 0), in d:
 * the implicit QL algorithm with Wilkinson shifts (EISPACK tql1). Returns 1 if it does not converge. */
static int pd_tridiagonal_eigenvalues(double *d, double *e, int n) {
  for (int l = 0; l < n; ++l) {
    int iterations = 0, m;
    do {
      for (m = l; m < n - 1; ++m) {
        double dd = fabs(d[m]) + fabs(d[m + 1]);
        if (fabs(e[m]) <= 2.2e-16 * dd) break;
      }
      if (m != l) {
        if (iterations++ == 60) return 1;
        double g = (d[l + 1] - d[l]) / (2.0 * e[l]);
        double r = sqrt(g * g + 1.0);
        g = d[m] - d[l] + e[l] / (g + (g >= 0.0 ? fabs(r) : -fabs(r)));
        double s = 1.0, c = 1.0, p = 0.0;
        int i;
        for (i = m - 1; i >= l; --i) {
          double f = s * e[i], b = c * e[i];
          e[i + 1] = (r = sqrt(f * f + g * g)); /* no hypot: 5x slower, and G is scaled by K (|entries| <= ~10) */
          if (r == 0.0) { d[i + 1] -= p; e[m] = 0.0; break; }
          s = f / r;
          c = g / r;
          g = d[i + 1] - p;
          r = (d[i] - g) * s + 2.0 * c * b;
          d[i + 1] = g + (p = s * r);
          g = c * r - b;
        }
        if (r == 0.0 && i >= l) continue;
        d[l] -= p;
        e[l] = g;
        e[m] = 0.0;
      }
    } while (m != l);
  }
  return 0;
}

/* The condition number from the extreme eigenvalues of the Gram matrix G (n x n) of the block:
 * Householder tridiagonalization, then implicit QL. Eigenvalues are exact to
 * a few ulps of lambda_max, so the ratio is exact to ~eps cond^2: above PD_GRAM_LIMIT the block
 * is re-measured by Jacobi (pd_condition_jacobi). ~n^3 flops instead of Jacobi's ~10 n^3; the
 * tridiagonal eigenvalues by implicit QL (Sturm bisection to full precision cost 5x more). */
#define PD_GRAM_LIMIT 1e3
static double pd_condition(const double *k, const int *cols, int c) {
  int m = PD_M;
  if (m == 0 || c == 0) return 1.0;
  int n = c <= m ? c : m;
  double g[PD_NV * PD_NV + 1], d[PD_NV + 1], e[PD_NV + 1], v[PD_NV + 1], w[PD_NV + 1];
  if (c <= m) { /* G = A^T A */
    for (int i = 0; i < n; ++i) for (int j = 0; j <= i; ++j) {
      const double *x = k + m * cols[i], *y = k + m * cols[j];
      double s = 0.0;
      for (int r = 0; r < m; ++r) s += x[r] * y[r];
      g[i + n * j] = g[j + n * i] = s;
    }
  } else { /* G = A A^T */
    for (int i = 0; i < n; ++i) for (int j = 0; j <= i; ++j) {
      double s = 0.0;
      for (int t = 0; t < c; ++t) s += k[i + m * cols[t]] * k[j + m * cols[t]];
      g[i + n * j] = g[j + n * i] = s;
    }
  }
  for (int col = 0; col < n - 2; ++col) {
    int len = n - col - 1;
    double *x = g + (col + 1) + n * col;
    double norm = 0.0;
    for (int i = 0; i < len; ++i) norm += x[i] * x[i];
    norm = sqrt(norm);
    if (norm == 0.0) continue;
    double alpha = x[0] > 0.0 ? -norm : norm;
    for (int i = 0; i < len; ++i) v[i] = x[i];
    v[0] -= alpha;
    double vn = 0.0;
    for (int i = 0; i < len; ++i) vn += v[i] * v[i];
    vn = sqrt(vn);
    if (vn == 0.0) continue;
    for (int i = 0; i < len; ++i) v[i] /= vn;
    double *b = g + (col + 1) + n * (col + 1); /* trailing block, leading dimension n */
    double vp = 0.0;
    for (int i = 0; i < len; ++i) {
      double s = 0.0;
      for (int j = 0; j < len; ++j) s += b[i + n * j] * v[j];
      w[i] = 2.0 * s;
      vp += v[i] * w[i];
    }
    for (int i = 0; i < len; ++i) w[i] -= vp * v[i];
    for (int j = 0; j < len; ++j) for (int i = 0; i < len; ++i) b[i + n * j] -= v[i] * w[j] + w[i] * v[j];
    x[0] = alpha;
    for (int i = 1; i < len; ++i) x[i] = 0.0;
  }
  for (int i = 0; i < n; ++i) { d[i] = g[i + n * i]; e[i] = i + 1 < n ? g[(i + 1) + n * i] : 0.0; }
  if (pd_tridiagonal_eigenvalues(d, e, n)) return pd_condition_jacobi(k, cols, c);
  double extreme[2] = {d[0], d[0]};
  for (int i = 1; i < n; ++i) {
    if (d[i] < extreme[0]) extreme[0] = d[i];
    if (d[i] > extreme[1]) extreme[1] = d[i];
  }
  if (!(extreme[0] > 0.0) || extreme[1] > PD_GRAM_LIMIT * PD_GRAM_LIMIT * extreme[0])
    return pd_condition_jacobi(k, cols, c);
  return sqrt(extreme[1] / extreme[0]);
}

static void pd_closure_eval(const double *q, double *phi, double *jac) {
  const double *arg[1] = {q};
  double *res[2] = {phi, jac};
  PD_CLOSURE_FN(arg, res, 0, 0, 0);
}

int PD_API(closure)(const double *q, double *phi, double *jacobian) {
  pd_closure_eval(q, phi, jacobian);
  return 0;
}

/* Newton on phi(q) = 0, q[given] = values (pardyn.kinematics.solver.ClosureSolver.newton). */
static int pd_newton(const int *given, int n_given, const double *values, double *q,
                     double *phi, double *jac, int *iterations, double *residual) {
  int nv = PD_NV, m = PD_M;
  int dependent[PD_NV + 1], n_dep = 0;
  char is_given[PD_NV + 1];
  memset(is_given, 0, sizeof is_given);
  for (int i = 0; i < n_given; ++i) is_given[given[i]] = 1;
  for (int i = 0; i < nv; ++i) if (!is_given[i]) dependent[n_dep++] = i;
  if (n_dep > m) return PD_STATUS_UNSUPPORTED; /* minimum-norm steps: the Python path */
  int kkt_size = nv + m;
  double offset[PD_NV + 1];
  double matrix[(PD_NV + PD_M) * (PD_NV + PD_M) + 1];
  double rhs[PD_NV + PD_M + 1];
  for (int it = 0; it <= PD_MAX_ITERATIONS; ++it) {
    pd_closure_eval(q, phi, jac);
    for (int i = 0; i < n_given; ++i) {
      double d = values[i] - q[given[i]];
      offset[i] = pd_angles[given[i]] ? pd_wrap(d) : d;
    }
    double rn = pd_max_abs(phi, m), on = pd_max_abs(offset, n_given);
    *residual = rn;
    *iterations = it;
    if (rn <= PD_TOLERANCE && on <= PD_GIVEN_TOLERANCE) return PD_STATUS_OK;
    if (it == PD_MAX_ITERATIONS) break;
    if (n_dep == m) { /* square: K_D dq_D = -(phi + K_I offset) */
      for (int r = 0; r < m; ++r) {
        double s = phi[r];
        for (int i = 0; i < n_given; ++i) s += jac[r + m * given[i]] * offset[i];
        rhs[r] = -s;
      }
      for (int j = 0; j < n_dep; ++j) memcpy(matrix + m * j, jac + m * dependent[j], sizeof(double) * m);
      if (pd_lu_solve(matrix, m, rhs, 1)) return PD_STATUS_SINGULAR;
      for (int i = 0; i < n_given; ++i) q[given[i]] += offset[i];
      for (int j = 0; j < n_dep; ++j) q[dependent[j]] += rhs[j];
      continue;
    }
    /* over-determined: [[S^T S, K^T], [K, 0]] [dq; mu] = [S^T offset; -phi] */
    memset(matrix, 0, sizeof(double) * kkt_size * kkt_size);
    for (int i = 0; i < n_given; ++i) matrix[given[i] + kkt_size * given[i]] = 1.0;
    for (int c = 0; c < nv; ++c) for (int r = 0; r < m; ++r) {
      double v = jac[r + m * c];
      matrix[(nv + r) + kkt_size * c] = v;
      matrix[c + kkt_size * (nv + r)] = v;
    }
    memset(rhs, 0, sizeof(double) * kkt_size);
    for (int i = 0; i < n_given; ++i) rhs[given[i]] = offset[i];
    for (int r = 0; r < m; ++r) rhs[nv + r] = -phi[r];
    if (pd_lu_solve(matrix, kkt_size, rhs, 1)) return PD_STATUS_SINGULAR;
    for (int i = 0; i < nv; ++i) if (!isfinite(rhs[i])) return PD_STATUS_NOT_CONVERGED;
    if (rn <= PD_TOLERANCE && pd_max_abs(rhs, nv) <= PD_FIT_STEP_TOLERANCE) return PD_STATUS_OK;
    for (int i = 0; i < nv; ++i) q[i] += rhs[i];
  }
  return PD_STATUS_NOT_CONVERGED;
}

int PD_API(solve)(int problem, const double *values, const double *start, int checks, double *q, pardyn_info *info) {
  const int *given;
  int n_given;
  const int *modes_sign;
  int n_modes, first_mode;
  double phi[PD_M + 1], jac[PD_M * PD_NV + 1], mode_values[PD_N_WORKING + PD_N_ASSEMBLY + 1];
  if (problem == PARDYN_INVERSE) { given = pd_task; n_given = PD_N_TASK; n_modes = PD_N_WORKING; first_mode = 0; }
  else if (problem == PARDYN_FORWARD) { given = pd_actuated; n_given = PD_N_ACTUATED; n_modes = PD_N_ASSEMBLY; first_mode = PD_N_WORKING; }
  else if (problem == PARDYN_FORWARD_SENSED) { given = pd_measured; n_given = PD_N_MEASURED; n_modes = PD_N_ASSEMBLY; first_mode = PD_N_WORKING; }
  else { info->status = PD_STATUS_UNSUPPORTED; return info->status; }
  modes_sign = pd_mode_signs + first_mode;
  memcpy(q, start, sizeof(double) * PD_NV);
  for (int i = 0; i < n_given; ++i) if (!isfinite(values[i])) { info->status = PD_STATUS_NOT_CONVERGED; return info->status; }
  info->serial = info->parallel = 0.0;
  info->status = pd_newton(given, n_given, values, q, phi, jac, &info->iterations, &info->residual);
  if (info->status != PD_STATUS_OK) return info->status;
  if (checks) {
    const double *arg[1] = {q};
    double *res[1] = {mode_values};
    PD_MODES_FN(arg, res, 0, 0, 0);
    for (int i = 0; i < n_modes; ++i)
      if (!(modes_sign[i] * mode_values[first_mode + i] > 0.0)) { info->status = PD_STATUS_BRANCH; return info->status; }
  }
  for (int i = 0; i < PD_NV; ++i) if (pd_angles[i]) q[i] = pd_home[i] + pd_wrap(q[i] - pd_home[i]);
  if (checks) {
    info->serial = pd_condition(jac, pd_non_task, PD_NV - PD_N_TASK);
    info->parallel = pd_condition(jac, pd_non_actuated, PD_NV - PD_N_ACTUATED);
    if (!(info->serial < PD_MAX_CONDITION) || !(info->parallel < PD_MAX_CONDITION)) {
      info->status = PD_STATUS_SINGULARITY;
      return info->status;
    }
  }
  return PD_STATUS_OK;
}

/* The KKT system of pardyn.dynamics.actuation.ActuationMaps with K itself:
 *   [E K^T; K 0] [y; lambda] = [b; 0],  tau_a = y[actuated]   (redundant, E = diag of the actuated joints)
 *   [S_a K^T] [tau_a; lambda] = b                              (n_a + m = nv)
 * i.e. tau_a = J (J^T J)^-1 W^T b (eqs. 19, 26); b = S_a^T tau gives J (J^T J)^-1 J^T tau (eq. 50). */
static int pd_actuation_solve(const double *jac, double *rhs, int nrhs, double *out) {
  int nv = PD_NV, m = PD_M, na = PD_N_ACTUATED;
  double matrix[(PD_NV + PD_M) * (PD_NV + PD_M) + 1];
  int n;
  if (na + m == nv) {
    n = nv;
    memset(matrix, 0, sizeof(double) * n * n);
    for (int i = 0; i < na; ++i) matrix[pd_actuated[i] + n * i] = 1.0;
    for (int r = 0; r < m; ++r) for (int c = 0; c < nv; ++c) matrix[c + n * (na + r)] = jac[r + m * c];
    if (pd_lu_solve(matrix, n, rhs, nrhs)) return PD_STATUS_SINGULAR;
    for (int k = 0; k < nrhs; ++k) for (int i = 0; i < na; ++i) out[i + na * k] = rhs[i + n * k];
    return PD_STATUS_OK;
  }
  n = nv + m;
  memset(matrix, 0, sizeof(double) * n * n);
  for (int i = 0; i < na; ++i) matrix[pd_actuated[i] + n * pd_actuated[i]] = 1.0;
  for (int c = 0; c < nv; ++c) for (int r = 0; r < m; ++r) {
    matrix[(nv + r) + n * c] = jac[r + m * c];
    matrix[c + n * (nv + r)] = jac[r + m * c];
  }
  if (pd_lu_solve(matrix, n, rhs, nrhs)) return PD_STATUS_SINGULAR;
  for (int k = 0; k < nrhs; ++k) for (int i = 0; i < na; ++i) out[i + na * k] = rhs[pd_actuated[i] + n * k];
  return PD_STATUS_OK;
}

int PD_API(tree_torques)(const double *q, const double *qdot, const double *qddot, const double *params, double *tau) {
  const double *arg[4] = {q, qdot, qddot, params};
  double *res[1] = {tau};
  PD_RNEA_FN(arg, res, 0, 0, 0);
  return 0;
}

int PD_API(inverse_dynamics)(const double *q, const double *qdot, const double *qddot, const double *params,
                             const double *stress, double *tau_a) {
  int nv = PD_NV, na = PD_N_ACTUATED;
  double phi[PD_M + 1], jac[PD_M * PD_NV + 1];
  double rhs[2 * (PD_NV + PD_M) + 1], out[2 * PD_N_ACTUATED + 1];
  int n = (na + PD_M == nv) ? nv : nv + PD_M;
  memset(rhs, 0, sizeof(double) * 2 * n);
  PD_API(tree_torques)(q, qdot, qddot, params, rhs);
  pd_closure_eval(q, phi, jac);
  int nrhs = 1;
  if (stress && PD_N_ACTUATED > PD_N_TASK) {
    nrhs = 2;
    for (int i = 0; i < na; ++i) rhs[n + pd_actuated[i]] = stress[i];
  }
  int status = pd_actuation_solve(jac, rhs, nrhs, out);
  if (status) return status;
  for (int i = 0; i < na; ++i) tau_a[i] = out[i] + (nrhs == 2 ? stress[i] - out[na + i] : 0.0);
  return PD_STATUS_OK;
}

int PD_API(project)(const double *q, const double *tau, double *tau_star) {
  int n = (PD_N_ACTUATED + PD_M == PD_NV) ? PD_NV : PD_NV + PD_M;
  double phi[PD_M + 1], jac[PD_M * PD_NV + 1], rhs[PD_NV + PD_M + 1];
  memset(rhs, 0, sizeof(double) * n);
  for (int i = 0; i < PD_N_ACTUATED; ++i) rhs[pd_actuated[i]] = tau[i];
  pd_closure_eval(q, phi, jac);
  return pd_actuation_solve(jac, rhs, 1, tau_star);
}

/* The given coordinates of a problem (PARDYN_INVERSE: task, PARDYN_FORWARD: actuated, _SENSED: measured). */
static int pd_given(int problem, const int **given) {
  if (problem == PARDYN_INVERSE) { *given = pd_task; return PD_N_TASK; }
  if (problem == PARDYN_FORWARD) { *given = pd_actuated; return PD_N_ACTUATED; }
  if (problem == PARDYN_FORWARD_SENSED) { *given = pd_measured; return PD_N_MEASURED; }
  return -1;
}

/* Joint velocities and accelerations of a closed configuration from those of the given coordinates
 * (eqs. 9-10, 21-24 of Briot et al. 2015 in generic form):
 *   K qdot = 0,  K qddot + Kdot qdot = 0,  qdot[given] = rates, qddot[given] = accelerations     (square)
 * or, with more given coordinates than degrees of freedom, the least-squares fit on those constraints
 * (the KKT system of the Newton step). velocity_map (NV x n_given, column-major; square only, may be
 * NULL): W with qdot = W rates. accelerations and qddot may be NULL. */
int PD_API(states)(int problem, const double *q, const double *rates, const double *accelerations,
                   double *qdot, double *qddot, double *velocity_map) {
  const int *given;
  int n_given = pd_given(problem, &given);
  int nv = PD_NV, m = PD_M;
  if (n_given < 0) return PD_STATUS_UNSUPPORTED;
  int dependent[PD_NV + 1], n_dep = 0, piv[PD_NV + PD_M + 1];
  char is_given[PD_NV + 1];
  memset(is_given, 0, sizeof is_given);
  for (int i = 0; i < n_given; ++i) is_given[given[i]] = 1;
  for (int i = 0; i < nv; ++i) if (!is_given[i]) dependent[n_dep++] = i;
  if (n_dep > m) return PD_STATUS_UNSUPPORTED;
  double phi[PD_M + 1], jac[PD_M * PD_NV + 1], drift[PD_M + 1];
  double matrix[(PD_NV + PD_M) * (PD_NV + PD_M) + 1];
  double rhs[(PD_NV + PD_M) * (PD_NV + 1) + 1];
  pd_closure_eval(q, phi, jac);
  int square = n_dep == m, n = square ? m : nv + m;
  if (square) {
    for (int j = 0; j < n_dep; ++j) memcpy(matrix + m * j, jac + m * dependent[j], sizeof(double) * m);
  } else {
    if (velocity_map) return PD_STATUS_UNSUPPORTED;
    memset(matrix, 0, sizeof(double) * n * n);
    for (int i = 0; i < n_given; ++i) matrix[given[i] + n * given[i]] = 1.0;
    for (int c = 0; c < nv; ++c) for (int r = 0; r < m; ++r) {
      matrix[(nv + r) + n * c] = jac[r + m * c];
      matrix[c + n * (nv + r)] = jac[r + m * c];
    }
  }
  if (pd_lu_factor(matrix, n, piv)) return PD_STATUS_SINGULAR;
  /* velocities (and W's columns: the responses to unit given rates) */
  int nrhs = 1 + (velocity_map ? n_given : 0);
  memset(rhs, 0, sizeof(double) * n * nrhs);
  if (square) {
    for (int r = 0; r < m; ++r) {
      double s = 0.0;
      for (int i = 0; i < n_given; ++i) s += jac[r + m * given[i]] * rates[i];
      rhs[r] = -s;
      if (velocity_map) for (int i = 0; i < n_given; ++i) rhs[r + n * (1 + i)] = -jac[r + m * given[i]];
    }
  } else {
    for (int i = 0; i < n_given; ++i) rhs[given[i]] = rates[i];
  }
  pd_lu_apply(matrix, n, piv, rhs, nrhs);
  if (square) {
    for (int i = 0; i < n_given; ++i) qdot[given[i]] = rates[i];
    for (int j = 0; j < n_dep; ++j) qdot[dependent[j]] = rhs[j];
    if (velocity_map) for (int c = 0; c < n_given; ++c) {
      double *column = velocity_map + nv * c;
      for (int i = 0; i < n_given; ++i) column[given[i]] = i == c ? 1.0 : 0.0;
      for (int j = 0; j < n_dep; ++j) column[dependent[j]] = rhs[j + n * (1 + c)];
    }
  } else {
    memcpy(qdot, rhs, sizeof(double) * nv);
  }
  if (!accelerations || !qddot) return PD_STATUS_OK;
  {
    const double *arg[2] = {q, qdot};
    double *res[1] = {drift};
    PD_DRIFT_FN(arg, res, 0, 0, 0);
  }
  memset(rhs, 0, sizeof(double) * n);
  if (square) {
    for (int r = 0; r < m; ++r) {
      double s = drift[r];
      for (int i = 0; i < n_given; ++i) s += jac[r + m * given[i]] * accelerations[i];
      rhs[r] = -s;
    }
  } else {
    for (int i = 0; i < n_given; ++i) rhs[given[i]] = accelerations[i];
    for (int r = 0; r < m; ++r) rhs[nv + r] = -drift[r];
  }
  pd_lu_apply(matrix, n, piv, rhs, 1);
  if (square) {
    for (int i = 0; i < n_given; ++i) qddot[given[i]] = accelerations[i];
    for (int j = 0; j < n_dep; ++j) qddot[dependent[j]] = rhs[j];
  } else {
    memcpy(qddot, rhs, sizeof(double) * nv);
  }
  return PD_STATUS_OK;
}

/* The joint regressor's structural nonzeros at one state (CSC of pd_regressor_colind/pd_regressor_row). */
static void pd_regressor_values(const double *q, const double *qdot, const double *qddot, const double *gravity,
                                double *values) {
  const double *arg[4] = {q, qdot, qddot, gravity};
  double *res[1] = {values};
  PD_REGRESSOR_FN(arg, res, 0, 0, 0);
}

int PD_API(joint_regressors)(int count, const double *q, const double *qdot, const double *qddot,
                             const double *gravity, double *out) {
  double values[PD_REGRESSOR_NNZ + 1];
  for (int k = 0; k < count; ++k) {
    double *y = out + (long)PD_NV * PD_N_INERTIAL * k;
    pd_regressor_values(q + PD_NV * k, qdot + PD_NV * k, qddot + PD_NV * k, gravity, values);
    memset(y, 0, sizeof(double) * PD_NV * PD_N_INERTIAL);
    for (int c = 0; c < PD_N_INERTIAL; ++c)
      for (int t = pd_regressor_colind[c]; t < pd_regressor_colind[c + 1]; ++t) y[pd_regressor_row[t] + PD_NV * c] = values[t];
  }
  return PD_STATUS_OK;
}

/* W_g (NV x n_given, column-major): qdot = W_g qdot[given] on K qdot = 0, for n_given = NV - M given joints
 * (K on the other joints square: one LU, n_given right-hand sides). */
static int pd_given_map(const double *jac, const int *given, int n_given, double *map) {
  int nv = PD_NV, m = PD_M, dependent[PD_NV + 1], n_dep = 0;
  char is_given[PD_NV + 1];
  double matrix[PD_M * PD_M + 1], rhs[PD_M * PD_NV + 1];
  memset(is_given, 0, sizeof is_given);
  for (int i = 0; i < n_given; ++i) is_given[given[i]] = 1;
  for (int i = 0; i < nv; ++i) if (!is_given[i]) dependent[n_dep++] = i;
  if (n_dep != m) return PD_STATUS_UNSUPPORTED;
  for (int j = 0; j < n_dep; ++j) memcpy(matrix + m * j, jac + m * dependent[j], sizeof(double) * m);
  for (int c = 0; c < n_given; ++c) for (int r = 0; r < m; ++r) rhs[r + m * c] = -jac[r + m * given[c]];
  if (pd_lu_solve(matrix, m, rhs, n_given)) return PD_STATUS_SINGULAR;
  for (int c = 0; c < n_given; ++c) {
    double *column = map + nv * c;
    for (int i = 0; i < n_given; ++i) column[given[i]] = i == c ? 1.0 : 0.0;
    for (int j = 0; j < n_dep; ++j) column[dependent[j]] = rhs[j + m * c];
  }
  return PD_STATUS_OK;
}

/* The identification model's observation matrices (pardyn.dynamics.regressor.Regressor.equations), state by state:
 *   V = W_left^T (N_TASK x NV), W_left the velocity map from the rates of the joints layout->left (= P W^T with
 *   W the task velocity map and P = J_1^-T, J_1 = W[left]: the task joints give P = I), then V Y_t on the joint
 *   regressor's nonzeros only, B's columns, the drive columns V[:, j] [qddot_j, qdot_j, sign(qdot_j), 1] (eq. 5),
 *   and measured = P J^T tau = V[:, actuated] tau. */
int PD_API(observations)(int count, const double *q, const double *qdot, const double *qddot,
                         const pardyn_observation_layout *layout, const double *torques, double *out, double *measured) {
  enum { NT = PD_N_TASK };
  const int nv = PD_NV, n_cols = layout->n_body + 4 * layout->n_drive;
  double phi[PD_M + 1], jac[PD_M * PD_NV + 1], w[PD_NV * PD_N_TASK + 1], v[PD_N_TASK * PD_NV + 1];
  double values[PD_REGRESSOR_NNZ + 1], projected[PD_N_TASK * PD_N_INERTIAL + 1];
  for (int k = 0; k < count; ++k) {
    const double *qk = q + nv * k, *qdk = qdot + nv * k, *qddk = qddot + nv * k;
    pd_closure_eval(qk, phi, jac);
    int status = pd_given_map(jac, layout->left, NT, w);
    if (status) return status;
    for (int i = 0; i < nv; ++i) for (int r = 0; r < NT; ++r) v[r + NT * i] = w[i + nv * r]; /* W_left^T */
    if (measured && torques) {
      for (int r = 0; r < NT; ++r) {
        double s = 0.0;
        for (int a = 0; a < PD_N_ACTUATED; ++a) s += v[r + NT * pd_actuated[a]] * torques[PD_N_ACTUATED * k + a];
        measured[NT * k + r] = s; /* P J^T tau, eqs. (30), (36) */
      }
    }
    pd_regressor_values(qk, qdk, qddk, layout->gravity, values);
    memset(projected, 0, sizeof(double) * NT * PD_N_INERTIAL);
    for (int c = 0; c < PD_N_INERTIAL; ++c) {
      double *column = projected + NT * c;
      for (int t = pd_regressor_colind[c]; t < pd_regressor_colind[c + 1]; ++t) {
        const double *row = v + NT * pd_regressor_row[t];
        double y = values[t];
        for (int r = 0; r < NT; ++r) column[r] += row[r] * y;
      }
    }
    double *o = out + (long)NT * n_cols * k;
    for (int c = 0; c < layout->n_body; ++c) {
      double column[PD_N_TASK + 1];
      memset(column, 0, sizeof column);
      for (int t = layout->body_start[c]; t < layout->body_start[c + 1]; ++t) {
        const double *source = projected + NT * layout->body_source[t];
        double b = layout->body_value[t];
        if (b == 1.0) for (int r = 0; r < NT; ++r) column[r] += source[r];
        else for (int r = 0; r < NT; ++r) column[r] += source[r] * b;
      }
      for (int r = 0; r < NT; ++r) o[n_cols * r + c] = column[r];
    }
    for (int d = 0; d < layout->n_drive; ++d) {
      int j = layout->drive[d];
      double rate = qdk[j];
      double terms[4] = {qddk[j], rate, rate > 0.0 ? 1.0 : (rate < 0.0 ? -1.0 : rate), 1.0};
      for (int r = 0; r < NT; ++r) {
        double *cell = o + n_cols * r + layout->n_body + 4 * d;
        for (int e = 0; e < 4; ++e) cell[e] = v[r + NT * j] * terms[e];
      }
    }
  }
  return PD_STATUS_OK;
}

/* The closed-loop states of a recorded series, sample by sample as pardyn.identification.preparation's
 * closed_loop_states: Newton from the previous sample's second-order prediction q + h qdot + h^2/2 qddot (the first
 * from start), the branch and conditioning checked on samples i % check_every == 0, then qdot and qddot from the
 * given joints' rates and accelerations (PD_API(states)). readings, rates, accelerations: N x n_given row-major of the
 * problem's given joints; q, qdot, qddot: N x NV. Returns the number of samples solved in the plain case; info then
 * holds the next sample's status (pardyn's Python path takes over from that sample). */
int PD_API(series)(int problem, int count, const double *readings, const double *rates, const double *accelerations,
                   const double *start, double step, int check_every, double *q, double *qdot, double *qddot,
                   pardyn_info *info) {
  const int *given;
  int n_given = pd_given(problem, &given);
  if (n_given < 0 || check_every < 1) { info->status = PD_STATUS_UNSUPPORTED; return 0; }
  double guess[PD_NV + 1], half = 0.5 * (step * step);
  for (int i = 0; i < count; ++i) {
    double *qi = q + PD_NV * i, *qdi = qdot + PD_NV * i, *qddi = qddot + PD_NV * i;
    if (i == 0) memcpy(guess, start, sizeof(double) * PD_NV);
    else for (int j = 0; j < PD_NV; ++j) guess[j] = (qi[j - PD_NV] + step * qdi[j - PD_NV]) + half * qddi[j - PD_NV];
    if (PD_API(solve)(problem, readings + n_given * i, guess, i % check_every == 0, qi, info)) return i;
    int status = PD_API(states)(problem, qi, rates + n_given * i, accelerations + n_given * i, qdi, qddi, NULL);
    if (status) { info->status = status; return i; }
  }
  info->status = PD_STATUS_OK;
  return count;
}

void PD_API(nominal_parameters)(double *params) {
  memcpy(params, pd_nominal, sizeof(double) * PD_N_PARAMS);
}
