"""Pair weightings and pair sampling beyond the plain swap delta (``LambdaObjective``'s
``weighting``, ``stochastic`` and ``pair_method``): a kernel for one list, a parallel loop
over lists, and the counter-based random numbers they draw.

The gradient of a pair is always the one of ``_kernels`` (``_pair_terms``: rho and the
hessian from the current, unperturbed score difference); only the pair's weight |dM| and
the set of pairs change:

* ``weighting`` (nDCG only), for positions i < j (0-based; ranks r = i + 1, j + 1)::

      ndcg_loss2    |G_i - G_j| * delta_ij / IDCG
      ndcg_loss2++  |G_i - G_j| * (rho_ij + mu * delta_ij) / IDCG
      delta_ij = 1/D(j - i) - 1/D(j - i + 1),   rho_ij = |1/D(i + 1) - 1/D(j + 1)|,   D(x) = log2(1 + x)

  (Wang et al., "The LambdaLoss Framework for Ranking Metric Optimization", CIKM 2018,
  NDCG-Loss2 and NDCG-Loss2++; TF-Ranking's ``DCGLambdaWeight`` calls delta "u" and rho
  "v").  ``delta_ij`` depends on j - i only: one table per list (``_loss2_table``).
* ``stochastic`` = N > 0 (YetiRank's noise): for each of N samples every item's score gets
  logistic noise log(u / (1 - u)), u ~ U(0, 1); the list is ranked by the perturbed scores
  and each pair's weight is its |dM| (or LambdaLoss weight) at its perturbed positions; the
  pair's weight is the mean over the N samples.  Pairs are chosen on the unperturbed ranking
  (top ``trunc`` positions, as without noise).
* ``pair_method="mean"`` (XGBoost's ``lambdarank_pair_method="mean"``): every item draws
  ``per_doc`` partners uniformly among the items of its list with a different label
  (XGBoost's ``MakePairs``: the label buckets of the list, a uniform index over the items
  outside the item's bucket); each drawn pair counts with its weight.  The list
  normalisation is XGBoost's for ``mean``: g and h times 1 / ``per_doc``.

Random numbers: splitmix64 (Steele, Lea, Flood 2014) as a counter-based generator.  List q
of a call draws from the state ``list_state(seed, key, q)``, where ``key = score_key(scores)``
hashes the bits of all the call's scores: the draws are a function of (seed, scores, list
index) only, so they do not depend on the number of threads, and an objective keeps no
counter that a copy or a pickle could duplicate or lose.  Draw order within a list: the
partners of ``mean`` first (label buckets from the highest label, items in rank order within
a bucket, ``per_doc`` draws each), then for each noise sample one draw per item in input
order.  ``u = (z >> 11 + 0.5) / 2**53`` lies in (0, 1).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .._jit import FAST_MATH
from ._deltas import CASCADE, FIRST, N_ROWS, PREFIX, PRODUCT, delta, linear_delta, prepare
from ._kernels import (EXP_PAIR, EXP_RATIO, EXP_TABLE, HESS_LIGHTGBM, _add_pair, _c_float64, _linear_pair,
                      _pair_terms, _pairs_linear, exp_ratios, kernel_hessian, list_factor, ranked_list, scatter)
from ._settings import DistPoint, Weighting, settings

W_DELTA, W_LOSS2, W_LOSS2PP = 0, 1, 2
#: ``weighting`` name -> kernel code
WEIGHTINGS = {"delta": W_DELTA, "ndcg_loss2": W_LOSS2, "ndcg_loss2++": W_LOSS2PP}
PAIRS_TOPK, PAIRS_MEAN = 0, 1
#: ``pair_method`` name -> kernel code
PAIR_METHODS = {"topk": PAIRS_TOPK, "mean": PAIRS_MEAN}

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_INV53 = 1.0 / 9007199254740992.0  # 2**-53
_FAST_MATH = FAST_MATH


# -- random numbers ----------------------------------------------------------------------

@njit(cache=True, inline="always")
def _mix(z):
    """splitmix64's finaliser: a bijective scramble of 64 bits."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=True)
def score_key(scores):
    """A 64-bit hash of the bits of ``scores`` (float64, C-contiguous): the per-call part of
    every list's random stream."""
    bits = scores.view(np.uint64)
    acc = np.uint64(bits.shape[0])
    for t in range(bits.shape[0]):
        acc += _mix(bits[t] ^ (np.uint64(t) * _GOLDEN))
    return _mix(acc)


