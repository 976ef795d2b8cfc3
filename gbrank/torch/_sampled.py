r"""Sampling losses of recommendation: BPR, WARP and the k-order statistic (k-OS) loss.

They use the same padded batches as the other losses (``scores``, ``labels``, ``mask`` of
shape ``[B, L]``): in list b the relevant items (``label >= relevance_threshold``) are the
user's positives D_u and the other real entries are the candidate negatives D \ D_u.  In
the recommendation trainer a list holds a user's training positives plus NSR times as many
sampled negatives, redrawn every epoch, so D \ D_u is that sample and the WARP rank
estimate |D \ D_u| / N is relative to it.

Random draws come from ``generator`` (a CPU ``torch.Generator``; drawn on the CPU and
moved to the scores' device, so a seed gives the same draws on every device).
Everything is vectorised.  WARP's "draw negatives until one violates the margin" is drawn
in closed form with the same distribution (the number of draws is geometric in the share
of violating negatives, the violator uniform among them), so no budget of draws is
generated and none is wasted.

On the CPU with plain SGD, ``gbrank.torch._sampled_sgd.sgd_epoch`` runs a whole BPR or WARP
epoch in numba on the factor matrices, with the same lists, draws, losses and update as the
torch path (tested against it step by step and epoch by epoch); the functions here remain
the definition and the GPU / DDP path.

References: Rendle et al., BPR (UAI 2009); Weston, Bengio & Usunier, WSABIE/WARP (IJCAI
2011); Weston, Yee & Weiss, k-order statistic loss (RecSys 2013), Algorithms 1-3.
"""

from __future__ import annotations

import math

import torch

from ._pairs import weighted_pair_softplus
from ._ranks import check_batch, check_positive_int, masked, select_rows

_EULER_GAMMA = 0.5772156649015329


def harmonic(eta: torch.Tensor) -> torch.Tensor:
    """Phi(eta) = sum_{i=1..eta} 1/i (the WARP rank-to-weight map), for eta >= 0."""
    return torch.digamma(eta + 1.0) + _EULER_GAMMA


def _uniform(shape, generator, device) -> torch.Tensor:
    return torch.rand(shape, generator=generator, dtype=torch.float32).to(device)


def _split(scores, labels, mask, relevance_threshold):
    rel = mask & (labels >= relevance_threshold)
    neg = mask & ~rel
    pos_idx, pos_valid = select_rows(rel)
    neg_idx, neg_valid = select_rows(neg)
    return masked(scores, mask), pos_idx, pos_valid, neg_idx, neg_valid


def _check_margin(margin) -> float:
    m = float(margin)
    if not m >= 0.0 or not math.isfinite(m):
        raise ValueError(f"margin must be a non-negative number, got {margin!r}")
    return m


BPR_PAIRS = ("all", "drawn")


