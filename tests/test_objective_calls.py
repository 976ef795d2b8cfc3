"""The objective as the boosting libraries call it, round after round: XGBoost's hessian
computed through LightGBM's fast loops, and one objective object reused across data sets,
label and weight changes, copies and threads (nothing may be remembered from an earlier
call that a later one should not see)."""

import copy
import pickle
import threading

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb

from gbrank.backends import LightGBMObjective, XGBoostObjective
from gbrank.lambdas import LambdaObjective
from gbrank.lambdas import _kernels
from gbrank.lambdas._deltas import delta_codes
from gbrank.lambdas._objective import GAINS, HESSIANS
from gbrank.metrics import with_delta


def _lists(rng, n_lists, low=2, high=60, max_label=4):
    sizes = rng.integers(low, high, n_lists)
    ptr = np.concatenate(([0], np.cumsum(sizes)))
    scores = rng.normal(size=ptr[-1])
    scores[rng.random(ptr[-1]) < 0.2] = 0.0  # ties
    labels = rng.integers(0, max_label + 1, ptr[-1]).astype(float)
    return scores, labels, ptr, sizes


def _kernel_settings(obj, labels, ptr):
    """(the objective's settings as the kernels take them, with its hessian code: metric and
    form codes .. bounding code; its bounding arrays scale, cdf, x0, x1), cast to the types
    the wrapper passes, so no new specialisation is compiled."""
    f64 = _kernels._c_float64
    bound, scale, cdf, x0, x1 = obj._bounding_arrays(labels, ptr)
    return ((*map(int, delta_codes(obj.metric)), float(obj.kernel_parameter(labels)), float(obj.sigma),
             int(obj.truncation or 0), bool(obj.score_normalization), float(obj.score_normalization_eps),
             bool(obj.list_normalization), int(HESSIANS[obj.hessian]), bool(obj.sigmoid_table), int(GAINS[obj.gain]),
             float(obj.relevance_threshold), int(bound)), (f64(scale), f64(cdf), f64(x0), f64(x1)))


def _general_loop(obj, scores, labels, ptr):
    """The kernel called directly with the objective's hessian code, bypassing the
    wrapper's remapping."""
    f64 = _kernels._c_float64
    cfg, arrays = _kernel_settings(obj, labels, ptr)
    return _kernels._all_gradients(f64(scores), f64(labels), np.ascontiguousarray(ptr, dtype=np.int64), *cfg, *arrays)


XGB_HESSIAN = [
    LambdaObjective.like_xgboost(),
    LambdaObjective.like_xgboost("ap"),
    LambdaObjective("ndcg", hessian="xgboost"),
    LambdaObjective("ndcg", truncation=5, score_normalization=True, hessian="xgboost"),
    LambdaObjective("rr", list_normalization=True, hessian="xgboost"),
    LambdaObjective("nrbp@0.9", truncation=7, hessian="xgboost"),
    LambdaObjective("err", score_normalization=True, hessian="xgboost"),
    LambdaObjective("ndcg", hessian="xgboost", bounding="minmax"),
    LambdaObjective("ap", hessian="xgboost", bounding="distribution"),
    LambdaObjective("ndcg", truncation=32, score_normalization=True, list_normalization=True,
                    hessian="xgboost", sigmoid_table=True),
]


