"""The evaluator: per-list metrics with explicit conventions, paired comparisons, and TREC
run and qrels files.

Imports only ``gbrank.metrics`` of gbrank.
"""

from ._compare import compare
from ._evaluate import DEFAULT_METRICS, EMPTY_POLICIES, EvaluationResult, evaluate
from ._trec import TrecData, join_run_qrels, read_qrels, read_run

__all__ = ["evaluate", "compare", "EvaluationResult", "DEFAULT_METRICS", "EMPTY_POLICIES",
           "read_run", "read_qrels", "join_run_qrels", "TrecData"]
