"""The shared benchmark report (gbrank.bench._report): numbers, Holm (through gbrank.compare), files,
bad tables."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import gbrank
from gbrank.bench import write_report
from gbrank.evaluation import adjust_p_values
from gbrank.datasets import make_letor

METRICS = ["ndcg@10", "ap", "rr", "nrbp@0.95"]
CURVE = [f"ndcg@{k}" for k in range(1, 6)]
CONVENTIONS = {"empty": "zero", "ties": "average"}


def _table(n_contenders=3, seed=0):
    """Per-query table of real evaluations: 2 splits whose query ids overlap (0..n-1 each),
    contender c scores = true relevance + noise of scale c."""
    rng = np.random.default_rng(seed)
    rows, raw = [], {}
    for split in ("s0", "s1"):
        X, y, qid = make_letor(n_queries=25, random_state=seed + (split == "s1"))
        for c in range(n_contenders):
            name = f"c{c}"
            s = y + rng.normal(scale=0.5 + c, size=len(y))
            r = gbrank.evaluate(y, s, qid, METRICS + [m for m in CURVE if m not in METRICS])
            raw[(name, split)] = (y, s, qid)
            pq = r.per_query.reset_index()
            pq.insert(0, "split", split)
            pq.insert(0, "contender", name)
            rows.append(pq)
    return pd.concat(rows, ignore_index=True), raw


def test_holm_against_a_hand_computation():
    """The reports' Holm correction (statsmodels through gbrank.evaluation.adjust_p_values)."""
    holm = lambda p: adjust_p_values(p, "holm")  # noqa: E731
    # sorted 0.01, 0.02, 0.04, 0.3 -> 4*0.01, 3*0.02, max(0.06, 2*0.04), max(0.08, 0.3)
    assert holm([0.04, 0.01, 0.3, 0.02]).tolist() == pytest.approx([0.08, 0.04, 0.3, 0.06])
    assert holm([0.5, 0.6]).tolist() == pytest.approx([1.0, 1.0])
    out = holm([np.nan, 0.01, 0.02])
    assert np.isnan(out[0]) and out[1:].tolist() == pytest.approx([0.02, 0.02])


def test_report_numbers_match_the_evaluator_and_a_hand_paired_test(tmp_path):
    pq, raw = _table()
    doc = write_report(pq, tmp_path, baseline="c0", metrics=METRICS, title="synthetic",
                       config={"seed": 0}, conventions=CONVENTIONS)
    # means and CIs: a direct evaluation of the pooled scores (qids made unique per split)
    for name in ("c0", "c1", "c2"):
        ys, ss, qs = zip(*(raw[(name, s)] for s in ("s0", "s1")))
        qid = np.concatenate([qs[0], qs[1] + 10_000])
        direct = gbrank.evaluate(np.concatenate(ys), np.concatenate(ss), qid, METRICS).summary()
        for m in METRICS:
            got = doc["contenders"][name][m]
            assert got["mean"] == pytest.approx(direct.loc[m, "mean"], abs=1e-12)
            assert got["ci_low"] == pytest.approx(direct.loc[m, "ci_low"], abs=1e-12)
        assert doc["n_queries"][name] == 50
    # paired t-tests by (split, qid), Holm over the two contenders of each metric
    base = pq[pq.contender == "c0"].set_index(["split", "qid"])
    for m in METRICS:
        p = []
        for name in ("c1", "c2"):
            a = pq[pq.contender == name].set_index(["split", "qid"]).loc[base.index]
            p.append(stats.ttest_rel(a[m], base[m]).pvalue)
            assert doc["tests"][name][m]["diff"] == pytest.approx((a[m] - base[m]).mean(), abs=1e-12)
            assert doc["tests"][name][m]["n"] == 50
            d = (a[m] - base[m]).to_numpy()
            assert doc["tests"][name][m]["d_z"] == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-10)
            assert doc["tests"][name][m]["improved"] == np.mean(d > 0)
            assert doc["tests"][name][m]["worsened"] == np.mean(d < 0)
        lo, hi = sorted(p)
        hand = {p[0]: None, p[1]: None}
        hand[lo] = min(1.0, 2 * lo)
        hand[hi] = min(1.0, max(2 * lo, hi))
        for name, raw_p in zip(("c1", "c2"), p):
            assert doc["tests"][name][m]["p_value"] == pytest.approx(raw_p, rel=1e-10)
            assert doc["tests"][name][m]["p_holm"] == pytest.approx(hand[raw_p], rel=1e-10)
    # less noise ranks better: c0 wins everything here
    assert set(doc["winners"].values()) == {"c0"}
    assert all(doc["ranks"]["c0"][m] == 1 for m in METRICS)


def test_report_files(tmp_path):
    pq, _ = _table()
    write_report(pq, tmp_path, baseline="c1", metrics=METRICS, title="synthetic", config={"a": [1, 2]},
                 conventions=CONVENTIONS, notes=["A note."])
    for name in ("per_query.csv.gz", "config.json", "summary.json", "summary.md", "metrics.png", "wins.png",
                 "diff_vs_relevant.png", "cdf.png", "ndcg_at_k.png"):
        assert (tmp_path / name).stat().st_size > 10, name
    back = pd.read_csv(tmp_path / "per_query.csv.gz")
    assert len(back) == len(pq) and list(back.columns) == list(pq.columns)
    assert np.allclose(back["ap"], pq["ap"], atol=1e-5)
    assert json.loads((tmp_path / "config.json").read_text()) == {"a": [1, 2]}
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["conventions"] == CONVENTIONS and summary["baseline"] == "c1"
    md = (tmp_path / "summary.md").read_text()
    assert md.startswith("# synthetic") and "A note." in md and "c1 (baseline)" in md and "Holm" in md
    assert "- empty: zero" in md and "![wins.png](wins.png)" in md


def test_report_without_plots_and_with_one_contender(tmp_path):
    pq, _ = _table(n_contenders=1)
    doc = write_report(pq, tmp_path, baseline="c0", metrics=["ap"], title="t", config={},
                       conventions=CONVENTIONS, plots=False)
    assert doc["tests"] == {} and not (tmp_path / "wins.png").exists()


@pytest.mark.parametrize("change, message", [
    (lambda t: t.drop(columns="n_relevant"), "lacks the columns"),
    (lambda t: pd.concat([t, t.iloc[:1]]), "repeated"),
    (lambda t: t.assign(ap=np.nan), "NaN"),
    (lambda t: t.iloc[:0], "no rows"),
])
def test_report_rejects_bad_tables(tmp_path, change, message):
    pq, _ = _table(n_contenders=2)
    with pytest.raises(ValueError, match=message):
        write_report(change(pq), tmp_path, baseline="c0", metrics=METRICS, title="t", config={},
                     conventions=CONVENTIONS, plots=False)


def test_report_rejects_an_unknown_baseline(tmp_path):
    pq, _ = _table(n_contenders=2)
    with pytest.raises(ValueError, match=r"baseline 'zz' is not among the contenders; choose one of \['c0', 'c1'\]"):
        write_report(pq, tmp_path, baseline="zz", metrics=METRICS, title="t", config={}, conventions=CONVENTIONS)
