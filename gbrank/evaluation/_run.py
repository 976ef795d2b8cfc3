"""``gbrank.evaluate_run``: a run judged by qrels, with trec_eval's meaning.

R, the ideal DCG and every recall denominator come from the qrels: a relevant document the
run did not retrieve lowers AP, recall and nDCG (it counts in R and the ideal, never as
ranked).  A retrieved document without a judgement (no qrels line, or a negative grade, as
trec_eval reads them) is not relevant and counts as unjudged (bpref, judged@k, the RBP
residual).  The options carry trec_eval's flags: ``relevance_level`` (``-l``),
``complete`` (``-c``), ``depth`` (``-M``), ``judged_only`` (``-J``), and ``ties="trec_eval"``
orders tied scores by document id, descending, as trec_eval does.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from .._validation import check_labels, is_positive_int
from ..metrics import TIES, TIES_KEY, MetricSpec
from ._group import group_order, top_of_each_group
from ._evaluate import EvaluationResult, check_max_grade, check_settings, evaluate_sorted, gains_of, parse_metrics
from ._trec import as_qrels, as_run
from ._trec_measures import NOT_IN_POOL, UNJUDGED_IN_POOL, TrecEvaluationResult, expand, trec_values

#: the tie policies of ``evaluate_run``: the evaluator's, and trec_eval's document-id order
RUN_TIES = {**TIES, "trec_eval": TIES_KEY}
DEFAULT_RUN_METRICS = ("map", "ndcg", "ndcg_cut_10", "P_10", "recall_100", "recip_rank", "bpref", "Rprec")


def _codes(*columns) -> tuple[list[np.ndarray], pd.Index]:
    """Codes of string columns in one sorted category space."""
    cats = [c.cat.categories if isinstance(c.dtype, pd.CategoricalDtype) else pd.Index(pd.unique(c))
            for c in columns]
    union = cats[0]
    for other in cats[1:]:
        union = union.union(other)
    union = union.sort_values()
    out = []
    for c in columns:
        if isinstance(c.dtype, pd.CategoricalDtype):
            mapping = union.get_indexer(c.cat.categories)
            out.append(mapping[c.cat.codes.to_numpy()].astype(np.int64))
        else:
            out.append(union.get_indexer(c).astype(np.int64))
    return out, union


def evaluate_run(
    run,
    qrels,
    metrics: Sequence[str | MetricSpec] | str = DEFAULT_RUN_METRICS,
    *,
    relevance_level: float = 1,
    complete: bool = False,
    depth: int | None = None,
    judged_only: bool = False,
    ties: str = "average",
    gain="linear",
    empty: str = "zero",
    ap_divisor: str = "R",
    max_grade: float | None = None,
) -> EvaluationResult:
    """Evaluate a run against qrels as trec_eval does, with gbrank's metrics.

    Parameters
    ----------
    run : path, dict, DataFrame or ranx.Run
        A TREC run file (plain or gzip; ``qid Q0 docid rank score tag``, the rank column
        ignored, extra trailing fields and ``#`` comment lines allowed), a nested dict
        ``{qid: {docid: score}}`` (pytrec_eval's), a DataFrame with columns ``qid, docid,
        score``, or a ranx ``Run``.
    qrels : path, dict, DataFrame or ranx.Qrels
        A TREC qrels file (``qid 0 docid relevance``), ``{qid: {docid: relevance}}``, a
        DataFrame ``qid, docid, relevance``, or a ranx ``Qrels``.  A negative relevance marks
        a document as unjudged (trec_eval's reading).
    metrics : str or sequence of str
        gbrank's names (``"ndcg@10"``, ``"ap"``, ``"rbp@0.9"``), ranx's (``"mrr"``,
        ``"map@10"``, ``"hit_rate@10"``) or any of trec_eval's 34 measure families in its
        spelling, which come out under the names trec_eval prints: ``"map"``, ``"P_5"``,
        ``"ndcg_cut_10"``, ``"num_ret"``, ``"gm_map"``, ``"infAP"``, ``"set_F"``...; a bare
        family takes trec_eval's default parameters (``"P"``: ``P_5`` ... ``P_1000``;
        ``"iprec_at_recall"``: ``iprec_at_recall_0.00`` ... ``_1.00``), ``"P.5,10"`` gives
        parameters, and ``"all_trec"`` (also ``"official"``, ``"set"``) every numeric measure of
        trec_eval's ``-m all_trec`` in its order (``runid`` and ``relstring`` are text and left
        out).  trec_eval's own measures (the counts, ``iprec_at_recall``, ``gm_map``, ``infAP``,
        ``G``, ``Rndcg``, the ``set_`` measures...) always rank tied scores in trec_eval's order;
        those it shares with gbrank (map, P, recall, ndcg, ndcg_cut, map_cut, recip_rank, Rprec,
        bpref, success) follow ``ties``: trec_eval's numbers need ``ties="trec_eval"``.  Rank
        statistics that need every relevant item ranked (AUC, mean/max rank, the nRBP loss) are
        refused.
    relevance_level : float, default 1
        ``relevance >= relevance_level`` is relevant (trec_eval ``-l``).  nDCG's gains are
        the grades themselves, whatever the level.
    complete : bool, default False
        Score the queries of the qrels that have no run line as empty runs (trec_eval
        ``-c``); otherwise they are left out, and counted in ``settings``.
    depth : int, optional
        Keep only the first ``depth`` documents of each query (trec_eval ``-M``), in
        trec_eval's order (score descending, then document id descending).
    judged_only : bool, default False
        Remove the unjudged documents from the run before ranking (trec_eval ``-J``: the
        condensed lists of Sakai 2007).
    ties : {"average", "trec_eval", "pessimistic", "optimistic", "stable"}
        Tied scores: the exact expectation over their orders (default), trec_eval's order
        (document id descending), relevant last or first, or the file's order.
    gain : {"linear", "exp"} or mapping, default "linear"
        nDCG's gain: the grade itself (trec_eval), 2**grade - 1, or a gain per grade.
    empty : {"zero", "one", "skip"}, default "zero"
        Value of a metric undefined on a query without relevant documents (trec_eval: 0).
    ap_divisor, max_grade
        As in :func:`gbrank.evaluate` (default ``max_grade``: the largest grade of the qrels).

    Returns
    -------
    TrecEvaluationResult
        An :class:`EvaluationResult`: one row per evaluated query (sorted by query id as
        strings), one column per measure asked (trec_eval's printed name for a name in its
        vocabulary, gbrank's canonical name otherwise); ``n_items`` is the number of ranked
        documents.  ``settings`` holds the options and the numbers of queries only in the run
        (never scored: nothing judges them) and only in the qrels.  ``mean()`` gives trec_eval's
        summary figures (counts summed, ``num_q`` counted, ``gm_map``/``gm_bpref`` geometric).

    Examples
    --------
    >>> run = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
    >>> qrels = {"q1": {"d2": 1, "d9": 2}}          # d9 was not retrieved
    >>> r = evaluate_run(run, qrels, ["map", "recall_3", "ndcg"])
    >>> r.per_query.round(4).iloc[0, :3].tolist()    # AP = (1/2) / R, R = 2 from the qrels
    [0.25, 0.5, 0.2398]
    >>> r = evaluate_run(run, qrels, ["num_rel_ret", "set_P", "iprec_at_recall.0.5"], ties="trec_eval")
    >>> r.per_query.iloc[0, :3].round(4).to_dict()
    {'num_rel_ret': 1.0, 'set_P': 0.3333, 'iprec_at_recall_0.50': 0.5}
    """
    measures = expand(metrics)
    specs = list({str(m.spec): m.spec for m in measures if m.spec is not None}.values())
    specs = parse_metrics(specs) if specs else specs
    trec_only = [m for m in measures if m.spec is None]
    refused = [str(s) for s in specs if not s.record.with_qrels]
    if refused:
        raise ValueError(f"metric(s) {refused} need every relevant document ranked, which a run judged by qrels "
                         "does not give (relevant documents it did not retrieve have no rank); use "
                         "gbrank.evaluate on fully ranked lists for them")
    if not specs:  # evaluate_sorted computes one gbrank metric at least; its column is dropped below
        specs = parse_metrics(["p@1"])
    settings = check_settings(gain=gain, empty=empty, ties=ties, ap_divisor=ap_divisor,
                              relevance_threshold=relevance_level, tie_policies=RUN_TIES)
    if depth is not None and not is_positive_int(depth):
        raise ValueError(f"depth (trec_eval -M) must be a positive integer or None, got {depth!r}")
    run = as_run(run)
    qrels = as_qrels(qrels)
    empty_q = pd.Series(run.attrs.get("empty_qids", []), dtype=object)  # run queries with no document
    (run_q, qrels_q, empty_q), qid_names = _codes(run["qid"], qrels["qid"], empty_q)
    (run_d, qrels_d), _ = _codes(run["docid"], qrels["docid"])
    n_docs = np.int64(max(int(run_d.max(initial=0)), int(qrels_d.max(initial=0))) + 1)
    run_key = run_q * n_docs + run_d
    qrels_key = qrels_q * n_docs + qrels_d
    score = run["score"].to_numpy(dtype=np.float64)
    grade = qrels["relevance"].to_numpy(dtype=np.float64)

    # the judgement of each run row
    by_key = np.argsort(qrels_key, kind="stable")
    sorted_keys = qrels_key[by_key]
    pos = np.searchsorted(sorted_keys, run_key)
    pos_ok = np.minimum(pos, max(len(qrels_key) - 1, 0))
    found = (pos < len(qrels_key)) & (sorted_keys[pos_ok] == run_key) if len(qrels_key) else \
        np.zeros(len(run_key), dtype=bool)
    row_grade = np.where(found, grade[by_key][pos_ok] if len(qrels_key) else 0.0, 0.0)
    row_judged = found & (row_grade >= 0)
    row_label = np.where(row_judged, row_grade, 0.0)

    # which queries: those of the run that the qrels judge (with complete, every query of the qrels)
    in_qrels = np.zeros(len(qid_names), dtype=bool)
    in_qrels[qrels_q] = True
    in_run = np.zeros(len(qid_names), dtype=bool)
    in_run[run_q] = True
    in_run[empty_q] = True
    scored = in_qrels & (in_run | bool(complete))
    keep = scored[run_q]
    keys = run_d.astype(np.float64)  # document ids in string order: trec_eval's tie-break, descending
    if depth is not None:  # the depth cut (-M) comes first, in trec_eval's order, then -J, as in trec_eval
        # fixed types (int64 codes, float64 C arrays, int depth): one cached specialisation each
        order, starts = group_order(np.ascontiguousarray(run_q, dtype=np.int64), len(qid_names))
        keep &= top_of_each_group(order, starts, np.ascontiguousarray(score, dtype=np.float64), keys, int(depth))
    if judged_only:
        keep &= row_judged
    ranked = np.flatnonzero(keep)

    # judged documents of the scored queries that were not ranked: they count in R and the ideal
    judged_q = scored[qrels_q] & (grade >= 0)
    ranked_found = ranked[found[ranked]]
    matched = np.zeros(len(qrels_key), dtype=bool)
    matched[by_key[pos[ranked_found]]] = True
    extra = np.flatnonzero(judged_q & ~matched)

    # per query: its ranked rows (in file order) first, then the others
    q_all = np.concatenate([run_q[ranked], qrels_q[extra]])
    order, starts_all = group_order(np.ascontiguousarray(q_all, dtype=np.int64), len(qid_names))
    labels = np.concatenate([row_label[ranked], grade[extra]])[order]
    judged = np.concatenate([row_judged[ranked].astype(np.float64), np.ones(len(extra))])[order]
    scores = np.concatenate([score[ranked], np.zeros(len(extra))])[order]
    keys = np.concatenate([keys[ranked], np.zeros(len(extra))])[order]
    qids = np.flatnonzero(scored)
    starts = np.append(starts_all[qids], starts_all[-1]).astype(np.int64)
    n_ranked = np.bincount(run_q[ranked], minlength=len(qid_names))[qids].astype(np.int64)
    check_labels(labels, "linear" if not isinstance(gain, str) else gain, name="qrels relevance")
    max_grade = check_max_grade(max_grade, labels)
    if max_grade is None:
        judged_grades = grade[grade >= 0]
        max_grade = float(judged_grades.max()) if len(judged_grades) else 0.0
    extra_settings = {
        "complete": bool(complete), "depth": depth, "judged_only": bool(judged_only),
        "n_queries_only_in_run": int((in_run & ~in_qrels).sum()),
        "n_queries_only_in_qrels": int((in_qrels & ~in_run).sum()),
    }
    result = evaluate_sorted(specs, scores, labels, gains_of(labels, gain, "qrels relevance"), judged, starts,
                             n_ranked, np.asarray(qid_names[qids], dtype=object), settings, max_grade=max_grade,
                             extra_settings=extra_settings, keys=keys, ties_code=RUN_TIES[ties])

    # trec_eval's own measures: per query its ranked rows (score, document id, grade or a
    # not-in-pool / unjudged code), then the grades of every judged document of its qrels
    trec = pd.DataFrame(index=pd.Index(np.asarray(qid_names[qids], dtype=object), name="qid"))
    if trec_only:
        judged_rows = np.flatnonzero(scored[qrels_q] & (grade >= 0))
        codes = np.where(row_judged, row_grade, np.where(found, UNJUDGED_IN_POOL, NOT_IN_POOL))
        q_t = np.concatenate([run_q[ranked], qrels_q[judged_rows]])
        order_t, starts_t = group_order(np.ascontiguousarray(q_t, dtype=np.int64), len(qid_names))
        zeros = np.zeros(len(judged_rows))
        values = trec_values(
            trec_only, np.concatenate([score[ranked], zeros])[order_t],
            np.concatenate([run_d[ranked].astype(np.float64), zeros])[order_t],
            np.concatenate([codes[ranked], grade[judged_rows]])[order_t],
            np.append(starts_t[qids], starts_t[-1]), n_ranked,
            np.bincount(qrels_q[judged_rows], minlength=len(qid_names))[qids], settings["relevance_threshold"])
        trec = pd.DataFrame(values, columns=[m.name for m in trec_only], index=trec.index)
    base = result.per_query
    table = pd.DataFrame({m.name: (base[str(m.spec)] if m.spec is not None else trec.loc[base.index, m.name])
                          for m in measures}, index=base.index)
    for m in measures:  # the counts are integers, as trec_eval prints them
        if m.family is not None and m.family.integer:
            table[m.name] = table[m.name].astype(np.int64)
    table["n_items"] = base["n_items"]
    table["n_relevant"] = base["n_relevant"]
    return TrecEvaluationResult(
        per_query=table, metrics=tuple(m.name for m in measures), settings=result.settings,
        n_empty=result.n_empty, skipped_qids=result.skipped_qids,
        aggregation={m.name: m.family.aggregate for m in measures
                     if m.family is not None and m.family.aggregate != "mean"})
