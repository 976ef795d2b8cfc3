r"""Bounded listwise losses: the per-list maps of the thesis (Ch. 3-4) on the smoothed metric.

A listwise loss smooths a metric M (nDCG, AP, RR, or the nRBP loss of Eq 19).  The
bounded loss maps the list's smoothed value M~ with the bounds of *that* metric on the
list's labels (``gbrank.bounds.prepare``)::

    "minmax"           (M~ - M_min) / (M_max - M_min)
    "expectation"      M~ / E[M]
    "expectation_max"  (M~ - E[M]) / (M_max - E[M])
    "distribution"     F~(M~)   (the smoothed CDF, linear interpolation in the grid table)

Every map is increasing in M~, so the orientation is kept: for nDCG, AP and RR (higher is
better) the bounded loss is minus the bounded value; for the nRBP loss (lower is better)
it is the bounded value itself.  The F~ interpolation is done in torch and is
differentiable (piecewise linear; flat, gradient 0, outside [M_min, M_max]).  Degenerate
lists (no relevant item, all relevant, one item, ...) get loss 0 and zero gradient.

Bounds depend only on the list's shape ((n, R) for the binary metrics, the sorted gains
for nDCG); ``gbrank.bounds.prepare`` caches them per shape, so after the first epoch a
batch costs a dictionary lookup per list.

Layering note: this is the one module of gbrank.torch that uses ``gbrank.bounds``
(which itself depends only on ``gbrank.metrics``).  The boundings and the metric each
listwise loss smooths come from the metric record (``gbrank.metrics``).
"""

from __future__ import annotations

import numpy as np
import torch

import gbrank.bounds as _bounds

from ..metrics import METRICS, check_bounding, with_listwise
from ._ranks import check_batch

#: listwise loss name -> the metric it smooths, whose bounds it uses (the record's ``listwise`` field)
BOUNDED_METRIC = {f"listwise_{name}": rec.listwise for name, rec in with_listwise().items()}


def batch_bounds(metric: str, labels: torch.Tensor, mask: torch.Tensor, *, distribution: bool = False,
                 relevance_threshold: float = 1.0, gain: str = "exp"):
    """``gbrank.bounds.prepare`` on the real labels of each row of a padded batch.

    Returns a dict of per-list tensors (dtype and device of ``labels``): ``minimum``,
    ``maximum``, ``expectation``, ``degenerate`` (bool) and, with ``distribution=True``,
    ``cdf`` [B, G], ``cdf_x0``, ``cdf_x1``.
    """
    m = mask.detach().cpu().numpy().astype(bool)
    y = labels.detach().cpu().numpy().astype(np.float64)
    ptr = np.concatenate([[0], np.cumsum(m.sum(axis=1))]).astype(np.int64)
    options = dict(gain=gain) if METRICS[metric].graded else dict(relevance_threshold=relevance_threshold)
    lb = _bounds.prepare(metric, y[m], ptr, distribution=distribution, **options)
    kw = dict(dtype=labels.dtype, device=labels.device)
    out = {name: torch.as_tensor(getattr(lb, name), **kw) for name in ("minimum", "maximum", "expectation")}
    out["degenerate"] = torch.as_tensor(lb.degenerate, device=labels.device)
    if distribution:
        for name in ("cdf", "cdf_x0", "cdf_x1"):
            out[name] = torch.as_tensor(getattr(lb, name), **kw)
    return out


def smoothed_cdf(x: torch.Tensor, cdf: torch.Tensor, x0: torch.Tensor, x1: torch.Tensor) -> torch.Tensor:
    """F~(x[b]) by differentiable linear interpolation in row ``cdf[b]`` over [x0[b], x1[b]].

    Same convention as ``gbrank.bounds.cdf_lookup``: end values outside the range, and the
    step 1{x >= x0} when x1 <= x0 (degenerate)."""
    G = cdf.shape[1]
    width = x1 - x0
    ok = width > 0
    t = (x - x0) / torch.where(ok, width, 1.0) * (G - 1)
    t = t.clamp(0.0, G - 1)
    j = t.detach().floor().clamp(max=G - 2).long().clamp(min=0)
    f = t - j.to(t.dtype)
    lo = cdf.gather(1, j[:, None])[:, 0]
    hi = cdf.gather(1, (j + 1).clamp(max=G - 1)[:, None])[:, 0]
    val = lo + f * (hi - lo)
    return torch.where(ok, val, (x >= x0).to(x.dtype))


def apply_bounding(bounding: str, values: torch.Tensor, b: dict) -> torch.Tensor:
    """The bounded value of each list's (smoothed) metric value; 0 for degenerate lists."""
    deg = b["degenerate"]
    if bounding == "distribution":
        out = smoothed_cdf(values, b["cdf"], b["cdf_x0"], b["cdf_x1"])
    else:
        if bounding == "minmax":
            shift, scale = b["minimum"], b["maximum"] - b["minimum"]
        elif bounding == "expectation":
            shift, scale = torch.zeros_like(values), b["expectation"]
        else:
            shift, scale = b["expectation"], b["maximum"] - b["expectation"]
        ok = ~deg & (scale > 0)
        out = torch.where(ok, (values - shift) / torch.where(ok, scale, 1.0), 0.0)
        deg = deg | ~ok
    return torch.where(deg, torch.zeros_like(out), out)


def bounded_listwise_loss(scores, labels, mask=None, *, function, metric: str, bounding: str,
                          bounds: dict | None = None, **options) -> torch.Tensor:
    """The listwise loss ``function`` with its per-list value mapped by ``bounding``.

    ``bounds``: the per-list tensors of :func:`batch_bounds` (computed from the batch's
    labels when None)."""
    bounding = check_bounding(bounding)
    scores, labels, mask = check_batch(scores, labels, mask)
    if options.get("normalize"):
        raise ValueError("normalize=True is the min-max bounding already; use bounding='minmax' instead")
    options.pop("normalize", None)
    raw = function(scores, labels, mask, **options)
    if bounds is None:
        extra = {k: options[k] for k in ("relevance_threshold", "gain") if k in options}
        bounds = batch_bounds(metric, labels, mask, distribution=bounding == "distribution", **extra)
    higher_is_better = METRICS[metric].higher_is_better
    value = -raw if higher_is_better else raw  # the smoothed metric value M~
    mapped = apply_bounding(bounding, value, bounds)
    return -mapped if higher_is_better else mapped
