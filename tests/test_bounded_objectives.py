"""Bounded LambdaRank objectives: pair weights are changes of the bounded metric."""

import numpy as np
import pytest
from test_lambdas import CODES, _metric_of_order, _random_list, _random_lists, _slow_gradients

from gbrank import bounds
from gbrank.estimators import GBRanker
from gbrank.lambdas import LambdaObjective, swap_deltas
from gbrank.lambdas._kernels import BOUND_DIST, all_gradients
from gbrank.lambdas._deltas import delta_codes
from gbrank.lambdas._objective import GAINS, HESSIANS
from gbrank.lambdas._stack import STACK_DOUBLES

BOUNDINGS = ["minmax", "expectation", "expectation_max", "distribution"]


def _brute_bounded(metric, scores, labels, p, trunc, bounding):
    """Bound the metric before and after each swap (evaluator kernels + gbrank.bounds)."""
    n = len(scores)
    lb = bounds.prepare(metric, labels, [0, n], p=p, truncation=trunc, distribution=bounding == "distribution")
    order = np.argsort(-scores, kind="stable")
    lab = labels[order].astype(float)
    base = bounds.bounded(bounding, [_metric_of_order(CODES[metric], lab, p or 0.0, trunc or 0)], lb)[0]
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            sw = lab.copy()
            sw[i], sw[j] = lab[j], lab[i]
            after = bounds.bounded(bounding, [_metric_of_order(CODES[metric], sw, p or 0.0, trunc or 0)], lb)[0]
            out[order[i], order[j]] = out[order[j], order[i]] = abs(after - base)
    return out


@pytest.mark.parametrize("bounding", BOUNDINGS)
@pytest.mark.parametrize("metric", ["ndcg", "ap", "rr", "nrbp"])
def test_bounded_swap_weights_equal_brute_force(metric, bounding):
    rng = np.random.default_rng(len(metric) * 7 + len(bounding))
    for n in list(range(1, 10)) * 8 + [15, 30, 60]:
        scores, labels = _random_list(rng, n)
        p = 0.9 if metric == "nrbp" else None
        trunc = 4 if metric == "ndcg" and rng.random() < 0.3 else None
        fast = swap_deltas(metric, scores, labels, p=p, truncation=trunc, bounding=bounding)
        slow = _brute_bounded(metric, scores, labels, p, trunc, bounding)
        # the distribution map interpolates a 257-point table of F~: agreement to its resolution
        atol = 2e-3 if bounding == "distribution" else 1e-12
        np.testing.assert_allclose(fast, slow, rtol=1e-9, atol=atol, err_msg=f"{metric} n={n} {labels}")
        assert np.isfinite(fast).all()


@pytest.mark.parametrize("obj", [LambdaObjective("nrbp@0.95+minmax"),
                                 LambdaObjective("ap", bounding="expectation", list_normalization=True),
                                 LambdaObjective("ndcg@5+expectation_max", score_normalization=True),
                                 LambdaObjective("rr+distribution"),
                                 LambdaObjective("ndcg+distribution"),
                                 LambdaObjective("ap+distribution"),
                                 LambdaObjective("nrbp@0.9+distribution", truncation=4),
                                 LambdaObjective("ndcg", bounding="distribution", hessian="xgboost")], ids=repr)
def test_bounded_gradients_equal_slow_assembly(obj):
    rng = np.random.default_rng(3)
    lists, scores, labels, ptr = _random_lists(rng, rng.integers(1, 25, 80))
    g, h = obj.gradients(scores, labels, ptr)
    assert np.isfinite(g).all() and np.isfinite(h).all()
    for q, (s, y) in enumerate(lists):
        gs, hs = _slow_gradients(obj, s, y)
        np.testing.assert_allclose(g[ptr[q]:ptr[q + 1]], gs, rtol=1e-9, atol=1e-13)
        np.testing.assert_allclose(h[ptr[q]:ptr[q + 1]], hs, rtol=1e-9, atol=1e-13)


