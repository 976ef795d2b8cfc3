"""The loss registry: names such as ``"listwise_nrbp"`` or ``"lambda_nrbp@0.95"`` to losses.

:func:`make_loss` returns a :class:`RankingLoss`, a callable
``loss(scores, labels, mask, generator=None) -> [B]`` with its options bound.  The
registry is a plain dict; errors list ``sorted(LOSSES)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Callable

import torch

from ._bounded import BOUNDED_METRIC, bounded_listwise_loss, check_bounding
from ._lambda import lambda_loss
from ._listwise import listwise_ap_loss, listwise_ndcg_loss, listwise_nrbp_loss, listwise_rr_loss
from ._sampled import bpr_loss, kos_loss, warp_loss

_THRESHOLD = ("relevance_threshold",)
_KOS = ("n_positives", "k", "position_weights", "n_draws", "margin", "max_trials") + _THRESHOLD


@dataclass(frozen=True)
class _Entry:
    function: Callable
    options: tuple[str, ...]
    metric: str  # the evaluation metric the loss aims at ("{p}" filled with the persistence)
    sgd_lr: float  # default SGD learning rate (best of 0.1 ... 1000 on MovieLens, NSR 1, 15 epochs)
    needs_p: bool = False
    sampled: bool = False  # draws random numbers (takes a generator)


#: loss name -> implementation, accepted options, matching evaluation metric
LOSSES: dict[str, _Entry] = {
    "bpr": _Entry(bpr_loss, _THRESHOLD, "ndcg", 100.0),
    "kos_auc": _Entry(partial(kos_loss, step="auc"), _KOS, "ndcg", 100.0, sampled=True),
    "kos_warp": _Entry(partial(kos_loss, step="warp"), _KOS, "ndcg", 10.0, sampled=True),
    "lambda_ap": _Entry(partial(lambda_loss, metric="ap"), ("sigma",) + _THRESHOLD, "ap", 1.0),
    "lambda_ndcg": _Entry(partial(lambda_loss, metric="ndcg"), ("sigma", "gain"), "ndcg", 10.0),
    "lambda_nrbp": _Entry(partial(lambda_loss, metric="nrbp"), ("sigma",) + _THRESHOLD, "nrbp@{p}", 1.0,
                          needs_p=True),
    "lambda_rr": _Entry(partial(lambda_loss, metric="rr"), ("sigma",) + _THRESHOLD, "rr", 1.0),
    "listwise_ap": _Entry(listwise_ap_loss, ("temperature",) + _THRESHOLD, "ap", 1000.0),
    "listwise_ndcg": _Entry(listwise_ndcg_loss, ("temperature", "gain"), "ndcg", 1000.0),
    "listwise_nrbp": _Entry(listwise_nrbp_loss, ("temperature", "normalize") + _THRESHOLD, "nrbp@0.95", 0.1),
    "listwise_rr": _Entry(listwise_rr_loss, ("temperature",) + _THRESHOLD, "rr", 1000.0),
    "warp": _Entry(warp_loss, ("margin", "max_trials") + _THRESHOLD, "ndcg", 10.0, sampled=True),
}


def _known() -> str:
    return ", ".join(n + "@p" if LOSSES[n].needs_p else n for n in sorted(LOSSES))


@dataclass(frozen=True)
class RankingLoss:
    """A loss with its options bound: ``loss(scores, labels, mask=None, generator=None) -> [B]``.

    Attributes
    ----------
    name : str
        Canonical name, e.g. ``"lambda_nrbp@0.95"``.
    metric : str
        The evaluation metric it aims at (``"ndcg"``, ``"ap"``, ``"rr"``, ``"nrbp@p"``),
        the default model-selection metric of the estimators.
    sampled : bool
        True when the loss draws random numbers (k-OS, WARP).
    sgd_learning_rate : float
        The estimators' SGD learning rate when none is given.
    options : dict
        The options bound to the function.
    """

    name: str
    metric: str
    sampled: bool
    sgd_learning_rate: float = 0.1
    options: dict = field(default_factory=dict)
    function: Callable = field(default=None, repr=False, compare=False)

    def __call__(self, scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor | None = None,
                 generator: torch.Generator | None = None) -> torch.Tensor:
        if self.sampled:
            return self.function(scores, labels, mask, generator=generator, **self.options)
        return self.function(scores, labels, mask, **self.options)


def make_loss(name: str, bounding: str | None = None, **options) -> RankingLoss:
    """Build a loss from its registry name and options.

    Parameters
    ----------
    name : str
        One of ``bpr, kos_auc, kos_warp, lambda_ap, lambda_ndcg, lambda_nrbp@p, lambda_rr,
        listwise_ap, listwise_ndcg, listwise_nrbp, listwise_rr, warp``.  ``lambda_nrbp``
        needs a persistence, e.g. ``"lambda_nrbp@0.95"``.  (The listwise nRBP loss does not
        depend on p, so ``"listwise_nrbp@0.9"`` is refused rather than silently ignored.)
    **options
        Per-loss options: ``temperature`` (listwise), ``sigma`` (lambda), ``gain`` (nDCG),
        ``normalize`` (listwise nRBP), ``relevance_threshold``, and for k-OS/WARP
        ``n_positives``, ``k``, ``position_weights``, ``n_draws``, ``margin``, ``max_trials``.
    bounding : None or str
        For the listwise losses only: map each list's smoothed metric value with the list's
        bounds (thesis Ch. 3-4): ``"minmax"``, ``"expectation"``, ``"expectation_max"`` or
        ``"distribution"`` (see ``gbrank.torch._bounded``).  Also accepted as a name suffix,
        ``"listwise_nrbp+minmax"``; the canonical name carries the suffix.

    Examples
    --------
    >>> make_loss("lambda_nrbp@0.95").metric
    'nrbp@0.95'
    >>> make_loss("listwise_ndcg", temperature=0.5).options
    {'temperature': 0.5}
    """
    if not isinstance(name, str):
        raise TypeError(f"a loss is named by a string, e.g. 'listwise_ndcg'; got {name!r}")
    name_part, plus, suffix = name.strip().lower().partition("+")
    if plus:
        if bounding is not None and check_bounding(bounding) != check_bounding(suffix):
            raise ValueError(f"loss {name!r} names bounding {suffix!r} but bounding={bounding!r} was given")
        bounding = suffix
    bounding = check_bounding(bounding)
    base, _, arg = name_part.partition("@")
    if base not in LOSSES:
        raise ValueError(f"unknown loss {name!r}; known losses: {_known()}")
    entry = LOSSES[base]
    bound = {}
    if entry.needs_p:
        if not arg:
            raise ValueError(f"loss {base!r} needs a persistence p in (0, 1), e.g. '{base}@0.95'")
        try:
            p = float(arg)
        except ValueError:
            raise ValueError(f"the persistence in {name!r} must be a number in (0, 1)") from None
        if not 0.0 < p < 1.0:
            raise ValueError(f"the persistence in {name!r} must lie strictly between 0 and 1")
        bound["p"] = p
        canonical = f"{base}@{p:g}"
        metric = entry.metric.format(p=f"{p:g}")
    else:
        if arg:
            why = " (the listwise nRBP loss is independent of p)" if base == "listwise_nrbp" else ""
            raise ValueError(f"loss {base!r} takes no '@' parameter{why}; got {name!r}")
        canonical, metric = base, entry.metric
    unknown = sorted(set(options) - set(entry.options))
    if unknown:
        raise ValueError(f"loss {base!r} does not take option(s) {unknown}; it takes {sorted(entry.options)}")
    bound.update(options)
    function = partial(entry.function, p=bound.pop("p")) if "p" in bound else entry.function
    lr = entry.sgd_lr
    if bounding is not None:
        if base not in BOUNDED_METRIC:
            raise ValueError(f"bounding applies to the listwise losses ({', '.join(sorted(BOUNDED_METRIC))}), "
                             f"not to {base!r}")
        if bound.get("normalize"):
            raise ValueError("normalize=True is the min-max bounding already; use bounding='minmax' instead")
        bound.pop("normalize", None)
        function = partial(bounded_listwise_loss, function=function, metric=BOUNDED_METRIC[base], bounding=bounding)
        canonical = f"{canonical}+{bounding}"
        if base == "listwise_nrbp":  # bounded, the nRBP loss is per-list normalised like the others
            lr = LOSSES["listwise_ndcg"].sgd_lr
    return RankingLoss(canonical, metric, entry.sampled, lr, dict(bound), function)
