"""What every backend adapter shares: query boundaries and evaluation of a metric list."""

from __future__ import annotations

import numpy as np

from ..evaluation import evaluate
from ..metrics import parse_metric


def ptr_from_sizes(sizes) -> np.ndarray:
    """Query boundaries (0, s0, s0 + s1, ...) from group sizes."""
    if sizes is None:
        raise ValueError("the training data has no query groups; pass group sizes (LightGBM) "
                         "or qid/group (XGBoost) so that the ranking objective knows the lists")
    return np.concatenate(([0], np.cumsum(np.asarray(sizes, dtype=np.int64))))


class MetricCallback:
    """Evaluates gbrank metrics on a boosting library's evaluation set.

    ``names`` are evaluator metric names; ``evaluate_kwargs`` are the conventions
    (``empty``, ``ties``, ...) passed to :func:`gbrank.evaluate`.  Subclasses adapt the
    calling convention.  The metrics are always maximised except mean/max rank.
    """

    def __init__(self, names, **evaluate_kwargs):
        names = [names] if isinstance(names, str) else list(names)
        self.specs = [parse_metric(n) for n in names]
        self.evaluate_kwargs = evaluate_kwargs

    def values(self, scores, labels, ptr) -> list[tuple[str, float, bool]]:
        qid = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
        res = evaluate(labels, scores, qid, self.specs, **self.evaluate_kwargs)
        mean = res.mean()
        return [(str(s), float(mean[str(s)]), s.higher_is_better) for s in self.specs]
