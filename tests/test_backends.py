"""gbrank objectives inside LightGBM and XGBoost: reproducing the built-ins, the adapters,
and the native API against GBRanker; and one suite parametrised over the backend registry
(every record: consistent, early-stops on a gbrank metric, applies its weight rule)."""

import numpy as np
import pytest

from gbrank.backends import (BACKENDS, SETTINGS, Backend, CatBoostMetric, LGBMRankerObjective, LightGBMMetric,
                             LightGBMObjective, MetricCallback, XGBoostMetric, XGBoostObjective)
from gbrank.datasets import load_letor, make_letor
from gbrank.estimators import GBRanker
from gbrank.lambdas import LambdaObjective

lgb = pytest.importorskip("lightgbm")
xgb = pytest.importorskip("xgboost")


def _sizes(qid):
    return np.diff(np.flatnonzero(np.r_[True, qid[1:] != qid[:-1], True]))


@pytest.fixture(scope="module")
def mq2008_fold1(dataset_path):
    split = load_letor(dataset_path("mq2008") / "Fold1" / "train.txt.gz")
    return split.X, split.y, split.qid


@pytest.fixture(scope="module")
def small():
    return make_letor(n_queries=60, docs_per_query=(5, 40), n_features=10, random_state=3)


LGB_PARAMS = dict(learning_rate=0.1, num_leaves=31, verbosity=-1, num_threads=2, seed=1,
                  deterministic=True, force_col_wise=True)


def _lgb_train(X, y, qid, objective, rounds=20):
    return lgb.train(dict(LGB_PARAMS, objective=objective), lgb.Dataset(X, y, group=_sizes(qid)), rounds)


def _first_split(booster):
    tree = booster.dump_model()["tree_info"][0]["tree_structure"]
    return tree["split_feature"], tree["threshold"]


def test_reproduces_lightgbm_lambdarank_on_mq2008(mq2008_fold1):
    X, y, qid = mq2008_fold1
    builtin = _lgb_train(X, y, qid, "lambdarank")
    ours = _lgb_train(X, y, qid, LightGBMObjective(LambdaObjective.like_lightgbm()))
    assert _first_split(ours) == _first_split(builtin)
    np.testing.assert_allclose(ours.predict(X), builtin.predict(X), rtol=0, atol=1e-4)


XGB_TOPK = dict(lambdarank_pair_method="topk", lambdarank_num_pair_per_sample=32,
                lambdarank_normalization=True, lambdarank_score_normalization=True)
XGB_PARAMS = dict(eta=0.1, max_depth=6, tree_method="hist", nthread=2, seed=1, base_score=0.5,
                  disable_default_eval_metric=1)


@pytest.mark.parametrize("metric, builtin", [("ndcg", "rank:ndcg"), ("ap", "rank:map")])
def test_reproduces_xgboost_lambdarank_on_mq2008(mq2008_fold1, metric, builtin):
    X, y, qid = mq2008_fold1
    if metric == "ap":
        y = (y >= 1).astype(float)  # XGBoost's MAP takes binary labels
    d = xgb.DMatrix(X, y)
    d.set_group(_sizes(qid))
    ref = xgb.train(dict(XGB_PARAMS, objective=builtin, **XGB_TOPK), d, 20)
    ours = xgb.train(XGB_PARAMS, d, 20, obj=XGBoostObjective(LambdaObjective.like_xgboost(metric)))
    assert ours.get_dump()[0].split("\n")[0] == ref.get_dump()[0].split("\n")[0]
    np.testing.assert_allclose(ours.predict(d), ref.predict(d), rtol=0, atol=1e-4)


@pytest.mark.parametrize("objective", ["nrbp@0.9", "ap", LambdaObjective("rr", truncation=5)], ids=str)
def test_native_lightgbm_api_and_gbranker_give_identical_models(small, objective):
    X, y, qid = small
    model = GBRanker(objective, n_estimators=15, random_state=1, n_jobs=2,
                     backend_params={"deterministic": True, "force_col_wise": True}).fit(X, y, qid=qid)
    obj = objective if isinstance(objective, LambdaObjective) else LambdaObjective(objective)
    params = model._library_params(obj)
    booster = lgb.train(dict(params, objective=LightGBMObjective(obj), metric="None", verbosity=-1),
                        lgb.Dataset(X, y, group=_sizes(qid)), 15)
    np.testing.assert_array_equal(model.predict(X), booster.predict(X))


def test_native_xgboost_api_and_gbranker_give_identical_models(small):
    X, y, qid = small
    model = GBRanker("nrbp@0.95", backend="xgboost", n_estimators=15, random_state=1, n_jobs=2).fit(X, y, qid=qid)
    obj = LambdaObjective("nrbp@0.95")
    d = xgb.DMatrix(X, y)
    d.set_group(_sizes(qid))
    params = dict(model._library_params(obj), disable_default_eval_metric=1)
    booster = xgb.train(params, d, 15, obj=XGBoostObjective(obj))
    np.testing.assert_array_equal(model.predict(X), booster.predict(xgb.DMatrix(X)))


