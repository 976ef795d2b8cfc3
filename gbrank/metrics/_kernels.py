"""Numba kernels: one definition per metric, for one ranked list.

Every kernel takes a list already put in rank order plus the boundaries of its
*tie groups* (``groups``: group g occupies rank positions ``groups[g]`` to
``groups[g+1] - 1``, 0-based).  Within a tie group every order is equally likely,
and each kernel returns the exact expectation of the metric over those orders
(McSherry & Najork 2008).  With singleton groups (``groups = 0, 1, ..., n``) the
formula reduces to the plain metric of that fixed order, which is how the
"pessimistic", "optimistic" and "stable" tie policies, the swap deltas and the bounds
use them; with one group spanning the whole list it is the expectation over all n!
orders (``expectation``), which is how ``gbrank.bounds`` gets E[M].

One metric, one kernel here, one branch in ``metric_value`` (which raises on a code it
does not know) and one record in ``_record.py``: see CONTRIBUTING.md.

A kernel returns ``nan`` where the metric is undefined (its normaliser is zero);
the public wrappers replace that according to the ``empty`` policy, so ``nan``
never reaches a user.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .._jit import KernelFamily, compile_notice, jit_variant, kernel_variants
# the codes are defined once, in ``_record.py`` (``KERNEL_CODES``: every one of them); each
# name below is the code of one branch of ``metric_value``
from ._record import (AP, AUC, BPREF, DCG, ERR, F1, JUDGED, KERNEL_CODES, MAX_RANK, MEAN_RANK, NDCG, NRBP,
                      NRBP_LOSS, PREC, RBP, RBP_GRADED, RBP_RESIDUAL, RECALL, RPREC, RR, SUCCESS)

#: about how long a first call compiles with an empty cache (docs/speed.md, "First use")
EVALUATE_COMPILE_SECONDS = 3.0


GAIN_EXP, GAIN_LINEAR = 0, 1
TIES_AVERAGE, TIES_PESSIMISTIC, TIES_OPTIMISTIC, TIES_STABLE, TIES_KEY = 0, 1, 2, 3, 4
AP_DIV_R, AP_DIV_MIN_R_K = 0, 1


@njit(cache=True)
def gain(label, gain_code):
    """gain(l) = 2**l - 1 (``GAIN_EXP``) or l (``GAIN_LINEAR``)."""
    if gain_code == GAIN_EXP:
        return 2.0**label - 1.0
    return label


@njit(cache=True)
def discount(pos):
    """DCG discount of 0-based rank position ``pos``: 1 / log2(pos + 2)."""
    return 1.0 / np.log2(pos + 2.0)


@njit(cache=True)
def _group_sum(values, a, b):
    """Sum of ``values[a:b]``: one tie group's gains or relevant items."""
    total = 0.0
    for q in range(a, b):
        total += values[q]
    return total


@njit(cache=True)
def _cut(k, n):
    return n if k <= 0 or k > n else k


@njit(cache=True)
def _groups_before(groups, kk):
    """Number of tie groups that start above position ``kk`` (the ones a metric@k sees)."""
    return min(np.searchsorted(groups, kk), groups.shape[0] - 1)


@njit(cache=True)
def _expected_top(values, groups, k, discounted):
    """Expected sum over the top k (k <= 0: whole list) of ``values`` in rank order, each at
    position q weighted by ``discount(q)`` (``discounted``) or by 1, a tie group's sum spread
    evenly over its positions."""
    kk = _cut(k, values.shape[0])
    total = 0.0
    for g in range(_groups_before(groups, kk)):
        a, b = groups[g], groups[g + 1]
        sg = _group_sum(values, a, b)
        if sg == 0.0:
            continue
        if discounted:
            sd = 0.0
            for q in range(a, min(b, kk)):
                sd += discount(q)
        else:
            sd = float(min(b, kk) - a)
        total += sg * sd / (b - a)
    return total


@njit(cache=True)
def dcg(gains, groups, k):
    """Expected DCG@k (k <= 0: whole list) of gains in rank order."""
    return _expected_top(gains, groups, k, True)


