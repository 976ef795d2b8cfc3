"""``gbrank.evaluate`` and ``gbrank.compare`` as a user meets them: bad inputs, row and
query order, the empty-list and tie policies, confidence intervals and paired tests
against scipy, and the ``gbrank evaluate`` command line against pytrec_eval."""

from __future__ import annotations

import ast
import io
import itertools
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import gbrank
from gbrank.cli import main
from gbrank.metrics import METRICS

ROOT = pathlib.Path(__file__).resolve().parents[1]
ALL_METRICS = ["ndcg", "ndcg@3", "dcg@5", "ap", "ap@3", "rr", "rbp@0.8", "nrbp@0.95", "p@3",
               "r@3", "auc", "mean_rank", "max_rank"]


def _random_rows(seed, n_lists=40, max_size=12, tied=True, qid_kind="int"):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_size + 1, n_lists)
    qid = np.repeat(np.arange(n_lists) * 7 + 3, sizes)
    if qid_kind == "str":
        qid = np.array([f"query-{q}" for q in qid], dtype=object)
    n = int(sizes.sum())
    labels = rng.integers(0, 4, n) * (rng.random(n) < 0.5)
    scores = rng.integers(0, 4, n).astype(float) if tied else rng.random(n)
    return labels.astype(float), scores, qid


# ---------------------------------------------------------------------------------------
# bad inputs: a clear exception that says what is wrong


def _call(**overrides):
    kw = dict(y_true=[1, 0, 2], y_score=[0.3, 0.2, 0.1], qid=[1, 1, 1], metrics=["ndcg"])
    kw.update(overrides)
    return gbrank.evaluate(kw.pop("y_true"), kw.pop("y_score"), kw.pop("qid"), **kw)


@pytest.mark.parametrize("overrides, match", [
    (dict(y_score=[0.3, 0.2]), r"lengths differ: y_true=3, y_score=2, qid=3"),
    (dict(qid=[1, 1]), r"lengths differ: y_true=3, y_score=3, qid=2"),
    (dict(y_score=[0.3, np.nan, 0.1]), r"y_score contains 1 NaN or infinite value\(s\) \(first at row 1"),
    (dict(y_score=[0.3, np.inf, -np.inf]), r"y_score contains 2 NaN or infinite"),
    (dict(y_true=[1, np.nan, 0]), r"y_true contains 1 NaN or infinite"),
    (dict(y_true=[1, np.inf, 0]), r"y_true contains 1 NaN or infinite"),
    (dict(y_true=[1, -1, 0]), r"labels must be non-negative relevance grades, found -1.0 at row 1"),
    (dict(y_true=[1, 0.5, 0]), r"graded labels must be integers here \(found 0.5 at row 1\).*gain='linear'"),
    (dict(y_true=[31, 0, 0]), r"labels over 30 overflow the exponential gain"),
    (dict(y_true=[], y_score=[], qid=[]), r"no rows were given"),
    (dict(y_score=[[0.3, 0.2, 0.1], [0.3, 0.2, 0.1]], y_true=[[1, 0, 2], [1, 0, 2]], qid=[1, 1]),
     r"must be one-dimensional"),
    (dict(qid=[1.0, np.nan, 1.0]), r"qid contains NaN"),
    (dict(metrics=["ndcg", "ndcg"]), r"a metric is requested twice"),
    (dict(metrics=[]), r"no metric was requested"),
    (dict(relevance_threshold=0), r"relevance_threshold must be positive"),
    (dict(ties="random"), r"ties must be one of \['average', 'optimistic', 'pessimistic', 'stable'\], got 'random'"),
    (dict(empty="nan"), r"empty must be one of \['one', 'skip', 'zero'\], got 'nan'"),
    (dict(gain="log"), r"gain must be one of \['exp', 'linear'\], got 'log'"),
    (dict(ap_divisor="k"), r"ap_divisor must be one of \['R', 'min\(R,k\)'\], got 'k'"),
])
def test_bad_input_raises_a_clear_value_error(overrides, match):
    with pytest.raises(ValueError, match=match):
        _call(**overrides)


def test_non_numeric_input_raises_type_error():
    with pytest.raises(TypeError, match="y_score must be numeric"):
        _call(y_score=["a", "b", "c"])
    with pytest.raises(TypeError, match="a metric is named by a string"):
        _call(metrics=[10])


def test_missing_or_scalar_query_ids_raise_a_clear_type_error():
    with pytest.raises(TypeError, match=r"qid values must be comparable .* found mixed types or None"):
        _call(qid=np.array([1, None, 1], dtype=object))
    with pytest.raises(TypeError, match=r"qid must be an array-like with one entry per row, got int 5"):
        _call(qid=5)