def test_lgbmranker_four_argument_callable_gets_groups(small):
    X, y, qid = small
    obj = LambdaObjective("ndcg")
    ranker = lgb.LGBMRanker(objective=LGBMRankerObjective(obj), n_estimators=10, verbose=-1,
                            min_sum_hessian_in_leaf=1e-3, n_jobs=2, deterministic=True, force_col_wise=True)
    ranker.fit(X, y, group=_sizes(qid))
    booster = lgb.train(dict(objective=LightGBMObjective(obj), verbosity=-1, min_sum_hessian_in_leaf=1e-3,
                             num_threads=2, deterministic=True, force_col_wise=True),
                        lgb.Dataset(X, y, group=_sizes(qid)), 10)
    np.testing.assert_allclose(ranker.predict(X), booster.predict(X), atol=1e-12)
    assert np.std(ranker.predict(X)) > 0


def test_metric_callbacks_report_the_evaluator_numbers(small):
    import gbrank

    X, y, qid = small
    scores = np.random.default_rng(0).random(len(y))
    expected = gbrank.evaluate(y, scores, qid, ["ndcg@10", "nrbp@0.95", "mean_rank"]).mean()
    d = lgb.Dataset(X, y, group=_sizes(qid)).construct()
    got = LightGBMMetric(["ndcg@10", "nrbp@0.95", "mean_rank"])(scores, d)
    assert [(n, hb) for n, _, hb in got] == [("ndcg@10", True), ("nrbp@0.95", True), ("mean_rank", False)]
    np.testing.assert_allclose([v for _, v, _ in got], expected.to_numpy())
    dx = xgb.DMatrix(X, y)
    dx.set_group(_sizes(qid))
    gotx = XGBoostMetric(["ndcg@10", "nrbp@0.95", "mean_rank"])(scores.astype(np.float32), dx)
    np.testing.assert_allclose([v for _, v in gotx], expected.to_numpy(), rtol=1e-6)


def test_xgboost_objective_uses_query_weights(small):
    X, y, qid = small
    sizes = _sizes(qid)
    d = xgb.DMatrix(X, y)
    d.set_group(sizes)
    w = np.arange(1, len(sizes) + 1, dtype=float)
    d.set_weight(w)
    obj = LambdaObjective("ap")
    g, h = XGBoostObjective(obj)(np.zeros(len(y), np.float32), d)
    g0, h0 = obj.gradients(np.zeros(len(y)), y, np.r_[0, np.cumsum(sizes)])
    assert g.shape == (len(y), 1)
    np.testing.assert_allclose(g[:, 0], g0 * np.repeat(w, sizes))
    np.testing.assert_allclose(h[:, 0], h0 * np.repeat(w, sizes))


def test_one_long_list_trains_within_1_gb(repo_module):
    """No n x n allocation per list: one list of 50,000 documents with truncation trains
    in a fresh process whose peak resident memory stays under 1 GB (numba kernels loaded
    from the on-disk cache; compilation is measured separately)."""
    assert repo_module("benchmarks/bench_objective_speed.py").long_list_peak_rss_mib() < 1024