@njit(cache=True)
def descending(values):
    """``values`` sorted from largest to smallest: the stable argsort the ranking kernels
    compile anyway (``rank_order``), rather than ``np.sort``, whose quicksort would be
    compiled as well (about 1.5 s of a first call with an empty cache)."""
    return values[np.argsort(-values, kind="mergesort")]


@njit(cache=True)
def ideal_dcg(gains, k):
    """DCG@k of the ideal order of ``gains`` (any order on input)."""
    ordered = descending(gains)
    kk = _cut(k, ordered.shape[0])
    total = 0.0
    for q in range(kk):
        total += ordered[q] * discount(q)
    return total


@njit(cache=True)
def ndcg(gains, groups, k):
    """nDCG@k = DCG@k / IDCG@k; nan without a positive gain."""
    idcg = ideal_dcg(gains, k)
    if idcg == 0.0:
        return np.nan
    return dcg(gains, groups, k) / idcg


@njit(cache=True)
def dcg_over_ideal(gains, groups, k):
    """Whole-list DCG / IDCG@k (k <= 0: nDCG): the nDCG whose change LambdaRank's truncated
    swap deltas weigh (LightGBM and XGBoost cut the ideal at the truncation level, not the
    DCG).  nan without a positive gain."""
    idcg = ideal_dcg(gains, k)
    if idcg == 0.0:
        return np.nan
    return dcg(gains, groups, 0) / idcg


@njit(cache=True)
def rbp(rel, groups, p):
    """Expected RBP(p) = (1 - p) * sum_r rel_r p**(r - 1)."""
    total = 0.0
    for g in range(groups.shape[0] - 1):
        a, b = groups[g], groups[g + 1]
        sg = _group_sum(rel, a, b)
        if sg != 0.0:
            # mean over the group's positions of (1 - p) p**q
            total += sg * (p**a - p**b) / (b - a)
    return total


@njit(cache=True)
def nrbp(rel, groups, p):
    """nRBP(p) = RBP / RBP(ideal order); for binary rel the ideal is 1 - p**R."""
    ideal = rbp(descending(rel), np.arange(rel.shape[0] + 1), p)
    if ideal == 0.0:
        return np.nan
    return rbp(rel, groups, p) / ideal


@njit(cache=True)
def _top_count(rel, groups, k):
    """Expected number of relevant items in the top k."""
    return _expected_top(rel, groups, k, False)


@njit(cache=True)
def precision(rel, groups, k):
    """P@k: relevant items in the top k over k (k, not n, even when n < k, as trec_eval)."""
    return _top_count(rel, groups, k) / k


@njit(cache=True)
def recall(rel, groups, k):
    n_rel = rel.sum()
    if n_rel == 0.0:
        return np.nan
    return _top_count(rel, groups, k) / n_rel


@njit(cache=True)
def average_precision(rel, groups, k, divisor_code):
    """Expected AP@k (k <= 0: whole list); divisor R or min(R, k)."""
    n = rel.shape[0]
    n_rel = rel.sum()
    if n_rel == 0.0:
        return np.nan
    kk = _cut(k, n)
    c = 0.0  # relevant items ranked above the current group
    total = 0.0
    for grp in range(_groups_before(groups, kk)):
        a, b = groups[grp], groups[grp + 1]
        m = b - a
        g = _group_sum(rel, a, b)
        if g > 0.0:
            # a relevant item of the group sits at offset j (1..m) with probability 1/m;
            # the other g - 1 relevant items of the group fill (j-1)(g-1)/(m-1) slots above it
            slope = (g - 1.0) / (m - 1.0) if m > 1 else 0.0
            s = 0.0
            for j in range(1, m + 1):
                if a + j > kk:
                    break
                s += (c + 1.0 + (j - 1) * slope) / (a + j)
            total += g / m * s
        c += g
    if divisor_code == AP_DIV_MIN_R_K and k > 0:
        return total / min(n_rel, float(k))
    return total / n_rel


