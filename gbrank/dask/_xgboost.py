"""Distributed training through ``xgboost.dask.train`` (the only gbrank.dask module
importing xgboost).

XGBoost's Dask ranker refuses a callable objective, so gbrank objectives go through
``xgboost.dask.train(obj=...)`` with a ``DaskQuantileDMatrix`` carrying the query index
(increasing, as XGBoost needs): on each worker ``XGBoostObjective`` reads the group
boundaries of that worker's own rows.  A custom metric is evaluated on each worker's
local evaluation rows; gbrank sums the per-query values and counts over all workers
(XGBoost's allreduce) so that every worker sees the global mean and early stopping stops
them all at the same round.
"""

from __future__ import annotations

import numpy as np

from ..backends import MetricCallback, dmatrix_lists, xgboost_early_stopping, xgboost_params
from ..evaluation import evaluate


class GlobalXGBoostMetric(MetricCallback):
    """gbrank metrics as a ``custom_metric`` of distributed XGBoost: the mean over the
    queries of all workers (per-query values summed by allreduce)."""

    def __call__(self, predt, dmatrix):
        from xgboost import collective

        names = [str(s) for s in self.specs]
        local = np.zeros(len(names) + 1)
        if dmatrix.num_row() > 0:
            labels, ptr = dmatrix_lists(dmatrix, "GlobalXGBoostMetric")
            qid = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
            res = evaluate(labels, np.asarray(predt).reshape(-1), qid, self.specs,
                           **self.evaluate_kwargs)
            local[:-1] = res.per_query[names].sum().to_numpy()
            local[-1] = len(res.per_query)
        total = collective.allreduce(local, collective.Op.SUM) if collective.is_distributed() else local
        if total[-1] == 0:
            raise ValueError("the evaluation set has no query to evaluate (all skipped or empty)")
        return [(name, float(total[i] / total[-1])) for i, name in enumerate(names)]


def train_xgboost_dask(client, params, train, evals, objective, metric_names, n_estimators,
                       early_stopping_rounds, verbose):
    """Train with ``xgboost.dask.train``; arguments as ``train_lightgbm_dask``."""
    from xgboost import dask as dxgb

    params, obj = xgboost_params(params, objective)
    dtrain = dxgb.DaskQuantileDMatrix(client, train.X, label=train.y, qid=train.codes)
    dvalid = [(dxgb.DaskQuantileDMatrix(client, e.X, label=e.y, qid=e.codes, ref=dtrain), f"valid_{i}")
              for i, e in enumerate(evals)]
    metric = GlobalXGBoostMetric(metric_names)
    callbacks = []
    if early_stopping_rounds:
        callbacks.append(xgboost_early_stopping(metric, early_stopping_rounds, dvalid[-1][1]))
    out = dxgb.train(client, params, dtrain, num_boost_round=n_estimators, evals=dvalid or None,
                     obj=obj, custom_metric=metric if dvalid else None, callbacks=callbacks or None,
                     verbose_eval=verbose if verbose else False)
    booster = out["booster"]
    best = booster.best_iteration + 1 if early_stopping_rounds and "best_iteration" in booster.attributes() \
        else booster.num_boosted_rounds()
    return booster, best, out["history"]
