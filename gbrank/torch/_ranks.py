"""Shared tensor helpers of the losses: padded batches, rank positions, smoothed ranks.

Conventions used by every loss in :mod:`gbrank.torch`:

* a batch of lists is padded: ``scores``, ``labels`` and ``mask`` have shape ``[B, L]``;
  ``mask`` is ``True`` on real entries.  Padded entries may hold anything (even NaN):
  they are replaced before any arithmetic, so they never reach a value or a gradient;
* ranks are 1-based in formulas and 0-based ("positions") in code;
* pairwise work is done on ``[B, P, L]`` blocks, where the ``P`` rows are only the items
  that can contribute (the relevant ones, or those with a positive gain): every pair a
  ranking loss counts has a relevant-er item on one side.
"""

from __future__ import annotations

import torch


def check_batch(scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor | None):
    """Validate the shapes of a padded batch; return ``(scores, labels, mask)`` with a bool mask.

    A 1-d input is one list (``[L]`` becomes ``[1, L]``).
    """
    if not isinstance(scores, torch.Tensor) or not isinstance(labels, torch.Tensor):
        raise TypeError("scores and labels must be torch tensors of shape [B, L]")
    if scores.dim() == 1:
        scores, labels = scores[None], labels[None]
        mask = None if mask is None else mask[None]
    if scores.dim() != 2:
        raise ValueError(f"scores must have shape [B, L] (a batch of padded lists), got {tuple(scores.shape)}")
    if labels.shape != scores.shape:
        raise ValueError(f"labels must have the shape of scores {tuple(scores.shape)}, got {tuple(labels.shape)}")
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    elif mask.shape != scores.shape:
        raise ValueError(f"mask must have the shape of scores {tuple(scores.shape)}, got {tuple(mask.shape)}")
    mask = mask.to(torch.bool)
    labels = torch.where(mask, labels.to(scores.dtype), torch.zeros((), dtype=scores.dtype, device=scores.device))
    return scores, labels, mask


def masked(values: torch.Tensor, mask: torch.Tensor, fill: float = 0.0) -> torch.Tensor:
    """``values`` where ``mask``, else ``fill`` (no gradient flows to the filled entries)."""
    return torch.where(mask, values, torch.full((), fill, dtype=values.dtype, device=values.device))


def select_rows(selected: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Indices of the selected entries of each list, first to last, padded.

    Returns ``(index [B, P], valid [B, P])`` with ``P`` the largest count in the batch
    (at least 1, so shapes stay non-empty); ``index`` of an invalid slot points at some
    entry of the list and must be masked with ``valid``.
    """
    n_sel = selected.sum(dim=1)
    width = max(int(n_sel.max()) if selected.numel() else 0, 1)
    order = torch.argsort((~selected).to(torch.uint8), dim=1, stable=True)[:, :width]
    valid = torch.gather(selected, 1, order)
    return order, valid


@torch.no_grad()
def rank_positions(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """0-based rank position of every entry: stable descending sort, input order breaks ties.

    Padded entries are placed after every real one.  Returns a ``long`` tensor ``[B, L]``.
    """
    key = torch.where(mask, -scores.detach(), torch.full((), float("inf"), dtype=scores.dtype, device=scores.device))
    order = torch.argsort(key, dim=1, stable=True)
    pos = torch.empty_like(order)
    ar = torch.arange(scores.shape[1], device=scores.device).expand_as(order)
    pos.scatter_(1, order, ar)
    return pos


def check_temperature(temperature) -> float:
    t = float(temperature)
    if not t > 0.0:
        raise ValueError(f"temperature must be positive (smaller is closer to the exact rank), got {temperature!r}")
    return t
