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
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from numba import njit, prange

from ..bounds import grid_interp
from .._jit import FAST, STRICT, KernelFamily, compile_notice, jit_variant, kernel_variants
from ._deltas import (ANY, CASCADE, FIRST, N_ROWS, PREFIX, PRODUCT, delta, form_delta, linear_delta_fast, list_value,
                      metric_kernels, prepare, rr_delta)
from ._settings import DistPoint, bounding, settings
from ._stack import STACK_DOUBLES, stack_copy

HESS_LIGHTGBM, HESS_XGBOOST = 0, 1
#: how ``_pair_terms`` forms rho: from the list's e-ratios, an exp per pair, LightGBM's table
EXP_RATIO, EXP_PAIR, EXP_TABLE = 0, 1, 2
BOUND_NONE, BOUND_LINEAR, BOUND_DIST = 0, 1, 2
#: which lists a per-list kernel computes: all, those whose e-ratios hold (it defers the
#: others), those that need an exp per pair (LightGBM's sigmoid table, scores spanning
#: >= 700 / sigma); see ``gradient_kernel``
ALL_LISTS, RATIO_LISTS, EXP_LISTS = 0, 1, 2
_TABLE_BINS = 1024 * 1024
#: about how long an objective's first call compiles with an empty cache (docs/speed.md, "First use")
GRADIENT_COMPILE_SECONDS = 5.0
#: the same for the kernel of the lists that need an exp per pair (``EXP_LISTS``)
EXP_COMPILE_SECONDS = 3.0
#: the same for the kernel of every other setting (``_all_gradients_general``)
GENERAL_COMPILE_SECONDS = 25.0


@njit(cache=True, **STRICT)
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


@njit(cache=True, **STRICT)
def distribution_delta(dm, rises, cdf, c, u, fm):
    """|F~(M +- dm) - F~(M)|: the change of the distribution-bounded metric when a swap
    changes M by dm (up when ``rises``: the higher label moves up); ``fm`` = F~(M) and
    (c, u) from ``distribution_setup``, so that dm = 0 gives exactly 0."""
    return abs(grid_interp(cdf, u + (dm * c if rises else -dm * c)) - fm)


def _pair_terms_template(with_dist):
    """``_pair_terms``; with ``with_dist`` False the distribution map's branch is pruned (for
    the variants of objectives without it: ``gradient_kernel``)."""
    ON_DIST = with_dist

    def _pair_terms(dm, d, e_hi, e_lo, sigma, eps, dmap, rises, by_score, hess_mode, exp_mode, one_div=False):
        """(lambda, hessian) of one pair with |dM| = dm and score difference d = s_hi - s_lo.
        With the distribution map (``dmap``, a ``DistPoint``; ``None``: none, pruned) the
        weight is |F~(M +- dm) - F~(M)|, the change of the bounded metric (``rises``: the
        swap moves the higher label up, so M increases).  ``exp_mode``: rho from the
        e-ratios (``EXP_RATIO``), from an exp per pair (``EXP_PAIR``) or from LightGBM's
        table (``EXP_TABLE``).

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
        if ON_DIST and dmap is not None and dmap.on:
            dm = distribution_delta(dm, rises, dmap.cdf, dmap.c, dmap.u, dmap.fm)
        if by_score:
            dm = dm / (eps + abs(d))
        if exp_mode != EXP_RATIO:
            rho, q = _rho(d, sigma, exp_mode == EXP_TABLE)
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

    return _pair_terms


_pair_terms = njit(cache=True, **STRICT)(_pair_terms_template(True))
#: ``_pair_terms`` under the fast-math flags, for the vectorised loops (``_linear_pair``)
_pair_terms_fast = jit_variant(_pair_terms_template(True), "fast", FAST)


@njit(cache=True, **FAST)
def _linear_pair(dm, item_i, item_j, sigma, eps, dmap, by_score, hess_mode, one_div):
    """(signed lambda, hessian, lambda) of the pair of rank positions i < j whose |dM| is
    ``dm``; ``item_i`` = (label, score, e-ratio) of i, ``item_j`` the same of j: the signed
    lambda is added to g[j] and taken from g[i].  The loops pass item i's values as scalars
    read once per row, so the stores to g and h cannot force them to be re-read (which
    would stop the vectorisation).  The pair terms take the loops' fast math."""
    li, si, ei = item_i
    lj, sj, ej = item_j
    up = li > lj
    lam, hh = _pair_terms_fast(dm, si - sj if up else sj - si, ei if up else ej, ej if up else ei, sigma, eps, dmap,
                               not up, by_score, hess_mode, EXP_RATIO, one_div)
    return (lam if up else -lam), hh, lam


