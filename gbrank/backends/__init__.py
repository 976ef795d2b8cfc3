"""The boosting libraries as gbrank uses them: one :class:`Backend` record per library
(train, predict, metric adapter, parameter names, weight rule, built-in objectives) in
:data:`BACKENDS`, and the adapters of gbrank objectives and metrics to each library's
calling convention.  Importing this package imports no library; each ``_x`` module imports
library x only inside the functions that train and predict."""

from ._calls import call_objective
from ._catboost import CatBoostMetric, refuse_python_objective
from ._common import MetricCallback, ptr_from_sizes
from ._lightgbm import LGBMRankerObjective, LightGBMMetric, LightGBMObjective
from ._record import SETTINGS, Backend
from ._registry import BACKENDS, get_backend
from ._shared import free_shared_datasets, shared_datasets
from ._xgboost import XGBoostMetric, XGBoostObjective, dmatrix_lists, xgboost_early_stopping, xgboost_params

__all__ = ["Backend", "BACKENDS", "get_backend", "SETTINGS", "LightGBMObjective", "LGBMRankerObjective",
           "LightGBMMetric", "XGBoostObjective", "XGBoostMetric", "CatBoostMetric", "MetricCallback",
           "ptr_from_sizes", "call_objective", "refuse_python_objective", "dmatrix_lists",
           "xgboost_early_stopping", "xgboost_params", "shared_datasets", "free_shared_datasets"]
