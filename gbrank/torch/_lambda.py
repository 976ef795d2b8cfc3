r"""LambdaRank for the PyTorch path: swap deltas |dM_ij| on the current ranking, and the
RankNet log-loss weighted by them (Burges et al. 2006; Li et al. 2021, Eqs 7-10).

For a list with labels l and scores s, every pair (i, j) with l_i > l_j contributes

.. math::  |\Delta M_{ij}| \cdot \log\big(1 + e^{-\sigma (s_i - s_j)}\big),

where |dM_ij| is the change of metric M when the items at the *current* ranks of i and j
swap places.  |dM| is computed without gradient (it is a weight), so the gradient of the
loss is exactly LambdaRank's: dL/ds_i = sum_j -sigma |dM_ij| / (1 + exp(sigma (s_i - s_j))).

Current ranks come from a stable descending sort of the scores: ties keep input order.
Each metric is one delta function below plus one entry of :data:`DELTAS`; all are
O(1) per pair after O(n) prefix work per list, vectorised over ``[B, P, L]`` pairs.
"""

from __future__ import annotations

import torch

from ._listwise import gains
from ._pairs import weighted_pair_softplus
from ._ranks import check_batch, masked, rank_positions, select_rows


def _pair(values, rows, cols):
    """Per-item ``values [B, L]`` for the row items ``rows [B, P]`` and the column items
    ``cols [B, Q]``, shaped to broadcast into ``[B, P, Q]`` pairs."""
    return values.gather(1, rows)[:, :, None], values.gather(1, cols)[:, None, :]


def _delta_ndcg(pos, labels, mask, rows, cols, *, gain="exp", relevance_threshold=1.0, p=None):
    """|dnDCG_ij| = |gain(l_i) - gain(l_j)| * |1/log2(1 + r_i) - 1/log2(1 + r_j)| / IDCG."""
    g = gains(labels, gain)
    disc = 1.0 / torch.log2(pos.to(g.dtype) + 2.0)
    ideal = torch.sort(g, dim=1, descending=True).values
    idisc = 1.0 / torch.log2(torch.arange(2, g.shape[1] + 2, device=g.device, dtype=g.dtype))
    idcg = (ideal * idisc).sum(dim=1)
    inv = torch.where(idcg > 0, 1.0 / torch.where(idcg > 0, idcg, 1.0), 0.0)
    g = g * inv[:, None]
    gi, gj = _pair(g, rows, cols)
    di, dj = _pair(disc, rows, cols)
    return (gi - gj).abs_().mul_((di - dj).abs_())


def _delta_nrbp(pos, labels, mask, rows, cols, *, gain="exp", relevance_threshold=1.0, p=None):
    """|dnRBP(p)_ij| = (1 - p) |b_i - b_j| |p^(r_i - 1) - p^(r_j - 1)| / (1 - p^R), b binary.

    The factor |b_i - b_j| makes the swap of two relevant items a no-op; for a
    (relevant, non-relevant) pair it is the (1 - p)|p^(r_i-1) - p^(r_j-1)| / iRBP of Eq 10,
    divided by the ideal RBP 1 - p^R (not multiplied)."""
    if p is None:
        raise ValueError("the nRBP swap delta needs a persistence p, e.g. 'lambda_nrbp@0.95'")
    b = (labels >= relevance_threshold).to(labels.dtype) * mask
    n_rel = b.sum(dim=1)
    w = torch.pow(torch.full((), p, dtype=labels.dtype, device=labels.device), pos.to(labels.dtype))
    ideal = 1.0 - p ** n_rel
    inv = torch.where(n_rel > 0, (1.0 - p) / torch.where(n_rel > 0, ideal, 1.0), 0.0)
    b = b * inv[:, None]
    bi, bj = _pair(b, rows, cols)
    wi, wj = _pair(w, rows, cols)
    return (bi - bj).abs_().mul_((wi - wj).abs_())


def _relevant_by_rank(pos, rel):
    """Binary relevance laid out in rank order: ``out[b, q]`` is the item at position q."""
    out = torch.zeros_like(rel)
    return out.scatter_(1, pos, rel)


