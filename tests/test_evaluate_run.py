"""``gbrank.evaluate_run`` against trec_eval itself (pytrec_eval), ranx, and by hand."""

from __future__ import annotations

import gzip
import itertools

import numpy as np
import pandas as pd
import pytest

import gbrank
from gbrank.evaluation import evaluate_run, read_qrels, read_run

pytrec_eval = pytest.importorskip("pytrec_eval")

# gbrank name -> pytrec_eval's output name; the pytrec_eval request that produces them
SHARED = {
    "map": "map", "map_cut_3": "map_cut_3", "map_cut_10": "map_cut_10", "ndcg": "ndcg", "ndcg_cut_3": "ndcg_cut_3",
    "ndcg_cut_10": "ndcg_cut_10", "recip_rank": "recip_rank", "P_1": "P_1", "P_5": "P_5", "recall_5": "recall_5",
    "recall_20": "recall_20", "Rprec": "Rprec", "bpref": "bpref", "success_1": "success_1", "success_5": "success_5",
    "set_F": "set_F",
}
PYTREC_MEASURES = {"map", "map_cut.3,10", "ndcg", "ndcg_cut.3,10", "recip_rank", "P.1,5", "recall.5,20", "Rprec",
                   "bpref", "success.1,5", "set_F"}


def _random_case(rng, n_queries):
    """Run and qrels dicts with unretrieved relevant documents, unjudged retrieved ones,
    negative and graded judgements, tied scores, queries missing from either side, runs cut
    at random depths."""
    run, qrels = {}, {}
    for q in range(n_queries):
        qid = f"q{rng.integers(10**6)}"
        pool = [f"d{int(x)}" for x in rng.choice(10**4, size=int(rng.integers(1, 40)), replace=False)]
        if rng.random() > 0.08:  # some queries only in the run
            judged = [d for d in pool if rng.random() < 0.7]
            grades = rng.choice([-1, 0, 0, 1, 1, 2, 3], size=len(judged))  # trec_eval marks unjudged with -1
            if judged:
                qrels[qid] = {d: int(g) for d, g in zip(judged, grades)}
        if rng.random() > 0.08:  # some queries only in the qrels
            retrieved = [d for d in pool if rng.random() < 0.6][: int(rng.integers(0, 40))]
            retrieved += [f"u{int(x)}" for x in rng.integers(0, 10**4, size=int(rng.integers(0, 4)))]  # unjudged
            kind = rng.integers(3)
            if kind == 0:
                scores = rng.integers(0, 4, len(retrieved)).astype(float)  # many ties
            elif kind == 1:
                scores = np.round(rng.normal(size=len(retrieved)), 1)
            else:
                scores = rng.normal(size=len(retrieved))
            run[qid] = {d: float(s) for d, s in zip(retrieved, scores)}
    return run, qrels


def _trec_order(docs: dict) -> list[str]:
    """trec_eval's order: score descending, then document id descending (string order)."""
    return sorted(sorted(docs, reverse=True), key=lambda d: -docs[d])


def _pytrec(run, qrels, *, level, judged_only, complete, depth):
    run = {q: dict(d) for q, d in run.items()}
    if depth is not None:
        run = {q: {d: docs[d] for d in _trec_order(docs)[:depth]} for q, docs in run.items()}
    if complete:
        for q in qrels:
            run.setdefault(q, {})
    ev = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_MEASURES, relevance_level=level,
                                        judged_docs_only_flag=judged_only)
    return ev.evaluate(run)


OPTIONS = list(itertools.product([1, 2], [False, True], [False, True], [None, 1, 4]))