@njit(cache=True, inline="always", **FAST)
def _linear_loop(ranked, norm, top, sigma, eps, dmap, out, product, by_score, hess_mode, one_div=False):
    """The pair loop of ``_pairs_linear`` over ``ranked`` = (s, lab, e, aux) of a prepared
    list, into ``out`` = (g, h); inlined at call sites whose flags are literals, so the
    compiler drops the branches on them and vectorises the inner loop.  Two things keep it
    vectorisable: ``error_model="numpy"`` (no zero-division check on each division) and an
    unsigned inner index (no negative-index wraparound on ``g[j] +=``)."""
    s, lab, e, aux = ranked
    g, h = out
    un = np.uint64(s.shape[0])
    total = 0.0
    for i in range(top):
        li = lab[i]
        si = s[i]
        ei = e[i]
        gi = 0.0
        hi = 0.0
        for j in range(np.uint64(i + 1), un):
            sl, hh, lam = _linear_pair(linear_delta_fast(aux, i, j, norm, product), (li, si, ei),
                                       (lab[j], s[j], e[j]), sigma, eps, dmap, by_score, hess_mode, one_div)
            gi -= sl
            hi += hh
            total += 2.0 * lam
            g[j] += sl
            h[j] += hh
        g[i] += gi
        h[i] += hi
    return total


@njit(cache=True, **FAST)
def _linear_loop_distribution(ranked, norm, top, sigma, eps, dmap, out, product):
    """``_linear_loop`` for the distribution map (LightGBM's hessian, no score
    normalisation) over a stack copy of the table row: each pair's weight is a lookup (a
    gather), which the compiler vectorises beside the stores to g and h only when it can
    tell the table apart from them (``_stack``).  Not ``inline="always"``: numba's
    IR-level inlining of this loop stops the vectorisation, LLVM's own inlining does not."""
    return _linear_loop(ranked, norm, top, sigma, eps, DistPoint(True, stack_copy(dmap.cdf), dmap.c, dmap.u, dmap.fm),
                        out, product, False, HESS_LIGHTGBM)


def _pairs_linear_template(form_code, bound_code, lean):
    """``_pairs_linear`` for one form and bounding (``ANY``: decided per call); ``lean``:
    for LightGBM's hessian without score normalisation only.  The loops a variant cannot
    run are pruned before typing, so that it compiles (and vectorises) only its own."""
    ON_PRODUCT, ON_PREFIX = (form_code in (ANY, f) for f in (PRODUCT, PREFIX))
    ON_DIST = bound_code in (ANY, BOUND_DIST)
    ON_PLAIN = bound_code != BOUND_DIST
    ON_BY_SCORE = not lean
    ON_GENERAL = not lean or ON_DIST

    def _pairs_linear(ranked, norm, top, sigma, by_score, eps, hess_mode, dmap, product, out):
        """nDCG, nRBP, AP: every pair (i < top, j > i), branch-free; a pair of equal labels
        has |dM| = 0 and adds nothing.  The common settings get their own compiled loop
        (literal flags); anything else runs the general one.  Returns S."""
        s = ranked[0]
        if ON_DIST and hess_mode == HESS_LIGHTGBM and dmap.on and not by_score and \
                dmap.cdf.shape[0] <= STACK_DOUBLES:
            if ON_PRODUCT and product:
                return _linear_loop_distribution(ranked, norm, top, sigma, eps, dmap, out, True)
            if ON_PREFIX and not product:
                return _linear_loop_distribution(ranked, norm, top, sigma, eps, dmap, out, False)
        if ON_PLAIN and not dmap.on and hess_mode == HESS_LIGHTGBM:
            if ON_PRODUCT and ON_BY_SCORE and product and by_score and sigma * (s[0] - s[s.shape[0] - 1]) < 300.0:
                return _linear_loop(ranked, norm, top, sigma, eps, None, out, True, True, HESS_LIGHTGBM, True)
            if ON_PRODUCT and ON_BY_SCORE and product and by_score:
                return _linear_loop(ranked, norm, top, sigma, eps, None, out, True, True, HESS_LIGHTGBM)
            if ON_PRODUCT and product:
                return _linear_loop(ranked, norm, top, sigma, eps, None, out, True, False, HESS_LIGHTGBM)
            if ON_PREFIX and ON_BY_SCORE and by_score:
                return _linear_loop(ranked, norm, top, sigma, eps, None, out, False, True, HESS_LIGHTGBM)
            if ON_PREFIX:
                return _linear_loop(ranked, norm, top, sigma, eps, None, out, False, False, HESS_LIGHTGBM)
        if ON_GENERAL:
            return _linear_loop(ranked, norm, top, sigma, eps, dmap, out, product, by_score, hess_mode)
        raise ValueError("_pairs_linear: settings outside this variant's")

    return _pairs_linear