@njit(cache=True)
def list_state(seed, key, q):
    """Initial generator state of list q for a call with ``seed`` and score key ``key``
    (both taken as unsigned 64-bit integers)."""
    return _mix(_mix(np.uint64(seed) ^ np.uint64(key)) + np.uint64(q + 1) * _GOLDEN)


@njit(cache=True, inline="always")
def _unit(z):
    """The top 53 bits of z as a uniform in the open interval (0, 1)."""
    return (float(z >> _S11) + 0.5) * _INV53


@njit(cache=True, inline="always")
def _uniform(state):
    """(u in (0, 1), next state): one splitmix64 step."""
    state = state + _GOLDEN
    return _unit(_mix(state)), state


@njit(cache=True)
def uniform_draws(seed, key, q, count):
    """The first ``count`` uniforms of list q's stream (for tests and oracles)."""
    state = np.uint64(list_state(seed, key, q))
    out = np.empty(count)
    for t in range(count):
        out[t], state = _uniform(state)
    return out


# -- pair sets and weights ---------------------------------------------------------------

@njit(cache=True)
def sample_partners(lab, per_doc, state):
    """XGBoost's ``mean`` pairs for the list whose labels in rank order are ``lab``.

    Returns (partners, state): ``partners[r * per_doc + k]`` is the position of the k-th
    partner drawn for position r, uniform over the positions of a different label, or -1
    when every item of the list has r's label."""
    n = lab.shape[0]
    by_label = np.argsort(-lab, kind="mergesort")
    partners = np.full(n * per_doc, -1, dtype=np.int64)
    t = 0
    while t < n:
        b = t + 1
        while b < n and lab[by_label[b]] == lab[by_label[t]]:
            b += 1
        outside = n - (b - t)
        if outside > 0:
            for idx in range(t, b):
                r = by_label[idx]
                for k in range(per_doc):
                    u, state = _uniform(state)
                    x = min(int(u * outside), outside - 1)
                    if x >= t:  # skip the bucket [t, b)
                        x += b - t
                    partners[r * per_doc + k] = by_label[x]
        t = b
    return partners, state


@njit(cache=True)
def _loss2_table(n):
    """delta[k] = 1/log2(1 + k) - 1/log2(2 + k) for k = 1..n-1 (delta[0] = 0)."""
    dd = np.zeros(max(n, 1))
    for k in range(1, n):
        dd[k] = 1.0 / math.log2(1.0 + k) - 1.0 / math.log2(2.0 + k)
    return dd


@njit(cache=True, inline="always")
def weighted_delta(wcode, form, a, b, aux, norm, first, second, dd, mu):
    """The weight of the pair at positions a < b of a prepared list: its |dM| (``delta``)
    or its LambdaLoss weight (nDCG rows: aux[0] gains, aux[1] = 1/log2(r + 2))."""
    if wcode == W_DELTA:
        return delta(form, a, b, aux, norm, first, second)
    gain_diff = abs(aux[0, a] - aux[0, b])
    if wcode == W_LOSS2:
        return gain_diff * dd[b - a] * norm
    if wcode == W_LOSS2PP:
        return gain_diff * (abs(aux[1, a] - aux[1, b]) + mu * dd[b - a]) * norm
    raise ValueError("weighted_delta: unknown weighting code")


@njit(cache=True, inline="always")
def _one_pair(i, j, form, wcode, ranked, ref, weigh, curve, out, by_score, hess_mode, exp_mode):
    """Add the pair of (unperturbed) positions i and j, weighed at positions pos[i] and
    pos[j] of the prepared list (``ranked`` = (s, lab, e, aux), ``ref`` = (norm, first,
    second)); ``weigh`` = (pos, dd, mu); ``curve`` = (sigma, eps); returns its share of S."""
    s, lab, e, aux = ranked
    norm, first, second = ref
    pos, dd, mu = weigh
    sigma, eps = curve
    g, h = out
    pi = pos[i]
    pj = pos[j]
    dm = weighted_delta(wcode, form, min(pi, pj), max(pi, pj), aux, norm, first, second, dd, mu)
    if dm == 0.0:
        return 0.0
    if lab[i] > lab[j]:
        hi, lo = i, j
    else:
        hi, lo = j, i
    lam, hh = _pair_terms(dm, s[hi] - s[lo], e[hi], e[lo], sigma, eps, None, False, by_score, hess_mode, exp_mode)
    return _add_pair(g, h, hi, lo, lam, hh)


