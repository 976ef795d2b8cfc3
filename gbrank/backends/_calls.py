"""The one dispatch of a gbrank objective called by a boosting library itself.

A gbrank objective (``LambdaObjective``, ``ListwiseObjective``, ``UnbiasedLambdaObjective``)
passed straight to ``lightgbm.train``, ``lightgbm.LGBMRanker`` or ``xgboost.train`` delegates
its ``__call__`` here (and CatBoost's ``calc_ders_range`` hook to
``_catboost.refuse_python_objective``);
the conventions themselves are those of the explicit adapters (``LightGBMObjective``,
``LGBMRankerObjective``, ``XGBoostObjective``), written once in ``_lightgbm.py`` and
``_xgboost.py``.
"""

from __future__ import annotations

from ._lightgbm import dataset_gradients, is_dataset, ranker_gradients
from ._xgboost import dmatrix_gradients, is_dmatrix


def call_objective(objective, first, second, weight=None, group=None):
    """``objective``'s gradients in the convention of the library that called it, told apart by
    the second argument: an ``xgboost.DMatrix`` (``xgboost.train(obj=...)``, arrays of shape
    (n, 1)), a ``lightgbm.Dataset`` (``lightgbm.train``), or ``group`` given
    (``LGBMRanker``'s ``(y_true, y_pred, weight, group)``).  A call without groups (a
    scikit-learn wrapper for regression) raises ``TypeError`` naming the ways that work."""
    name = type(objective).__name__
    if is_dmatrix(second):
        return dmatrix_gradients(objective, first, second, name)
    if is_dataset(second):
        return dataset_gradients(objective, first, second, name)
    if group is None:
        raise TypeError(
            f"{objective!r} was called as ({type(first).__name__}, {type(second).__name__}) without "
            "query groups, which is how a scikit-learn wrapper for regression calls a custom objective "
            "(XGBRegressor, LGBMRegressor); a ranking objective needs the lists.  Use "
            "lightgbm.train({'objective': obj, ...}, lgb.Dataset(X, y, group=sizes)), "
            "lightgbm.LGBMRanker(objective=obj).fit(X, y, group=sizes), "
            "xgboost.train(params, dtrain_with_qid, obj=obj) (XGBRanker takes no callable objective), "
            "or gbrank.estimators.GBRanker(objective=obj)")
    return ranker_gradients(objective, first, second, weight, group)

