"""gbrank.bounds against enumeration of every order, computed with gbrank's metric kernels.

The oracle puts the labels of a small list in *every* order (itertools.permutations for
n <= 6, every distinct arrangement of the label multiset, each standing for the same
number of orders, up to n = 9) and evaluates each fixed order with the kernels of
``gbrank.metrics`` (``bounds = arange(n + 1)``) or, for the nRBP loss, with its
definition (Li et al. 2021, Eq 19).  Maximum, minimum, mean and the whole distribution
of those values must equal what gbrank.bounds computes from closed forms.
"""

from __future__ import annotations

import ast
import doctest
import itertools
import math
import pathlib
from collections import Counter

import numpy as np
import pytest
from scipy.special import expit
from scipy.stats import hypergeom

import gbrank.bounds as gb
from gbrank.bounds import _api, _kernels, _maps, _shapes
from gbrank.metrics._kernels import (
    AP_DIV_R,
    average_precision,
    dcg,
    ideal_dcg,
    ndcg,
    nrbp,
    reciprocal_rank,
)

METRICS = ("ndcg", "ap", "rr", "nrbp", "nrbp_loss")


# ---------------------------------------------------------------------------------------
# the oracle


def _gain(label, gain):
    return 2.0**label - 1.0 if gain == "exp" else float(label)


def value_of_order(metric, order, *, p=0.8, threshold=1.0, gain="exp", truncation=None):
    """One fixed order's metric value from gbrank's kernels (None where undefined)."""
    n = len(order)
    fixed = np.arange(n + 1)
    rel = np.array([1.0 if lab >= threshold else 0.0 for lab in order])
    if metric == "ndcg":
        gains = np.array([_gain(lab, gain) for lab in order])
        if truncation is None:
            value = ndcg(gains, fixed, 0)
            return None if np.isnan(value) else value
        ideal = ideal_dcg(gains, truncation)
        return None if ideal == 0 else dcg(gains, fixed, 0) / ideal
    if rel.sum() == 0:
        return None
    if metric == "ap":
        return average_precision(rel, fixed, 0, AP_DIV_R)
    if metric == "rr":
        return reciprocal_rank(rel, fixed, 0)
    if metric == "nrbp":
        return nrbp(rel, fixed, p)
    # Eq 19: sum over relevant items of (rank - 1), minus R (R - 1) / 2
    big_r = int(rel.sum())
    return sum(r for r in range(n) if rel[r]) - big_r * (big_r - 1) / 2


def distinct_orders(labels):
    """Every distinct arrangement of the multiset ``labels`` (each stands for prod c! orders)."""
    counts = Counter(labels)
    keys = sorted(counts)
    out, cur = [], []

    def rec(left):
        if left == 0:
            out.append(tuple(cur))
            return
        for key in keys:
            if counts[key]:
                counts[key] -= 1
                cur.append(key)
                rec(left - 1)
                cur.pop()
                counts[key] += 1

    rec(len(labels))
    return out


def enumerate_values(metric, labels, **kw):
    """Metric values of all orders: all n! permutations for n <= 6, else the distinct ones."""
    orders = itertools.permutations(labels) if len(labels) <= 6 else distinct_orders(list(labels))
    return np.array([value_of_order(metric, list(o), **kw) for o in orders])


def discrete(values):
    """Distinct values (merged within 1e-12) and their probabilities."""
    v = np.sort(values)
    d, w = [v[0]], [1]
    for x in v[1:]:
        if x - d[-1] <= 1e-12 * max(1.0, abs(x)):
            w[-1] += 1
        else:
            d.append(x)
            w.append(1)
    return np.array(d), np.array(w) / len(v)


