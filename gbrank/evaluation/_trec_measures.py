"""trec_eval's measure families in gbrank's evaluator: names, default parameters, kernels.

trec_eval (and pytrec_eval, which is trec_eval in-process) offers 34 measure families.  Ten of
them are gbrank metrics under other names (``map`` is ``ap``, ``P_5`` is ``p@5``, ``ndcg_cut_10``
is ``ndcg@10``, ...) and are computed by gbrank's metric kernels, with every option of
:func:`gbrank.evaluate_run`.  The others exist only in trec_eval's vocabulary (the counts,
the interpolated precision-recall curve, geometric means, the set measures, infAP, G, Rndcg,
...): they are computed here, by one numba kernel per ranked list and a parallel loop over the
lists, always on trec_eval's order of tied scores (score descending, then document id
descending), on which trec_eval defines them.

Names.  A name written in trec_eval's vocabulary (its spelling, case included) comes out under
the name trec_eval prints:

- a bare family takes trec_eval's default parameters: ``P`` is ``P_5 P_10 P_15 P_20 P_30 P_100
  P_200 P_500 P_1000``, ``success`` is ``success_1 success_5 success_10``, ``iprec_at_recall`` is
  the 11 points ``iprec_at_recall_0.00`` ... ``iprec_at_recall_1.00``, ``Rprec_mult`` the
  multiples 0.2 ... 2.0 of R;
- ``family.a,b`` gives parameters (``P.5,10``, ``ndcg_cut.10``, ``relative_P.5``,
  ``success.1,5``, ``iprec_at_recall.0.5``, ``set_F.0.5``, ``utility.1,-1,0,0``) and
  ``family_a`` one cutoff (``P_5``, ``ndcg_cut_10``, ``iprec_at_recall_0.10``), printed as
  trec_eval prints them (cutoffs sorted; fractions with two decimals: ``iprec_at_recall_0.50``);
- the nicknames ``all_trec``, ``official`` and ``set`` give their measures in trec_eval's order.

Summary figures (:meth:`TrecEvaluationResult.mean`) follow trec_eval: the counts ``num_ret``,
``num_rel``, ``num_rel_ret``, ``num_nonrel_judged_ret`` are summed over the queries, ``num_q`` is
the number of queries, ``gm_map`` and ``gm_bpref`` are geometric means (their per-query values
are ``log(max(value, 1e-5))``, what trec_eval accumulates), every other measure is the mean.
The text measures ``runid`` and ``relstring`` are not numbers; ``all_trec`` leaves them out and
asking for them raises.

Reference: trec_eval 9 (the version in pytrec_eval 0.5), ``measures.c`` and ``m_*.c``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numba import njit, prange

from ..metrics import MetricSpec, parse_metric
from ._evaluate import EvaluationResult

# kernel codes of the measures only trec_eval has
(NUM_RET, NUM_REL, NUM_REL_RET, NUM_NONREL_JUDGED_RET, NUM_Q, GM_MAP, GM_BPREF, IPREC_AT_RECALL, PT11_AVG,
 RPREC_MULT, RELATIVE_P, INFAP, G, BING, NDCG_REL, RNDCG, UTILITY, SET_P, SET_RELATIVE_P, SET_RECALL, SET_MAP,
 SET_F) = range(22)

#: what trec_eval puts in place of a zero before taking a logarithm (gm_map, gm_bpref)
MIN_GEO_MEAN = 1e-5
#: infAP's smoothing constant
INFAP_EPSILON = 1e-5
#: ranked-document codes: not in the qrels (trec_eval's "not in the pool"), in the qrels with a
#: negative grade (in the pool, unjudged)
NOT_IN_POOL = -1.0
UNJUDGED_IN_POOL = -2.0

_LONG_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALL_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


@dataclass(frozen=True)
class TrecFamily:
    """One of trec_eval's measure families.

    Attributes
    ----------
    name : str
        trec_eval's name (case matters: ``P``, ``Rprec``, ``infAP``).
    params : {"", "cuts", "fractions", "numbers"}
        What follows ``name.``: nothing; integer cutoffs (one output each, ``P_5``); fractions
        (one output each, ``iprec_at_recall_0.10``); numbers of a single output
        (``set_F.0.5``, printed ``set_F_0.5``).
    default : tuple
        trec_eval's default parameters.
    gbrank : str or None
        The gbrank family that computes it (``"p"`` for ``P``), with the cutoff after ``@``;
        None: computed by this module's kernel ``code``.
    code : int
        Kernel code of a trec_eval-only family (-1 for gbrank's).
    aggregate : {"mean", "sum", "count", "geometric"}
        How trec_eval's summary line combines the queries.
    integer : bool
        trec_eval prints it as an integer (the counts).
    per_query : bool
        trec_eval prints it per query under ``-q`` (not ``num_q``, ``gm_map``, ``gm_bpref``).
    text : bool
        Not a number (``runid``, ``relstring``): refused.
    """

    name: str
    params: str = ""
    default: tuple = ()
    gbrank: str | None = None
    code: int = -1
    aggregate: str = "mean"
    integer: bool = False
    per_query: bool = True
    text: bool = False


#: trec_eval's families in trec_eval's order (the order it prints them in)
FAMILIES: dict[str, TrecFamily] = {f.name: f for f in (
    TrecFamily("runid", text=True),
    TrecFamily("num_q", code=NUM_Q, aggregate="count", integer=True, per_query=False),
    TrecFamily("num_ret", code=NUM_RET, aggregate="sum", integer=True),
    TrecFamily("num_rel", code=NUM_REL, aggregate="sum", integer=True),
    TrecFamily("num_rel_ret", code=NUM_REL_RET, aggregate="sum", integer=True),
    TrecFamily("map", gbrank="ap"),
    TrecFamily("gm_map", code=GM_MAP, aggregate="geometric", per_query=False),
    TrecFamily("Rprec", gbrank="rprec"),
    TrecFamily("bpref", gbrank="bpref"),
    TrecFamily("recip_rank", gbrank="rr"),
    TrecFamily("iprec_at_recall", "fractions", _RECALL_POINTS, code=IPREC_AT_RECALL),
    TrecFamily("P", "cuts", _LONG_CUTS, gbrank="p"),
    TrecFamily("relstring", text=True),
    TrecFamily("recall", "cuts", _LONG_CUTS, gbrank="r"),
    TrecFamily("infAP", code=INFAP),
    TrecFamily("gm_bpref", code=GM_BPREF, aggregate="geometric", per_query=False),
    TrecFamily("Rprec_mult", "fractions", (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0), code=RPREC_MULT),
    TrecFamily("utility", "numbers", (1.0, -1.0, 0.0, 0.0), code=UTILITY),
    TrecFamily("11pt_avg", "numbers", _RECALL_POINTS, code=PT11_AVG),
    TrecFamily("binG", code=BING),
    TrecFamily("G", code=G),
    TrecFamily("ndcg", gbrank="ndcg"),
    TrecFamily("ndcg_rel", code=NDCG_REL),
    TrecFamily("Rndcg", code=RNDCG),
    TrecFamily("ndcg_cut", "cuts", _LONG_CUTS, gbrank="ndcg"),
    TrecFamily("map_cut", "cuts", _LONG_CUTS, gbrank="ap"),
    TrecFamily("relative_P", "cuts", _LONG_CUTS, code=RELATIVE_P),
    TrecFamily("success", "cuts", (1, 5, 10), gbrank="success"),
    TrecFamily("set_P", code=SET_P),
    TrecFamily("set_relative_P", code=SET_RELATIVE_P),
    TrecFamily("set_recall", code=SET_RECALL),
    TrecFamily("set_map", code=SET_MAP),
    TrecFamily("set_F", "numbers", (1.0,), code=SET_F),
    TrecFamily("num_nonrel_judged_ret", code=NUM_NONREL_JUDGED_RET, aggregate="sum", integer=True),
)}

#: the public name of :data:`FAMILIES`: trec_eval's 34 measure families, in its order
TREC_FAMILIES = FAMILIES

#: trec_eval's nicknames for sets of families
NICKNAMES = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
    "all_trec": tuple(FAMILIES),
}
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


@dataclass(frozen=True)
class Measure:
    """One output column asked for: its printed ``name``, its ``family`` and, for a gbrank
    family, the ``spec`` that computes it, for a trec_eval-only one its kernel ``code`` and
    parameters."""

    name: str
    family: TrecFamily | None
    spec: MetricSpec | None = None
    code: int = -1
    params: tuple = ()


def _family_of(text: str):
    """(family, separator, parameter text) when ``text`` is written in trec_eval's vocabulary,
    else None: ``P`` -> (P, "", ""), ``P.5,10`` -> (P, ".", "5,10"), ``ndcg_cut_10`` ->
    (ndcg_cut, "_", "10").  The longest family name that fits wins (``map_cut_5``)."""
    if text in FAMILIES:
        return FAMILIES[text], "", ""
    best = None
    for name in FAMILIES:
        if len(text) > len(name) + 1 and text.startswith(name) and text[len(name)] in "._":
            if best is None or len(name) > len(best):
                best = name
    if best is None:
        return None
    family, sep, rest = FAMILIES[best], text[len(best)], text[len(best) + 1:]
    if sep == "_" and family.params not in ("cuts", "fractions"):
        return None  # e.g. set_F_1: trec_eval writes parameters after a dot
    return family, sep, rest


def _params(family: TrecFamily, text: str, asked: str) -> tuple:
    parts = [p.strip() for p in text.split(",")]
    if family.params == "":
        raise ValueError(f"trec_eval measure {family.name!r} takes no parameter, got {asked!r}")
    if family.params == "cuts":
        if not all(p.isdigit() and int(p) > 0 for p in parts):
            raise ValueError(f"the cutoffs of {asked!r} must be positive integers separated by commas, "
                             f"e.g. '{family.name}.5,10'")
        values = sorted(int(p) for p in parts)
    else:
        if not all(_NUMBER.match(p) for p in parts):
            raise ValueError(f"the parameters of {asked!r} must be numbers separated by commas, "
                             f"e.g. '{family.name}.{','.join(f'{v:g}' for v in family.default)}'")
        values = [float(p) for p in parts]
        if family.params == "fractions":
            values = sorted(values)
    if family.params in ("cuts", "fractions") and len(set(values)) != len(values):
        raise ValueError(f"{asked!r} repeats a parameter; give each once")
    if family.name == "utility" and len(values) != 4:
        raise ValueError(f"utility takes 4 coefficients (relevant retrieved, non-relevant retrieved, relevant "
                         f"not retrieved, non-relevant not retrieved), e.g. 'utility.1,-1,0,0'; got {asked!r}")
    if family.name == "set_F" and len(values) != 1:
        raise ValueError(f"set_F takes one parameter, the weight of recall (default 1), e.g. 'set_F.0.5'; "
                         f"got {asked!r}")
    return tuple(values)


def _measures_of(family: TrecFamily, params: tuple | None, raw: str | None) -> list[Measure]:
    """The output columns of ``family`` with ``params`` (None: trec_eval's defaults); ``raw``
    is the parameter text as written, part of the printed name of single-output families."""
    values = family.default if params is None else params
    if family.params in ("cuts", "fractions"):
        out = []
        for v in values:
            name = f"{family.name}_{v}" if family.params == "cuts" else f"{family.name}_{v:3.2f}"
            spec = parse_metric(f"{family.gbrank}@{v}") if family.gbrank else None
            out.append(Measure(name, family, spec, family.code, (float(v),)))
        return out
    name = family.name if params is None else f"{family.name}_{raw}"
    spec = parse_metric(family.gbrank) if family.gbrank else None
    return [Measure(name, family, spec, family.code, tuple(float(v) for v in values))]


def expand(metrics) -> list[Measure]:
    """The output columns of the names asked for, in their order (a nickname's families in
    trec_eval's order).  Names outside trec_eval's vocabulary are gbrank's (or ranx's) and keep
    gbrank's canonical name (``ap``, ``ndcg@10``); trec_eval's come out as trec_eval prints them.

    Raises
    ------
    ValueError
        A text measure (``runid``, ``relstring``), a measure whose gain parameters gbrank does not
        take (``ndcg.1=3``: use ``gain=``), malformed or repeated parameters, an unknown name (the
        message lists gbrank's metrics), an output column asked twice.
    """
    if isinstance(metrics, (str, MetricSpec)):
        metrics = [metrics]
    if not isinstance(metrics, (list, tuple)) and not hasattr(metrics, "__iter__"):
        raise TypeError(f"metrics must be a metric name or a list of them, e.g. ['map', 'P_10'], "
                        f"got {type(metrics).__name__} {metrics!r:.40}")
    out: list[Measure] = []
    for asked in metrics:
        if isinstance(asked, MetricSpec):
            out.append(Measure(str(asked), None, asked))
            continue
        if not isinstance(asked, str):
            raise TypeError(f"a metric is named by a string such as 'map' or 'ndcg@10', got {asked!r}")
        text = asked.strip()
        if text in NICKNAMES:
            for name in NICKNAMES[text]:
                if not FAMILIES[name].text:
                    out.extend(_measures_of(FAMILIES[name], None, None))
            continue
        found = _family_of(text)
        if found is None:
            spec = parse_metric(text)
            out.append(Measure(str(spec), None, spec))
            continue
        family, sep, rest = found
        if family.text:
            raise ValueError(f"trec_eval's {family.name!r} is text (the run's tag, or the relevance of each "
                             "ranked document as a string), not a number; gbrank's results hold numbers")
        if family.name in ("ndcg", "ndcg_rel", "Rndcg", "G") and sep:
            raise ValueError(f"gbrank takes no gain parameters after {family.name!r} ({asked!r}): the gain of "
                             "each grade is its grade, as trec_eval's default; for nDCG with other gains use "
                             "gbrank's 'ndcg' with gain= (a mapping grade -> gain)")
        if not sep:
            out.extend(_measures_of(family, None, None))
        elif sep == "_" and "," in rest:
            raise ValueError(f"write several parameters after a dot, as trec_eval does: "
                             f"'{family.name}.{rest}', not {asked!r}")
        else:
            out.extend(_measures_of(family, _params(family, rest, asked), rest))
    if not out:
        raise ValueError("no metric was requested; pass e.g. metrics=['map', 'P_10'] or ['all_trec']")
    names = [m.name for m in out]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"a metric is requested twice (a nickname's or a bare family's measures count as "
                         f"asked): {twice}")
    return out


def summary_only(name: str) -> bool:
    """True for the measures trec_eval prints only on its summary line (``num_q``, ``gm_map``,
    ``gm_bpref``)."""
    family = _family_of(name)
    return family is not None and not family[0].per_query


def is_integer(name: str) -> bool:
    """True for the measures trec_eval prints as integers (the counts)."""
    family = _family_of(name)
    return family is not None and family[0].integer


# ---------------------------------------------------------------------------------------
# kernels: one ranked list in trec_eval's order


@njit(cache=True)
def _ap_sum(isrel):
    """Sum over the relevant ranks r of (relevant in the top r) / r."""
    total = 0.0
    seen = 0
    for i in range(isrel.shape[0]):
        if isrel[i]:
            seen += 1
            total += seen / (i + 1.0)
    return total


@njit(cache=True)
def _bpref(rel, level, n_rel, n_nonrel):
    total = 0.0
    nonrel = 0
    for j in range(rel.shape[0]):
        g = rel[j]
        if g < 0.0:
            continue  # not judged
        if g < level:
            nonrel += 1
        elif nonrel > 0:
            total += 1.0 - min(nonrel, n_rel) / min(n_nonrel, n_rel)
        else:
            total += 1.0
    return total / n_rel if n_rel > 0 else total


@njit(cache=True)
def _interpolated(best_below, rel_ranks, n_rel, fraction):
    """Interpolated precision at recall ``fraction``: the highest precision at or below the
    rank where ``int(fraction * R + 0.9)`` relevant documents have been seen (cut 0: the first
    relevant one); 0 when the run never reaches that many; with no document ranked, 0 (trec_eval
    -c ranks a placeholder document there).  ``best_below[i]``: the highest precision at ranks
    i + 1 and below; ``rel_ranks``: the 0-based ranks of the relevant documents."""
    n_rel_ret = rel_ranks.shape[0]
    cut = int(fraction * n_rel + 0.9)
    if cut > n_rel_ret or n_rel_ret == 0:
        return 0.0
    return best_below[rel_ranks[max(cut, 1) - 1]]


@njit(cache=True)
def _infap(rel, level, n_rel):
    total = 0.0
    rel_seen = 0
    nonrel = 0
    pool_unjudged = 0
    for j in range(rel.shape[0]):
        g = rel[j]
        if g == NOT_IN_POOL:
            continue
        if g == UNJUDGED_IN_POOL:
            pool_unjudged += 1
            continue
        if g < level:
            nonrel += 1
            continue
        rel_seen += 1
        if j == 0:
            total += 1.0
        else:
            fj = float(j)
            above = rel_seen - 1
            total += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((above + nonrel + pool_unjudged) / fj) * \
                ((above + INFAP_EPSILON) / (above + nonrel + 2.0 * INFAP_EPSILON))
    return total / n_rel if n_rel > 0 else total


@njit(cache=True)
def _gain(g):
    return g if g > 0.0 else 0.0


@njit(cache=True)
def _ideal_at(ideal, i):
    """The i-th gain of the ideal order (0 past the positive grades)."""
    return ideal[i] if i < ideal.shape[0] and ideal[i] > 0.0 else 0.0


@njit(cache=True)
def _g_measure(rel, ideal):
    """G: sum of gain / log2(2 + cost so far - gain so far), cost the ideal gains (at least 1
    per rank), over the total gain of the qrels."""
    total_ideal = 0.0
    for v in ideal:
        if v > 0.0:
            total_ideal += v
    if total_ideal <= 0.0:
        return 0.0
    cost = 0.0
    got = 0.0
    value = 0.0
    for i in range(rel.shape[0]):
        g = _gain(rel[i])
        got += g
        cost += max(_ideal_at(ideal, i), 1.0)
        if g != 0.0:
            value += g / math.log2(2.0 + cost - got)
    return value / total_ideal


@njit(cache=True)
def _bin_g(isrel, n_rel):
    total = 0.0
    seen = 0
    for i in range(isrel.shape[0]):
        if isrel[i]:
            seen += 1
            total += 1.0 / math.log2(3.0 + i - seen)
    return total / n_rel if seen > 0 else 0.0


@njit(cache=True)
def _n_positive(ideal):
    count = 0
    for v in ideal:
        if v > 0.0:
            count += 1
    return count


@njit(cache=True)
def _ndcg_rel(rel, ideal):
    """nDCG averaged over the documents with a positive gain: at the rank of each one
    retrieved, and at the end of the run for each one not retrieved."""
    n_pos = _n_positive(ideal)
    if n_pos == 0:
        return 0.0
    n = rel.shape[0]
    dcg = 0.0
    idcg = 0.0
    total = 0.0
    found = 0
    for i in range(max(n, n_pos)):
        if i < n:
            g = _gain(rel[i])
            if g != 0.0:
                dcg += g / math.log2(i + 2.0)
        else:
            g = 0.0
        if i < n_pos:
            idcg += ideal[i] / math.log2(i + 2.0)
        if i < n and g > 0.0:
            total += dcg / idcg
            found += 1
    total += (n_pos - found) * dcg / idcg
    return total / n_pos if total > 0.0 else 0.0


@njit(cache=True)
def _rndcg(rel, ideal, n_rel):
    """nDCG averaged at the R levels: the ranks where the ideal gain changes (the boundaries
    between grades of the qrels, and the end of the positive grades), and at the end of the
    run when it goes on at least two ranks past them."""
    if n_rel == 0:
        return 0.0
    n_pos = _n_positive(ideal)
    n = rel.shape[0]
    top = max(n, n_pos + 1)
    dcg = np.zeros(top + 1)
    idcg = np.zeros(top + 1)
    for i in range(top):
        g = _gain(rel[i]) if i < n else 0.0
        dcg[i + 1] = dcg[i] + (g / math.log2(i + 2.0) if g != 0.0 else 0.0)
        v = _ideal_at(ideal, i)
        idcg[i + 1] = idcg[i] + (v / math.log2(i + 2.0) if v > 0.0 else 0.0)
    total = 0.0
    count = 0
    for b in range(1, n_pos + 1):
        if _ideal_at(ideal, b) != _ideal_at(ideal, b - 1):
            total += dcg[min(b, n)] / idcg[b]
            count += 1
    if n > n_pos + 1:
        total += dcg[n] / idcg[n_pos]
        count += 1
    return total / count if count > 0 else 0.0


@njit(cache=True)
def trec_list(rel, ideal, level, codes, pstart, pend, params, out):
    """trec_eval's own measures of one list into ``out`` (one value per column).

    ``rel``: the ranked documents in trec_eval's order, each its grade (>= 0, judged),
    :data:`NOT_IN_POOL` or :data:`UNJUDGED_IN_POOL`; ``ideal``: the grades of every judged
    document of the query in the qrels, descending; ``level``: trec_eval's ``-l``; column c is
    measure ``codes[c]`` with parameters ``params[pstart[c]:pend[c]]``."""
    n = rel.shape[0]
    isrel = np.zeros(n, dtype=np.int64)
    cum = np.zeros(n + 1, dtype=np.int64)  # relevant documents in the top i
    n_nonrel_judged = 0
    for i in range(n):
        if rel[i] >= level:
            isrel[i] = 1
        elif rel[i] >= 0.0:
            n_nonrel_judged += 1
        cum[i + 1] = cum[i] + isrel[i]
    n_rel_ret = cum[n]
    rel_ranks = np.flatnonzero(isrel)
    best_below = np.zeros(n)  # the highest precision at rank i + 1 or below
    best = 0.0
    for i in range(n - 1, -1, -1):
        best = max(best, cum[i + 1] / (i + 1.0))
        best_below[i] = best
    n_rel = 0
    n_nonrel = 0
    for v in ideal:
        if v >= level:
            n_rel += 1
        else:
            n_nonrel += 1
    for c in range(codes.shape[0]):
        code = codes[c]
        p = params[pstart[c]:pend[c]]
        if code == NUM_RET:
            value = float(n)
        elif code == NUM_REL:
            value = float(n_rel)
        elif code == NUM_REL_RET:
            value = float(n_rel_ret)
        elif code == NUM_NONREL_JUDGED_RET:
            value = float(n_nonrel_judged)
        elif code == NUM_Q:
            value = 1.0
        elif code == GM_MAP:
            ap = _ap_sum(isrel) / n_rel if n_rel_ret > 0 else 0.0
            value = math.log(max(ap, MIN_GEO_MEAN))
        elif code == GM_BPREF:
            value = math.log(max(_bpref(rel, level, n_rel, n_nonrel), MIN_GEO_MEAN))
        elif code == IPREC_AT_RECALL:
            value = _interpolated(best_below, rel_ranks, n_rel, p[0])
        elif code == PT11_AVG:
            value = 0.0
            for fraction in p:
                value += _interpolated(best_below, rel_ranks, n_rel, fraction)
            value /= p.shape[0]
        elif code == RPREC_MULT:
            cut = int(p[0] * n_rel + 0.9)
            value = cum[min(cut, n)] / cut if cut > 0 else 0.0
        elif code == RELATIVE_P:
            k = int(p[0])
            value = cum[min(k, n)] / min(k, n_rel) if n_rel > 0 else 0.0
        elif code == INFAP:
            value = _infap(rel, level, n_rel)
        elif code == G:
            value = _g_measure(rel, ideal)
        elif code == BING:
            value = _bin_g(isrel, n_rel)
        elif code == NDCG_REL:
            value = _ndcg_rel(rel, ideal)
        elif code == RNDCG:
            value = _rndcg(rel, ideal, n_rel)
        elif code == UTILITY:  # trec_eval -N (documents in the collection) is 0
            value = p[0] * n_rel_ret + p[1] * (n - n_rel_ret) + p[2] * (n_rel - n_rel_ret) + \
                p[3] * (n_rel_ret - n - n_rel)
        elif code == SET_P:
            value = n_rel_ret / n if n > 0 else 0.0
        elif code == SET_RELATIVE_P:
            value = n_rel_ret / min(n, n_rel) if n > 0 and n_rel > 0 else 0.0
        elif code == SET_RECALL:
            value = n_rel_ret / n_rel if n_rel > 0 else 0.0
        elif code == SET_MAP:
            value = (float(n_rel_ret) * n_rel_ret) / (float(n) * n_rel) if n > 0 and n_rel > 0 else 0.0
        elif code == SET_F:
            if n_rel_ret > 0:
                prec = n_rel_ret / n
                rec = n_rel_ret / n_rel
                value = (p[0] + 1.0) * prec * rec / (p[0] * prec + rec)
            else:
                value = 0.0
        else:
            raise ValueError("unknown trec_eval measure code")
        out[c] = value


@njit(parallel=True, cache=True)
def trec_lists(scores, keys, grades, starts, n_ranked, n_judged, level, codes, pstart, pend, params):
    """:func:`trec_list` of every list: list i is rows ``starts[i]:starts[i+1]``, its first
    ``n_ranked[i]`` rows ranked (scores, document-id keys, grade codes), the judged grades of the
    query's qrels in rows ``starts[i+1] - n_judged[i]:starts[i+1]`` (its ranked judged rows
    repeated there)."""
    n_lists = starts.shape[0] - 1
    out = np.zeros((n_lists, codes.shape[0]))
    for q in prange(n_lists):
        a = starts[q]
        b = a + n_ranked[q]
        rows = np.arange(a, b)
        by_key = rows[np.argsort(-keys[a:b], kind="mergesort")]
        ranked = by_key[np.argsort(-scores[by_key], kind="mergesort")]
        rel = grades[ranked]
        ideal = -np.sort(-grades[starts[q + 1] - n_judged[q]:starts[q + 1]])
        row = np.zeros(codes.shape[0])
        trec_list(rel, ideal, level, codes, pstart, pend, params, row)
        out[q] = row
    return out


def trec_values(measures: list[Measure], scores, keys, grades, starts, n_ranked, n_judged, level) -> np.ndarray:
    """Values[list, measure] of trec_eval-only ``measures`` (see :func:`trec_lists`)."""
    codes = np.array([m.code for m in measures], dtype=np.int64)
    sizes = np.array([len(m.params) for m in measures], dtype=np.int64)
    pend = np.cumsum(sizes).astype(np.int64)
    pstart = (pend - sizes).astype(np.int64)
    params = np.array([v for m in measures for v in m.params] or [0.0], dtype=np.float64)
    return trec_lists(np.ascontiguousarray(scores, dtype=np.float64), np.ascontiguousarray(keys, dtype=np.float64),
                      np.ascontiguousarray(grades, dtype=np.float64), np.ascontiguousarray(starts, dtype=np.int64),
                      np.ascontiguousarray(n_ranked, dtype=np.int64), np.ascontiguousarray(n_judged, dtype=np.int64),
                      float(level), codes, pstart, pend, params)


# ---------------------------------------------------------------------------------------
# the result: trec_eval's summary figures


@dataclass(frozen=True)
class TrecEvaluationResult(EvaluationResult):
    """What :func:`gbrank.evaluate_run` returns: an :class:`EvaluationResult` whose summary
    figures are trec_eval's.

    Attributes
    ----------
    aggregation : dict
        Column -> how trec_eval's summary line combines the queries, for the columns that are
        not means: ``"sum"`` (``num_ret``, ``num_rel``, ``num_rel_ret``,
        ``num_nonrel_judged_ret``), ``"count"`` (``num_q``), ``"geometric"`` (``gm_map``,
        ``gm_bpref``, whose per-query values are ``log(max(value, 1e-5))``).
    """

    aggregation: dict = field(default_factory=dict)

    def mean(self) -> pd.Series:
        """trec_eval's summary figure of each metric: the mean over the queries, except the
        counts (summed), ``num_q`` (the number of queries) and the geometric means
        (``exp`` of the mean of the per-query logarithms)."""
        out = super().mean()
        n = len(self.per_query)
        for column, how in self.aggregation.items():
            values = self.per_query[column]
            if how == "sum":
                out[column] = float(values.sum())
            elif how == "count":
                out[column] = float(n)
            elif how == "geometric":
                out[column] = float(np.exp(values.mean())) if n else np.nan
        return out

    def summary(self, confidence: float = 0.95) -> pd.DataFrame:
        """As :meth:`EvaluationResult.summary`, with trec_eval's summary figure as ``mean``:
        a sum's interval is the mean's times the number of queries, a geometric mean's is the
        interval of the mean logarithm, exponentiated; ``num_q`` has no spread."""
        table = super().summary(confidence)
        n = len(self.per_query)
        for column, how in self.aggregation.items():
            row = table.loc[column].copy()
            if how == "sum":
                row[["mean", "std", "ci_low", "ci_high"]] = row[["mean", "std", "ci_low", "ci_high"]] * \
                    np.array([n, 1.0, n, n])
            elif how == "count":
                row[["mean", "std", "ci_low", "ci_high"]] = [float(n), 0.0, float(n), float(n)]
            elif how == "geometric":
                row[["mean", "ci_low", "ci_high"]] = np.exp(row[["mean", "ci_low", "ci_high"]].astype(float))
            table.loc[column] = row
        return table


def trec_lines(result: EvaluationResult, *, per_query: bool = False, digits: int = 4, names=None) -> list[str]:
    """trec_eval's output lines of ``result``: ``measure<TAB>qid<TAB>value``, with ``-q`` the
    lines of each query (in query order, measures in the order asked) before the summary lines
    (``all``); counts printed as integers, ``num_q``, ``gm_map`` and ``gm_bpref`` on the summary
    line only, as trec_eval prints them.

    Parameters
    ----------
    result : EvaluationResult
        From :func:`gbrank.evaluate_run`.
    per_query : bool
        trec_eval's ``-q``.
    digits : int
        Decimals (trec_eval: 4).
    names : mapping, optional
        Printed name of each column (default: the column names).
    """
    columns = list(result.metrics)
    shown = [str((names or {}).get(c, c)) for c in columns]
    width = max(22, *(len(s) for s in shown))

    def line(name, column, qid, value):
        text = str(int(round(value))) if is_integer(column) and np.isfinite(value) else f"{value:.{digits}f}"
        return f"{name:<{width}}\t{qid}\t{text}"

    out = []
    if per_query:
        table = result.per_query
        for qid, row in zip(table.index, table[columns].itertuples(index=False)):
            out.extend(line(s, c, qid, v) for s, c, v in zip(shown, columns, row) if not summary_only(c))
    means = result.mean()
    out.extend(line(s, c, "all", float(means[c])) for s, c in zip(shown, columns))
    return out