_pairs_linear = njit(cache=True, **FAST)(_pairs_linear_template(ANY, ANY, False))


@njit(cache=True, inline="always")
def _add_pair(g, h, hi, lo, lam, hh):
    """Add one pair's lambda and hessian to the higher- and lower-labelled item; returns
    its share 2 * lambda of S."""
    g[hi] -= lam
    g[lo] += lam
    h[hi] += hh
    h[lo] += hh
    return 2.0 * lam


def _pairs_sparse_template(form_code):
    """``_pairs_sparse`` for one swap-delta form (``ANY``: any form)."""
    FORM = form_code

    def _pairs_sparse(form, ranked, ref, top, sigma, eps, dmap, out, by_score, hess_mode, exp_mode):
        """Any metric, exp (or LightGBM's table) per pair, skipping pairs of zero delta: the
        path for ``sigmoid_table`` and for lists whose scores span > 700 / sigma.  ``ranked``
        = (s, lab, e, aux), ``ref`` = (norm, first, second) of the prepared list.  Returns S."""
        if FORM != ANY and form != FORM:
            raise ValueError("_pairs_sparse: called with another form than its variant's")
        s, lab, e, aux = ranked
        norm, first, second = ref
        g, h = out
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
                lam, hh = _pair_terms(dm, s[hi] - s[lo], e[hi], e[lo], sigma, eps, dmap, hi > lo, by_score,
                                      hess_mode, exp_mode)
                total += _add_pair(g, h, hi, lo, lam, hh)
        return total

    return _pairs_sparse


_pairs_sparse = njit(cache=True)(_pairs_sparse_template(ANY))


@njit(cache=True)
def _pairs_rr(ranked, ref, top, sigma, eps, dmap, out, by_score, hess_mode):
    """RR: only pairs that move the first relevant item have a delta, so visit just those:
    (first, any non-relevant j below it) and (non-relevant i above it, any relevant j).
    Arguments as ``_pairs_sparse``'s.  Returns S."""
    s, lab, e, aux = ranked
    norm, first, second = ref
    g, h = out
    n = s.shape[0]
    rel = aux[2]
    total = 0.0
    for i in range(min(top, first + 1)):
        for j in range(max(i + 1, first), n):
            if (i == first) == (rel[j] > 0.0):
                continue
            dm = rr_delta(aux, i, j, norm, first, second)
            hi, lo = (i, j) if i == first else (j, i)
            lam, hh = _pair_terms(dm, s[hi] - s[lo], e[hi], e[lo], sigma, eps, dmap, hi > lo, by_score, hess_mode,
                                  EXP_RATIO)
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
def exp_per_pair(span, sigma, table):
    """Whether a list whose scores span ``span`` (max - min) needs an exp per pair:
    LightGBM's table is asked for, or its e-ratios would underflow (span >= 700 / sigma)."""
    return table or sigma * span >= 700.0