@njit(cache=True, inline="always")
def _generic_loop(pairs, form, wcode, ranked, ref, weigh, top, curve, out, by_score, hess_mode, exp_mode):
    """The pair loop of ``_pairs_generic``, inlined at call sites whose flags are literals;
    ``pairs`` = (pair_code, partners, per_doc)."""
    pair_code, partners, per_doc = pairs
    n = ranked[0].shape[0]
    lab = ranked[1]
    total = 0.0
    if pair_code == PAIRS_MEAN:
        for i in range(n):
            for t in range(i * per_doc, (i + 1) * per_doc):
                j = partners[t]
                if j >= 0:
                    total += _one_pair(i, j, form, wcode, ranked, ref, weigh, curve, out, by_score, hess_mode,
                                       exp_mode)
        return total
    for i in range(top):
        for j in range(i + 1, n):
            if lab[i] != lab[j]:
                total += _one_pair(i, j, form, wcode, ranked, ref, weigh, curve, out, by_score, hess_mode,
                                   exp_mode)
    return total


@njit(cache=True, inline="always")
def _delta_loop(pairs, form, ranked, ref, weigh, top, curve, out, by_score):
    """``_generic_loop`` of the plain delta of one (literal) form with e-ratios and
    LightGBM's hessian, its score normalisation a literal too."""
    if by_score:
        return _generic_loop(pairs, form, W_DELTA, ranked, ref, weigh, top, curve, out, True, HESS_LIGHTGBM,
                             EXP_RATIO)
    return _generic_loop(pairs, form, W_DELTA, ranked, ref, weigh, top, curve, out, False, HESS_LIGHTGBM,
                         EXP_RATIO)


@njit(cache=True)
def _pairs_generic(pairs, form, wcode, ranked, ref, weigh, top, curve, out, by_score, hess_mode, exp_mode):
    """Every pair of the pair set (``topk``: i < top, j > i of different labels; ``mean``:
    the drawn partners), any metric and weighting, one weight per pair.  Returns S.
    Arguments as ``_one_pair``'s; ``pairs`` = (pair_code, partners, per_doc).

    The common settings (the plain delta of the product or prefix form, e-ratios,
    LightGBM's hessian) get their own compiled loop with literal flags, as in
    ``_kernels._pairs_linear``: with runtime flags the per-pair calls stay calls (with
    their branches and reference counting) and a pair costs several times more."""
    if wcode == W_DELTA and exp_mode == EXP_RATIO and hess_mode == HESS_LIGHTGBM:
        if form == PRODUCT:
            return _delta_loop(pairs, PRODUCT, ranked, ref, weigh, top, curve, out, by_score)
        if form == PREFIX:
            return _delta_loop(pairs, PREFIX, ranked, ref, weigh, top, curve, out, by_score)
    return _generic_loop(pairs, form, wcode, ranked, ref, weigh, top, curve, out, by_score, hess_mode, exp_mode)


@njit(cache=True, inline="always", error_model="numpy", fastmath=_FAST_MATH)
def _loss2_loop(ranked, dd, c_rho, c_delta, norm, top, sigma, eps, out, by_score, hess_mode, one_div=False):
    """``_kernels._linear_loop`` with the LambdaLoss weight |G_i - G_j| (c_rho rho_ij +
    c_delta delta_ij) norm; branch-free (equal gains weigh 0), vectorisable: delta_ij is
    the contiguous load dd[j - i]."""
    s, lab, e, aux = ranked
    g, h = out
    un = np.uint64(s.shape[0])
    total = 0.0
    for i in range(top):
        ui = np.uint64(i)
        li = lab[i]
        si = s[i]
        ei = e[i]
        ai = aux[0, i]
        wi = aux[1, i]
        gi = 0.0
        hi = 0.0
        for j in range(np.uint64(i + 1), un):
            dm = abs(ai - aux[0, j]) * (c_rho * abs(wi - aux[1, j]) + c_delta * dd[j - ui]) * norm
            sl, hh, lam = _linear_pair(dm, (li, si, ei), (lab[j], s[j], e[j]), sigma, eps, None, by_score, hess_mode,
                                       one_div)
            gi -= sl
            hi += hh
            total += 2.0 * lam
            g[j] += sl
            h[j] += hh
        g[i] += gi
        h[i] += hi
    return total


