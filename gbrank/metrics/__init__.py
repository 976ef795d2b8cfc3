"""Ranking metrics: one numba definition per metric (``_kernels``) and the name
registry that parses ``"ndcg@10"`` or ``"nrbp@0.95"`` (``_registry``).

This package imports nothing else of gbrank; the evaluator, the swap deltas, the
bounds and the torch losses' tests all use these definitions.
"""

from ._kernels import (
    AP_DIV_MIN_R_K,
    AP_DIV_R,
    GAIN_EXP,
    GAIN_LINEAR,
    TIES_AVERAGE,
    TIES_OPTIMISTIC,
    TIES_PESSIMISTIC,
    TIES_STABLE,
    evaluate_lists,
    list_metrics,
    metric_value,
    rank_order,
)
from ._registry import METRICS, MetricSpec, check_persistence, parse_metric

TIES = {"average": TIES_AVERAGE, "pessimistic": TIES_PESSIMISTIC, "optimistic": TIES_OPTIMISTIC,
        "stable": TIES_STABLE}
GAINS = {"exp": GAIN_EXP, "linear": GAIN_LINEAR}
AP_DIVISORS = {"R": AP_DIV_R, "min(R,k)": AP_DIV_MIN_R_K}

__all__ = [
    "METRICS", "MetricSpec", "parse_metric", "check_persistence", "TIES", "GAINS", "AP_DIVISORS",
    "evaluate_lists", "list_metrics", "metric_value", "rank_order",
]