@njit(cache=True, inline="always")
def exp_ratios(s, sigma, table):
    """``(e, per_pair_exp)``: e_r = exp(sigma (s_r - s_0)) in (0, 1] turns rho into a ratio,
    no exp per pair; unless LightGBM's table is asked for or e would underflow (scores
    spanning > 700/sigma), when ``per_pair_exp`` is True and e stays 1."""
    n = s.shape[0]
    per_pair_exp = exp_per_pair(s[0] - s[n - 1], sigma, table)
    e = np.ones(n)
    if not per_pair_exp:
        for r in range(n):
            e[r] = math.exp(sigma * (s[r] - s[0]))
    return e, per_pair_exp


@njit(cache=True, inline="always")
def needs_exp_per_pair(scores, sigma, table):
    """Whether a list (its scores in any order) needs an exp per pair: ``exp_ratios``'s
    test, whose sorted scores' ends are the max and the min."""
    return scores.shape[0] >= 2 and exp_per_pair(scores.max() - scores.min(), sigma, table)


@njit(cache=True, inline="always")
def list_factor(list_norm, total):
    """The list normalisation's factor log2(1 + S) / S of a list's g and h (S = ``total``,
    the sum over its pairs of 2 lambda); 1 without it or when S = 0."""
    if list_norm and total > 0.0:
        return math.log2(1.0 + total) / total
    return 1.0


@njit(cache=True, inline="always")
def scatter(order, g, h, factor, grad, hess):
    """A list's g and h (rank order) times ``factor`` into ``grad`` and ``hess`` (input
    order: position r is row ``order[r]``)."""
    for r in range(order.shape[0]):
        grad[order[r]] = g[r] * factor
        hess[order[r]] = h[r] * factor


