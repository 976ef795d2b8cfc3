"""LambdaRank gradients: a kernel for one list and a parallel loop over lists.

For a pair (i, j) of one list with l_i > l_j, d = s_i - s_j and weight |dM_ij|
(``_deltas.delta``, optionally divided by eps + |d|):

    rho     = 1 / (1 + exp(sigma * d))
    g_i    -= sigma * |dM| * rho            g_j += sigma * |dM| * rho
    h_i, h_j += sigma**2 * |dM| * max(rho * (1 - rho), 1e-16)   (hessian="lightgbm")
             or 2 * |dM| * max(rho * (1 - rho), 1e-16)            (hessian="xgboost")

rho and rho (1 - rho) are formed from e_r = exp(sigma (s_r - s_0)) without an exp per
pair and without cancellation (see ``list_gradients``).  Pairs are the pairs of
different labels with at least one member in the current top ``trunc`` positions (all pairs when ``trunc <= 0``); the current ranking is a stable
descending sort of the scores, so tied scores keep their input order (as LightGBM and
XGBoost).  With list normalisation the list's g and h are multiplied by
log2(1 + S) / S, S = sum over pairs of 2 * sigma * |dM| * rho.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ..bounds import grid_interp
from ._deltas import CASCADE, FIRST, N_ROWS, PREFIX, PRODUCT, delta, linear_delta, list_value, prepare, rr_delta
from ._stack import STACK_DOUBLES, stack_copy

HESS_LIGHTGBM, HESS_XGBOOST = 0, 1
BOUND_NONE, BOUND_LINEAR, BOUND_DIST = 0, 1, 2
_TABLE_BINS = 1024 * 1024


@njit(cache=True)
def _rho(d, sigma, table):
    """(rho, rho * (1 - rho)) with rho = 1 / (1 + exp(sigma * d)).

    Exact mode evaluates rho (1 - rho) = e / (1 + e)**2 without cancellation, so a badly
    mis-ordered pair keeps a positive hessian while its gradient is largest.  Table mode
    reproduces LightGBM's 2**20-bin lookup table and its rho * (1 - rho).
    """
    if table:
        lo = -50.0 / sigma / 2.0
        factor = _TABLE_BINS / (-2.0 * lo)
        if d <= lo:
            x = lo
        elif d >= -lo:
            x = (_TABLE_BINS - 1) / factor + lo
        else:
            x = int((d - lo) * factor) / factor + lo
        rho = 1.0 / (1.0 + math.exp(x * sigma))
        return rho, rho * (1.0 - rho)
    x = sigma * d
    if x >= 0.0:
        e = math.exp(-x)
        rho = e / (1.0 + e)
        return rho, rho / (1.0 + e)
    e = math.exp(x)
    rho = 1.0 / (1.0 + e)
    return rho, e * rho * rho


@njit(cache=True, inline="always")
def distribution_setup(cdf, x0, x1, m):
    """(c, u, F~(M)) for ``distribution_delta``: c grid steps per unit of the metric and
    u the grid coordinate of the list's current value M in its table row ``cdf`` over
    [x0, x1] (``x1 > x0``: a degenerate list has no gradient)."""
    c = (cdf.shape[0] - 1) / (x1 - x0)
    u = (m - x0) * c
    return c, u, grid_interp(cdf, u)


@njit(cache=True)
def distribution_delta(dm, rises, cdf, c, u, fm):
    """|F~(M +- dm) - F~(M)|: the change of the distribution-bounded metric when a swap
    changes M by dm (up when ``rises``: the higher label moves up); ``fm`` = F~(M) and
    (c, u) from ``distribution_setup``, so that dm = 0 gives exactly 0."""
    return abs(grid_interp(cdf, u + (dm * c if rises else -dm * c)) - fm)


@njit(cache=True, error_model="numpy")
def _pair_terms(dm, d, e_hi, e_lo, sigma, by_score, eps, hess_mode, per_pair_exp, table,
                dist, rises, cdf, c, u, fm, one_div=False):
    """(lambda, hessian) of one pair with |dM| = dm and score difference d = s_hi - s_lo.
    With the distribution map the weight is |F~(M +- dm) - F~(M)|, the change of the
    bounded metric (``rises``: the swap moves the higher label up, so M increases).

    ``one_div`` (score normalisation, e-ratios, scores spanning < 300 / sigma so that
    S**2 cannot underflow): with S = e_hi + e_lo and W = eps + |d| one reciprocal
    t = 1 / (S**2 W) gives lambda = sigma dm e_lo S t and
    h = sigma**2 dm max(e_lo e_hi, 1e-16 S**2) t, the same values as below."""
    if one_div:
        S = e_hi + e_lo
        t = 1.0 / (S * S * (eps + abs(d)))
        lam = sigma * dm * e_lo * S * t
        hq = max(e_lo * e_hi, 1e-16 * S * S) * t
        if hess_mode == HESS_LIGHTGBM:
            return lam, sigma * sigma * dm * hq
        return lam, 2.0 * dm * hq
    if dist:
        dm = distribution_delta(dm, rises, cdf, c, u, fm)
    if by_score:
        dm = dm / (eps + abs(d))
    if per_pair_exp:
        rho, q = _rho(d, sigma, table)
    else:
        inv = 1.0 / (e_hi + e_lo)
        rho = e_lo * inv
        q = rho * e_hi * inv
    lam = sigma * dm * rho
    # rho (1 - rho) is floored at 1e-16 (XGBoost's floor; LightGBM's table never goes
    # below about 1e-11) so that a pair with a gradient always has a positive hessian
    if hess_mode == HESS_LIGHTGBM:
        return lam, sigma * sigma * dm * max(q, 1e-16)
    return lam, 2.0 * dm * max(q, 1e-16)


@njit(cache=True, error_model="numpy")
def _linear_pair(dm, li, si, ei, lj, sj, ej, sigma, by_score, eps, hess_mode, dist, cdf, c, u, fm, one_div):
    """(signed lambda, hessian, lambda) of the pair of rank positions i < j (labels l,
    scores s, e-ratios e) whose |dM| is ``dm``: the signed lambda is added to g[j] and
    taken from g[i].  The loops pass item i's values as scalars read once per row, so
    the stores to g and h cannot force them to be re-read (which would stop the
    vectorisation)."""
    up = li > lj
    lam, hh = _pair_terms(dm, si - sj if up else sj - si, ei if up else ej, ej if up else ei, sigma,
                          by_score, eps, hess_mode, False, False, dist, not up, cdf, c, u, fm, one_div)
    return (lam if up else -lam), hh, lam


@njit(cache=True, inline="always", error_model="numpy", fastmath={"reassoc", "contract", "nsz", "arcp"})
def _linear_loop(s, lab, e, aux, norm, top, sigma, by_score, eps, hess_mode, dist, cdf, c, u, fm,
                 product, g, h, one_div=False):
    """The pair loop of ``_pairs_linear``; inlined at call sites whose flags are literals,
    so the compiler drops the branches on them and vectorises the inner loop.  Two things
    keep it vectorisable: ``error_model="numpy"`` (no zero-division check on each
    division) and an unsigned inner index (no negative-index wraparound on ``g[j] +=``)."""
    un = np.uint64(s.shape[0])
    total = 0.0
    for i in range(top):
        li = lab[i]
        si = s[i]
        ei = e[i]
        gi = 0.0
        hi = 0.0
        for j in range(np.uint64(i + 1), un):
            sl, hh, lam = _linear_pair(linear_delta(aux, i, j, norm, product), li, si, ei, lab[j], s[j], e[j],
                                       sigma, by_score, eps, hess_mode, dist, cdf, c, u, fm, one_div)
            gi -= sl
            hi += hh
            total += 2.0 * lam
            g[j] += sl
            h[j] += hh
        g[i] += gi
        h[i] += hi
    return total


@njit(cache=True, error_model="numpy", fastmath={"reassoc", "contract", "nsz", "arcp"})
def _linear_loop_distribution(s, lab, e, aux, norm, top, sigma, eps, cdf, c, u, fm, product, g, h):
    """``_linear_loop`` for the distribution map (LightGBM's hessian, no score
    normalisation) over a stack copy of the table row: each pair's weight is a lookup (a
    gather), which the compiler vectorises beside the stores to g and h only when it can
    tell the table apart from them (``_stack``).  Not ``inline="always"``: numba's
    IR-level inlining of this loop stops the vectorisation, LLVM's own inlining does not."""
    return _linear_loop(s, lab, e, aux, norm, top, sigma, False, eps, HESS_LIGHTGBM, True, stack_copy(cdf),
                        c, u, fm, product, g, h)


