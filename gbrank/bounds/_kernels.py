"""Numba kernels of the bounds: one list *shape* at a time, and parallel loops over shapes.

A shape is the multiset of per-item values a metric sees, stored sorted in descending
order (``vals``): the binary relevance of each item (AP, RR, nRBP and the nRBP loss,
``1.0`` for a label at or above the threshold) or the graded gain of each item (nDCG).
Whether a metric is graded and which way is better are the record's ``graded`` and
``higher_is_better``, handed in by the Python caller as the flags ``graded`` and ``higher``
(a kernel cannot read the record); the code only picks the metric's formula.
Every metric value comes from the kernels of ``gbrank.metrics`` (one definition per
metric): the maximum and minimum are the values of the best and the worst order, and the
expectation over the n! orders is the kernels' tie average with the whole list as one tie
group (McSherry & Najork 2008), which ``tests/test_bounds.py`` checks against the closed
forms of docs/bounds.md and against every order of small lists.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..metrics import (
    AP_DIV_R,
    METRICS,
    average_precision,
    dcg,
    ideal_dcg,
    nrbp_loss,
    rbp,
    reciprocal_rank,
)
from .._jit import STRICT, KernelFamily, jit_variant, kernel_variants

#: the kernel codes of the families whose formulas are dispatched here
NDCG, AP, RR, NRBP, NRBP_LOSS = (METRICS[n].code for n in ("ndcg", "ap", "rr", "nrbp", "nrbp_loss"))

# a sigmoid term with |a (x - d)| >= SIGMOID_CUT is 0 or 1 to within exp(-40) < 5e-18
SIGMOID_CUT = 40.0
# two metric values closer than this (relative to max(1, |value|)) are one value of D
UNIQUE_RTOL = 1e-12
#: in a kernel variant's key: the metric code is read from the argument at run time
ANY = -1


def _normaliser_template(metric_code):
    """``normaliser`` for one metric code (``ANY``: every code); see ``_value_of_order_template``."""
    ON_NDCG, ON_NRBP = (metric_code in (ANY, c) for c in (NDCG, NRBP))

    def normaliser(code, vals, k, p):
        """The constant a metric value is divided by: IDCG@k (nDCG), the ideal RBP (nRBP), 1."""
        if ON_NDCG and code == NDCG:
            return ideal_dcg(vals, k)
        if ON_NRBP and code == NRBP:
            return rbp(vals, np.arange(vals.shape[0] + 1), p)  # vals are in the ideal order
        return 1.0

    return normaliser


def _value_of_order_template(metric_code):
    """``value_of_order`` for one metric code (``ANY``: every code): the other metrics'
    branches are pruned before typing, so a variant compiles its own metric kernel only
    (``gbrank._jit.jit_variant``)."""
    ON_NDCG, ON_AP, ON_RR, ON_NRBP, ON_NRBP_LOSS = (metric_code in (ANY, c) for c in (NDCG, AP, RR, NRBP, NRBP_LOSS))

    def value_of_order(code, order_vals, groups, k, p, norm, n_rel):
        """Metric value of one order (tie-averaged over ``groups``), from gbrank's kernels.

        ``groups`` are tie-group boundaries: ``arange(n + 1)`` for one fixed order, any
        grouping of *equal* values (every order within a group is then the same order), or
        ``[0, n]`` for the expectation over all orders.  nDCG is whole-list DCG / IDCG@k
        (``norm``; ``gbrank.metrics.dcg_over_ideal``, with the ideal computed once per shape).
        """
        if ON_NDCG and code == NDCG:
            return dcg(order_vals, groups, 0) / norm
        if ON_AP and code == AP:
            return average_precision(order_vals, groups, 0, AP_DIV_R)
        if ON_RR and code == RR:
            return reciprocal_rank(order_vals, groups, 0)
        if ON_NRBP and code == NRBP:
            return rbp(order_vals, groups, p) / norm
        if ON_NRBP_LOSS and code == NRBP_LOSS:
            return nrbp_loss(order_vals, groups)
        raise ValueError("value_of_order: gbrank.bounds has no bounds for this metric code")

    return value_of_order


normaliser = njit(cache=True)(_normaliser_template(ANY))
value_of_order = njit(cache=True)(_value_of_order_template(ANY))


@njit(cache=True)
def summary(code, graded, higher, vals, k, p):
    """(minimum, maximum, expectation, n_rel) of one shape; zeros when R = 0 or n = 0.

    The maximum and the minimum are the metric of the best order (``vals`` descending) and
    of the worst order (ascending), swapped when lower is better (``higher`` False); the
    expectation is the metric averaged over all orders (the whole list as one tie group).
    ``graded``: ``vals`` are gains and R counts the positive ones, else binary relevance.
    """
    n = vals.shape[0]
    n_rel = float((vals > 0.0).sum()) if graded else vals.sum()
    if n == 0 or n_rel == 0.0:
        return 0.0, 0.0, 0.0, n_rel
    norm = normaliser(code, vals, k, p)
    best = value_of_order(code, vals, np.arange(n + 1), k, p, norm, n_rel)
    worst = value_of_order(code, vals[::-1].copy(), np.arange(n + 1), k, p, norm, n_rel)
    mean = value_of_order(code, vals, np.array([0, n]), k, p, norm, n_rel)
    if not higher:  # a loss: the best order is its minimum
        return best, worst, mean, n_rel
    return worst, best, mean, n_rel


def _summaries_template(metric_code):
    """The parallel loop of ``summaries`` for one metric code (a closure cell: numba's
    on-disk cache keeps one entry per code)."""
    CODE = metric_code

    def summaries(code, graded, higher, flat, ptr, k, p):
        """``summary`` of every shape ``flat[ptr[s]:ptr[s+1]]``: array [n_shapes, 4]."""
        if code != CODE:
            raise ValueError("summaries: called with another metric code than its variant's")
        n_shapes = ptr.shape[0] - 1
        out = np.empty((n_shapes, 4))
        for s in prange(n_shapes):
            lo, hi, mean, n_rel = summary(code, graded, higher, flat[ptr[s]:ptr[s + 1]], k, p)
            out[s, 0] = lo
            out[s, 1] = hi
            out[s, 2] = mean
            out[s, 3] = n_rel
        return out

    return summaries


def _metric_callees(code: int) -> dict:
    """The variants of ``normaliser`` and ``value_of_order`` for one metric code."""
    tag = f"metric_{code}"
    return {"normaliser": jit_variant(_normaliser_template(code), tag, {}),
            "value_of_order": jit_variant(_value_of_order_template(code), tag, {})}


@kernel_variants
def summaries_kernel(code: int):
    """``summaries`` compiled for one metric code (its kernels only)."""
    per_shape = jit_variant(summary.py_func, f"metric_{code}", {}, **_metric_callees(code))
    return jit_variant(_summaries_template(code), f"metric_{code}", {"parallel": True, "cache": True},
                       summary=per_shape)


def summaries(code, graded, higher, flat, ptr, k, p):
    """``summary`` of every shape ``flat[ptr[s]:ptr[s+1]]``: array [n_shapes, 4], through the
    variant of ``code`` (``summaries_kernel``); ``graded`` and ``higher`` are the record's
    ``graded`` and ``higher_is_better``."""
    return summaries_kernel(int(code))(code, bool(graded), bool(higher), flat, ptr, k, p)


summaries = KernelFamily(summaries, summaries_kernel)


# ----------------------------------------------------------------------------------------
# distributions


@njit(cache=True)
def _next_permutation(a):
    """Next lexicographic permutation of ``a`` in place; False after the last one.
    Starting from ascending order it visits every *distinct* arrangement of a multiset once."""
    n = a.shape[0]
    i = n - 2
    while i >= 0 and a[i] >= a[i + 1]:
        i -= 1
    if i < 0:
        return False
    j = n - 1
    while a[j] <= a[i]:
        j -= 1
    a[i], a[j] = a[j], a[i]
    lo, hi = i + 1, n - 1
    while lo < hi:
        a[lo], a[hi] = a[hi], a[lo]
        lo += 1
        hi -= 1
    return True


@njit(cache=True)
def _splitmix64(state):
    """One step of splitmix64 (Steele, Lea & Flood 2014): (new state, 64 random bits)."""
    state = state + np.uint64(0x9E3779B97F4A7C15)
    z = state
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return state, z ^ (z >> np.uint64(31))


@njit(cache=True)
def _below(state, m):
    """(new state, a uniform integer in [0, m)) for m < 2**32: the high 32 random bits times
    m, shifted down 32 bits (Lemire 2019; bias below m / 2**32)."""
    state, z = _splitmix64(state)
    return state, np.int64(((z >> np.uint64(32)) * np.uint64(m)) >> np.uint64(32))


@njit(cache=True)
def _runs(order, out):
    """Boundaries of the runs of equal values of ``order`` into ``out``; returns their count.

    Items of one run are interchangeable, so the tie-averaging kernels of gbrank.metrics
    give, with these boundaries, exactly the value of the fixed order, while looping over
    runs instead of items (a binary list has at most 2 min(R, n - R) + 1 runs).
    """
    n = order.shape[0]
    out[0] = 0
    m = 1 if n > 0 else 0
    for r in range(1, n):  # branch-free: on a random order a branch would mispredict often
        out[m] = r
        m += np.int64(order[r] != order[r - 1])
    out[m] = n
    return m


@njit(cache=True)
def _runs_of_positions(chosen, n, out):
    """Run boundaries of a binary order whose minority value sits at ``chosen`` (sorted here
    in place by insertion, O(len(chosen)^2), with no pass over all n items); returns the count."""
    m = chosen.shape[0]
    for i in range(1, m):
        v = chosen[i]
        j = i - 1
        while j >= 0 and chosen[j] > v:
            chosen[j + 1] = chosen[j]
            j -= 1
        chosen[j + 1] = v
    g = 0
    out[0] = 0
    i = 0
    while i < m:
        start = chosen[i]
        while i + 1 < m and chosen[i + 1] == chosen[i] + 1:
            i += 1
        stop = chosen[i] + 1
        if start > 0:
            g += 1
            out[g] = start
        if stop < n:
            g += 1
            out[g] = stop
        i += 1
    g += 1
    out[g] = n
    return g


@njit(cache=True)
def raw_values(code, graded, vals, k, p, exact, n_draws, seed, out):
    """Metric values of ``n_draws`` orders of one shape into ``out[:n_draws]``.

    exact: every distinct arrangement of the multiset ``vals`` once (``n_draws`` must be
    their number, C(n, R) or the multinomial coefficient), in lexicographic order;
    otherwise ``n_draws`` orders drawn uniformly at random with splitmix64 seeded by
    ``seed``: for a binary shape a uniform set of min(R, n - R) positions (partial
    Fisher-Yates); for graded gains a uniform set of positions for the positive gains and
    a uniform shuffle of those gains among them (zero gains fill the rest).  ``graded``: the
    record's ``graded`` (gains, else binary relevance).
    """
    n = vals.shape[0]
    binary = not graded
    n_rel = vals.sum() if binary else float((vals > 0.0).sum())
    norm = normaliser(code, vals, k, p)
    order = vals[::-1].copy()  # ascending: the first arrangement in lexicographic order
    runs = np.empty(n + 1, dtype=np.int64)
    if exact:
        for d in range(n_draws):
            m = _runs(order, runs)
            out[d] = value_of_order(code, order, runs[:m + 1], k, p, norm, n_rel)
            _next_permutation(order)
        return
    state = np.uint64(seed)
    if binary:
        r = int(n_rel)
        few = min(r, n - r)
        fill = 1.0 if few == r else 0.0  # the value of the `few` drawn positions
        order[:] = 1.0 - fill
        pos = np.arange(n)
        chosen = np.empty(few, dtype=np.int64)
        for d in range(n_draws):
            for i in range(few):
                state, j = _below(state, n - i)
                j += i
                pos[i], pos[j] = pos[j], pos[i]
                order[pos[i]] = fill
                chosen[i] = pos[i]
            if few * few > 4 * n:  # sorting the drawn positions would cost more than a scan
                m = _runs(order, runs)
            else:
                m = _runs_of_positions(chosen, n, runs)
            out[d] = value_of_order(code, order, runs[:m + 1], k, p, norm, n_rel)
            for i in range(few):
                order[chosen[i]] = 1.0 - fill
        return
    # graded: a uniform arrangement of the multiset is a uniform set of positions for the
    # n_pos positive gains (partial Fisher-Yates) holding a uniform shuffle of those gains
    n_pos = int(n_rel)
    positive = vals[:n_pos].copy()
    pos = np.arange(n)
    order[:] = 0.0
    for d in range(n_draws):
        for i in range(n_pos - 1, 0, -1):
            state, j = _below(state, i + 1)
            positive[i], positive[j] = positive[j], positive[i]
        for i in range(n_pos):
            state, j = _below(state, n - i)
            j += i
            pos[i], pos[j] = pos[j], pos[i]
            order[pos[i]] = positive[i]
        m = _runs(order, runs)
        out[d] = value_of_order(code, order, runs[:m + 1], k, p, norm, n_rel)
        for i in range(n_pos):
            order[pos[i]] = 0.0


@njit(cache=True)
def compact(values, counts):
    """Sort ``values`` in place and merge equal ones (within UNIQUE_RTOL) at the front.

    Writes the distinct values to ``values[:u]`` and how many draws gave each to
    ``counts[:u]``; returns u.
    """
    values.sort()
    u = 0
    for i in range(values.shape[0]):
        v = values[i]
        if u > 0 and v - values[u - 1] <= UNIQUE_RTOL * max(1.0, abs(v)):
            counts[u - 1] += 1.0
        else:
            values[u] = v
            counts[u] = 1.0
            u += 1
    return u


def _distributions_template(metric_code):
    """The parallel loop of ``distributions`` for one metric code (a closure cell)."""
    CODE = metric_code

    def distributions(code, graded, flat, ptr, k, p, exact, n_draws, seeds, out_ptr, out_values, out_counts):
        """Distribution of every shape: sorted distinct values and how many draws gave each.

        Shape s writes into ``out_values[out_ptr[s]:out_ptr[s+1]]`` (length ``n_draws[s]``);
        returns the number of distinct values of each shape (its first entries hold them).
        """
        if code != CODE:
            raise ValueError("distributions: called with another metric code than its variant's")
        n_shapes = ptr.shape[0] - 1
        n_unique = np.empty(n_shapes, dtype=np.int64)
        for s in prange(n_shapes):
            a, b = out_ptr[s], out_ptr[s + 1]
            seg = out_values[a:b]
            raw_values(code, graded, flat[ptr[s]:ptr[s + 1]], k, p, exact[s], n_draws[s], seeds[s], seg)
            n_unique[s] = compact(seg, out_counts[a:b])
        return n_unique

    return distributions


@kernel_variants
def distributions_kernel(code: int):
    """``distributions`` compiled for one metric code (its kernels only)."""
    per_shape = jit_variant(raw_values.py_func, f"metric_{code}", {}, **_metric_callees(code))
    return jit_variant(_distributions_template(code), f"metric_{code}", {"parallel": True, "cache": True},
                       raw_values=per_shape)


def distributions(code, graded, flat, ptr, k, p, exact, n_draws, seeds, out_ptr, out_values, out_counts):
    """Distribution of every shape (the variant of ``code``: ``distributions_kernel``):
    sorted distinct values and how many draws gave each.  Shape s writes into
    ``out_values[out_ptr[s]:out_ptr[s+1]]`` (length ``n_draws[s]``); returns the number of
    distinct values of each shape (its first entries hold them).  ``graded``: the record's."""
    return distributions_kernel(int(code))(code, bool(graded), flat, ptr, k, p, exact, n_draws, seeds, out_ptr,
                                           out_values, out_counts)