def _list_gradients_template(metric_code, form_code, bound_code, lean, lists=ALL_LISTS):
    """``list_gradients`` for one metric, its form and one bounding (``ANY``: read from the
    arguments), ``lean``: for LightGBM's hessian without score normalisation only, and
    ``lists``: the lists it computes (``ALL_LISTS``, ``RATIO_LISTS``, ``EXP_LISTS``).  The
    branches of the other forms, boundings and lists are pruned before typing, so a variant
    compiles the pair loops its objective runs and nothing else."""
    ON_RATIO, ON_EXP = lists != EXP_LISTS, lists != RATIO_LISTS
    ON_FIRST, ON_LINEAR, ON_CASCADE = (ON_RATIO and (form_code == ANY or form_code in fs)
                                       for fs in ((FIRST,), (PRODUCT, PREFIX), (CASCADE,)))
    ON_DIST, ON_SCALE = (bound_code in (ANY, b) for b in (BOUND_DIST, BOUND_LINEAR))
    KEY = (metric_code, form_code, bound_code)
    LEAN = lean

    def list_gradients(scores, labels, cfg, scale, cdf, x0, x1, grad, hess):
        """Gradients and hessians of one list, written into ``grad`` and ``hess``; ``cfg`` is
        the call's ``_settings.Settings``.  A kernel of ``RATIO_LISTS`` raises for a list
        that needs an exp per pair (``needs_exp_per_pair``), one of ``EXP_LISTS`` for any
        other list.

        ``cfg.metric`` is the metric's kernel code and ``cfg.form`` its swap-delta form code
        (``_deltas.delta_codes``); an unknown code or form raises.

        Bounding: ``BOUND_LINEAR`` multiplies every delta by ``scale`` (1 / (max - min),
        1 / E or 1 / (max - E); 0 for a list that cannot be bounded); ``BOUND_DIST`` replaces
        it by the change of the smoothed CDF ``cdf`` (tabulated over [x0, x1]) between the
        list's current metric value and the value after the swap."""
        metric, form, bound_code, hess_mode = cfg.metric, cfg.form, cfg.bound_code, cfg.hess_mode
        sigma, eps = cfg.sigma, cfg.eps
        if (KEY[0] != ANY and metric != KEY[0]) or (KEY[1] != ANY and form != KEY[1]) or \
                (KEY[2] != ANY and bound_code != KEY[2]) or \
                (LEAN and (hess_mode != HESS_LIGHTGBM or cfg.score_norm)):
            raise ValueError("list_gradients: called with other settings than its variant's")
        n = scores.shape[0]
        for r in range(n):
            grad[r] = 0.0
            hess[r] = 0.0
        if n < 2:
            return
        order, s, lab, aux, norm, first, second, by_score, top = ranked_list(
            scores, labels, metric, cfg.gain_code, cfg.threshold, cfg.p, cfg.trunc, cfg.score_norm)
        dist = bound_code == BOUND_DIST
        c = u = fm = 0.0
        if ON_DIST and dist:
            if x1 <= x0:
                return
            c, u, fm = distribution_setup(cdf, x0, x1, list_value(metric, aux, norm, cfg.p))
        elif ON_SCALE and bound_code == BOUND_LINEAR:
            norm *= scale
        if norm == 0.0:
            return
        g = np.zeros(n)
        h = np.zeros(n)
        e, per_pair_exp = exp_ratios(s, sigma, cfg.table)
        ranked = (s, lab, e, aux)
        ref = (norm, first, second)
        dmap = DistPoint(dist, cdf, c, u, fm)
        if per_pair_exp:
            if not ON_EXP:
                raise ValueError("list_gradients: a list that needs an exp per pair, in the kernel of RATIO_LISTS")
            total = _pairs_sparse(form, ranked, ref, top, sigma, eps, dmap, (g, h), by_score, hess_mode,
                                  EXP_TABLE if cfg.table else EXP_PAIR)
        elif not ON_RATIO:
            raise ValueError("list_gradients: a list whose e-ratios hold, in the kernel of EXP_LISTS")
        elif ON_FIRST and form == FIRST:
            total = _pairs_rr(ranked, ref, top, sigma, eps, dmap, (g, h), by_score, hess_mode)
        elif ON_LINEAR and (form == PRODUCT or form == PREFIX):
            total = _pairs_linear(ranked, norm, top, sigma, by_score, eps, hess_mode, dmap, form == PRODUCT, (g, h))
        elif ON_CASCADE and form == CASCADE:  # no linear form: the general loop, one O(1) delta per pair
            total = _pairs_sparse(form, ranked, ref, top, sigma, eps, dmap, (g, h), by_score, hess_mode, EXP_RATIO)
        else:
            raise ValueError("list_gradients: unknown swap-delta form")
        scatter(order, g, h, list_factor(cfg.list_norm, total), grad, hess)

    return list_gradients


list_gradients = njit(cache=True)(_list_gradients_template(ANY, ANY, ANY, False))


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
    grad, hess = _all_gradients(f64(scores), f64(labels), np.ascontiguousarray(ptr, dtype=np.int64), metric, form, p,
                                sigma, trunc, score_norm, eps, list_norm, mode, table, gain_code, threshold, bound_code,
                                scale, cdf, x0, x1)
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


