"""The torch twin of the LambdaRank kernel (``gbrank/torch/_boosting.py``) and the XGBoost loop
that keeps margins and gradients on XGBoost's device (``train_xgboost_device``).

The oracle of the gradients is the numba kernel (``LambdaObjective.gradients``), itself
checked against brute force in ``tests/test_lambdas.py``; the oracle of the loop is
``xgboost.train(obj=XGBoostObjective(...))`` on the same data.
"""

from __future__ import annotations

import warnings
import zlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")
xgb = pytest.importorskip("xgboost")

from gbrank import LambdaObjective  # noqa: E402
from gbrank.backends import XGBoostMetric, XGBoostObjective, xgboost_params  # noqa: E402
from gbrank.backends._xgboost import (_device_problems, device_fallback_reasons, on_gpu, train_xgboost,  # noqa: E402
                                      train_xgboost_device)
from gbrank.datasets import make_letor  # noqa: E402
from gbrank.torch import DeviceLambdaGradients, device_objective_problems  # noqa: E402
from gbrank.metrics import METRICS, with_delta  # noqa: E402
from gbrank.torch._boosting import PaddedLists, lambda_gradients  # noqa: E402

SETTINGS = [  # (score normalisation, list normalisation, hessian, sigma)
    (False, False, "lightgbm", 1.0),
    (True, True, "xgboost", 1.0),
    (True, False, "lightgbm", 1.7),
    (False, True, "xgboost", 0.6),
]


def _random_lists(rng, n_queries, max_len, ties):
    sizes = rng.integers(1, max_len, size=n_queries)
    ptr = np.concatenate(([0], np.cumsum(sizes)))
    n = int(ptr[-1])
    labels = rng.integers(0, 5, size=n).astype(np.float64)
    scores = np.round(rng.normal(size=n), 1) if ties else rng.normal(size=n) * rng.choice([0.1, 1.0, 8.0])
    return scores, labels, ptr


#: every objective metric of the record (``with_delta()``), a persistence family with its p
DELTA_METRICS = [f"{rec.name}@0.9" if rec.param == "p" else rec.name for rec in with_delta().values()]


