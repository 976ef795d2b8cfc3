"""The k best items of each user: a partial sort with the answer of a stable full sort."""

from __future__ import annotations

import numpy as np


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Column indices of the ``k`` largest scores of each row, best first.

    Ties are broken by the lower column (the order of a stable full sort of ``-scores``).
    ``np.argpartition`` selects k candidates in linear time and only those are sorted; a
    row whose k-th largest score is tied with a score outside the k (where the partition's
    choice among equals is arbitrary) is sorted in full instead, so the answer is always
    that of the full stable sort.

    Examples
    --------
    >>> top_k(np.array([[0.1, 0.9, 0.5, 0.9], [3.0, 2.0, 1.0, 0.0]]), 2).tolist()
    [[1, 3], [0, 1]]
    """
    n = scores.shape[1]
    if k >= n:
        return np.argsort(-scores, axis=1, kind="stable")[:, :k]
    part = np.argpartition(scores, n - k, axis=1)[:, n - k:]  # the k largest, in no order
    values = np.take_along_axis(scores, part, axis=1)
    order = np.lexsort((part, -values), axis=1)
    top = np.take_along_axis(part, order, axis=1)
    kth = np.take_along_axis(values, order[:, -1:], axis=1)
    tied = np.flatnonzero(np.count_nonzero(scores >= kth, axis=1) > k)  # ties across the boundary
    if len(tied):
        top[tied] = np.argsort(-scores[tied], axis=1, kind="stable")[:, :k]
    return top