def _delta_ap(pos, labels, mask, rows, cols, *, gain="exp", relevance_threshold=1.0, p=None):
    r"""|dAP_ij| in O(1) per pair from two prefix arrays over the current ranking.

    With C(r) the number of relevant items in the top r and S(r) the sum of 1/q over the
    relevant positions q <= r, moving the relevant item from position x to y and the
    non-relevant one from y to x changes R * AP by

    * x < y: C(y)/y - C(x)/x - (S(y) - S(x))           (relevant items in (x, y) lose one)
    * x > y: (C(y) + 1)/y - C(x)/x + S(x) - 1/x - S(y)  (relevant items in (y, x) gain one)

    With A(r) = C(r)/r - S(r) per position both read A(y) - A(x) + [x > y](1/y - 1/x),
    so a pair needs only per-item values.
    """
    rel = (labels >= relevance_threshold).to(labels.dtype) * mask
    n_rel = rel.sum(dim=1, keepdim=True)
    by_rank = _relevant_by_rank(pos, rel)
    q = torch.arange(1, rel.shape[1] + 1, device=rel.device, dtype=rel.dtype)
    c_item = torch.cumsum(by_rank, dim=1).gather(1, pos)
    s_item = torch.cumsum(by_rank / q, dim=1).gather(1, pos)
    inv_r = torch.where(n_rel > 0, 1.0 / n_rel.clamp(min=1.0), 0.0)
    inv_pos = inv_r / (pos.to(rel.dtype) + 1.0)  # 1/position, scaled by 1/R
    a_item = c_item * inv_pos - s_item * inv_r
    ai, aj = _pair(a_item, rows, cols)
    ii, ij = _pair(inv_pos, rows, cols)
    ri, rj = _pair(rel, rows, cols)
    sign = ri - rj  # +1: i relevant, -1: j relevant, 0: no change
    # i relevant (x = i, y = j): A_j - A_i + relu(1/y - 1/x); j relevant: A_i - A_j + relu(1/y - 1/x), y = i
    corr = torch.relu(sign * (ij - ii)) * sign
    return (ai - aj - corr).abs_().mul_(sign * sign)


def _delta_rr(pos, labels, mask, rows, cols, *, gain="exp", relevance_threshold=1.0, p=None):
    """|dRR_ij|, non-zero only when the swap changes the first relevant item.

    With f and f2 the positions of the first and second relevant items, a swap of a
    relevant item at x with a non-relevant one at y changes RR by 1/min(y, f2) - 1/f when
    x = f (the first relevant item moves), by 1/y - 1/f when y < f (a relevant item jumps
    above the first one), and not at all otherwise."""
    rel = (labels >= relevance_threshold).to(labels.dtype) * mask
    by_rank = _relevant_by_rank(pos, rel)
    count = torch.cumsum(by_rank, dim=1)
    q = torch.arange(1, rel.shape[1] + 1, device=rel.device, dtype=rel.dtype).expand_as(rel)
    inf = torch.full((), float("inf"), dtype=rel.dtype, device=rel.device)
    first = torch.where((by_rank > 0) & (count == 1), q, inf).amin(dim=1, keepdim=True)
    second = torch.where((by_rank > 0) & (count == 2), q, inf).amin(dim=1, keepdim=True)
    y = pos.to(rel.dtype) + 1.0
    inv_first = torch.where(torch.isfinite(first), 1.0 / first, 0.0)
    nonrel = mask.to(rel.dtype) - rel
    # per non-relevant item: the change when it swaps with the first relevant item (p_item)
    # and with any other relevant item (q_item)
    p_item = (1.0 / torch.minimum(y, second) - inv_first).abs() * nonrel * (inv_first > 0)
    q_item = torch.where(y < first, 1.0 / y - inv_first, 0.0) * nonrel
    is_first = rel * (y == first)
    ri, rj = _pair(rel, rows, cols)
    fi, fj = _pair(is_first, rows, cols)
    pi, pj = _pair(p_item, rows, cols)
    qi, qj = _pair(q_item, rows, cols)
    return ri * qj + fi * (pj - qj) + rj * qi + fj * (pi - qi)


#: metric name -> swap-delta function (pos, labels, mask, row index, column index, **options) -> [B, P, Q]
DELTAS = {"ap": _delta_ap, "ndcg": _delta_ndcg, "nrbp": _delta_nrbp, "rr": _delta_rr}


