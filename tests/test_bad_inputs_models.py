"""The catalogue of bad inputs to the model entry points (docs/bad-inputs-models.md).

Every row is (callable, expected exception type, regex of the message) or, for an input
with a documented result, (callable, None, None) where the callable asserts that result.
The callables take a shared namespace ``d`` of tiny data and fitted models, so the whole
table runs in seconds: GBRanker (LightGBM, XGBoost, CatBoost), gbrank.dask, the torch
estimators and losses, and gbrank.interactions.
"""

from __future__ import annotations

import types

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError

torch = pytest.importorskip("torch")

from gbrank import GBRanker  # noqa: E402
from gbrank.datasets import make_letor  # noqa: E402
from gbrank.interactions import NotEnoughNegatives, check_pairs, csr_from, sample_negatives, split_interactions  # noqa: E402,E501
from gbrank.torch import MFRanker, NetRanker, kos_loss, lambda_loss, listwise_ndcg_loss, make_loss  # noqa: E402

BACKENDS = ("lightgbm", "xgboost", "catboost")
OWN = {"lightgbm": "ndcg", "xgboost": "ndcg", "catboost": "catboost:YetiRank"}
TORCH_FAST = dict(epochs=1, verbose=0, random_state=0, device="cpu")


@pytest.fixture(scope="module")
def d():
    X, y, qid = make_letor(n_queries=8, n_features=3, random_state=0)
    ns = types.SimpleNamespace(X=X, y=y, qid=qid)
    ns.model = GBRanker(n_estimators=2).fit(X, y, qid=qid)
    ns.mf_X = np.array([[u, i] for u in range(6) for i in range(12) if (u + i) % 2 == 0])
    ns.mf_y = np.ones(len(ns.mf_X))
    ns.mf = MFRanker(loss="lambda_ndcg", n_factors=4, validation_size=0, **TORCH_FAST).fit(ns.mf_X, ns.mf_y)
    ns.net = NetRanker(hidden=4, validation_size=0, **TORCH_FAST).fit(X, y, qid=qid)
    ns.s = torch.tensor([[1.0, 2.0, 3.0]])
    ns.l = torch.tensor([[0.0, 1.0, 2.0]])
    ns.ratings_X, ns.ratings_y = _ratings()
    return ns


def _ratings():
    rng = np.random.default_rng(0)
    pairs = [(u, i) for u in range(4) for i in rng.choice(40, size=12, replace=False)]
    return np.array(pairs), rng.integers(1, 6, size=len(pairs)).astype(float)


# -- GBRanker helpers -----------------------------------------------------------------------

def gb(d, backend="lightgbm", X=None, y=None, qid="same", fit=None, **params):
    params.setdefault("n_estimators", 2)
    model = GBRanker(params.pop("objective", OWN[backend]), backend=backend, **params)
    return model.fit(d.X if X is None else X, d.y if y is None else y,
                     qid=d.qid if isinstance(qid, str) and qid == "same" else qid, **(fit or {}))


def nan_qid(d, n):
    q = d.qid.astype(float)
    q[[0, 40][:n]] = np.nan
    return q


def mixed_qid(d):
    q = d.qid.astype(object)
    q[d.qid >= 4] = "q"
    return q


def with_value(a, value, at=(0, 0)):
    a = a.astype(type(value) if isinstance(value, str) else a.dtype, copy=True)
    if isinstance(value, (str, complex)):  # an object column, as pandas or a mixed list gives
        a = a.astype(object)
    a[at] = value
    return a


def all_nan(d):
    return np.full_like(d.X, np.nan)


def nan_features_train(d, backend):
    """Documented: NaN features are missing values (the libraries' rule); fit and predict work."""
    X = d.X.copy()
    X[::3, 0] = np.nan
    X[:, 2] = np.nan  # one all-NaN column among usable ones: never split on
    s = gb(d, backend, X=X).predict(X)
    assert s.shape == d.y.shape and np.isfinite(s).all()


def nan_in_predict(d):
    X = d.X.copy()
    X[:5] = np.nan
    assert np.isfinite(d.model.predict(X)).all()