@njit(cache=True, error_model="numpy", fastmath=_FAST_MATH)
def _pairs_loss2(ranked, dd, c_rho, c_delta, norm, top, sigma, eps, out, by_score, hess_mode):
    """``_loss2_loop`` with literal flags for the common settings (as ``_pairs_linear``)."""
    s = ranked[0]
    if hess_mode == HESS_LIGHTGBM and by_score and sigma * (s[0] - s[s.shape[0] - 1]) < 300.0:
        return _loss2_loop(ranked, dd, c_rho, c_delta, norm, top, sigma, eps, out, True, HESS_LIGHTGBM, True)
    if hess_mode == HESS_LIGHTGBM and by_score:
        return _loss2_loop(ranked, dd, c_rho, c_delta, norm, top, sigma, eps, out, True, HESS_LIGHTGBM)
    if hess_mode == HESS_LIGHTGBM:
        return _loss2_loop(ranked, dd, c_rho, c_delta, norm, top, sigma, eps, out, False, HESS_LIGHTGBM)
    return _loss2_loop(ranked, dd, c_rho, c_delta, norm, top, sigma, eps, out, by_score, hess_mode)


@njit(cache=True, inline="always", error_model="numpy", fastmath=_FAST_MATH)
def _mean_loop(partners, per_doc, ranked, norm, sigma, eps, out, product, by_score, hess_mode, one_div=False):
    """The drawn pairs of ``mean`` under the plain delta of the product or prefix form:
    position r with each of its partners, as the pair (a, b) = (min, max) of the two
    positions through ``_kernels._linear_pair`` (scalar arguments, no per-pair call left
    after inlining).  Returns S."""
    s, lab, e, aux = ranked
    g, h = out
    total = 0.0
    for r in range(s.shape[0]):
        for t in range(r * per_doc, (r + 1) * per_doc):
            x = partners[t]
            if x < 0:
                continue
            a, b = (r, x) if r < x else (x, r)
            sl, hh, lam = _linear_pair(linear_delta(aux, a, b, norm, product), (lab[a], s[a], e[a]),
                                       (lab[b], s[b], e[b]), sigma, eps, None, by_score, hess_mode, one_div)
            g[a] -= sl
            g[b] += sl
            h[a] += hh
            h[b] += hh
            total += 2.0 * lam
    return total


@njit(cache=True, error_model="numpy", fastmath=_FAST_MATH)
def _pairs_mean(partners, per_doc, ranked, norm, sigma, eps, out, product, by_score, hess_mode):
    """``_mean_loop`` with literal flags for the common settings (as ``_pairs_linear``)."""
    s = ranked[0]
    if hess_mode == HESS_LIGHTGBM and by_score and sigma * (s[0] - s[s.shape[0] - 1]) < 300.0:
        if product:
            return _mean_loop(partners, per_doc, ranked, norm, sigma, eps, out, True, True, HESS_LIGHTGBM, True)
        return _mean_loop(partners, per_doc, ranked, norm, sigma, eps, out, False, True, HESS_LIGHTGBM, True)
    if hess_mode == HESS_LIGHTGBM and not by_score:
        if product:
            return _mean_loop(partners, per_doc, ranked, norm, sigma, eps, out, True, False, HESS_LIGHTGBM)
        return _mean_loop(partners, per_doc, ranked, norm, sigma, eps, out, False, False, HESS_LIGHTGBM)
    return _mean_loop(partners, per_doc, ranked, norm, sigma, eps, out, product, by_score, hess_mode)


@njit(cache=True, error_model="numpy")
def _logit_noise(state, n, noise):
    """One logistic draw log(u / (1 - u)) per item, in input order; returns the state.
    Draw t is ``_uniform``'s (t + 1)-th step from ``state`` written in closed form,
    mix(state + (t + 1) * golden), so that the draws do not wait on each other."""
    state = np.uint64(state)
    for t in range(n):
        u = _unit(_mix(state + np.uint64(t + 1) * _GOLDEN))
        noise[t] = math.log(u / (1.0 - u))
    return state + np.uint64(n) * _GOLDEN


#: the most items one bucket of ``stable_argsort`` may hold before it falls back to mergesort
BUCKET_CAP = 16


