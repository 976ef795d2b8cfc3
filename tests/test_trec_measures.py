"""trec_eval's 34 measure families in ``gbrank.evaluate_run``: every numeric measure of
``all_trec`` against trec_eval itself (pytrec_eval) under each of its flags, trec_eval's names
and default parameters, its summary figures and printed lines, and the flags pytrec_eval cannot
express (``-M``, ``-c``) against trec_eval's semantics worked out by hand."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from gbrank.evaluation import TrecEvaluationResult, evaluate_run, trec_lines
from gbrank.evaluation._trec_measures import FAMILIES, NICKNAMES, expand

pytrec_eval = pytest.importorskip("pytrec_eval")

TEXT = {"runid", "relstring"}


def _random_case(rng, n_queries):
    """Run and qrels dicts with graded and negative (unjudged) judgements, relevant documents
    the run misses, retrieved documents without a judgement, many tied scores, queries on one
    side only, queries without a relevant document, long and short runs."""
    run, qrels = {}, {}
    for _ in range(n_queries):
        qid = f"q{rng.integers(10**6)}"
        pool = [f"d{int(x)}" for x in rng.choice(10**4, size=int(rng.integers(1, 60)), replace=False)]
        if rng.random() > 0.08:
            judged = [d for d in pool if rng.random() < 0.7]
            top = int(rng.integers(1, 4))
            grades = rng.choice([-1, 0, 0, *range(1, top + 1)], size=len(judged))
            if rng.random() < 0.1:
                grades = np.minimum(grades, 0)  # no relevant document
            if judged:
                qrels[qid] = {d: int(g) for d, g in zip(judged, grades)}
        if rng.random() > 0.08:
            retrieved = [d for d in pool if rng.random() < 0.6][: int(rng.integers(0, 60))]
            retrieved += [f"u{int(x)}" for x in rng.integers(0, 10**4, size=int(rng.integers(0, 4)))]
            kind = rng.integers(3)
            if kind == 0:
                scores = rng.integers(0, 4, len(retrieved)).astype(float)
            elif kind == 1:
                scores = np.round(rng.normal(size=len(retrieved)), 1)
            else:
                scores = rng.normal(size=len(retrieved))
            if retrieved:
                run[qid] = {d: float(s) for d, s in zip(retrieved, scores)}
    return run, qrels


def _trec_order(docs: dict) -> list[str]:
    return sorted(sorted(docs, reverse=True), key=lambda d: -docs[d])


def _pytrec(run, qrels, *, level, judged_only, complete, depth, measures):
    """pytrec_eval with trec_eval's -M (the run cut in trec_eval's order) and -c (the qrels
    queries without a run line given as empty runs), which it has no option for."""
    run = {q: dict(d) for q, d in run.items()}
    if depth is not None:
        run = {q: {d: docs[d] for d in _trec_order(docs)[:depth]} for q, docs in run.items()}
    if complete:
        for q in qrels:
            run.setdefault(q, {})
    ev = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=level, judged_docs_only_flag=judged_only)
    return ev.evaluate(run)


OPTIONS = list(itertools.product([1, 2], [False, True], [False, True], [None, 3]))


@pytest.mark.parametrize("level, judged_only, complete, depth", OPTIONS)
def test_all_trec_equals_trec_eval_under_every_flag(level, judged_only, complete, depth):
    """16 flag sets x 150 random queries: each of the 93 numeric measures of all_trec equal to
    trec_eval's per query (1e-9), and the summary figures to trec_eval's aggregation."""
    rng = np.random.default_rng(100 + OPTIONS.index((level, judged_only, complete, depth)))
    run, qrels = _random_case(rng, 150)
    want = _pytrec(run, qrels, level=level, judged_only=judged_only, complete=complete, depth=depth,
                   measures={"all_trec"})
    got = evaluate_run(run, qrels, ["all_trec"], relevance_level=level, judged_only=judged_only,
                       complete=complete, depth=depth, ties="trec_eval")
    table = got.per_query
    assert set(table.index) == set(want)
    names = [n for n in next(iter(want.values())) if n not in TEXT]
    assert list(got.metrics) == names, "all_trec's measures or their order differ from trec_eval's"
    for name in names:
        ours = table[name].to_numpy()
        theirs = np.array([want[q][name] for q in table.index])
        # an empty ranked list: pytrec_eval divides 0 by 0 in the interpolated precision; trec_eval
        # -c ranks a placeholder document there and prints 0, as gbrank does
        theirs = np.where(np.isnan(theirs) & (table["num_ret"].to_numpy() == 0), 0.0, theirs)
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9, err_msg=name)
    means = got.mean()
    for name in names:
        values = [want[q][name] for q in table.index]
        values = [0.0 if math.isnan(v) else v for v in values]
        agg = pytrec_eval.compute_aggregated_measure(name, values) if name != "num_q" else len(values)
        assert means[name] == pytest.approx(agg, abs=1e-9), name


def test_bare_families_take_trec_eval_default_parameters():
    rng = np.random.default_rng(3)
    run, qrels = _random_case(rng, 40)
    for family in FAMILIES.values():
        if family.text:
            continue
        want = _pytrec(run, qrels, level=1, judged_only=False, complete=False, depth=None, measures={family.name})
        got = evaluate_run(run, qrels, [family.name], ties="trec_eval")
        assert list(got.metrics) == list(next(iter(want.values()))), family.name


@pytest.mark.parametrize("asked, names", [
    ("P.5,10", ["P_5", "P_10"]),
    ("P.10,5", ["P_5", "P_10"]),  # trec_eval sorts the cutoffs
    ("P_5", ["P_5"]),
    ("ndcg_cut.10", ["ndcg_cut_10"]),
    ("relative_P.5", ["relative_P_5"]),
    ("success.1,5", ["success_1", "success_5"]),
    ("iprec_at_recall.0.5", ["iprec_at_recall_0.50"]),
    ("iprec_at_recall_0.10", ["iprec_at_recall_0.10"]),
    ("Rprec_mult.1,2", ["Rprec_mult_1.00", "Rprec_mult_2.00"]),
    ("map_cut.5", ["map_cut_5"]),
    ("set_F.0.5", ["set_F_0.5"]),
    ("utility.2,-1,0,0", ["utility_2,-1,0,0"]),
    ("11pt_avg.0.2,0.5,0.8", ["11pt_avg_0.2,0.5,0.8"]),
    ("recall_100", ["recall_100"]),
    ("map", ["map"]),
    ("ndcg@10", ["ndcg@10"]),  # gbrank's names stay gbrank's
    ("mrr", ["rr"]),
    ("set_f", ["f1"]),
])
def test_trec_eval_parameter_syntax_and_printed_names(asked, names):
    assert [m.name for m in expand([asked])] == names


@pytest.mark.parametrize("asked", ["P.5,10", "ndcg_cut.3,10", "relative_P.2,7", "success.1,3", "map_cut.4",
                                   "iprec_at_recall.0.25,0.5", "Rprec_mult.0.5,1.5", "set_F.0.5", "utility.0,1,2,3",
                                   "11pt_avg.0.2,0.5,0.8", "recall.3,50"])
def test_parameters_equal_trec_eval(asked):
    """(pytrec_eval sorts a measure's parameters as strings and cannot read a negative one, so
    utility's coefficients here are non-negative and in order; the default 1,-1,0,0 is in all_trec.)"""
    rng = np.random.default_rng(7)
    run, qrels = _random_case(rng, 60)
    want = _pytrec(run, qrels, level=1, judged_only=False, complete=False, depth=None, measures={asked})
    got = evaluate_run(run, qrels, [asked], ties="trec_eval").per_query
    theirs = next(iter(want.values()))
    # pytrec_eval names single-output measures without their parameters (set_F, utility, 11pt_avg)
    assert len(theirs) == len(got.columns) - 2
    for ours_name, their_name in zip(got.columns, theirs):
        np.testing.assert_allclose(got[ours_name].to_numpy(), [want[q][their_name] for q in got.index],
                                   rtol=0, atol=1e-9, err_msg=asked)


def test_nicknames_and_their_order():
    assert [m.name for m in expand(["official"])][:5] == ["num_q", "num_ret", "num_rel", "num_rel_ret", "map"]
    assert "utility" in [m.name for m in expand(["set"])]
    assert NICKNAMES["all_trec"][0] == "runid" and len(NICKNAMES["all_trec"]) == 34
    assert sorted(FAMILIES) == sorted(pytrec_eval.supported_measures)


@pytest.mark.parametrize("asked, match", [
    ("runid", "is text"),
    ("relstring", "is text"),
    ("ndcg.1=3", "no gain parameters"),
    ("P.0", "positive integers"),
    ("P.5,5", "repeats a parameter"),
    ("P_5,10", "after a dot"),
    ("map.5", "takes no parameter"),
    ("utility.1,2", "4 coefficients"),
    ("iprec_at_recall.x", "must be numbers"),
    ("nosuch", "unknown metric"),
])
def test_bad_trec_names_say_what_is_wrong(asked, match):
    with pytest.raises(ValueError, match=match):
        evaluate_run({"q": {"a": 1.0}}, {"q": {"a": 1}}, [asked])


def test_a_measure_asked_twice_is_refused():
    with pytest.raises(ValueError, match="requested twice"):
        evaluate_run({"q": {"a": 1.0}}, {"q": {"a": 1}}, ["all_trec", "P_5"])


def test_measures_by_hand():
    """Ranked (trec_eval's order): n1 (grade 0), r2 (grade 2), u (no qrels line), p (grade -1:
    in the pool, unjudged), r1 (grade 1), n2 (grade 0); the qrels add r3 (grade 1, not
    retrieved) and n3 (grade 0): R = 3, judged non-relevant 3."""
    run = {"q": {"n1": 6.0, "r2": 5.0, "u": 4.0, "p": 3.0, "r1": 2.0, "n2": 1.0}}
    qrels = {"q": {"n1": 0, "r2": 2, "p": -1, "r1": 1, "n2": 0, "r3": 1, "n3": 0}}
    names = ["num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "set_P", "set_recall", "set_map",
             "set_relative_P", "set_F", "relative_P_2", "Rprec_mult_1.00", "iprec_at_recall_0.00",
             "iprec_at_recall_0.70", "iprec_at_recall_1.00", "binG", "gm_map", "utility", "infAP"]
    got = evaluate_run(run, qrels, names, ties="trec_eval").per_query.iloc[0]
    assert got[["num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"]].tolist() == [6, 3, 2, 2]
    assert got["set_P"] == pytest.approx(2 / 6) and got["set_recall"] == pytest.approx(2 / 3)
    assert got["set_map"] == pytest.approx(4 / 18) and got["set_relative_P"] == pytest.approx(2 / 3)
    assert got["set_F"] == pytest.approx(2 * (1 / 3) * (2 / 3) / (1 / 3 + 2 / 3))
    assert got["relative_P_2"] == pytest.approx(1 / 2)  # 1 relevant in the top 2, of at most 2
    assert got["Rprec_mult_1.00"] == pytest.approx(1 / 3)  # P@int(1.0 * 3 + 0.9) = P@3
    # precision at the relevant ranks 2 and 5: 1/2 and 2/5; interpolated: the best at or below
    assert got["iprec_at_recall_0.00"] == pytest.approx(1 / 2)
    # int(0.7 * 3 + 0.9) is 2 in floating point (2.9999999999999996), as in trec_eval: P at rank 5
    assert got["iprec_at_recall_0.70"] == pytest.approx(2 / 5)
    assert got["iprec_at_recall_1.00"] == 0.0  # the third relevant document is never retrieved
    assert got["binG"] == pytest.approx((1 / math.log2(3) + 1 / math.log2(2 + 3)) / 3)
    assert got["gm_map"] == pytest.approx(math.log((1 / 2 + 2 / 5) / 3))
    assert got["utility"] == 2 - 4
    # infAP: r2 at index 1 (one judged non-relevant above), r1 at index 4 (u not in the pool, p
    # in the pool unjudged): 1/(j+1) + j/(j+1) * (above / j) * (rel above + eps) / (judged above + 2 eps)
    eps = 1e-5
    first = 1 / 2 + (1 / 2) * (1 / 1) * (eps / (1 + 2 * eps))
    second = 1 / 5 + (4 / 5) * ((1 + 1 + 1) / 4) * ((1 + eps) / (1 + 1 + 2 * eps))
    assert got["infAP"] == pytest.approx((first + second) / 3)


def test_depth_and_complete_follow_trec_eval_by_hand():
    """-M keeps the first K documents in trec_eval's order (score, then document id descending),
    before -J; -c scores a qrels query without run lines as trec_eval's placeholder ranking
    does: nothing retrieved, its relevant documents counted."""
    run = {"a": {"x": 1.0, "y": 1.0, "z": 2.0}}
    qrels = {"a": {"x": 1, "y": 0, "z": 0}, "b": {"w": 1, "v": 2}}
    got = evaluate_run(run, qrels, ["num_ret", "num_rel_ret", "set_P", "iprec_at_recall_0.00", "num_rel"],
                       depth=2, complete=True, ties="trec_eval").per_query
    # a: z (2.0) then y before x (document id descending): top 2 = z, y, no relevant one
    assert got.loc["a"].tolist()[:5] == [2, 0, 0.0, 0.0, 1]
    assert got.loc["b"].tolist()[:5] == [0, 0, 0.0, 0.0, 2]
    r = evaluate_run(run, qrels, ["num_q", "num_rel", "gm_map"], complete=True, ties="trec_eval")
    means = r.mean()
    assert means["num_q"] == 2 and means["num_rel"] == 3
    assert means["gm_map"] == pytest.approx(math.exp((math.log(1 / 3) + math.log(1e-5)) / 2))  # a: x at rank 3


def test_result_type_summary_and_printed_lines():
    run = {"a": {"x": 2.0, "y": 1.0}, "b": {"x": 1.0}}
    qrels = {"a": {"x": 1, "y": 1}, "b": {"x": 0, "z": 1}}
    r = evaluate_run(run, qrels, ["num_q", "num_ret", "map", "gm_map", "P_5"], ties="trec_eval")
    assert isinstance(r, TrecEvaluationResult)
    assert r.mean()["num_ret"] == 3 and r.mean()["num_q"] == 2
    assert r.mean()["gm_map"] == pytest.approx(math.exp((0.0 + math.log(1e-5)) / 2))
    summary = r.summary()
    assert summary.loc["num_ret", "mean"] == 3 and summary.loc["num_q", "ci_low"] == 2
    assert summary.loc["map", "mean"] == pytest.approx(0.5)
    lines = trec_lines(r, per_query=True)
    assert lines[0].split("\t") == ["num_ret".ljust(22), "a", "2"]  # counts as integers; num_q, gm_map not per query
    assert [ln.split("\t")[0].strip() for ln in lines[:3]] == ["num_ret", "map", "P_5"]
    assert lines[-5:] == [f"{'num_q':<22}\tall\t2", f"{'num_ret':<22}\tall\t3", f"{'map':<22}\tall\t0.5000",
                          f"{'gm_map':<22}\tall\t{math.exp((0.0 + math.log(1e-5)) / 2):.4f}",
                          f"{'P_5':<22}\tall\t0.2000"]


def test_a_large_run_is_evaluated_in_one_vectorised_pass():
    rng = np.random.default_rng(0)
    n_q, per_q = 2000, 200
    qid = np.repeat([f"q{i}" for i in range(n_q)], per_q)
    doc = np.tile([f"d{j}" for j in range(per_q)], n_q)
    run = pd.DataFrame({"qid": qid, "docid": doc, "score": rng.normal(size=len(qid))})
    qrels = pd.DataFrame({"qid": qid, "docid": doc, "relevance": rng.integers(0, 3, len(qid))})
    r = evaluate_run(run, qrels, ["all_trec"], ties="trec_eval")
    assert r.per_query.shape == (n_q, 95) and r.mean()["num_ret"] == n_q * per_q


def test_command_line_all_trec_prints_what_trec_eval_prints(tmp_path):
    """``gbrank evaluate RUN QRELS -q -m all_trec --ties trec_eval``: trec_eval's lines, each
    value trec_eval's rounded to 4 decimals (the counts as integers), num_q and the geometric
    means on the 'all' lines only."""
    import io

    from gbrank.cli import main

    rng = np.random.default_rng(21)
    run, qrels = _random_case(rng, 25)
    (tmp_path / "run").write_text("".join(f"{q} Q0 {d} 0 {s!r} t\n" for q, docs in run.items()
                                          for d, s in docs.items()))
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    out = io.StringIO()
    assert main(["evaluate", str(tmp_path / "run"), str(tmp_path / "qrels"), "-q", "-m", "all_trec",
                 "--ties", "trec_eval"], out=out) == 0
    want = _pytrec(run, qrels, level=1, judged_only=False, complete=False, depth=None, measures={"all_trec"})
    names = [n for n in next(iter(want.values())) if n not in TEXT]
    expected = []
    for q in sorted(want):
        expected += [(n, q, want[q][n]) for n in names if n not in ("num_q", "gm_map", "gm_bpref")]
    for n in names:
        values = [want[q][n] for q in want]
        expected.append((n, "all", len(values) if n == "num_q" else pytrec_eval.compute_aggregated_measure(n, values)))
    lines = out.getvalue().splitlines()
    assert len(lines) == len(expected)
    for line, (name, qid, value) in zip(lines, expected):
        text = str(int(value)) if name.startswith("num_") else f"{value:.4f}"
        assert line == f"{name:<22}\t{qid}\t{text}", line