GBRANKER = [
    *[pytest.param(lambda d, b=b: gb(d, b, qid=nan_qid(d, 1)), ValueError, r"qid has 1 missing.*row\(s\) \[0\].*fill",
                   id=f"gb-{b}-qid-one-nan") for b in BACKENDS],
    *[pytest.param(lambda d, b=b: gb(d, b, qid=nan_qid(d, 2)), ValueError, r"qid has 2 missing.*\[0, 40\]",
                   id=f"gb-{b}-qid-two-nan-not-interleaved") for b in BACKENDS],
    pytest.param(lambda d: gb(d, qid=mixed_qid(d)), TypeError,
                 r"qid mixes kinds.*number.*string.*astype\(str\)", id="gb-qid-mixed-int-str"),
    pytest.param(lambda d: gb(d, qid=np.where(d.qid == 1, None, d.qid).astype(object)), ValueError,
                 r"qid has \d+ missing", id="gb-qid-none"),
    pytest.param(lambda d: gb(d, qid=None), ValueError, r"pass qid", id="gb-qid-missing"),
    pytest.param(lambda d: gb(d, qid=d.qid[:, None].repeat(2, 1)), ValueError, r"qid must be one-dimensional",
                 id="gb-qid-2d"),
    pytest.param(lambda d: gb(d, qid=np.r_[d.qid[1:], d.qid[:1]]), ValueError, r"more than one run.*sort",
                 id="gb-qid-interleaved"),
    pytest.param(lambda d: gb(d, qid=d.qid[:-1]), ValueError, r"one entry per row", id="gb-qid-short"),
    pytest.param(lambda d: gb(d, X=with_value(d.X, "abc", (3, 1))), TypeError,
                 r"X column 1 is not numeric \(row 3 holds 'abc'\).*encode", id="gb-X-string-column"),
    pytest.param(lambda d: gb(d, X=pd.DataFrame({"a": d.X[:, 0], "b": ["x"] * len(d.X), "c": d.X[:, 2]})),
                 TypeError, r"X column 'b' is not numeric", id="gb-X-dataframe-string-column"),
    pytest.param(lambda d: gb(d, X=d.X + 1j * (np.arange(d.X.shape[1]) == 2)), ValueError,
                 r"Complex data not supported: X column 0 holds complex numbers.*np.real", id="gb-X-complex"),
    pytest.param(lambda d: gb(d, X=pd.DataFrame({"a": d.X[:, 0], "b": d.X[:, 1] + 2j})), ValueError,
                 r"Complex data not supported: X column 'b' holds complex numbers \(row 0", id="gb-X-dataframe-complex"),
    pytest.param(lambda d: gb(d, X=with_value(d.X, 1 + 2j, (4, 1))), ValueError,
                 r"X column 1 holds complex numbers \(row 4: \(1\+2j\)\)", id="gb-X-object-complex"),
    *[pytest.param(lambda d, b=b: gb(d, b, X=all_nan(d)), ValueError, r"no feature a tree can split on.*all NaN",
                   id=f"gb-{b}-X-all-nan") for b in BACKENDS],
    pytest.param(lambda d: gb(d, X=np.ones_like(d.X)), ValueError, r"no feature.*constant", id="gb-X-constant"),
    *[pytest.param(lambda d, b=b: gb(d, b, qid=np.arange(len(d.y))), ValueError, r"every query of qid has a single row",
                   id=f"gb-{b}-one-row-queries") for b in BACKENDS],
    pytest.param(lambda d: gb(d, y=np.ones_like(d.y)), ValueError, r"no query has two rows with different labels",
                 id="gb-y-constant"),
    pytest.param(lambda d: gb(d, X=with_value(d.X, np.inf, (5, 2))), ValueError,
                 r"X has 1 infinite value.*row 5, column 2.*NaN", id="gb-X-inf"),
    pytest.param(lambda d: gb(d, X=d.X[:, 0]), ValueError, r"X must be a 2-d array", id="gb-X-1d"),
    pytest.param(lambda d: gb(d, X=d.X[:0], y=d.y[:0], qid=d.qid[:0]), ValueError, r"X is empty", id="gb-empty"),
    pytest.param(lambda d: gb(d, y=d.y[:-1]), ValueError, r"one entry per row", id="gb-y-short"),
    pytest.param(lambda d: gb(d, y=with_value(d.y, np.nan, 7)), ValueError, r"y contains 1 NaN.*row 7",
                 id="gb-y-nan"),
    pytest.param(lambda d: gb(d, y=with_value(d.y, -1.0, 2)), ValueError, r"non-negative.*row 2", id="gb-y-negative"),
    *[pytest.param(lambda d, b=b: gb(d, b, n_estimators=0), ValueError, r"n_estimators must be a positive integer",
                   id=f"gb-{b}-n-estimators-0") for b in BACKENDS],
    pytest.param(lambda d: gb(d, n_estimators=2.5), ValueError, r"n_estimators", id="gb-n-estimators-float"),
    *[pytest.param(lambda d, b=b: gb(d, b, learning_rate=-1), ValueError, r"learning_rate must be a positive finite",
                   id=f"gb-{b}-learning-rate-negative") for b in BACKENDS],
    pytest.param(lambda d: gb(d, learning_rate=float("nan")), ValueError, r"learning_rate", id="gb-learning-rate-nan"),
    pytest.param(lambda d: gb(d, num_leaves=1), ValueError, r"num_leaves must be an integer of at least 2",
                 id="gb-num-leaves-1"),
    pytest.param(lambda d: gb(d, max_depth=0), ValueError, r"max_depth must be None .* or a positive integer",
                 id="gb-max-depth-0"),
    pytest.param(lambda d: gb(d, min_child_weight=-1), ValueError, r"min_child_weight", id="gb-min-child-weight"),
    pytest.param(lambda d: gb(d, subsample=0), ValueError, r"subsample must be a fraction in \(0, 1\]",
                 id="gb-subsample-0"),
    pytest.param(lambda d: gb(d, "xgboost", subsample=1.5), ValueError, r"subsample", id="gb-subsample-1.5"),
    pytest.param(lambda d: gb(d, colsample_bytree=0), ValueError, r"colsample_bytree", id="gb-colsample-0"),
    pytest.param(lambda d: gb(d, reg_lambda=-1), ValueError, r"reg_lambda", id="gb-reg-lambda"),
    pytest.param(lambda d: gb(d, early_stopping_rounds=3), ValueError, r"early_stopping_rounds needs an eval_set.*got early_stopping_rounds=3",
                 id="gb-early-stopping-without-eval-set"),
    pytest.param(lambda d: gb(d, early_stopping_rounds=0, fit={"eval_set": [(d.X, d.y, d.qid)]}), ValueError,
                 r"early_stopping_rounds must be None or a positive", id="gb-early-stopping-0"),
    pytest.param(lambda d: gb(d, fit={"eval_set": (d.X, d.y, d.qid)[0]}), TypeError, r"eval_set must be a list",
                 id="gb-eval-set-array"),
    pytest.param(lambda d: gb(d, fit={"eval_set": [(d.X, d.y)]}), ValueError, r"eval_set\[0\] must be a triple",
                 id="gb-eval-set-pair"),
    pytest.param(lambda d: gb(d, fit={"eval_set": [(d.X[:, :2], d.y, d.qid)]}), ValueError,
                 r"eval_set\[0\] X has 2 features.*fitted with 3", id="gb-eval-set-features"),
    pytest.param(lambda d: gb(d, fit={"eval_set": [(d.X, d.y, nan_qid(d, 1))]}), ValueError,
                 r"eval_set\[0\] qid has 1 missing", id="gb-eval-set-qid-nan"),
    pytest.param(lambda d: gb(d, fit={"sample_weight": -np.ones(len(d.y))}), ValueError,
                 r"sample_weight must be non-negative.*row", id="gb-weight-negative"),
    pytest.param(lambda d: gb(d, fit={"sample_weight": np.zeros(len(d.y))}), ValueError,
                 r"sample_weight is 0 on every row", id="gb-weight-zero"),
    pytest.param(lambda d: gb(d, fit={"sample_weight": np.ones(3)}), ValueError, r"sample_weight must have one entry",
                 id="gb-weight-short"),
    pytest.param(lambda d: gb(d, fit={"sample_weight": with_value(np.ones(len(d.y)), np.nan, 1)}), ValueError,
                 r"sample_weight contains 1 NaN", id="gb-weight-nan"),
    pytest.param(lambda d: gb(d, "xgboost", fit={"sample_weight": np.arange(len(d.y), dtype=float)}), ValueError,
                 r"per query.*constant within each query", id="gb-xgboost-weight-per-row"),
    pytest.param(lambda d: gb(d, random_state=np.random.RandomState(0)), TypeError, r"random_state",
                 id="gb-random-state-object"),
    pytest.param(lambda d: gb(d, backend_params=[("min_data_in_leaf", 1)]), TypeError, r"backend_params must be",
                 id="gb-backend-params-list"),
    pytest.param(lambda d: gb(d, verbose=-1), ValueError, r"verbose", id="gb-verbose-negative"),
    pytest.param(lambda d: GBRanker(backend="sklearn").fit(d.X, d.y, qid=d.qid), ValueError,
                 r"backend must be one of \['catboost', 'lightgbm', 'xgboost'\]", id="gb-backend-unknown"),
    pytest.param(lambda d: GBRanker(objective="ndgc").fit(d.X, d.y, qid=d.qid), ValueError, r"unknown objective",
                 id="gb-objective-unknown"),
    pytest.param(lambda d: GBRanker(objective=3).fit(d.X, d.y, qid=d.qid), TypeError, r"objective must be a name",
                 id="gb-objective-type"),
    pytest.param(lambda d: gb(d, eval_metric="ndgc@10"), ValueError, r"ndgc", id="gb-eval-metric-unknown"),
    pytest.param(lambda d: gb(d, X=d.X[:30], y=d.y[:30], qid=d.qid[:30]), ValueError,
                 r"LightGBM found no feature.*min_data_in_leaf", id="gb-lightgbm-tiny-data"),
    pytest.param(lambda d: GBRanker().predict(d.X), NotFittedError, r"not fitted", id="gb-predict-before-fit"),
    pytest.param(lambda d: d.model.predict(d.X[:, :2]), ValueError, r"X has 2 features.*fitted with 3.*same feature",
                 id="gb-predict-feature-count"),
    pytest.param(lambda d: d.model.predict(with_value(d.X, -np.inf, (1, 0))), ValueError, r"infinite",
                 id="gb-predict-inf"),
    pytest.param(lambda d: d.model.score(d.X, d.y, nan_qid(d, 1)), ValueError, r"qid has 1 missing",
                 id="gb-score-qid-nan"),
    *[pytest.param(lambda d, b=b: nan_features_train(d, b), None, None, id=f"gb-{b}-nan-features-are-missing")
      for b in BACKENDS],
    pytest.param(nan_in_predict, None, None, id="gb-nan-in-predict-is-missing"),
]


