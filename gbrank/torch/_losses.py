"""The loss registry: names such as ``"listwise_nrbp"`` or ``"lambda_nrbp@0.95"`` to losses.

The metric-based losses come from the metric record (``gbrank.metrics``): a
``lambda_<family>`` loss for every family with a swap delta (``with_delta()``) and a
``listwise_<family>`` loss for every family with a smoothed listwise loss
(``with_listwise()``); their names, with ``@p`` and ``+bounding``, are read by
``gbrank.metrics.parse``.  What only torch knows about them (the listwise functions, their
extra options and the default SGD learning rates) is the small tables :data:`LAMBDA_SGD_LR`
and :data:`LISTWISE`, keyed by family; bpr, warp, kos_auc and kos_warp are torch-only
entries.  :func:`make_loss` returns a :class:`RankingLoss`, a callable
``loss(scores, labels, mask, generator=None) -> [B]`` with its options bound.  The registry
is a plain dict; errors list ``sorted(LOSSES)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial
from typing import Callable, NamedTuple

import torch

from ..metrics import METRICS, PARADIGMS, aliases, check_bounding, parse, with_delta, with_listwise
from ._bounded import BOUNDED_METRIC, bounded_listwise_loss
from ._lambda import lambda_loss
from ._listwise import listwise_ap_loss, listwise_ndcg_loss, listwise_nrbp_loss, listwise_rr_loss
from ._sampled import bpr_loss, kos_loss, warp_loss

_THRESHOLD = ("relevance_threshold",)
_KOS = ("n_positives", "k", "position_weights", "n_draws", "margin", "max_trials") + _THRESHOLD

#: default SGD learning rate of ``lambda_<family>`` (best of 0.1 ... 1000 on MovieLens, NSR 1, 15 epochs)
LAMBDA_SGD_LR = {"ap": 1.0, "ndcg": 10.0, "nrbp": 1.0, "rr": 1.0}


class _Listwise(NamedTuple):
    function: Callable
    options: tuple[str, ...]  # beyond temperature and gain (graded) or relevance_threshold (binary)
    sgd_lr: float  # default SGD learning rate, chosen as LAMBDA_SGD_LR's
    bounded_sgd_lr: float | None = None  # with a bounding, when it differs


#: family -> its smoothed listwise loss (Li et al. 2021, Eqs 11-19), extra options, SGD learning rates
LISTWISE = {
    "ap": _Listwise(listwise_ap_loss, (), 1000.0),
    "ndcg": _Listwise(listwise_ndcg_loss, (), 1000.0),
    # the nRBP loss (Eq 19) is not per-list normalised unless bounded, and does not depend on p
    "nrbp": _Listwise(listwise_nrbp_loss, ("normalize",), 0.1, 1000.0),
    # log=True: Eq 16 in log space (-ln RR~), the estimators' default (DEFAULTS)
    "rr": _Listwise(listwise_rr_loss, ("log",), 1000.0),
}


class Defaults(NamedTuple):
    """The estimators' training defaults of a loss: ``optimizer``, its ``learning_rate``, loss
    ``options`` ((name, value) pairs) that the estimators add unless ``loss_params`` sets them,
    and ``MFRanker``'s ``positives_per_list`` (None: one list per user, the paper's)."""

    optimizer: str
    learning_rate: float
    options: tuple = ()
    positives_per_list: int | None = None


#: loss (``+bounded``: with any bounding) -> the estimators' default optimiser, learning rate,
#: loss options and training lists, chosen by benchmarks/mf_learning_rates.py (MFRanker, 32
#: factors, NSR 1, MovieLens latest-small: a 20-epoch search of SGD at the registry rate and
#: Adam at 0.01 and 0.1, then runs to convergence, up to 100 epochs with patience 10, of the
#: list form, k-OS's k and the top-one losses' rate; rule: above popularity on both
#: full-catalogue metrics first, the best full-catalogue nDCG@10, Adam within 0.005 of it;
#: evidence: docs/results/mf_learning_rates.md).  A loss not listed keeps SGD at its ``sgd_lr``.
DEFAULTS: dict[str, Defaults] = {
    "listwise_ndcg": Defaults("sgd", 1000.0),
    "listwise_ap": Defaults("sgd", 1000.0),
    # the top-one losses (RR, ERR) train on lists of one positive (positives_per_list=1): on a
    # user's whole list their gradient rests on its first relevant item and learns nothing of the
    # catalogue (full-catalogue AUC 0.49-0.58 on MovieLens, below popularity)
    # Eq 16 in log space: its plain product vanishes (2^-(R-1)) for users with many positives
    "listwise_rr": Defaults("adam", 0.01, (("log", True),), positives_per_list=1),
    "listwise_nrbp": Defaults("adam", 0.01),
    "listwise_nrbp+bounded": Defaults("sgd", 1000.0),
    "lambda_ndcg": Defaults("adam", 0.01),  # SGD 10 is as good on MovieLens and diverges on CiteULike-a
    "lambda_ap": Defaults("adam", 0.01),
    "lambda_rr": Defaults("adam", 0.01, positives_per_list=1),
    "lambda_nrbp": Defaults("adam", 0.01),  # searched at p = 0.95, every p
    "lambda_err": Defaults("adam", 0.01, positives_per_list=1),
    # k = 3 and Adam: above popularity on MovieLens and CiteULike-a, where k = 5 with SGD 10 is
    # below it on CiteULike-a (nDCG@10 0.0011) and SGD 1 and Adam at k = 5 below it on MovieLens
    "kos_warp": Defaults("adam", 0.01, (("k", 3),)),
    # k = 3 of K = 5 (the loss's default k = K weighs the worst-ranked positives:
    # mean rank, not top-n; Weston et al. 2013 report k <= 4 for precision): above popularity
    # on MovieLens where k = 5 is below it on nDCG@10 and k = 2 on AUC
    "kos_auc": Defaults("sgd", 100.0, (("k", 3),)),
    "warp": Defaults("adam", 0.01),
    "bpr": Defaults("sgd", 100.0),
}
#: Adam's learning rate when the optimiser asked for is not the loss's default one
ADAM_LEARNING_RATE = 0.01
#: persistence of the evaluation metric a loss aims at when its family needs one and the loss takes none
DEFAULT_P = 0.95


@dataclass(frozen=True)
class _Entry:
    function: Callable
    options: tuple[str, ...]
    metric: str  # the evaluation metric the loss aims at ("{p}" filled with the persistence)
    sgd_lr: float  # default SGD learning rate
    needs_p: bool = False
    sampled: bool = False  # draws random numbers (takes a generator)
    family: str | None = None  # the metric family of a lambda_ or listwise_ loss
    bounded_sgd_lr: float | None = None


def _label_options(family: str) -> tuple[str, ...]:
    return ("gain",) if METRICS[family].graded else _THRESHOLD


def _lambda_entry(family: str) -> _Entry:
    takes_p = METRICS[family].param == "p"
    return _Entry(partial(lambda_loss, metric=family), ("sigma",) + _label_options(family),
                  family + ("@{p}" if takes_p else ""), LAMBDA_SGD_LR.get(family, 1.0), needs_p=takes_p,
                  family=family)


def _listwise_entry(family: str, spec: _Listwise) -> _Entry:
    metric = f"{family}@{DEFAULT_P:g}" if METRICS[family].param == "p" else family
    return _Entry(spec.function, ("temperature",) + _label_options(family) + spec.options, metric, spec.sgd_lr,
                  family=family, bounded_sgd_lr=spec.bounded_sgd_lr)


#: loss name -> implementation, accepted options, matching evaluation metric
LOSSES: dict[str, _Entry] = {
    **{f"lambda_{n}": _lambda_entry(n) for n in sorted(with_delta())},
    **{f"listwise_{n}": _listwise_entry(n, LISTWISE[n]) for n in sorted(with_listwise()) if n in LISTWISE},
    "bpr": _Entry(bpr_loss, _THRESHOLD + ("pairs",), "ndcg", 100.0),
    "kos_auc": _Entry(partial(kos_loss, step="auc"), _KOS, "ndcg", 100.0, sampled=True),
    "kos_warp": _Entry(partial(kos_loss, step="warp"), _KOS, "ndcg", 10.0, sampled=True),
    "warp": _Entry(warp_loss, ("margin", "max_trials") + _THRESHOLD, "ndcg", 10.0, sampled=True),
}


def _families(paradigm: str) -> dict:
    """The record's families of a paradigm, each with the parameter its torch loss takes:
    ``lambda_`` takes nRBP's persistence but no cutoff (the torch LambdaRank has no
    truncation); ``listwise_`` takes none (no cutoff, and the nRBP loss is independent of p)."""
    fams = with_delta() if paradigm == "lambda" else with_listwise()
    return {n: replace(rec, param="p" if paradigm == "lambda" and rec.param == "p" else "")
            for n, rec in fams.items()}


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
        The estimators' SGD learning rate when SGD is asked for without a rate.
    options : dict
        The options bound to the function (the registry's defaults included).
    optimizer : str
        The estimators' optimiser when none is given (:data:`DEFAULTS`).
    learning_rate : float
        The estimators' learning rate when none is given, for ``optimizer``.
    positives_per_list : int or None
        ``MFRanker``'s training lists when ``positives_per_list="auto"``: None, one list per
        user (all its positives); m, lists of m positives each (:data:`DEFAULTS`).
    """

    name: str
    metric: str
    sampled: bool
    sgd_learning_rate: float = 0.1
    options: dict = field(default_factory=dict)
    function: Callable = field(default=None, repr=False, compare=False)
    optimizer: str = "sgd"
    learning_rate: float | None = None
    positives_per_list: int | None = None

    def default_learning_rate(self, optimizer: str) -> float:
        """The learning rate the estimators use with ``optimizer`` when none is given: the
        loss's searched default for its default optimiser, else ``sgd_learning_rate`` for SGD
        and :data:`ADAM_LEARNING_RATE` for Adam."""
        if optimizer == self.optimizer and self.learning_rate is not None:
            return self.learning_rate
        return self.sgd_learning_rate if optimizer == "sgd" else ADAM_LEARNING_RATE

    def __call__(self, scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor | None = None,
                 generator: torch.Generator | None = None) -> torch.Tensor:
        if self.sampled:
            return self.function(scores, labels, mask, generator=generator, **self.options)
        return self.function(scores, labels, mask, **self.options)