def _check_metric(metric: str, p):
    if metric not in DELTAS:
        raise ValueError(f"unknown lambda metric {metric!r}; known: {sorted(DELTAS)}")
    if metric == "nrbp":
        if p is None or not 0.0 < float(p) < 1.0:
            raise ValueError(f"nRBP needs a persistence p strictly between 0 and 1, got {p!r}")
    elif p is not None:
        raise ValueError(f"only nRBP takes a persistence p; {metric!r} got p={p!r}")


@torch.no_grad()
def lambda_weights(metric: str, scores, labels, mask=None, *, p: float | None = None,
                   relevance_threshold: float = 1.0, gain: str = "exp") -> torch.Tensor:
    """All swap deltas |dM_ij| of a padded batch, shape ``[B, L, L]`` (no gradient).

    Entry ``[b, i, j]`` is |M(after swapping the current ranks of i and j) - M(now)| for
    list b; ranks from a stable descending sort of the scores.  Zero on padded rows and
    columns and on lists where M is undefined (no relevant item).  This is the weight
    :func:`lambda_loss` puts on the pair (i, j) when ``l_i > l_j``.

    Examples
    --------
    >>> import torch
    >>> w = lambda_weights("rr", torch.tensor([[3.0, 2.0, 1.0]]), torch.tensor([[0.0, 1.0, 0.0]]))
    >>> w[0, 0, 1].item()  # swapping ranks 1 and 2 moves the relevant item to the top: RR 1/2 -> 1
    0.5
    """
    scores, labels, mask = check_batch(scores, labels, mask)
    _check_metric(metric, p)
    pos = rank_positions(scores, mask)
    idx = torch.arange(scores.shape[1], device=scores.device).expand_as(pos)
    w = DELTAS[metric](pos, labels, mask, idx, idx, gain=gain, relevance_threshold=relevance_threshold,
                       p=None if p is None else float(p))
    return masked(w, mask[:, :, None] & mask[:, None, :])


def lambda_loss(scores, labels, mask=None, *, metric: str = "ndcg", p: float | None = None,
                sigma: float = 1.0, relevance_threshold: float = 1.0, gain: str = "exp") -> torch.Tensor:
    r"""LambdaRank loss per list: sum over pairs with l_i > l_j of |dM_ij| log(1 + exp(-sigma (s_i - s_j))).

    Parameters
    ----------
    scores, labels, mask : torch.Tensor of shape [B, L]
        Padded batch of lists (mask True on real entries).
    metric : {"ndcg", "ap", "rr", "nrbp"}
        Whose swap deltas weight the pairs (see :func:`lambda_weights`).  nDCG uses the
        graded gain; AP, RR and nRBP count ``label >= relevance_threshold`` as relevant.
    p : float, optional
        Persistence of nRBP (required for it, refused by the others).
    sigma : float, default 1
        Scale of the RankNet sigmoid (LightGBM's ``sigmoid``).

    Returns
    -------
    torch.Tensor of shape [B]
        Non-negative; 0 for a list without a pair to order.
    """
    scores, labels, mask = check_batch(scores, labels, mask)
    _check_metric(metric, p)
    sigma = float(sigma)
    if not sigma > 0:
        raise ValueError(f"sigma must be positive, got {sigma!r}")
    s = masked(scores, mask)
    pos = rank_positions(s, mask)
    low = labels.masked_fill(~mask, float("inf")).amin(dim=1, keepdim=True)
    high = labels.masked_fill(~mask, float("-inf")).amax(dim=1, keepdim=True)
    rows, row_ok = select_rows(mask & (labels > low))  # items above some other item
    cols, col_ok = select_rows(mask & (labels < high))  # items below some other item
    with torch.no_grad():
        w = DELTAS[metric](pos, labels, mask, rows, cols, gain=gain, relevance_threshold=relevance_threshold,
                           p=None if p is None else float(p))
        row_lab = masked(labels.gather(1, rows), row_ok, float("-inf"))
        col_lab = masked(labels.gather(1, cols), col_ok, float("inf"))
        w = w.mul_(row_lab[:, :, None] > col_lab[:, None, :])
    return weighted_pair_softplus(s.gather(1, rows), s.gather(1, cols), w, sigma)