# -- gbrank.dask ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def dk(d):
    distributed = pytest.importorskip("distributed")
    da = pytest.importorskip("dask.array")
    dd = pytest.importorskip("dask.dataframe")
    with distributed.LocalCluster(n_workers=1, processes=False, threads_per_worker=1, dashboard_address=None) as c, \
            distributed.Client(c) as client:
        part = lambda a: da.from_array(np.asarray(a), chunks=60)  # noqa: E731
        frame = pd.DataFrame(d.X, columns=["a", "b", "c"]).assign(qid=d.qid, label=d.y)
        yield types.SimpleNamespace(client=client, da=da, dd=dd, part=part, X=part(d.X), y=part(d.y),
                                    qid=part(d.qid), df=dd.from_pandas(frame, npartitions=2))


def dask_fit(dk, backend="lightgbm", X=None, y="same", qid=None, **kw):
    from gbrank.dask import DaskGBRanker

    fit_kw = {k: kw.pop(k) for k in ("eval_set",) if k in kw}
    model = DaskGBRanker(backend=backend, n_estimators=kw.pop("n_estimators", 2), client=dk.client, **kw)
    return model.fit(dk.X if X is None else X, dk.y if isinstance(y, str) and y == "same" else y,
                     qid=dk.qid if qid is None else qid, **fit_kw)


