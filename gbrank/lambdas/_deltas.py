"""Swap deltas |dM_ij| of one list, O(1) per pair after an O(n) preparation.

The list is in rank order (position 0 is the top).  ``prepare`` fills five rows of
per-position state ``a, w, r, b, v`` and returns the list's normaliser.  For nDCG,
nRBP and AP the delta of swapping positions i < j is one *linear form*::

    |dM_ij| = |(a_i - a_j)(w_i - w_j) + (r_i - r_j)(b_j - b_i) + r_j (1 - r_i)(v_i - v_j)| * norm

- nDCG: a = gain(l), w = 1/log2(r + 2), norm = 1 / IDCG (IDCG@k under truncation, as
  LightGBM and XGBoost);
- nRBP(p): a = rel, w = p**r, norm = (1 - p) / (1 - p**R)  (the swap moves each item's
  gain to the other's position, so the change factors like nDCG's; the form
  |rel_i p**i - rel_j p**j| sometimes written for it is not the swap delta);
- AP (binary at the threshold): r = rel, b = C[r]/(r+1) - S[r], v = 1/(r+1), norm = 1/R,
  with C the prefix count of relevant items and S the prefix sum of 1/(rank) over them:
  a relevant item moving down from i to j changes R * AP by
  t = C[j]/(j+1) - C[i]/(i+1) - (S[j] - S[i]) = b_j - b_i, one moving up by
  -t + 1/(i+1) - 1/(j+1).
- RR is not linear: it changes only for pairs that move the first relevant item
  (``rr_delta``).
- ERR (the cascade, Chapelle et al. 2009) with x = gain / (top_gain + 1), the survival
  P_r = prod_{q<r} (1 - x_q), u_r = P_r / (r + 1) and D_r the sum of the ERR terms
  x_q u_q over q <= r: swapping positions i < j changes only the terms i..j (those below j
  see the same product), and

      dERR_ij = (x_j - x_i) (u_i - (D_j - D_i + (1 - x_j) u_j) / (1 - x_i))

  (rows a = x, w = u, b = D; ``cascade_delta``).  ``p`` carries top_gain, the gain of the
  top grade of the scale; x < 1 because no label is above it.

Which form a metric uses is its record's ``delta`` field (``gbrank.metrics.METRICS``):
"product" (nDCG, nRBP), "prefix" (AP) or "first" (RR).  ``prepare`` and ``delta`` raise
on a code or form they do not know, so a new metric can never fall into another's path.
Adding a metric-based objective is a branch in ``prepare`` (and, if its delta is not of
one of these forms, its own delta function and form) plus the ``delta`` field of its
record: see CONTRIBUTING.md.  ``gbrank/torch/_deltas.py`` is the torch twin of this file.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..metrics import (AP_DIV_R, METRICS, average_precision, dcg, discount, gain, ideal_dcg, nrbp,
                       reciprocal_rank, with_delta)
from .._jit import FAST, STRICT, jit_variant

NDCG, AP, RR, NRBP, ERR = (METRICS[n].code for n in ("ndcg", "ap", "rr", "nrbp", "err"))
#: swap-delta form codes of the kernels, by the record's ``delta`` field
PRODUCT, PREFIX, FIRST, CASCADE = 0, 1, 2, 3
FORMS = {"product": PRODUCT, "prefix": PREFIX, "first": FIRST, "cascade": CASCADE}
#: metric name -> kernel code, for the metrics that have a swap delta (from the record)
DELTA_METRICS = {name: rec.code for name, rec in with_delta().items()}
N_ROWS = 5  # rows of per-position state: a, w, r, b, v
#: in a kernel variant's key: the metric (form) is read from the argument at run time
ANY = -1


def delta_codes(name: str) -> tuple[int, int]:
    """(metric code, form code) of a metric with a swap delta; ValueError otherwise."""
    rec = with_delta().get(name)
    if rec is None:
        raise ValueError(f"metric {name!r} has no LambdaRank swap delta; objectives exist for "
                         f"{sorted(with_delta())}")
    return rec.code, FORMS[rec.delta]


def _prepare_template(metric_code):
    """``prepare`` for the metric code ``metric_code`` only (``ANY``: every code): the other
    metrics' branches are pruned before typing (``gbrank._jit.jit_variant``)."""
    ON_NDCG, ON_ERR, ON_NRBP, ON_AP, ON_RR = (metric_code in (ANY, c) for c in (NDCG, ERR, NRBP, AP, RR))
    ON_BINARY = ON_NRBP or ON_AP or ON_RR

    def prepare(metric, lab, gain_code, threshold, p, trunc, aux):
        """Fill ``aux`` (N_ROWS x n) for the list whose labels in rank order are ``lab``.

        Returns ``(norm, first, second)``: the normaliser (0 when the metric is undefined,
        so every delta is 0) and the positions of the first and second relevant items (n
        when absent), which RR needs.
        """
        n = lab.shape[0]
        aux[:, :n] = 0.0
        first = n
        second = n
        if ON_NDCG and metric == NDCG:
            for r in range(n):
                aux[0, r] = gain(lab[r], gain_code)
                aux[1, r] = discount(r)
            idcg = ideal_dcg(aux[0, :n], trunc)
            return (1.0 / idcg if idcg > 0.0 else 0.0), first, second
        if ON_ERR and metric == ERR:  # p is the gain of the top grade
            scale = 1.0 / (p + 1.0)
            survive = 1.0
            done = 0.0
            for r in range(n):
                x = gain(lab[r], gain_code) * scale
                u = survive / (r + 1.0)
                done += x * u
                aux[0, r] = x
                aux[1, r] = u
                aux[3, r] = done
                survive *= 1.0 - x
            return (1.0 if done > 0.0 else 0.0), first, second
        if ON_BINARY and (metric == NRBP or metric == AP or metric == RR):
            n_rel = 0.0
            for r in range(n):
                rel = 1.0 if lab[r] >= threshold else 0.0
                if rel > 0.0:
                    if first == n:
                        first = r
                    elif second == n:
                        second = r
                n_rel += rel
                if metric == NRBP:
                    aux[0, r] = rel
                else:
                    aux[2, r] = rel
            if n_rel == 0.0:
                return 0.0, first, second
            if ON_NRBP and metric == NRBP:
                pw = 1.0
                for r in range(n):
                    aux[1, r] = pw
                    pw *= p
                return (1.0 - p) / (1.0 - p**n_rel), first, second
            if ON_AP and metric == AP:
                c = 0.0
                s = 0.0
                for r in range(n):
                    inv = 1.0 / (r + 1.0)
                    c += aux[2, r]
                    s += aux[2, r] * inv
                    aux[3, r] = c * inv - s
                    aux[4, r] = inv
                return 1.0 / n_rel, first, second
            return 1.0, first, second  # RR
        raise ValueError("prepare: this metric code has no swap delta")

    return prepare