@njit(cache=True)
def reciprocal_rank(rel, groups, k):
    """Expected 1 / (rank of the first relevant item); 0 when it lies below k."""
    n = rel.shape[0]
    kk = _cut(k, n)
    for grp in range(groups.shape[0] - 1):
        a, b = groups[grp], groups[grp + 1]
        g = _group_sum(rel, a, b)
        if g == 0.0:
            continue
        m = b - a
        # P(first relevant of the group at offset j) = C(m - j, g - 1) / C(m, g)
        prob = g / m
        total = 0.0
        last = m - int(g) + 1
        for j in range(1, last + 1):
            if a + j > kk:
                break
            total += prob / (a + j)
            if j < last:
                prob *= (m - j - g + 1.0) / (m - j)
        return total
    # no ranked relevant item: 0 when the list has relevant items the run did not rank
    return np.nan if rel.sum() == 0.0 else 0.0


@njit(cache=True)
def auc(rel, groups):
    """Fraction of (relevant, non-relevant) pairs in the right order; ties count 1/2.
    A list without non-relevant items has no pair to get wrong: 1.0."""
    n = rel.shape[0]
    n_rel = rel.sum()
    if n_rel == 0.0:
        return np.nan
    n_neg = n - n_rel
    if n_neg == 0.0:
        return 1.0
    neg_below = n_neg
    good = 0.0
    for grp in range(groups.shape[0] - 1):
        a, b = groups[grp], groups[grp + 1]
        g = _group_sum(rel, a, b)
        neg_here = (b - a) - g
        neg_below -= neg_here
        good += g * (neg_below + 0.5 * neg_here)
    return good / (n_rel * n_neg)


@njit(cache=True)
def mean_rank(rel, groups):
    """Expected mean 1-based rank of the relevant items."""
    n_rel = rel.sum()
    if n_rel == 0.0:
        return np.nan
    total = 0.0
    for grp in range(groups.shape[0] - 1):
        a, b = groups[grp], groups[grp + 1]
        g = _group_sum(rel, a, b)
        total += g * (a + 1 + b) / 2.0
    return total / n_rel


@njit(cache=True)
def max_rank(rel, groups):
    """Expected 1-based rank of the lowest relevant item."""
    for grp in range(groups.shape[0] - 2, -1, -1):
        a, b = groups[grp], groups[grp + 1]
        g = _group_sum(rel, a, b)
        if g > 0.0:
            m = b - a
            # expected maximum of g distinct positions drawn from 1..m
            return a + g * (m + 1.0) / (g + 1.0)
    return np.nan


@njit(cache=True)
def nrbp_loss(rel, groups):
    """The listwise nRBP loss of Li et al. (2021), Eq 19, of the (expected) order:
    sum over relevant items of (rank - 1), minus its ideal R (R - 1) / 2.  0 is the ideal
    order, R (n - R) the worst; nan without a relevant item."""
    n_rel = rel.sum()
    if n_rel == 0.0:
        return np.nan
    return n_rel * mean_rank(rel, groups) - n_rel * (n_rel + 1.0) / 2.0


@njit(cache=True)
def success(rel, groups, k):
    """P(a relevant item is in the top k) (k <= 0: whole list); nan without a relevant item.
    Groups above k without a relevant item add nothing; in the group that straddles k, with
    g relevant among m items and t of its places above k, no relevant item is on those t
    places with probability C(m - g, t) / C(m, t)."""
    n = rel.shape[0]
    if rel.sum() == 0.0:
        return np.nan
    kk = _cut(k, n)
    for grp in range(_groups_before(groups, kk)):
        a, b = groups[grp], groups[grp + 1]
        g = _group_sum(rel, a, b)
        if g == 0.0:
            continue
        m = b - a
        t = min(b, kk) - a
        none = 1.0
        for i in range(t):
            none *= max(m - g - i, 0.0) / (m - i)
        return 1.0 - none
    return 0.0


@njit(cache=True)
def r_precision(rel, groups):
    """P@R: relevant items in the top R over R (trec_eval ``Rprec``); nan when R = 0."""
    n_rel = rel.sum()
    if n_rel == 0.0:
        return np.nan
    return _top_count(rel, groups, int(n_rel)) / n_rel