def dask_eval(dk, y=None, s=None, q=None, metrics=("ndcg@10",)):
    from gbrank.dask import evaluate

    return evaluate(dk.y if y is None else y, dk.part(np.zeros(dk.y.shape[0])) if s is None else s,
                    dk.qid if q is None else q, list(metrics), client=dk.client)


def dask_predict_wrong_features(dk):
    model = dask_fit(dk)
    return model.predict(dk.X[:, :2])


DASK = [
    pytest.param(lambda d, k: dask_fit(k, qid=k.part(nan_qid(d, 1))), ValueError,
                 r"partition 0.*qid has 1 missing", id="dask-qid-nan"),
    pytest.param(lambda d, k: dask_fit(k, X=k.part(with_value(d.X, np.inf, (70, 1)))), ValueError,
                 r"X has 1 infinite value.*row 70, column 1", id="dask-lightgbm-X-inf"),
    pytest.param(lambda d, k: dask_fit(k, "xgboost", X=k.part(with_value(d.X, np.inf, (3, 0)))), ValueError,
                 r"X has 1 infinite value.*row 3", id="dask-xgboost-X-inf"),
    pytest.param(lambda d, k: dask_fit(k, X=k.part(d.X[:0]), y=k.part(d.y[:0]), qid=k.part(d.qid[:0])), ValueError,
                 r"no rows were given", id="dask-empty"),
    pytest.param(lambda d, k: dask_fit(k, X=k.df[["a", "b", "c"]], y=k.df["label"], qid="query"), ValueError,
                 r"qid='query' names no column of X.*\['a', 'b', 'c'\]", id="dask-qid-column-missing"),
    pytest.param(lambda d, k: dask_fit(k, X=k.df.assign(b=k.df["b"].astype(str))[["a", "b", "c", "qid"]],
                                       y=k.df["label"], qid="qid"), TypeError, r"non-numeric column.*'b'",
                 id="dask-X-string-column"),
    pytest.param(lambda d, k: dask_fit(k, qid=k.part(mixed_qid(d))), TypeError,
                 r"mixes kinds", id="dask-qid-mixed"),
    pytest.param(lambda d, k: dask_fit(k, qid=k.part(np.arange(len(d.y)))), ValueError, r"single row",
                 id="dask-one-row-queries"),
    pytest.param(lambda d, k: dask_fit(k, X=d.X), TypeError, r"X must be a dask array.*from_array", id="dask-X-numpy"),
    pytest.param(lambda d, k: dask_fit(k, y=None), ValueError, r"y is required", id="dask-y-missing"),
    pytest.param(lambda d, k: dask_fit(k, y=k.part(d.y[:-1])), ValueError, r"one entry per row", id="dask-y-short"),
    pytest.param(lambda d, k: dask_fit(k, n_estimators=0), ValueError, r"n_estimators must be a positive",
                 id="dask-n-estimators-0"),
    pytest.param(lambda d, k: dask_fit(k, learning_rate=-1), ValueError, r"learning_rate", id="dask-learning-rate"),
    pytest.param(lambda d, k: dask_fit(k, early_stopping_rounds=2), ValueError, r"needs an eval_set",
                 id="dask-early-stopping-without-eval-set"),
    pytest.param(lambda d, k: dask_fit(k, eval_set=[(k.X, k.y)]), ValueError, r"eval_set\[0\] must be a triple",
                 id="dask-eval-set-pair"),
    pytest.param(lambda d, k: dask_fit(k, backend="catboost"), ValueError, r"backend must be one of",
                 id="dask-backend-catboost"),
    pytest.param(lambda d, k: dask_fit(k, timeout=-1), ValueError, r"timeout must be None or a positive",
                 id="dask-timeout-negative"),
    pytest.param(lambda d, k: __import__("gbrank.dask").dask.DaskGBRanker().predict(k.X), NotFittedError,
                 r"not fitted", id="dask-predict-before-fit"),
    pytest.param(lambda d, k: dask_predict_wrong_features(k), ValueError, r"3 feature columns",
                 id="dask-predict-feature-count"),
    pytest.param(lambda d, k: dask_eval(k, y=k.part(d.y[:0]), s=k.part(d.y[:0]), q=k.part(d.qid[:0])), ValueError,
                 r"no rows were given", id="dask-evaluate-empty"),
    pytest.param(lambda d, k: dask_eval(k, q=k.part(nan_qid(d, 1))), ValueError, r"qid has 1 missing",
                 id="dask-evaluate-qid-nan"),
    pytest.param(lambda d, k: dask_eval(k, metrics=["ndgc"]), ValueError, r"ndgc", id="dask-evaluate-metric"),
    pytest.param(lambda d, k: dask_eval(k, q=d.qid), TypeError, r"qid must be a dask array", id="dask-evaluate-numpy"),
]


