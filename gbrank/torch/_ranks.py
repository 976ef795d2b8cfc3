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
    if not scores.is_floating_point():
        raise TypeError(f"scores must be a floating-point tensor, got {scores.dtype}; use scores.float()")
    if labels.device != scores.device or (mask is not None and mask.device != scores.device):
        raise ValueError(f"scores, labels and mask must be on one device, got scores on {scores.device}, labels "
                         f"on {labels.device}" + ("" if mask is None else f", mask on {mask.device}"))
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    elif mask.shape != scores.shape:
        raise ValueError(f"mask must have the shape of scores {tuple(scores.shape)}, got {tuple(mask.shape)}")
    elif mask.dtype != torch.bool and not bool(((mask == 0) | (mask == 1)).all()):
        raise ValueError("mask must be boolean (True on real entries) or hold only 0 and 1")
    mask = mask.to(torch.bool)
    check_real_entries(scores, labels, mask)
    labels = torch.where(mask, labels.to(scores.dtype), torch.zeros((), dtype=scores.dtype, device=scores.device))
    return scores, labels, mask


def check_real_entries(scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor) -> None:
    """Refuse NaN or infinite scores and NaN, infinite or negative labels on the real
    (unmasked) entries of a batch, naming the first list and position (one device sync)."""
    lab = labels.to(scores.dtype) if labels.is_floating_point() else labels.double()
    bad = mask & (~torch.isfinite(scores.detach()) | ~torch.isfinite(lab) | (lab < 0))
    if not bool(bad.any()):
        return
    b, i = (int(v) for v in torch.nonzero(bad)[0])
    s, y = float(scores[b, i]), float(lab[b, i])
    what = f"score {s}" if not torch.isfinite(scores[b, i].detach()) else f"label {y}"
    raise ValueError(
        f"{int(bad.sum())} real entr(ies) of the batch have a NaN or infinite score or a NaN, infinite or negative "
        f"label (first: list {b}, position {i}, {what}); labels are non-negative relevance grades and scores "
        "finite numbers. Mask padding with mask=False instead of NaN; a NaN score usually means a diverged model "
        "(lower the learning rate)")


def check_positive_int(value, name: str, allow_none: bool = False):
    """``value`` as an int >= 1 (or None when allowed); refuses 2.5, True, 0 and -1 instead of truncating."""
    if value is None and allow_none:
        return None
    whole = (isinstance(value, int) or type(value).__module__ == "numpy" and float(value).is_integer()
             or isinstance(value, float) and value.is_integer())
    if isinstance(value, bool) or not whole or int(value) < 1:
        raise ValueError(f"{name} must be a positive integer{' or None' if allow_none else ''}, got {value!r}")
    return int(value)


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
    try:
        t = float(temperature)
    except (TypeError, ValueError):
        raise TypeError(f"temperature must be a positive number, got {temperature!r}") from None
    if not t > 0.0 or t == float("inf"):
        raise ValueError(f"temperature must be positive (smaller is closer to the exact rank), got {temperature!r}")
    return t