@njit(cache=True)
def _bpref_term(x, n_rel, n_nonrel):
    """1 - min(x, R) / min(R, N) for a relevant item with x judged non-relevant items above
    it (1 when x = 0)."""
    if x == 0.0:
        return 1.0
    return 1.0 - min(x, n_rel) / min(n_rel, n_nonrel)


@njit(cache=True)
def bpref(rel, judged, groups):
    """bpref (Buckley & Voorhees 2004, trec_eval's form): (1/R) sum over ranked relevant
    items d of 1 - min(n_d, R) / min(R, N), n_d the judged non-relevant items ranked above
    d, N every judged non-relevant item of the list (ranked or not).  Unjudged items do not
    count.  Within a tie group of u judged non-relevant items, the number of them above a
    given relevant item is uniform on 0..u.  nan when R = 0."""
    n_rel = rel.sum()
    if n_rel == 0.0:
        return np.nan
    n_nonrel = judged.sum() - n_rel
    above = 0.0
    total = 0.0
    for grp in range(groups.shape[0] - 1):
        a, b = groups[grp], groups[grp + 1]
        g = 0.0
        u = 0.0
        for q in range(a, b):
            g += rel[q]
            u += judged[q] - rel[q]
        if g > 0.0:
            s = 0.0
            for x in range(int(u) + 1):
                s += _bpref_term(above + x, n_rel, n_nonrel)
            total += g * s / (u + 1.0)
        above += u
    return total / n_rel


@njit(cache=True)
def err(gains, groups, k, top_gain):
    """Expected reciprocal rank (Chapelle et al. 2009) at k: sum_r (1/r) x_r prod_{i<r}
    (1 - x_i), x = gain / (top_gain + 1), i.e. (2^l - 1) / 2^g_max with the exponential
    gain and g_max the top grade of the scale.  Within a tie group the cascade's survival
    after j of its m items, averaged over the group's orders, is the mean over j-subsets
    of prod (1 - x), built by a stable recursion over the items.  0 without a relevant
    item."""
    n = gains.shape[0]
    kk = _cut(k, n)
    scale = 1.0 / (top_gain + 1.0)
    survive = 1.0  # prod (1 - x) over the groups above
    total = 0.0
    for grp in range(_groups_before(groups, kk)):
        a, b = groups[grp], groups[grp + 1]
        m = b - a
        # mean[j] = mean over j-subsets of the group of prod (1 - x)
        mean = np.zeros(m + 1)
        mean[0] = 1.0
        for t in range(m):
            y = 1.0 - gains[a + t] * scale
            size = t + 1.0
            for j in range(t + 1, 0, -1):
                mean[j] = mean[j] * (size - j) / size + y * mean[j - 1] * j / size
        for j in range(min(m, kk - a)):
            total += survive * (mean[j] - mean[j + 1]) / (a + j + 1.0)
        survive *= mean[m]
    return total


@njit(cache=True)
def f1(rel, groups, k):
    """F1@k = 2 P@k R@k / (P@k + R@k) = 2 (relevant in the top k) / (k + R); without k over
    the whole ranked list (trec_eval ``set_F``).  nan when R = 0."""
    n_rel = rel.sum()
    if n_rel == 0.0:
        return np.nan
    kk = k if k > 0 else groups[groups.shape[0] - 1]
    return 2.0 * _top_count(rel, groups, kk) / (kk + n_rel)


@njit(cache=True)
def judged_at(judged, groups, k):
    """Judged@k: judged items in the top k over k (without k: over the ranked list)."""
    depth = groups[groups.shape[0] - 1]
    kk = k if k > 0 else depth
    if kk == 0:
        return 0.0
    return _top_count(judged, groups, kk) / kk


@njit(cache=True)
def rbp_residual(judged, groups, p):
    """What RBP(p) could still gain (Moffat & Zobel 2008): (1 - p) sum over the ranked
    unjudged positions of p^(r-1), plus p^depth for the ranks beyond the list's end."""
    depth = groups[groups.shape[0] - 1]
    return rbp(1.0 - judged[:depth], groups, p) + p**depth


@njit(cache=True)
def _judged(judged, rel):
    """The judged flags of a list; an empty array stands for "every item judged"."""
    return np.ones(rel.shape[0]) if judged.shape[0] == 0 else judged