# -- torch estimators -----------------------------------------------------------------------

def mf(d, X=None, y="same", **params):
    params = {"loss": "lambda_ndcg", "n_factors": 4, "validation_size": 0, **TORCH_FAST, **params}
    return MFRanker(**params).fit(d.mf_X if X is None else X, d.mf_y if isinstance(y, str) and y == "same" else y)


def mf_rating(d, value):
    y = d.mf_y.copy()
    y[0] = value
    return mf(d, y=y)


def large_ratings_are_positives(d, value):
    """Documented: ratings are binarised at relevance_threshold; a huge rating is a positive."""
    model = mf_rating(d, value)
    base = mf(d)
    assert np.allclose(model.predict(d.mf_X[:5]), base.predict(d.mf_X[:5]))


def net(d, X=None, y=None, qid="same", **params):
    params = {"hidden": 4, "validation_size": 0, **TORCH_FAST, **params}
    return NetRanker(**params).fit(d.X if X is None else X, d.y if y is None else y,
                                   qid=d.qid if isinstance(qid, str) and qid == "same" else qid)


TORCH = [
    pytest.param(lambda d: mf_rating(d, -1.0), ValueError, r"y \(ratings\) must be non-negative.*row", id="mf-rating-negative"),
    pytest.param(lambda d: mf_rating(d, np.nan), ValueError, r"y contains 1 NaN.*row 0", id="mf-rating-nan"),
    pytest.param(lambda d: mf_rating(d, np.inf), ValueError, r"y contains 1 NaN or infinite", id="mf-rating-inf"),
    pytest.param(lambda d: large_ratings_are_positives(d, 1e300), None, None, id="mf-rating-1e300-is-positive"),
    pytest.param(lambda d: large_ratings_are_positives(d, 31.0), None, None, id="mf-rating-31-is-positive"),
    pytest.param(lambda d: mf(d, X=with_value(d.mf_X.astype(float), np.nan, (4, 0))), ValueError,
                 r"X\[:, 0\] has 1 missing or infinite user id.*\[4\]", id="mf-user-id-nan"),
    pytest.param(lambda d: mf(d, X=with_value(d.mf_X.astype(object), None, (2, 1))), ValueError,
                 r"item id", id="mf-item-id-none"),
    pytest.param(lambda d: mf(d, X=np.vstack([d.mf_X, d.mf_X[3:4]]), y=np.ones(len(d.mf_X) + 1)), ValueError,
                 r"1 repeated \(user, item\) pair.*rows \[3, \d+\].*aggregate", id="mf-duplicate-pairs"),
    pytest.param(lambda d: mf(d, X=np.array([[u, u] for u in range(6)]), y=None, validation_size=0.1), ValueError,
                 r"validation_size=0.1 holds out no positive.*at most 1", id="mf-one-positive-per-user"),
    pytest.param(lambda d: mf(d, X=__import__("scipy.sparse").sparse.random(5, 6, density=0.5, format="csr")),
                 TypeError, r"not a csr_matrix user-item matrix.*tocoo", id="mf-scipy-sparse"),
    pytest.param(lambda d: mf(d, optimizer="sgd", learning_rate=1e9), FloatingPointError,
                 r"diverged.*lambda_ndcg.*learning_rate=1e\+09.*lower the learning rate", id="mf-diverging-lr"),
    pytest.param(lambda d: mf(d, X=np.zeros((5, 3))), ValueError, r"shape \(n, 2\)", id="mf-X-three-columns"),
    pytest.param(lambda d: mf(d, X=np.arange(5)), ValueError, r"shape \(n, 2\)", id="mf-X-1d"),
    pytest.param(lambda d: mf(d, y=np.ones(3)), ValueError, r"lengths differ", id="mf-y-short"),
    pytest.param(lambda d: mf(d, X=np.zeros((0, 2)), y=np.zeros(0)), ValueError, r"no rows", id="mf-empty"),
    pytest.param(lambda d: mf(d, y=np.zeros(len(d.mf_y))), ValueError, r"no user has at least 1 positive",
                 id="mf-no-positive"),
    pytest.param(lambda d: mf(d, n_factors=0), ValueError, r"n_factors must be a positive integer", id="mf-factors-0"),
    pytest.param(lambda d: mf(d, epochs=0), ValueError, r"epochs must be a positive integer", id="mf-epochs-0"),
    pytest.param(lambda d: mf(d, batch_size=0), ValueError, r"batch_size must be a positive integer",
                 id="mf-batch-size-0"),
    pytest.param(lambda d: mf(d, batch_size=2.5), ValueError, r"batch_size", id="mf-batch-size-float"),
    pytest.param(lambda d: mf(d, learning_rate=-1.0), ValueError, r"learning_rate must be a positive",
                 id="mf-learning-rate-negative"),
    pytest.param(lambda d: mf(d, optimizer="adagrad"), ValueError, r"optimizer must be one of", id="mf-optimizer"),
    pytest.param(lambda d: mf(d, device=42), TypeError, r"device must be 'auto', 'cpu'", id="mf-device-type"),
    pytest.param(lambda d: mf(d, device="gpu0"), ValueError, r"unknown device 'gpu0'", id="mf-device-name"),
    pytest.param(lambda d: mf(d, nsr=0), ValueError, r"nsr .* must be a positive integer", id="mf-nsr-0"),
    pytest.param(lambda d: mf(d, nsr=1.5), ValueError, r"nsr", id="mf-nsr-float"),
    pytest.param(lambda d: mf(d, validation_size=1.0), ValueError, r"validation_size must lie in \[0, 1\)",
                 id="mf-validation-size"),
    pytest.param(lambda d: mf(d, relevance_threshold=float("nan")), ValueError, r"relevance_threshold must be a positive",
                 id="mf-threshold-nan"),
    pytest.param(lambda d: mf(d, min_positives=0), ValueError, r"min_positives must be at least 1",
                 id="mf-min-positives"),
    pytest.param(lambda d: mf(d, loss="ndcg"), ValueError, r"unknown loss 'ndcg'; known losses", id="mf-loss-unknown"),
    pytest.param(lambda d: mf(d, eval_protocol="all"), ValueError, r"eval_protocol must be one of",
                 id="mf-eval-protocol"),
    pytest.param(lambda d: mf(d, early_stopping=0), ValueError, r"early_stopping must be None or a positive",
                 id="mf-early-stopping-0"),
    pytest.param(lambda d: mf(d, weight_decay=-1.0), ValueError, r"weight_decay", id="mf-weight-decay"),
    pytest.param(lambda d: mf(d, random_state=np.random.default_rng(0)), TypeError, r"random_state must be an int",
                 id="mf-random-state-generator"),
    pytest.param(lambda d: mf(d, loss_params=[1]), TypeError, r"loss_params must be a dict", id="mf-loss-params-type"),
    pytest.param(lambda d: mf(d, loss_params={"temprature": 1}), ValueError, r"does not take option.*temprature",
                 id="mf-loss-params-unknown"),
    pytest.param(lambda d: MFRanker().predict(d.mf_X), NotFittedError, r"not fitted yet; call fit",
                 id="mf-predict-before-fit"),
    pytest.param(lambda d: d.mf.predict(np.array([[999, 0]])), ValueError, r"unknown user id.*999",
                 id="mf-predict-unknown-user"),
    pytest.param(lambda d: d.mf.recommend([0], k=0), ValueError, r"k must be a positive integer", id="mf-recommend-k"),
    pytest.param(lambda d: net(d, X=with_value(d.X, 1e300, (2, 1))), ValueError,
                 r"beyond \+-1e\+18 \(first at row 2, column 1: 1e\+300\).*standardise", id="net-feature-1e300"),
    pytest.param(lambda d: net(d, X=with_value(d.X, np.nan, (2, 1))), ValueError, r"NaN or infinite.*row 2.*impute",
                 id="net-feature-nan"),
    pytest.param(lambda d: net(d, X=with_value(d.X, "x", (0, 2))), TypeError, r"X must be numeric",
                 id="net-feature-string"),
    pytest.param(lambda d: net(d, X=d.X[:, 0]), ValueError, r"X must be a 2-d array", id="net-X-1d"),
    pytest.param(lambda d: net(d, qid=nan_qid(d, 1)), ValueError, r"qid has 1 missing", id="net-qid-nan"),
    pytest.param(lambda d: net(d, qid=None), ValueError, r"pass qid", id="net-qid-none"),
    pytest.param(lambda d: net(d, qid=mixed_qid(d)), TypeError,
                 r"qid mixes kinds", id="net-qid-mixed"),
    pytest.param(lambda d: net(d, y=-d.y), ValueError, r"non-negative", id="net-y-negative"),
    pytest.param(lambda d: net(d, hidden=0), ValueError, r"hidden must be a positive integer", id="net-hidden-0"),
    pytest.param(lambda d: net(d, activation="gelu"), ValueError, r"activation must be one of", id="net-activation"),
    pytest.param(lambda d: net(d, validation_size=0.99), ValueError, r"leaves no query to train on",
                 id="net-validation-size"),
    pytest.param(lambda d: net(d, X=d.X * 1e3, optimizer="sgd", learning_rate=1e8, loss="lambda_ndcg"),
                 FloatingPointError, r"diverged.*lambda_ndcg.*learning_rate=1e\+08.*adam", id="net-diverging-lr"),
    pytest.param(lambda d: d.net.predict(d.X[:, :2]), ValueError, r"X has 2 features.*fitted with 3",
                 id="net-predict-feature-count"),
    pytest.param(lambda d: NetRanker().predict(d.X), NotFittedError, r"not fitted", id="net-predict-before-fit"),
]


