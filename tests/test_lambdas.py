"""Swap deltas against brute force, and the gradient kernel against a slow assembly."""

import math

import numpy as np
import pytest
from numba import njit
from scipy.special import expit

from gbrank.lambdas import LambdaObjective, swap_deltas
import gbrank.metrics as K
from gbrank.metrics import METRICS, with_delta

CODES = {name: rec.code for name, rec in with_delta().items()}
NDCG = METRICS["ndcg"].code


@njit
def _metric_of_order(code, lab, p, trunc):
    """The evaluator's kernel on one fixed order (singleton tie groups); for nDCG the
    whole-list DCG over IDCG@trunc, the quantity the truncated objective swaps."""
    n = lab.shape[0]
    groups = np.arange(n + 1)
    gains = np.empty(n)
    rel = np.empty(n)
    for r in range(n):
        gains[r] = K.gain(lab[r], K.GAIN_EXP)
        rel[r] = 1.0 if lab[r] >= 1 else 0.0
    if code == NDCG:
        v = K.dcg_over_ideal(gains, groups, trunc)
        return 0.0 if np.isnan(v) else v
    v = K.metric_value(code, 0, p, gains, rel, np.ones(n), groups, K.AP_DIV_R, gains.max() if n else 0.0)
    return 0.0 if np.isnan(v) else v


@njit
def _brute_swaps(code, scores, labels, p, trunc):
    n = scores.shape[0]
    order = np.argsort(-scores, kind="mergesort")
    lab = labels[order]
    base = _metric_of_order(code, lab, p, trunc)
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            sw = lab.copy()
            sw[i], sw[j] = lab[j], lab[i]
            d = abs(_metric_of_order(code, sw, p, trunc) - base)
            out[order[i], order[j]] = d
            out[order[j], order[i]] = d
    return out