@njit(cache=True, inline="always")
def stable_argsort(x, perm, key, start):
    """``perm`` = ``np.argsort(x, kind="mergesort")`` (ascending, stable), in expected O(n)
    for the continuous values a noise sample gives; ``key`` (n ints) and ``start`` (n + 1
    ints) are work space.

    A bucket sort: n equal-width buckets over [min x, max x], items placed bucket by bucket
    in input order (a counting sort, stable), then an insertion sort that moves an item
    past strictly greater ones only (stable).  The bucket of a value is a non-decreasing
    function of it, so items never leave their bucket and the insertion sort costs the sum
    of the squared bucket sizes; a bucket above ``BUCKET_CAP`` (an outlier squeezing the
    rest together, or many ties) sends the list to numba's mergesort, so the cost stays
    O(n) or O(n log n).  Measured against mergesort on perturbed lists of 60-180 items:
    about 3x faster (docs/objectives.md)."""
    n = x.shape[0]
    lo = x[0]
    hi = x[0]
    for k in range(1, n):
        v = x[k]
        if v < lo:
            lo = v
        if v > hi:
            hi = v
    for b in range(n + 1):
        start[b] = 0
    if not hi > lo:  # all equal: the input order
        for k in range(n):
            perm[k] = k
        return
    width = hi - lo
    scale = n / width
    if not (width < math.inf and scale < math.inf):  # a range too wide or too narrow for floats
        perm[:] = np.argsort(x, kind="mergesort")
        return
    for k in range(n):
        b = min(int((x[k] - lo) * scale), n - 1)
        key[k] = b
        start[b + 1] += 1
    for b in range(n):
        if start[b + 1] > BUCKET_CAP:
            perm[:] = np.argsort(x, kind="mergesort")
            return
        start[b + 1] += start[b]
    for k in range(n):
        b = key[k]
        perm[start[b]] = k
        start[b] += 1
    for k in range(1, n):
        cur = perm[k]
        v = x[cur]
        j = k
        while j > 0 and x[perm[j - 1]] > v:
            perm[j] = perm[j - 1]
            j -= 1
        perm[j] = cur


@njit(cache=True)
def argsort_stable(x):
    """``stable_argsort`` of ``x`` into new arrays (for tests)."""
    n = x.shape[0]
    perm = np.empty(n, dtype=np.int64)
    if n > 0:
        stable_argsort(x, perm, np.empty(n, dtype=np.int64), np.empty(n + 1, dtype=np.int64))
    return perm