# -- torch losses ---------------------------------------------------------------------------

def padded_nan_is_ignored(d):
    """Documented: padded entries (mask False) may hold anything, even NaN."""
    s = torch.tensor([[1.0, float("nan"), 3.0]])
    out = listwise_ndcg_loss(s, d.l, torch.tensor([[True, False, True]]))
    assert torch.isfinite(out).all()


LOSSES = [
    pytest.param(lambda d: make_loss("lambda_ndgc"), ValueError, r"unknown loss.*known losses", id="loss-unknown"),
    pytest.param(lambda d: make_loss(3), TypeError, r"a loss is named by a string", id="loss-name-type"),
    pytest.param(lambda d: make_loss("lambda_ndcg", temperature=1.0), ValueError, r"does not take option",
                 id="loss-option-unknown"),
    pytest.param(lambda d: make_loss("lambda_nrbp"), ValueError, r"needs a persistence p", id="loss-nrbp-without-p"),
    pytest.param(lambda d: make_loss("listwise_nrbp@0.9"), ValueError, r"independent of p", id="loss-listwise-nrbp-p"),
    pytest.param(lambda d: make_loss("listwise_ndcg", temperature=0), ValueError, r"temperature must be positive",
                 id="loss-temperature-0"),
    pytest.param(lambda d: make_loss("lambda_ndcg", sigma=float("nan")), ValueError, r"sigma must be a finite",
                 id="loss-sigma-nan"),
    pytest.param(lambda d: make_loss("listwise_ap", relevance_threshold=float("nan")), ValueError,
                 r"relevance_threshold must be a finite", id="loss-threshold-nan"),
    pytest.param(lambda d: make_loss("kos_warp", k=0), ValueError, r"k must be a positive integer", id="loss-kos-k-0"),
    pytest.param(lambda d: make_loss("kos_warp", n_positives=2.5), ValueError, r"n_positives must be a positive integer",
                 id="loss-kos-n-positives-float"),
    pytest.param(lambda d: make_loss("warp", margin=-1.0), ValueError, r"margin must be a non-negative",
                 id="loss-margin-negative"),
    pytest.param(lambda d: make_loss("listwise_ndcg", gain="log"), ValueError, r"gain must be 'exp'", id="loss-gain"),
    pytest.param(lambda d: make_loss("listwise_ndcg", bounding="maxmin"), ValueError, r"maxmin",
                 id="loss-bounding-unknown"),
    pytest.param(lambda d: listwise_ndcg_loss(torch.tensor([[1.0, float("nan"), 3.0]]), d.l), ValueError,
                 r"NaN or infinite score.*list 0, position 1", id="loss-listwise-score-nan"),
    pytest.param(lambda d: lambda_loss(d.s, -d.l), ValueError, r"negative label.*position 1", id="loss-lambda-label-negative"),
    pytest.param(lambda d: listwise_ndcg_loss(d.s, d.l[:, :2]), ValueError, r"labels must have the shape of scores",
                 id="loss-shape-mismatch"),
    pytest.param(lambda d: listwise_ndcg_loss(torch.tensor([[1, 2, 3]]), d.l), TypeError, r"floating-point",
                 id="loss-integer-scores"),
    pytest.param(lambda d: listwise_ndcg_loss(d.s, d.l, torch.ones(1, 2, dtype=torch.bool)), ValueError,
                 r"mask must have the shape", id="loss-mask-shape"),
    pytest.param(lambda d: listwise_ndcg_loss(d.s, d.l, torch.tensor([[0.5, 1.0, 1.0]])), ValueError,
                 r"mask must be boolean", id="loss-mask-fractional"),
    pytest.param(lambda d: listwise_ndcg_loss(d.s.numpy(), d.l), TypeError, r"torch tensors", id="loss-numpy-input"),
    pytest.param(lambda d: kos_loss(d.s, d.l, n_draws=0), ValueError, r"n_draws must be a positive integer or None",
                 id="loss-kos-n-draws-0"),
    pytest.param(lambda d: kos_loss(d.s, d.l, n_positives=2, k=3), ValueError, r"k must lie in 1..n_positives=2",
                 id="loss-kos-k-above-n-positives"),
    pytest.param(lambda d: kos_loss(d.s, d.l, position_weights=[1.0]), ValueError, r"position_weights must be 5",
                 id="loss-kos-position-weights"),
    pytest.param(lambda d: lambda_loss(d.s, d.l, sigma=0.0), ValueError, r"sigma must be positive", id="loss-sigma-0"),
    pytest.param(padded_nan_is_ignored, None, None, id="loss-padded-nan-is-ignored"),
]