def _random_list(rng, n):
    kind = rng.integers(5)
    if kind == 0:
        labels = np.zeros(n)  # nothing relevant
    elif kind == 1:
        labels = rng.integers(1, 3, n).astype(float)  # everything relevant
    else:
        labels = rng.integers(0, 5, n).astype(float) * (rng.random(n) < 0.5)
    scores = rng.integers(0, max(2, n // 2), n).astype(float)  # many ties
    if rng.random() < 0.5:
        scores = scores + rng.random(n)
    if rng.random() < 0.1:
        scores = scores * 100.0  # spans > 700: the kernel's exp-per-pair path
    return scores, labels


@pytest.mark.parametrize("metric", sorted(with_delta()))
def test_swap_deltas_equal_brute_force(metric):
    rng = np.random.default_rng(CODES[metric])
    sizes = list(range(1, 40)) * 60 + list(rng.integers(40, 201, 40))
    for n in sizes:
        scores, labels = _random_list(rng, int(n))
        p = float(rng.choice([0.5, 0.8, 0.95])) if metric == "nrbp" else None
        trunc = int(rng.integers(1, 12)) if metric == "ndcg" and rng.random() < 0.3 else None
        fast = swap_deltas(metric, scores, labels, p=p, truncation=trunc)
        slow = _brute_swaps(CODES[metric], scores, labels, p or 0.0, trunc or 0)
        np.testing.assert_allclose(fast, slow, rtol=1e-10, atol=1e-12,
                                   err_msg=f"{metric} n={n} labels={labels} scores={scores}")


def _random_lists(rng, sizes):
    """Random lists of the given sizes, and their concatenation with query boundaries."""
    lists = [_random_list(rng, int(n)) for n in sizes]
    ptr = np.concatenate(([0], np.cumsum([len(s) for s, _ in lists])))
    return lists, np.concatenate([s for s, _ in lists]), np.concatenate([y for _, y in lists]), ptr


def _slow_gradients(obj: LambdaObjective, scores, labels):
    """The LambdaRank formulas assembled plainly from the swap-delta matrix."""
    n = len(scores)
    g, h = np.zeros(n), np.zeros(n)
    if n < 2:
        return g, h
    D = swap_deltas(obj.metric, scores, labels, p=obj.p, truncation=obj.truncation, bounding=obj.bounding)
    order = np.argsort(-scores, kind="stable")
    pos = np.empty(n, int)
    pos[order] = np.arange(n)
    top = obj.truncation or n
    total = 0.0
    equal_scores = scores.max() == scores.min()
    for i in range(n):
        for j in range(n):
            if labels[i] <= labels[j] or min(pos[i], pos[j]) >= top:
                continue
            dm = D[i, j]
            d = scores[i] - scores[j]
            if obj.score_normalization and not equal_scores:
                dm /= obj.score_normalization_eps + abs(d)
            x = obj.sigma * d
            rho = expit(-x)
            q = math.exp(-abs(x)) / (1 + math.exp(-abs(x))) ** 2  # rho (1 - rho), stably
            lam = obj.sigma * dm * rho
            q = max(q, 1e-16)
            hh = obj.sigma**2 * dm * q if obj.hessian == "lightgbm" else 2 * dm * q
            g[i] -= lam
            g[j] += lam
            h[i] += hh
            h[j] += hh
            total += 2 * lam
    if obj.list_normalization and total > 0:
        f = math.log2(1 + total) / total
        g, h = g * f, h * f
    return g, h


OBJECTIVES = [
    LambdaObjective("ndcg"),
    LambdaObjective("ndcg", truncation=5, score_normalization=True, list_normalization=True),
    LambdaObjective("ap", sigma=2.0, hessian="xgboost"),
    LambdaObjective("ap", truncation=3, list_normalization=True),
    LambdaObjective("rr", score_normalization=True),
    LambdaObjective("nrbp@0.8"),
    LambdaObjective("nrbp", p=0.95, truncation=7, list_normalization=True, hessian="xgboost"),
]


@pytest.mark.parametrize("obj", OBJECTIVES, ids=repr)
def test_gradients_equal_slow_assembly(obj):
    rng = np.random.default_rng(7)
    lists, scores, labels, ptr = _random_lists(rng, rng.integers(1, 30, 150))
    g, h = obj.gradients(scores, labels, ptr)
    for q, (s, y) in enumerate(lists):
        gs, hs = _slow_gradients(obj, s, y)
        np.testing.assert_allclose(g[ptr[q]:ptr[q + 1]], gs, rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(h[ptr[q]:ptr[q + 1]], hs, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("obj", OBJECTIVES, ids=repr)
def test_gradients_sum_to_zero_and_hessians_positive_where_pairs_count(obj):
    rng = np.random.default_rng(11)
    lists, scores, labels, ptr = _random_lists(rng, rng.integers(1, 120, 100))
    g, h = obj.gradients(scores, labels, ptr)
    assert np.isfinite(g).all() and np.isfinite(h).all()
    assert (h >= 0).all()
    for q, (s, y) in enumerate(lists):
        sl = slice(ptr[q], ptr[q + 1])
        assert abs(g[sl].sum()) <= 1e-12 * max(1.0, np.abs(g[sl]).sum())
        D = swap_deltas(obj.metric, s, y, p=obj.p, truncation=obj.truncation)
        order = np.argsort(-s, kind="stable")
        pos = np.empty(len(s), int)
        pos[order] = np.arange(len(s))
        top = obj.truncation or len(s)
        in_pair = np.zeros(len(s), bool)
        for i in range(len(s)):
            for j in range(len(s)):
                if y[i] != y[j] and D[i, j] > 0 and min(pos[i], pos[j]) < top:
                    in_pair[i] = True
        assert (h[sl][in_pair] > 0).all()
        assert (g[sl][~in_pair] == 0).all() and (h[sl][~in_pair] == 0).all()


def test_weights_per_row_and_per_query_scale_gradients():
    obj = LambdaObjective("ndcg")
    scores, labels, ptr = np.array([0.3, 0.1, 0.2, 0.5, 0.4]), np.array([1, 0, 2, 0, 1]), [0, 3, 5]
    g, h = obj.gradients(scores, labels, ptr)
    gw, hw = obj.gradients(scores, labels, ptr, weights=[2.0, 3.0])
    np.testing.assert_allclose(gw, g * [2, 2, 2, 3, 3])
    np.testing.assert_allclose(hw, h * [2, 2, 2, 3, 3])
    gr, _ = obj.gradients(scores, labels, ptr, weights=[1, 2, 3, 4, 5])
    np.testing.assert_allclose(gr, g * [1, 2, 3, 4, 5])


def test_hessian_floor_and_degenerate_lists():
    obj = LambdaObjective("ap", hessian_floor=1e-6)
    g, h = obj.gradients([1.0, 2.0, 3.0, 0.5], [0, 0, 0, 1], [0, 3, 4])  # no relevant; one item
    assert (g == 0).all() and (h == 1e-6).all()


def test_no_quadratic_memory_for_a_long_list():
    n = 50_000
    rng = np.random.default_rng(0)
    obj = LambdaObjective("ndcg", truncation=30)
    g, h = obj.gradients(rng.random(n), rng.integers(0, 3, n), [0, n])
    assert abs(g.sum()) < 1e-9 and (h > 0).sum() > 1000


@pytest.mark.parametrize("kwargs, message", [
    ({"metric": "p@5"}, "unknown objective metric .*; known objective metrics"),
    ({"metric": "nrbp"}, "needs a persistence"),
    ({"metric": "nrbp", "p": 1.0}, "strictly between 0 and 1"),
    ({"metric": "nrbp@0"}, "strictly between 0 and 1"),
    ({"metric": "ndcg", "p": 0.5}, "takes no p"),
    ({"metric": "ndcg@0"}, "positive integer"),
    ({"metric": "ndcg", "truncation": 0}, "positive integer"),
    ({"metric": "ndcg", "sigma": 0}, "sigma must be positive"),
    ({"metric": "ndcg", "hessian": "catboost"}, "hessian must be one of"),
    ({"metric": "ndcg", "gain": "log"}, "gain must be one of"),
])
def test_bad_configuration_raises(kwargs, message):
    with pytest.raises(ValueError, match=message):
        LambdaObjective(**kwargs)


@pytest.mark.parametrize("scores, labels, ptr, message", [
    ([0.1, 0.2], [1, 0, 1], [0, 3], "one entry per row"),
    ([0.1, np.nan, 0.3], [1, 0, 1], [0, 3], "NaN or infinite"),
    ([0.1, 0.2, 0.3], [1, np.inf, 1], [0, 3], "NaN or infinite"),
    ([0.1, 0.2, 0.3], [1, -1, 1], [0, 3], "non-negative"),
    ([0.1, 0.2, 0.3], [1, 31, 1], [0, 3], "over 30"),
    ([0.1, 0.2, 0.3], [1, 0.5, 1], [0, 3], "must be integers"),
    ([0.1, 0.2, 0.3], [1, 0, 1], [0, 2], "run from 0 to the number of rows"),
    ([0.1, 0.2, 0.3], [1, 0, 1], [0, 2, 2, 3], "query 1 is empty"),
])
def test_bad_inputs_raise(scores, labels, ptr, message):
    with pytest.raises(ValueError, match=message):
        LambdaObjective("ndcg").gradients(scores, labels, ptr)


def test_swap_deltas_bad_inputs():
    with pytest.raises(ValueError, match="one entry per item"):
        swap_deltas("ndcg", [1.0, 2.0], [1])
    with pytest.raises(ValueError, match="unknown objective metric .*; known objective metrics"):
        swap_deltas("precision", [1.0, 2.0], [1, 0])


def test_lightgbm_sigmoid_table_is_close_to_the_exact_sigmoid():
    rng = np.random.default_rng(5)
    scores, labels = rng.normal(size=300), rng.integers(0, 3, 300)
    ptr = [0, 100, 200, 300]
    exact = LambdaObjective("ndcg", truncation=30, score_normalization=True, list_normalization=True)
    table = LambdaObjective("ndcg", truncation=30, score_normalization=True, list_normalization=True,
                            sigmoid_table=True)
    (g1, h1), (g2, h2) = exact.gradients(scores, labels, ptr), table.gradients(scores, labels, ptr)
    # the table's bins are 4.8e-5 wide: agreement to about 1e-5 of the gradients' scale
    np.testing.assert_allclose(g2, g1, rtol=0, atol=1e-5 * np.abs(g1).max())
    np.testing.assert_allclose(h2, h1, rtol=0, atol=1e-5 * np.abs(h1).max())
    assert not np.array_equal(g1, g2)


@pytest.mark.parametrize("obj", [LambdaObjective("err"), LambdaObjective("err", truncation=3, list_normalization=True),
                                 LambdaObjective("err", score_normalization=True, hessian="xgboost")], ids=repr)
def test_err_gradients_equal_slow_assembly_list_by_list(obj):
    """ERR's scale is the largest label of the data given: one list at a time, it is that
    list's, as in ``swap_deltas``, so the slow assembly applies list by list."""
    rng = np.random.default_rng(11)
    for n in rng.integers(1, 25, 120):
        scores, labels = _random_list(rng, int(n))
        g, h = obj.gradients(scores, labels, [0, len(scores)])
        g_slow, h_slow = _slow_gradients(obj, scores, labels)
        np.testing.assert_allclose(g, g_slow, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(h, h_slow, rtol=1e-10, atol=1e-12)