prepare = njit(cache=True)(_prepare_template(ANY))


@njit(cache=True, **STRICT)
def linear_delta(aux, i, j, norm, product):
    """|dM| of swapping positions i < j for nDCG, nRBP and AP (module docstring).
    ``product``: True for nDCG and nRBP (rows r, b, v are zero: only the first term),
    False for AP (rows a, w are zero: only the other two)."""
    if product:
        return abs((aux[0, i] - aux[0, j]) * (aux[1, i] - aux[1, j])) * norm
    ri = aux[2, i]
    rj = aux[2, j]
    return abs((ri - rj) * (aux[3, j] - aux[3, i]) + rj * (1.0 - ri) * (aux[4, i] - aux[4, j])) * norm


#: ``linear_delta`` under the fast-math flags, for the vectorised pair loops (``_kernels._linear_loop``)
linear_delta_fast = jit_variant(linear_delta.py_func, "fast", FAST)


@njit(cache=True)
def rr_delta(aux, i, j, norm, first, second):
    """|dRR| of swapping positions i < j: non-zero only when the first relevant item moves."""
    ri = aux[2, i]
    rj = aux[2, j]
    if ri == rj or norm == 0.0:
        return 0.0
    if ri > 0.0:
        if i != first:
            return 0.0
        new_first = second if second < j else j
        return (1.0 / (i + 1.0) - 1.0 / (new_first + 1.0)) * norm
    if i < first:
        return (1.0 / (i + 1.0) - 1.0 / (first + 1.0)) * norm
    return 0.0