def _metric_value_template(codes):
    """``metric_value`` compiled for the metric codes ``codes`` only (None: every code): a
    branch whose flag is False is pruned before typing, so its kernel is not compiled."""
    on = {c: codes is None or c in codes for c in KERNEL_CODES}
    (ON_NDCG, ON_DCG, ON_AP, ON_RR, ON_RBP, ON_NRBP, ON_PREC, ON_RECALL, ON_AUC, ON_MEAN_RANK, ON_MAX_RANK,
     ON_NRBP_LOSS, ON_SUCCESS, ON_RPREC, ON_BPREF, ON_ERR, ON_F1, ON_JUDGED, ON_RBP_GRADED, ON_RBP_RESIDUAL) = (
        on[c] for c in (NDCG, DCG, AP, RR, RBP, NRBP, PREC, RECALL, AUC, MEAN_RANK, MAX_RANK, NRBP_LOSS, SUCCESS,
                        RPREC, BPREF, ERR, F1, JUDGED, RBP_GRADED, RBP_RESIDUAL))

    def metric_value(code, k, p, gains, rel, judged, groups, ap_divisor, top_gain):
        """Dispatch one metric on one list in rank order.

        ``gains``, ``rel`` and ``judged`` hold the ranked items first, in rank order (tie groups
        ``groups``, ``groups[-1]`` of them), then any judged items the run did not rank: those
        count in R, the ideal DCG and the judged totals, never as ranked.  ``top_gain`` is the
        gain of the top grade of the scale (ERR, graded RBP).  An empty ``judged``: every item
        is judged."""
        if ON_NDCG and code == NDCG:
            return ndcg(gains, groups, k)
        if ON_DCG and code == DCG:
            return dcg(gains, groups, k)
        if ON_AP and code == AP:
            return average_precision(rel, groups, k, ap_divisor)
        if ON_RR and code == RR:
            return reciprocal_rank(rel, groups, k)
        if ON_RBP and code == RBP:
            return rbp(rel, groups, p)
        if ON_NRBP and code == NRBP:
            return nrbp(rel, groups, p)
        if ON_PREC and code == PREC:
            return precision(rel, groups, k)
        if ON_RECALL and code == RECALL:
            return recall(rel, groups, k)
        if ON_AUC and code == AUC:
            return auc(rel, groups)
        if ON_MEAN_RANK and code == MEAN_RANK:
            return mean_rank(rel, groups)
        if ON_MAX_RANK and code == MAX_RANK:
            return max_rank(rel, groups)
        if ON_NRBP_LOSS and code == NRBP_LOSS:
            return nrbp_loss(rel, groups)
        if ON_SUCCESS and code == SUCCESS:
            return success(rel, groups, k)
        if ON_RPREC and code == RPREC:
            return r_precision(rel, groups)
        if ON_BPREF and code == BPREF:
            return bpref(rel, _judged(judged, rel), groups)
        if ON_ERR and code == ERR:
            return err(gains, groups, k, top_gain)
        if ON_F1 and code == F1:
            return f1(rel, groups, k)
        if ON_JUDGED and code == JUDGED:
            return judged_at(_judged(judged, rel), groups, k)
        if ON_RBP_GRADED and code == RBP_GRADED:
            return rbp(gains, groups, p) / top_gain if top_gain > 0.0 else 0.0
        if ON_RBP_RESIDUAL and code == RBP_RESIDUAL:
            return rbp_residual(_judged(judged, rel), groups, p)
        raise ValueError("metric_value: unknown metric code (not in gbrank.metrics' record)")

    return metric_value


def _every_code():
    fn = _metric_value_template(None)
    fn.__qualname__ = fn.__name__  # a module-level name: documented and pickled as one
    return fn


#: every metric code compiled in (the evaluator's own variants compile the codes of one call only)
metric_value = njit(cache=True)(_every_code())


@njit(cache=True)
def expectation(code, k, p, gains, rel, ap_divisor):
    """E[M] over the n! orders of one list, all equally likely: the tie-averaged metric of
    the list as one tie group (order of ``gains`` and ``rel`` irrelevant)."""
    return metric_value(code, k, p, gains, rel, np.ones(gains.shape[0]), np.array([0, gains.shape[0]]),
                        ap_divisor, gains.max() if gains.shape[0] else 0.0)