distributions = KernelFamily(distributions, distributions_kernel)


# ----------------------------------------------------------------------------------------
# the smoothed CDF (thesis Algorithm 2, Eq 3.13) and its grid table


@njit(cache=True)
def _sigmoid(z):
    if z >= 0.0:
        return 1.0 / (1.0 + np.exp(-z))
    e = np.exp(z)
    return e / (1.0 + e)


@njit(cache=True)
def smooth_cdf(values, cum_weights, a, x):
    """F~(x) = sum_j w_j sigmoid(a (x - d_j)) over sorted distinct values d_j.

    ``cum_weights[i]`` is the total weight of ``values[:i]`` (length u + 1).  Terms with
    |a (x - d)| >= SIGMOID_CUT are taken as exactly 1 or 0, so each query costs
    O(log u + the values within SIGMOID_CUT / a of x).  ``a <= 0`` or a single value: the
    step function of Algorithm 1, F(x) = P(D <= x).
    """
    u = values.shape[0]
    if u == 1 or not a > 0.0:
        return cum_weights[np.searchsorted(values, x, side="right")]
    reach = SIGMOID_CUT / a
    lo = np.searchsorted(values, x - reach, side="right")  # values[:lo] count fully
    hi = np.searchsorted(values, x + reach, side="left")  # values[hi:] count nothing
    total = cum_weights[lo]
    for j in range(lo, hi):
        total += (cum_weights[j + 1] - cum_weights[j]) * _sigmoid(a * (x - values[j]))
    return min(max(total, 0.0), 1.0)


