"""XGBoost adapters for gbrank objectives and metrics (the only module importing xgboost).

``XGBRanker`` refuses a callable objective, so gbrank objectives go through
``xgboost.train(obj=...)``; query groups come from ``dtrain.get_uint_info("group_ptr")``
and ranking weights are per query.
"""

from __future__ import annotations

import warnings

import numpy as np

from ._common import MetricCallback, ObjectiveAdapter, check_library_object
from ._record import Backend
from ._shared import shared_or_built


def dmatrix_lists(dmatrix, adapter: str = "XGBoostObjective") -> tuple[np.ndarray, np.ndarray]:
    """(labels, query boundaries) of an ``xgboost.DMatrix``: the boundaries from
    ``get_uint_info("group_ptr")``; ``ValueError`` when it has no query groups."""
    check_library_object(dmatrix, ("get_uint_info", "get_label"), "an xgboost.DMatrix", adapter)
    ptr = dmatrix.get_uint_info("group_ptr").astype(np.int64)
    if len(ptr) < 2:
        raise ValueError("the DMatrix has no query groups; build it with qid=... or call set_group(sizes)")
    return dmatrix.get_label(), ptr


def is_dmatrix(obj) -> bool:
    """``obj`` looks like an ``xgboost.DMatrix`` (has ``get_uint_info``)."""
    return callable(getattr(obj, "get_uint_info", None))


def dmatrix_gradients(objective, predt, dtrain, adapter: str = "XGBoostObjective"):
    """``xgboost.train(obj=...)``'s convention, ``obj(predt, dtrain)``: groups from
    ``get_uint_info("group_ptr")``, one weight per query; returns arrays of shape (n, 1)."""
    labels, ptr = dmatrix_lists(dtrain, adapter)
    w = dtrain.get_weight()
    if len(w) and len(w) != len(ptr) - 1:
        raise ValueError(f"the DMatrix has {len(w)} weights for {len(ptr) - 1} queries; XGBoost's ranking "
                         "weights are one per query (set_weight(query_weights)), not one per row")
    grad, hess = objective.gradients(predt, labels, ptr, w if len(w) else None)
    return grad.reshape(-1, 1), hess.reshape(-1, 1)


class XGBoostObjective(ObjectiveAdapter):
    """A gbrank objective as ``xgboost.train(obj=...)``: ``(predt, dtrain) -> (grad, hess)``
    with shape (n, 1).  Query weights (``dtrain.set_weight`` with one weight per query)
    multiply the query's g and h."""

    def __call__(self, predt, dtrain):
        return dmatrix_gradients(self.objective, predt, dtrain)


class XGBoostMetric(MetricCallback):
    """gbrank metrics as an XGBoost ``custom_metric``: ``(predt, dmatrix) -> [(name, value)]``.
    Pass ``maximize=True`` to ``xgboost.train`` when early stopping on it."""

    def __call__(self, predt, dmatrix):
        labels, ptr = dmatrix_lists(dmatrix, "XGBoostMetric")
        vals = self.values(np.asarray(predt).reshape(-1), labels, ptr)
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
    is one weight per query.  With ``device="cuda"`` in ``params`` a gbrank objective's
    gradients are computed on the GPU (:func:`train_xgboost_device`)."""
    import xgboost as xgb

    if not isinstance(objective, str) and on_gpu(params):
        problems = device_fallback_reasons(params, X, objective)
        if not problems:
            return train_xgboost_device(params, X, y, ptr, weight, eval_sets, objective, metric, n_estimators,
                                        early_stopping_rounds, verbose)
        warnings.warn(f"XGBoost trains on {params['device']!r} but the gradients of {objective!r} are computed on "
                      f"the host ({'; '.join(problems)}): the predictions go to the host and the gradients back "
                      "every round", stacklevel=3)

    # hist trains on quantised features: a QuantileDMatrix holds only the bins (about one byte
    # per value), a DMatrix a copy of every value besides; the same trees either way
    quantised = params.get("tree_method", "hist") == "hist"

    max_bin = params.get("max_bin", 256)

    def dmatrix(Xs, ys, ps, w=None, ref=None):
        def build():
            if quantised:
                d = xgb.QuantileDMatrix(Xs, label=ys, ref=ref, max_bin=max_bin, enable_categorical=_is_frame(Xs))
            else:
                d = xgb.DMatrix(Xs, label=ys, enable_categorical=_is_frame(Xs))
            d.set_group(np.diff(ps))
            if w is not None:
                d.set_weight(w)
            return d

        return shared_or_built("xgboost", "train" if ref is None else "valid", Xs, ys, ps, w,
                               (quantised, max_bin, id(ref)), build)

    train = dmatrix(X, y, ptr, weight)
    evals = [(dmatrix(Xv, yv, pv, ref=train), f"valid_{i}") for i, (Xv, yv, pv) in enumerate(eval_sets)]
    params, obj = xgboost_params(params, objective)
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


def on_gpu(params) -> bool:
    """XGBoost is asked to train on a GPU (``device="cuda[:n]"`` or ``"gpu"``)."""
    return str(params.get("device", "cpu")).split(":")[0] in ("cuda", "gpu")


def device_fallback_reasons(params, X, objective) -> list[str]:
    """Why XGBoost on a GPU would train ``objective`` through the host (empty: its gradients
    are computed on the device, :func:`train_xgboost_device`)."""
    problems = _device_problems(objective)
    if float(params.get("base_score", 0.0)) != 0.0:
        problems.append(f"base_score={params['base_score']!r} (the device loop starts the margins at 0)")
    if _is_frame(X):
        problems.append("categorical columns (a DataFrame; the device loop takes numeric arrays)")
    return problems


def _device_problems(objective) -> list[str]:
    """Why ``objective``'s gradients cannot be computed on the device (empty: they can)."""
    from ..lambdas import LambdaObjective

    if not isinstance(objective, LambdaObjective):
        return [f"{type(objective).__name__} is not a gbrank LambdaObjective"]
    try:
        from ..torch import device_objective_problems
    except ImportError:
        return ["torch is not installed (pip install 'gbrank[torch]')"]
    return [f"the torch gradients do not cover {p}" for p in device_objective_problems(objective)]