@pytest.mark.parametrize("obj", XGB_HESSIAN, ids=repr)
def test_xgboost_hessian_through_lightgbm_loops_equals_the_general_loop(obj):
    """With sigma = 1 the wrapper computes XGBoost's hessian as twice LightGBM's (through
    the vectorised loops); the kernel's own XGBoost-hessian loop is the oracle."""
    rng = np.random.default_rng(3)
    scores, labels, ptr, _ = _lists(rng, 80)
    scores[ptr[3]:ptr[4]] *= 400.0  # one list whose scores span > 700: the exp-per-pair path
    g, h = obj.gradients(scores, labels, ptr)
    g_ref, h_ref = _general_loop(obj, scores, labels, ptr)
    assert np.abs(g_ref).max() > 1e-3 and (h_ref > 0).sum() > len(h_ref) // 10
    np.testing.assert_allclose(g, g_ref, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(h, h_ref, rtol=1e-12, atol=1e-15)


def test_xgboost_hessian_is_exactly_twice_lightgbms_at_sigma_one():
    rng = np.random.default_rng(4)
    scores, labels, ptr, _ = _lists(rng, 50)
    kw = dict(truncation=32, score_normalization=True, list_normalization=True)
    g_x, h_x = LambdaObjective("ndcg", hessian="xgboost", **kw).gradients(scores, labels, ptr)
    g_l, h_l = LambdaObjective("ndcg", hessian="lightgbm", **kw).gradients(scores, labels, ptr)
    np.testing.assert_array_equal(g_x, g_l)
    np.testing.assert_array_equal(h_x, 2.0 * h_l)


def test_other_sigma_keeps_the_kernels_xgboost_hessian():
    """The remapping is exact only at sigma = 1 (XGBoost's); elsewhere the kernel's own
    XGBoost hessian is used unchanged."""
    rng = np.random.default_rng(5)
    scores, labels, ptr, _ = _lists(rng, 30)
    obj = LambdaObjective("ndcg", sigma=1.7, truncation=10, score_normalization=True, hessian="xgboost")
    g, h = obj.gradients(scores, labels, ptr)
    g_ref, h_ref = _general_loop(obj, scores, labels, ptr)
    np.testing.assert_array_equal(g, g_ref)
    np.testing.assert_array_equal(h, h_ref)


@pytest.mark.parametrize("table", [False, True], ids=["span-over-700", "sigmoid-table"])
@pytest.mark.parametrize("family", sorted(with_delta()))
def test_a_variants_exp_per_pair_lists_equal_the_general_kernel_to_the_bit(family, table):
    """The default settings run a metric's own variant (``gradient_kernel``), whose lists
    with an exp per pair (scores spanning > 700, LightGBM's sigmoid table) go through the
    loop its form shares with the other metrics' variants (``sparse_kernel``): the values
    are those of the general kernel's loop of any form, to the bit."""
    rng = np.random.default_rng(11)
    scores, labels, ptr, _ = _lists(rng, 40)
    for q in range(0, 40, 3):
        scores[ptr[q]:ptr[q + 1]] *= 400.0
    metric = family + "@0.8" if with_delta()[family].param == "p" else family
    obj = LambdaObjective(metric, sigmoid_table=table)
    assert _kernels.is_lean(HESSIANS[obj.hessian], obj.score_normalization, 0)
    g, h = obj.gradients(scores, labels, ptr)
    cfg, arrays = _kernel_settings(obj, labels, ptr)
    g_ref, h_ref = _kernels._all_gradients_general(scores, labels, ptr, _kernels.settings(*cfg),
                                                   _kernels.bounding(*arrays))
    assert np.abs(g_ref).max() > 1e-3
    np.testing.assert_array_equal(g, g_ref)
    np.testing.assert_array_equal(h, h_ref)


# ---------------------------------------------------------------------------------------
# one objective object, many calls


def _dmatrix(rng, n_lists=20):
    scores, labels, ptr, sizes = _lists(rng, n_lists)
    d = xgb.DMatrix(rng.normal(size=(len(labels), 3)), labels)
    d.set_group(sizes)
    return d, scores.astype(np.float32), labels, ptr


def _expected(obj, scores, labels, ptr, weights=None):
    return obj.gradients(scores, labels, ptr, weights)


@pytest.mark.parametrize("make", [lambda o: o, XGBoostObjective], ids=["LambdaObjective", "XGBoostObjective"])
def test_one_objective_on_two_dmatrices_and_changed_labels_and_weights(make):
    rng = np.random.default_rng(6)
    obj = LambdaObjective.like_xgboost()
    call = make(obj)
    d1, s1, y1, p1 = _dmatrix(rng)
    d2, s2, y2, p2 = _dmatrix(rng, 35)
    for _ in range(2):  # alternate between the two data sets
        for d, s, y, p in ((d1, s1, y1, p1), (d2, s2, y2, p2)):
            g, h = call(s, d)
            assert g.shape == h.shape == (len(y), 1)
            g0, h0 = _expected(obj, s, y, p)
            np.testing.assert_array_equal(g[:, 0], g0)
            np.testing.assert_array_equal(h[:, 0], h0)
    y_new = rng.permutation(y1)  # labels changed between rounds
    d1.set_label(y_new)
    g, h = call(s1, d1)
    np.testing.assert_array_equal(g[:, 0], _expected(obj, s1, y_new, p1)[0])
    w = rng.uniform(0.5, 2.0, len(p1) - 1).astype(np.float32).astype(float)  # query weights set later
    d1.set_weight(w)
    g, h = call(s1, d1)
    g0, h0 = _expected(obj, s1, y_new, p1, w)
    np.testing.assert_array_equal(g[:, 0], g0)
    np.testing.assert_array_equal(h[:, 0], h0)
    d1.set_label(np.full(len(y1), 0.5))  # and bad labels set later are still refused
    with pytest.raises(ValueError, match="integers"):
        call(s1, d1)


@pytest.mark.parametrize("make", [lambda o: o, LightGBMObjective], ids=["LambdaObjective", "LightGBMObjective"])
def test_one_objective_on_two_lightgbm_datasets_and_changed_labels_and_weights(make):
    rng = np.random.default_rng(7)
    obj = LambdaObjective.like_lightgbm()
    call = make(obj)
    sets = []
    for n_lists in (15, 25):
        scores, labels, ptr, sizes = _lists(rng, n_lists)
        ds = lgb.Dataset(rng.normal(size=(len(labels), 3)), labels, group=sizes, free_raw_data=False,
                         params={"verbosity": -1}).construct()
        sets.append((ds, scores, labels, ptr))
    for _ in range(2):
        for ds, s, y, p in sets:
            g, h = call(s, ds)
            g0, h0 = _expected(obj, s, y, p)
            np.testing.assert_array_equal(g, g0)
            np.testing.assert_array_equal(h, h0)
    ds, s, y, p = sets[0]
    y_new = rng.permutation(y)
    ds.set_label(y_new)
    np.testing.assert_array_equal(call(s, ds)[0], _expected(obj, s, y_new, p)[0])
    w = rng.uniform(0.5, 2.0, len(y)).astype(np.float32).astype(float)  # LightGBM: one weight per row
    ds.set_weight(w)
    g, h = call(s, ds)
    g0, h0 = _expected(obj, s, y_new, p, w)
    np.testing.assert_array_equal(g, g0)
    np.testing.assert_array_equal(h, h0)


@pytest.mark.parametrize("clone", [copy.deepcopy, lambda o: pickle.loads(pickle.dumps(o))],
                         ids=["deepcopy", "pickle"])
@pytest.mark.parametrize("obj", [LambdaObjective.like_xgboost(), XGBoostObjective(LambdaObjective("ap")),
                                 LambdaObjective("ndcg", hessian="xgboost", bounding="minmax")], ids=repr)
def test_copies_give_the_same_gradients_and_stay_independent(obj, clone):
    """LightGBM deep-copies its params; pickling is how objectives reach other processes."""
    rng = np.random.default_rng(8)
    d, s, y, p = _dmatrix(rng)
    before = obj(s, d)
    twin = clone(obj)
    d2, s2, y2, p2 = _dmatrix(rng, 30)
    twin(s2, d2)  # the copy used on other data does not change the original
    for g_a, g_b in zip(before, obj(s, d)):
        np.testing.assert_array_equal(g_a, g_b)
    for g_a, g_b in zip(before, twin(s, d)):
        np.testing.assert_array_equal(g_a, g_b)


def test_lightgbm_training_with_a_deep_copied_objective_matches_the_original():
    rng = np.random.default_rng(9)
    scores, labels, ptr, sizes = _lists(rng, 30)
    X = rng.normal(size=(len(labels), 4))
    obj = LightGBMObjective(LambdaObjective.like_lightgbm())
    params = dict(verbosity=-1, num_threads=1, deterministic=True, force_col_wise=True, min_sum_hessian_in_leaf=1e-3)
    a = lgb.train(dict(params, objective=obj), lgb.Dataset(X, labels, group=sizes), 5)
    b = lgb.train(dict(params, objective=copy.deepcopy(obj)), lgb.Dataset(X, labels, group=sizes), 5)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


def test_one_objective_called_from_two_threads():
    """Two trainings in two threads may share one objective object."""
    import numba

    obj = XGBoostObjective(LambdaObjective.like_xgboost())
    rng = np.random.default_rng(10)
    data = [_dmatrix(rng, n) for n in (40, 60)]
    expected = [obj(s, d) for d, s, _, _ in data]
    if numba.threading_layer() == "workqueue":
        pytest.skip("numba's workqueue threading layer cannot run parallel kernels from two threads")
    results = [[] for _ in data]

    def work(k):
        d, s, _, _ = data[k]
        for _ in range(20):
            results[k].append(obj(s, d))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(data))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k, runs in enumerate(results):
        assert len(runs) == 20
        for g, h in runs:
            np.testing.assert_array_equal(g, expected[k][0])
            np.testing.assert_array_equal(h, expected[k][1])
