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
    raw = np.asarray(sizes)
    if raw.ndim != 1 or raw.size == 0:
        raise ValueError(f"group must be a 1-D array of group sizes (rows per query, in order), got shape "
                         f"{raw.shape}")
    if raw.dtype.kind not in "iuf" or not np.all(np.isfinite(raw.astype(np.float64, copy=False))
                                                 if raw.dtype.kind == "f" else True):
        raise ValueError(f"group must hold whole numbers of rows per query, got dtype {raw.dtype}")
    bad = np.flatnonzero((raw != np.round(raw)) | (raw < 1)) if raw.dtype.kind == "f" else np.flatnonzero(raw < 1)
    if bad.size:
        raise ValueError(f"group sizes must be positive whole numbers of rows, found {raw[bad[0]]!r} at query "
                         f"{bad[0]}; group holds the number of rows of each query (not query ids)")
    return np.concatenate(([0], np.cumsum(raw.astype(np.int64))))


class MetricCallback:
    """Evaluates gbrank metrics on a boosting library's evaluation set.

    ``names`` are evaluator metric names; ``evaluate_kwargs`` are the conventions
    (``empty``, ``ties``, ...) passed to :func:`gbrank.evaluate`.  Subclasses adapt the
    calling convention.  The metrics are always maximised except mean/max rank.
    """

    def __init__(self, names, **evaluate_kwargs):
        if not isinstance(names, str) and not hasattr(names, "__iter__"):
            raise TypeError(f"names must be a metric name or a list of them, e.g. ['ndcg@10'], got {names!r:.40}")
        names = [names] if isinstance(names, str) else list(names)
        if not names:
            raise ValueError("names is empty: give at least one metric to evaluate, e.g. ['ndcg@10']")
        self.specs = [parse_metric(n) for n in names]
        # unknown keywords and bad conventions are refused now, not at the first evaluation round
        evaluate([1.0], [0.0], [0], self.specs, **evaluate_kwargs)
        self.evaluate_kwargs = evaluate_kwargs

    def values(self, scores, labels, ptr) -> list[tuple[str, float, bool]]:
        qid = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
        res = evaluate(labels, scores, qid, self.specs, **self.evaluate_kwargs)
        mean = res.mean()
        return [(str(s), float(mean[str(s)]), s.higher_is_better) for s in self.specs]


def check_objective(objective, adapter: str):
    """A gbrank objective (anything with ``gradients(scores, labels, group_ptr, weights)``)."""
    if not callable(getattr(objective, "gradients", None)):
        raise TypeError(f"{adapter} wraps a gbrank objective such as gbrank.LambdaObjective('ndcg'), an object "
                        f"with a gradients(scores, labels, group_ptr, weights) method; got "
                        f"{type(objective).__name__} {objective!r:.40}")
    return objective


def check_library_object(obj, methods: tuple[str, ...], expected: str, adapter: str) -> None:
    """The boosting library passed what the adapter expects (a Dataset, a DMatrix)."""
    if not all(callable(getattr(obj, m, None)) for m in methods):
        raise TypeError(f"{adapter} expects {expected} as its second argument, got {type(obj).__name__}; "
                        "pass the adapter to the library's train function rather than calling it directly")


class ObjectiveAdapter:
    """Base of the objective adapters: wraps a gbrank objective (checked), shown as
    ``Adapter(objective)``; stateless, so a library's deep copy of its params is harmless.
    Each subclass's ``__call__`` is one library's convention."""

    def __init__(self, objective):
        self.objective = check_objective(objective, type(self).__name__)

    def __repr__(self):
        return f"{type(self).__name__}({self.objective!r})"
