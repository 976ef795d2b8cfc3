"""The metric record: every fact about a metric family in one place, and the one parser.

A :class:`Metric` says what a family *is*: its kernel code, what ``@x`` means after its
name, whether it is graded or binary, its direction, whether it is undefined on a list
without relevant items, which swap-delta form its LambdaRank objective uses, whether
``gbrank.bounds`` knows its maximum, minimum, expectation and distribution, and which
metric its smoothed listwise torch loss computes.  :data:`METRICS` maps names to records;
every other registry of gbrank (the objectives' metrics, the bounds' metrics, the torch
losses) is derived from it by a query on these fields, and every error message lists
``sorted(...)`` of such a derived view, so nothing can drift.

:func:`parse` turns every name gbrank accepts into a :class:`MetricSpec`: evaluator
metrics (``"ndcg@10"``, ``"nrbp@0.95"``, ``"auc"``), objectives with a bounding suffix
(``"ap+minmax"``), and torch loss names with a paradigm prefix (``"lambda_nrbp@0.9"``,
``"listwise_ndcg+distribution"``).

This module is pure Python (no numba): the kernels read the integer codes below.  To add
a metric, see CONTRIBUTING.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Callable, Mapping

# Integer codes of the metrics compiled into gbrank's numba kernels (``_kernels.metric_value``
# dispatches on them and raises on any other code).  The one place they are written: a new
# code goes at the end of this line (the unpacking checks the count).
_BUILT_IN = range(20)
(NDCG, DCG, AP, RR, RBP, NRBP, PREC, RECALL, AUC, MEAN_RANK, MAX_RANK, NRBP_LOSS, SUCCESS, RPREC, BPREF, ERR, F1,
 JUDGED, RBP_GRADED, RBP_RESIDUAL) = _BUILT_IN
#: the codes ``_kernels.metric_value`` computes; callers check a code against it before a
#: parallel loop (an exception raised inside numba's ``prange`` cannot reach Python cleanly)
KERNEL_CODES = frozenset(_BUILT_IN)
#: code of a metric registered from outside, computed through its record's ``kernel``
EXTERNAL = -1

#: what ``@x`` after a family name means
PARAM_KINDS = {
    "k?": "optional integer cutoff k (e.g. ndcg or ndcg@10)",
    "k": "required integer cutoff k (e.g. p@5)",
    "p": "required persistence p in (0, 1) (e.g. nrbp@0.95)",
    "": "no parameter",
}
#: the swap-delta forms of the LambdaRank objectives (``gbrank.lambdas._deltas``)
DELTA_FORMS = {
    "product": "|(a_i - a_j)(w_i - w_j)| * norm: per-position value a and weight w (nDCG, nRBP)",
    "prefix": "AP's prefix form: relevant-count and 1/rank prefix sums over the current ranking",
    "first": "RR's form: only pairs that move the first relevant item change the metric",
    "cascade": "ERR's form: survival and prefix rows of the cascade, O(1) per pair",
}
#: the per-list normalisations of a metric (thesis Ch. 3; ``gbrank.bounds``)
BOUNDINGS = ("minmax", "expectation", "expectation_max", "distribution")
#: paradigm prefixes of the torch loss names built on a metric family
PARADIGMS = ("lambda", "listwise")


@dataclass(frozen=True)
class Metric:
    """What a metric family is.  One record per family; everything else derives from it.

    Attributes
    ----------
    name : str
        Canonical family name, lower case (``"ndcg"``).
    code : int
        Kernel code (:data:`EXTERNAL` for a metric registered with its own ``kernel``).
    param : {"k?", "k", "p", ""}
        What ``@x`` means: optional cutoff, required cutoff, required persistence, none.
        In an objective name the cutoff is the LambdaRank truncation level.
    needs_relevant : bool
        Undefined (the evaluator's ``empty`` policy applies) on a list without a relevant item.
    higher_is_better : bool
    graded : bool
        Uses graded gains ``gain(l)``; otherwise binary relevance ``l >= relevance_threshold``.
    summary : str
        One line: the formula.
    delta : {"product", "prefix", "first", "cascade"} or None
        Swap-delta form of its LambdaRank objective (:data:`DELTA_FORMS`); None: no objective.
    bounds : bool
        ``gbrank.bounds`` has its maximum, minimum, expectation and distribution.
    listwise : str or None
        Name of the family whose value the smoothed listwise torch loss of this family
        computes, and whose bounds a bounded listwise loss uses (nRBP's listwise loss is the
        nRBP loss of Li et al. 2021, Eq 19); None: no listwise loss.
    kernel : callable or None
        For a metric registered from outside gbrank: a numba ``@njit`` function
        ``kernel(gains, rel, groups, k, p) -> float`` of one list in rank order (``groups``
        are the tie-group boundaries, see ``gbrank.metrics._kernels``), returning ``nan``
        where the metric is undefined.  Built-in metrics dispatch on ``code`` instead.
    aliases : tuple of str
        Other names of the family (trec_eval's, ranx's), accepted by :func:`parse`.  An
        alias ending in ``_`` takes the parameter after it (``"ndcg_cut_"``: ``ndcg_cut_10``).
    with_qrels : bool
        Defined for a run judged by qrels (``gbrank.evaluate_run``): R, the ideal and the
        judged totals come from the qrels, and relevant documents the run did not retrieve
        count as never ranked.  False for the rank statistics (AUC, mean and max rank, the
        nRBP loss), which need every relevant item to have a rank.
    top_grade : bool
        Uses the top grade of the relevance scale (ERR, graded RBP): the evaluator's
        ``max_grade``, stated in its settings.
    """

    name: str
    code: int
    param: str
    needs_relevant: bool
    higher_is_better: bool
    graded: bool
    summary: str
    delta: str | None = None
    bounds: bool = False
    listwise: str | None = None
    kernel: Callable | None = field(default=None, repr=False, compare=False)
    aliases: tuple[str, ...] = ()
    with_qrels: bool = True
    top_grade: bool = False

    def __post_init__(self):
        if self.param not in PARAM_KINDS:
            raise ValueError(f"metric {self.name!r}: param must be one of {sorted(PARAM_KINDS)}, got {self.param!r}")
        if self.delta is not None and self.delta not in DELTA_FORMS:
            raise ValueError(f"metric {self.name!r}: delta must be None or one of {sorted(DELTA_FORMS)}, "
                             f"got {self.delta!r}")
        if self.code == EXTERNAL and self.kernel is None:
            raise ValueError(f"metric {self.name!r} has no gbrank kernel code: give it a kernel function")

    def kernel_parameter(self, p=None, labels=None, gain: str = "exp") -> float:
        """The one number besides the labels that the kernels of this family take.

        The persistence ``p`` of a family whose ``@x`` is a persistence (nRBP); for a family
        on the top grade of the scale (ERR) the gain of that grade, the largest of
        ``labels`` (a NumPy array; ``gain`` ``"exp"``: 2**l - 1, ``"linear"``: l); 0.0 for
        the others.  The numba objectives, ``swap_deltas`` and the torch gradients all take
        it from here (the torch lambda losses, which see one batch at a time, leave it None
        for a top-grade family: each list's own largest gain).

        Examples
        --------
        >>> import numpy as np
        >>> METRICS["nrbp"].kernel_parameter(0.9), METRICS["err"].kernel_parameter(labels=np.array([0.0, 2.0]))
        (0.9, 3.0)
        >>> METRICS["ndcg"].kernel_parameter()
        0.0
        """
        if self.top_grade:
            top = float(labels.max()) if len(labels) else 0.0
            return 2.0**top - 1.0 if gain == "exp" else top
        return float(p or 0.0) if self.param == "p" else 0.0

    @property
    def form(self) -> str:
        """How the family is written: ``ndcg or ndcg@k``, ``p@k``, ``nrbp@p``, ``auc``."""
        return {"k?": "{0} or {0}@k", "k": "{0}@k", "p": "{0}@p", "": "{0}"}[self.param].format(self.name)


#: family name -> record.  Error messages list ``sorted`` views of it.
METRICS: dict[str, Metric] = {}


def register(metric: Metric, registry: dict[str, Metric] | None = None) -> Metric:
    """Add ``metric`` to ``registry`` (default :data:`METRICS`); its name and aliases must be new."""
    reg = METRICS if registry is None else registry
    taken = [n for n in (metric.name, *metric.aliases) if n in reg or n in aliases(reg)]
    if taken:
        raise ValueError(f"metric name(s) {taken} are already registered")
    reg[metric.name] = metric
    return metric


def aliases(registry: Mapping[str, Metric] | None = None) -> dict[str, str]:
    """alias -> family name."""
    reg = METRICS if registry is None else registry
    return {a: m.name for m in reg.values() for a in m.aliases}


for _m in (
    Metric("ndcg", NDCG, "k?", True, True, True, "DCG@k / IDCG@k, DCG = sum_r gain(l_r) / log2(r + 1)",
           delta="product", bounds=True, listwise="ndcg", aliases=("ndcg_cut_",)),
    Metric("dcg", DCG, "k?", False, True, True, "sum_{r <= k} gain(l_r) / log2(r + 1)"),
    Metric("ap", AP, "k?", True, True, False, "(1/R) sum over relevant ranks r <= k of P@r",
           delta="prefix", bounds=True, listwise="ap", aliases=("map", "map_cut_")),
    Metric("rr", RR, "k?", True, True, False, "1 / rank of the first relevant item (0 below k)",
           delta="first", bounds=True, listwise="rr", aliases=("recip_rank", "mrr")),
    Metric("rbp", RBP, "p", False, True, False, "(1 - p) sum_r rel_r p^(r - 1)"),
    Metric("nrbp", NRBP, "p", True, True, False, "RBP / RBP of the ideal order = RBP / (1 - p^R)",
           delta="product", bounds=True, listwise="nrbp_loss"),
    Metric("p", PREC, "k", False, True, False, "relevant items in the top k / k", aliases=("p_", "precision")),
    Metric("r", RECALL, "k", True, True, False, "relevant items in the top k / R", aliases=("recall_", "recall")),
    Metric("auc", AUC, "", True, True, False, "fraction of (relevant, non-relevant) pairs in order; ties 1/2",
           with_qrels=False),
    Metric("mean_rank", MEAN_RANK, "", True, False, False, "mean 1-based rank of the relevant items",
           with_qrels=False),
    Metric("max_rank", MAX_RANK, "", True, False, False, "1-based rank of the lowest relevant item",
           with_qrels=False),
    Metric("nrbp_loss", NRBP_LOSS, "", True, False, False,
           "sum over relevant items of (rank - 1) - R (R - 1) / 2 (Li et al. 2021, Eq 19; 0 is ideal)",
           bounds=True, with_qrels=False),
    Metric("success", SUCCESS, "k?", True, True, False,
           "1 if a relevant item is in the top k, else 0 (trec_eval success_k, hit rate@k)",
           aliases=("success_", "hit_rate")),
    Metric("rprec", RPREC, "", True, True, False, "P@R: relevant items in the top R / R",
           aliases=("r-precision", "r_precision")),
    Metric("bpref", BPREF, "", True, True, False,
           "(1/R) sum over ranked relevant d of 1 - min(n_d, R) / min(R, N); n_d judged non-relevant above d"),
    Metric("err", ERR, "k?", False, True, True,
           "sum_{r <= k} (1/r) x_r prod_{i<r} (1 - x_i), x = gain(l) / (gain(top grade) + 1)", top_grade=True,
           delta="cascade"),
    Metric("f1", F1, "k?", True, True, False, "2 P@k R@k / (P@k + R@k); without k over the ranked list",
           aliases=("set_f",)),
    Metric("judged", JUDGED, "k?", False, True, False, "judged items in the top k / k"),
    Metric("rbp_graded", RBP_GRADED, "p", False, True, True,
           "(1 - p) sum_r gain(l_r) / gain(top grade) p^(r - 1): RBP over judged documents, graded",
           top_grade=True),
    Metric("rbp_residual", RBP_RESIDUAL, "p", False, False, False,
           "(1 - p) sum over unjudged ranks p^(r - 1) + p^depth: what RBP could still gain"),
):
    register(_m)
del _m


# ----------------------------------------------------------------------------------------
# derived views


def with_delta(registry: Mapping[str, Metric] | None = None) -> dict[str, Metric]:
    """The families that have a LambdaRank swap delta (the objectives' metrics)."""
    reg = METRICS if registry is None else registry
    return {n: m for n, m in reg.items() if m.delta is not None}


def with_bounds(registry: Mapping[str, Metric] | None = None) -> dict[str, Metric]:
    """The families ``gbrank.bounds`` can bound."""
    reg = METRICS if registry is None else registry
    return {n: m for n, m in reg.items() if m.bounds}


def with_listwise(registry: Mapping[str, Metric] | None = None) -> dict[str, Metric]:
    """The families with a smoothed listwise torch loss."""
    reg = METRICS if registry is None else registry
    return {n: m for n, m in reg.items() if m.listwise is not None}


def known(families: Mapping[str, Metric] | None = None) -> str:
    """``"ap or ap@k, auc, ..."``: the families and how each is written, sorted."""
    fams = METRICS if families is None else families
    return ", ".join(fams[n].form for n in sorted(fams))


# ----------------------------------------------------------------------------------------
# specs and the parser


@dataclass(frozen=True)
class MetricSpec:
    """A parsed name: the family ``name`` and its kernel ``code``, cutoff ``k`` (0 = none),
    persistence ``p`` (0.0 = none), and for objective and loss names the ``bounding``
    suffix and the torch ``paradigm`` prefix.  ``str(spec)`` is the canonical name."""

    name: str
    code: int
    k: int = 0
    p: float = 0.0
    bounding: str | None = None
    paradigm: str | None = None

    @property
    def record(self) -> Metric:
        """The family's :class:`Metric` record."""
        return METRICS[self.name]

    @property
    def needs_relevant(self) -> bool:
        """True when the metric is undefined for a list without relevant items."""
        return self.record.needs_relevant

    @property
    def higher_is_better(self) -> bool:
        return self.record.higher_is_better

    @property
    def metric(self) -> str:
        """The evaluator name of the family with its parameter, without prefix or suffix."""
        if self.k:
            return f"{self.name}@{self.k}"
        if self.p:
            return f"{self.name}@{self.p:g}"
        return self.name

    def __str__(self) -> str:
        text = self.metric
        if self.paradigm:
            text = f"{self.paradigm}_{text}"
        if self.bounding:
            text = f"{text}+{self.bounding}"
        return text


def check_persistence(p, what: str = "p") -> float:
    """Return ``p`` as a float, raising unless 0 < p < 1."""
    try:
        value = float(p)
    except (TypeError, ValueError):
        raise ValueError(f"the persistence of {what!r} must be a number in (0, 1), got {p!r}") from None
    if not (0.0 < value < 1.0) or not math.isfinite(value):
        raise ValueError(f"the persistence of {what!r} must lie strictly between 0 and 1, got {p!r}")
    return value


def check_bounding(bounding) -> str | None:
    """None, or one of :data:`BOUNDINGS` (case and surrounding blanks ignored)."""
    if bounding is None:
        return None
    text = bounding.strip().lower() if isinstance(bounding, str) else bounding
    if text not in BOUNDINGS:
        raise ValueError(f"unknown bounding {bounding!r}; choose None or one of {sorted(BOUNDINGS)}")
    return text


def _split_alias(body: str) -> tuple[str, str, str]:
    """(family, "@" or "", parameter) of ``body``, resolving aliases: ``"map@10"``,
    ``"ndcg_cut_10"`` (an alias ending in ``_`` takes its parameter after it), ``"p_5"``."""
    name, at, arg = body.partition("@")
    table = aliases(METRICS)
    if name in table:
        return table[name], at, arg
    if not at:
        for alias, family in table.items():
            if alias.endswith("_") and name.startswith(alias) and len(name) > len(alias):
                return family, "@", name[len(alias):]
    return name, at, arg


_PLURAL = {"metric": "metrics", "objective metric": "objective metrics (with a swap delta)",
           "bounds metric": "metrics with bounds", "loss": "losses"}


def _cutoff(arg: str, text: str, name: str, what: str) -> int:
    if not arg.isdigit() or int(arg) < 1:
        raise ValueError(f"the {what} of {text!r} must be a positive integer, e.g. '{name}@10'")
    return int(arg)


def parse(text, *, families: Mapping[str, Metric] | None = None, bounding: bool = False,
          paradigm: bool = False, role: str = "metric", required: bool = True) -> MetricSpec:
    """Parse any metric-based name of gbrank into a :class:`MetricSpec`.

    Grammar: ``[paradigm_]family[@param][+bounding]``, e.g. ``"ndcg@10"``,
    ``"nrbp@0.95"``, ``"ap+minmax"``, ``"lambda_nrbp@0.9"``, ``"listwise_ndcg+minmax"``.
    Case and surrounding blanks are ignored; aliases map to their family.

    Parameters
    ----------
    text : str or MetricSpec
    families : mapping, optional
        The families accepted here (default: all of :data:`METRICS`), e.g.
        :func:`with_delta` for objectives; the error message lists exactly these.
    bounding, paradigm : bool
        Whether a ``+bounding`` suffix / a ``lambda_`` or ``listwise_`` prefix is allowed.
    role : str
        What the name is for (``"metric"``, ``"objective metric"``, ``"bounds metric"``,
        ``"loss"``), for the error messages; for objectives and bounds the cutoff is called
        truncation.
    required : bool, default True
        Refuse a name without its required parameter.  False where the caller also takes
        the parameter as a keyword (``LambdaObjective("nrbp", p=0.95)``) and completes the
        spec with :func:`merge_param`, which then refuses it if it is still missing.

    Raises
    ------
    TypeError
        ``text`` is not a string.
    ValueError
        An unknown family, a missing, malformed or unexpected parameter, a suffix or prefix
        not allowed here; the message lists the accepted families.

    Examples
    --------
    >>> str(parse("NDCG@10")), parse("nrbp@0.95").p
    ('ndcg@10', 0.95)
    >>> s = parse("lambda_nrbp@0.9+minmax", bounding=True, paradigm=True)
    >>> s.paradigm, s.name, s.p, s.bounding
    ('lambda', 'nrbp', 0.9, 'minmax')
    """
    if isinstance(text, MetricSpec):
        spec = text
        fams = METRICS if families is None else families
        if spec.name not in fams:
            raise ValueError(f"{role} {str(spec)!r} is not accepted here; known: {known(fams)}")
        return spec
    if not isinstance(text, str):
        raise TypeError(f"a {role} is named by a string such as 'ndcg@10' or 'nrbp@0.95', got {text!r}")
    fams = METRICS if families is None else families
    body, plus, suffix = text.strip().lower().partition("+")
    if plus and not bounding:
        raise ValueError(f"a {role} name takes no '+bounding' suffix, got {text!r}")
    bound = check_bounding(suffix) if plus else None
    prefix = None
    if paradigm:
        head, sep, rest = body.partition("_")
        if sep and head in PARADIGMS:
            prefix, body = head, rest
        else:
            raise ValueError(f"a {role} name built on a metric starts with one of {list(PARADIGMS)} "
                             f"(e.g. 'lambda_ndcg', 'listwise_ap'), got {text!r}")
    name, at, arg = _split_alias(body)
    if name not in fams:
        raise ValueError(f"unknown {role} {text!r}; known {_PLURAL.get(role, role + 's')}: {known(fams)}")
    rec = fams[name]
    cut = "truncation" if role in ("objective metric", "bounds metric") else "cutoff"
    if at and not arg:
        raise ValueError(f"{text!r} ends with '@' but gives no parameter; write e.g. {rec.form!r}")
    if rec.param == "":
        if at:
            raise ValueError(f"{role} {name!r} takes no parameter, got {text!r}")
        return MetricSpec(name, rec.code, bounding=bound, paradigm=prefix)
    if rec.param == "p":
        if not at and not required:
            return MetricSpec(name, rec.code, bounding=bound, paradigm=prefix)
        if not at:
            raise ValueError(f"{role} {name!r} needs a persistence p in (0, 1), e.g. '{name}@0.95'")
        return MetricSpec(name, rec.code, p=check_persistence(arg, what=text), bounding=bound, paradigm=prefix)
    if not at:
        if rec.param == "k" and required:
            raise ValueError(f"{role} {name!r} needs a {cut}, e.g. '{name}@10'; got {text!r}")
        return MetricSpec(name, rec.code, bounding=bound, paradigm=prefix)
    return MetricSpec(name, rec.code, k=_cutoff(arg, text, name, cut), bounding=bound, paradigm=prefix)


def parse_metric(metric: str | MetricSpec) -> MetricSpec:
    """Parse an evaluator metric name such as ``"ndcg@10"``, ``"nrbp@0.95"`` or ``"auc"``.

    Raises
    ------
    ValueError
        For an unknown family, a missing or malformed parameter; the message lists every
        known metric.

    Examples
    --------
    >>> str(parse_metric("ndcg@10")), parse_metric("nrbp@0.95").p
    ('ndcg@10', 0.95)
    """
    return parse(metric)


def merge_param(spec: MetricSpec, *, p=None, truncation=None, role: str = "objective") -> MetricSpec:
    """Merge keyword arguments ``p`` and ``truncation`` into a spec parsed from a name,
    refusing a value given twice with two different values and a parameter the family
    does not take (p only for ``param == "p"`` families)."""
    rec = spec.record
    if p is not None:
        if rec.param != "p":
            raise ValueError(f"p is the persistence of nRBP-like metrics; {role} {spec.name!r} takes no p "
                             f"(got p={p!r})")
        value = check_persistence(p, what=spec.name)
        if spec.p and spec.p != value:
            raise ValueError(f"p is given twice and differs: {str(spec)!r} and p={p!r}")
        spec = replace(spec, p=value)
    if rec.param == "p" and not spec.p:
        raise ValueError(f"{role} {spec.name!r} needs a persistence p in (0, 1): "
                         f"'{spec.name}@0.95' or p=0.95")
    if truncation is not None:
        if isinstance(truncation, bool) or not isinstance(truncation, (int, float)) \
                or not float(truncation).is_integer() or int(truncation) < 1:
            raise ValueError(f"truncation must be a positive integer or None (all pairs), got {truncation!r}")
        if rec.param in ("k?", "k"):
            if spec.k and spec.k != int(truncation):
                raise ValueError(f"truncation is given twice and differs: {str(spec)!r} and "
                                 f"truncation={truncation!r}")
            spec = replace(spec, k=int(truncation))
    return spec
