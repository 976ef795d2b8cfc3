"""GBRanker: one behavioural suite over the backends, scikit-learn tools, bad inputs, and the
library parameters each backend record produces (pinned)."""

import pickle

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, GroupKFold

import gbrank
from gbrank.datasets import make_letor
from gbrank.estimators import GBRanker
from gbrank.lambdas import LambdaObjective

BACKENDS = ["lightgbm", "xgboost"]


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_letor(n_queries=120, docs_per_query=(8, 30), n_features=12, random_state=5)
    cut = np.searchsorted(qid, qid[len(qid) * 2 // 3])
    return (X[:cut], y[:cut], qid[:cut]), (X[cut:], y[cut:], qid[cut:])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("objective", ["ndcg", "ap", "rr", "nrbp@0.95"])
def test_default_settings_learn(data, backend, objective):
    (X, y, qid), (Xt, yt, qt) = data
    model = GBRanker(objective, backend=backend, n_estimators=40, random_state=0).fit(X, y, qid=qid)
    random = gbrank.evaluate(yt, np.random.default_rng(0).random(len(yt)), qt, "ndcg@10").mean().iloc[0]
    assert model.score(Xt, yt, qt) > random + 0.1


@pytest.mark.parametrize("backend, builtin", [("lightgbm", "lightgbm:lambdarank"),
                                              ("lightgbm", "lightgbm:rank_xendcg"),
                                              ("xgboost", "xgboost:rank:ndcg"),
                                              ("xgboost", "xgboost:rank:pairwise"),
                                              ("catboost", "catboost:YetiRank"),
                                              ("catboost", "catboost:LambdaMart:metric=NDCG")])
def test_builtin_objectives_run_through_the_estimator(data, backend, builtin):
    (X, y, qid), (Xt, yt, qt) = data
    model = GBRanker(builtin, backend=backend, n_estimators=30, random_state=0).fit(X, y, qid=qid)
    assert model.objective_ == builtin.split(":", 1)[1]
    assert model.score(Xt, yt, qt) > 0.5


@pytest.mark.parametrize("backend", BACKENDS)
def test_early_stopping_on_a_gbrank_metric(data, backend):
    (X, y, qid), (Xt, yt, qt) = data
    model = GBRanker("ndcg", backend=backend, n_estimators=300, learning_rate=0.3,
                     eval_metric=["nrbp@0.95", "ap"], early_stopping_rounds=5).fit(
        X, y, qid=qid, eval_set=[(Xt, yt, qt)])
    history = model.evals_result_["valid_0"]["nrbp@0.95"]
    assert model.best_iteration_ < 300
    assert len(history) == model.best_iteration_ + 5
    assert history[model.best_iteration_ - 1] == max(history)
    assert "ap" in model.evals_result_["valid_0"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_clone_pickle_and_refit_are_consistent(data, backend):
    (X, y, qid), _ = data
    model = GBRanker("nrbp@0.9", backend=backend, n_estimators=10, random_state=0, n_jobs=1)
    fitted = clone(model).fit(X, y, qid=qid)
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(again.predict(X), fitted.predict(X))
    np.testing.assert_array_equal(clone(model).fit(X, y, qid=qid).predict(X), fitted.predict(X))
    assert clone(model).get_params() == model.get_params()


def test_grid_search_with_group_kfold_routes_qid(data):
    (X, y, qid), _ = data
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(GBRanker(n_estimators=10, random_state=0),
                              {"objective": ["ndcg", "nrbp@0.95"]}, cv=GroupKFold(n_splits=3))
        search.fit(X, y, qid=qid, groups=qid)
    assert set(search.cv_results_["param_objective"]) == {"ndcg", "nrbp@0.95"}
    assert np.all(search.cv_results_["mean_test_score"] > 0.3)


def test_xgboost_weights_must_be_per_query(data):
    (X, y, qid), _ = data
    w = np.ones(len(y))
    w[1] = 2.0
    with pytest.raises(ValueError, match="constant within each query"):
        GBRanker(backend="xgboost", n_estimators=2).fit(X, y, qid=qid, sample_weight=w)
    per_query = np.repeat(np.arange(len(np.unique(qid))) + 1.0, np.unique(qid, return_counts=True)[1])
    GBRanker(backend="xgboost", n_estimators=2).fit(X, y, qid=qid, sample_weight=per_query)


def test_not_fitted_and_feature_count():
    with pytest.raises(NotFittedError):
        GBRanker().predict(np.zeros((2, 3)))
    X, y, qid = make_letor(n_queries=5, n_features=4, random_state=0)
    model = GBRanker(n_estimators=2).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="3 features, but the model was fitted with 4"):
        model.predict(X[:, :3])


@pytest.mark.parametrize("kwargs, fit_change, message", [
    ({"objective": "ndgc"}, {}, "unknown objective metric"),
    ({"objective": "nrbp@1.5"}, {}, "strictly between 0 and 1"),
    ({"objective": "xgboost:rank:ndcg"}, {}, "use backend='xgboost'"),
    ({"objective": "lightgbm:lambdamart"}, {}, "unknown built-in objective"),
    ({"backend": "sklearn"}, {}, "backend must be one of"),
    ({"backend": "catboost"}, {}, "CatBoost takes no gbrank objective"),
    ({"objective": "catboost:YetiRank"}, {}, "use backend='catboost'"),
    ({"objective": "catboost:YetiRank", "backend": "catboost", "num_leaves": 7}, {}, "no equivalent of"),
    ({}, {"qid": "interleaved"}, "more than one run of rows"),
    ({}, {"qid": None}, "pass qid"),
    ({}, {"y": "short"}, "one entry per row"),
    ({}, {"y": "nan"}, "NaN or infinite"),
    ({}, {"y": "big"}, "over 30"),
    ({}, {"y": "negative"}, "non-negative"),
    ({}, {"early": True}, "needs an eval_set"),
    ({"objective": "xgboost:rank:map", "backend": "xgboost"}, {}, "takes binary labels"),
])
def test_bad_inputs_raise_clear_errors(kwargs, fit_change, message):
    X, y, qid = make_letor(n_queries=6, n_features=3, random_state=0)
    y = y.copy()
    qid = qid.copy()
    if fit_change.get("qid") == "interleaved":
        qid = np.r_[qid[1:], qid[:1]]
    elif "qid" in fit_change:
        qid = None
    if fit_change.get("y") == "short":
        y = y[:-1]
    elif fit_change.get("y") == "nan":
        y[3] = np.nan
    elif fit_change.get("y") == "big":
        y[3] = 31
    elif fit_change.get("y") == "negative":
        y[3] = -1
    if fit_change.get("early"):
        kwargs = dict(kwargs, early_stopping_rounds=3)
    with pytest.raises((ValueError, TypeError), match=message):
        GBRanker(n_estimators=2, **kwargs).fit(X, y, qid=qid)


def test_objective_instance_is_used_as_given(data):
    (X, y, qid), _ = data
    obj = LambdaObjective.like_lightgbm()
    model = GBRanker(obj, n_estimators=3).fit(X, y, qid=qid)
    assert model.objective_ is obj


def test_catboost_early_stops_on_a_gbrank_metric_and_weighs_queries(data):
    (X, y, qid), (Xt, yt, qt) = data
    model = GBRanker("catboost:YetiRank", backend="catboost", n_estimators=200, learning_rate=0.3, max_depth=4,
                     eval_metric=["nrbp@0.95"], early_stopping_rounds=5, random_state=0, n_jobs=1).fit(
        X, y, qid=qid, eval_set=[(Xt, yt, qt)])
    history = model.evals_result_["valid_0"]["nrbp@0.95"]
    assert model.best_iteration_ < 200 and len(history) == model.best_iteration_ + 5
    assert history[model.best_iteration_ - 1] == max(history)
    # the best round's watched value is that of the kept model's predictions
    best = gbrank.evaluate(yt, model.predict(Xt), qt, "nrbp@0.95").mean().iloc[0]
    assert history[model.best_iteration_ - 1] == pytest.approx(best, abs=1e-12)
    w = np.ones(len(y))
    w[1] = 2.0
    with pytest.raises(ValueError, match="CatBoost's ranking weights are per query"):
        GBRanker("catboost:YetiRank", backend="catboost", n_estimators=2).fit(X, y, qid=qid, sample_weight=w)


# The library parameters GBRanker produced before the backend records (pinned: a record
# must not change a model).
PINNED = [
    ("lightgbm", {}, "ndcg",
     {"learning_rate": 0.1, "num_leaves": 31, "max_depth": -1, "bagging_fraction": 1.0, "bagging_freq": 0,
      "feature_fraction": 1.0, "lambda_l2": 0.0, "min_sum_hessian_in_leaf": 1e-3}),
    ("lightgbm", {}, "lightgbm:lambdarank",
     {"learning_rate": 0.1, "num_leaves": 31, "max_depth": -1, "bagging_fraction": 1.0, "bagging_freq": 0,
      "feature_fraction": 1.0, "lambda_l2": 0.0}),
    ("lightgbm", {"learning_rate": 0.05, "num_leaves": 15, "max_depth": 6, "min_child_weight": 0.5,
                  "subsample": 0.8, "colsample_bytree": 0.7, "reg_lambda": 1.5, "random_state": 3, "n_jobs": 2,
                  "backend_params": {"deterministic": True, "lambda_l2": 2.0}}, "ap",
     {"learning_rate": 0.05, "num_leaves": 15, "max_depth": 6, "bagging_fraction": 0.8, "bagging_freq": 1,
      "feature_fraction": 0.7, "lambda_l2": 2.0, "min_sum_hessian_in_leaf": 0.5, "seed": 3, "num_threads": 2,
      "deterministic": True}),
    ("xgboost", {}, "ndcg",
     {"eta": 0.1, "max_leaves": 31, "max_depth": 0, "grow_policy": "lossguide", "tree_method": "hist",
      "subsample": 1.0, "colsample_bytree": 1.0, "lambda": 0.0, "base_score": 0.0, "min_child_weight": 1e-3}),
    ("xgboost", {}, "xgboost:rank:ndcg",
     {"eta": 0.1, "max_leaves": 31, "max_depth": 0, "grow_policy": "lossguide", "tree_method": "hist",
      "subsample": 1.0, "colsample_bytree": 1.0, "lambda": 0.0, "base_score": 0.0}),
    ("xgboost", {"learning_rate": 0.05, "num_leaves": 15, "max_depth": 6, "min_child_weight": 0.5,
                 "subsample": 0.8, "colsample_bytree": 0.7, "reg_lambda": 1.5, "random_state": 3, "n_jobs": 2,
                 "backend_params": {"max_bin": 63}}, "rr",
     {"eta": 0.05, "max_leaves": 15, "max_depth": 6, "grow_policy": "lossguide", "tree_method": "hist",
      "subsample": 0.8, "colsample_bytree": 0.7, "lambda": 1.5, "base_score": 0.0, "min_child_weight": 0.5,
      "seed": 3, "nthread": 2, "max_bin": 63}),
    ("catboost", {"learning_rate": 0.05, "max_depth": 6, "random_state": 3, "n_jobs": 2}, "catboost:YetiRank",
     {"learning_rate": 0.05, "depth": 6, "random_seed": 3, "thread_count": 2}),
    ("catboost", {}, "catboost:YetiRank", {"learning_rate": 0.1}),
]


@pytest.mark.parametrize("backend, kwargs, objective, expected", PINNED)
def test_library_parameters_are_pinned(backend, kwargs, objective, expected):
    from gbrank.estimators import resolve_objective

    model = GBRanker(objective, backend=backend, **kwargs)
    assert model._library_params(resolve_objective(objective, backend)) == expected


# -- scikit-learn conventions: routing errors, scorer, group sizes, names, importances, categories --

def test_grid_search_without_routing_fails_loudly_with_the_fix(data):
    (X, y, qid), _ = data
    with sklearn.config_context(enable_metadata_routing=False):
        search = GridSearchCV(GBRanker(n_estimators=2), {"objective": ["ndcg", "ap"]}, cv=GroupKFold(n_splits=2))
        with pytest.raises(ValueError, match=r"(?s)without metadata routing.*enable_metadata_routing=True.*"
                                             r"GridSearchCV\(.*\)\.fit\(X, y, qid=qid"):
            search.fit(X, y, qid=qid, groups=qid)
    model = GBRanker(n_estimators=2).fit(X, y, qid=qid)  # outside a search: routing is not needed
    with pytest.raises(ValueError, match="score needs the query ids.*enable_metadata_routing=True"):
        model.score(X, y)


def test_grid_search_with_a_ranking_scorer_routes_qid(data):
    from gbrank.estimators import make_ranking_scorer

    (X, y, qid), (Xt, yt, qt) = data
    scorer = make_ranking_scorer("nrbp@0.9", empty="skip")
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(GBRanker(n_estimators=5, random_state=0), {"num_leaves": [4, 8]},
                              scoring={"nrbp": scorer, "mean_rank": make_ranking_scorer("mean_rank")},
                              refit="nrbp", cv=GroupKFold(n_splits=2))
        search.fit(X, y, qid=qid, groups=qid)
    assert np.all(search.cv_results_["mean_test_nrbp"] > 0.3)
    assert np.all(search.cv_results_["mean_test_mean_rank"] < 0)  # lower is better: negated
    expected = gbrank.evaluate(yt, search.predict(Xt), qt, "nrbp@0.9", empty="skip").mean().iloc[0]
    assert scorer(search.best_estimator_, Xt, yt, qid=qt) == pytest.approx(expected)
    with pytest.raises(ValueError, match="got no qid.*enable_metadata_routing"):
        scorer(search.best_estimator_, Xt, yt)
    with pytest.raises(ValueError, match="unknown"):
        make_ranking_scorer("ndgc@10")


def test_quick_group_sizes_are_an_alternative_to_qid(data):
    (X, y, qid), _ = data
    sizes = np.unique(qid, return_counts=True)[1]
    by_qid = GBRanker(n_estimators=3, random_state=0).fit(X, y, qid=qid)
    by_group = GBRanker(n_estimators=3, random_state=0).fit(X, y, group=sizes)
    np.testing.assert_array_equal(by_qid.predict(X), by_group.predict(X))
    with pytest.raises(ValueError, match="either qid .* or group"):
        GBRanker(n_estimators=2).fit(X, y, qid=qid, group=sizes)
    with pytest.raises(ValueError, match="add up to the number of rows"):
        GBRanker(n_estimators=2).fit(X, y, group=sizes[:-1])
    with pytest.raises(ValueError, match="positive whole numbers"):
        GBRanker(n_estimators=2).fit(X, y, group=np.r_[sizes[:-1], 0, sizes[-1]])
    with pytest.raises(ValueError, match="pass qid=.*or group="):
        GBRanker(n_estimators=2).fit(X, y)


@pytest.mark.parametrize("backend", BACKENDS)
def test_quick_feature_names_and_gain_importances(data, backend):
    pd = pytest.importorskip("pandas")
    (X, y, qid), _ = data
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    model = GBRanker(n_estimators=5, backend=backend, random_state=0).fit(frame, y, qid=qid)
    assert list(model.feature_names_in_) == list(frame.columns)
    imp = model.feature_importances_
    assert imp.shape == (X.shape[1],) and imp.sum() == pytest.approx(1.0) and (imp >= 0).all()
    if backend == "lightgbm":
        gain = model.booster_.feature_importance("gain")
        np.testing.assert_allclose(imp, gain / gain.sum())
    with pytest.raises(ValueError, match="differ from those seen in fit"):
        model.predict(frame[frame.columns[::-1]])
    assert not hasattr(GBRanker(n_estimators=2).fit(X, y, qid=qid), "feature_names_in_")
    with pytest.raises(NotFittedError):
        GBRanker().feature_importances_


@pytest.mark.parametrize("backend", BACKENDS)
def test_quick_pandas_categorical_columns_go_to_the_library(backend):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    n_q, per = 60, 10
    qid = np.repeat(np.arange(n_q), per)
    colour = rng.choice(["red", "green", "blue", "grey"], n_q * per)
    noise = rng.random(n_q * per)
    y = (colour == "green") * 2.0 + (colour == "blue") * 1.0
    frame = pd.DataFrame({"colour": pd.Categorical(colour), "noise": noise})
    model = GBRanker(n_estimators=10, backend=backend, random_state=0,
                     backend_params={"min_data_in_leaf": 1} if backend == "lightgbm" else None).fit(frame, y, qid=qid)
    assert model.categorical_features_ == ["colour"]
    assert model.score(frame, y, qid) > 0.99
    with pytest.raises(ValueError, match="fitted with \\['colour'\\]"):
        model.predict(frame.assign(colour=np.arange(len(frame)) % 4))
    with pytest.raises(ValueError, match="CatBoost does not take"):
        GBRanker("catboost:YetiRank", backend="catboost", n_estimators=2).fit(frame, y, qid=qid)


def test_quick_estimator_tags():
    from sklearn.utils import get_tags

    tags = get_tags(GBRanker())
    assert tags.input_tags.sparse and tags.input_tags.allow_nan and tags.target_tags.required