def test_labels_accepted_at_the_edges():
    assert _call(y_true=[30, 0, 0]).per_query["ndcg"].iloc[0] == 1.0
    # real-valued and large grades are fine with the linear gain
    r = _call(y_true=[31, 0.5, 0], gain="linear")
    assert r.per_query["ndcg"].iloc[0] == 1.0


def test_unknown_metric_lists_every_known_one():
    with pytest.raises(ValueError, match=r"unknown metric 'ndgc@10'; known metrics: ") as info:
        _call(metrics=["ndgc@10"])
    message = str(info.value)
    for name in METRICS:
        assert name in message.split("known metrics: ")[1]


@pytest.mark.parametrize("metric, match", [
    ("nrbp@1.5", r"persistence of 'nrbp@1.5' must lie strictly between 0 and 1"),
    ("nrbp@1", r"must lie strictly between 0 and 1"),
    ("rbp@0", r"must lie strictly between 0 and 1"),
    ("rbp@-0.5", r"must lie strictly between 0 and 1"),
    ("rbp@nan", r"must lie strictly between 0 and 1"),
    ("rbp@high", r"must be a number in \(0, 1\)"),
    ("nrbp", r"needs a persistence p in \(0, 1\), e.g. 'nrbp@0.95'"),
    ("ndcg@0", r"cutoff of 'ndcg@0' must be a positive integer"),
    ("p@0", r"cutoff of 'p@0' must be a positive integer"),
    ("ap@-3", r"cutoff of 'ap@-3' must be a positive integer"),
    ("ndcg@2.5", r"cutoff of 'ndcg@2.5' must be a positive integer"),
    ("p", r"metric 'p' needs a cutoff, e.g. 'p@10'"),
    ("r", r"metric 'r' needs a cutoff"),
    ("auc@5", r"metric 'auc' takes no parameter"),
])
def test_malformed_metric_parameters(metric, match):
    with pytest.raises(ValueError, match=match):
        _call(metrics=[metric])


def test_metric_names_are_canonical():
    r = _call(metrics=["NDCG@3", " nrbp@0.950 ", "P@2"])
    assert r.metrics == ("ndcg@3", "nrbp@0.95", "p@2")
    assert list(r.per_query.columns) == ["ndcg@3", "nrbp@0.95", "p@2", "n_items", "n_relevant"]
    # a single name gives the same shape as a list of one
    assert _call(metrics="ap").per_query.columns.tolist() == ["ap", "n_items", "n_relevant"]


# ---------------------------------------------------------------------------------------
# order of rows and queries; inputs untouched


@pytest.mark.parametrize("ties", ["average", "pessimistic", "optimistic"])
@pytest.mark.parametrize("qid_kind", ["int", "str"])
def test_row_and_query_order_do_not_matter(ties, qid_kind):
    labels, scores, qid = _random_rows(1, qid_kind=qid_kind)
    base = gbrank.evaluate(labels, scores, qid, ALL_METRICS, ties=ties).per_query
    rng = np.random.default_rng(2)
    for _ in range(5):
        perm = rng.permutation(len(labels))
        shuffled = gbrank.evaluate(labels[perm], scores[perm], qid[perm], ALL_METRICS, ties=ties).per_query
        pd.testing.assert_frame_equal(shuffled.sort_index(), base.sort_index(), check_exact=False,
                                      rtol=1e-13, atol=1e-13)
    assert base.index.is_monotonic_increasing


def test_stable_policy_depends_only_on_the_order_within_each_list():
    labels, scores, qid = _random_rows(3)
    base = gbrank.evaluate(labels, scores, qid, ALL_METRICS, ties="stable").per_query
    # interleave the lists (random qid order) while keeping each list's own row order
    rng = np.random.default_rng(4)
    key = rng.permutation(len(np.unique(qid)))[np.searchsorted(np.unique(qid), qid)]
    perm = np.lexsort((rng.random(len(qid)), key))  # group order random ...
    perm = np.concatenate([np.sort(perm[key[perm] == g]) for g in rng.permutation(key.max() + 1)])
    moved = gbrank.evaluate(labels[perm], scores[perm], qid[perm], ALL_METRICS, ties="stable").per_query
    pd.testing.assert_frame_equal(moved, base)
    # reversing the rows inside the lists changes the stable result on tied data
    rev = np.arange(len(qid))[::-1]
    reversed_ = gbrank.evaluate(labels[rev], scores[rev], qid[rev], ALL_METRICS, ties="stable").per_query
    assert not np.allclose(reversed_.sort_index()[ALL_METRICS], base[ALL_METRICS])


