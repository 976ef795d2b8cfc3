"""Swap deltas |dM_ij| of a padded batch of lists: the torch twin of ``gbrank/lambdas/_deltas.py``.

Same per-position state, same algebra and same names as the numba kernels, vectorised over
the lists of a ``[B, L]`` batch instead of looped over them.  ``prepare`` takes each list in
rank order (position 0 is the top, padded entries after the real ones), fills five rows of
per-position state ``a, w, r, b, v`` and returns the list's normaliser ``norm`` (and, for
RR, the positions of the first and second relevant items).  For nDCG, nRBP and AP the delta
of swapping the items at positions i and j (i above j) is one *linear form*::

    |dM_ij| = |(a_i - a_j)(w_i - w_j) + (r_i - r_j)(b_j - b_i) + r_j (1 - r_i)(v_i - v_j)| * norm

- nDCG: a = gain(l), w = 1/log2(r + 2), norm = 1 / IDCG (of the whole list, or cut at
  ``truncation`` as the boosting objectives' IDCG@k; the torch LambdaRank loss has none);
- nRBP(p): a = rel, w = p**r, norm = (1 - p) / (1 - p**R);
- AP (binary at the threshold): r = rel, b = C[r]/(r+1) - S[r], v = 1/(r+1), norm = 1/R,
  with C the prefix count of relevant items and S the prefix sum of 1/(rank) over them;
- RR is not linear: it changes only for pairs that move the first relevant item
  (``rr_delta``);
- ERR: rows x = gain / (top_gain + 1), u = P_r / (r + 1) with P_r the cascade's survival,
  D the prefix sum of the ERR terms (``cascade_delta``); ``p`` carries top_gain, and without
  it each list's largest gain is its top grade (the numba objective takes the largest label
  of all the data it is given).

The derivations are in the numba file.  Which form a metric uses is its record's ``delta``
field (``gbrank.metrics.METRICS``); ``prepare`` and ``delta`` raise on a metric or form they
do not know.  What differs from the numba kernels is layout, not algebra:

- ``i`` and ``j`` are tensors of rank positions that broadcast to the pairs' shape (e.g.
  ``[B, P, 1]`` and ``[B, 1, Q]``), in either order, where the numba loops take i < j.  The
  form is symmetric in i and j except its last term, which for binary r is
  ``relu((r_j - r_i)(v_i - v_j))`` whichever of the two is above (v decreases down the list);
- the normaliser is multiplied into the per-position rows (w; b and v) before the pairs are
  formed, which saves one pass over the ``[B, P, Q]`` block;
- ``first`` and ``second`` are ``L`` (the padded width) when absent, where numba uses n,
  and are computed for RR only (the only form that reads them).

Everything here runs without gradient: the deltas are weights.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from ..metrics import METRICS, with_delta
from ._listwise import gains

#: the kernel codes of the families prepared here (numba's ``prepare`` dispatches on the same codes)
NDCG, AP, RR, NRBP, ERR = (METRICS[n].code for n in ("ndcg", "ap", "rr", "nrbp", "err"))
#: the swap-delta forms (the record's ``delta`` field; numba's ``FORMS``)
FORMS = ("product", "prefix", "first", "cascade")
N_ROWS = 5  # rows of per-position state: a, w, r, b, v


class Prepared(NamedTuple):
    """The state ``prepare`` returns: ``aux [N_ROWS, B, L]`` by rank position, and per list
    ``norm [B]`` (0 where the metric is undefined) and ``first``, ``second [B]`` (long)."""

    aux: torch.Tensor
    norm: torch.Tensor
    first: torch.Tensor
    second: torch.Tensor


def delta_form(name: str) -> str:
    """The swap-delta form of a metric (its record's ``delta``); ValueError for one without."""
    rec = with_delta().get(name)
    if rec is None:
        raise ValueError(f"metric {name!r} has no LambdaRank swap delta; lambda losses exist for "
                         f"{sorted(with_delta())}")
    return rec.delta


def in_rank_order(pos: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor):
    """``(lab, valid)``: the labels and the mask of a batch laid out by rank position ``pos``."""
    lab = torch.empty_like(labels).scatter_(1, pos, labels)  # pos is a permutation of each row
    valid = torch.empty_like(mask).scatter_(1, pos, mask)
    return lab, valid


@torch.no_grad()
def prepare(metric: str, lab: torch.Tensor, valid: torch.Tensor, *, gain: str = "exp",
            relevance_threshold: float = 1.0, p: float | None = None, truncation: int = 0) -> Prepared:
    """Per-position state of the lists whose labels in rank order are ``lab [B, L]``.

    ``valid`` marks the real positions (the first n of each row); ``truncation`` > 0 cuts
    nDCG's IDCG at that depth (the numba ``prepare``'s ``trunc``; 0: the whole list).  Returns a
    :class:`Prepared`: rows ``a, w, r, b, v`` (zero where a metric does not use them), the
    normaliser, and for RR the positions of the first and second relevant items (``L`` when
    absent, and for the other metrics).  ``p`` is the record's kernel parameter
    (``Metric.kernel_parameter``); for a family on the top grade (ERR) None takes each list's
    own largest gain.  The branch is chosen by the record's kernel ``code``, as numba's.
    """
    delta_form(metric)
    code = METRICS[metric].code
    B, L = lab.shape
    kw = dict(dtype=lab.dtype, device=lab.device)
    aux = torch.zeros(N_ROWS, B, L, **kw)
    at = torch.arange(L, **kw)
    none = torch.full((B,), L, dtype=torch.long, device=lab.device)
    if code == NDCG:
        aux[0] = gains(lab, gain) * valid
        aux[1] = 1.0 / torch.log2(at + 2.0)
        ideal = torch.sort(aux[0], dim=1, descending=True).values * aux[1]
        idcg = (ideal[:, :truncation] if truncation > 0 else ideal).sum(dim=1)
        norm = torch.where(idcg > 0, 1.0 / torch.where(idcg > 0, idcg, 1.0), 0.0)
        return Prepared(aux, norm, none, none)
    if code == ERR:  # p is the top grade's gain; None: each list's largest gain
        g = gains(lab, gain) * valid
        top = g.amax(dim=1, keepdim=True) if p is None else torch.full((B, 1), float(p), **kw)
        x = g / (top + 1.0)
        survive = torch.cumprod(torch.cat([torch.ones(B, 1, **kw), 1.0 - x[:, :-1]], dim=1), dim=1)
        aux[0] = x
        aux[1] = survive / (at + 1.0)
        aux[3] = torch.cumsum(x * aux[1], dim=1)
        return Prepared(aux, (aux[3][:, -1] > 0).to(lab.dtype), none, none)
    if code not in (NRBP, AP, RR):
        raise ValueError(f"prepare: metric {metric!r} has a swap delta in the record but no torch preparation "
                         "here; add its branch (CONTRIBUTING.md)")
    rel = ((lab >= relevance_threshold) & valid).to(lab.dtype)
    n_rel = rel.sum(dim=1)
    some = n_rel > 0
    if code == NRBP:
        if p is None:
            raise ValueError(f"the {metric} swap delta needs a persistence p, e.g. 'lambda_{metric}@0.95'")
        aux[0] = rel
        aux[1] = torch.pow(torch.full((), float(p), **kw), at)
        norm = torch.where(some, (1.0 - p) / torch.where(some, 1.0 - p ** n_rel, 1.0), 0.0)
        return Prepared(aux, norm, none, none)
    aux[2] = rel
    count = torch.cumsum(rel, dim=1)
    if code == AP:
        inv = 1.0 / (at + 1.0)
        aux[3] = count * inv - torch.cumsum(rel * inv, dim=1)
        aux[4] = inv
        norm = torch.where(some, 1.0 / n_rel.clamp(min=1.0), 0.0)
        return Prepared(aux, norm, none, none)
    is_rel = rel > 0
    first = torch.where(is_rel & (count == 1), torch.arange(L, device=lab.device), L).amin(dim=1)
    second = torch.where(is_rel & (count == 2), torch.arange(L, device=lab.device), L).amin(dim=1)
    return Prepared(aux, some.to(lab.dtype), first, second)  # RR


def _at(row: torch.Tensor, i: torch.Tensor) -> torch.Tensor:
    """``row[b, i[b, ...]]``: the per-position values ``row [B, L]`` at rank positions ``i [B, ...]``."""
    return row.gather(1, i.reshape(i.shape[0], -1)).view(i.shape)


def linear_delta(aux: torch.Tensor, i: torch.Tensor, j: torch.Tensor, norm: torch.Tensor,
                 product: bool) -> torch.Tensor:
    """|dM| of swapping the items at positions i and j for nDCG, nRBP and AP (module docstring).
    ``product``: True for nDCG and nRBP (rows r, b, v are zero: only the first term),
    False for AP (rows a, w are zero: only the other two)."""
    n = norm[:, None]
    if product:
        a, w = aux[0], aux[1] * n
        return (_at(a, i) - _at(a, j)).mul_(_at(w, i) - _at(w, j)).abs_()
    r, b, v = aux[2], aux[3] * n, aux[4] * n
    s = _at(r, i) - _at(r, j)  # r_i - r_j, in {-1, 0, 1}
    # (r_i - r_j)(b_j - b_i) + r_j (1 - r_i)(v_i - v_j) with i above j, written for either order
    last = (_at(v, j) - _at(v, i)).mul_(s).relu_()
    return (_at(b, j) - _at(b, i)).mul_(s).add_(last).abs_()


def rr_delta(aux: torch.Tensor, i: torch.Tensor, j: torch.Tensor, norm: torch.Tensor, first: torch.Tensor,
             second: torch.Tensor) -> torch.Tensor:
    """|dRR| of swapping the items at positions i and j: non-zero only when the first
    relevant item moves.  The cases of the numba ``rr_delta``, read per position y of a
    non-relevant item (f, f2: positions of the first and second relevant items):

    - swapped with the first relevant item: |1/(min(y, f2) + 1) - 1/(f + 1)| (below f the
      second relevant item or y becomes first; above f, y does);
    - swapped with another relevant item: 1/(y + 1) - 1/(f + 1) when y < f, else 0;

    so a pair's delta is four products of per-position values.
    """
    r = aux[2]
    at = torch.arange(r.shape[1], dtype=r.dtype, device=r.device)
    f = first[:, None].to(r.dtype)
    other = (1.0 - r) * norm[:, None]  # non-relevant positions, scaled by the normaliser
    to_first = (1.0 / (torch.minimum(at, second[:, None].to(r.dtype)) + 1.0) - 1.0 / (f + 1.0)).abs_().mul_(other)
    to_other = torch.where(at < f, 1.0 / (at + 1.0) - 1.0 / (f + 1.0), 0.0).mul_(other)
    is_first = (at == f).to(r.dtype) * r
    ri, rj = _at(r, i), _at(r, j)
    fi, fj = _at(is_first, i), _at(is_first, j)
    ti, tj = _at(to_first, i), _at(to_first, j)
    oi, oj = _at(to_other, i), _at(to_other, j)
    return ri * oj + fi * (tj - oj) + rj * oi + fj * (ti - oi)


def cascade_delta(aux: torch.Tensor, i: torch.Tensor, j: torch.Tensor, norm: torch.Tensor) -> torch.Tensor:
    """|dERR| of swapping the items at positions i and j (rows x, u, D; the numba
    ``cascade_delta``, written for either order: ``lo`` is the upper position)."""
    lo, hi = torch.minimum(i, j), torch.maximum(i, j)
    x, u, d = aux[0], aux[1], aux[3]
    xl, xh = _at(x, lo), _at(x, hi)
    inner = (_at(d, hi) - _at(d, lo) + (1.0 - xh) * _at(u, hi)) / (1.0 - xl)
    n = norm.view(-1, *([1] * (i.dim() - 1)))
    return ((xh - xl) * (_at(u, lo) - inner)).abs_().mul_(n)


def delta(form: str, i: torch.Tensor, j: torch.Tensor, aux: torch.Tensor, norm: torch.Tensor,
          first: torch.Tensor, second: torch.Tensor) -> torch.Tensor:
    """|dM| for swapping the items at rank positions i and j (0-based, broadcasting tensors) of
    lists prepared by :func:`prepare`; ``form`` is the metric's form (:func:`delta_form`)."""
    if form == "first":
        return rr_delta(aux, i, j, norm, first, second)
    if form == "product":
        return linear_delta(aux, i, j, norm, True)
    if form == "prefix":
        return linear_delta(aux, i, j, norm, False)
    if form == "cascade":
        return cascade_delta(aux, i, j, norm)
    raise ValueError(f"unknown swap-delta form {form!r}; known: {sorted(FORMS)}")