@njit(cache=True, error_model="numpy", fastmath={"reassoc", "contract", "nsz", "arcp"})
def _pairs_linear(s, lab, e, aux, norm, top, sigma, by_score, eps, hess_mode, dist, cdf, c, u,
                  fm, product, g, h):
    """nDCG, nRBP, AP: every pair (i < top, j > i), branch-free; a pair of equal labels
    has |dM| = 0 and adds nothing.  The common settings get their own compiled loop
    (literal flags); anything else runs the general one.  Returns S."""
    if hess_mode == HESS_LIGHTGBM and dist and not by_score and cdf.shape[0] <= STACK_DOUBLES:
        if product:
            return _linear_loop_distribution(s, lab, e, aux, norm, top, sigma, eps, cdf, c, u, fm, True, g, h)
        return _linear_loop_distribution(s, lab, e, aux, norm, top, sigma, eps, cdf, c, u, fm, False, g, h)
    if not dist and hess_mode == HESS_LIGHTGBM:
        if product and by_score and sigma * (s[0] - s[s.shape[0] - 1]) < 300.0:
            return _linear_loop(s, lab, e, aux, norm, top, sigma, True, eps, HESS_LIGHTGBM, False, cdf,
                                c, u, fm, True, g, h, True)
        if product and by_score:
            return _linear_loop(s, lab, e, aux, norm, top, sigma, True, eps, HESS_LIGHTGBM, False, cdf,
                                c, u, fm, True, g, h)
        if product:
            return _linear_loop(s, lab, e, aux, norm, top, sigma, False, eps, HESS_LIGHTGBM, False, cdf,
                                c, u, fm, True, g, h)
        if by_score:
            return _linear_loop(s, lab, e, aux, norm, top, sigma, True, eps, HESS_LIGHTGBM, False, cdf,
                                c, u, fm, False, g, h)
        return _linear_loop(s, lab, e, aux, norm, top, sigma, False, eps, HESS_LIGHTGBM, False, cdf,
                            c, u, fm, False, g, h)
    return _linear_loop(s, lab, e, aux, norm, top, sigma, by_score, eps, hess_mode, dist, cdf, c, u,
                        fm, product, g, h)


