r"""LambdaRank for the PyTorch path: swap deltas |dM_ij| on the current ranking, and the
RankNet log-loss weighted by them (Burges et al. 2006; Li et al. 2021, Eqs 7-10).

For a list with labels l and scores s, every pair (i, j) with l_i > l_j contributes

.. math::  |\Delta M_{ij}| \cdot \log\big(1 + e^{-\sigma (s_i - s_j)}\big),

where |dM_ij| is the change of metric M when the items at the *current* ranks of i and j
swap places.  |dM| is computed without gradient (it is a weight), so the gradient of the
loss is exactly LambdaRank's: dL/ds_i = sum_j -sigma |dM_ij| / (1 + exp(sigma (s_i - s_j))).

Current ranks come from a stable descending sort of the scores: ties keep input order.
The deltas are those of ``gbrank.torch._deltas``, the torch twin of the numba swap deltas
of the gradient-boosting objectives (``gbrank/lambdas/_deltas.py``): the same per-position
state and linear form, O(1) per pair after O(n) prefix work per list, vectorised over
``[B, P, Q]`` pairs.  Which metrics have one, and in which form, is the metric record's
``delta`` field (:data:`DELTAS`).
"""

from __future__ import annotations

import torch

from ..metrics import METRICS, check_persistence, with_delta
from ._deltas import delta, in_rank_order, prepare
from ._pairs import weighted_pair_softplus
from ._ranks import check_batch, masked, rank_positions, select_rows

#: metric name -> swap-delta form, for the metrics of the record that have one (``with_delta()``)
DELTAS = {name: rec.delta for name, rec in with_delta().items()}


def _takes_p(metric: str) -> bool:
    return METRICS[metric].param == "p"


def _check_metric(metric: str, p):
    """The metric's swap-delta form and its persistence (None for a metric without one), read
    from the record at call time (a family registered after import is known here too)."""
    families = with_delta()
    if metric not in families:
        raise ValueError(f"unknown lambda metric {metric!r}; known: {sorted(families)}")
    if _takes_p(metric):
        if p is None:
            raise ValueError(f"{metric!r} needs a persistence p strictly between 0 and 1, e.g. p=0.95")
        return families[metric].delta, check_persistence(p, what=metric)
    if p is not None:
        raise ValueError(f"only {sorted(n for n in families if _takes_p(n))} take a persistence p; "
                         f"{metric!r} got p={p!r}")
    return families[metric].delta, None


@torch.no_grad()
def _pair_deltas(metric, form, pos, labels, mask, i, j, *, gain, relevance_threshold, p):
    """|dM| of the pairs of rank positions ``i``, ``j`` (broadcasting) of a padded batch."""
    lab, valid = in_rank_order(pos, labels, mask)
    state = prepare(metric, lab, valid, gain=gain, relevance_threshold=relevance_threshold, p=p)
    return delta(form, i, j, *state)


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
    form, p = _check_metric(metric, p)
    pos = rank_positions(scores, mask)
    w = _pair_deltas(metric, form, pos, labels, mask, pos[:, :, None], pos[:, None, :], gain=gain,
                     relevance_threshold=relevance_threshold, p=p)
    return masked(w, mask[:, :, None] & mask[:, None, :])


def lambda_loss(scores, labels, mask=None, *, metric: str = "ndcg", p: float | None = None,
                sigma: float = 1.0, relevance_threshold: float = 1.0, gain: str = "exp") -> torch.Tensor:
    r"""LambdaRank loss per list: sum over pairs with l_i > l_j of |dM_ij| log(1 + exp(-sigma (s_i - s_j))).

    Parameters
    ----------
    scores, labels, mask : torch.Tensor of shape [B, L]
        Padded batch of lists (mask True on real entries).
    metric : str
        Whose swap deltas weight the pairs (see :func:`lambda_weights`): a metric of
        :data:`DELTAS` ("ap", "ndcg", "nrbp", "rr").  nDCG uses the graded gain; AP, RR
        and nRBP count ``label >= relevance_threshold`` as relevant.
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
    form, p = _check_metric(metric, p)
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
        w = _pair_deltas(metric, form, pos, labels, mask, pos.gather(1, rows)[:, :, None],
                         pos.gather(1, cols)[:, None, :], gain=gain, relevance_threshold=relevance_threshold, p=p)
        row_lab = masked(labels.gather(1, rows), row_ok, float("-inf"))
        col_lab = masked(labels.gather(1, cols), col_ok, float("inf"))
        w = w.mul_(row_lab[:, :, None] > col_lab[:, None, :])
    return weighted_pair_softplus(s.gather(1, rows), s.gather(1, cols), w, sigma)