@njit(cache=True)
def rank_order(scores, labels, keys, ties):
    """Rank order of one list (best first) and the boundaries of its tie groups.

    ``TIES_AVERAGE``: equal scores form one group (the metric kernels average over
    them).  Otherwise every item is its own group, ties broken with the relevant
    items last (pessimistic), first (optimistic), in input order (stable), or by
    ``keys`` descending (``TIES_KEY``: trec_eval's document-id order, ``keys`` the rank of
    each document id in string order).
    """
    n = scores.shape[0]
    if ties == TIES_KEY:
        first = np.argsort(-keys, kind="mergesort")
        order = first[np.argsort(-scores[first], kind="mergesort")]
    elif ties == TIES_PESSIMISTIC or ties == TIES_OPTIMISTIC:
        sign = 1.0 if ties == TIES_PESSIMISTIC else -1.0
        first = np.argsort(sign * labels, kind="mergesort")
        order = first[np.argsort(-scores[first], kind="mergesort")]
    else:
        order = np.argsort(-scores, kind="mergesort")
    if ties != TIES_AVERAGE:
        return order, np.arange(n + 1)
    groups = np.empty(n + 1, dtype=np.int64)
    n_groups = 0
    for r in range(n):
        if r == 0 or scores[order[r]] != scores[order[r - 1]]:
            groups[n_groups] = r
            n_groups += 1
    groups[n_groups] = n
    return order, groups[: n_groups + 1]


@njit(cache=True)
def ranked_values(scores, labels, keys, row_gains, row_judged, n_ranked, threshold, ties):
    """(gains, rel, judged, groups) of one list: its first ``n_ranked`` rows in rank order
    (tie groups of ``rank_order``), then its other rows, judged items the run did not rank
    (they count in R, the ideal and the judged totals).  ``rel`` is ``label >= threshold``.
    An empty ``row_judged`` means every row is judged (then ``judged`` is returned empty);
    ``keys`` may be empty unless ``ties`` is ``TIES_KEY``."""
    order, groups = rank_order(scores[:n_ranked], labels[:n_ranked], keys[:n_ranked], ties)
    n = scores.shape[0]
    gains = np.empty(n)
    rel = np.empty(n)
    for r in range(n_ranked):
        i = order[r]
        gains[r] = row_gains[i]
        rel[r] = 1.0 if labels[i] >= threshold else 0.0
    for r in range(n_ranked, n):
        gains[r] = row_gains[r]
        rel[r] = 1.0 if labels[r] >= threshold else 0.0
    if row_judged.shape[0] == 0:
        return gains, rel, row_judged, groups  # every row judged (``_judged`` expands it)
    judged = np.empty(n)
    for r in range(n_ranked):
        judged[r] = row_judged[order[r]]
    for r in range(n_ranked, n):
        judged[r] = row_judged[r]
    return gains, rel, judged, groups


@njit(cache=True)
def list_metrics(scores, labels, keys, row_gains, row_judged, n_ranked, asked, policy, out):
    """All requested metrics of one list into ``out``; returns the number of relevant items.
    ``asked`` = (codes, ks, ps): the metrics; ``policy`` = (threshold, ties, ap_divisor,
    top_gain): the settings every list shares (``evaluate_lists``)."""
    codes, ks, ps = asked
    threshold, ties, ap_divisor, top_gain = policy
    gains, rel, judged, groups = ranked_values(scores, labels, keys, row_gains, row_judged, n_ranked, threshold,
                                               ties)
    for m in range(codes.shape[0]):
        out[m] = metric_value(codes[m], ks[m], ps[m], gains, rel, judged, groups, ap_divisor, top_gain)
    return rel.sum()