# -- gbrank.interactions --------------------------------------------------------------------

def split(d, X=None, y="same", **kw):
    kw = {"relevance_threshold": 3, "min_positives": 1, "random_state": 0, **kw}
    return split_interactions(d.ratings_X if X is None else X, d.ratings_y if isinstance(y, str) else y, **kw)


def sample(need, exclude=None, n_items=5, rng=None):
    exclude = csr_from(np.array([0]), np.array([1]), 1) if exclude is None else exclude
    return sample_negatives(np.asarray(need), exclude, n_items, np.random.default_rng(0) if rng is None else rng)


INTERACTIONS = [
    pytest.param(lambda d: split(d, test_size=0), ValueError, r"test_size must lie strictly between 0 and 1",
                 id="split-test-size-0"),
    pytest.param(lambda d: split(d, nsr=0), ValueError, r"nsr", id="split-nsr-0"),
    pytest.param(lambda d: split(d, nsr="2"), ValueError, r"nsr", id="split-nsr-string"),
    pytest.param(lambda d: split(d, X=np.vstack([d.ratings_X, d.ratings_X[:1]]), y=np.r_[d.ratings_y, 5.0]),
                 ValueError, r"repeated \(user, item\) pair", id="split-duplicate-pairs"),
    pytest.param(lambda d: split(d, X=with_value(d.ratings_X.astype(float), np.nan, (1, 0))), ValueError,
                 r"missing or infinite user id.*\[1\]", id="split-user-id-nan"),
    pytest.param(lambda d: split(d, y=None), ValueError, r"y is required", id="split-y-missing"),
    pytest.param(lambda d: split(d, y=-d.ratings_y), ValueError, r"non-negative", id="split-y-negative"),
    pytest.param(lambda d: split(d, min_positives=2.5), ValueError, r"min_positives must be a positive integer",
                 id="split-min-positives-float"),
    pytest.param(lambda d: split(d, relevance_threshold=float("nan")), ValueError, r"relevance_threshold",
                 id="split-threshold-nan"),
    pytest.param(lambda d: split(d, random_state="seed"), TypeError, r"random_state", id="split-random-state"),
    pytest.param(lambda d: split(d, X=np.zeros((0, 2)), y=np.zeros(0)), ValueError, r"no rows", id="split-empty"),
    pytest.param(lambda d: split(d, min_positives=500), ValueError, r"no user has at least 500",
                 id="split-min-positives-too-high"),
    pytest.param(lambda d: check_pairs(__import__("scipy.sparse").sparse.eye(3, format="csr")), TypeError,
                 r"user-item matrix", id="pairs-sparse"),
    pytest.param(lambda d: check_pairs(np.array([[0, 1], ["a", 2]], dtype=object)), TypeError, r"mixes kinds of user id",
                 id="pairs-mixed-ids"),
    pytest.param(lambda d: sample([-1]), ValueError, r"need must be non-negative", id="sample-need-negative"),
    pytest.param(lambda d: sample([1, 1]), ValueError, r"exclude has 1 users but need has 2", id="sample-need-length"),
    pytest.param(lambda d: sample([1], n_items=0), ValueError, r"n_items must be a positive integer",
                 id="sample-n-items"),
    pytest.param(lambda d: sample([1], rng=0), TypeError, r"rng must be a numpy.random.Generator", id="sample-rng"),
    pytest.param(lambda d: sample([1.5]), ValueError, r"whole numbers", id="sample-need-fractional"),
    pytest.param(lambda d: sample([5]), NotEnoughNegatives, r"cannot draw 5 negatives for user #0: only 4",
                 id="sample-not-enough"),
]


def _check(call, exc, pattern, *args):
    if exc is None:
        call(*args)  # a documented result: the callable asserts it
        return
    with pytest.raises(exc, match=pattern):
        call(*args)


@pytest.mark.parametrize("call, exc, pattern", GBRANKER + TORCH + LOSSES + INTERACTIONS)
def test_bad_input(d, call, exc, pattern):
    _check(call, exc, pattern, d)


@pytest.mark.parametrize("call, exc, pattern", DASK)
def test_bad_dask_input(d, dk, call, exc, pattern):
    _check(call, exc, pattern, d, dk)


def test_the_catalogue_is_large_enough():
    assert len(GBRANKER + TORCH + LOSSES + INTERACTIONS + DASK) >= 90
