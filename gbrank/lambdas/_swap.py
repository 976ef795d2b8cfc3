"""``swap_deltas``: the full (n, n) matrix of |dM| for one list (teaching and tests)."""

from __future__ import annotations

import numpy as np
from numba import njit

from .._validation import as_1d_float, check_choice, check_labels
from ..metrics import GAINS
from ._deltas import DELTA_METRICS, N_ROWS, delta, prepare
from ._objective import parse_objective_metric


@njit(cache=True)
def _swap_matrix(scores, labels, metric, p, trunc, gain_code, threshold):
    n = scores.shape[0]
    out = np.zeros((n, n))
    order = np.argsort(-scores, kind="mergesort")
    lab = labels[order]
    aux = np.empty((N_ROWS, n))
    norm, first, second = prepare(metric, lab, gain_code, threshold, p, trunc, aux)
    for i in range(n):
        for j in range(i + 1, n):
            d = delta(metric, i, j, aux, norm, first, second)
            out[order[i], order[j]] = d
            out[order[j], order[i]] = d
    return out


def swap_deltas(metric, scores, labels, *, p=None, truncation=None, relevance_threshold=1, gain="exp"):
    """|M(after items i and j swap their current ranks) - M(now)| for every pair of one list.

    The current ranking is a stable descending sort of ``scores`` (input order breaks
    ties).  Entry ``[i, j]`` refers to rows i and j of the input.  ``truncation`` only
    changes nDCG's normaliser (IDCG@k, as the libraries' lambdarank); the pair selection
    it implies in :class:`LambdaObjective` is not applied here.

    Examples
    --------
    >>> d = swap_deltas("rr", [3.0, 2.0, 1.0], [0, 0, 1])
    >>> float(d[0, 2]), float(d[1, 2]), float(d[0, 1])
    (0.6666666666666666, 0.16666666666666666, 0.0)
    """
    name, p, trunc = parse_objective_metric(metric, p, truncation)
    check_choice(gain, "gain", GAINS)
    s = as_1d_float(scores, "scores")
    y = as_1d_float(labels, "labels")
    if len(s) != len(y):
        raise ValueError(f"scores and labels must have one entry per item, got {len(s)} and {len(y)}")
    if len(s) == 0:
        raise ValueError("the list is empty")
    check_labels(y, gain)
    threshold = float(relevance_threshold)
    if not threshold > 0:
        raise ValueError(f"relevance_threshold must be positive, got {relevance_threshold!r}")
    return _swap_matrix(s, y, DELTA_METRICS[name], p or 0.0, trunc or 0, GAINS[gain], threshold)