def _evaluate_lists_template(mask):
    """The parallel loop of ``evaluate_lists`` for the metric codes in the bit mask ``mask``
    (bit c: code c); it refuses other codes before the loop."""
    MASK = mask

    def evaluate_lists(scores, labels, keys, row_gains, row_judged, starts, n_ranked, asked, policy):
        codes = asked[0]
        for m in range(codes.shape[0]):
            if codes[m] < 0 or codes[m] > 62 or not (MASK >> codes[m]) & 1:
                raise ValueError("evaluate_lists: a metric code outside this kernel variant's codes")
        n_lists = starts.shape[0] - 1
        values = np.empty((n_lists, codes.shape[0]))
        n_rel = np.empty(n_lists)
        for i in prange(n_lists):
            a, b = starts[i], starts[i + 1]
            n_rel[i] = list_metrics(scores[a:b], labels[a:b], keys[a:b], row_gains[a:b], row_judged[a:b],
                                    n_ranked[i], asked, policy, values[i])
        return values, n_rel

    return evaluate_lists


@kernel_variants
def evaluate_kernel(codes: frozenset):
    """The compiled parallel loop over lists for the metric codes ``codes`` (and the metric
    kernels they need, nothing else), built on first use (numba's on-disk cache keeps each
    variant)."""
    mask = sum(1 << int(c) for c in codes)
    tag = "all" if codes == KERNEL_CODES else "codes_" + "_".join(str(int(c)) for c in sorted(codes))
    dispatch = jit_variant(_metric_value_template(frozenset(codes)), tag, {})
    per_list = jit_variant(list_metrics.py_func, tag, {}, metric_value=dispatch)
    return jit_variant(_evaluate_lists_template(mask), tag, {"parallel": True, "cache": True}, list_metrics=per_list)


def evaluate_lists(scores, labels, keys, row_gains, row_judged, starts, n_ranked, codes, ks, ps, threshold, ties,
                    ap_divisor, top_gain):
    """Parallel loop over lists; list i is rows ``starts[i]:starts[i+1]``, of which the first
    ``n_ranked[i]`` are ranked by ``scores`` (the others: judged items the run did not rank).
    ``row_gains`` are the gains of the rows' labels, ``row_judged`` 1.0 for a judged row,
    ``keys`` the tie-break keys of ``TIES_KEY`` (ignored by the other policies); ``codes``,
    ``ks``, ``ps``: the metrics (int64, int64, float64 arrays).

    Returns (values[n_lists, n_metrics], n_relevant[n_lists]).  One metric runs its own
    compiled variant (``evaluate_kernel``: a first call compiles that metric's kernels
    only, as a boosting library's early stopping on one metric needs); several metrics run
    the variant of every code (one pass over the lists; ``scripts/warmup.py`` caches both
    kinds)."""
    unknown = sorted(set(np.asarray(codes).tolist()) - KERNEL_CODES)
    if unknown:
        raise ValueError(f"evaluate_lists: metric code(s) {unknown} have no kernel; known codes: "
                         f"{sorted(KERNEL_CODES)}")
    asked = frozenset(np.asarray(codes).tolist())
    kernel = evaluate_kernel(asked if len(asked) == 1 else KERNEL_CODES)
    args = (scores, labels, keys, row_gains, row_judged, starts, n_ranked, (codes, ks, ps),
            (threshold, ties, ap_divisor, top_gain))
    compile_notice(kernel, "the evaluator's kernels", args, EVALUATE_COMPILE_SECONDS)
    return kernel(*args)


evaluate_lists = KernelFamily(evaluate_lists, evaluate_kernel)


@njit(parallel=True)
def evaluate_lists_with(kernel, scores, labels, keys, row_gains, row_judged, starts, n_ranked, k, p, threshold,
                        ties):
    """One metric given by its own kernel ``kernel(gains, rel, groups, k, p)`` on every
    list: the path of metrics registered from outside gbrank (``Metric.kernel``).  Compiled
    once per kernel and session (a function argument cannot be cached on disk)."""
    n_lists = starts.shape[0] - 1
    values = np.empty(n_lists)
    for i in prange(n_lists):
        a, b = starts[i], starts[i + 1]
        gains, rel, _, groups = ranked_values(scores[a:b], labels[a:b], keys[a:b], row_gains[a:b], row_judged[a:b],
                                              n_ranked[i], threshold, ties)
        values[i] = kernel(gains, rel, groups, k, p)
    return values
