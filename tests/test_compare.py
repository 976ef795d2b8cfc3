"""``gbrank.compare`` with many systems: every statistic against scipy and statsmodels called
directly on seeded data, the pairing by query id, the tables, and the errors.  (The
two-system form is tested in test_evaluate_api.py.)"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

import gbrank
from gbrank.evaluation import Comparison, adjust_p_values

METRICS = ["ndcg@10", "ap", "rr"]


def _systems(n_systems=4, n_lists=30, seed=0, **kw) -> dict:
    """System s scores = labels * s / 2 + noise: later systems are better."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(5, 15, n_lists)
    qid = np.repeat(np.arange(n_lists), sizes)
    labels = rng.integers(0, 3, len(qid))
    return {f"sys{s}": gbrank.evaluate(labels, labels * s / 2 + rng.normal(size=len(qid)), qid, METRICS, **kw)
            for s in range(n_systems)}


@pytest.fixture(scope="module")
def systems():
    return _systems()


@pytest.fixture(scope="module")
def everything(systems):
    return gbrank.compare(systems, test=["t", "wilcoxon", "randomization"], correction="holm", tukey=True,
                          confidence=0.9, n_resamples=999, random_state=7)


def test_the_means_table_is_numpy_and_the_student_t_interval(systems, everything):
    assert isinstance(everything, Comparison)
    assert everything.systems == tuple(systems) and everything.metrics == tuple(METRICS)
    assert everything.n_common == 30 and len(everything.means) == 4 * 3
    for row in everything.means.itertuples():
        v = systems[row.system].per_query[row.metric].to_numpy()
        low, high = stats.t.interval(0.9, len(v) - 1, loc=v.mean(), scale=stats.sem(v)) if v.std() > 0 \
            else (v.mean(), v.mean())  # scipy gives NaN for a zero scale
        assert row.mean == pytest.approx(v.mean(), abs=1e-14)
        assert row.std == pytest.approx(v.std(ddof=1), abs=1e-14)
        assert (row.ci_low, row.ci_high) == pytest.approx((low, high), abs=1e-12)
        assert row.n == 30


def test_every_pair_every_test_matches_scipy(systems, everything):
    pairs = everything.pairs
    assert len(pairs) == 3 * 6 * 3  # metrics x pairs x tests
    assert set(zip(pairs["a"], pairs["b"])) == set(itertools.combinations(systems, 2))
    for row in pairs.itertuples():
        x = systems[row.a].per_query[row.metric].to_numpy()
        y = systems[row.b].per_query[row.metric].to_numpy()
        if row.test == "t":
            ref = stats.ttest_rel(x, y)
        elif row.test == "wilcoxon":
            ref = stats.wilcoxon(x, y)
        else:
            ref = stats.permutation_test((x, y), lambda u, v, axis: np.mean(u - v, axis=axis),
                                         permutation_type="samples", vectorized=True, n_resamples=999,
                                         alternative="two-sided", rng=7)
        assert row.p_value == pytest.approx(ref.pvalue, rel=1e-12), row
        assert row.statistic == pytest.approx(ref.statistic, rel=1e-12), row
        d = x - y
        low, high = stats.t.interval(0.9, len(d) - 1, loc=d.mean(), scale=stats.sem(d))
        assert row.diff == pytest.approx(d.mean(), abs=1e-14)
        assert (row.ci_low, row.ci_high) == pytest.approx((low, high), abs=1e-12)
        assert (row.mean_a, row.mean_b) == pytest.approx((x.mean(), y.mean()), abs=1e-14)
        assert row.d_z == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)
        assert row.better == np.mean(x > y) and row.worse == np.mean(x < y)
    # the best system really is better than the worst
    t = pairs[(pairs.a == "sys0") & (pairs.b == "sys3") & (pairs.test == "t")]
    assert (t["diff"] < 0).all() and t["significant"].all()


@pytest.mark.parametrize("correction", ["holm", "bonferroni", "fdr_bh"])
def test_the_correction_is_statsmodels_per_metric_and_test(systems, correction):
    c = gbrank.compare(systems, test=["t", "wilcoxon"], correction=correction, alpha=0.01)
    for (metric, test), rows in c.pairs.groupby(["metric", "test"]):
        reject, adjusted, _, _ = multipletests(rows["p_value"], alpha=0.01, method=correction)
        np.testing.assert_allclose(rows["p_adjusted"], adjusted, rtol=1e-12)
        np.testing.assert_array_equal(rows["significant"], adjusted < 0.01)
    assert c.settings["correction"] == correction
    none = gbrank.compare(systems)
    np.testing.assert_array_equal(none.pairs["p_adjusted"], none.pairs["p_value"])