def _all_gradients_template(metric_code, form_code, bound_code, lean, lists):
    """The loop over lists ``q0 <= q < q1`` of one variant (its key is held in closure
    cells: numba's on-disk cache keeps one entry per variant), for the ``lists`` of
    ``list_gradients`` (``RATIO_LISTS`` or ``EXP_LISTS``).  It releases the GIL:
    ``_all_gradients`` runs ranges of lists on threads.  (Not a numba ``prange``: the
    parallel compilation doubled the first call's compile time, for nothing a thread pool
    over list ranges does not do as well.)"""
    KEY = (metric_code, form_code, bound_code)
    LEAN = lean
    DEFER, ONLY_EXP = lists == RATIO_LISTS, lists == EXP_LISTS

    def _gradients_range(scores, labels, ptr, q0, q1, cfg, bnd, grad, hess, deferred):
        """Gradients and hessians of lists ``q0..q1-1`` into ``grad`` and ``hess``; list q is
        rows ``ptr[q]:ptr[q+1]``.  ``cfg``: the ``Settings``; ``bnd``: the ``Bounding``, whose
        ``scale``, ``x0``, ``x1`` hold one entry and ``cdf`` one row per list (ignored
        without bounding).  ``deferred``: one flag per list, set by the kernel of
        ``RATIO_LISTS`` for each list it leaves to the kernel of ``EXP_LISTS``, which
        computes the flagged lists only."""
        if cfg.metric != KEY[0] or cfg.form != KEY[1] or cfg.bound_code != KEY[2] or \
                (LEAN and (cfg.hess_mode != HESS_LIGHTGBM or cfg.score_norm)):
            raise ValueError("_all_gradients: called with other settings than its variant's")
        for q in range(q0, q1):
            a, b = ptr[q], ptr[q + 1]
            if DEFER:
                deferred[q] = needs_exp_per_pair(scores[a:b], cfg.sigma, cfg.table)
                if deferred[q]:
                    grad[a:b] = 0.0
                    hess[a:b] = 0.0
                    continue
            elif ONLY_EXP and not deferred[q]:
                continue
            list_gradients(scores[a:b], labels[a:b], cfg, bnd.scale[q], bnd.cdf[q], bnd.x0[q], bnd.x1[q],
                           grad[a:b], hess[a:b])

    return _gradients_range


#: the pair kernels without the distribution map's branch, shared by the variants of every
#: metric without it (``gradient_kernel``, ``sparse_kernel``): one compile per process
_PLAIN_TERMS = jit_variant(_pair_terms_template(False), "plain", STRICT)
_PLAIN_PAIR = jit_variant(_linear_pair.py_func, "plain", FAST,
                          _pair_terms_fast=jit_variant(_pair_terms_template(False), "plain_fast", FAST))
_PLAIN_RR = jit_variant(_pairs_rr.py_func, "plain", {}, _pair_terms=_PLAIN_TERMS)


@kernel_variants
def sparse_kernel(form_code: int):
    """``_pairs_sparse`` of one swap-delta form without the distribution map, shared by the
    variants of every metric of that form (``gradient_kernel``): the loop of LightGBM's
    sigmoid table and of lists whose scores span > 700 / sigma, the main loop of the
    cascade form only.  Compiled once per process for all of them, not once per variant:
    it was a quarter of a variant's first compile (docs/speed.md, "Settings records")."""
    tag = f"form{form_code}".replace("-", "any")
    return jit_variant(_pairs_sparse_template(form_code), tag, {}, delta=form_delta(form_code, tag),
                       _pair_terms=_PLAIN_TERMS)