def bpr_loss(scores, labels, mask=None, *, relevance_threshold: float = 1.0, pairs: str = "all") -> torch.Tensor:
    r"""BPR per list: the mean over (relevant i, non-relevant j) pairs of log(1 + exp(-(s_i - s_j))).

    This is -ln sigmoid(s_i - s_j), the BPR-Opt criterion (Rendle et al., UAI 2009).
    ``pairs="all"``: the mean over *every* pair of the list.  ``pairs="drawn"``: each
    non-relevant item is paired with one relevant item, the j-th non-relevant item of the list
    (in list order) with the floor(j P / N)-th relevant one (P relevant, N non-relevant): with
    the training lists of ``MFRanker`` (the positives, then NSR drawn negatives per positive)
    every positive meets its own NSR uniformly drawn negatives, the classic BPR sampler (one
    drawn negative per positive at NSR 1, as the ``implicit`` library's epoch), N pairs a list
    instead of P N.  Both estimate the same mean.  0 for a list without such a pair.

    Examples
    --------
    >>> import torch
    >>> s, y = torch.tensor([[2.0, 1.0, 0.0, 3.0]]), torch.tensor([[1.0, 1.0, 0.0, 0.0]])
    >>> round(bpr_loss(s, y, pairs="drawn").item(), 4)  # pairs (2.0, 0.0) and (1.0, 3.0)
    1.1269
    """
    if pairs not in BPR_PAIRS:
        raise ValueError(f"pairs must be one of {BPR_PAIRS} ('all': every (relevant, non-relevant) pair of a list; "
                         f"'drawn': one relevant item per non-relevant one), got {pairs!r}")
    scores, labels, mask = check_batch(scores, labels, mask)
    s, pos_idx, pos_valid, neg_idx, neg_valid = _split(scores, labels, mask, relevance_threshold)
    sp, sn = s.gather(1, pos_idx), s.gather(1, neg_idx)
    pairs_mask = pos_valid[:, :, None] & neg_valid[:, None, :]
    if pairs == "drawn":
        n_pos = pos_valid.sum(dim=1, keepdim=True)  # [B, 1]
        n_neg = neg_valid.sum(dim=1, keepdim=True).clamp(min=1)
        j = torch.arange(neg_idx.shape[1], device=s.device)[None, :]
        partner = torch.div(j * n_pos, n_neg, rounding_mode="floor")  # [B, N]
        pairs_mask = pairs_mask & (torch.arange(pos_idx.shape[1], device=s.device)[None, :, None]
                                   == partner[:, None, :])
    weights = pairs_mask.to(s.dtype)
    count = weights.sum(dim=(1, 2))
    weights = weights / count.clamp(min=1.0)[:, None, None]
    return weighted_pair_softplus(sp, sn, weights, 1.0)


def _warp_step(s, s_d, d_valid, neg_idx, neg_valid, margin, max_trials, generator):
    """WARP step for the chosen positives ``s_d [B, S]``: per-draw losses ``[B, S]``.

    Sampling negatives uniformly with replacement until one violates the margin is done in
    closed form, with the same distribution: if v of the n negatives violate, the number
    of draws N is geometric with success probability v / n (no step when N exceeds the
    budget of min(max_trials, n) draws), and the violator found is uniform among the v.
    So two uniforms per positive replace a budget of draws, and no draw is wasted."""
    n_neg = neg_valid.sum(dim=1)[:, None]  # [B, 1]
    budget = n_neg if max_trials is None else n_neg.clamp(max=int(max_trials))
    u = _uniform(s_d.shape + (2,), generator, s.device).to(s.dtype)
    with torch.no_grad():
        s_neg = s.gather(1, neg_idx)  # [B, N]
        viol = (s_neg[:, None, :] > s_d.detach()[:, :, None] - margin) & neg_valid[:, None, :]  # [B, S, N]
        v = viol.sum(dim=2)  # [B, S]
        p = v.to(s.dtype) / n_neg.clamp(min=1).to(s.dtype)
        # N = 1 + floor(log U / log(1 - p)) is Geometric(p); p = 1 gives N = 1
        log_q = torch.log1p(-p.clamp(max=1.0 - 1e-12))
        draws = torch.where(p >= 1.0, 1.0, 1.0 + torch.floor(torch.log(u[..., 0].clamp(min=1e-300)) / log_q))
        found = d_valid & (v > 0) & (draws <= budget.to(s.dtype))
        # the k-th violator, k uniform in 0..v-1
        k = torch.minimum(torch.floor(u[..., 1] * v.to(s.dtype)).long(), (v - 1).clamp(min=0))
        first = torch.argmax((viol & (torch.cumsum(viol, dim=2, dtype=torch.int32) == (k + 1)[:, :, None].int()))
                             .to(torch.uint8), dim=2)
        weight = harmonic(torch.floor(n_neg.to(s.dtype) / draws.clamp(min=1.0)))
    s_bad = s.gather(1, neg_idx.gather(1, first))
    return masked(weight * torch.relu(margin + s_bad - s_d), found)


