"""Distributed training through LightGBM's Dask interface (the only gbrank.dask module
importing lightgbm).

``lightgbm.dask.DaskLGBMRanker`` runs ``LGBMRanker.fit`` on every worker over the row
blocks that worker holds; ``group`` travels block by block with them, so the four-argument
callable objective (``LGBMRankerObjective``) receives the sizes of the worker's own
queries.  Early stopping needs every worker to stop at the same round, but LightGBM
evaluates a custom metric on each worker's local evaluation rows; gbrank therefore gives
every worker the whole evaluation set (one copy per training block it holds) and the
metric scores one copy, so every worker computes the same value.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np

from ..backends import LGBMRankerObjective, MetricCallback, ptr_from_sizes


class ReplicatedEvalMetric(MetricCallback):
    """gbrank metrics as ``LGBMRanker``'s four-argument ``eval_metric`` over an evaluation
    set that a worker holds ``k >= 1`` times: it scores one copy, so the value does not
    depend on how many copies (training blocks) the worker has.

    ``sizes``: the row counts of the evaluation sets; a call finds the smallest of them
    by which its labels, scores and query sizes repeat.
    """

    def __init__(self, names, sizes, **evaluate_kwargs):
        super().__init__(names, **evaluate_kwargs)
        self.sizes = sorted(set(int(s) for s in sizes))

    def __call__(self, y_true, y_pred, weight, group):
        y, s = np.asarray(y_true), np.asarray(y_pred)
        ptr = ptr_from_sizes(group)
        for n in self.sizes:
            k, rest = divmod(len(y), n)
            cut = np.searchsorted(ptr, n)
            if rest or cut >= len(ptr) or ptr[cut] != n or k * cut != len(ptr) - 1:
                continue
            if (np.array_equal(np.tile(y[:n], k), y) and np.array_equal(np.tile(s[:n], k), s)
                    and np.array_equal(np.tile(np.diff(ptr[:cut + 1]), k), np.diff(ptr))):
                return self.values(s[:n], y[:n], ptr[:cut + 1])
        raise RuntimeError(  # pragma: no cover - gbrank lays out the copies itself
            f"the evaluation rows on this worker ({len(y)}) are not copies of one evaluation "
            f"set of size {self.sizes}")


def _same_block(block, copy):
    """The block itself: a distinct task per copy, the same data."""
    return block


def _replicate(a, copies: int):
    """A dask array of ``copies`` blocks, each the whole of ``a``."""
    import dask.array as da

    one = a.rechunk({0: -1})
    return da.concatenate([one.map_blocks(_same_block, i, dtype=a.dtype) for i in range(copies)])


def train_lightgbm_dask(client, params, train, evals, objective, metric_names, n_estimators,
                        early_stopping_rounds, verbose):
    """Train with ``lightgbm.dask.DaskLGBMRanker``.  ``train`` and ``evals`` are
    :class:`WholeQueries`; ``objective`` a LambdaObjective or a LightGBM objective name.
    Returns (booster, best_iteration, history)."""
    import lightgbm as lgb
    from lightgbm.dask import DaskLGBMRanker

    params = dict(params)
    params["metric"] = "None"
    params.setdefault("verbosity", -1)
    obj = objective if isinstance(objective, str) else LGBMRankerObjective(objective)
    model = DaskLGBMRanker(client=client, objective=obj, n_estimators=n_estimators, **params)
    fit_kwargs = {}
    copies = train.npartitions
    if evals:
        fit_kwargs["eval_set"] = [(_replicate(e.X, copies), _replicate(e.y, copies)) for e in evals]
        fit_kwargs["eval_group"] = [_replicate(e.group, copies) for e in evals]
        fit_kwargs["eval_metric"] = ReplicatedEvalMetric(metric_names, [e.y.shape[0] for e in evals])
    callbacks = []
    if early_stopping_rounds:
        callbacks.append(lgb.early_stopping(early_stopping_rounds, first_metric_only=True,
                                            verbose=bool(verbose)))
    if verbose:
        callbacks.append(lgb.log_evaluation(1 if verbose is True else int(verbose)))
    if "eval_set" in fit_kwargs and "eval_X" in inspect.signature(DaskLGBMRanker.fit).parameters:
        eval_set = fit_kwargs.pop("eval_set")  # LightGBM >= 4.7 names them eval_X, eval_y
        fit_kwargs["eval_X"], fit_kwargs["eval_y"] = tuple(e[0] for e in eval_set), tuple(e[1] for e in eval_set)
    with warnings.catch_warnings():
        # DaskLGBMRanker always warns that it replaces n_jobs by the workers' threads
        warnings.filterwarnings("ignore", message="Parameter n_jobs will be ignored")
        model.fit(train.X, train.y, group=train.group, callbacks=callbacks or None, **fit_kwargs)
    booster = model.booster_
    best = booster.best_iteration if booster.best_iteration > 0 else booster.current_iteration()
    return booster, best, dict(model.evals_result_)
