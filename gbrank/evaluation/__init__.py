"""The evaluator: per-list metrics with explicit conventions, and paired comparisons.

Imports only ``gbrank.metrics`` of gbrank.
"""

from ._compare import compare
from ._evaluate import DEFAULT_METRICS, EvaluationResult, evaluate

__all__ = ["evaluate", "compare", "EvaluationResult", "DEFAULT_METRICS"]