def test_inputs_are_never_mutated():
    labels, scores, qid = _random_rows(5)
    inputs = [
        (labels.astype(np.int32), scores.astype(np.float32), qid[::-1].copy()),  # unsorted qid
        (pd.Series(labels), pd.Series(scores), pd.Series(qid)),
        (labels.tolist(), scores.tolist(), qid.tolist()),
    ]
    for y, s, q in inputs:
        before = [np.array(x, copy=True) for x in (y, s, q)]
        for ties in ("average", "pessimistic", "stable"):
            gbrank.evaluate(y, s, q, ALL_METRICS, ties=ties, empty="skip")
        for b, x in zip(before, (y, s, q)):
            np.testing.assert_array_equal(np.asarray(x), b)


def test_float32_and_int_inputs_give_the_float64_result():
    labels, scores, qid = _random_rows(6, tied=False)
    scores = scores.astype(np.float32).astype(np.float64)
    a = gbrank.evaluate(labels, scores, qid, ALL_METRICS).per_query
    b = gbrank.evaluate(labels.astype(np.int8), scores.astype(np.float32), qid.astype(np.int32),
                        ALL_METRICS).per_query
    pd.testing.assert_frame_equal(a, b, check_index_type=False)


# ---------------------------------------------------------------------------------------
# the empty-list policy


UNDEFINED_WHEN_EMPTY = {name for name, rec in METRICS.items() if rec.needs_relevant}


def _mixed():
    # list 1: graded labels; list 2: nothing relevant; list 3: everything relevant
    labels = np.array([2, 0, 1, 0, 0, 0, 0, 1, 3])
    scores = np.array([0.1, 0.9, 0.5, 0.3, 0.2, 0.1, 0.4, 0.6, 0.5])
    qid = np.array([1, 1, 1, 2, 2, 2, 3, 3, 3])
    keep = np.array([True] * 3 + [True] * 3 + [False] + [True] * 2)  # list 3: two items
    return labels[keep], scores[keep], qid[keep]


@pytest.mark.parametrize("empty, fill", [("zero", 0.0), ("one", 1.0)])
def test_empty_policy_fills_undefined_metrics_only(empty, fill):
    labels, scores, qid = _mixed()
    r = gbrank.evaluate(labels, scores, qid, ALL_METRICS, empty=empty)
    assert r.n_empty == 1 and len(r.skipped_qids) == 0
    row = r.per_query.loc[2]
    for name in ALL_METRICS:
        family = name.partition("@")[0]
        expected = fill if family in UNDEFINED_WHEN_EMPTY else 0.0  # dcg, rbp, p@k: a real 0
        assert row[name] == expected, name
    assert row["n_relevant"] == 0 and row["n_items"] == 3
    # the other lists do not depend on the policy
    other = gbrank.evaluate(labels, scores, qid, ALL_METRICS, empty="skip").per_query
    pd.testing.assert_frame_equal(r.per_query.drop(index=2), other)
    # AUC of a list without non-relevant items is 1 whatever the policy
    assert r.per_query.loc[3, "auc"] == 1.0


def test_empty_skip_leaves_lists_out_and_reports_them():
    labels, scores, qid = _random_rows(8, n_lists=60)
    zero = gbrank.evaluate(labels, scores, qid, ALL_METRICS, empty="zero")
    skip = gbrank.evaluate(labels, scores, qid, ALL_METRICS, empty="skip")
    empty_qids = np.array(sorted(set(qid) - set(qid[labels >= 1])))
    assert len(empty_qids) > 3
    assert skip.n_empty == zero.n_empty == len(empty_qids)
    np.testing.assert_array_equal(skip.skipped_qids, empty_qids)
    assert len(zero.skipped_qids) == 0
    assert set(skip.per_query.index).isdisjoint(empty_qids)
    pd.testing.assert_series_equal(skip.mean(), zero.per_query.drop(index=empty_qids)[ALL_METRICS].mean())
    assert skip.summary().loc["ap", "n"] == len(np.unique(qid)) - len(empty_qids)


def test_relevance_threshold_decides_which_lists_are_empty():
    labels = np.array([1, 0, 1, 2, 0])
    scores = np.array([0.9, 0.1, 0.5, 0.4, 0.3])
    qid = np.array([1, 1, 2, 2, 2])
    r = gbrank.evaluate(labels, scores, qid, ["ap", "ndcg", "r@1"], relevance_threshold=2, empty="skip")
    assert r.skipped_qids.tolist() == [1]
    assert r.per_query.loc[2, "ap"] == 0.5  # the label-2 item sits at rank 2
    assert r.per_query.loc[2, "r@1"] == 0.0


def test_all_zero_labels_under_each_policy():
    r = gbrank.evaluate([0, 0], [0.2, 0.1], [1, 1], ["ndcg", "ap", "dcg", "p@1"], empty="skip")
    assert len(r.per_query) == 0 and r.n_empty == 1 and r.skipped_qids.tolist() == [1]
    assert r.mean().isna().all()


# ---------------------------------------------------------------------------------------
# summary(): Student-t intervals


