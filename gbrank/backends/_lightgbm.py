"""LightGBM adapters for gbrank objectives and metrics (the only module importing lightgbm)."""

from __future__ import annotations

import numpy as np

from ._common import MetricCallback, ObjectiveAdapter, check_library_object, ptr_from_sizes
from ._record import Backend
from ._shared import shared_or_built


def is_dataset(obj) -> bool:
    """``obj`` looks like a ``lightgbm.Dataset`` (has ``get_group`` and ``get_label``)."""
    return callable(getattr(obj, "get_group", None)) and callable(getattr(obj, "get_label", None))


def dataset_lists(dataset, adapter: str) -> tuple[np.ndarray, np.ndarray]:
    """(labels, query boundaries) of a ``lightgbm.Dataset``, the boundaries from its group sizes
    (``get_group()``); ``ValueError`` when it has none."""
    check_library_object(dataset, ("get_group", "get_label"), "a lightgbm.Dataset", adapter)
    return dataset.get_label(), ptr_from_sizes(dataset.get_group())


def dataset_gradients(objective, preds, train_set, adapter: str = "LightGBMObjective"):
    """``lightgbm.train``'s convention, ``params["objective"](preds, train_set)``: groups from
    ``train_set.get_group()``, one weight per row."""
    labels, ptr = dataset_lists(train_set, adapter)
    return objective.gradients(preds, labels, ptr, train_set.get_weight())


def ranker_gradients(objective, y_true, y_pred, weight, group):
    """``lightgbm.LGBMRanker``'s convention, ``objective(y_true, y_pred, weight, group)``
    (it passes ``group`` only to a callable with exactly four positional parameters)."""
    return objective.gradients(y_pred, y_true, ptr_from_sizes(group), weight)


class LightGBMObjective(ObjectiveAdapter):
    """A gbrank objective as LightGBM's native callable objective.

    Use as ``params["objective"] = LightGBMObjective(obj)`` with ``lightgbm.train``;
    the training set needs query groups.  Stateless, so LightGBM's deep copy of the
    params is harmless.

    Examples
    --------
    >>> import lightgbm as lgb, gbrank
    >>> params = {"objective": LightGBMObjective(gbrank.LambdaObjective("nrbp@0.95"))}
    """

    def __call__(self, preds, train_set):
        return dataset_gradients(self.objective, preds, train_set)


class LGBMRankerObjective(ObjectiveAdapter):
    """A gbrank objective as the four-argument callable that ``lightgbm.LGBMRanker``
    accepts: ``(y_true, y_pred, weight, group)`` (LGBMRanker passes ``group`` only to a
    callable with exactly four positional parameters)."""

    def __call__(self, y_true, y_pred, weight, group):
        return ranker_gradients(self.objective, y_true, y_pred, weight, group)


class LightGBMMetric(MetricCallback):
    """gbrank metrics as a LightGBM evaluation function, ``-> [(name, value, higher_better)]``.

    Two calling conventions, told apart by the second argument: ``lightgbm.train(feval=m)``
    calls ``m(preds, eval_data)``; ``LGBMRanker(...).fit(eval_metric=m)`` calls
    ``m(y_true, y_pred, weight, group)`` (it passes ``group`` only to a callable with
    exactly four parameters, as this one has).  ``weight`` is ignored: the metrics are
    means over queries.
    """

    def __call__(self, preds_or_labels, eval_data_or_preds, weight=None, group=None):
        second = eval_data_or_preds
        if callable(getattr(second, "get_group", None)):  # lightgbm.train's feval(preds, eval_data)
            labels, ptr = dataset_lists(second, "LightGBMMetric")
            return self.values(preds_or_labels, labels, ptr)
        if group is None:
            raise TypeError("LightGBMMetric needs query groups: pass it as lightgbm.train(feval=...) with a "
                            "Dataset built with group=sizes, or as LGBMRanker(...).fit(X, y, group=sizes, "
                            "eval_set=[...], eval_group=[...], eval_metric=...); got "
                            f"({type(preds_or_labels).__name__}, {type(second).__name__}) without groups")
        return self.values(np.asarray(second, dtype=np.float64), preds_or_labels, ptr_from_sizes(group))


def train_lightgbm(params, X, y, ptr, weight, eval_sets, objective, metric, n_estimators,
                   early_stopping_rounds, verbose):
    """Train a LightGBM booster.  ``objective`` is a gbrank objective or a built-in name;
    ``eval_sets`` a list of (X, y, ptr); early stopping watches the first metric of
    ``metric`` on the last evaluation set.  Returns (booster, best_iteration, history)."""
    import lightgbm as lgb

    def dataset(Xs, ys, ps, w=None, reference=None):
        return shared_or_built(
            "lightgbm", "train" if reference is None else "valid", Xs, ys, ps, w, (id(reference),),
            lambda: lgb.Dataset(Xs, ys, group=np.diff(ps), weight=w, reference=reference, free_raw_data=False))

    train = dataset(X, y, ptr, weight)
    params = dict(params)
    params["objective"] = objective if isinstance(objective, str) else LightGBMObjective(objective)
    params["metric"] = "None"
    params.setdefault("verbosity", -1)
    valid = [dataset(Xv, yv, pv, reference=train) for Xv, yv, pv in eval_sets]
    history: dict = {}
    callbacks = [lgb.record_evaluation(history)]
    if early_stopping_rounds:
        if not valid:
            raise ValueError("early_stopping_rounds needs an eval_set to watch")
        callbacks.append(lgb.early_stopping(early_stopping_rounds, first_metric_only=True, verbose=bool(verbose)))
    if verbose:
        callbacks.append(lgb.log_evaluation(1 if verbose is True else int(verbose)))
    booster = lgb.train(
        params, train, num_boost_round=n_estimators, valid_sets=valid,
        valid_names=[f"valid_{i}" for i in range(len(valid))],
        feval=metric if valid else None, callbacks=callbacks,
    )
    best = booster.best_iteration if booster.best_iteration > 0 else booster.current_iteration()
    return booster, best, history


def predict_lightgbm(booster, X, best_iteration):
    return booster.predict(X, num_iteration=best_iteration)


def importance_lightgbm(booster, n_features, best_iteration) -> np.ndarray:
    """Total gain of each feature's splits in the first ``best_iteration`` trees."""
    return np.asarray(booster.feature_importance(importance_type="gain", iteration=best_iteration), dtype=np.float64)


def _bagging_freq(settings) -> dict:
    """LightGBM bags rows only when ``bagging_freq`` > 0: once per round when subsampling."""
    return {"bagging_freq": 1 if settings.get("subsample", 1.0) < 1 else 0}


LIGHTGBM = Backend(
    name="lightgbm", label="LightGBM", extra="lightgbm",
    train=train_lightgbm, predict=predict_lightgbm, metric=LightGBMMetric, objectives=("lambdarank", "rank_xendcg"),
    params={"learning_rate": "learning_rate", "num_leaves": "num_leaves", "max_depth": "max_depth",
            "min_child_weight": "min_sum_hessian_in_leaf", "subsample": "bagging_fraction",
            "colsample_bytree": "feature_fraction", "reg_lambda": "lambda_l2", "random_state": "seed",
            "n_jobs": "num_threads"},
    unset={"max_depth": -1}, derived=_bagging_freq, importance=importance_lightgbm, categorical=True,
)
