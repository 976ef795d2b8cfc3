"""Evaluation protocols of the recommendation path, through :func:`gbrank.evaluate`.

* ``"sampled"`` (the paper's): each user's held-out positives ranked among ``nsr`` times
  as many sampled negatives;
* ``"full"``: each user's held-out positives ranked among the whole catalogue minus the
  items the user interacted with in the training data.

Sampled metrics are optimistic and can even reorder systems (Krichene & Rendle 2020);
every result says which protocol produced it in ``settings["protocol"]``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ..evaluation import EvaluationResult, evaluate
from ..interactions import csr_from, csr_take

PROTOCOLS = ("full", "sampled")


def label_result(result: EvaluationResult, protocol: str, **extra) -> EvaluationResult:
    """A copy of ``result`` whose ``settings`` name the protocol (and any extra counts)."""
    return dataclasses.replace(result, settings={**result.settings, "protocol": protocol, **extra})


def evaluate_sampled(scores: np.ndarray, labels: np.ndarray, qid: np.ndarray, metrics) -> EvaluationResult:
    """Metrics of explicit candidate lists (one row per (user, item) candidate)."""
    res = evaluate(labels, scores, qid, metrics, relevance_threshold=1, empty="zero")
    return label_result(res, "sampled")


def evaluate_full(score_rows, users: np.ndarray, positives, exclude, n_items: int, metrics,
                  qid_names: np.ndarray | None = None, max_entries: int = 1 << 22) -> EvaluationResult:
    """Metrics of full-catalogue lists, computed in chunks of users.

    Parameters
    ----------
    score_rows : callable
        ``score_rows(user_codes) -> numpy array [len(user_codes), n_items]``.
    users : numpy.ndarray
        User codes to evaluate (those with at least one held-out positive).
    positives, exclude : (indptr, items)
        CSRs of the held-out positives (label 1) and of the items left out of each list.
    """
    step = max(1, max_entries // max(n_items, 1))
    parts, empty, skipped = [], 0, []
    result = None
    for start in range(0, len(users), step):
        rows = users[start:start + step]
        scores = np.asarray(score_rows(rows), dtype=np.float64)
        labels = np.zeros_like(scores)
        lp, ip = csr_take(positives[0], positives[1], rows)
        labels[lp, ip] = 1.0
        keep = np.ones_like(scores, dtype=bool)
        le, ie = csr_take(exclude[0], exclude[1], rows)
        keep[le, ie] = False
        keep[lp, ip] = True  # a held-out positive is never excluded
        names = rows if qid_names is None else qid_names[rows]
        qid = np.broadcast_to(np.asarray(names)[:, None], scores.shape)[keep]
        result = evaluate(labels[keep], scores[keep], qid, metrics, relevance_threshold=1, empty="zero")
        parts.append(result.per_query)
        empty += result.n_empty
        skipped.append(result.skipped_qids)
    if result is None:
        raise ValueError("no user has a held-out positive to evaluate")
    merged = dataclasses.replace(result, per_query=pd.concat(parts), n_empty=empty,
                                 skipped_qids=np.concatenate(skipped))
    return label_result(merged, "full")


def evaluate_recommender(model, split, *, protocol: str = "sampled",
                         metrics=("ndcg", "ap", "rr", "nrbp@0.8", "nrbp@0.9", "nrbp@0.95")) -> EvaluationResult:
    """Evaluate a fitted :class:`MFRanker` on the test part of an :class:`InteractionSplit`.

    Parameters
    ----------
    model : MFRanker
        Fitted on ``split.X_train, split.y_train``.
    split : InteractionSplit
        From :func:`split_interactions`.
    protocol : {"sampled", "full"}
        ``"sampled"``: the split's test lists (held-out positives + ``nsr`` x sampled
        negatives, the paper's protocol).  ``"full"``: held-out positives ranked among all
        the model's items minus each user's training items.
    metrics : sequence of str
        Names for :func:`gbrank.evaluate`; lists without a relevant item score 0
        (``empty="zero"``), ties are averaged.

    Returns
    -------
    gbrank.EvaluationResult
        Per-user table; ``settings["protocol"]`` says which protocol, and
        ``settings["n_unknown_positives"]`` how many held-out positives were dropped because
        their item never occurs in the training data (the model cannot score it).
    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {list(PROTOCOLS)}, got {protocol!r}")
    model._check_fitted()
    if protocol == "sampled":
        users, items, _ = model._codes(split.X_test, allow_unknown=True)
        known = (users >= 0) & (items >= 0)
        labels = (split.y_test >= split.settings["relevance_threshold"]).astype(np.float64)
        scores = model._score_codes(users[known], items[known])
        res = evaluate_sampled(scores, labels[known], split.X_test[known, 0], metrics)
        return label_result(res, "sampled", n_unknown_positives=int((~known & (labels > 0)).sum()))
    users, items, _ = model._codes(split.test_positives, allow_unknown=True)
    known = (users >= 0) & (items >= 0)

    positives = csr_from(users[known], items[known], model.n_users_)
    with_pos = np.flatnonzero(np.diff(positives[0]) > 0)
    res = evaluate_full(model._score_user_rows, with_pos, positives, model._seen(), model.n_items_,
                        metrics, qid_names=model.users_)
    return label_result(res, "full", n_unknown_positives=int((~known).sum()))


