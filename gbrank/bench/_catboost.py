"""CatBoost's own ranking losses as benchmark contenders, early-stopped on a gbrank metric.

The only module of gbrank that imports catboost (an optional extra, imported when a CatBoost
contender is trained).  CatBoost takes no gbrank objective (its Python custom objectives
are pointwise, without group ids), so it appears only as a baseline: ``YetiRank``,
``YetiRankPairwise`` and ``LambdaMart:metric=NDCG|MAP|MRR``.

Early stopping uses the same rule as the LightGBM and XGBoost contenders: gbrank's evaluator
computes the watched metric on the validation queries after every iteration (a CatBoost
custom ``eval_metric`` that receives the validation predictions in row order), CatBoost's
overfitting detector ``od_type="Iter"`` stops after ``patience`` iterations without
improvement, and ``use_best_model`` keeps the trees up to the best iteration.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..evaluation import evaluate

LOSSES = ("YetiRank", "YetiRankPairwise", "LambdaMart:metric=NDCG", "LambdaMart:metric=MAP",
          "LambdaMart:metric=MRR")


class _GbrankMetric:
    """CatBoost custom metric: gbrank's ``metric`` of the validation predictions.

    CatBoost also calls it on the learning set; a call whose length differs from the
    validation set's returns 0 at no cost (CatBoost's learn-set value of it is meaningless)."""

    def __init__(self, metric: str, y, qid):
        self.metric, self.y, self.qid = metric, np.asarray(y, dtype=np.float64), np.asarray(qid)

    def is_max_optimal(self) -> bool:
        return True

    def evaluate(self, approxes, target, weight):
        scores = np.asarray(approxes[0], dtype=np.float64)
        if len(scores) != len(self.y):
            return 0.0, 1.0
        return float(evaluate(self.y, scores, self.qid, [self.metric]).mean().iloc[0]), 1.0

    def get_final_error(self, error, weight):
        return error


def train_catboost(loss: str, train, vali, *, rounds: int, patience: int, metric: str,
                   learning_rate: float, depth: int, seed: int, threads: int):
    """Fit ``CatBoostRanker(loss_function=loss)`` on ``train`` (X, y, qid), early-stopped on
    ``vali`` by gbrank's ``metric``.  Returns (model, best_iteration (trees kept), history of
    the metric on ``vali``, one value per trained iteration)."""
    from catboost import CatBoostRanker, Pool

    if loss not in LOSSES:
        raise ValueError(f"unknown CatBoost ranking loss {loss!r}; choose one of {sorted(LOSSES)}")
    watched = _GbrankMetric(metric, vali.y, vali.qid)
    model = CatBoostRanker(
        loss_function=loss, iterations=rounds, learning_rate=learning_rate, depth=depth,
        random_seed=seed, thread_count=threads, eval_metric=watched, od_type="Iter", od_wait=patience,
        use_best_model=True, verbose=False, allow_writing_files=False,
    )
    with warnings.catch_warnings():  # CatBoost tries (and fails) to numba-compile a Python metric
        warnings.simplefilter("ignore")
        model.fit(Pool(train.X, train.y, group_id=train.qid), eval_set=Pool(vali.X, vali.y, group_id=vali.qid))
    history = [float(v) for v in model.get_evals_result()["validation"][type(watched).__name__]]
    return model, int(model.get_best_iteration()) + 1, history


def predict_catboost(model, X) -> np.ndarray:
    """Raw ranking scores of the kept trees (higher ranks first)."""
    return np.asarray(model.predict(X), dtype=np.float64)