@njit(cache=True)
def cascade_delta(aux, i, j, norm):
    """|dERR| of swapping positions i < j (module docstring; rows x, u, D)."""
    xi = aux[0, i]
    xj = aux[0, j]
    d = (xj - xi) * (aux[1, i] - (aux[3, j] - aux[3, i] + (1.0 - xj) * aux[1, j]) / (1.0 - xi))
    return abs(d) * norm


def _delta_template(form_code):
    """``delta`` for the form code ``form_code`` only (``ANY``: every form)."""
    ON_FIRST, ON_PRODUCT, ON_PREFIX, ON_CASCADE = (form_code in (ANY, f) for f in (FIRST, PRODUCT, PREFIX, CASCADE))

    def delta(form, i, j, aux, norm, first, second):
        """|dM| for swapping rank positions i < j (0-based) of a list prepared by ``prepare``;
        ``form`` is the metric's form code (``FORMS``)."""
        if ON_FIRST and form == FIRST:
            return rr_delta(aux, i, j, norm, first, second)
        if ON_PRODUCT and form == PRODUCT:
            return linear_delta(aux, i, j, norm, True)
        if ON_PREFIX and form == PREFIX:
            return linear_delta(aux, i, j, norm, False)
        if ON_CASCADE and form == CASCADE:
            return cascade_delta(aux, i, j, norm)
        raise ValueError("delta: unknown swap-delta form")

    return delta


delta = njit(cache=True)(_delta_template(ANY))


def _list_value_template(metric_code):
    """``list_value`` for the metric code ``metric_code`` only (``ANY``: every code)."""
    ON_NDCG, ON_NRBP, ON_AP, ON_RR, ON_ERR = (metric_code in (ANY, c) for c in (NDCG, NRBP, AP, RR, ERR))

    def list_value(metric, aux, norm, p):
        """The metric of the prepared list in its current order, by the evaluator's kernels:
        the value the swap deltas change (for nDCG: whole-list DCG / IDCG@trunc)."""
        n = aux.shape[1]
        fixed = np.arange(n + 1)
        if norm == 0.0:
            return 0.0
        if ON_NDCG and metric == NDCG:
            return dcg(aux[0], fixed, 0) * norm
        if ON_NRBP and metric == NRBP:
            return nrbp(aux[0], fixed, p)
        if ON_AP and metric == AP:
            return average_precision(aux[2], fixed, 0, AP_DIV_R)
        if ON_RR and metric == RR:
            return reciprocal_rank(aux[2], fixed, 0)
        if ON_ERR and metric == ERR:
            return aux[3, n - 1] if n else 0.0
        raise ValueError("list_value: this metric code has no swap delta")

    return list_value


list_value = njit(cache=True)(_list_value_template(ANY))


def metric_kernels(metric_code: int, tag: str):
    """(prepare, list_value) compiled for one metric only: uncached variants named with
    ``tag``, compiled into the kernel that calls them (``_kernels.gradient_kernel``)."""
    return jit_variant(_prepare_template(metric_code), tag, {}), jit_variant(_list_value_template(metric_code), tag, {})


def form_delta(form_code: int, tag: str):
    """``delta`` compiled for one swap-delta form only: an uncached variant named with ``tag``
    (``_kernels.sparse_kernel``, ``_kernels.gradient_kernel``)."""
    return jit_variant(_delta_template(form_code), tag, {})