def _check_option_values(options: dict) -> None:
    """Refuse out-of-range loss options when the loss is built (not at the first batch)."""
    import math

    from ._ranks import check_positive_int, check_temperature

    def real(name):
        v = options[name]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ValueError(f"{name} must be a finite number, got {v!r}")
        return v

    if "temperature" in options:
        check_temperature(options["temperature"])
    if "sigma" in options and not real("sigma") > 0:
        raise ValueError(f"sigma must be positive (scale of the RankNet sigmoid), got {options['sigma']!r}")
    if "relevance_threshold" in options and not real("relevance_threshold") > 0:
        raise ValueError(f"relevance_threshold must be a positive number (labels at or above it are relevant), "
                         f"got {options['relevance_threshold']!r}")
    if "margin" in options and not real("margin") >= 0:
        raise ValueError(f"margin must be a non-negative number, got {options['margin']!r}")
    if "gain" in options and options["gain"] not in ("exp", "linear"):
        raise ValueError(f"gain must be 'exp' (2**l - 1) or 'linear' (l), got {options['gain']!r}")
    for flag in ("normalize", "log"):
        if flag in options and not isinstance(options[flag], bool):
            raise TypeError(f"{flag} must be True or False, got {options[flag]!r}")
    for name, none_ok in (("n_positives", False), ("k", False), ("n_draws", True), ("max_trials", True)):
        if name in options:
            check_positive_int(options[name], name, allow_none=none_ok)