# ---------------------------------------------------------------------------------------
# one suite over the backend registry: every record trains, early-stops on a gbrank metric,
# applies its weight rule and reports the evaluator's numbers


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_every_backend_record_is_consistent(name):
    record = BACKENDS[name]
    assert record.name == name and record.objectives
    assert set(record.params) <= set(SETTINGS) and record.tree_size in record.params
    assert record.binary_objectives <= set(record.objectives)
    # settings left at None: only the library's values for "unset", the fixed and derived ones
    params = record.library_params({s: None for s in SETTINGS if s != "subsample"})
    derived = record.derived({}) if record.derived else {}
    assert set(params) == {record.params[s] for s in record.unset} | set(record.fixed) | set(derived)


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_every_backend_early_stops_on_a_gbrank_metric(small, name):
    import gbrank

    X, y, qid = small
    cut = np.searchsorted(qid, qid[len(qid) * 2 // 3])
    record = BACKENDS[name]
    objective = f"{name}:{record.objectives[0]}"
    model = GBRanker(objective, backend=name, n_estimators=60, learning_rate=0.3, eval_metric="ndcg@10",
                     early_stopping_rounds=4, random_state=0, n_jobs=1).fit(
        X[:cut], y[:cut], qid=qid[:cut], eval_set=[(X[cut:], y[cut:], qid[cut:])])
    history = model.evals_result_["valid_0"]["ndcg@10"]
    assert len(history) == min(60, model.best_iteration_ + 4) and history[model.best_iteration_ - 1] == max(history)
    direct = gbrank.evaluate(y[cut:], model.predict(X[cut:]), qid[cut:], "ndcg@10").mean().iloc[0]
    assert history[model.best_iteration_ - 1] == pytest.approx(direct, abs=1e-6)


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_every_backend_applies_its_weight_rule(name):
    record = BACKENDS[name]
    ptr = np.array([0, 2, 5])
    per_query = np.array([1.0, 1.0, 3.0, 3.0, 3.0])
    varying = np.array([1.0, 2.0, 3.0, 3.0, 3.0])
    expected = {"row": per_query, "query": np.array([1.0, 3.0]), "query-as-rows": per_query}[record.weights]
    np.testing.assert_array_equal(record.library_weights(per_query, ptr), expected)
    if record.weights == "row":
        np.testing.assert_array_equal(record.library_weights(varying, ptr), varying)
    else:
        with pytest.raises(ValueError, match=f"{record.label}'s ranking weights are per query"):
            record.library_weights(varying, ptr)


def test_catboost_metric_reports_the_evaluator_numbers(small):
    import gbrank

    X, y, qid = small
    scores = np.random.default_rng(0).random(len(y))
    ptr = np.r_[0, np.cumsum(_sizes(qid))]
    metric = CatBoostMetric(["nrbp@0.95", "ndcg@10"]).bound(y, ptr)
    expected = gbrank.evaluate(y, scores, qid, ["nrbp@0.95"]).mean().iloc[0]
    assert metric.evaluate([scores], y, None) == (pytest.approx(expected), 1.0)
    assert metric.evaluate([scores[:-1]], y[:-1], None) == (0.0, 1.0)  # CatBoost's call on the learning set
    assert metric.is_max_optimal()


def test_a_backend_record_refuses_unknown_settings():
    with pytest.raises(ValueError, match="unknown settings"):
        Backend(name="x", label="X", extra="x", train=None, predict=None, metric=MetricCallback,
                params={"leaves": "num_leaves"})


# -- native conventions: a LambdaObjective and the metric adapter as the libraries call them --

def test_native_lambda_objective_is_a_lightgbm_objective_in_train_and_lgbmranker(small):
    X, y, qid = small
    obj = LambdaObjective("nrbp@0.9")
    common = dict(min_sum_hessian_in_leaf=1e-3, deterministic=True, force_col_wise=True)
    booster = lgb.train(dict(common, objective=obj, verbosity=-1, num_threads=2),
                        lgb.Dataset(X, y, group=_sizes(qid)), 10)
    adapted = lgb.train(dict(common, objective=LightGBMObjective(obj), verbosity=-1, num_threads=2),
                        lgb.Dataset(X, y, group=_sizes(qid)), 10)
    ranker = lgb.LGBMRanker(objective=obj, n_estimators=10, verbose=-1, n_jobs=2, **common)
    metric = LightGBMMetric(["nrbp@0.9", "ndcg@10"])
    ranker.fit(X, y, group=_sizes(qid), eval_X=(X,), eval_y=(y,), eval_group=[_sizes(qid)],
               eval_metric=metric)
    np.testing.assert_array_equal(booster.predict(X), adapted.predict(X))
    np.testing.assert_allclose(ranker.predict(X), booster.predict(X), atol=1e-12)
    # LGBMRanker's eval_metric calls the adapter as (y_true, y_pred, weight, group)
    import gbrank

    history = ranker.evals_result_["training"]
    expected = gbrank.evaluate(y, ranker.predict(X), qid, ["nrbp@0.9", "ndcg@10"]).mean()
    assert history["nrbp@0.9"][-1] == pytest.approx(expected["nrbp@0.9"])
    assert history["ndcg@10"][-1] == pytest.approx(expected["ndcg@10"])


def test_native_lambda_objective_is_an_xgboost_train_objective(small):
    X, y, qid = small
    obj = LambdaObjective("ap")
    d = xgb.DMatrix(X, y, qid=qid)
    params = dict(XGB_PARAMS, base_score=0.0, min_child_weight=1e-3)
    ours = xgb.train(params, d, 8, obj=obj, evals=[(d, "train")], custom_metric=XGBoostMetric("ap"),
                     verbose_eval=False)
    adapted = xgb.train(params, d, 8, obj=XGBoostObjective(obj))
    np.testing.assert_array_equal(ours.predict(d), adapted.predict(d))


def test_native_conventions_that_cannot_work_say_which_does(small):
    X, y, qid = small
    obj = LambdaObjective("ndcg")
    with pytest.raises(TypeError, match="without query groups.*LGBMRanker.*xgboost.train"):
        xgb.XGBRegressor(objective=obj, n_estimators=2).fit(X, y)
    with pytest.raises(TypeError, match="without query groups"):
        lgb.LGBMRegressor(objective=obj, n_estimators=2, verbose=-1).fit(X, y)
    with pytest.raises(TypeError, match="CatBoost passes a Python objective no query groups"):
        obj.calc_ders_range([0.0], [1.0], None)
    with pytest.raises(TypeError, match="LightGBMMetric needs query groups"):
        LightGBMMetric("ndcg@10")(y, np.zeros(len(y)), None, None)
    with pytest.raises(ValueError, match="group sizes"):
        obj(y, np.zeros(len(y)), None, np.array([0, len(y)]))
