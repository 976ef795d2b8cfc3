"""Ranking metrics: the metric record (``_record``), one numba kernel per metric
(``_kernels``), and the one parser of metric-based names.

:data:`METRICS` maps each family name to its :class:`Metric` record, from which every
other registry, parser and error message of gbrank is derived (``with_delta``,
``with_bounds``, ``with_listwise``).  This package imports nothing else of gbrank; the
evaluator, the swap deltas, the bounds and the torch losses' tests all use these
definitions.  Adding a metric: CONTRIBUTING.md.
"""

from ._kernels import (
    AP_DIV_MIN_R_K,
    AP_DIV_R,
    GAIN_EXP,
    GAIN_LINEAR,
    KERNEL_CODES,
    TIES_AVERAGE,
    TIES_KEY,
    TIES_OPTIMISTIC,
    TIES_PESSIMISTIC,
    TIES_STABLE,
    average_precision,
    dcg,
    dcg_over_ideal,
    discount,
    evaluate_lists,
    evaluate_lists_with,
    expectation,
    gain,
    ideal_dcg,
    list_metrics,
    mean_rank,
    metric_value,
    nrbp,
    nrbp_loss,
    rank_order,
    ranked_values,
    rbp,
    reciprocal_rank,
)
from ._record import (
    BOUNDINGS,
    DELTA_FORMS,
    EXTERNAL,
    METRICS,
    PARADIGMS,
    Metric,
    MetricSpec,
    aliases,
    check_bounding,
    check_persistence,
    known,
    merge_param,
    parse,
    parse_metric,
    register,
    with_bounds,
    with_delta,
    with_listwise,
)

TIES = {"average": TIES_AVERAGE, "pessimistic": TIES_PESSIMISTIC, "optimistic": TIES_OPTIMISTIC,
        "stable": TIES_STABLE}
GAINS = {"exp": GAIN_EXP, "linear": GAIN_LINEAR}
AP_DIVISORS = {"R": AP_DIV_R, "min(R,k)": AP_DIV_MIN_R_K}

__all__ = [
    # the record and the parser
    "METRICS", "Metric", "MetricSpec", "register", "aliases", "known", "parse", "parse_metric",
    "merge_param", "check_persistence", "check_bounding", "with_delta", "with_bounds", "with_listwise",
    "BOUNDINGS", "DELTA_FORMS", "PARADIGMS", "EXTERNAL", "KERNEL_CODES",
    # conventions
    "TIES", "TIES_KEY", "GAINS", "AP_DIVISORS",
    # kernels (numba, one list in rank order, tie groups ``groups``)
    "gain", "discount", "dcg", "ideal_dcg", "dcg_over_ideal", "average_precision", "reciprocal_rank",
    "rbp", "nrbp", "mean_rank", "nrbp_loss", "metric_value", "expectation", "rank_order", "ranked_values",
    "list_metrics", "evaluate_lists", "evaluate_lists_with",
]
