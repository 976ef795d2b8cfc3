"""The evaluator's metrics against independent oracles.

- pytrec_eval (trec_eval) on thousands of tie-free random lists;
- scikit-learn's tie-averaged ``ndcg_score`` and ``roc_auc_score`` on lists with ties;
- the brute-force definitions of ``brute.py`` (every ordering of every tie group) for
  every metric under every tie policy.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import gbrank
from brute import BRUTE_METRICS, expected_metric, metric_of_order

pytrec_eval = pytest.importorskip("pytrec_eval")


# ---------------------------------------------------------------------------------------
# random data


def _tie_free_lists(seed: int, n_lists: int, max_size: int = 100):
    """Lists of sizes 1..max_size, graded labels 0..4, continuous scores without ties.

    About one list in eight has no relevant item and one in eight has only relevant ones."""
    rng = np.random.default_rng(seed)
    lists = []
    for i in range(n_lists):
        n = int(rng.integers(1, max_size + 1))
        kind = i % 8
        if kind == 0:
            labels = np.zeros(n, dtype=np.int64)
        elif kind == 1:
            labels = rng.integers(1, 5, n)
        else:
            p_rel = rng.uniform(0.02, 0.6)
            labels = np.where(rng.random(n) < p_rel, rng.integers(1, 5, n), 0)
        scores = rng.permutation(n) + rng.uniform(0.0, 0.5, n)  # distinct by construction
        lists.append((scores, labels))
    return lists


def _stack(lists):
    qid = np.concatenate([np.full(len(s), i) for i, (s, _) in enumerate(lists)])
    scores = np.concatenate([s for s, _ in lists]).astype(float)
    labels = np.concatenate([lab for _, lab in lists]).astype(float)
    return labels, scores, qid


def _tied_lists(seed: int, n_lists: int, max_size: int = 8, max_label: int = 3):
    """Small lists with heavy ties: scores drawn from a handful of values.

    Cycles through single items, no relevant item, all relevant, binary and graded labels."""
    rng = np.random.default_rng(seed)
    lists = []
    for i in range(n_lists):
        kind = i % 6
        n = 1 if kind == 0 else int(rng.integers(2, max_size + 1))
        if kind == 1:
            labels = np.zeros(n, dtype=np.int64)
        elif kind == 2:
            labels = rng.integers(1, max_label + 1, n)
        elif kind == 3:
            labels = rng.integers(0, 2, n)
        else:
            labels = rng.integers(0, max_label + 1, n)
        n_values = int(rng.integers(1, max(2, n // 2) + 1))  # few distinct scores
        scores = rng.integers(0, n_values, n).astype(float) * 0.25
        lists.append((scores, labels))
    return lists


# ---------------------------------------------------------------------------------------
# pytrec_eval


CUTS = (1, 3, 5, 10, 20)
TREC_TO_GBRANK = {
    "ndcg": "ndcg", "map": "ap", "recip_rank": "rr",
    **{f"ndcg_cut_{k}": f"ndcg@{k}" for k in CUTS},
    **{f"P_{k}": f"p@{k}" for k in CUTS},
    **{f"recall_{k}": f"r@{k}" for k in CUTS},
    **{f"map_cut_{k}": f"ap@{k}" for k in CUTS},
}
TREC_MEASURES = {"ndcg", "map", "recip_rank", *(f"{m}.{','.join(map(str, CUTS))}"
                                                 for m in ("ndcg_cut", "P", "recall", "map_cut"))}


def _trec_dicts(lists):
    qrels, run = {}, {}
    for i, (scores, labels) in enumerate(lists):
        q = f"q{i}"
        qrels[q] = {f"d{j}": int(lab) for j, lab in enumerate(labels)}
        run[q] = {f"d{j}": float(s) for j, s in enumerate(scores)}
    return qrels, run


@pytest.mark.parametrize("seed", [0, 1])
def test_matches_pytrec_eval_on_tie_free_lists(seed):
    lists = _tie_free_lists(seed, 1500)
    qrels, run = _trec_dicts(lists)
    trec = pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES).evaluate(run)
    assert len(trec) == len(lists)

    labels, scores, qid = _stack(lists)
    # trec_eval's settings: gain = the raw label, relevant = label >= 1, a query without a
    # relevant document scores 0, AP@k divided by R
    result = gbrank.evaluate(labels, scores, qid, list(TREC_TO_GBRANK.values()),
                             gain="linear", relevance_threshold=1, empty="zero", ap_divisor="R")
    ours = result.per_query
    assert result.n_empty == sum(1 for _, lab in lists if not (lab >= 1).any()) > 100
    for trec_name, name in TREC_TO_GBRANK.items():
        expected = np.array([trec[f"q{i}"][trec_name] for i in range(len(lists))])
        np.testing.assert_allclose(ours[name].to_numpy(), expected, rtol=0, atol=1e-12,
                                   err_msg=f"{name} vs trec_eval {trec_name}")


def test_pytrec_eval_comparison_is_sensitive_to_the_conventions():
    """The settings above are the only ones that match: the other gain, empty policy
    or AP divisor each change the numbers on the same data."""
    lists = _tie_free_lists(7, 300)
    qrels, run = _trec_dicts(lists)
    trec = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg", "map", "map_cut.5"}).evaluate(run)
    labels, scores, qid = _stack(lists)
    ndcg_trec = np.array([trec[f"q{i}"]["ndcg"] for i in range(len(lists))])
    ap5_trec = np.array([trec[f"q{i}"]["map_cut_5"] for i in range(len(lists))])
    exp_gain = gbrank.evaluate(labels, scores, qid, "ndcg", gain="exp").per_query["ndcg"]
    assert np.abs(exp_gain.to_numpy() - ndcg_trec).max() > 1e-3
    ones = gbrank.evaluate(labels, scores, qid, "ndcg", gain="linear", empty="one").per_query["ndcg"]
    assert np.abs(ones.to_numpy() - ndcg_trec).max() == 1.0
    min_rk = gbrank.evaluate(labels, scores, qid, "ap@5", ap_divisor="min(R,k)").per_query["ap@5"]
    assert np.abs(min_rk.to_numpy() - ap5_trec).max() > 1e-3


# ---------------------------------------------------------------------------------------
# scikit-learn (tie-averaged nDCG, AUC)


@pytest.mark.parametrize("k", [None, 1, 2, 3, 5])
def test_ndcg_with_ties_matches_sklearn(k):
    from sklearn.metrics import ndcg_score

    lists = [(s, lab) for s, lab in _tied_lists(11, 400, max_size=12, max_label=4) if len(s) > 1]
    labels, scores, qid = _stack(lists)
    name = "ndcg" if k is None else f"ndcg@{k}"
    ours = gbrank.evaluate(labels, scores, qid, name, ties="average", gain="linear",
                           empty="zero").per_query[name].to_numpy()
    expected = np.array([ndcg_score(lab[None, :], s[None, :], k=k) for s, lab in lists])
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-12)
    # the data really is tied: a fixed tie order gives different numbers
    stable = gbrank.evaluate(labels, scores, qid, name, ties="pessimistic", gain="linear",
                             empty="zero").per_query[name].to_numpy()
    assert np.abs(stable - expected).max() > 0.05


def test_auc_with_ties_matches_sklearn():
    from sklearn.metrics import roc_auc_score

    lists = [(s, lab) for s, lab in _tied_lists(12, 600, max_size=15)
             if 0 < (lab >= 1).sum() < len(lab)]
    assert len(lists) > 200
    labels, scores, qid = _stack(lists)
    ours = gbrank.evaluate(labels, scores, qid, "auc", ties="average").per_query["auc"].to_numpy()
    expected = np.array([roc_auc_score(lab >= 1, s) for s, lab in lists])
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------------------
# brute force: every metric x every tie policy


def _brute_table(lists, names, ties, empty, **kw):
    fill = 0.0 if empty == "zero" else 1.0
    rows = []
    for scores, labels in lists:
        row = []
        for name in names:
            v = expected_metric(name, list(scores), [int(x) for x in labels], ties, **kw)
            row.append(fill if v is None else v)
        rows.append(row)
    return np.array(rows)


TIED_LISTS = _tied_lists(2024, 240)


@pytest.mark.parametrize("ties", ["average", "pessimistic", "optimistic", "stable"])
@pytest.mark.parametrize("gain,threshold,empty", [("exp", 1, "zero"), ("linear", 2, "one")])
def test_every_metric_matches_brute_force(ties, gain, threshold, empty):
    lists = TIED_LISTS
    labels, scores, qid = _stack(lists)
    names = list(BRUTE_METRICS)
    kw = dict(gain_kind=gain, threshold=threshold, max_grade=float(labels.max()))
    expected = _brute_table(lists, names, ties, empty, **kw)
    result = gbrank.evaluate(labels, scores, qid, names, ties=ties, gain=gain,
                             relevance_threshold=threshold, empty=empty)
    got = result.per_query[names].to_numpy()
    for j, name in enumerate(names):
        np.testing.assert_allclose(got[:, j], expected[:, j], rtol=1e-12, atol=1e-12,
                                   err_msg=f"{name} under ties={ties!r}")
    # the AP@k divisor min(R, k) (LightGBM/XGBoost) as well
    ap_names = ["ap@1", "ap@3", "ap@5", "ap"]
    expected = _brute_table(lists, ap_names, ties, empty, ap_divisor="min(R,k)", **kw)
    got = gbrank.evaluate(labels, scores, qid, ap_names, ties=ties, gain=gain,
                          relevance_threshold=threshold, empty=empty,
                          ap_divisor="min(R,k)").per_query[ap_names].to_numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_tie_policies_differ_on_tied_lists():
    """The brute-force comparison above means something only if the policies give
    different numbers on that data."""
    labels, scores, qid = _stack(TIED_LISTS)
    means = {t: gbrank.evaluate(labels, scores, qid, ["ndcg", "ap", "auc"], ties=t).mean()
             for t in ("average", "pessimistic", "optimistic", "stable")}
    for name in ("ndcg", "ap", "auc"):
        assert means["pessimistic"][name] < means["average"][name] < means["optimistic"][name]
        assert means["stable"][name] != means["average"][name]


def test_stable_policy_follows_input_order_within_a_list():
    # rows of one list interleaved with another list: "stable" keeps each list's row order
    labels = np.array([0, 5, 1, 0, 0, 1])
    scores = np.array([1.0, 3.0, 1.0, 2.0, 1.0, 1.0])
    qid = np.array([1, 2, 1, 2, 1, 1])
    r = gbrank.evaluate(labels, scores, qid, ["rr", "mean_rank"], ties="stable", gain="linear")
    # list 1 in input order: labels 0, 1, 0, 1 all tied -> relevant at ranks 2 and 4
    assert r.per_query.loc[1, "rr"] == 0.5
    assert r.per_query.loc[1, "mean_rank"] == 3.0
    # list 2: label 5 scored 3.0 first
    assert r.per_query.loc[2, "rr"] == 1.0


def test_every_family_of_the_record_has_a_brute_force_oracle():
    from gbrank.metrics import EXTERNAL, METRICS

    covered = {name.partition("@")[0] for name in BRUTE_METRICS}
    missing = {n for n, rec in METRICS.items() if rec.code != EXTERNAL} - covered
    assert not missing, f"add {sorted(missing)} to tests/brute.py (metric_of_order and BRUTE_METRICS)"


def test_brute_force_helper_on_hand_computed_values():
    """The oracle itself, on numbers worked out by hand."""
    assert metric_of_order("dcg", [3, 0, 1]) == pytest.approx(7 + 1 / 2)
    assert metric_of_order("ndcg@2", [0, 1], gain_kind="linear") == pytest.approx(1 / math.log2(3))
    assert metric_of_order("ap", [0, 1, 1]) == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert metric_of_order("ap@2", [0, 1, 1], ap_divisor="min(R,k)") == pytest.approx(0.5 / 2)
    assert metric_of_order("rbp@0.5", [0, 1]) == pytest.approx(0.25)
    assert metric_of_order("nrbp@0.5", [0, 1]) == pytest.approx(0.5)
    assert metric_of_order("auc", [1, 0, 1, 0]) == pytest.approx(3 / 4)
    assert expected_metric("rr", [1.0, 1.0], [0, 1], "average") == pytest.approx(0.75)
    assert expected_metric("max_rank", [1.0, 1.0, 1.0], [1, 0, 0], "average") == pytest.approx(2.0)
    assert metric_of_order("p@10", [1, 1]) == pytest.approx(0.2)


def test_larger_lists_with_ties_match_pessimistic_brute_force():
    """Fixed tie orders on lists too large to enumerate: the kernels reduce to the plain
    metric of one order, which the brute force computes directly."""
    rng = np.random.default_rng(5)
    lists = []
    for _ in range(60):
        n = int(rng.integers(20, 80))
        lists.append((rng.integers(0, 6, n).astype(float), rng.integers(0, 3, n)))
    labels, scores, qid = _stack(lists)
    names = ["ndcg@10", "ap", "rr", "nrbp@0.9", "auc", "max_rank"]
    for ties in ("pessimistic", "optimistic", "stable"):
        got = gbrank.evaluate(labels, scores, qid, names, ties=ties).per_query[names].to_numpy()
        np.testing.assert_allclose(got, _brute_table(lists, names, ties, "zero"), rtol=1e-12, atol=1e-12)


def test_average_policy_mean_over_sampled_orders_on_a_long_list():
    """Tie-averaged AP and RR of a long list agree with a Monte-Carlo mean over random tie orders."""
    rng = np.random.default_rng(9)
    n = 60
    scores = rng.integers(0, 4, n).astype(float)
    labels = (rng.random(n) < 0.2).astype(int)
    exact = gbrank.evaluate(labels, scores, np.zeros(n), ["ap", "rr", "ndcg@5"]).per_query.iloc[0]
    draws = []
    for _ in range(4000):
        jitter = scores + rng.random(n) * 1e-3  # a random order inside every tie group
        r = np.argsort(-jitter, kind="stable")
        draws.append([metric_of_order(m, list(labels[r])) for m in ("ap", "rr", "ndcg@5")])
    mc = np.array(draws)
    se = mc.std(axis=0) / math.sqrt(len(mc))
    assert np.all(np.abs(mc.mean(axis=0) - exact.to_numpy()[:3]) < 5 * se + 1e-12)


def test_per_query_table_columns_and_sizes():
    lists = _tie_free_lists(3, 50, max_size=10)
    labels, scores, qid = _stack(lists)
    r = gbrank.evaluate(labels, scores, qid, ["ndcg@10", "ap"], gain="linear")
    assert list(r.per_query.columns) == ["ndcg@10", "ap", "n_items", "n_relevant"]
    assert isinstance(r.per_query, pd.DataFrame)
    assert r.per_query["n_items"].tolist() == [len(s) for s, _ in lists]


@pytest.mark.parametrize("ties", ["average", "pessimistic"])
def test_real_valued_labels_and_extreme_parameters_match_brute_force(ties):
    """Linear gain on real-valued grades, a fractional threshold, persistence near 0 and 1."""
    rng = np.random.default_rng(31)
    lists = []
    for _ in range(150):
        n = int(rng.integers(1, 8))
        labels = np.round(rng.uniform(0, 3, n) * (rng.random(n) < 0.6), 2)
        lists.append((rng.integers(0, 3, n).astype(float), labels))
    qid = np.concatenate([np.full(len(s), i) for i, (s, _) in enumerate(lists)])
    scores = np.concatenate([s for s, _ in lists])
    labels = np.concatenate([lab for _, lab in lists])
    names = ["ndcg", "ndcg@2", "dcg@4", "ap@2", "rr", "rbp@0.01", "nrbp@0.99", "p@2", "r@2", "auc",
             "mean_rank", "max_rank"]
    got = gbrank.evaluate(labels, scores, qid, names, ties=ties, gain="linear",
                          relevance_threshold=1.5).per_query[names].to_numpy()
    expected = np.array([[
        (lambda v: 0.0 if v is None else v)(
            expected_metric(m, list(s), list(lab), ties, gain_kind="linear", threshold=1.5))
        for m in names] for s, lab in lists])
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