@kernel_variants
def gradient_kernel(metric_code: int, form_code: int, bound_code: int, lean: bool, lists: int):
    """The compiled gradient loop of one metric code, its form code and one bound code (none
    or a linear map); ``lean``: for LightGBM's hessian (the mode the kernels run, XGBoost's
    at sigma 1 included) without score normalisation, the default objective's settings
    (``is_lean``; every other setting runs ``_all_gradients_general``).  A variant holds
    only the kernels its objective runs, so its first call compiles those only (numba's
    on-disk cache keeps each variant: ``scripts/warmup.py`` fills it); without the
    distribution map the pair kernels that are the same code for every metric are shared
    (``_PLAIN_TERMS``, ``_PLAIN_PAIR``, ``_PLAIN_RR``, ``sparse_kernel``), compiled once
    per process.

    ``lists``: ``RATIO_LISTS``, the lists whose e-ratios hold (every list of the usual
    call), or ``EXP_LISTS``, those that need an exp per pair (LightGBM's sigmoid table,
    scores spanning >= 700 / sigma): two kernels, so that a first fit compiles the second
    only if it meets such a list (it was about 1.1 s of a one-metric first call's 8.6 s:
    docs/speed.md, "Settings records")."""
    if lists not in (RATIO_LISTS, EXP_LISTS):
        raise ValueError(f"gradient_kernel: lists must be RATIO_LISTS or EXP_LISTS, not {lists!r}")
    tag = "_".join(str(c).replace("-", "any") for c in (metric_code, form_code, bound_code)) + \
        ("_lean" if lean else "_full") + ("_ratio" if lists == RATIO_LISTS else "_exp")
    prepare_v, list_value_v = metric_kernels(metric_code, tag)
    if bound_code in (ANY, BOUND_DIST):
        terms = jit_variant(_pair_terms_template(True), tag, STRICT)
        pair = jit_variant(_linear_pair.py_func, tag, FAST,
                           _pair_terms_fast=jit_variant(_pair_terms_template(True), tag + "_fast", FAST))
        sparse = jit_variant(_pairs_sparse_template(form_code), tag, {}, delta=form_delta(form_code, tag),
                             _pair_terms=terms)
        rr = jit_variant(_pairs_rr.py_func, tag, {}, _pair_terms=terms)
    else:  # the pair terms without the map are the same code for every metric: compiled once, shared
        pair, sparse, rr = _PLAIN_PAIR, sparse_kernel(form_code), _PLAIN_RR
    loop = jit_variant(_linear_loop.py_func, tag, dict(FAST, inline="always"), _linear_pair=pair)
    linear = jit_variant(_pairs_linear_template(form_code, bound_code, lean), tag, FAST,
                         _linear_loop=loop)
    ranked = jit_variant(ranked_list.py_func, tag, {"inline": "always"}, prepare=prepare_v)
    per_list = jit_variant(_list_gradients_template(metric_code, form_code, bound_code, lean, lists), tag,
                           {"inline": "always"}, ranked_list=ranked, list_value=list_value_v, _pairs_sparse=sparse,
                           _pairs_linear=linear, _pairs_rr=rr)
    return jit_variant(_all_gradients_template(metric_code, form_code, bound_code, lean, lists), tag,
                       {"nogil": True, "cache": True}, list_gradients=per_list)


def is_lean(hess_mode, score_norm, bound_code) -> bool:
    """Whether a call runs a variant (``gradient_kernel``): LightGBM's hessian mode, no score
    normalisation, no distribution map.  Every other call runs ``_all_gradients_general``."""
    return int(hess_mode) == HESS_LIGHTGBM and not score_norm and int(bound_code) != BOUND_DIST


@njit(parallel=True, cache=True)
def _all_gradients_general(scores, labels, ptr, cfg, bnd):
    """Gradients and hessians of every list (list q is rows ``ptr[q]:ptr[q+1]``), any
    settings: the kernel of the settings no variant covers (score normalisation, XGBoost's
    hessian at sigma != 1, the distribution map).  Kept as it was, a parallel loop over the
    general ``list_gradients``: under fastmath LLVM vectorises (and so rounds) the pair
    loops by the code around them, and only the lean variants were checked equal to this
    kernel's values to the bit (docs/speed.md, "First use")."""
    n = scores.shape[0]
    grad = np.empty(n)
    hess = np.empty(n)
    for q in prange(ptr.shape[0] - 1):
        a, b = ptr[q], ptr[q + 1]
        list_gradients(scores[a:b], labels[a:b], cfg, bnd.scale[q], bnd.cdf[q], bnd.x0[q], bnd.x1[q], grad[a:b],
                       hess[a:b])
    return grad, hess


#: list ranges per thread in a call (a little dynamic balancing: lists differ in length)
_CHUNKS_PER_THREAD = 4
_pool = (None, 0, 0)  # (executor, its thread count, the process it was made in)
_pool_lock = threading.Lock()


def _thread_pool(n_threads: int) -> ThreadPoolExecutor:
    """The process's pool of gradient threads, (re)made when the thread count changes and
    in a forked child (whose copy of the parent's pool has no threads)."""
    global _pool
    with _pool_lock:
        pool, size, pid = _pool
        if pool is None or size != n_threads or pid != os.getpid():
            pool = ThreadPoolExecutor(max_workers=n_threads, thread_name_prefix="gbrank-gradients")
            _pool = (pool, n_threads, os.getpid())
        return pool


