"""Numba helpers of run evaluation: rows grouped by query in O(n), duplicates per query."""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True)
def group_order(codes, n_groups):
    """Stable counting sort: the row order that groups ``codes`` (0 .. n_groups - 1)
    together, rows of a group in their input order; and the groups' start offsets."""
    counts = np.zeros(n_groups + 1, dtype=np.int64)
    for c in codes:
        counts[c + 1] += 1
    for g in range(n_groups):
        counts[g + 1] += counts[g]
    starts = counts.copy()
    order = np.empty(codes.shape[0], dtype=np.int64)
    for i in range(codes.shape[0]):
        c = codes[i]
        order[counts[c]] = i
        counts[c] += 1
    return order, starts


@njit(parallel=True, cache=True)
def first_duplicate(group_codes, item_codes, n_groups):
    """The smallest row index whose (group, item) pair appeared in an earlier row, or -1."""
    order, starts = group_order(group_codes, n_groups)
    found = np.full(n_groups, -1, dtype=np.int64)
    for g in prange(n_groups):
        rows = order[starts[g]:starts[g + 1]]
        if rows.shape[0] < 2:
            continue
        by_item = rows[np.argsort(item_codes[rows], kind="mergesort")]
        best = -1
        for r in range(1, by_item.shape[0]):
            if item_codes[by_item[r]] == item_codes[by_item[r - 1]]:
                later = max(by_item[r], by_item[r - 1])
                if best < 0 or later < best:
                    best = later
        found[g] = best
    out = -1
    for g in range(n_groups):
        if found[g] >= 0 and (out < 0 or found[g] < out):
            out = found[g]
    return out


@njit(parallel=True, cache=True)
def top_of_each_group(order, starts, scores, keys, depth):
    """Rows kept by a depth cut: in each group (rows ``order[starts[g]:starts[g+1]]``) the
    first ``depth`` by score descending, then ``keys`` descending (trec_eval's order)."""
    keep = np.zeros(scores.shape[0], dtype=np.bool_)
    for g in prange(starts.shape[0] - 1):
        rows = order[starts[g]:starts[g + 1]]
        by_key = rows[np.argsort(-keys[rows], kind="mergesort")]
        ranked = by_key[np.argsort(-scores[by_key], kind="mergesort")]
        for r in range(min(depth, ranked.shape[0])):
            keep[ranked[r]] = True
    return keep