@pytest.mark.parametrize("level, judged_only, complete, depth", OPTIONS)
def test_every_shared_measure_equals_trec_eval(level, judged_only, complete, depth):
    """24 option sets x 420 random queries = 10,080 run/qrels pairs, every shared measure to 1e-9."""
    rng = np.random.default_rng(OPTIONS.index((level, judged_only, complete, depth)))
    run, qrels = _random_case(rng, 420)
    want = _pytrec(run, qrels, level=level, judged_only=judged_only, complete=complete, depth=depth)
    got = evaluate_run(run, qrels, list(SHARED), relevance_level=level, judged_only=judged_only,
                       complete=complete, depth=depth, ties="trec_eval")
    table = got.per_query
    assert set(table.index) == set(want), "the evaluated queries differ from trec_eval's"
    columns = list(SHARED)  # trec_eval's names in, trec_eval's names out
    for name, column in zip(SHARED, columns):
        ours = table[column].to_numpy()
        theirs = np.array([want[q][SHARED[name]] for q in table.index])
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9, err_msg=name)
    assert np.isclose(table[columns].mean().to_numpy(),
                      np.array([np.mean([want[q][SHARED[n]] for q in want]) for n in SHARED]), atol=1e-9).all()


def test_ties_average_is_the_mean_over_tie_orders_and_differs_from_trec_eval():
    run = {"q": {"a": 1.0, "b": 1.0, "c": 0.5}}
    qrels = {"q": {"a": 1, "b": 0, "c": 1}}
    avg = evaluate_run(run, qrels, ["map"]).per_query["map"].iloc[0]
    trec = evaluate_run(run, qrels, ["map"], ties="trec_eval").per_query["map"].iloc[0]
    # orders (a, b, c): (1 + 2/3) / 2; (b, a, c): (1/2 + 2/3) / 2; trec_eval puts b first (id descending)
    assert avg == pytest.approx(((1 + 2 / 3) / 2 + (1 / 2 + 2 / 3) / 2) / 2)
    assert trec == pytest.approx((1 / 2 + 2 / 3) / 2)


def test_files_plain_and_gzip_with_comments_and_extra_fields(tmp_path):
    run_text = "# a comment\n1 Q0 d1 1 2.0 tag extra\n1 Q0 d2 2 1.0 tag\n2 Q0 d1 1 0.5 tag\n"
    qrels_text = "1 0 d2 1\n1 0 d3 2\n2 0 d1 0\n"
    (tmp_path / "run.txt").write_text(run_text)
    with gzip.open(tmp_path / "qrels.gz", "wt") as fh:
        fh.write(qrels_text)
    r = evaluate_run(tmp_path / "run.txt", tmp_path / "qrels.gz", ["map", "ndcg"])
    want = pytrec_eval.RelevanceEvaluator({"1": {"d2": 1, "d3": 2}, "2": {"d1": 0}}, {"map", "ndcg"}).evaluate(
        {"1": {"d1": 2.0, "d2": 1.0}, "2": {"d1": 0.5}})
    assert r.per_query.loc["1", "map"] == pytest.approx(want["1"]["map"])
    assert r.per_query.loc["1", "ndcg"] == pytest.approx(want["1"]["ndcg"])
    assert list(read_run(tmp_path / "run.txt")["docid"].astype(str)) == ["d1", "d2", "d1"]
    assert read_qrels(tmp_path / "qrels.gz")["relevance"].tolist() == [1.0, 2.0, 0.0]


def test_every_input_form_gives_the_same_result(tmp_path):
    rng = np.random.default_rng(5)
    run, qrels = _random_case(rng, 30)
    base = evaluate_run(run, qrels, ["map", "ndcg_cut_10"], ties="trec_eval").per_query
    run_df = pd.DataFrame([(q, d, s) for q, docs in run.items() for d, s in docs.items()],
                          columns=["qid", "docid", "score"])
    qrels_df = pd.DataFrame([(q, d, g) for q, docs in qrels.items() for d, g in docs.items()],
                            columns=["qid", "docid", "relevance"])
    with open(tmp_path / "run", "w") as fh:
        for q, d, s in run_df.itertuples(index=False):
            fh.write(f"{q} Q0 {d} 0 {s!r} t\n")
    with open(tmp_path / "qrels", "w") as fh:
        for q, d, g in qrels_df.itertuples(index=False):
            fh.write(f"{q} 0 {d} {g}\n")
    for r, qr in ((run_df, qrels_df), (tmp_path / "run", tmp_path / "qrels"), (str(tmp_path / "run"), qrels)):
        pd.testing.assert_frame_equal(evaluate_run(r, qr, ["map", "ndcg_cut_10"], ties="trec_eval").per_query, base)
    ranx = pytest.importorskip("ranx")
    pd.testing.assert_frame_equal(
        evaluate_run(ranx.Run(run), ranx.Qrels({q: d for q, d in qrels.items()}), ["map", "ndcg_cut_10"],
                     ties="trec_eval").per_query.sort_index(), base.sort_index(), check_exact=False)