def random_case(rng):
    n = int(rng.integers(1, 10))
    top = int(rng.integers(1, 4))
    labels = rng.integers(0, top + 1, n).astype(float)
    metric = METRICS[int(rng.integers(len(METRICS)))]
    kw = dict(threshold=float(rng.choice([0.5, 1.0, 2.0])), gain=str(rng.choice(["exp", "linear"])))
    if metric == "nrbp":
        kw["p"] = float(rng.choice([0.3, 0.8, 0.95]))
    if metric == "ndcg" and rng.random() < 0.4:
        kw["truncation"] = int(rng.integers(1, n + 1))
    return metric, labels, kw


def api_kw(metric, kw):
    """The oracle's keywords as gbrank.bounds takes them."""
    out = dict(relevance_threshold=kw["threshold"], gain=kw["gain"])
    if metric == "nrbp":
        out["p"] = kw["p"]
    if "truncation" in kw:
        out["truncation"] = kw["truncation"]
    return out


CASES = [random_case(np.random.default_rng(seed)) for seed in range(160)]


# ---------------------------------------------------------------------------------------
# maximum, minimum, expectation, exact distribution == enumeration


@pytest.mark.parametrize("metric,labels,kw", CASES)
def test_bounds_equal_enumeration_of_all_orders(metric, labels, kw):
    values = enumerate_values(metric, labels.tolist(), **kw)
    b = gb.list_bounds(metric, labels, **api_kw(metric, kw))
    if values[0] is None:  # undefined metric: no relevant item (nDCG: no positive gain)
        assert b.degenerate and (b.minimum, b.maximum, b.expectation) == (0.0, 0.0, 0.0)
        return
    values = values.astype(float)
    assert b.maximum == pytest.approx(values.max(), rel=1e-12, abs=1e-12)
    assert b.minimum == pytest.approx(values.min(), rel=1e-12, abs=1e-12)
    assert b.expectation == pytest.approx(values.mean(), rel=1e-12, abs=1e-12)
    spread = values.max() - values.min()
    assert b.degenerate == (spread <= 1e-12)

    d = gb.distribution(metric, labels, **api_kw(metric, kw))
    assert d.exact
    want_v, want_p = discrete(values)
    np.testing.assert_allclose(d.values, want_v, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(d.probabilities, want_p, rtol=1e-12, atol=1e-15)
    assert d.mean() == pytest.approx(b.expectation, rel=1e-12, abs=1e-12)
    # the discrete CDF (Algorithm 1) between values and beyond both ends
    probes = np.concatenate([(want_v[1:] + want_v[:-1]) / 2, [want_v[0] - 1, want_v[-1] + 1]])
    for x in probes:
        assert d.cdf(x) == pytest.approx(np.mean(values <= x), abs=1e-12)


@pytest.mark.parametrize("metric", METRICS)
def test_each_metric_against_full_permutations_with_graded_labels(metric):
    # n = 6: all 720 permutations, labels 0..3, a case of every metric with its options
    labels = [3.0, 0.0, 1.0, 2.0, 0.0, 1.0]
    for kw in (dict(threshold=1.0, gain="exp", p=0.9), dict(threshold=2.0, gain="linear", p=0.5)):
        truncations = [None, 2] if metric == "ndcg" else [None]
        for trunc in truncations:
            okw = dict(kw, truncation=trunc) if trunc else dict(kw)
            values = enumerate_values(metric, labels, **okw).astype(float)
            akw = api_kw(metric, okw)
            assert gb.maximum(metric, labels, **akw) == pytest.approx(values.max(), rel=1e-12)
            assert gb.minimum(metric, labels, **akw) == pytest.approx(values.min(), rel=1e-12)
            assert gb.expectation(metric, labels, **akw) == pytest.approx(values.mean(), rel=1e-12)


def test_closed_forms_of_the_minimum_and_expectation():
    """The formulas of docs/bounds.md (the thesis' Eqs 3.2 divided by IDCG, 3.3, 3.4, 3.9, 3.10)."""
    for n in range(1, 40, 3):
        for big_r in range(1, n):
            labels = np.r_[np.ones(big_r), np.zeros(n - big_r)]
            idcg = sum(1 / math.log2(i + 1) for i in range(1, big_r + 1))
            nd_min = sum(1 / math.log2(i + 1) for i in range(n - big_r + 1, n + 1)) / idcg
            assert gb.minimum("ndcg", labels) == pytest.approx(nd_min, rel=1e-12)
            ap_min = sum(i / (n - big_r + i) for i in range(1, big_r + 1)) / big_r
            assert gb.minimum("ap", labels) == pytest.approx(ap_min, rel=1e-12)
            assert gb.minimum("rr", labels) == pytest.approx(1 / (n - big_r + 1), rel=1e-12)
            assert gb.minimum("nrbp", labels, p=0.9) == pytest.approx(0.9 ** (n - big_r), rel=1e-12)
            assert gb.maximum("nrbp_loss", labels) == big_r * (n - big_r)  # Eq 3.3
            assert gb.expectation("nrbp_loss", labels) == big_r * (n - big_r) / 2  # Eq 3.9
            # Eq 3.10 (hypergeometric; Bestgen 2015)
            eq310 = sum((i / m) ** 2 * hypergeom.pmf(i, n, big_r, m)
                        for i in range(1, big_r + 1) for m in range(i, n - big_r + i + 1)) / big_r
            assert gb.expectation("ap", labels) == pytest.approx(eq310, rel=1e-10)
            e_rr = sum(math.comb(n - r, big_r - 1) / math.comb(n, big_r) / r for r in range(1, n - big_r + 2))
            assert gb.expectation("rr", labels) == pytest.approx(e_rr, rel=1e-12)
            e_nrbp = (big_r / n) * (1 - 0.9**n) / (1 - 0.9**big_r)
            assert gb.expectation("nrbp", labels, p=0.9) == pytest.approx(e_nrbp, rel=1e-12)


def test_thesis_worked_examples():
    # Table 3.3: E[AP(X_(2,1))] = 3/4 and E[AP(X_(3,2))] = 29/36
    assert gb.expectation("ap", [1, 0]) == pytest.approx(3 / 4)
    assert gb.expectation("ap", [1, 1, 0]) == pytest.approx(29 / 36)
    # Table 2.4: the worst AP of 3 relevant among 9 is (1/7 + 2/8 + 3/9) / 3
    assert gb.minimum("ap", [1] * 3 + [0] * 6) == pytest.approx((1 / 7 + 2 / 8 + 3 / 9) / 3)


# ---------------------------------------------------------------------------------------
# Monte Carlo against the exact distribution


@pytest.mark.parametrize("metric,labels,kw", [
    ("ap", [1] * 4 + [0] * 8, {}),
    ("rr", [1] * 3 + [0] * 9, {}),
    ("nrbp", [1] * 4 + [0] * 9, {"p": 0.8}),
    ("nrbp_loss", [1] * 5 + [0] * 8, {}),
    ("ndcg", [0, 0, 0, 0, 1, 1, 1, 2, 2, 3], {}),
    ("ndcg", [0, 0, 0, 0, 1, 1, 1, 2, 2, 3], {"truncation": 3, "gain": "linear"}),
])
def test_monte_carlo_agrees_with_the_exact_distribution(metric, labels, kw):
    exact = gb.distribution(metric, labels, **kw)
    mc = gb.distribution(metric, labels, **kw, exact_limit=0, n_samples=20_000, seed=3)
    assert exact.exact and not mc.exact and mc.n_draws == 20_000
    assert mc.probabilities.sum() == pytest.approx(1.0)
    se = mc.standard_error_of_mean()
    assert 0 < se < 0.05 * max(1.0, abs(exact.mean()))
    assert abs(mc.mean() - exact.mean()) < 4 * se
    for q in (0.1, 0.25, 0.5, 0.75, 0.9):
        x = exact.values[np.searchsorted(np.cumsum(exact.probabilities), q)]
        se_f = mc.standard_error_of_cdf(x)
        assert abs(mc.cdf(x) - exact.cdf(x)) < 4 * se_f + 1e-12
    # sampled values are values of the exact distribution
    assert np.isin(np.round(mc.values, 9), np.round(exact.values, 9)).all()


def test_monte_carlo_is_seeded_and_a_wrong_sampler_would_be_caught():
    labels = [1] * 4 + [0] * 8
    a = gb.distribution("ap", labels, exact_limit=0, n_samples=5000, seed=1)
    b = gb.distribution("ap", labels, exact_limit=0, n_samples=5000, seed=2)
    gb.clear_cache()
    a2 = gb.distribution("ap", labels, exact_limit=0, n_samples=5000, seed=1)
    assert a2 is not a and np.array_equal(a.values, a2.values) and np.array_equal(a.probabilities, a2.probabilities)
    assert not (len(a.values) == len(b.values) and np.array_equal(a.probabilities, b.probabilities))
    # the 4-SE check of the test above has power: a sample of a neighbouring shape fails it
    exact = gb.distribution("ap", labels)
    wrong = gb.distribution("ap", [1] * 5 + [0] * 7, exact_limit=0, n_samples=5000, seed=1)
    assert abs(wrong.mean() - exact.mean()) > 4 * wrong.standard_error_of_mean()


# ---------------------------------------------------------------------------------------
# the smoothed CDF


def naive_smoothed(d, x):
    """Eq 3.13 / Algorithm 2 with every term, no cut-off."""
    z = d.gain * (np.asarray(x)[..., None] - d.values)
    return (d.probabilities * expit(z)).sum(-1)


@pytest.mark.parametrize("metric,labels,kw", [
    ("ap", [1] * 3 + [0] * 7, {}),
    ("ndcg", [2, 1, 1, 0, 0, 0, 3, 0], {}),
    ("nrbp", [1] * 5 + [0] * 30, {"p": 0.95}),  # Monte Carlo: 324,632 placements
    ("nrbp_loss", [1] * 4 + [0] * 6, {}),
    ("rr", [1] * 2 + [0] * 60, {}),
])
def test_smoothed_cdf_is_monotone_bounded_and_its_table_interpolates_it(metric, labels, kw):
    d = gb.distribution(metric, labels, **kw)
    b = gb.list_bounds(metric, labels, **kw)
    assert d.gain == pytest.approx(len(d.values) / (d.values[-1] - d.values[0]))
    assert (d.lower, d.upper) == (b.minimum, b.maximum)
    xs = np.linspace(b.minimum - 0.1 * (b.maximum - b.minimum), b.maximum * 1.1, 4001)
    f = d.smoothed_cdf(xs)
    assert np.all(np.diff(f) >= -1e-15) and f.min() >= 0 and f.max() <= 1
    np.testing.assert_allclose(f, naive_smoothed(d, xs), atol=1e-13)
    # the grid table: exact at the grid points, and between them off by at most the rise
    # of F~ across the cell (linear interpolation of a monotone function)
    for grid in (257, 2049):
        row = d.table(grid)
        gx = np.linspace(b.minimum, b.maximum, grid)
        np.testing.assert_allclose(row, d.smoothed_cdf(gx), atol=1e-14)
        inside = xs[(xs >= b.minimum) & (xs <= b.maximum)]
        interp = np.array([gb.cdf_lookup(row, b.minimum, b.maximum, x) for x in inside])
        direct = d.smoothed_cdf(inside)
        cell = np.minimum(((inside - b.minimum) / (b.maximum - b.minimum) * (grid - 1)).astype(int), grid - 2)
        rise = row[cell + 1] - row[cell]
        assert np.all(np.abs(interp - direct) <= rise + 1e-12)
        assert np.all(np.diff(interp) >= -1e-15)
    fine = d.table(2049)
    inside = xs[(xs >= b.minimum) & (xs <= b.maximum)]
    err = max(abs(gb.cdf_lookup(fine, b.minimum, b.maximum, x) - v) for x, v in zip(inside, d.smoothed_cdf(inside)))
    assert err < 0.02
    # outside the range the table holds its end values
    assert gb.cdf_lookup(fine, b.minimum, b.maximum, b.minimum - 5) == fine[0]
    assert gb.cdf_lookup(fine, b.minimum, b.maximum, b.maximum + 5) == fine[-1]


def test_smoothed_cdf_of_a_small_exact_distribution_is_close_to_the_step_cdf():
    # thesis Fig 3.5: with a = len(D) / (max - min) the sigmoid sits between the steps
    d = gb.distribution("ap", [1] * 4 + [0] * 4)
    mids = (d.values[1:] + d.values[:-1]) / 2
    assert np.max(np.abs(d.smoothed_cdf(mids) - d.cdf(mids))) < 0.25


# ---------------------------------------------------------------------------------------
# degenerate lists


@pytest.mark.parametrize("metric,labels,value", [
    ("ap", [0, 0, 0], 0.0),  # no relevant item: undefined, documented 0
    ("rr", [0.5, 0.2], 0.0),  # below the threshold
    ("nrbp", [0, 0], 0.0),
    ("nrbp_loss", [0, 0, 0, 0], 0.0),
    ("ndcg", [0, 0, 0], 0.0),  # no positive gain
    ("ap", [1, 2, 1], 1.0),  # all relevant: every order is ideal
    ("rr", [3], 1.0),  # one item
    ("nrbp", [1, 1, 1, 1], 1.0),
    ("nrbp_loss", [2, 1, 1], 0.0),
    ("ndcg", [2, 2, 2], 1.0),  # all gains equal
    ("ndcg", [4], 1.0),
    ("ap", [], 0.0),  # empty list
])
def test_degenerate_lists_have_finite_documented_values(metric, labels, value):
    kw = {"p": 0.9} if metric == "nrbp" else {}
    b = gb.list_bounds(metric, labels, **kw)
    assert b.degenerate and gb.is_degenerate(metric, labels, **kw)
    assert (b.minimum, b.maximum, b.expectation) == (value, value, value)
    d = gb.distribution(metric, labels, **kw)
    assert d.values.tolist() == [value] and d.probabilities.tolist() == [1.0] and d.gain == 0.0
    # the smoothed CDF of one value is the step function H(x - value)
    assert d.smoothed_cdf(value) == 1.0 and d.smoothed_cdf(value - 1e-9) == 0.0
    assert np.all(d.table(9) == 1.0)
    assert gb.cdf_lookup(d.table(9), value, value, value - 1e-9) == 0.0
    assert gb.cdf_lookup(d.table(9), value, value, value) == 1.0


def test_degenerate_ndcg_under_truncation_and_expectation_zero():
    # all gains equal with IDCG cut at 1: every order has DCG / IDCG@1 = the same value
    b = gb.list_bounds("ndcg", [1, 1, 1], truncation=1)
    expected = (1 + 1 / math.log2(3) + 1 / math.log2(4))
    assert b.degenerate and b.minimum == pytest.approx(expected) and b.maximum == b.minimum
    # E == 0 occurs only without relevant items; such a list is flagged
    assert gb.expectation("nrbp_loss", [0, 0, 0]) == 0.0 and gb.is_degenerate("nrbp_loss", [0, 0, 0])


def test_degenerate_lists_get_zero_weight_in_every_map():
    labels = [1, 0, 0, 0, 0, 0, 1, 1, 2, 0]
    ptr = [0, 4, 6, 8, 9, 10]  # [1,0,0,0] | [0,0] | [1,1] | [2] | [0]
    lb = gb.prepare("ap", labels, ptr, distribution=True)
    assert lb.degenerate.tolist() == [False, True, True, True, True]
    values = np.array([0.5, 0.3, 1.0, 1.0, 0.0])
    for method in gb.BOUNDINGS:
        out = gb.bounded(method, values, lb)
        assert np.isfinite(out).all() and np.all(out[1:] == 0.0)
        if method != "distribution":
            s = gb.inverse_scale(method, lb)
            assert np.all(s[1:] == 0.0) and s[0] > 0
    assert np.isfinite(lb.cdf).all() and np.isfinite(lb.minimum).all()


# ---------------------------------------------------------------------------------------
# the maps


def test_the_four_maps_follow_their_formulas_and_keep_the_orientation():
    labels = [1, 0, 0, 1, 0, 0, 0, 2, 0, 0, 1, 0, 0, 0, 0]
    ptr = [0, 7, 15]
    for metric, kw in (("ndcg", {}), ("ap", {}), ("nrbp", {"p": 0.8}), ("nrbp_loss", {})):
        lb = gb.prepare(metric, labels, ptr, **kw, distribution=True)
        lo, hi, e = lb.minimum, lb.maximum, lb.expectation
        np.testing.assert_allclose(gb.bounded("minmax", lo, lb), 0.0, atol=1e-15)
        np.testing.assert_allclose(gb.bounded("minmax", hi, lb), 1.0)
        np.testing.assert_allclose(gb.bounded("expectation", e, lb), 1.0)
        np.testing.assert_allclose(gb.bounded("expectation_max", e, lb), 0.0, atol=1e-15)
        np.testing.assert_allclose(gb.bounded("expectation_max", hi, lb), 1.0)
        mid = (lo + hi) / 2
        np.testing.assert_allclose(gb.bounded("expectation_max", mid, lb), (mid - e) / (hi - e))
        for i in range(2):
            d = gb.distribution(metric, labels[ptr[i]:ptr[i + 1]], **kw)
            grid_x = np.linspace(lo[i], hi[i], lb.cdf.shape[1])
            np.testing.assert_allclose(lb.cdf[i], d.smoothed_cdf(grid_x), atol=1e-14)
        assert lb.higher_is_better == (metric != "nrbp_loss")
        # every map is increasing in the raw value
        for method in gb.BOUNDINGS:
            a = gb.bounded(method, lo + 0.3 * (hi - lo), lb)
            b = gb.bounded(method, lo + 0.7 * (hi - lo), lb)
            assert np.all(b > a)
    lb = gb.prepare("nrbp_loss", labels, ptr)
    # for the loss, expectation-max runs from -1 at the ideal order (loss 0) to 1 at the worst
    np.testing.assert_allclose(gb.bounded("expectation_max", np.zeros(2), lb), -1.0)
    with pytest.raises(ValueError, match="distribution=True"):
        gb.bounded("distribution", np.zeros(2), lb)
    with pytest.raises(ValueError, match="not linear"):
        gb.inverse_scale("distribution", lb)
    with pytest.raises(ValueError, match="unknown bounding 'zscore'; choose None or one of"):
        gb.bounded("zscore", np.zeros(2), lb)


# ---------------------------------------------------------------------------------------
# prepare and the cache


def _random_lists(rng, n_lists, max_n=30):
    sizes = rng.integers(1, max_n, n_lists)
    labels = np.concatenate([np.where(rng.random(s) < rng.uniform(0, 0.6), rng.integers(1, 3, s), 0)
                             for s in sizes]).astype(float)
    return labels, np.concatenate([[0], np.cumsum(sizes)])


@pytest.mark.parametrize("metric,kw", [("ndcg", {}), ("ndcg", {"truncation": 5}), ("ap", {}),
                                       ("rr", {"relevance_threshold": 2}), ("nrbp", {"p": 0.9}),
                                       ("nrbp_loss", {})])
def test_prepare_equals_the_per_list_functions_and_ignores_label_order(metric, kw):
    rng = np.random.default_rng(7)
    labels, ptr = _random_lists(rng, 60)
    lb = gb.prepare(metric, labels, ptr, **kw, distribution=True, grid=65, n_samples=2000)
    for i in range(len(ptr) - 1):
        lab = labels[ptr[i]:ptr[i + 1]]
        b = gb.list_bounds(metric, lab, **kw)
        assert (lb.minimum[i], lb.maximum[i], lb.expectation[i], lb.degenerate[i]) == \
            (b.minimum, b.maximum, b.expectation, b.degenerate)
        d = gb.distribution(metric, lab, **kw, n_samples=2000)
        assert lb.exact[i] == d.exact and (lb.cdf_x0[i], lb.cdf_x1[i]) == (d.lower, d.upper)
        np.testing.assert_array_equal(lb.cdf[i], d.table(65))
    # shuffling the labels inside each list changes nothing
    shuffled = labels.copy()
    for a, b in zip(ptr[:-1], ptr[1:]):
        shuffled[a:b] = rng.permutation(shuffled[a:b])
    gb.clear_cache()
    lb2 = gb.prepare(metric, shuffled, ptr, **kw, distribution=True, grid=65, n_samples=2000)
    for field in ("minimum", "maximum", "expectation", "degenerate", "cdf", "cdf_x0", "cdf_x1", "exact"):
        np.testing.assert_array_equal(getattr(lb, field), getattr(lb2, field))
    assert lb2.n_shapes == lb.n_shapes == len(set(lb.shape_index.tolist()))


def test_the_cache_returns_the_identical_object_per_shape():
    gb.clear_cache()
    assert gb.cache_size() == {"summaries": 0, "distributions": 0, "tables": 0}
    a = gb.list_bounds("ap", [1, 0, 0, 2, 0])
    assert gb.list_bounds("ap", [0, 0, 2, 0, 1]) is a  # same (n, R)
    assert gb.list_bounds("ap", [0, 0, 1, 0, 1]) is a  # grades do not matter to AP
    assert gb.list_bounds("ap", [0, 0, 1, 0, 1, 0]) is not a
    nd = gb.list_bounds("ndcg", [2, 0, 1])
    assert gb.list_bounds("ndcg", [1, 2, 0]) is nd and gb.list_bounds("ndcg", [1, 1, 0]) is not nd
    d = gb.distribution("rr", [1, 0, 0, 1])
    assert gb.distribution("rr", [0, 1, 1, 0]) is d
    other = gb.distribution("rr", [0, 1, 1, 0], n_samples=17)  # sampling options are part of the key
    assert other is not d and np.array_equal(other.values, d.values) and other.exact
    assert gb.cache_size()["distributions"] == 2
    with pytest.raises(ValueError):
        d.values[0] = 5.0  # cached arrays are read-only
    # prepare fills the same cache: lists of one shape computed once
    labels = np.array([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0], dtype=float)
    gb.clear_cache()
    lb = gb.prepare("ap", labels, [0, 4, 8, 12, 16], distribution=True)
    assert lb.n_shapes == 1 and lb.shape_index.tolist() == [0, 0, 0, 0]
    assert gb.cache_size() == {"summaries": 1, "distributions": 1, "tables": 1}
    assert gb.list_bounds("ap", [0, 0, 0, 1]) is gb.list_bounds("ap", labels[:4])
    gb.clear_cache()
    assert gb.list_bounds("ap", [1, 0, 0, 2, 0]) is not a


def test_list_bounds_smoothed_cdf_reads_the_table():
    labels = [1, 0, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0]
    lb = gb.prepare("ap", labels, [0, 6, 12], distribution=True, grid=1025)
    d = gb.distribution("ap", labels[:6])
    xs = np.linspace(lb.minimum[0], lb.maximum[0], 11)
    got = lb.smoothed_cdf(xs, np.zeros(11, dtype=int))
    np.testing.assert_allclose(got, d.smoothed_cdf(xs), atol=2e-3)
    with pytest.raises(ValueError, match="same length"):
        lb.smoothed_cdf(xs, [0, 1])
    with pytest.raises(ValueError, match="distribution=True"):
        gb.prepare("ap", labels, [0, 6, 12]).smoothed_cdf([0.5, 0.5])


# ---------------------------------------------------------------------------------------
# input validation and layering


@pytest.mark.parametrize("call,match", [
    (lambda: gb.list_bounds("dcg", [1, 0]), "unknown bounds metric 'dcg'; known metrics with bounds"),
    (lambda: gb.list_bounds("nrbp", [1, 0]), "persistence"),
    (lambda: gb.list_bounds("nrbp", [1, 0], p=1.5), "between 0 and 1"),
    (lambda: gb.list_bounds("nrbp@0.5", [1, 0], p=0.9), "twice"),
    (lambda: gb.list_bounds("ap", [1, 0], p=0.9), "takes no p"),
    (lambda: gb.list_bounds("ap", [1, 0], truncation=-3), "positive integer"),
    (lambda: gb.list_bounds("ap@3", [1, 0]), "whole-list ap"),
    (lambda: gb.list_bounds("ndcg", [1, 0], truncation=0), "positive integer"),
    (lambda: gb.list_bounds("ndcg", [1, -1]), "non-negative"),
    (lambda: gb.list_bounds("ndcg", [1, np.nan]), "finite"),
    (lambda: gb.list_bounds("ndcg", [[1, 0]]), "1-D"),
    (lambda: gb.list_bounds("ndcg", [1, 0], gain="log"), "gain"),
    (lambda: gb.distribution("ap", [1, 0], n_samples=0), "n_samples"),
    (lambda: gb.prepare("ap", [1, 0, 1], [0, 2]), r"run from 0 to the number of rows \(3\)"),
    (lambda: gb.prepare("ap", [1, 0, 1], [0, 2, 1, 3]), r"must not decrease, but group_ptr\[1\] = 2"),
    (lambda: gb.prepare("ap", [1, 0, 1], [0, 3], distribution=True, grid=1), "grid"),
])
def test_bad_input_raises_a_clear_error(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_metric_names_with_parameters():
    labels = [2, 0, 1, 0, 0, 1]
    assert gb.list_bounds("nrbp@0.9", labels) is gb.list_bounds("nrbp", labels, p=0.9)
    assert gb.list_bounds("ndcg@2", labels) is gb.list_bounds("ndcg", labels, truncation=2)
    assert gb.prepare("ndcg@2", labels, [0, 6]).metric == "ndcg@2"
    assert gb.list_bounds("nrbp_loss", labels, p=0.3) is gb.list_bounds("nrbp_loss", labels)  # p-free
    # the objective's truncation limits pairs for AP, RR, nRBP: their bounds ignore it
    assert gb.list_bounds("ap", labels, truncation=2) is gb.list_bounds("ap", labels)
    assert gb.list_bounds("ndcg", labels, truncation=2) is not gb.list_bounds("ndcg", labels)


@pytest.mark.parametrize("module", [gb, _api, _maps, _shapes, _kernels])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_docs_examples_and_worked_table():
    doc = pathlib.Path(__file__).resolve().parents[1] / "docs" / "bounds.md"
    result = doctest.testfile(str(doc), module_relative=False, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 4 and result.failed == 0
    # the worked example's table: 2 relevant among 10, p = 0.95
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
            for line in doc.read_text().splitlines()
            if line.startswith("| ") and line.split("|")[1].strip() in ("nDCG", "AP", "RR", "nRBP", "nRBP loss")
            and len(line.split("|")) == 10}
    labels = [1, 1] + [0] * 8
    for name, metric, kw in (("nDCG", "ndcg", {}), ("AP", "ap", {}), ("RR", "rr", {}),
                             ("nRBP", "nrbp", {"p": 0.95}), ("nRBP loss", "nrbp_loss", {})):
        lo, hi, e, n_values, a, f_lo, f_hi = (float(c) for c in rows[name])
        b, d = gb.list_bounds(metric, labels, **kw), gb.distribution(metric, labels, **kw)
        assert (round(b.minimum, 4), round(b.maximum, 4), round(b.expectation, 4)) == (lo, hi, e)
        assert len(d.values) == n_values and abs(d.gain - a) < 0.051
        assert abs(d.smoothed_cdf(b.minimum) - f_lo) < 5e-4 and abs(d.smoothed_cdf(b.maximum) - f_hi) < 5e-4