@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_summary_interval_is_scipys_t_interval(confidence):
    labels, scores, qid = _random_rows(9, n_lists=25, tied=False)
    r = gbrank.evaluate(labels, scores, qid, ["ndcg@5", "ap", "rr"])
    s = r.summary(confidence)
    for name in ("ndcg@5", "ap", "rr"):
        x = r.per_query[name].to_numpy()
        low, high = stats.t.interval(confidence, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
        assert s.loc[name, "mean"] == pytest.approx(x.mean(), abs=1e-14)
        assert s.loc[name, "std"] == pytest.approx(x.std(ddof=1), abs=1e-14)
        assert s.loc[name, "ci_low"] == pytest.approx(low, abs=1e-12)
        assert s.loc[name, "ci_high"] == pytest.approx(high, abs=1e-12)
        assert s.loc[name, "n"] == 25


def test_summary_of_one_list_and_bad_confidence():
    r = gbrank.evaluate([1, 0], [0.2, 0.1], [1, 1], ["ndcg"])
    s = r.summary()
    # one list has no spread: no standard deviation, no interval (NaN, not 0 and +-inf)
    assert s.loc["ndcg", "mean"] == 1.0 and s.loc["ndcg", "n"] == 1
    assert s.loc["ndcg", ["std", "ci_low", "ci_high"]].isna().all()
    with pytest.raises(ValueError, match=r"confidence must lie in \(0, 1\), got 95"):
        r.summary(95)


# ---------------------------------------------------------------------------------------
# compare(): paired tests against scipy


def _two_systems(n_lists=30, seed=10, **kw):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(5, 20, n_lists)
    qid = np.repeat(np.arange(n_lists), sizes)
    labels = rng.integers(0, 3, len(qid))
    good = labels + rng.normal(0, 0.7, len(qid))  # system A looks at the labels
    bad = rng.normal(0, 1, len(qid))
    names = ["ndcg@10", "ap", "rr"]
    return (gbrank.evaluate(labels, good, qid, names, **kw),
            gbrank.evaluate(labels, bad, qid, names, **kw))


def test_compare_t_test_matches_scipy():
    a, b = _two_systems()
    table = gbrank.compare(a, b, "t", confidence=0.9).pair()
    assert table.attrs["test"] == "t"
    for name in ("ndcg@10", "ap", "rr"):
        x, y = a.per_query[name].to_numpy(), b.per_query[name].to_numpy()
        d = x - y
        low, high = stats.t.interval(0.9, len(d) - 1, loc=d.mean(), scale=stats.sem(d))
        row = table.loc[name]
        assert row["p_value"] == pytest.approx(stats.ttest_rel(x, y).pvalue, rel=1e-12)
        assert row["diff"] == pytest.approx(d.mean(), abs=1e-14)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), abs=1e-12)
        assert (row["mean_a"], row["mean_b"], row["n"]) == pytest.approx((x.mean(), y.mean(), 30))
        assert row["p_value"] < 0.01  # A really is better


def test_compare_wilcoxon_matches_scipy():
    a, b = _two_systems(seed=11)
    table = gbrank.compare(a, b, "wilcoxon").pair()
    for name in ("ndcg@10", "ap", "rr"):
        x, y = a.per_query[name].to_numpy(), b.per_query[name].to_numpy()
        assert table.loc[name, "p_value"] == pytest.approx(stats.wilcoxon(x, y).pvalue, rel=1e-12)


def test_compare_randomization_is_the_exact_sign_flip_test_on_few_lists():
    a, b = _two_systems(n_lists=11, seed=12)
    table = gbrank.compare(a, b, "randomization").pair()
    for name in ("ndcg@10", "ap", "rr"):
        d = (a.per_query[name] - b.per_query[name]).to_numpy()
        # every one of the 2**11 sign assignments, written out
        flips = np.array(list(itertools.product((1.0, -1.0), repeat=len(d))))
        null = np.abs((flips * d).mean(axis=1))
        exact = np.mean(null >= abs(d.mean()) * (1 - 1e-12))
        assert table.loc[name, "p_value"] == pytest.approx(exact, rel=1e-9), name


def test_compare_randomization_on_many_lists_is_seeded_scipy():
    a, b = _two_systems(n_lists=40, seed=13)
    t1 = gbrank.compare(a, b, "randomization", n_resamples=2000, random_state=5).pair()
    t2 = gbrank.compare(a, b, "randomization", n_resamples=2000, random_state=5).pair()
    pd.testing.assert_frame_equal(t1, t2)
    x, y = a.per_query["ap"].to_numpy(), b.per_query["ap"].to_numpy()
    ref = stats.permutation_test((x, y), lambda u, v, axis: np.mean(u - v, axis=axis),
                                 permutation_type="samples", vectorized=True, n_resamples=2000,
                                 alternative="two-sided", rng=5)
    assert t1.loc["ap", "p_value"] == ref.pvalue