def test_adjust_p_values_leaves_nan_out_of_the_family():
    p = [np.nan, 0.01, 0.04, np.nan, 0.03]
    out = adjust_p_values(p, "holm")
    assert np.isnan(out[[0, 3]]).all()
    np.testing.assert_allclose(out[[1, 2, 4]], multipletests([0.01, 0.04, 0.03], method="holm")[1])
    np.testing.assert_array_equal(adjust_p_values(p, None), np.array(p))
    assert np.isnan(adjust_p_values([np.nan], "fdr_bh")).all()
    with pytest.raises(ValueError, match=r"correction must be one of \['bonferroni', 'fdr_bh', 'holm'\]"):
        adjust_p_values(p, "sidak")


def test_tukey_is_scipy_and_agrees_with_statsmodels(systems, everything):
    from statsmodels.stats.multicomp import pairwise_tukeyhsd

    names = list(systems)
    for metric in METRICS:
        groups = [systems[n].per_query[metric].to_numpy() for n in names]
        ref = stats.tukey_hsd(*groups)
        ci = ref.confidence_interval(confidence_level=0.9)
        sm = pairwise_tukeyhsd(np.concatenate(groups), np.repeat(names, 30), alpha=0.1)
        sm_p = dict(zip(itertools.combinations(sm.groupsunique, 2), sm.pvalues))
        rows = everything.tukey[everything.tukey.metric == metric]
        assert len(rows) == 6
        for row in rows.itertuples():
            i, j = names.index(row.a), names.index(row.b)
            assert row.diff == pytest.approx(groups[i].mean() - groups[j].mean(), abs=1e-12)
            assert row.p_value == pytest.approx(ref.pvalue[i, j], rel=1e-12)
            assert (row.ci_low, row.ci_high) == pytest.approx((ci.low[i, j], ci.high[i, j]), rel=1e-12)
            assert row.p_value == pytest.approx(sm_p[(row.a, row.b)], abs=2e-3)
    assert gbrank.compare(systems).tukey is None


def test_against_a_baseline_pairs_every_other_system_with_it(systems):
    c = gbrank.compare(systems, baseline="sys1", correction="holm")
    assert set(zip(c.pairs["a"], c.pairs["b"])) == {("sys0", "sys1"), ("sys2", "sys1"), ("sys3", "sys1")}
    for row in c.pairs.itertuples():  # diff = other - baseline
        d = systems[row.a].per_query[row.metric] - systems["sys1"].per_query[row.metric]
        assert row.diff == pytest.approx(d.mean(), abs=1e-14)
    # the family is the three comparisons of one metric
    rows = c.pairs[c.pairs.metric == "ap"]
    np.testing.assert_allclose(rows["p_adjusted"], multipletests(rows["p_value"], method="holm")[1])


def test_the_two_system_form_is_a_pair_of_the_many_system_form(systems):
    a, b = systems["sys2"], systems["sys0"]
    both = gbrank.compare(a, b, "wilcoxon")
    assert isinstance(both, Comparison) and both.systems == ("a", "b")
    two = both.pair()
    pd.testing.assert_frame_equal(two, both.pair("a", "b"))
    many = gbrank.compare({"x": a, "y": b, "z": systems["sys1"]}, test="wilcoxon")
    pd.testing.assert_frame_equal(two, many.pair("x", "y"))
    pd.testing.assert_frame_equal(both.pairs.drop(columns=["a", "b"]),
                                  gbrank.compare({"x": a, "y": b}, test="wilcoxon").pairs.drop(columns=["a", "b"]))
    flipped = many.pair("y", "x")
    np.testing.assert_allclose(flipped["diff"], -two["diff"])
    np.testing.assert_allclose(flipped[["ci_low", "ci_high"]].to_numpy(), -two[["ci_high", "ci_low"]].to_numpy())
    np.testing.assert_allclose(flipped["p_value"], two["p_value"])
    assert flipped.attrs["test"] == "wilcoxon"
    with pytest.raises(ValueError, match="test 't' was not run"):
        many.pair("x", "y", test="t")
    with pytest.raises(ValueError, match="no comparison of 'x' with 'q'"):
        many.pair("x", "q")