def test_ranx_conventions_agree_with_ranx():
    ranx = pytest.importorskip("ranx")
    rng = np.random.default_rng(11)
    run, qrels = {}, {}
    for q in range(200):
        docs = [f"d{int(x)}" for x in rng.choice(1000, size=int(rng.integers(2, 30)), replace=False)]
        run[f"q{q}"] = {d: float(s) for d, s in zip(docs, rng.normal(size=len(docs)))}  # no ties
        judged = [d for d in docs if rng.random() < 0.4] + [f"x{q}"]  # one unretrieved relevant
        qrels[f"q{q}"] = {d: int(rng.integers(1, 3)) for d in judged}
    names = ["mrr", "hit_rate@5", "map@10", "precision@5", "recall@10", "r-precision", "f1@5", "map", "mrr@3"]
    ours = evaluate_run(run, qrels, names).mean()
    theirs = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), names)
    for name in names:
        column = name if name == "map" else str(gbrank.metrics.parse(name))  # "map" is trec_eval's too
        assert ours[column] == pytest.approx(theirs[name], abs=1e-9), name


@pytest.mark.parametrize("text, match", [
    (b"\x00\x01binary", "is binary, not a TREC run .*line 1"),
    (b"1 Q0 d1 1 x t\n", "non-numeric or non-finite score 'x' on line 1"),
    (b"1 Q0 d1 1 1.0 t\n1 Q0 d2\n", "has 3 fields on line 2, needs 6"),
    (b"1 Q0 d1 1 1.0 t\n1 Q0 d1 2 0.5 t\n", "lists document 'd1' twice for query '1' \\(line 2\\)"),
    (b"\xff\xfe 1 Q0", "not UTF-8 text"),
    (b"", "is empty"),
])
def test_bad_run_files_name_the_file_and_line(tmp_path, text, match):
    path = tmp_path / "bad.run"
    path.write_bytes(text)
    with pytest.raises(ValueError, match=match):
        evaluate_run(path, {"1": {"d1": 1}})


def test_truncated_gzip_and_bad_arguments(tmp_path):
    path = tmp_path / "run.gz"
    path.write_bytes(gzip.compress(b"1 Q0 d1 1 1.0 t\n" * 100)[:40])
    with pytest.raises(ValueError, match="truncated or corrupt gzip"):
        evaluate_run(path, {"1": {"d1": 1}})
    with pytest.raises(ValueError, match="need every relevant document ranked"):
        evaluate_run({"1": {"d1": 1.0}}, {"1": {"d1": 1}}, ["auc"])
    with pytest.raises(ValueError, match="ends with '@'"):
        evaluate_run({"1": {"d1": 1.0}}, {"1": {"d1": 1}}, ["ndcg@"])
    with pytest.raises(ValueError, match="depth"):
        evaluate_run({"1": {"d1": 1.0}}, {"1": {"d1": 1}}, depth=0)
    with pytest.raises(ValueError, match="qrels 3 fields|has 3 fields"):
        bad = tmp_path / "q"
        bad.write_text("1 0 d1\n")
        evaluate_run({"1": {"d1": 1.0}}, bad)
    with pytest.raises(TypeError, match="a run is a TREC file path"):
        evaluate_run([1, 2], {"1": {"d1": 1}})