@njit(cache=True, inline="always")
def _add_pair(g, h, hi, lo, lam, hh):
    """Add one pair's lambda and hessian to the higher- and lower-labelled item; returns
    its share 2 * lambda of S."""
    g[hi] -= lam
    g[lo] += lam
    h[hi] += hh
    h[lo] += hh
    return 2.0 * lam


@njit(cache=True)
def _pairs_sparse(form, s, lab, e, aux, norm, first, second, top, sigma, by_score, eps,
                  hess_mode, per_pair_exp, table, dist, cdf, c, u, fm, g, h):
    """Any metric, exp (or LightGBM's table) per pair, skipping pairs of zero delta: the
    path for ``sigmoid_table`` and for lists whose scores span > 700 / sigma.  Returns S."""
    n = s.shape[0]
    total = 0.0
    for i in range(top):
        li = lab[i]
        for j in range(i + 1, n):
            lj = lab[j]
            if li == lj:
                continue
            dm = delta(form, i, j, aux, norm, first, second)
            if dm == 0.0:
                continue
            if li > lj:
                hi, lo = i, j
            else:
                hi, lo = j, i
            lam, hh = _pair_terms(dm, s[hi] - s[lo], e[hi], e[lo], sigma, by_score, eps, hess_mode,
                                  per_pair_exp, table, dist, hi > lo, cdf, c, u, fm)
            total += _add_pair(g, h, hi, lo, lam, hh)
    return total