def test_a_list_with_names_and_default_names(systems):
    results = list(systems.values())
    named = gbrank.compare(results, names=["A", "B", "C", "D"])
    assert named.systems == ("A", "B", "C", "D")
    pd.testing.assert_frame_equal(named.pairs.drop(columns=["a", "b"]),
                                  gbrank.compare(systems).pairs.drop(columns=["a", "b"]))
    assert gbrank.compare(results[:2]).systems == ("s0", "s1")


def test_pairs_are_over_the_queries_all_systems_share():
    rng = np.random.default_rng(3)
    qid = np.repeat(np.arange(40), 6)
    labels = rng.integers(0, 2, len(qid))
    parts = {"a": qid < 30, "b": qid >= 5, "c": (qid >= 10) | (qid < 3)}
    res = {n: gbrank.evaluate(labels[m], rng.random(int(m.sum())), qid[m], ["ap", "rr"]) for n, m in parts.items()}
    c = gbrank.compare(res, test="t")
    common = np.arange(10, 30)
    assert c.n_common == 20 and c.n_queries == {"a": 30, "b": 35, "c": 33}
    assert (c.means["n"] == 20).all() and (c.pairs["n"] == 20).all()
    row = c.pairs[(c.pairs.metric == "ap") & (c.pairs.a == "b") & (c.pairs.b == "c")].iloc[0]
    x, y = res["b"].per_query.loc[common, "ap"], res["c"].per_query.loc[common, "ap"]
    assert row["p_value"] == pytest.approx(stats.ttest_rel(x, y).pvalue, rel=1e-12)
    m = c.means.set_index(["system", "metric"]).loc[("a", "rr"), "mean"]
    assert m == pytest.approx(res["a"].per_query.loc[common, "rr"].mean())


def test_query_ids_may_be_tuples_such_as_split_and_query():
    """The bench reports pair contenders by (split, qid)."""
    rng = np.random.default_rng(4)
    index = pd.MultiIndex.from_product([["s0", "s1"], range(10)], names=["split", "qid"])
    res = {}
    for n in ("a", "b", "c"):
        table = pd.DataFrame({"ap": rng.random(20), "n_items": 5, "n_relevant": 1}, index=index)
        res[n] = gbrank.EvaluationResult(per_query=table.sample(frac=1, random_state=0), metrics=("ap",))
    c = gbrank.compare(res, baseline="a")
    row = c.pairs[c.pairs.a == "c"].iloc[0]
    x, y = res["c"].per_query.loc[index, "ap"], res["a"].per_query.loc[index, "ap"]
    assert row["n"] == 20 and row["p_value"] == pytest.approx(stats.ttest_rel(x, y).pvalue, rel=1e-12)


@pytest.mark.filterwarnings("ignore:Precision loss occurred:RuntimeWarning")
def test_effect_sizes_by_hand():
    """Per-query values a = (1, .5, .5, 0), b = (.5, .5, 0, 0): d = (.5, 0, .5, 0)."""
    table = lambda v: pd.DataFrame({"rr": v, "n_items": 3, "n_relevant": 1},  # noqa: E731
                                   index=pd.Index([1, 2, 3, 4], name="qid"))
    a = gbrank.EvaluationResult(per_query=table([1, .5, .5, 0]), metrics=("rr",))
    b = gbrank.EvaluationResult(per_query=table([.5, .5, 0, 0]), metrics=("rr",))
    row = gbrank.compare({"a": a, "b": b}).pairs.iloc[0]
    # mean 0.25, sd (ddof 1) = sqrt(4 * 0.0625 / 3) = 0.288675
    assert row["diff"] == pytest.approx(0.25)
    assert row["d_z"] == pytest.approx(0.25 / np.sqrt(0.25 / 3))
    assert (row["better"], row["worse"]) == (0.5, 0.0)
    same = gbrank.compare({"a": a, "a2": a}).pairs.iloc[0]
    assert (same["d_z"], same["p_value"], same["better"], same["worse"]) == (0.0, 1.0, 0.0, 0.0)
    shifted = gbrank.EvaluationResult(per_query=table([1.5, 1, 1, .5]), metrics=("rr",))
    assert gbrank.compare({"s": shifted, "a": a}).pairs.iloc[0]["d_z"] == np.inf


