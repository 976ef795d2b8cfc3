"""XGBoost adapters for gbrank objectives and metrics (the only module importing xgboost).

``XGBRanker`` refuses a callable objective, so gbrank objectives go through
``xgboost.train(obj=...)``; query groups come from ``dtrain.get_uint_info("group_ptr")``
and ranking weights are per query.
"""

from __future__ import annotations

import numpy as np

from ._common import MetricCallback, check_library_object, check_objective
from ._record import Backend


def _group_ptr(dmatrix, adapter: str = "XGBoostObjective") -> np.ndarray:
    check_library_object(dmatrix, ("get_uint_info", "get_label"), "an xgboost.DMatrix", adapter)
    ptr = dmatrix.get_uint_info("group_ptr").astype(np.int64)
    if len(ptr) < 2:
        raise ValueError("the DMatrix has no query groups; build it with qid=... or call set_group(sizes)")
    return ptr


class XGBoostObjective:
    """A gbrank objective as ``xgboost.train(obj=...)``: ``(predt, dtrain) -> (grad, hess)``
    with shape (n, 1).  Query weights (``dtrain.set_weight`` with one weight per query)
    multiply the query's g and h."""

    def __init__(self, objective):
        self.objective = check_objective(objective, "XGBoostObjective")

    def __call__(self, predt, dtrain):
        ptr = _group_ptr(dtrain)
        w = dtrain.get_weight()
        if len(w) and len(w) != len(ptr) - 1:
            raise ValueError(f"the DMatrix has {len(w)} weights for {len(ptr) - 1} queries; XGBoost's ranking "
                             "weights are one per query (set_weight(query_weights)), not one per row")
        grad, hess = self.objective.gradients(predt, dtrain.get_label(), ptr, w if len(w) else None)
        return grad.reshape(-1, 1), hess.reshape(-1, 1)

    def __repr__(self):
        return f"XGBoostObjective({self.objective!r})"


class XGBoostMetric(MetricCallback):
    """gbrank metrics as an XGBoost ``custom_metric``: ``(predt, dmatrix) -> [(name, value)]``.
    Pass ``maximize=True`` to ``xgboost.train`` when early stopping on it."""

    def __call__(self, predt, dmatrix):
        ptr = _group_ptr(dmatrix, "XGBoostMetric")
        vals = self.values(np.asarray(predt).reshape(-1), dmatrix.get_label(), ptr)
        return [(name, value) for name, value, _ in vals]


def xgboost_early_stopping(metric, rounds, data_name):
    """Early stopping on the first of a ``MetricCallback``'s metrics on evaluation set
    ``data_name`` (XGBoost's own ``early_stopping_rounds`` watches the *last* metric)."""
    import xgboost as xgb

    spec = metric.specs[0]
    return xgb.callback.EarlyStopping(rounds=rounds, metric_name=str(spec), data_name=data_name,
                                      maximize=spec.higher_is_better, save_best=False)


def xgboost_params(params, objective):
    """(params, obj) for ``xgb.train``: a built-in objective's name goes into the params, a
    gbrank objective becomes the ``obj`` callable; XGBoost's default metric is switched off
    (gbrank's metric callbacks do the evaluation)."""
    params = dict(params)
    obj = None
    if isinstance(objective, str):
        params["objective"] = objective
    else:
        obj = XGBoostObjective(objective)
    params["disable_default_eval_metric"] = 1
    return params, obj


def train_xgboost(params, X, y, ptr, weight, eval_sets, objective, metric, n_estimators,
                  early_stopping_rounds, verbose):
    """Train an XGBoost booster (see ``train_lightgbm`` for the arguments).  ``weight``
    is one weight per query."""
    import xgboost as xgb

    def dmatrix(Xs, ys, ps, w=None):
        d = xgb.DMatrix(Xs, label=ys, enable_categorical=_is_frame(Xs))
        d.set_group(np.diff(ps))
        if w is not None:
            d.set_weight(w)
        return d

    train = dmatrix(X, y, ptr, weight)
    params, obj = xgboost_params(params, objective)
    evals = [(dmatrix(Xv, yv, pv), f"valid_{i}") for i, (Xv, yv, pv) in enumerate(eval_sets)]
    if early_stopping_rounds and not evals:
        raise ValueError("early_stopping_rounds needs an eval_set to watch")
    history: dict = {}
    callbacks = []
    if early_stopping_rounds:
        callbacks.append(xgboost_early_stopping(metric, early_stopping_rounds, evals[-1][1]))
    booster = xgb.train(
        params, train, num_boost_round=n_estimators, evals=evals, obj=obj,
        custom_metric=metric if evals else None, evals_result=history, callbacks=callbacks,
        verbose_eval=verbose if verbose else False,
    )
    if early_stopping_rounds and hasattr(booster, "best_iteration"):
        best = booster.best_iteration + 1
    else:
        best = booster.num_boosted_rounds()
    return booster, best, history


def predict_xgboost(booster, X, best_iteration):
    import xgboost as xgb

    return booster.predict(xgb.DMatrix(X, enable_categorical=_is_frame(X)), iteration_range=(0, best_iteration))


def _is_frame(X) -> bool:
    """A pandas DataFrame (GBRanker passes one only when it has categorical columns)."""
    return hasattr(X, "columns") and hasattr(X, "dtypes")


def importance_xgboost(booster, n_features, best_iteration) -> np.ndarray:
    """Total gain of each feature's splits in the first ``best_iteration`` trees."""
    scores = booster[:best_iteration].get_score(importance_type="total_gain")
    names = booster.feature_names or [f"f{j}" for j in range(n_features)]
    return np.array([scores.get(name, 0.0) for name in names], dtype=np.float64)


# Leaf-wise trees like LightGBM's, sized by max_leaves; scores start at 0 for every query (a
# custom objective has no boost-from-average, and ranking is shift-invariant).
XGBOOST = Backend(
    name="xgboost", label="XGBoost", extra="xgboost", weights="query",
    objectives=("rank:ndcg", "rank:map", "rank:pairwise"), binary_objectives=frozenset({"rank:map"}),
    params=dict(learning_rate="eta", num_leaves="max_leaves", max_depth="max_depth",
                min_child_weight="min_child_weight", subsample="subsample", colsample_bytree="colsample_bytree",
                reg_lambda="lambda", random_state="seed", n_jobs="nthread"),
    unset={"max_depth": 0}, fixed={"grow_policy": "lossguide", "tree_method": "hist", "base_score": 0.0},
    train=train_xgboost, predict=predict_xgboost, metric=XGBoostMetric, importance=importance_xgboost,
    categorical=True,
)
