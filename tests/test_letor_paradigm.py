"""``paradigm.md`` / ``paradigm.json`` of ``gbrank bench letor``: listwise against LambdaRank
metric by metric, and the listwise objectives against the libraries' own (synthetic per-query
tables whose differences are known)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from gbrank.bench import write_paradigm
from gbrank.bench.letor._paradigm import EVAL


def _table(shifts: dict, n=80, seed=0) -> pd.DataFrame:
    """Per-query values of each contender: a shared query difficulty, the contender's shift
    and a little noise, clipped to [0, 1]."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.2, 0.7, n)
    rows = []
    for name, shift in shifts.items():
        noise = rng.normal(0, 0.02, (n, len(EVAL)))
        for q in range(n):
            values = np.clip(base[q] + shift + noise[q], 0, 1)
            rows.append({"contender": name, "split": f"Fold{1 + q % 2}", "qid": q, "n_items": 20, "n_relevant": 2,
                         **dict(zip(EVAL, values))})
    return pd.DataFrame(rows)


def test_pairs_and_references_are_tested_and_written(tmp_path):
    pq = _table({"lightgbm:lambdarank": 0.0, "catboost:YetiRank": 0.0, "gbrank:ndcg": 0.0,
                 "gbrank:listwise_ndcg": 0.1, "gbrank:rr": 0.0, "gbrank:listwise_rr": -0.1,
                 "gbrank:listwise_ap": 0.0, "gbrank:listmle": 0.0})
    doc = write_paradigm(tmp_path, pq)
    assert json.loads((tmp_path / "paradigm.json").read_text()) == doc
    md = (tmp_path / "paradigm.md").read_text()
    assert md.startswith("# Does the paradigm matter?")
    assert [p["listwise"] for p in doc["pairs"]] == ["gbrank:listwise_ndcg", "gbrank:listwise_rr"]
    assert doc["missing_pairs"] == ["gbrank:listwise_ap / gbrank:ap", "gbrank:listwise_nrbp / gbrank:nrbp@0.95"]
    ndcg = {r["a"]: r for r in doc["paradigm"]["ndcg@10"]}
    assert ndcg["gbrank:listwise_ndcg"]["significant"] and ndcg["gbrank:listwise_ndcg"]["diff"] > 0.09
    assert ndcg["gbrank:listwise_rr"]["significant"] and ndcg["gbrank:listwise_rr"]["diff"] < -0.09
    # the p-values are the paired t-test's, Holm over the two pairs
    a = pq[pq.contender == "gbrank:listwise_ndcg"]["ndcg@10"].to_numpy()
    b = pq[pq.contender == "gbrank:ndcg"]["ndcg@10"].to_numpy()
    assert ndcg["gbrank:listwise_ndcg"]["p"] == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-9)
    assert ndcg["gbrank:listwise_ndcg"]["p_holm"] >= ndcg["gbrank:listwise_ndcg"]["p"]
    assert doc["better_than_both"] == ["gbrank:listwise_ndcg"]
    assert "listwise significantly better in 1, LambdaRank in 1, no significant difference in 0" in md
    assert "Significantly better than both on NDCG@10 or ERR@10: gbrank:listwise_ndcg." in md
    assert "Holm over the 4 listwise objectives per reference and metric" in md


def test_nothing_is_written_without_a_listwise_objective(tmp_path):
    assert write_paradigm(tmp_path, _table({"lightgbm:lambdarank": 0.0, "gbrank:ndcg": 0.0})) is None
    assert not list(tmp_path.iterdir())


def test_a_missing_reference_is_said(tmp_path):
    doc = write_paradigm(tmp_path, _table({"lightgbm:lambdarank": 0.0, "gbrank:listwise_ndcg": 0.0}))
    assert doc["references"] == ["lightgbm:lambdarank"] and doc["better_than_both"] == []
    assert "catboost:YetiRank missing" in (tmp_path / "paradigm.md").read_text()
