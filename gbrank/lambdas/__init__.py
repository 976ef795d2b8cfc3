"""LambdaRank for gradient boosting: metric swap deltas and the gradient kernels.

Imports only ``gbrank.metrics`` of gbrank; the backends adapt it to each library.
"""

from ._deltas import DELTA_METRICS
from ._objective import LambdaObjective, parse_objective_metric
from ._swap import swap_deltas

__all__ = ["LambdaObjective", "swap_deltas", "parse_objective_metric", "DELTA_METRICS"]