def make_loss(name: str, bounding: str | None = None, *, training_defaults: bool = False, **options) -> RankingLoss:
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
    training_defaults : bool, default False
        Add the loss options of the estimators' defaults (:data:`DEFAULTS`, e.g. ``log=True``
        for ``listwise_rr``) under the given ones; the estimators pass True.  False builds
        the loss as the paper defines it.

    Examples
    --------
    >>> make_loss("lambda_nrbp@0.95").metric
    'nrbp@0.95'
    >>> make_loss("listwise_ndcg", temperature=0.5).options
    {'temperature': 0.5}
    """
    if not isinstance(name, str):
        raise TypeError(f"a loss is named by a string, e.g. 'listwise_ndcg'; got {name!r}")
    text = name.strip().lower()
    body, plus, suffix = text.partition("+")
    base, at, _ = body.partition("@")
    head, sep, family = base.partition("_")
    if sep and head in PARADIGMS:
        base = f"{head}_{aliases().get(family, family)}"
    if base not in LOSSES:
        raise ValueError(f"unknown loss {name!r}; known losses: {_known()}")
    entry = LOSSES[base]
    if at and not entry.needs_p:
        why = (f" (the {base} loss is independent of p)"
               if entry.family is not None and METRICS[entry.family].param == "p" else "")
        raise ValueError(f"loss {base!r} takes no '@' parameter{why}; got {name!r}")
    if entry.needs_p and not at:
        raise ValueError(f"loss {base!r} needs a persistence p in (0, 1), e.g. '{base}@0.95'")
    if entry.family is not None:  # the record's parser: family, persistence, bounding suffix
        spec = parse(text, families=_families(head), paradigm=True, bounding=True, role="loss")
        named = spec.bounding
    else:
        spec, named = None, check_bounding(suffix) if plus else None
    if named is not None:
        if bounding is not None and check_bounding(bounding) != named:
            raise ValueError(f"loss {name!r} names bounding {named!r} but bounding={bounding!r} was given")
        bounding = named
    bounding = check_bounding(bounding)
    unknown = sorted(set(options) - set(entry.options))
    if unknown:
        raise ValueError(f"loss {base!r} does not take option(s) {unknown}; it takes {sorted(entry.options)}")
    _check_option_values(options)
    chosen = DEFAULTS.get(base + "+bounded" if bounding is not None else base)
    bound = {**dict(chosen.options), **options} if training_defaults and chosen is not None else dict(options)
    function, metric, canonical = entry.function, entry.metric, base
    if entry.needs_p:
        function = partial(entry.function, p=spec.p)
        metric, canonical = spec.metric, str(replace(spec, bounding=None))
    lr = entry.sgd_lr
    if bounding is not None:
        if base not in BOUNDED_METRIC:
            raise ValueError(f"bounding applies to the listwise losses ({', '.join(sorted(BOUNDED_METRIC))}), "
                             f"not to {base!r}")
        if bound.get("normalize"):
            raise ValueError("normalize=True is the min-max bounding already; use bounding='minmax' instead")
        if bound.get("log"):
            raise ValueError("log=True (-ln RR~) does not combine with a bounding, which maps the smoothed RR "
                             "itself; drop log or the bounding")
        bound.pop("log", None)
        bound.pop("normalize", None)
        function = partial(bounded_listwise_loss, function=function, metric=BOUNDED_METRIC[base], bounding=bounding)
        canonical = f"{canonical}+{bounding}"
        lr = entry.bounded_sgd_lr or lr
    chosen = chosen or Defaults("sgd", lr)
    return RankingLoss(canonical, metric, entry.sampled, lr, bound, function, chosen.optimizer, chosen.learning_rate,
                       chosen.positives_per_list)