@pytest.mark.parametrize("width", [257, STACK_DOUBLES, STACK_DOUBLES + 1])
@pytest.mark.parametrize("metric", ["ndcg", "ap"])
def test_distribution_loops_agree(metric, width):
    """The distribution map's vectorised loop (LightGBM's hessian, over a stack copy of the
    table, up to STACK_DOUBLES grid points) and the general loop (XGBoost's hessian, or a
    wider table) give the same gradients, and hessians in the ratio sigma**2 / 2."""
    rng = np.random.default_rng(width)
    _, scores, labels, ptr = _random_lists(rng, rng.integers(2, 40, 30))
    n_lists = len(ptr) - 1
    cdf = np.sort(rng.random((n_lists, width)), axis=1)
    cdf[:, 0], cdf[:, -1] = 0.0, 1.0
    x0, x1 = np.zeros(n_lists), np.full(n_lists, 1.5)
    obj = LambdaObjective(metric)
    out = {}
    for hess in ("lightgbm", "xgboost"):
        out[hess] = all_gradients(scores, labels, ptr, *delta_codes(metric), 0.0, 1.3, 0, False, 0.0, False,
                                  HESSIANS[hess], False, GAINS[obj.gain], obj.relevance_threshold, BOUND_DIST,
                                  np.ones(n_lists), cdf, x0, x1)
    (g_l, h_l), (g_x, h_x) = out["lightgbm"], out["xgboost"]
    assert np.abs(g_l).max() > 1e-3
    np.testing.assert_allclose(g_l, g_x, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(h_l, h_x * 1.3**2 / 2, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("bounding", BOUNDINGS)
@pytest.mark.parametrize("metric", ["ndcg", "ap", "rr", "nrbp@0.9"])
def test_degenerate_lists_get_zero_weight(metric, bounding):
    obj = LambdaObjective(metric, bounding=bounding)
    cases = {
        "no relevant item": ([0.3, 0.2, 0.1], [0, 0, 0]),
        "one item": ([0.5], [1]),
        "all relevant (max = min for binary metrics)": ([0.1, 0.3, 0.2], [1, 1, 1]),
    }
    for name, (s, y) in cases.items():
        g, h = obj.gradients(s, y, [0, len(s)])
        assert np.isfinite(g).all() and np.isfinite(h).all(), name
        binary_all_relevant = name.startswith("all") and not metric.startswith("ndcg")
        if name != "all relevant (max = min for binary metrics)" or binary_all_relevant:
            assert (g == 0).all() and (h == 0).all(), name


def test_bounds_are_prepared_once_per_label_set():
    obj = LambdaObjective("ap+minmax")
    rng = np.random.default_rng(0)
    labels, ptr = rng.integers(0, 2, 200), [0, 50, 120, 200]
    obj.gradients(rng.random(200), labels, ptr)
    first = obj._prepared
    obj.gradients(rng.random(200), labels.copy(), ptr)
    assert obj._prepared is first
    obj.gradients(rng.random(200), 1 - labels, ptr)
    assert obj._prepared is not first


def test_bounding_names_and_errors():
    assert LambdaObjective("nrbp@0.95+minmax").name == "nrbp@0.95+minmax"
    assert LambdaObjective("ndcg", truncation=30, bounding="distribution").name == "ndcg@30+distribution"
    with pytest.raises(ValueError, match="unknown bounding"):
        LambdaObjective("ndcg+zscore")
    with pytest.raises(ValueError, match="given twice"):
        LambdaObjective("ndcg+minmax", bounding="expectation")


@pytest.mark.parametrize("objective", ["nrbp@0.95+minmax", "ap+distribution"])
def test_gbranker_trains_with_a_bounded_objective(objective):
    from gbrank.datasets import make_letor

    X, y, qid = make_letor(n_queries=60, docs_per_query=(5, 30), n_features=8, random_state=2)
    model = GBRanker(objective, n_estimators=20, random_state=0).fit(X, y, qid=qid)
    assert model.score(X, y, qid) > 0.6