@njit(cache=True)
def smooth_cdf_many(values, cum_weights, a, xs):
    """``smooth_cdf`` at every point of ``xs``."""
    out = np.empty(xs.shape[0])
    for q in range(xs.shape[0]):
        out[q] = smooth_cdf(values, cum_weights, a, xs[q])
    return out


@njit(cache=True)
def fill_table(values, weights, a, x0, x1, row):
    """``row[g] = F~(x0 + g (x1 - x0) / (G - 1))``; a step at x0 when x1 <= x0 (all ones)."""
    G = row.shape[0]
    if not x1 > x0:
        row[:] = 1.0
        return
    cum = np.zeros(values.shape[0] + 1)
    for j in range(values.shape[0]):
        cum[j + 1] = cum[j] + weights[j]
    step = (x1 - x0) / (G - 1)
    for g in range(G):
        row[g] = smooth_cdf(values, cum, a, x0 + g * step)


@njit(parallel=True, cache=True)
def tables(values, weights, uptr, gains, x0, x1, G):
    """Grid table [n_shapes, G] of every shape's smoothed CDF."""
    n_shapes = uptr.shape[0] - 1
    out = np.empty((n_shapes, G))
    for s in prange(n_shapes):
        a, b = uptr[s], uptr[s + 1]
        fill_table(values[a:b], weights[a:b], gains[s], x0[s], x1[s], out[s])
    return out