def _all_gradients_entry(scores, labels, ptr, metric, form, p, sigma, trunc, score_norm, eps, list_norm,
                         hess_mode, table, gain_code, threshold, bound_code, scale, cdf, x0, x1):
    """Gradients and hessians of every list; list q is rows ``ptr[q]:ptr[q+1]``, through
    the variant of its settings (``gradient_kernel``), ranges of lists on
    ``numba.get_num_threads()`` threads.  Callers take (metric, form) from
    ``_deltas.delta_codes``, which checks them.  The first call of a variant that numba's
    on-disk cache does not hold logs one line (``compile_notice``).  Each list is
    computed alone, so the values do not depend on the number of threads."""
    cfg = settings(metric, form, p, sigma, trunc, score_norm, eps, list_norm, hess_mode, table, gain_code,
                   threshold, bound_code)
    bnd = bounding(scale, cdf, x0, x1)
    if not is_lean(hess_mode, score_norm, bound_code):
        args = (scores, labels, ptr, cfg, bnd)
        compile_notice(_all_gradients_general, "the LambdaRank kernels of any setting", args,
                       GENERAL_COMPILE_SECONDS)
        return _all_gradients_general(*args)
    n = scores.shape[0]
    grad = np.empty(n)
    hess = np.empty(n)
    n_lists = ptr.shape[0] - 1
    deferred = np.full(n_lists, cfg.table)  # with the sigmoid table, every list takes an exp per pair
    head = (scores, labels, ptr)
    tail = (cfg, bnd, grad, hess, deferred)
    for lists in (RATIO_LISTS, EXP_LISTS):
        if (lists == RATIO_LISTS and cfg.table) or (lists == EXP_LISTS and not deferred.any()):
            continue
        kernel = gradient_kernel(cfg.metric, cfg.form, cfg.bound_code, True, lists)
        compile_notice(kernel, objective_family(cfg.metric, cfg.bound_code, lists), head + (0, n_lists) + tail,
                       GRADIENT_COMPILE_SECONDS if lists == RATIO_LISTS else EXP_COMPILE_SECONDS)
        in_list_ranges(kernel, n_lists, head, tail)
    return grad, hess


def in_list_ranges(kernel, n_lists: int, head: tuple, tail: tuple) -> None:
    """``kernel(*head, q0, q1, *tail)`` over ranges ``[q0, q1)`` covering the ``n_lists``
    lists, on ``numba.get_num_threads()`` threads of the process's pool (``kernel``: a
    ``nogil`` numba function writing each list's results in place).  A first call compiles
    (or loads) the kernel in this thread."""
    n_threads = min(numba.get_num_threads(), n_lists)
    if n_threads <= 1 or not kernel.overloads:
        kernel(*head, 0, n_lists, *tail)
        return
    bounds = np.linspace(0, n_lists, min(n_lists, n_threads * _CHUNKS_PER_THREAD) + 1).astype(np.int64)
    futures = [_thread_pool(n_threads).submit(kernel, *head, int(q0), int(q1), *tail)
               for q0, q1 in zip(bounds[:-1], bounds[1:]) if q1 > q0]
    for f in futures:
        f.result()


_all_gradients = KernelFamily(_all_gradients_entry, gradient_kernel)


def objective_family(metric_code: int, bound_code: int, lists: int = RATIO_LISTS) -> str:
    """How the first-use notice names an objective's kernels, e.g. "the nDCG LambdaRank
    kernels", "the AP LambdaRank kernels (distribution bounding)" or, for ``EXP_LISTS``,
    "the nDCG LambdaRank kernels, with an exp per pair, for the sigmoid table or lists
    whose scores span >= 700 / sigma"."""
    from ..metrics import METRICS

    name = next((r.name for r in METRICS.values() if r.code == metric_code), str(metric_code))
    label = {"ndcg": "nDCG", "nrbp": "nRBP"}.get(name, name.upper())
    bound = {BOUND_LINEAR: " (linear bounding)", BOUND_DIST: " (distribution bounding)"}.get(bound_code, "")
    exp = ", with an exp per pair, for the sigmoid table or lists whose scores span >= 700 / sigma" \
        if lists == EXP_LISTS else ""
    return f"the {label} LambdaRank kernels{bound}{exp}"