@njit(cache=True)
def list_gradients_weighted(scores, labels, cfg, scale, wcfg, state, grad, hess):
    """Gradients and hessians of one list under a weighting, noise and pair method (module
    docstring), written into ``grad`` and ``hess``; ``cfg`` is the call's
    ``_settings.Settings`` (its bounding code unused), ``wcfg`` its ``_settings.Weighting``,
    ``state`` the list's generator state.  ``scale`` multiplies every weight (linear
    bounding; 1 without)."""
    metric, form, p, sigma, trunc, eps = cfg.metric, cfg.form, cfg.p, cfg.sigma, cfg.trunc, cfg.eps
    gain_code, threshold, hess_mode = cfg.gain_code, cfg.threshold, cfg.hess_mode
    wcode, mu, n_samples, pair_code, per_doc = wcfg
    n = scores.shape[0]
    for r in range(n):
        grad[r] = 0.0
        hess[r] = 0.0
    if n < 2:
        return
    if form != PRODUCT and form != PREFIX and form != FIRST and form != CASCADE:
        raise ValueError("list_gradients_weighted: unknown swap-delta form")
    order, s, lab, aux, norm, first, second, by_score, top = ranked_list(scores, labels, metric, gain_code,
                                                                         threshold, p, trunc, cfg.score_norm)
    unscaled = norm
    norm *= scale
    if norm == 0.0:
        return
    g = np.zeros(n)
    h = np.zeros(n)
    e, per_pair_exp = exp_ratios(s, sigma, cfg.table)
    exp_mode = (EXP_TABLE if cfg.table else EXP_PAIR) if per_pair_exp else EXP_RATIO
    dd = _loss2_table(n) if wcode != W_DELTA else np.zeros(1)
    partners = np.empty(0, dtype=np.int64)
    if pair_code == PAIRS_MEAN:
        partners, state = sample_partners(lab, per_doc, state)
    pos = np.arange(n)
    ranked = (s, lab, e, aux)
    pairs = (pair_code, partners, per_doc)
    if n_samples == 0:
        if pair_code == PAIRS_MEAN and wcode == W_DELTA and (form == PRODUCT or form == PREFIX) \
                and not per_pair_exp:
            total = _pairs_mean(partners, per_doc, ranked, norm, sigma, eps, (g, h), form == PRODUCT, by_score,
                                hess_mode)
        elif pair_code == PAIRS_TOPK and wcode != W_DELTA and not per_pair_exp:
            c_rho = 1.0 if wcode == W_LOSS2PP else 0.0
            c_delta = mu if wcode == W_LOSS2PP else 1.0
            total = _pairs_loss2(ranked, dd, c_rho, c_delta, norm, top, sigma, eps, (g, h), by_score, hess_mode)
        else:
            total = _pairs_generic(pairs, form, wcode, ranked, (norm, first, second), (pos, dd, mu), top, (sigma, eps),
                                   (g, h), by_score, hess_mode, exp_mode)
    else:
        noise = np.empty(n)
        perturbed = np.empty(n)
        perm = np.empty(n, dtype=np.int64)
        key = np.empty(n, dtype=np.int64)
        start = np.empty(n + 1, dtype=np.int64)
        linear = pair_code == PAIRS_TOPK and wcode == W_DELTA and form == PRODUCT and not per_pair_exp
        # a product form's row 1 is a function of the position only (1/log2(r + 2), p**r)
        # and its normaliser one of the labels only: a perturbed ranking needs no new
        # preparation, only row 1 read at each item's perturbed position
        by_position = aux[1].copy()
        norm_p = unscaled * (scale / n_samples)
        total = 0.0
        for _ in range(n_samples):
            state = _logit_noise(state, n, noise)
            for r in range(n):  # negated: the ascending sort ranks by descending perturbed score
                perturbed[r] = -(s[r] + noise[order[r]])
            stable_argsort(perturbed, perm, key, start)
            if linear:
                # item perm[k] is at perturbed position k; the vectorised loop of the plain
                # weights then runs unchanged
                for k in range(n):
                    aux[1, perm[k]] = by_position[k]
                total += _pairs_linear(ranked, norm_p, top, sigma, by_score, eps, hess_mode,
                                       DistPoint(False, dd, 0.0, 0.0, 0.0), True, (g, h))
            else:
                for k in range(n):
                    pos[perm[k]] = k
                aux_p = np.empty((N_ROWS, n))
                norm_p, first_p, second_p = prepare(metric, lab[perm], gain_code, threshold, p, trunc, aux_p)
                norm_p *= scale / n_samples
                total += _pairs_generic(pairs, form, wcode, (s, lab, e, aux_p), (norm_p, first_p, second_p),
                                        (pos, dd, mu), top, (sigma, eps), (g, h), by_score, hess_mode,
                                        exp_mode)
    if cfg.list_norm and pair_code == PAIRS_MEAN:
        scatter(order, g, h, 1.0 / per_doc, grad, hess)
    else:
        scatter(order, g, h, list_factor(cfg.list_norm, total), grad, hess)


@njit(parallel=True, cache=True)
def _all_weighted(scores, labels, ptr, cfg, scale, wcfg, seed, key):
    """Every list, in parallel; list q draws from ``list_state(seed, key, q)``."""
    n = scores.shape[0]
    grad = np.empty(n)
    hess = np.empty(n)
    for q in prange(ptr.shape[0] - 1):
        a, b = ptr[q], ptr[q + 1]
        list_gradients_weighted(scores[a:b], labels[a:b], cfg, scale[q], wcfg, list_state(seed, key, q), grad[a:b],
                                hess[a:b])
    return grad, hess


def weighted_gradients(scores, labels, ptr, metric, form, p, sigma, trunc, score_norm, eps, list_norm, hess_mode,
                       table, gain_code, threshold, scale, wcode, mu, n_samples, pair_code, per_doc, seed):
    """:func:`_all_weighted` with every argument cast to the one type its compiled
    specialisation takes; ``seed`` is a non-negative integer below 2**64.  The score key is
    computed here (``score_key``); the hessian mode as ``_kernels.kernel_hessian`` maps it."""
    s = _c_float64(scores)
    key = score_key(s)
    mode, factor = kernel_hessian(hess_mode, sigma)
    cfg = settings(metric, form, p, sigma, trunc, score_norm, eps, list_norm, mode, table, gain_code, threshold, 0)
    wcfg = Weighting(int(wcode), float(mu), int(n_samples), int(pair_code), int(per_doc))
    grad, hess = _all_weighted(s, _c_float64(labels), np.ascontiguousarray(ptr, dtype=np.int64), cfg,
                               _c_float64(scale), wcfg, np.uint64(seed), np.uint64(key))
    if factor != 1.0:
        hess *= factor
    return grad, hess
