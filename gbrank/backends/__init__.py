"""Adapters from gbrank objectives and metrics to each boosting library's calling
convention.  Importing this package imports neither library; each ``_x`` module
imports library x only inside the functions that train."""

from ._common import MetricCallback, ptr_from_sizes
from ._lightgbm import LGBMRankerObjective, LightGBMMetric, LightGBMObjective
from ._xgboost import XGBoostMetric, XGBoostObjective

__all__ = ["LightGBMObjective", "LGBMRankerObjective", "LightGBMMetric", "XGBoostObjective",
           "XGBoostMetric", "MetricCallback", "ptr_from_sizes"]