@njit(cache=True)
def _pairs_rr(s, lab, e, aux, norm, first, second, top, sigma, by_score, eps, hess_mode, dist, cdf,
              c, u, fm, g, h):
    """RR: only pairs that move the first relevant item have a delta, so visit just those:
    (first, any non-relevant j below it) and (non-relevant i above it, any relevant j).
    Returns S."""
    n = s.shape[0]
    rel = aux[2]
    total = 0.0
    for i in range(min(top, first + 1)):
        for j in range(max(i + 1, first), n):
            if (i == first) == (rel[j] > 0.0):
                continue
            dm = rr_delta(aux, i, j, norm, first, second)
            hi, lo = (i, j) if i == first else (j, i)
            lam, hh = _pair_terms(dm, s[hi] - s[lo], e[hi], e[lo], sigma, by_score, eps, hess_mode,
                                  False, False, dist, hi > lo, cdf, c, u, fm)
            total += _add_pair(g, h, hi, lo, lam, hh)
    return total


@njit(cache=True, inline="always")
def ranked_list(scores, labels, metric, gain_code, threshold, p, trunc, score_norm):
    """One list in its current ranking (stable descending sort of the scores), prepared
    for its swap deltas: ``(order, s, lab, aux, norm, first, second, by_score, top)``;
    ``by_score``: score normalisation applies (the scores are not all tied); ``top``: the
    pairs (i < top, j > i) the truncation keeps.  Shared by every per-list kernel."""
    n = scores.shape[0]
    order = np.argsort(-scores, kind="mergesort")
    s = scores[order]
    lab = labels[order]
    aux = np.empty((N_ROWS, n))
    norm, first, second = prepare(metric, lab, gain_code, threshold, p, trunc, aux)
    by_score = score_norm and s[0] != s[n - 1]
    top = n - 1 if trunc <= 0 or trunc > n - 1 else trunc
    return order, s, lab, aux, norm, first, second, by_score, top


@njit(cache=True, inline="always")
def exp_ratios(s, sigma, table):
    """``(e, per_pair_exp)``: e_r = exp(sigma (s_r - s_0)) in (0, 1] turns rho into a ratio,
    no exp per pair; unless LightGBM's table is asked for or e would underflow (scores
    spanning > 700/sigma), when ``per_pair_exp`` is True and e stays 1."""
    n = s.shape[0]
    per_pair_exp = table or sigma * (s[0] - s[n - 1]) >= 700.0
    e = np.ones(n)
    if not per_pair_exp:
        for r in range(n):
            e[r] = math.exp(sigma * (s[r] - s[0]))
    return e, per_pair_exp


@njit(cache=True)
def list_gradients(scores, labels, metric, form, p, sigma, trunc, score_norm, eps, list_norm,
                   hess_mode, table, gain_code, threshold, bound_code, scale, cdf, x0, x1, grad, hess):
    """Gradients and hessians of one list, written into ``grad`` and ``hess``.

    ``metric`` is the metric's kernel code and ``form`` its swap-delta form code
    (``_deltas.delta_codes``); an unknown code or form raises.

    Bounding: ``BOUND_LINEAR`` multiplies every delta by ``scale`` (1 / (max - min),
    1 / E or 1 / (max - E); 0 for a list that cannot be bounded); ``BOUND_DIST`` replaces
    it by the change of the smoothed CDF ``cdf`` (tabulated over [x0, x1]) between the
    list's current metric value and the value after the swap."""
    n = scores.shape[0]
    for r in range(n):
        grad[r] = 0.0
        hess[r] = 0.0
    if n < 2:
        return
    order, s, lab, aux, norm, first, second, by_score, top = ranked_list(scores, labels, metric, gain_code,
                                                                         threshold, p, trunc, score_norm)
    dist = bound_code == BOUND_DIST
    c = u = fm = 0.0
    if dist:
        if x1 <= x0:
            return
        c, u, fm = distribution_setup(cdf, x0, x1, list_value(metric, aux, norm, p))
    elif bound_code == BOUND_LINEAR:
        norm *= scale
    if norm == 0.0:
        return
    g = np.zeros(n)
    h = np.zeros(n)
    e, per_pair_exp = exp_ratios(s, sigma, table)
    if per_pair_exp:
        total = _pairs_sparse(form, s, lab, e, aux, norm, first, second, top, sigma, by_score,
                              eps, hess_mode, per_pair_exp, table, dist, cdf, c, u, fm, g, h)
    elif form == FIRST:
        total = _pairs_rr(s, lab, e, aux, norm, first, second, top, sigma, by_score, eps, hess_mode,
                          dist, cdf, c, u, fm, g, h)
    elif form == PRODUCT or form == PREFIX:
        total = _pairs_linear(s, lab, e, aux, norm, top, sigma, by_score, eps, hess_mode, dist, cdf,
                              c, u, fm, form == PRODUCT, g, h)
    elif form == CASCADE:  # no linear form: the general loop, one O(1) delta per pair
        total = _pairs_sparse(form, s, lab, e, aux, norm, first, second, top, sigma, by_score, eps,
                              hess_mode, False, False, dist, cdf, c, u, fm, g, h)
    else:
        raise ValueError("list_gradients: unknown swap-delta form")
    factor = 1.0
    if list_norm and total > 0.0:
        factor = math.log2(1.0 + total) / total
    for r in range(n):
        grad[order[r]] = g[r] * factor
        hess[order[r]] = h[r] * factor


