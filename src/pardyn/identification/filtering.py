"""Signal processing of identification data: derivatives, parallel filtering, decimation.

Two steps of the identification recipe (Briot et al. 2015 Sect. 4.1; UR5e paper
Sects. 4.1-4.2), both zero-phase low-pass Butterworth filters run forward and
backward (no lag):

1. **Band-pass derivative filtering** (:func:`estimate_derivatives`): the
   measured positions ``q`` are low-pass filtered (order 4, forward-backward,
   ``scipy.signal.butter`` + ``sosfiltfilt``) and differentiated by central
   differences, giving ``(q_hat, qdot_hat, qddot_hat)`` of eq. (39). The cut-off
   frequency is a multiple of the dynamics bandwidth: the UR5e paper (Sect. 4.1)
   takes 5 times the frequency of the robot dynamics; Briot et al. refer to
   Gautier's rules of thumb ([27]) of a cut-off "a few times" the bandwidth
   (:func:`cutoff_from_bandwidth`, ``factor=5`` by default).

2. **Parallel filtering and decimation** (:func:`decimate`): the measured
   inputs ``Y`` and *every column* of the observation matrix ``W`` go through the
   same zero-phase low-pass filter, cut-off ``0.8 f_m / (2 n_d)`` (Sect. 4.1,
   below eq. 39: ``omega_fp = 2 pi 0.8 f_m / (2 n_d)``), then one sample in
   ``n_d`` is kept. The filter is linear and identical for ``Y`` and ``W``, so
   ``Y = W chi`` (eq. 39) stays exact after decimation (eq. 40), while the
   torque ripple above the model's bandwidth is removed. The output is ordered
   equation by equation (all samples of equation 1, then equation 2, ...), as
   eq. (48) needs.

The decimation filter is the forward-backward Butterworth filter of
``scipy.signal.sosfiltfilt`` (odd-extension padding, steady-state initial
conditions), evaluated only at the kept samples: the state-space recursion is
advanced one decimation block at a time (block input terms are one matrix
product over all columns), which makes filtering 480 000 equations x 60
columns take a fraction of a second. ``test_filtering.py`` checks it against
``sosfiltfilt`` itself.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from pardyn.errors import InputError
from pardyn.identification.least_squares import LinearSystem

__all__ = [
    "Derivatives",
    "check_uniform_sampling",
    "cutoff_from_bandwidth",
    "decimation_cutoff_hz",
    "estimate_derivatives",
    "savgol_weights",
    "zero_phase_lowpass",
    "decimate",
    "stack_equations",
]

DEFAULT_ORDER = 4
"""Butterworth order of both filters (UR5e paper Sects. 4.1-4.2)."""

DEFAULT_BANDWIDTH_FACTOR = 5.0
"""Cut-off of the position filter / dynamics bandwidth (UR5e paper Sect. 4.1)."""

DEFAULT_DECIMATION_RATIO = 0.8
"""``omega_fp = 2 pi ratio f_m / (2 n_d)`` (Briot et al. 2015, Sect. 4.1)."""


class Derivatives(NamedTuple):
    """Filtered positions and their first two time derivatives, each shaped like ``q``."""

    q: np.ndarray  # (samples, n) or (samples,), rad or m
    qdot: np.ndarray  # rad/s or m/s
    qddot: np.ndarray  # rad/s^2 or m/s^2


def check_uniform_sampling(t: np.ndarray, *, rtol: float = 1e-3, where: str = "time stamps") -> float:
    """Sampling period (s) of strictly uniform time stamps ``t`` (samples,).

    Every interval must be within ``rtol`` (relative) of the mean period
    ``(t[-1] - t[0]) / (samples - 1)``; otherwise :class:`InputError` names the
    first offending sample, its time and interval (resample the data first).
    """
    t = np.asarray(t, dtype=float)
    if t.ndim != 1 or t.size < 2:
        raise InputError(f"{where}: need a 1-D array of at least 2 time stamps, got shape {t.shape}")
    if not np.all(np.isfinite(t)):
        k = int(np.flatnonzero(~np.isfinite(t))[0])
        raise InputError(f"{where}: sample {k} has a non-finite time stamp {t[k]}")
    period = (t[-1] - t[0]) / (t.size - 1)
    if not period > 0.0:
        raise InputError(f"{where}: time does not increase (t[0] = {t[0]!r} s, t[-1] = {t[-1]!r} s)")
    intervals = np.diff(t)
    bad = np.flatnonzero(np.abs(intervals - period) > rtol * period)
    if bad.size:
        k = int(bad[0]) + 1
        raise InputError(
            f"{where}: not uniformly sampled: sample {k} at t = {t[k]:.9g} s comes "
            f"{intervals[k - 1]:.6g} s after sample {k - 1}, the mean period is {period:.6g} s "
            f"(relative tolerance {rtol:g}; {bad.size} irregular interval(s)); resample the data first"
        )
    return float(period)


def cutoff_from_bandwidth(bandwidth_hz: float, *, factor: float = DEFAULT_BANDWIDTH_FACTOR) -> float:
    """Cut-off frequency (Hz) of the position filter: ``factor`` x the dynamics bandwidth.

    UR5e paper Sect. 4.1: "the cutoff frequency of the filter is chosen to be 5
    times the frequency of the robot dynamics"; Briot et al. (Sect. 4.1, [27])
    leave it to Gautier's rule of thumb of a few times the bandwidth.
    """
    if not (bandwidth_hz > 0.0 and math.isfinite(bandwidth_hz)):
        raise InputError(f"dynamics bandwidth must be a positive frequency in Hz, got {bandwidth_hz!r}")
    if not factor > 0.0:
        raise InputError(f"bandwidth factor must be positive, got {factor!r}")
    return float(factor * bandwidth_hz)


def decimation_cutoff_hz(
    sample_rate_hz: float, *, factor: int, ratio: float = DEFAULT_DECIMATION_RATIO
) -> float:
    """Cut-off (Hz) of the parallel decimation filter: ``ratio f_m / (2 n_d)`` (Sect. 4.1)."""
    return float(ratio * sample_rate_hz / (2.0 * factor))


def _butter_sos(order: int, normalized_cutoff: float, *, what: str) -> np.ndarray:
    """Low-pass Butterworth sections; ``normalized_cutoff`` in units of the Nyquist frequency."""
    if not (isinstance(order, (int, np.integer)) and order >= 1):
        raise InputError(f"{what}: filter order must be a positive integer, got {order!r}")
    if not 0.0 < normalized_cutoff < 1.0:
        raise InputError(
            f"{what}: cut-off must lie strictly between 0 and the Nyquist frequency, "
            f"got {normalized_cutoff:g} x Nyquist"
        )
    from scipy import signal  # noqa: PLC0415 - scipy.signal costs ~1 s to import; a node that never filters skips it

    return signal.butter(int(order), normalized_cutoff, btype="low", output="sos")


def zero_phase_lowpass(
    x: np.ndarray,
    *,
    sample_rate_hz: float,
    cutoff_hz: float,
    order: int = DEFAULT_ORDER,
    padlen: int | None = None,
) -> np.ndarray:
    """Zero-phase low-pass Butterworth filter of ``x`` along axis 0 (time), same shape.

    ``scipy.signal.sosfiltfilt``: forward then backward pass (no lag, magnitude
    response squared), odd extension of ``padlen`` samples at both ends
    (default ``min(samples - 1, 3 * sample_rate_hz / cutoff_hz)``, three periods
    of the cut-off, which keeps the start-up transient out of the data).
    """
    x = np.asarray(x, dtype=float)
    sos = _butter_sos(order, 2.0 * cutoff_hz / sample_rate_hz, what="zero-phase low-pass")
    samples = x.shape[0]
    if padlen is None:
        padlen = min(samples - 1, int(math.ceil(3.0 * sample_rate_hz / cutoff_hz)))
    from scipy import signal  # noqa: PLC0415 - see butter_sos

    return signal.sosfiltfilt(sos, x, axis=0, padtype="odd", padlen=int(padlen))


def savgol_weights(length: int, order: int, *, derivative: int = 0, period: float = 1.0,
                   position: int | None = None) -> np.ndarray:
    """Savitzky-Golay weights (length,) whose dot product with ``length`` samples (oldest first) is the
    ``derivative``-th derivative, at sample ``position`` (default: the centre), of their least-squares polynomial
    of degree ``order``; samples ``period`` s apart.

    ``scipy.signal.savgol_coeffs(length, order, deriv=derivative, delta=period, pos=position, use="dot")``
    computed by numpy (equal to rounding): ``scipy.signal`` costs ~1 s to import, the online identifier's start.
    """
    if not 0 <= order < length or derivative < 0:
        raise InputError(f"0 <= order < length and derivative >= 0 expected, got {order}, {length}, {derivative}")
    at = (length - 1) / 2.0 if position is None else float(position)
    if not 0 <= at < length:
        raise InputError(f"position in [0, {length}) expected, got {position}")
    if derivative > order:
        return np.zeros(length)
    x = np.arange(-at, length - at, dtype=float)
    design = x ** np.arange(order + 1, dtype=float).reshape(-1, 1)  # (order + 1, length): powers of the offsets
    target = np.zeros(order + 1)
    target[derivative] = math.factorial(derivative) / period**derivative
    return np.linalg.lstsq(design, target, rcond=None)[0]


def _central_differences(x: np.ndarray, period: float) -> tuple[np.ndarray, np.ndarray]:
    """First and second derivatives by 3-point central differences along axis 0.

    Interior: ``(x[k+1] - x[k-1]) / 2h`` and ``(x[k+1] - 2 x[k] + x[k-1]) / h^2``;
    end points: second-order one-sided formulas.
    """
    first = np.gradient(x, period, axis=0, edge_order=2)
    second = np.empty_like(x)
    second[1:-1] = (x[2:] - 2.0 * x[1:-1] + x[:-2]) / period**2
    second[0] = (2.0 * x[0] - 5.0 * x[1] + 4.0 * x[2] - x[3]) / period**2
    second[-1] = (2.0 * x[-1] - 5.0 * x[-2] + 4.0 * x[-3] - x[-4]) / period**2
    return first, second


def estimate_derivatives(
    t: np.ndarray,
    q: np.ndarray,
    *,
    cutoff_hz: float,
    order: int = DEFAULT_ORDER,
    padlen: int | None = None,
    rtol: float = 1e-3,
) -> Derivatives:
    """Band-pass estimates ``(q_hat, qdot_hat, qddot_hat)`` of eq. (39) from sampled positions.

    Zero-phase low-pass Butterworth of order ``order`` (forward-backward, see
    :func:`zero_phase_lowpass`) of the positions, then central differences for
    velocity and acceleration (UR5e paper Sect. 4.1; Briot et al. Sect. 4.1).

    Args:
        t: uniformly spaced time stamps (samples,), s (checked, see
            :func:`check_uniform_sampling` and ``rtol``).
        q: positions (samples,) or (samples, n): rad or m.
        cutoff_hz: cut-off frequency, below the Nyquist frequency
            (e.g. :func:`cutoff_from_bandwidth`).
        order: Butterworth order (the magnitude response is squared by the two passes).
        padlen: odd-extension length (samples) at each end, see :func:`zero_phase_lowpass`.
        rtol: tolerance of the uniform-sampling check.

    Returns:
        :class:`Derivatives`, arrays shaped like ``q``. Edge effects: the odd
        extension preserves the end values and slopes but not the curvature,
        so accelerations are wrong near both ends (a sum of sinusoids at 1 kHz,
        15 Hz cut-off: 12 % at the end sample, 0.4 % after 50 ms, < 0.1 % after
        100 ms); discard about ``1.5 / cutoff_hz`` seconds at both ends.
    """
    period = check_uniform_sampling(t, rtol=rtol)
    q = np.asarray(q, dtype=float)
    if q.shape[:1] != np.shape(t):
        raise InputError(f"positions have {q.shape[0] if q.ndim else 0} samples, time stamps {np.size(t)}")
    if q.shape[0] < 8:
        raise InputError(f"need at least 8 samples to filter and differentiate, got {q.shape[0]}")
    if not np.all(np.isfinite(q)):
        k = int(np.argwhere(~np.isfinite(q))[0][0])
        raise InputError(f"positions: sample {k} (t = {np.asarray(t)[k]:.9g} s) is not finite")
    filtered = zero_phase_lowpass(q, sample_rate_hz=1.0 / period, cutoff_hz=cutoff_hz, order=order, padlen=padlen)
    qdot, qddot = _central_differences(filtered, period)
    return Derivatives(filtered, qdot, qddot)


# --------------------------------------------------------------------------------------
# Parallel filtering and decimation (eqs. 39-40)
# --------------------------------------------------------------------------------------


def _cascade_state_space(sos: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """State-space ``(A, B, C, D)`` of cascaded second-order sections.

    Each section ``(b0 + b1 z^-1 + b2 z^-2) / (1 + a1 z^-1 + a2 z^-2)`` in
    controller form, chained in series: ``s+ = A s + B u``, ``y = C s + D u``.
    """
    a_mat = np.zeros((0, 0))
    b_vec = np.zeros(0)
    c_vec = np.zeros(0)
    d = 1.0
    for b0, b1, b2, a0, a1, a2 in sos:
        b0, b1, b2, a1, a2 = b0 / a0, b1 / a0, b2 / a0, a1 / a0, a2 / a0
        a_sec = np.array([[-a1, -a2], [1.0, 0.0]])
        b_sec = np.array([1.0, 0.0])
        c_sec = np.array([b1 - b0 * a1, b2 - b0 * a2])
        n = a_mat.shape[0]
        a_new = np.zeros((n + 2, n + 2))
        a_new[:n, :n] = a_mat
        a_new[n:, :n] = np.outer(b_sec, c_vec)
        a_new[n:, n:] = a_sec
        b_vec = np.concatenate([b_vec, b_sec * d])
        c_vec = np.concatenate([b0 * c_vec, c_sec])
        d = b0 * d
        a_mat = a_new
    return a_mat, b_vec, c_vec, d


class _BlockFilter:
    """Forward-backward filter ``(A, B, C, D)`` evaluated every ``L`` samples.

    With ``s_m`` the forward state before sample ``mL`` and ``u_m`` the ``L``
    inputs of block ``m``: ``s_{m+1} = A^L s_m + G u_m`` and, inside the block,
    ``y_f = O s_m + T u_m`` (``O`` rows ``C A^j``, ``T`` the Toeplitz matrix of
    the impulse response). The backward pass (state ``r_k`` before processing
    sample ``k`` in reverse time, ``r_{k-1} = A r_k + B y_f[k]``) then obeys,
    with ``R_m = r_{(m+1)L-1}``:

        r_{mL}  = A^(L-1) R_m + E O s_m + E T u_m,   E[:, j] = A^(j-1) B (j >= 1), E[:, 0] = 0
        z[mL]   = C r_{mL} + D y_f[mL]
        R_{m-1} = A r_{mL} + B y_f[mL]
    """

    def __init__(self, sos: np.ndarray, block: int) -> None:
        a, b, c, d = _cascade_state_space(sos)
        n = a.shape[0]
        powers = [np.eye(n)]
        for _ in range(block):
            powers.append(a @ powers[-1])
        g = np.column_stack([powers[block - 1 - j] @ b for j in range(block)])  # (n, L)
        o = np.vstack([c @ powers[j] for j in range(block)])  # (L, n)
        impulse = np.array([d] + [c @ powers[k] @ b for k in range(block - 1)])  # (L,)
        toeplitz = np.zeros((block, block))
        for j in range(block):
            toeplitz[j, : j + 1] = impulse[j::-1]
        e = np.zeros((n, block))
        for j in range(1, block):
            e[:, j] = powers[j - 1] @ b
        self.n, self.block = n, block
        self.a, self.b, self.c, self.d = a, b, c, d
        self.a_block = powers[block]  # A^L
        self.a_back = powers[block - 1]  # A^(L-1)
        self.eo = e @ o  # (n, n)
        self.inputs = np.vstack([g, e @ toeplitz])  # (2n, L)
        self.last_row_o = o[-1]
        self.last_row_t = toeplitz[-1]
        self.steady = np.linalg.solve(np.eye(n) - a, b)  # state for a unit constant input

    def run(self, signals: Sequence[Sequence[np.ndarray]], first_block: int, outputs: int) -> np.ndarray:
        """Filter padded signals given as consecutive block segments, each (blocks, L, cols_i).

        ``signals`` lists several signals (same blocks, any columns) filtered
        together. Returns the forward-backward output at samples
        ``(first_block + i) L``, ``i = 0 .. outputs-1``, shape (outputs, sum cols_i).
        """
        n = self.n
        total = sum(seg.shape[0] for seg in signals[0])
        widths = [segments[0].shape[2] for segments in signals]
        cols = sum(widths)
        terms = np.empty((total, 2 * n, cols))  # block input terms [G u_m ; E T u_m]
        firsts = np.empty((total, cols))  # u at the first sample of each block
        last = np.empty((self.block, cols))  # inputs of the last block
        c0 = 0
        for segments, width in zip(signals, widths):
            start = 0
            for seg in segments:
                stop = start + seg.shape[0]
                np.matmul(self.inputs, seg, out=terms[start:stop, :, c0 : c0 + width])
                firsts[start:stop, c0 : c0 + width] = seg[:, 0, :]
                start = stop
            last[:, c0 : c0 + width] = segments[-1][-1]
            c0 += width
        # forward pass over blocks, steady-state initial condition (as sosfiltfilt)
        states = np.empty((total, n, cols))
        states[0] = np.outer(self.steady, firsts[0])
        a_block = self.a_block
        for m in range(total - 1):
            np.matmul(a_block, states[m], out=states[m + 1])
            states[m + 1] += terms[m, :n]
        y_last = self.last_row_o @ states[-1] + self.last_row_t @ last
        # backward pass, R_m = r_{(m+1)L-1} from the last block down to the first output block:
        #   r_{mL} = A^(L-1) R_m + c_m,  c_m = E O s_m + E T u_m
        #   R_{m-1} = A r_{mL} + B y_f[mL] = A^L R_m + (A c_m + B y_f[mL])
        s_out = states[first_block:]
        y_first = self.c @ s_out + self.d * firsts[first_block:]  # y_f[mL], (k, cols)
        coupling = np.matmul(self.eo, s_out)
        coupling += terms[first_block:, n:]
        drive = np.matmul(self.a, coupling)
        drive += self.b[None, :, None] * y_first[:, None, :]
        count = total - first_block
        back = np.empty((count, n, cols))  # R_m
        back[-1] = np.outer(self.steady, y_last)
        for i in range(count - 1, 0, -1):
            np.matmul(a_block, back[i], out=back[i - 1])
            back[i - 1] += drive[i]
        r = np.matmul(self.a_back, back[:outputs])
        r += coupling[:outputs]
        return self.c @ r + self.d * y_first[:outputs]  # z[mL] = C r_{mL} + D y_f[mL]


def _odd_extension(x: np.ndarray, left: int, right: int) -> tuple[np.ndarray, np.ndarray]:
    """Odd extensions (as ``scipy.signal`` ``padtype='odd'``) before and after ``x`` along axis 0."""
    before = 2.0 * x[0] - x[left:0:-1]
    after = 2.0 * x[-1] - x[-2 : -(right + 2) : -1]
    return before, after


def _as_equations(y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(y, dtype=float)
    w = np.asarray(w, dtype=float)
    if y.ndim == 1:
        y = y[:, None]
    if w.ndim == 2:
        w = w[:, None, :]
    if y.ndim != 2 or w.ndim != 3:
        raise InputError(
            f"Y must be (samples,) or (samples, rows) and W (samples, n_params) or "
            f"(samples, rows, n_params); got Y {y.shape}, W {w.shape}"
        )
    if y.shape != w.shape[:2]:
        raise InputError(f"Y {y.shape} and W {w.shape} disagree on (samples, rows)")
    return y, w


def stack_equations(
    Y: np.ndarray, W: np.ndarray, *, names: Sequence[str] | None = None
) -> LinearSystem:
    """Order equations block by block without filtering (eq. 48 layout).

    ``Y`` (samples, rows), ``W`` (samples, rows, n_params) -> ``Y`` (rows*samples,),
    ``W`` (rows*samples, n_params): all samples of row 1, then row 2, ...
    """
    y, w = _as_equations(Y, W)
    samples, rows, params = w.shape
    return LinearSystem(
        W=np.ascontiguousarray(w.transpose(1, 0, 2)).reshape(rows * samples, params),
        Y=np.ascontiguousarray(y.T).reshape(-1),
        block_sizes=(samples,) * rows,
        names=None if names is None else tuple(names),
    )


def decimate(
    Y: np.ndarray,
    W: np.ndarray,
    *,
    factor: int,
    order: int = DEFAULT_ORDER,
    cutoff_ratio: float = DEFAULT_DECIMATION_RATIO,
    padlen: int | None = None,
    names: Sequence[str] | None = None,
) -> LinearSystem:
    """Parallel filtering and decimation of ``Y`` and every column of ``W`` (eqs. 39-40).

    Each equation row is filtered along time by the same zero-phase low-pass
    Butterworth filter (order ``order``, forward-backward, cut-off
    ``cutoff_ratio * f_m / (2 n_d)``, i.e. ``cutoff_ratio / n_d`` times the
    Nyquist frequency, Sect. 4.1), then samples ``0, n_d, 2 n_d, ...`` are kept.
    The result equals ``scipy.signal.sosfiltfilt`` with ``padtype='odd'`` and
    ``padlen`` samples of padding, decimated; the filter being linear and
    identical for all signals, ``Y = W chi`` holds exactly after decimation.
    As with any ``filtfilt``, the few samples closest to both ends keep part of
    a ripple whose value at the end point is not zero (the odd extension turns
    it into a step); the relation ``Y = W chi`` is exact there as well.

    Args:
        Y: measured inputs (samples,) or (samples, rows), one column per equation row.
        W: observation matrix (samples, n_params) or (samples, rows, n_params).
        factor: decimation factor ``n_d`` >= 1 (``1`` filters at 0.8 x Nyquist
            and keeps every sample).
        order: Butterworth order.
        cutoff_ratio: the 0.8 of ``0.8 f_m / (2 n_d)``.
        padlen: odd-extension length (samples) at each end; default
            ``3 n_d (order + 1)``; the start is rounded up to whole blocks, the end
            to complete the last block; at most ``samples - 1``. ``0``: no padding.
        names: parameter names carried to the result (n_params,).

    Returns:
        :class:`~pardyn.identification.least_squares.LinearSystem` ordered row by
        row (eq. 48): ``Y`` (rows*k,), ``W`` (rows*k, n_params), ``block_sizes``
        ``(k,) * rows`` with ``k = ceil(samples / n_d)``.
    """
    y, w = _as_equations(Y, W)
    samples, rows, params = w.shape
    if not (isinstance(factor, (int, np.integer)) and factor >= 1):
        raise InputError(f"decimation factor must be a positive integer, got {factor!r}")
    factor = int(factor)
    if not 0.0 < cutoff_ratio <= 1.0:
        raise InputError(f"cutoff_ratio must lie in (0, 1], got {cutoff_ratio!r}")
    sos = _butter_sos(order, cutoff_ratio / factor, what=f"decimation by {factor}")
    if samples < 2 * factor + 1:
        raise InputError(f"need more than {2 * factor} samples to decimate by {factor}, got {samples}")
    if names is not None and len(names) != params:
        raise InputError(f"{len(names)} parameter names for {params} columns of W")

    if padlen is None:
        padlen = 3 * factor * (int(order) + 1)
    left = min(int(math.ceil(padlen / factor)) * factor, (samples - 1) // factor * factor)
    tail = samples % factor
    right = padlen
    right += (-(tail + right)) % factor
    while right > samples - 1:
        right -= factor
    if padlen < 0 or right < 0:
        raise InputError(f"too few samples ({samples}) for the padding of a decimation by {factor}")

    whole = samples - tail
    outputs = -(-samples // factor)
    flat_w = w.reshape(samples, rows * params)
    signals = []
    for data in (y, flat_w):
        cols = data.shape[1]
        before, after = _odd_extension(data, left, right)
        segments = [before.reshape(-1, factor, cols), data[:whole].reshape(-1, factor, cols)]
        if tail or right:
            segments.append(np.concatenate([data[whole:], after]).reshape(-1, factor, cols))
        signals.append(segments)
    filtered = _BlockFilter(sos, factor).run(signals, left // factor, outputs)  # (k, rows * (1 + params))
    y_dec = filtered[:, :rows]
    w_dec = filtered[:, rows:].reshape(outputs, rows, params)
    return stack_equations(y_dec, w_dec, names=names)