def test_compare_refuses_results_with_different_conventions():
    a, _ = _two_systems(empty="zero")
    _, b = _two_systems(empty="one")
    with pytest.raises(ValueError, match=r"different conventions .*'empty': \('zero', 'one'\)"):
        gbrank.compare(a, b)
    a, _ = _two_systems(ties="average")
    _, b = _two_systems(ties="stable", gain="linear")
    with pytest.raises(ValueError, match=r"different conventions") as info:
        gbrank.compare(a, b)
    assert "'ties'" in str(info.value) and "'gain'" in str(info.value)


def test_compare_pairs_common_lists_by_query_id():
    rng = np.random.default_rng(14)
    qid = np.repeat(np.arange(30), 8)
    labels = rng.integers(0, 2, len(qid))
    sa, sb = rng.random(len(qid)), rng.random(len(qid))
    in_a, in_b = qid < 20, qid >= 10
    a = gbrank.evaluate(labels[in_a], sa[in_a], qid[in_a], ["ap", "ndcg"])
    perm = rng.permutation(int(in_b.sum()))  # B's rows (and so its lists) in another order
    b = gbrank.evaluate(labels[in_b][perm], sb[in_b][perm], qid[in_b][perm], ["ndcg", "rr"])
    table = gbrank.compare(a, b).pair()
    assert table.index.tolist() == ["ndcg"]  # the common metric only
    assert table.loc["ndcg", "n"] == 10
    common = np.arange(10, 20)
    d = a.per_query.loc[common, "ndcg"] - b.per_query.loc[common, "ndcg"]
    assert table.loc["ndcg", "diff"] == pytest.approx(d.mean(), abs=1e-14)
    assert table.loc["ndcg", "p_value"] == pytest.approx(
        stats.ttest_rel(a.per_query.loc[common, "ndcg"], b.per_query.loc[common, "ndcg"]).pvalue)


def test_compare_under_skip_pairs_only_lists_both_kept():
    labels = np.array([1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 0])
    qid = np.repeat([1, 2, 3, 4], 3)
    sa = np.array([3, 2, 1, 3, 2, 1, 1, 2, 3, 3, 2, 1], dtype=float)
    a = gbrank.evaluate(labels, sa, qid, ["rr"], empty="skip")
    b = gbrank.evaluate(labels, sa[::-1].copy(), qid, ["rr"], empty="skip")
    assert a.skipped_qids.tolist() == [2]
    assert gbrank.compare(a, b).pair().loc["rr", "n"] == 3


def test_compare_errors():
    a, b = _two_systems()
    with pytest.raises(ValueError, match=r"test must be one of \['randomization', 't', 'wilcoxon'\]"):
        gbrank.compare(a, b, "anova")
    c = gbrank.evaluate([1, 0], [0.1, 0.2], [999, 999], ["p@1"])
    with pytest.raises(ValueError, match="share no metric"):
        gbrank.compare(a, c)
    d = gbrank.evaluate([1, 0], [0.1, 0.2], [999, 999], ["ap"])
    with pytest.raises(ValueError, match="share no query id"):
        gbrank.compare(a, d)
    same = gbrank.compare(a, a).pair()
    assert (same["p_value"] == 1.0).all() and (same["diff"] == 0).all()


# ---------------------------------------------------------------------------------------
# the command line


def _write_trec(tmp_path, lists, *, drop_relevant=(), unjudged_queries=0):
    """Write lists as a TREC run and qrels; returns their paths."""
    run_lines, qrel_lines = [], []
    for i, (scores, labels) in enumerate(lists):
        order = np.argsort(-scores, kind="stable")
        for rank, j in enumerate(order, start=1):
            if (i, j) not in drop_relevant:
                run_lines.append(f"q{i} Q0 d{j} {rank} {float(scores[j])!r} sys")
        for j, lab in enumerate(labels):
            qrel_lines.append(f"q{i} 0 d{j} {int(lab)}")
    for u in range(unjudged_queries):
        run_lines.append(f"extra{u} Q0 dx 1 1.0 sys")
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run.write_text("\n".join(run_lines) + "\n")
    qrels.write_text("\n".join(qrel_lines) + "\n")
    return run, qrels


def _cli(*argv):
    out = io.StringIO()
    status = main(list(map(str, argv)), out=out)
    return status, out.getvalue()


def _lists(seed, n_lists, max_size=30):
    rng = np.random.default_rng(seed)
    lists = []
    for i in range(n_lists):
        n = int(rng.integers(1, max_size + 1))
        labels = rng.integers(0, 4, n) * (rng.random(n) < (0.0 if i % 7 == 0 else 0.4))
        lists.append((rng.permutation(n) + rng.random(n) * 0.5, labels))
    return lists


