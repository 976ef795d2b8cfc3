"""The evaluator: per-list metrics with explicit conventions, paired comparisons of many
systems, beyond-accuracy metrics of recommendation lists, and TREC run and qrels files.

Imports only ``gbrank.metrics`` of gbrank.
"""

from ._beyond import BeyondAccuracyResult, beyond_accuracy
from ._compare import Comparison, adjust_p_values, compare
from ._evaluate import DEFAULT_METRICS, EMPTY_POLICIES, EvaluationResult, evaluate
from ._run import DEFAULT_RUN_METRICS, RUN_TIES, evaluate_run
from ._trec import as_qrels, as_run, read_qrels, read_run
from ._trec_measures import TREC_FAMILIES, TrecEvaluationResult, trec_lines

__all__ = ["evaluate", "evaluate_run", "compare", "EvaluationResult", "DEFAULT_METRICS", "DEFAULT_RUN_METRICS",
           "EMPTY_POLICIES", "RUN_TIES", "read_run", "read_qrels", "as_run", "as_qrels", "Comparison", "adjust_p_values",
           "beyond_accuracy", "BeyondAccuracyResult", "TrecEvaluationResult", "trec_lines", "TREC_FAMILIES"]
