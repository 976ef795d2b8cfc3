"""``gbrank.evaluate``: per-list metrics with explicit empty-list and tie conventions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from .._validation import as_1d_float, check_choice, check_labels, check_same_length, group_by_qid
from ..metrics import (AP_DIVISORS, EXTERNAL, GAINS, KERNEL_CODES, TIES, MetricSpec, evaluate_lists,
                       evaluate_lists_with, parse_metric)

DEFAULT_METRICS = ("ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "ap", "rr", "nrbp@0.95")
EMPTY_POLICIES = ("zero", "one", "skip")


@dataclass(frozen=True)
class EvaluationResult:
    """What :func:`evaluate` returns, always in this shape.

    Attributes
    ----------
    per_query : pandas.DataFrame
        Indexed by query id: one column per metric, then ``n_items`` and ``n_relevant``.
        Under ``empty="skip"`` lists without a relevant item are not in it.
    metrics : tuple of str
        Canonical metric names, the column order of ``per_query``.
    settings : dict
        The conventions the numbers depend on: ``relevance_threshold``, ``gain``,
        ``empty``, ``ties`` and ``ap_divisor``.
    n_empty : int
        Number of lists without a relevant item (scored by the ``empty`` policy, or skipped).
    skipped_qids : numpy.ndarray
        Query ids left out under ``empty="skip"`` (empty otherwise).
    """

    per_query: pd.DataFrame
    metrics: tuple[str, ...]
    settings: dict = field(default_factory=dict)
    n_empty: int = 0
    skipped_qids: np.ndarray = field(default_factory=lambda: np.empty(0))

    def mean(self) -> pd.Series:
        """Mean of each metric over the lists that count."""
        return self.per_query[list(self.metrics)].mean()

    def summary(self, confidence: float = 0.95) -> pd.DataFrame:
        """Mean, standard deviation and Student-t confidence interval of each metric.

        One list has no spread: its ``std``, ``ci_low`` and ``ci_high`` are NaN (the sample
        standard deviation and the interval need at least two lists), as are all but ``n``
        when no list is left (``empty="skip"`` on lists without a relevant item)."""
        values = self.per_query[list(self.metrics)]
        n = len(values)
        mean = values.mean()
        std = values.std(ddof=1) if n > 1 else pd.Series(np.nan, index=mean.index)
        half = _t_half_width(std, n, confidence)
        return pd.DataFrame(
            {"mean": mean, "std": std, "ci_low": mean - half, "ci_high": mean + half, "n": n}
        ).rename_axis("metric")

    def __repr__(self) -> str:
        s = self.settings
        head = (f"EvaluationResult({len(self.per_query)} lists, {self.n_empty} without a relevant "
                f"item [empty={s.get('empty')!r}], ties={s.get('ties')!r}, gain={s.get('gain')!r})")
        return head + "\n" + self.mean().to_string()


def _t_half_width(std, n: int, confidence: float):
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float, np.integer, np.floating)):
        raise TypeError(f"confidence must be a number in (0, 1), e.g. 0.95, got {confidence!r:.40}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    if n < 2:
        return std * 0.0 + np.inf
    from scipy import stats  # imported on first use: it is most of the cost of importing gbrank

    return stats.t.ppf(0.5 + confidence / 2.0, n - 1) * std / np.sqrt(n)


def evaluate(
    y_true,
    y_score,
    qid,
    metrics: Sequence[str | MetricSpec] | str = DEFAULT_METRICS,
    *,
    relevance_threshold: float = 1,
    gain: str | Mapping = "exp",
    empty: str = "zero",
    ties: str = "average",
    ap_divisor: str = "R",
    max_grade: float | None = None,
) -> EvaluationResult:
    """Evaluate ranked lists given per-row labels, scores and query ids.

    Parameters
    ----------
    y_true : array-like of shape (n_rows,)
        Relevance labels, non-negative (integers up to 30 with ``gain="exp"``).
    y_score : array-like of shape (n_rows,)
        Scores; higher ranks first.  Must be finite.
    qid : array-like of shape (n_rows,)
        One query id per row.  Rows of a list may come in any order and any qid order.
    metrics : str or sequence of str
        Names such as ``"ndcg@10"``, ``"ap"``, ``"rr"``, ``"nrbp@0.95"``, ``"p@5"``, or
        trec_eval's and ranx's names (``"map"``, ``"ndcg_cut_10"``, ``"P_5"``, ``"mrr"``):
        every family of ``gbrank.metrics.METRICS`` and its aliases.
    relevance_threshold : float, default 1
        Binary metrics (AP, RR, RBP, P, R, AUC, ranks) count a row relevant when
        ``label >= relevance_threshold``.  nDCG/DCG use graded gains.
    gain : {"exp", "linear"} or mapping
        ``2**l - 1`` (default, as LightGBM/XGBoost) or ``l`` (as trec_eval and
        scikit-learn's ``ndcg_score``), or a gain per label, e.g. ``{0: 0, 1: 1, 2: 3}``
        (LightGBM's ``label_gain``): every label must be a key.
    empty : {"zero", "one", "skip"}
        Value of a metric that is undefined for a list without relevant items
        (nDCG, AP, RR, nRBP, R@k, AUC, mean/max rank): 0 as trec_eval and ranx, 1 as
        LightGBM and XGBoost, or leave such lists out entirely.  DCG, RBP and P@k are
        defined (0) for such lists.
    ties : {"average", "pessimistic", "optimistic", "stable"}
        How tied scores are ordered: the exact expectation over all orders of the tied
        items (default, McSherry & Najork 2008); relevant items last or first; or the
        input order of the rows (as LightGBM/XGBoost do).
    ap_divisor : {"R", "min(R,k)"}
        Divisor of AP@k: the number of relevant items R (trec_eval) or min(R, k)
        (LightGBM, XGBoost).  Irrelevant for AP without cutoff.
    max_grade : float, optional
        Top grade of the relevance scale, for ERR (x = gain(l) / (gain(max_grade) + 1)) and
        graded RBP (gain(l) / gain(max_grade)).  None: the largest label of ``y_true``
        (stated in ``settings``; LETOR: 2, MSLR: 4).

    Returns
    -------
    EvaluationResult

    Examples
    --------
    >>> r = evaluate([2, 0, 1, 0], [0.9, 0.8, 0.1, 0.4], [7, 7, 7, 7], ["ndcg@2", "rr"])
    >>> round(float(r.per_query.loc[7, "ndcg@2"]), 4)
    0.8262
    """
    specs = parse_metrics(metrics)
    settings = check_settings(gain=gain, empty=empty, ties=ties, ap_divisor=ap_divisor,
                              relevance_threshold=relevance_threshold)
    check_same_length(y_true=y_true, y_score=y_score, qid=qid)
    labels = as_1d_float(y_true, "y_true")
    scores = as_1d_float(y_score, "y_score")
    check_labels(labels, "linear" if isinstance(gain, Mapping) else gain)
    max_grade = check_max_grade(max_grade, labels)
    order, starts, qids = group_by_qid(qid)
    labels, scores = labels[order], scores[order]
    row_gains = gains_of(labels, gain, "y_true")
    return evaluate_sorted(specs, scores, labels, row_gains, np.empty(0), starts, np.diff(starts), qids, settings,
                           max_grade=max_grade)


def check_settings(*, gain, empty, ties, ap_divisor, relevance_threshold, tie_policies=TIES) -> dict:
    """The evaluator's conventions, checked; returned as the ``settings`` of a result."""
    if isinstance(gain, Mapping):
        _gain_table(gain)
    else:
        check_choice(gain, "gain", GAINS)
    check_choice(empty, "empty", EMPTY_POLICIES)
    check_choice(ties, "ties", tie_policies)
    check_choice(ap_divisor, "ap_divisor", AP_DIVISORS)
    try:
        threshold = float(relevance_threshold)
    except (TypeError, ValueError):
        raise ValueError(f"relevance_threshold must be a number, got {relevance_threshold!r}") from None
    if not threshold > 0 or not np.isfinite(threshold):
        raise ValueError(f"relevance_threshold must be positive and finite (label >= threshold is relevant), "
                         f"got {relevance_threshold!r}")
    return {"relevance_threshold": threshold, "gain": dict(gain) if isinstance(gain, Mapping) else gain,
            "empty": empty, "ties": ties, "ap_divisor": ap_divisor}


def gains_of(labels: np.ndarray, gain, name: str = "labels") -> np.ndarray:
    """Per-row gains: 2**l - 1 ("exp"), l ("linear"), or a label -> gain mapping."""
    if isinstance(gain, Mapping):
        keys, values = _gain_table(gain)
        where = np.searchsorted(keys, labels)
        found = (where < len(keys)) & (keys[np.minimum(where, len(keys) - 1)] == labels)
        if not found.all():
            first = int(np.flatnonzero(~found)[0])
            raise ValueError(f"{name} has label {labels[first]:g} (row {first}), which the gain mapping does not "
                             f"cover (its labels: {keys.tolist()}); add a gain for it")
        return values[where]
    return np.exp2(labels) - 1.0 if gain == "exp" else np.asarray(labels, dtype=np.float64)  # read-only use


def _gain_table(gain: Mapping) -> tuple[np.ndarray, np.ndarray]:
    """(sorted labels, their gains) of a label -> gain mapping; labels and gains must be
    finite numbers, gains non-negative (a negative gain makes nDCG meaningless)."""
    try:
        pairs = sorted((float(k), float(v)) for k, v in gain.items())
    except (TypeError, ValueError):
        raise ValueError(f"the gain mapping must map numeric labels to numeric gains, e.g. {{0: 0, 1: 1, 2: 3}}; "
                         f"got {dict(gain)!r:.80}") from None
    keys = np.array([k for k, _ in pairs], dtype=np.float64)
    values = np.array([v for _, v in pairs], dtype=np.float64)
    if not (np.all(np.isfinite(values)) and np.all(np.isfinite(keys))) or (values < 0).any():
        raise ValueError(f"the gain mapping must map labels to finite, non-negative gains, got {dict(gain)!r:.80}")
    return keys, values


def check_max_grade(max_grade, labels: np.ndarray):
    """``max_grade`` of ERR and graded RBP: None, or a finite number at least the largest label."""
    if max_grade is None:
        return None
    if isinstance(max_grade, bool) or not isinstance(max_grade, (int, float, np.integer, np.floating)):
        raise TypeError(f"max_grade must be a number (the top grade of the relevance scale) or None, "
                        f"got {max_grade!r:.40}")
    top = float(labels.max()) if len(labels) else 0.0
    if not np.isfinite(max_grade) or max_grade < top or max_grade <= 0:
        raise ValueError(f"max_grade must be a positive finite number at least the largest label ({top:g}), "
                         f"got {max_grade!r}; leave it None to use the largest label")
    return float(max_grade)


def evaluate_sorted(specs, scores, labels, row_gains, row_judged, starts, n_ranked, qids, settings, *,
                    max_grade=None, extra_settings=None, keys=None, ties_code=None) -> EvaluationResult:
    """The evaluator on rows already grouped by list (list i is rows ``starts[i]:starts[i+1]``,
    its first ``n_ranked[i]`` ranked by score, the rest judged items the run did not rank;
    ``row_judged`` empty: every row judged).
    ``keys`` and ``ties_code``: a kernel tie policy other than the settings' (``TIES_KEY``)."""
    empty = settings["empty"]
    threshold = settings["relevance_threshold"]
    if max_grade is None:
        max_grade = float(labels.max()) if len(labels) else 0.0
    top = gains_of(np.array([float(max_grade)]), settings["gain"], "max_grade")[0]
    values, n_rel = _metric_values(specs, scores, labels, np.empty(0) if keys is None else keys,
                                   row_gains, row_judged, starts, np.asarray(n_ranked, dtype=np.int64), threshold,
                                   TIES[settings["ties"]] if ties_code is None else ties_code,
                                   AP_DIVISORS[settings["ap_divisor"]], float(top))
    names = [str(s) for s in specs]
    empty_rows = n_rel == 0
    if empty == "skip":
        keep = ~empty_rows
    else:
        keep = np.ones(len(qids), dtype=bool)
        fill = 0.0 if empty == "zero" else 1.0
        undefined = np.isnan(values)
        if undefined.any():
            if not np.all(empty_rows[np.any(undefined, axis=1)]):  # pragma: no cover - kernel invariant
                raise RuntimeError("a metric was undefined on a list with relevant items")
            values = np.where(undefined, fill, values)
    table = pd.DataFrame(values[keep], columns=names, index=pd.Index(qids[keep], name="qid"))
    table["n_items"] = np.asarray(n_ranked)[keep]
    table["n_relevant"] = n_rel[keep].astype(np.int64)
    return EvaluationResult(
        per_query=table,
        metrics=tuple(names),
        settings={**settings, **({"max_grade": float(max_grade)} if any(s.record.top_grade for s in specs) else {}),
                  **(extra_settings or {})},
        n_empty=int(empty_rows.sum()),
        skipped_qids=qids[~keep],
    )


def _metric_values(specs, scores, labels, keys, row_gains, row_judged, starts, n_ranked, threshold, ties,
                   ap_divisor, top_gain):
    """(values[list, metric], relevant items per list): gbrank's own metrics in one parallel
    pass over the lists, each metric registered with its own kernel (``Metric.kernel``) in a
    pass of its own."""
    values = np.empty((len(starts) - 1, len(specs)))
    own = [i for i, s in enumerate(specs) if s.code != EXTERNAL]
    if own:
        values[:, own], n_rel = evaluate_lists(
            scores, labels, keys, row_gains, row_judged, starts, n_ranked,
            np.array([specs[i].code for i in own], dtype=np.int64),
            np.array([specs[i].k for i in own], dtype=np.int64),
            np.array([specs[i].p for i in own], dtype=np.float64),
            float(threshold), int(ties), int(ap_divisor), float(top_gain),  # one cached specialisation
        )
    for i, s in enumerate(specs):
        if s.code == EXTERNAL:
            values[:, i] = evaluate_lists_with(s.record.kernel, scores, labels, keys, row_gains, row_judged, starts,
                                               n_ranked, s.k, s.p, threshold, ties)
    if not own:
        n_rel = np.add.reduceat((labels >= threshold).astype(np.float64), starts[:-1]) if len(starts) > 1 \
            else np.empty(0)
    return values, n_rel


def parse_metrics(metrics) -> list[MetricSpec]:
    """Parsed, distinct metric names; a code no kernel computes is refused here, before the
    parallel loop."""
    if isinstance(metrics, (str, MetricSpec)):
        metrics = [metrics]
    if not isinstance(metrics, (list, tuple)) and not hasattr(metrics, "__iter__"):
        raise TypeError(f"metrics must be a metric name or a list of them, e.g. ['ndcg@10', 'ap'], "
                        f"got {type(metrics).__name__} {metrics!r:.40}")
    specs = [parse_metric(m) for m in metrics]
    for s in specs:
        if s.code != EXTERNAL and s.code not in KERNEL_CODES:
            raise ValueError(f"metric {str(s)!r} has kernel code {s.code}, which gbrank's kernels do not "
                             "compute; register it with code=EXTERNAL and its own kernel")
    if not specs:
        raise ValueError("no metric was requested; pass e.g. metrics=['ndcg@10', 'ap']")
    names = [str(s) for s in specs]
    if len(set(names)) != len(names):
        raise ValueError(f"a metric is requested twice (aliases count as their metric): {names}")
    return specs