@pytest.mark.parametrize("metric", DELTA_METRICS)
@pytest.mark.parametrize("truncation", [None, 1, 5])
@pytest.mark.parametrize("setting", SETTINGS)
def test_torch_gradients_equal_the_numba_kernel(metric, truncation, setting):
    sn, ln, hessian, sigma = setting
    if METRICS[metric.partition("@")[0]].param == "p" and truncation:
        pytest.skip("a persistence family takes its p after '@', not a truncation")
    obj = LambdaObjective(metric, truncation=truncation, score_normalization=sn, list_normalization=ln,
                          hessian=hessian, sigma=sigma)
    rng = np.random.default_rng(zlib.crc32(f"{metric} {truncation} {setting}".encode()))
    with_pairs = 0
    for trial in range(12):
        scores, labels, ptr = _random_lists(rng, int(rng.integers(1, 25)), 30, ties=trial % 3 == 0)
        weights = rng.uniform(0.2, 3.0, size=len(ptr) - 1) if trial % 2 else None
        g0, h0 = obj.gradients(scores, labels, ptr, weights)
        # tiny blocks on odd trials: the lists are split over many blocks of different widths
        lists = PaddedLists(labels, ptr, truncation=obj.truncation, max_entries=40 if trial % 2 else 1 << 20)
        g1, h1 = lambda_gradients(obj, torch.tensor(scores), lists,
                                  None if weights is None else torch.tensor(weights),
                                  parameter=obj.kernel_parameter(labels))
        scale = 1.0 + np.abs(g0).max() + np.abs(h0).max()
        np.testing.assert_allclose(g1.numpy(), g0, rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(h1.numpy(), h0, rtol=0, atol=1e-12 * scale)
        with_pairs += np.abs(g0).max() > 0
    assert with_pairs >= 8  # most draws had pairs to weigh


def test_hessian_floor_and_one_row_lists():
    obj = LambdaObjective("ndcg", hessian_floor=0.05)
    scores = np.array([0.3, 1.0, 0.2, 0.0, 5.0])
    labels = np.array([1.0, 0.0, 2.0, 0.0, 1.0])
    ptr = np.array([0, 3, 4, 5])  # two one-row lists: no pair, g = 0, h = the floor
    g0, h0 = obj.gradients(scores, labels, ptr)
    state = DeviceLambdaGradients(obj, labels, ptr)
    state.margins.values = torch.tensor(scores, dtype=torch.float32)
    g1, h1 = state.gradients()
    assert g1.shape == (5, 1) and g1.dtype == np.float32
    np.testing.assert_allclose(g1[:, 0], g0, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(h1[:, 0], h0, rtol=1e-6, atol=1e-7)
    assert h1[3, 0] == np.float32(0.05) and g1[4, 0] == 0.0


@pytest.mark.parametrize("option,value", [("stochastic", 2), ("pair_method", "mean"), ("weighting", "ndcg_loss2"),
                                          ("bounding", "minmax"), ("sigmoid_table", True)])
def test_settings_without_a_torch_twin_are_named(option, value):
    obj = LambdaObjective("ndcg", **{option: value})
    assert device_objective_problems(obj) == [f"{option}={value!r}"]
    with pytest.raises(ValueError, match=f"{option}=.*XGBoostObjective"):
        lambda_gradients(obj, torch.zeros(3), PaddedLists([1.0, 0.0, 0.0], [0, 3]))
    assert _device_problems(obj) == [f"the torch gradients do not cover {option}={value!r}"]
    assert _device_problems(LambdaObjective("ap")) == []
    assert _device_problems(object()) == ["object is not a gbrank LambdaObjective"]


def test_what_sends_a_gpu_training_through_the_host():
    import pandas as pd

    obj = LambdaObjective("ndcg")
    X = np.zeros((3, 2))
    assert device_fallback_reasons({"device": "cuda", "base_score": 0.0}, X, obj) == []
    assert device_fallback_reasons({"device": "cuda", "base_score": 0.5}, X, obj) == [
        "base_score=0.5 (the device loop starts the margins at 0)"]
    frame = pd.DataFrame({"a": pd.Categorical(["x", "y", "x"]), "b": [1.0, 2.0, 3.0]})
    assert device_fallback_reasons({"device": "cuda"}, frame, LambdaObjective("ndcg", stochastic=1)) == [
        "the torch gradients do not cover stochastic=1",
        "categorical columns (a DataFrame; the device loop takes numeric arrays)"]


def test_gpu_device_names():
    assert on_gpu({"device": "cuda"}) and on_gpu({"device": "cuda:1"}) and on_gpu({"device": "gpu"})
    assert not on_gpu({}) and not on_gpu({"device": "cpu"})


def _letor(n_queries=40, seed=0):
    X, y, qid = make_letor(n_queries=n_queries, docs_per_query=(3, 40), n_features=8, max_label=4,
                           random_state=seed)
    sizes = np.unique(qid, return_counts=True)[1]
    return X, y, np.concatenate(([0], np.cumsum(sizes)))


PARAMS = dict(tree_method="hist", max_depth=4, eta=0.3, base_score=0.0, nthread=1, seed=0)


@pytest.mark.parametrize("objective", [LambdaObjective.like_xgboost(), LambdaObjective("nrbp@0.8"),
                                       LambdaObjective("err", truncation=10, list_normalization=True)])
def test_device_loop_trains_the_model_of_xgboost_train_with_the_objective(objective):
    X, y, ptr = _letor()
    weights = np.linspace(0.5, 2.0, len(ptr) - 1)
    params, obj = xgboost_params(PARAMS, objective)
    # the weights at construction: they weigh the quantile sketch too, as a DMatrix's do under hist
    dtrain = xgb.QuantileDMatrix(X.astype(np.float32), label=y.astype(np.float32), group=np.diff(ptr), weight=weights)
    reference = xgb.train(params, dtrain, num_boost_round=12, obj=obj)
    booster, best, history = train_xgboost_device(PARAMS, X, y, ptr, weights, [], objective,
                                                  XGBoostMetric(["ndcg@10"]), 12, None, False)
    assert best == 12 and history == {}
    d = xgb.DMatrix(X)
    ref, ours = reference.predict(d), booster.predict(d)
    assert np.ptp(ours) > 0.1  # it learned something
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-5)


def test_device_loop_evaluates_and_stops_early_as_the_host_path():
    X, y, ptr = _letor(60)
    Xv, yv, pv = _letor(30, seed=1)
    metric = XGBoostMetric(["ndcg@5", "map"])
    obj = LambdaObjective.like_xgboost()
    host = train_xgboost(PARAMS, X, y, ptr, None, [(Xv, yv, pv)], obj, metric, 60, 3, False)
    dev = train_xgboost_device(PARAMS, X, y, ptr, None, [(Xv, yv, pv)], obj, metric, 60, 3, False)
    assert dev[1] == host[1] < 60  # the same best round, and it did stop early
    assert set(dev[2]["valid_0"]) == set(host[2]["valid_0"]) == {"ndcg@5", "ap"}
    for name in ("ndcg@5", "ap"):
        np.testing.assert_allclose(dev[2]["valid_0"][name], host[2]["valid_0"][name], atol=1e-6)
    with pytest.raises(ValueError, match="early_stopping_rounds needs an eval_set"):
        train_xgboost_device(PARAMS, X, y, ptr, None, [], obj, metric, 5, 3, False)
    with pytest.raises(ValueError, match="base_score must be 0"):
        train_xgboost_device(dict(PARAMS, base_score=0.5), X, y, ptr, None, [], obj, metric, 5, None, False)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_on_cuda_the_gradients_stay_on_the_gpu_and_give_the_host_model():
    X, y, ptr = _letor(80)
    objective = LambdaObjective.like_xgboost()
    state = DeviceLambdaGradients(objective, y, ptr, device="cuda")
    g, h = state.gradients()
    assert g.is_cuda and h.is_cuda and g.shape == (len(y), 1)
    gpu = dict(PARAMS, device="cuda")
    params, obj = xgboost_params(gpu, objective)
    data = torch.as_tensor(X.astype(np.float32), device="cuda")
    dtrain = xgb.QuantileDMatrix(data, label=y.astype(np.float32), group=np.diff(ptr))
    reference = xgb.train(params, dtrain, num_boost_round=10, obj=obj)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        booster, _, _ = train_xgboost(gpu, X, y, ptr, None, [], objective, XGBoostMetric(["ndcg@10"]), 10,
                                      None, False)
    assert not [w for w in caught if "on the host" in str(w.message) or "eagerly" in str(w.message)]
    d = xgb.DMatrix(X)
    np.testing.assert_allclose(booster.predict(d), reference.predict(d), rtol=0, atol=1e-4)
    with pytest.warns(UserWarning, match="computed on the host"):
        train_xgboost(gpu, X, y, ptr, None, [], LambdaObjective("ndcg", stochastic=1, random_state=0),
                      XGBoostMetric(["ndcg@10"]), 2, None, False)


@pytest.mark.slow
def test_compiled_pair_sums_equal_the_numba_kernel():
    """The ``torch.compile`` path (the default on CUDA) on the CPU: the same values (about a
    minute of compilation, hence slow)."""
    rng = np.random.default_rng(7)
    scores, labels, ptr = _random_lists(rng, 200, 50, ties=False)
    for obj in (LambdaObjective.like_xgboost(), LambdaObjective("ap"), LambdaObjective("err", truncation=4)):
        g0, h0 = obj.gradients(scores, labels, ptr)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # no fallback to eager
            g1, h1 = lambda_gradients(obj, torch.tensor(scores), PaddedLists(labels, ptr, truncation=obj.truncation),
                                      parameter=obj.kernel_parameter(labels), compiled=True)
        np.testing.assert_allclose(g1.numpy(), g0, rtol=0, atol=1e-12)
        np.testing.assert_allclose(h1.numpy(), h0, rtol=0, atol=1e-12)
