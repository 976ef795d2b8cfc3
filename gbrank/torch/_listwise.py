r"""Listwise losses: smoothed nDCG, AP, RR and the nRBP loss (Li et al. 2021, Eqs 11-19).

Every function takes a padded batch ``scores [B, L]``, ``labels [B, L]``, ``mask [B, L]``
and returns one loss per list, ``[B]``.  A list without a relevant item (or, for nDCG,
without a positive gain) has nothing to rank and gets loss 0 with zero gradient.

The smoothed rank of item i (Eq 11, with a temperature T; the paper uses T = 1) is

.. math::  \tilde R_i = 1 + \sum_{j \ne i} \sigma\!\left(\frac{s_j - s_i}{T}\right),
           \qquad \sigma(x) = \frac{1}{1 + e^{-x}},

which tends to the exact 1-based rank as T -> 0 (distinct scores).  In code the sum runs
over every real j including i itself, whose term is sigma(0) = 1/2, so
R~_i = 1/2 + sum_j sigma((s_j - s_i)/T): one matrix-vector product per list.
"""

from __future__ import annotations

import math

import torch

from ._pairs import smooth_rank_sums
from ._ranks import check_batch, check_temperature, masked, select_rows

_LN2 = math.log(2.0)


def gains(labels: torch.Tensor, gain: str = "exp") -> torch.Tensor:
    """gain(l) = 2**l - 1 (``"exp"``) or l (``"linear"``), as in :func:`gbrank.evaluate`."""
    if gain == "exp":
        return torch.exp2(labels) - 1.0
    if gain == "linear":
        return labels
    raise ValueError(f"gain must be 'exp' (2**l - 1) or 'linear' (l), got {gain!r}")


def _rows(scores, mask, selected, temperature, extra=None):
    """Smoothed ranks (and optionally sum_j extra_j sigma_ij) of the selected rows.

    Returns ``(index, valid, s_rows, r_rows, extra_rows)``."""
    s = masked(scores, mask)
    idx, valid = select_rows(selected)
    s_rows = s.gather(1, idx)
    weights = [mask.to(s.dtype)] + ([] if extra is None else [extra])
    out = smooth_rank_sums(s_rows, s, weights, temperature)  # [B, P, 1 or 2]
    r_rows = 0.5 + out[..., 0]
    extra_rows = None if extra is None else out[..., 1]
    return idx, valid, s_rows, r_rows, extra_rows


def smooth_ranks(scores: torch.Tensor, mask: torch.Tensor | None = None, *, temperature: float = 1.0) -> torch.Tensor:
    r"""Smoothed 1-based ranks R~_i = 1 + sum_{j != i} sigmoid((s_j - s_i)/T) of a padded batch.

    Padded entries get rank 0.

    Examples
    --------
    >>> import torch
    >>> smooth_ranks(torch.tensor([[3.0, 1.0, 2.0]]), temperature=1e-3)
    tensor([[1., 3., 2.]])
    """
    scores, _, mask = check_batch(scores, torch.zeros_like(scores), mask)
    t = check_temperature(temperature)
    _, _, _, r, _ = _rows(scores, mask, torch.ones_like(mask), t)  # every position, in input order
    return masked(r, mask)


def listwise_ndcg_loss(scores, labels, mask=None, *, temperature: float = 1.0, gain: str = "exp") -> torch.Tensor:
    r"""Smoothed nDCG loss (Eq 14): minus the nDCG computed with smoothed ranks.

    .. math::  L_{nDCG} = -\frac{1}{IDCG} \sum_i \frac{gain(l_i)}{\log_2(1 + \tilde R_i)},
               \qquad IDCG = \sum_{r=1}^{n} \frac{gain(l_{(r)})}{\log_2(1 + r)}

    with gain(l) = 2**l - 1 (``gain="exp"``) or l (``"linear"``) and l_(r) the labels in
    ideal order; normalised per list, so L lies near [-1, 0] (exactly, as T -> 0).

    Examples
    --------
    >>> import torch
    >>> s, y = torch.tensor([[2.0, 1.0, 0.0]]), torch.tensor([[0.0, 1.0, 0.0]])
    >>> round(float(listwise_ndcg_loss(s, y, temperature=1e-4)), 4)  # exact nDCG = 1/log2(3)
    -0.6309
    """
    scores, labels, mask = check_batch(scores, labels, mask)
    t = check_temperature(temperature)
    g = gains(labels, gain)
    idx, valid, _, r, _ = _rows(scores, mask, mask & (g > 0), t)
    g_rows = masked(g.gather(1, idx), valid)
    dcg = (g_rows / torch.log2(1.0 + r)).sum(dim=1)
    ideal = torch.sort(g, dim=1, descending=True).values
    disc = 1.0 / torch.log2(torch.arange(2, g.shape[1] + 2, device=g.device, dtype=g.dtype))
    idcg = (ideal * disc).sum(dim=1)
    return -torch.where(idcg > 0, dcg / torch.where(idcg > 0, idcg, 1.0), 0.0)