def train_xgboost_device(params, X, y, ptr, weight, eval_sets, objective, metric, n_estimators,
                         early_stopping_rounds, verbose):
    """Train XGBoost with a gbrank ``LambdaObjective`` whose gradients are computed with torch
    on XGBoost's own device, so that nothing crosses to the host per round but the
    evaluation metrics.

    ``xgboost.train(obj=...)`` hands a Python objective the predictions as a host array, so
    on a GPU every round copies them out and the gradients back in.  Here the training
    margins stay on the device: after each round the new tree's output
    (``inplace_predict`` of that one tree, ``predict_type="margin"``) is added to them, the
    next gradients come from ``gbrank.torch.DeviceLambdaGradients`` (the numba kernel's
    values in torch, float64) and go to ``Booster.boost`` as device arrays.  The same loop
    runs on the CPU (``device="cpu"``: NumPy in, torch on the CPU), where it gives the model
    of ``xgboost.train(obj=XGBoostObjective(objective))`` (which is the faster way there).
    Arguments and return value: :func:`train_xgboost`; the base score must be 0 (gbrank's
    backend sets it).  GPU arrays in and out of XGBoost need CuPy, as XGBoost itself does."""
    import xgboost as xgb

    from ..torch import DeviceLambdaGradients, Margins, device_array

    params, _ = xgboost_params(params, objective)
    if float(params.setdefault("base_score", 0.0)) != 0.0:
        raise ValueError(f"train_xgboost_device accumulates the trees' margins from 0, so base_score must be 0, got "
                         f"{params['base_score']!r}; ranking is shift-invariant, drop it")
    device = str(params.get("device", "cpu")).replace("gpu", "cuda")
    if early_stopping_rounds and not eval_sets:
        raise ValueError("early_stopping_rounds needs an eval_set to watch")
    data = device_array(X, device)
    dtrain = xgb.QuantileDMatrix(data, label=np.asarray(y, dtype=np.float32), group=np.diff(ptr), weight=weight)
    booster = xgb.Booster(params, [dtrain])
    state = DeviceLambdaGradients(objective, y, ptr, weight, device)
    evals = [(device_array(Xv, device), Margins(len(yv), device), np.asarray(yv), np.asarray(pv))
             for Xv, yv, pv in eval_sets]
    history: dict = {f"valid_{k}": {str(s): [] for s in metric.specs} for k in range(len(evals))}
    watched = metric.specs[0] if evals else None
    best, best_round = None, 0
    for it in range(n_estimators):
        grad, hess = state.gradients()
        booster.boost(dtrain, it, grad=grad, hess=hess)
        state.margins.add(booster.inplace_predict(data, iteration_range=(it, it + 1), predict_type="margin"))
        for k, (Xv, margins, yv, pv) in enumerate(evals):
            margins.add(booster.inplace_predict(Xv, iteration_range=(it, it + 1), predict_type="margin"))
            vals = metric.values(margins.numpy(), yv, pv)
            for name, value, _ in vals:
                history[f"valid_{k}"][name].append(value)
            if verbose and it % max(1, int(verbose)) == 0:
                print(f"[{it}]\t" + "\t".join(f"valid_{k}-{name}:{value:.5f}" for name, value, _ in vals))
        if evals:  # XGBoost's EarlyStopping on the last evaluation set: strict improvement
            value = history[f"valid_{len(evals) - 1}"][str(watched)][-1]
            if best is None or (value > best if watched.higher_is_better else value < best):
                best, best_round = value, it
            elif early_stopping_rounds and it - best_round >= early_stopping_rounds:
                break
    return booster, (best_round + 1 if early_stopping_rounds else booster.num_boosted_rounds()), history


def predict_xgboost(booster, X, best_iteration):
    """Scores of the first ``best_iteration`` trees; an array (dense or CSR) is predicted in
    place (no DMatrix copy of it), a DataFrame with categorical columns through a DMatrix."""
    import xgboost as xgb

    if _is_frame(X):
        return booster.predict(xgb.DMatrix(X, enable_categorical=True), iteration_range=(0, best_iteration))
    return np.asarray(booster.inplace_predict(X, iteration_range=(0, best_iteration)))


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