def _auc_step(s, s_d, d_valid, neg_idx, neg_valid, margin, generator):
    """AUC (margin ranking) step: one random negative per chosen positive."""
    n_neg = neg_valid.sum(dim=1)
    u = _uniform(s_d.shape, generator, s.device)
    draw = torch.minimum((u * n_neg.to(u.dtype)[:, None]).long(), (n_neg[:, None] - 1).clamp(min=0))
    s_bad = s.gather(1, neg_idx.gather(1, draw))
    return masked(torch.relu(margin + s_bad - s_d), d_valid & (n_neg[:, None] > 0))


def _mean_over(values, valid):
    count = valid.sum(dim=1).to(values.dtype)
    return torch.where(count > 0, masked(values, valid).sum(dim=1) / count.clamp(min=1.0), 0.0)


def warp_loss(scores, labels, mask=None, *, margin: float = 1.0, max_trials: int | None = None,
              relevance_threshold: float = 1.0, generator: torch.Generator | None = None) -> torch.Tensor:
    r"""WARP per list: for every relevant item d, sample negatives until one violates the margin.

    Negatives are drawn uniformly, with replacement, from the list's non-relevant items,
    at most ``min(max_trials, n_neg)`` times (Weston et al. stop after |D \ D_u| draws);
    the draws are simulated exactly, not one by one (see the module notes).
    If the N-th draw is the first with s_neg > s_d - margin, the term is

    .. math::  \Phi\big(\lfloor n_{neg} / N \rfloor\big)\, \max(0,\ margin + s_{neg} - s_d),
               \qquad \Phi(\eta) = \sum_{i=1}^{\eta} 1/i,

    and 0 when no draw violates.  The loss of a list is the mean over its relevant items
    (a per-list normalisation: multiply by R for the sum of Eq 1).  ``max_trials=None``
    allows up to n_neg draws, the exact algorithm.
    """
    scores, labels, mask = check_batch(scores, labels, mask)
    margin = _check_margin(margin)
    check_positive_int(max_trials, "max_trials", allow_none=True)
    s, pos_idx, pos_valid, neg_idx, neg_valid = _split(scores, labels, mask, relevance_threshold)
    s_d = s.gather(1, pos_idx)
    terms = _warp_step(s, s_d, pos_valid, neg_idx, neg_valid, margin, max_trials, generator)
    return _mean_over(terms, pos_valid)


def _distinct_draws(n_pos: torch.Tensor, n_draws: int, k: int, generator) -> tuple[torch.Tensor, torch.Tensor]:
    """For each list and draw, ``min(k, n_pos)`` distinct indices into the list's positives.

    Sequential sampling without replacement, vectorised over lists and draws: the i-th
    index is uniform over the n - i values not yet taken (shifted past the taken ones in
    increasing order).  Returns ``(index [B, S, k], valid [B, S, k])``."""
    b = n_pos.shape[0]
    u = torch.rand((b, n_draws, k), generator=generator, dtype=torch.float64).to(n_pos.device)
    taken: list[torch.Tensor] = []
    for i in range(k):
        remaining = (n_pos[:, None] - i).clamp(min=1).to(u.dtype)
        x = torch.floor(u[:, :, i] * remaining).long()
        if taken:
            prev = torch.sort(torch.stack(taken, dim=2), dim=2).values
            for t in range(i):
                x = x + (x >= prev[:, :, t]).long()
        taken.append(x)
    index = torch.stack(taken, dim=2)
    valid = torch.arange(k, device=n_pos.device)[None, None, :] < n_pos[:, None, None]
    return torch.where(valid, index, 0), valid