def listwise_ap_loss(scores, labels, mask=None, *, temperature: float = 1.0,
                     relevance_threshold: float = 1.0) -> torch.Tensor:
    r"""Smoothed AP loss (Eq 15): minus the AP computed with smoothed ranks.

    .. math::  L_{AP} = -\frac{1}{R} \sum_{i\,\mathrm{relevant}} \frac{1}{\tilde R_i}
               \Big(1 + \sum_{j \ne i,\ j\,\mathrm{relevant}} \sigma\big((s_j - s_i)/T\big)\Big)

    R relevant items (``label >= relevance_threshold``); normalised per list (by R, not
    per batch), so L lies in [-1, 0) and tends to -AP as T -> 0.
    """
    scores, labels, mask = check_batch(scores, labels, mask)
    t = check_temperature(temperature)
    rel = mask & (labels >= relevance_threshold)
    relf = rel.to(scores.dtype)
    _, valid, _, r, above = _rows(scores, mask, rel, t, extra=relf)
    n_rel = relf.sum(dim=1)
    ap = masked((0.5 + above) / r, valid).sum(dim=1)
    return -torch.where(n_rel > 0, ap / n_rel.clamp(min=1.0), 0.0)


def listwise_rr_loss(scores, labels, mask=None, *, temperature: float = 1.0,
                     relevance_threshold: float = 1.0, log: bool = False) -> torch.Tensor:
    r"""Smoothed RR loss (Eq 16): minus the RR computed with smoothed ranks.

    .. math::  L_{RR} = -\sum_{i\,\mathrm{relevant}} \frac{1}{\tilde R_i}
               \prod_{j \ne i,\ j\,\mathrm{relevant}} \Big(1 - \sigma\big((s_j - s_i)/T\big)\Big)

    The product, the smoothed probability that no other relevant item is above i, is
    computed in log space, ln P_i = -sum_{j != i} softplus((s_j - s_i)/T), and the sum over
    i as a log-sum-exp, so nothing underflows.  L lies in [-1, 0) and tends to -RR as
    T -> 0.

    ``log=True`` returns -ln(smoothed RR) instead, in [0, inf): the same optimum per list,
    but a gradient that does not vanish with many relevant items.  The product of R - 1
    factors near 1/2 makes Eq 16 and its gradient of order 2**-(R - 1) when the scores are
    close (as at initialisation: 1e-14 at R = 50, exactly 0 in float32 beyond R ~ 150), so
    plain Eq 16 cannot move a model whose users have dozens of positives; the gradient of
    -ln RR~ is the gradient of Eq 16 divided by RR~ (the same direction per list, scaled
    to order 1).  The registry's ``listwise_rr`` uses ``log=True`` by default (see
    :data:`gbrank.torch.LISTWISE`); ``loss_params={"log": False}`` gives Eq 16 itself.
    A list without a relevant item has loss 0 either way.
    """
    scores, labels, mask = check_batch(scores, labels, mask)
    t = check_temperature(temperature)
    if not isinstance(log, bool):
        raise TypeError(f"log must be True or False, got {log!r}")
    rel = mask & (labels >= relevance_threshold)
    _, valid, s_rows, r, _ = _rows(scores, mask, rel, t)
    z = torch.nn.functional.softplus((s_rows[:, None, :] - s_rows[:, :, None]) / t)  # [B, P, P]
    log_top = -(masked(z, valid[:, None, :]).sum(dim=2) - _LN2)  # the j = i term is softplus(0)
    terms = masked(log_top - torch.log(r), valid, float("-inf"))  # ln(P_i / R~_i)
    any_rel = valid.any(dim=1)
    log_rr = torch.logsumexp(masked(terms, any_rel[:, None]), dim=1)  # 0 on rows without a relevant item
    if log:
        return masked(-log_rr, any_rel)
    return masked(-torch.exp(log_rr), any_rel)


def listwise_nrbp_loss(scores, labels, mask=None, *, temperature: float = 1.0,
                       relevance_threshold: float = 1.0, normalize: bool = False) -> torch.Tensor:
    r"""The nRBP loss of Li et al. (Eq 19), independent of the persistence p.

    .. math::  L_{nRBP} = \sum_{i\,\mathrm{relevant}} (\tilde R_i - 1) - \frac{R(R-1)}{2}
               = \sum_{i\,\mathrm{relevant}} \sum_{j\,\mathrm{not\ relevant}}
                 \sigma\big((s_j - s_i)/T\big)

    (the second form because sigma(x) + sigma(-x) = 1 over the relevant pairs; it is the
    one computed, on the relevant x non-relevant block only): a smoothed count of the
    (relevant, non-relevant) pairs in the wrong order.  It was derived from a
    Jensen lower bound of ln nRBP(p) in which p only scales the whole expression by
    ln p, hence no p.  Range: [0, R(n - R)] for a list of n items with R relevant (0 when
    every relevant item is on top, R(n - R) when all are at the bottom, R(n - R)/2 for a
    random order); it is *not* bounded across lists, so long lists weigh more.
    ``normalize=True`` divides by R(n - R) (the min-max bounding of the thesis), giving
    [0, 1] = 1 - smoothed AUC.
    """
    scores, labels, mask = check_batch(scores, labels, mask)
    t = check_temperature(temperature)
    rel = mask & (labels >= relevance_threshold)
    s = masked(scores, mask)
    rows, row_ok = select_rows(rel)
    cols, col_ok = select_rows(mask & ~rel)
    # the second form: the (relevant, relevant) pairs add exactly R(R - 1)/2, which Eq 19 removes
    above = smooth_rank_sums(s.gather(1, rows), s.gather(1, cols), [col_ok.to(s.dtype)], t)[..., 0]
    loss = masked(above, row_ok).sum(dim=1)
    n_rel = rel.to(s.dtype).sum(dim=1)
    if normalize:
        pairs = n_rel * (mask.to(scores.dtype).sum(dim=1) - n_rel)
        loss = torch.where(pairs > 0, loss / pairs.clamp(min=1.0), 0.0)
    return loss