CLI_TO_TREC = {"ndcg": "ndcg", "ndcg@10": "ndcg_cut_10", "ap": "map", "rr": "recip_rank",
               "p@5": "P_5", "r@10": "recall_10"}


def test_cli_evaluate_matches_pytrec_eval_on_the_same_files(tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    lists = _lists(20, 80)
    run_path, qrels_path = _write_trec(tmp_path, lists)
    with open(run_path) as f:
        run = pytrec_eval.parse_run(f)
    with open(qrels_path) as f:
        qrels = pytrec_eval.parse_qrel(f)
    trec = pytrec_eval.RelevanceEvaluator(
        qrels, {"ndcg", "ndcg_cut.10", "map", "recip_rank", "P.5", "recall.10"}).evaluate(run)

    args = [run_path, qrels_path, *itertools.chain(*(("-m", m) for m in CLI_TO_TREC)),
            "--gain", "linear", "--empty", "zero"]
    status, text = _cli("evaluate", *args, "--format", "json", "--per-query")
    assert status == 0
    doc = json.loads(text)
    assert doc["settings"]["gain"] == "linear" and doc["n_queries"] == 80
    assert doc["n_empty"] == sum(1 for _, lab in lists if not (lab >= 1).any()) > 5
    for name, trec_name in CLI_TO_TREC.items():
        ours = np.array([doc["per_query"][q][name] for q in sorted(trec)])
        expected = np.array([trec[q][trec_name] for q in sorted(trec)])
        np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-12, err_msg=name)
        assert doc["summary"][name]["mean"] == pytest.approx(expected.mean(), abs=1e-12)

    # the CSV tables carry the same numbers
    status, text = _cli("evaluate", *args, "--format", "csv", "--per-query")
    table = pd.read_csv(io.StringIO(text), index_col="qid")
    assert table.loc["q3", "ap"] == pytest.approx(trec["q3"]["map"], abs=1e-6)
    status, text = _cli("evaluate", *args, "--format", "csv")
    means = pd.read_csv(io.StringIO(text), index_col="metric")
    assert means.loc["ndcg@10", "mean"] == pytest.approx(
        np.mean([trec[q]["ndcg_cut_10"] for q in trec]), abs=1e-6)
    assert means.loc["ndcg@10", "n"] == 80


def test_cli_text_output_and_options(tmp_path):
    lists = _lists(21, 12)
    run_path, qrels_path = _write_trec(tmp_path, lists)
    status, text = _cli("evaluate", run_path, qrels_path, "-m", "ndcg@10", "-m", "ap",
                        "--per-query", "--empty", "skip", "--ties", "pessimistic")
    assert status == 0
    kept = [i for i, (_, lab) in enumerate(lists) if (lab >= 1).any()]
    assert 0 < len(kept) < len(lists)
    assert text.startswith(f"# {len(kept)} queries; relevance_threshold=1.0, gain='linear', "
                           "empty='skip', ties='pessimistic', ap_divisor='R', complete=False, depth=None")
    assert "ndcg@10" in text and "ci_low" in text
    for i in range(len(lists)):
        assert (f"\nq{i} " in text) == (i in kept)
    # the default metrics when none is named, printed with the names they are listed with
    status, text = _cli("evaluate", run_path, qrels_path)
    for name in gbrank.evaluation.DEFAULT_RUN_METRICS:
        assert f"\n{name} " in text


def test_cli_ranks_by_score_and_applies_the_tie_policy(tmp_path):
    # the rank column is ignored; d2 and d3 tie
    (tmp_path / "run").write_text("1 Q0 d1 1 0.5 s\n1 Q0 d2 2 0.9 s\n1 Q0 d3 3 0.9 s\n")
    (tmp_path / "qrels").write_text("1 0 d3 1\n1 0 d1 0\n")
    values = {}
    for ties in ("average", "stable", "optimistic", "pessimistic"):
        _, text = _cli("evaluate", tmp_path / "run", tmp_path / "qrels", "-m", "rr", "--ties", ties,
                       "--format", "json")
        values[ties] = json.loads(text)["summary"]["rr"]["mean"]
    assert values == {"average": 0.75, "stable": 0.5, "optimistic": 1.0, "pessimistic": 0.5}