@njit(cache=True, **STRICT)
def grid_interp(row, t):
    """F~ at grid coordinate ``t`` of one table row: linear interpolation between
    ``row[floor(t)]`` and the next point, ``t`` clamped to [0, G - 1] (the end values
    outside), branch-free so that a loop over pairs can vectorise it (left to LLVM's
    inliner: numba's IR-level ``inline="always"`` stops that vectorisation).  Exact at the grid
    points: (1 - f) row[j] + f row[j + 1] is row[j] at f = 0 and row[j + 1] at f = 1."""
    j, f = grid_cell(t, row.shape[0] - 1)
    return (1.0 - f) * row[j] + f * row[j + 1]


@njit(cache=True, **STRICT)
def grid_cell(t, cells):
    """(j, f): the cell j in [0, cells - 1] of grid coordinate ``t`` clamped to [0, cells],
    and the fraction f of the way through it (f = 1 only at the last grid point)."""
    t = min(max(t, 0.0), cells * 1.0)
    j = min(int(t), cells - 1)
    return j, t - j


@njit(cache=True)
def cdf_lookup(row, x0, x1, x):
    """F~(x) by linear interpolation in one grid row over [x0, x1], O(1).

    Queries outside [x0, x1] take the end values.  ``x1 <= x0`` (a degenerate list, one
    possible value) is the step function: 1.0 for x >= x0, else 0.0.  The grid
    coordinate of x is (x - x0) (G - 1) / (x1 - x0) (``grid_interp``).
    """
    if not x1 > x0:
        return 1.0 if x >= x0 else 0.0
    return grid_interp(row, (x - x0) * ((row.shape[0] - 1) / (x1 - x0)))


@njit(parallel=True, cache=True)
def cdf_lookup_lists(table, x0, x1, list_index, x):
    """``cdf_lookup`` of query q in the row of list ``list_index[q]``, for every query."""
    out = np.empty(x.shape[0])
    for q in prange(x.shape[0]):
        i = list_index[q]
        out[q] = cdf_lookup(table[i], x0[i], x1[i], x[q])
    return out
