"""Metric names, their parameters, and the parser from strings like ``"ndcg@10"``.

A metric is identified by a :class:`MetricSpec` (an integer code for the numba
kernels plus its cutoff ``k`` or persistence ``p``).  The name registry is a
plain dict; error messages list ``sorted(METRICS)`` so they cannot drift.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# Integer codes used inside the numba kernels (``_kernels.py``).
NDCG, DCG, AP, RR, RBP, NRBP, PREC, RECALL, AUC, MEAN_RANK, MAX_RANK = range(11)

# name -> (code, parameter kind, needs a relevant item to be defined, higher is better)
#   parameter kind: "k?" optional integer cutoff, "k" required cutoff,
#                   "p" required persistence in (0, 1), "" no parameter.
METRICS: dict[str, tuple[int, str, bool, bool]] = {
    "ndcg": (NDCG, "k?", True, True),
    "dcg": (DCG, "k?", False, True),
    "ap": (AP, "k?", True, True),
    "rr": (RR, "k?", True, True),
    "rbp": (RBP, "p", False, True),
    "nrbp": (NRBP, "p", True, True),
    "p": (PREC, "k", False, True),
    "r": (RECALL, "k", True, True),
    "auc": (AUC, "", True, True),
    "mean_rank": (MEAN_RANK, "", True, False),
    "max_rank": (MAX_RANK, "", True, False),
}


def _known() -> str:
    forms = {"k?": "{0} or {0}@k", "k": "{0}@k", "p": "{0}@p", "": "{0}"}
    return ", ".join(forms[METRICS[n][1]].format(n) for n in sorted(METRICS))


@dataclass(frozen=True)
class MetricSpec:
    """A parsed metric: its family ``name``, kernel ``code``, cutoff ``k`` (0 = none)
    and persistence ``p`` (0.0 = none).  ``str(spec)`` gives the canonical name."""

    name: str
    code: int
    k: int = 0
    p: float = 0.0

    @property
    def needs_relevant(self) -> bool:
        """True when the metric is undefined for a list without relevant items."""
        return METRICS[self.name][2]

    @property
    def higher_is_better(self) -> bool:
        return METRICS[self.name][3]

    def __str__(self) -> str:
        if self.k:
            return f"{self.name}@{self.k}"
        if self.p:
            return f"{self.name}@{self.p:g}"
        return self.name


def parse_metric(metric: str | MetricSpec) -> MetricSpec:
    """Parse a metric name such as ``"ndcg@10"``, ``"nrbp@0.95"`` or ``"auc"``.

    Raises
    ------
    ValueError
        For an unknown family, a missing or malformed parameter; the message lists
        every known metric.
    """
    if isinstance(metric, MetricSpec):
        return metric
    if not isinstance(metric, str):
        raise TypeError(f"a metric is named by a string such as 'ndcg@10', got {metric!r}")
    text = metric.strip().lower()
    name, _, arg = text.partition("@")
    if name not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; known metrics: {_known()}")
    code, kind, _, _ = METRICS[name]
    if kind == "":
        if arg:
            raise ValueError(f"metric {name!r} takes no parameter, got {metric!r}")
        return MetricSpec(name, code)
    if kind in ("k", "k?"):
        if not arg:
            if kind == "k":
                raise ValueError(f"metric {name!r} needs a cutoff, e.g. '{name}@10'; got {metric!r}")
            return MetricSpec(name, code)
        if not arg.isdigit() or int(arg) < 1:
            raise ValueError(f"the cutoff of {metric!r} must be a positive integer, e.g. '{name}@10'")
        return MetricSpec(name, code, k=int(arg))
    # persistence
    if not arg:
        raise ValueError(f"metric {name!r} needs a persistence p in (0, 1), e.g. '{name}@0.95'")
    p = check_persistence(arg, what=metric)
    return MetricSpec(name, code, p=p)


def check_persistence(p, what: str = "p") -> float:
    """Return ``p`` as a float, raising unless 0 < p < 1."""
    try:
        value = float(p)
    except (TypeError, ValueError):
        raise ValueError(f"the persistence of {what!r} must be a number in (0, 1), got {p!r}") from None
    if not (0.0 < value < 1.0) or not math.isfinite(value):
        raise ValueError(f"the persistence of {what!r} must lie strictly between 0 and 1, got {p!r}")
    return value