def all_gradients(scores, labels, ptr, metric, form, p, sigma, trunc, score_norm, eps, list_norm,
                  hess_mode, table, gain_code, threshold, bound_code, scale, cdf, x0, x1):
    """:func:`_all_gradients` with every argument cast to the one type its compiled
    specialisation takes (float64 C-contiguous arrays, int64 boundaries, Python floats, ints
    and bools), so that numba's on-disk cache, warmed once, is hit whatever the caller passed
    (``relevance_threshold=1`` or ``1.0``, int32 query boundaries, read-only arrays).

    XGBoost's hessian with sigma = 1 is exactly twice LightGBM's (2 |dM| q against
    sigma**2 |dM| q, the gradient the same), so it is computed as LightGBM's and doubled:
    the pair loops compile their vectorised specialisations for LightGBM's hessian only
    (3-4x faster per call at top-32 pairs, ``docs/speed.md``).  Doubling is exact in
    floating point; ``tests/test_objective_calls.py`` checks the two ways agree."""
    f64 = _c_float64
    mode, factor = kernel_hessian(hess_mode, sigma)
    grad, hess = _all_gradients(f64(scores), f64(labels), np.ascontiguousarray(ptr, dtype=np.int64), int(metric),
                                int(form), float(p), float(sigma), int(trunc), bool(score_norm), float(eps),
                                bool(list_norm), mode, bool(table), int(gain_code), float(threshold), int(bound_code),
                                f64(scale), f64(cdf), f64(x0), f64(x1))
    if factor != 1.0:
        hess *= factor
    return grad, hess


def kernel_hessian(hess_mode, sigma) -> tuple[int, float]:
    """(hessian mode the kernels are called with, factor that turns their hessian into the
    one asked for): XGBoost's hessian with sigma = 1 is LightGBM's times 2, exactly (see
    :func:`all_gradients`), so it runs the loops compiled for LightGBM's."""
    if int(hess_mode) == HESS_XGBOOST and float(sigma) == 1.0:
        return HESS_LIGHTGBM, 2.0
    return int(hess_mode), 1.0


def _c_float64(a) -> np.ndarray:
    """``a`` as a writeable, C-contiguous float64 array (numba compiles read-only arrays apart)."""
    return np.require(a, dtype=np.float64, requirements=["C", "W"])


@njit(parallel=True, cache=True)
def _all_gradients(scores, labels, ptr, metric, form, p, sigma, trunc, score_norm, eps, list_norm,
                   hess_mode, table, gain_code, threshold, bound_code, scale, cdf, x0, x1):
    """Gradients and hessians of every list; list q is rows ``ptr[q]:ptr[q+1]``.
    Callers take (metric, form) from ``_deltas.delta_codes``, which checks them: an
    exception inside this parallel loop cannot reach Python cleanly.
    ``scale``, ``x0``, ``x1`` hold one entry and ``cdf`` one row per list (ignored
    without bounding)."""
    n = scores.shape[0]
    grad = np.empty(n)
    hess = np.empty(n)
    for q in prange(ptr.shape[0] - 1):
        a, b = ptr[q], ptr[q + 1]
        list_gradients(scores[a:b], labels[a:b], metric, form, p, sigma, trunc, score_norm, eps,
                       list_norm, hess_mode, table, gain_code, threshold, bound_code, scale[q],
                       cdf[q], x0[q], x1[q], grad[a:b], hess[a:b])
    return grad, hess
