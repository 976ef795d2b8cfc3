"""CatBoost's own ranking losses, early-stopped on a gbrank metric (the only module of gbrank
that imports catboost, an optional extra, imported when a model is trained).

CatBoost takes no gbrank objective: its Python custom objectives are pointwise, without
group ids.  It trains its own ``YetiRank``, ``YetiRankPairwise`` and
``LambdaMart:metric=NDCG|MAP|MRR``.

Early stopping uses the rule of the LightGBM and XGBoost backends: gbrank's evaluator
computes the watched metric on the evaluation queries after every iteration (a CatBoost
custom ``eval_metric`` that receives the evaluation predictions in row order), CatBoost's
overfitting detector ``od_type="Iter"`` stops after ``early_stopping_rounds`` iterations
without improvement, and ``use_best_model`` keeps the trees up to the best iteration.
"""

from __future__ import annotations

import copy
import warnings

import numpy as np

from ._common import MetricCallback
from ._record import Backend


class CatBoostMetric(MetricCallback):
    """The first of gbrank's metrics ``names`` as a CatBoost custom ``eval_metric``.

    CatBoost hands a custom metric the predictions and labels but no group ids, so the
    adapter is bound to its evaluation set's labels and query boundaries
    (:meth:`bound`).  CatBoost also calls it on the learning set; a call whose length
    differs from the evaluation set's returns 0 at no cost (CatBoost's learn-set value of
    it is meaningless).
    """

    y = ptr = None

    def bound(self, y, ptr) -> "CatBoostMetric":
        """A copy that scores the evaluation set with labels ``y`` and boundaries ``ptr``."""
        other = copy.copy(self)
        other.y, other.ptr = np.asarray(y, dtype=np.float64), np.asarray(ptr)
        return other

    def is_max_optimal(self) -> bool:
        return self.specs[0].higher_is_better

    def evaluate(self, approxes, target, weight):
        scores = np.asarray(approxes[0], dtype=np.float64)
        if self.y is None or len(scores) != len(self.y):
            return 0.0, 1.0
        return self.values(scores, self.y, self.ptr)[0][1], 1.0

    def get_final_error(self, error, weight):
        return error


def train_catboost(params, X, y, ptr, weight, eval_sets, objective, metric, n_estimators,
                   early_stopping_rounds, verbose):
    """Fit ``CatBoostRanker(loss_function=objective)`` (see ``Backend.train`` for the
    arguments).  ``weight``: one weight per row, constant within each query (CatBoost's
    ``group_weight``).  Watches one evaluation set."""
    from catboost import CatBoostRanker, Pool

    if not isinstance(objective, str):
        raise TypeError(f"CatBoost trains only its own ranking losses {list(CATBOOST.objectives)}, "
                        f"not {objective!r}")
    if len(eval_sets) > 1:
        raise ValueError(f"CatBoost watches one eval_set; got {len(eval_sets)}")
    if early_stopping_rounds and not eval_sets:
        raise ValueError("early_stopping_rounds needs an eval_set to watch")

    def pool(Xs, ys, ps, w=None):
        groups = np.repeat(np.arange(len(ps) - 1), np.diff(ps))
        return Pool(Xs, ys, group_id=groups, group_weight=w)

    kwargs = dict(params, loss_function=objective, iterations=n_estimators, verbose=verbose,
                  allow_writing_files=False, use_best_model=bool(early_stopping_rounds))
    watched = None
    if eval_sets:
        _, yv, pv = eval_sets[0]
        watched = metric.bound(yv, pv)
        kwargs["eval_metric"] = watched
    if early_stopping_rounds:
        kwargs.update(od_type="Iter", od_wait=early_stopping_rounds)
    model = CatBoostRanker(**kwargs)
    with warnings.catch_warnings():  # CatBoost tries (and fails) to numba-compile a Python metric
        warnings.simplefilter("ignore")
        model.fit(pool(X, y, ptr, weight), eval_set=pool(*eval_sets[0]) if eval_sets else None)
    history = {}
    if watched is not None:
        values = model.get_evals_result()["validation"][type(watched).__name__]
        history["valid_0"] = {str(watched.specs[0]): [float(v) for v in values]}
    best = int(model.get_best_iteration()) + 1 if early_stopping_rounds else int(model.tree_count_)
    return model, best, history


def predict_catboost(model, X, best_iteration) -> np.ndarray:
    """Raw ranking scores of the first ``best_iteration`` trees (higher ranks first)."""
    return np.asarray(model.predict(X, ntree_end=best_iteration), dtype=np.float64)


def importance_catboost(model, n_features, best_iteration) -> np.ndarray:
    """CatBoost's ``PredictionValuesChange`` importances (it has no split-gain total)."""
    return np.asarray(model.get_feature_importance(type="PredictionValuesChange"), dtype=np.float64)


CATBOOST = Backend(
    name="catboost", label="CatBoost", extra="catboost", train=train_catboost, predict=predict_catboost,
    metric=CatBoostMetric,
    # symmetric trees sized by depth; num_leaves, min_child_weight, subsample, colsample_bytree
    # and reg_lambda have no CatBoost equivalent under its defaults (pass backend_params)
    params={"learning_rate": "learning_rate", "max_depth": "depth", "random_state": "random_seed",
            "n_jobs": "thread_count"},
    weights="query-as-rows",
    objectives=("YetiRank", "YetiRankPairwise", "LambdaMart:metric=NDCG", "LambdaMart:metric=MAP",
                "LambdaMart:metric=MRR"),
    gbrank_objectives=False, tree_size="max_depth", importance=importance_catboost,
)


def refuse_python_objective(objective):
    """CatBoost's hook for a Python objective (``calc_ders_range``), refused with the ways that
    work: CatBoost hands a custom objective no query ids (and ``CatBoostRanker`` takes only its
    own losses), so a gbrank objective cannot train there."""
    raise TypeError(
        f"CatBoost passes a Python objective no query groups, so a gbrank {type(objective).__name__} cannot train "
        "there; train it with LightGBM or XGBoost (GBRanker(objective=obj, backend='lightgbm'), "
        "lightgbm.train, xgboost.train(obj=obj)) or use CatBoost's own ranking losses, e.g. "
        "GBRanker('catboost:YetiRank', backend='catboost')")