def test_markdown_and_latex_tables(systems):
    c = gbrank.compare({"bm|25": systems["sys0"], "lambda_mart": systems["sys3"], "x&y": systems["sys1"]},
                       test=["t", "wilcoxon"], correction="holm", tukey=True)
    md = c.to_markdown()
    lines = md.splitlines()
    assert "Holm-adjusted p of the paired t-test" in lines[0]
    assert "| system | ndcg@10 | ap | rr |" in lines
    assert sum(line.startswith("| bm\\|25 |") for line in lines) == 1  # pipes in names escaped
    means = c.means.set_index(["system", "metric"])
    m, lo, hi = means.loc[("lambda_mart", "ap"), ["mean", "ci_low", "ci_high"]]
    assert f"{m:.4f} ± {(hi - lo) / 2:.4f}" in md
    row = c.pairs[(c.pairs.a == "bm|25") & (c.pairs.b == "lambda_mart") & (c.pairs.metric == "ap")
                  & (c.pairs.test == "t")].iloc[0]
    assert f"| bm\\|25 - lambda_mart | " in md and f"{row['diff']:+.4f} (d_z {row['d_z']:.2f}, " in md
    assert row["significant"] and "*" in md
    assert "Tukey HSD (assumes independent samples" in md
    assert len([line for line in lines if line.startswith("| ")]) == 3 * (1 + 3)  # header + 3 rows, 3 tables
    assert "Wilcoxon signed-rank test" in c.to_markdown(test="wilcoxon").splitlines()[0]
    tex = c.to_latex()
    assert tex.count(r"\begin{tabular}{lrrr}") == 3 and tex.count(r"\end{tabular}") == 3
    assert r"lambda\_mart" in tex and r"x\&y" in tex and r"$\pm$" in tex and "$d_z$" in tex
    assert "ndcg@10 & ap & rr" in tex and "lambda_mart" not in tex.replace(r"lambda\_mart", "")
    assert "Comparison(3 systems over 30 common queries" in repr(c)


def test_errors_name_the_problem_and_the_choices(systems):
    a, b = systems["sys0"], systems["sys1"]
    with pytest.raises(ValueError, match="at least two systems"):
        gbrank.compare({"a": a})
    with pytest.raises(ValueError, match="at least two systems"):
        gbrank.compare([a])
    with pytest.raises(ValueError, match="at least two systems"):
        gbrank.compare(a)
    with pytest.raises(ValueError, match=r"test must be one of \['randomization', 't', 'wilcoxon'\], got 'anova'"):
        gbrank.compare(systems, test=["t", "anova"])
    with pytest.raises(ValueError, match=r"correction must be one of \['bonferroni', 'fdr_bh', 'holm'\]"):
        gbrank.compare(systems, correction="BH")
    with pytest.raises(ValueError, match=r"baseline 'zz' is not one of the systems; choose one of \['sys0'"):
        gbrank.compare(systems, baseline="zz")
    other = gbrank.evaluate([1, 0], [0.2, 0.1], [999, 999], METRICS)
    with pytest.raises(ValueError, match="share no query id"):
        gbrank.compare({"a": a, "b": b, "other": other})
    fewer = gbrank.evaluate([1, 0, 1, 0], [0.2, 0.1, 0.3, 0.4], [0, 0, 1, 1], ["ap"])
    with pytest.raises(ValueError, match=r"system 'f' lacks the metric\(s\) \['ndcg@10', 'rr'\].*\['ap'\]"):
        gbrank.compare({"a": a, "f": fewer})
    ok = gbrank.compare({"a": a, "f": fewer}, metrics=["ap"])
    assert ok.metrics == ("ap",) and ok.n_common == 2
    linear = _systems(n_systems=2, gain="linear")
    with pytest.raises(ValueError, match=r"systems 'sys0' and 'lin' use different conventions .*'gain'"):
        gbrank.compare({"sys0": a, "x": b, "lin": linear["sys1"]})
    with pytest.raises(ValueError, match="names has 1 entries for 2 systems"):
        gbrank.compare([a, b], names=["one"])
    with pytest.raises(ValueError, match="names must be distinct"):
        gbrank.compare([a, b], names=["x", "x"])
    with pytest.raises(TypeError, match="system 'b' is a DataFrame, not an EvaluationResult"):
        gbrank.compare({"a": a, "b": a.per_query})
    with pytest.raises(ValueError, match="many-system form"):
        gbrank.compare(a, b, correction="holm")
    with pytest.raises(ValueError, match="not both"):
        gbrank.compare([a, b], b)
    with pytest.raises(ValueError, match=r"pass the test by keyword: compare\(systems, test='wilcoxon'\)"):
        gbrank.compare([a, b], "wilcoxon")