def kos_loss(scores, labels, mask=None, *, step: str = "warp", n_positives: int = 5, k: int = 5,
             position_weights=None, n_draws: int | None = None, margin: float = 1.0,
             max_trials: int | None = None, relevance_threshold: float = 1.0,
             generator: torch.Generator | None = None) -> torch.Tensor:
    r"""k-order statistic loss (Weston, Yee & Weiss 2013, Algorithms 1-3), per list.

    Each draw (Algorithm 1) takes K = ``n_positives`` distinct relevant items of the list,
    orders them by score (descending) and keeps the one at position k (1-based), or at a
    position drawn from ``position_weights`` (P over 1..K).  A list with R < K relevant
    items uses all of them and maps position k to ceil(k R / K), so k = K still means the
    lowest-scored one.  The kept positive then takes a WARP step (Algorithm 2, see
    :func:`warp_loss`) or an AUC step (Algorithm 3: one random negative,
    max(0, margin + s_neg - s_d)).

    The loss of a list is the mean over ``n_draws`` draws (default: as many draws as the
    list has relevant items, so an epoch makes about one step per positive, as WARP).
    K = 1 gives WARP / AUC with positives drawn at random; k = 1 focuses on the top of the
    list (precision), k = K on the worst-ranked positives (mean and max rank).
    """
    scores, labels, mask = check_batch(scores, labels, mask)
    margin = _check_margin(margin)
    if step not in ("warp", "auc"):
        raise ValueError(f"step must be 'warp' or 'auc', got {step!r}")
    kk = check_positive_int(n_positives, "n_positives (K)")
    check_positive_int(n_draws, "n_draws", allow_none=True)
    check_positive_int(max_trials, "max_trials", allow_none=True)
    if position_weights is None:
        if not 1 <= check_positive_int(k, "k") <= kk:
            raise ValueError(f"k must lie in 1..n_positives={kk}, got {k!r}")
        probs = None
    else:
        probs = torch.as_tensor(position_weights, dtype=torch.float64).reshape(-1)
        if probs.numel() != kk or (probs < 0).any() or not probs.sum() > 0:
            raise ValueError(f"position_weights must be {kk} non-negative weights (P over positions "
                             f"1..K), not all zero; got {position_weights!r}")
        probs = probs / probs.sum()
    s, pos_idx, pos_valid, neg_idx, neg_valid = _split(scores, labels, mask, relevance_threshold)
    n_pos = pos_valid.sum(dim=1)
    n_s = int(n_pos.max()) if n_draws is None else int(n_draws)
    n_s = max(n_s, 1)
    draws, dvalid = _distinct_draws(n_pos, n_s, kk, generator)  # indices into the positives
    items = pos_idx.gather(1, draws.reshape(draws.shape[0], -1)).reshape(draws.shape)
    with torch.no_grad():
        key = masked(s.gather(1, items.reshape(items.shape[0], -1)).reshape(items.shape), dvalid, float("-inf"))
        order = torch.argsort(key, dim=2, descending=True, stable=True)
        if probs is None:
            kpos = torch.full(draws.shape[:2], int(k), dtype=torch.long)
        else:
            kpos = torch.multinomial(probs, draws.shape[0] * draws.shape[1], replacement=True,
                                     generator=generator).reshape(draws.shape[:2]) + 1
        kpos = kpos.to(s.device)
        k_here = n_pos.clamp(max=kk)[:, None]
        slot = torch.ceil(kpos.to(torch.float64) * k_here / kk).long().clamp(min=1) - 1
        chosen_slot = order.gather(2, slot[:, :, None]).squeeze(2)
    chosen = items.gather(2, chosen_slot[:, :, None]).squeeze(2)  # [B, S] list positions
    s_d = s.gather(1, chosen)
    draw_valid = (n_pos[:, None] > 0)
    if n_draws is None:
        draw_valid = draw_valid & (torch.arange(n_s, device=s.device)[None, :] < n_pos[:, None])
    else:
        draw_valid = draw_valid.expand(-1, n_s)
    if step == "warp":
        terms = _warp_step(s, s_d, draw_valid, neg_idx, neg_valid, margin, max_trials, generator)
    else:
        terms = _auc_step(s, s_d, draw_valid, neg_idx, neg_valid, margin, generator)
    return _mean_over(terms, draw_valid)