def test_queries_on_one_side_only_are_counted():
    r = evaluate_run({"a": {"d": 1.0}, "b": {"d": 1.0}}, {"a": {"d": 1}, "c": {"x": 1}}, ["map"])
    assert list(r.per_query.index) == ["a"]
    assert r.settings["n_queries_only_in_run"] == 1 and r.settings["n_queries_only_in_qrels"] == 1
    r = evaluate_run({"a": {"d": 1.0}, "b": {"d": 1.0}}, {"a": {"d": 1}, "c": {"x": 1}}, ["map"], complete=True)
    assert r.per_query["map"].to_dict() == {"a": 1.0, "c": 0.0}


def test_any_negative_grade_is_unjudged_as_trec_eval_reads_it():
    """pytrec_eval crashes on some measures with grades below -1, so this case is by hand."""
    qrels = {"a": {"d1": 1, "d2": -2, "d3": 0, "d4": -1}}
    run = {"a": {"d2": 3.0, "d4": 2.5, "d1": 2.0, "d3": 1.0}}
    for judged_only in (False, True):
        want = pytrec_eval.RelevanceEvaluator(qrels, {"map", "bpref", "ndcg"},
                                              judged_docs_only_flag=judged_only).evaluate(run)["a"]
        got = evaluate_run(run, qrels, ["map", "bpref", "ndcg", "judged"], judged_only=judged_only).per_query
        assert got[["map", "bpref", "ndcg"]].iloc[0].tolist() == pytest.approx([want["map"], want["bpref"],
                                                                                  want["ndcg"]])
        assert got["judged"].iloc[0] == (1.0 if judged_only else 0.5)


def test_new_measures_on_a_hand_computed_run():
    """Ranked: n (judged non-relevant), r (grade 2), u (unjudged), r (grade 1), n; the qrels
    add a relevant and a non-relevant document the run did not retrieve: R = 3, N = 3."""
    run = {"q": {"n1": 5.0, "r2": 4.0, "u": 3.0, "r1": 2.0, "n2": 1.0}}
    qrels = {"q": {"n1": 0, "r2": 2, "r1": 1, "n2": 0, "miss": 1, "n3": 0}}
    names = ["rprec", "bpref", "rbp_graded@0.5", "rbp_residual@0.5", "judged@5", "err", "f1", "success@1"]
    got = evaluate_run(run, qrels, names).per_query.iloc[0]
    assert got["rprec"] == pytest.approx(1 / 3)
    assert got["bpref"] == pytest.approx((2 / 3 + 2 / 3) / 3)  # one judged non-relevant above each
    assert got["rbp_graded@0.5"] == pytest.approx(0.5 * (0.5 * 1 + 0.125 * 0.5))  # gains / top grade 2
    assert got["rbp_residual@0.5"] == pytest.approx(0.5 * 0.25 + 0.5**5)  # rank 3 unjudged, then the end
    assert got["judged@5"] == pytest.approx(4 / 5)
    # ERR with the linear gain and top grade 2: x = gain / 3 = [0, 2/3, 0, 1/3, 0]
    assert got["err"] == pytest.approx((1 / 2) * (2 / 3) + (1 / 4) * (1 / 3) * (1 - 2 / 3))
    assert got["f1"] == pytest.approx(2 * 2 / (5 + 3))  # set_F: 2 relevant retrieved of 5, R = 3
    assert got["success@1"] == 0.0
    want = pytrec_eval.RelevanceEvaluator(qrels, {"bpref", "Rprec", "set_F", "success.1"}).evaluate(run)["q"]
    assert [got["bpref"], got["rprec"], got["f1"]] == pytest.approx([want["bpref"], want["Rprec"], want["set_F"]])
    # ERR as Chapelle et al. define it: exponential gain, (2^g - 1) / 2^g_max
    exp = evaluate_run(run, qrels, ["err@3"], gain="exp", max_grade=2).per_query.iloc[0]["err@3"]
    assert exp == pytest.approx((1 / 2) * (3 / 4))