def test_cli_relevant_documents_missing_from_the_run(tmp_path, capsys):
    """R and IDCG come from the qrels, as in trec_eval: a relevant document the run never
    retrieved lowers recall and AP; the CLI says which queries it left out."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    scores = np.array([0.9, 0.8, 0.7, 0.6])
    labels = np.array([0, 1, 0, 1])
    run_path, qrels_path = _write_trec(tmp_path, [(scores, labels)], drop_relevant={(0, 3)},
                                       unjudged_queries=2)
    status, text = _cli("evaluate", run_path, qrels_path, "-m", "r@10", "-m", "ap",
                        "--format", "json", "--per-query")
    assert status == 0
    doc = json.loads(text)
    assert doc["per_query"]["q0"] == {"r@10": 0.5, "ap": 0.25, "n_items": 3, "n_relevant": 2}
    assert doc["settings"]["n_queries_only_in_run"] == 2 and doc["n_queries"] == 1
    err = capsys.readouterr().err
    assert "2 run queries have no qrels line and were left out" in err
    with open(run_path) as f:
        run = pytrec_eval.parse_run(f)
    with open(qrels_path) as f:
        qrels = pytrec_eval.parse_qrel(f)
    trec = pytrec_eval.RelevanceEvaluator(qrels, {"recall.10", "map"}).evaluate(run)
    assert trec["q0"]["recall_10"] == 0.5 and trec["q0"]["map"] == 0.25


def test_cli_q_prints_trec_evals_layout_with_its_per_query_values(tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    lists = _lists(24, 40)
    run_path, qrels_path = _write_trec(tmp_path, lists)
    with open(run_path) as f:
        run = pytrec_eval.parse_run(f)
    with open(qrels_path) as f:
        qrels = pytrec_eval.parse_qrel(f)
    trec = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P.5,10", "ndcg_cut.10", "bpref"}).evaluate(run)
    status, text = _cli("evaluate", run_path, qrels_path, "-q", "-m", "map", "-m", "P.5,10", "-m", "ndcg_cut.10",
                        "-m", "bpref", "--ties", "trec_eval", "--digits", "12")
    assert status == 0
    seen = {}
    for line in text.splitlines():
        measure, qid, value = line.split()
        seen[(measure, qid)] = float(value)
    for q, values in trec.items():
        for measure in ("map", "P_5", "P_10", "ndcg_cut_10", "bpref"):
            assert seen[(measure, q)] == pytest.approx(values[measure], abs=1e-11)
    for measure in ("map", "P_5", "P_10", "ndcg_cut_10", "bpref"):
        assert seen[(measure, "all")] == pytest.approx(np.mean([v[measure] for v in trec.values()]), abs=1e-11)
    status, text = _cli("evaluate", run_path, qrels_path, "-m", "map", "--format", "trec")
    assert text.split()[:2] == ["map", "all"] and len(text.splitlines()) == 1


@pytest.mark.parametrize("run_text, qrels_text, match", [
    ("1 Q0 d1 1 0.5\n", "1 0 d1 1\n", r"has 5 fields on line 1, needs 6"),
    ("1 Q0 d1 1 0.5 s\n1 Q0 d2 2 s\n", "1 0 d1 1\n", r"has 5 fields on line 2, needs 6"),
    ("1 Q0 d1 1 high s\n", "1 0 d1 1\n", r"non-numeric or non-finite score 'high' on line 1"),
    ("1 Q0 d1 1 nan s\n", "1 0 d1 1\n", r"non-numeric or non-finite score"),
    ("1 Q0 d1 1 0.5 s\n1 Q0 d1 2 0.4 s\n", "1 0 d1 1\n", r"lists document 'd1' twice for query '1' \(line 2\)"),
    ("1 Q0 d1 1 0.5 s\n", "1 0 d1\n", r"has 3 fields on line 1, needs 4"),
    ("", "1 0 d1 1\n", r"the run file .* is empty"),
    ("1 Q0 d1 1 0.5 s\n", "2 0 d1 1\n", r"no query of .* has a line in"),
    ("\x00\x01\x02", "1 0 d1 1\n", r"the run file .* is binary, not a TREC run \(a NUL byte on line 1\)"),
])
def test_cli_reports_bad_files(tmp_path, capsys, run_text, qrels_text, match):
    (tmp_path / "run").write_text(run_text)
    (tmp_path / "qrels").write_text(qrels_text)
    status, _ = _cli("evaluate", tmp_path / "run", tmp_path / "qrels", "-m", "ap")
    assert status == 2
    err = capsys.readouterr().err
    assert err.startswith("gbrank evaluate: error: ")
    assert pytest.importorskip("re").search(match, err), err


def test_cli_accepts_trec_evals_quirks_and_refuses_fractional_grades_with_the_exp_gain(tmp_path, capsys):
    (tmp_path / "run").write_text("# comment\n1 Q0 d1 1 0.5 s extra fields\n1 Q0 d2 2 0.4 s\n")
    (tmp_path / "qrels").write_text("1 0 d1 1.5\n1 0 d2 -1\n")
    status, text = _cli("evaluate", tmp_path / "run", tmp_path / "qrels", "-m", "ndcg", "--format", "json")
    assert status == 0 and json.loads(text)["summary"]["ndcg"]["mean"] == 1.0
    status, _ = _cli("evaluate", tmp_path / "run", tmp_path / "qrels", "-m", "ndcg", "--gain", "exp")
    assert status == 2 and "graded qrels relevance must be integers" in capsys.readouterr().err


def test_cli_reports_missing_files_and_bad_metrics(tmp_path, capsys):
    status, _ = _cli("evaluate", tmp_path / "nope", tmp_path / "nope2")
    assert status == 2 and "does not exist" in capsys.readouterr().err
    run_path, qrels_path = _write_trec(tmp_path, _lists(22, 3))
    status, _ = _cli("evaluate", run_path, qrels_path, "-m", "ndcg@ten")
    assert status == 2 and "cutoff of 'ndcg@ten' must be a positive integer" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:  # argparse itself rejects an unknown choice
        _cli("evaluate", run_path, qrels_path, "--ties", "random")
    assert info.value.code == 2
    assert "invalid choice: 'random'" in capsys.readouterr().err


def test_cli_as_a_program(tmp_path):
    run_path, qrels_path = _write_trec(tmp_path, _lists(23, 5))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "gbrank.cli", "evaluate", str(run_path),
                          str(qrels_path), "-m", "ap", "--format", "csv"],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "metric,mean,std,ci_low,ci_high,n"
    helped = subprocess.run([sys.executable, "-m", "gbrank.cli", "--help"], capture_output=True,
                            text=True, env=env, cwd=tmp_path, timeout=300)
    assert helped.returncode == 0 and "evaluate" in helped.stdout
    missing = subprocess.run([sys.executable, "-m", "gbrank.cli"], capture_output=True, text=True,
                             env=env, cwd=tmp_path, timeout=300)
    assert missing.returncode == 2 and "required: COMMAND" in missing.stderr


def test_cli_module_imports_only_the_standard_library_at_the_top():
    tree = ast.parse((ROOT / "gbrank" / "cli.py").read_text())
    top = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            top.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            top.add((node.module or "").split(".")[0])
    assert top <= set(sys.stdlib_module_names) | {"__future__"}, top


def test_cli_reads_document_ids_that_look_like_missing_values(tmp_path):
    (tmp_path / "run").write_text("q Q0 NA 1 2.0 s\nq Q0 null 2 1.0 s\nq Q0 nan 3 0.5 s\n")
    (tmp_path / "qrels").write_text("q 0 null 1\nq 0 NA 0\n")
    _, text = _cli("evaluate", tmp_path / "run", tmp_path / "qrels", "-m", "rr", "--format", "json",
                   "--per-query")
    assert json.loads(text)["per_query"]["q"] == {"rr": 0.5, "n_items": 3, "n_relevant": 1}


def test_docstring_examples_hold():
    import doctest

    import gbrank.evaluation._evaluate as module

    failed, attempted = doctest.testmod(module, raise_on_error=False)
    assert attempted > 0 and failed == 0


def test_docs_metrics_page_examples_run():
    import doctest

    failed, attempted = doctest.testfile(str(ROOT / "docs" / "metrics.md"), module_relative=False,
                                         optionflags=doctest.NORMALIZE_WHITESPACE)
    assert attempted > 0 and failed == 0


def test_worked_example_of_the_docs():
    """The hand-computed table of docs/metrics.md."""
    log2 = np.log2
    idcg = 3 + 1 / log2(3)
    pess = {"dcg": 3 / log2(4) + 1 / log2(5), "ap": (1 / 3 + 2 / 4) / 2, "rr": 1 / 3, "p@3": 1 / 3,
            "r@3": 0.5, "rbp@0.5": 0.1875, "nrbp@0.5": 0.25, "auc": 2 / 6, "mean_rank": 3.5,
            "max_rank": 4.0}
    opt = {"dcg": 3 / log2(3) + 1 / log2(5), "ap": 0.5, "rr": 0.5, "p@3": 1 / 3, "r@3": 0.5,
           "rbp@0.5": 0.3125, "nrbp@0.5": 0.3125 / 0.75, "auc": 0.5, "mean_rank": 3.0,
           "max_rank": 4.0}
    for d in (pess, opt):
        d["ndcg"] = d["dcg"] / idcg
    names = list(pess)
    args = ([0, 2, 0, 1, 0], [0.9, 0.7, 0.7, 0.3, 0.1], ["A"] * 5, names)
    expected = {"pessimistic": pess, "optimistic": opt, "stable": opt,
                "average": {m: (pess[m] + opt[m]) / 2 for m in names}}
    for ties, values in expected.items():
        row = gbrank.evaluate(*args, ties=ties).per_query.loc["A"]
        for m in names:
            assert row[m] == pytest.approx(values[m], abs=1e-12), (ties, m)
    assert gbrank.evaluate(*args[:3], "ndcg", gain="linear").per_query.loc["A", "ndcg"] == \
        pytest.approx(0.5936, abs=5e-5)
