"""Swap deltas |dM_ij| of one list, O(1) per pair after an O(n) preparation.

The list is in rank order (position 0 is the top).  ``prepare`` fills three rows of
per-position state for the metric and returns the list's normaliser; ``delta``
then gives |M(after swapping positions i < j) - M(now)|:

- nDCG: |gain_i - gain_j| * |1/log2(i+2) - 1/log2(j+2)| / IDCG (IDCG@k under truncation,
  as LightGBM and XGBoost);
- AP (binary at the threshold): from the prefix counts C[r] of relevant items and the
  prefix sums S[r] of 1/(rank) over relevant items (REFERENCE.md section 2);
- RR: non-zero only for pairs that move the first relevant item;
- nRBP(p): (1 - p) |rel_i - rel_j| |p**i - p**j| / (1 - p**R).  (The swap moves each
  item's gain to the other's position, so the change factors like nDCG's; the form
  |rel_i p**i - rel_j p**j| sometimes written for it is not the swap delta and fails
  the brute-force test.)

Adding a metric is one branch in each of the two functions plus a registry entry.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..metrics._kernels import discount, gain
from ..metrics._registry import AP, NDCG, NRBP, RR

# metric name -> kernel code, for the metrics that have a swap delta
DELTA_METRICS = {"ndcg": NDCG, "ap": AP, "rr": RR, "nrbp": NRBP}


@njit(cache=True)
def prepare(metric, lab, gain_code, threshold, p, trunc, aux):
    """Fill ``aux`` (3 x n) for the list whose labels in rank order are ``lab``.

    Returns ``(norm, first, second)``: the factor that turns a raw delta into a
    normalised one (0 when the metric is undefined, so every delta is 0), and for RR
    the positions of the first and second relevant items (n when absent).
    """
    n = lab.shape[0]
    first = n
    second = n
    if metric == NDCG:
        for r in range(n):
            aux[0, r] = gain(lab[r], gain_code)
            aux[1, r] = discount(r)
        # IDCG@trunc: the ideal order sorts the gains
        ideal = -np.sort(-aux[0, :n])
        kk = n if trunc <= 0 or trunc > n else trunc
        idcg = 0.0
        for r in range(kk):
            idcg += ideal[r] * aux[1, r]
        return (1.0 / idcg if idcg > 0.0 else 0.0), first, second
    n_rel = 0.0
    for r in range(n):
        rel = 1.0 if lab[r] >= threshold else 0.0
        aux[0, r] = rel
        if rel > 0.0:
            if first == n:
                first = r
            elif second == n:
                second = r
        n_rel += rel
    if n_rel == 0.0:
        return 0.0, first, second
    if metric == AP:
        c = 0.0
        s = 0.0
        for r in range(n):
            c += aux[0, r]
            s += aux[0, r] / (r + 1.0)
            aux[1, r] = c
            aux[2, r] = s
        return 1.0 / n_rel, first, second
    if metric == NRBP:
        pw = 1.0
        for r in range(n):
            aux[1, r] = pw
            pw *= p
        return (1.0 - p) / (1.0 - p**n_rel), first, second
    return 1.0, first, second  # RR


@njit(cache=True)
def delta(metric, i, j, aux, norm, first, second):
    """|dM| for swapping rank positions i < j (0-based) of a prepared list."""
    if metric == NDCG:
        return abs(aux[0, i] - aux[0, j]) * (aux[1, i] - aux[1, j]) * norm
    ri = aux[0, i]
    rj = aux[0, j]
    if ri == rj or norm == 0.0:
        return 0.0
    if metric == AP:
        if ri > 0.0:  # a relevant item moves down from i to j
            d = aux[1, j] / (j + 1.0) - aux[1, i] / (i + 1.0) - (aux[2, j] - aux[2, i])
        else:  # a relevant item moves up from j to i
            d = ((aux[1, i] + 1.0) / (i + 1.0) - aux[1, j] / (j + 1.0)
                 + aux[2, j] - 1.0 / (j + 1.0) - aux[2, i])
        return abs(d) * norm
    if metric == NRBP:
        return abs(ri - rj) * (aux[1, i] - aux[1, j]) * norm
    # RR
    if ri > 0.0:
        if i != first:
            return 0.0
        new_first = second if second < j else j
        return 1.0 / (i + 1.0) - 1.0 / (new_first + 1.0)
    if i < first:
        return 1.0 / (i + 1.0) - 1.0 / (first + 1.0)
    return 0.0
