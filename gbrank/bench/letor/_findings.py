"""Three claims of the research behind gbrank, tested on a ``gbrank bench letor`` report.

(a) optimising RR is worst, even when evaluated by RR;
(b) nRBP-based objectives are at least as good as nDCG and AP ones;
(c) bounding helps nRBP.

Each claim is checked per library (``gbrank:`` = LightGBM, ``gbrank-xgb:`` = XGBoost) with
paired t-tests over the pooled test queries (``gbrank.compare``), Holm-corrected
(``gbrank.evaluation.adjust_p_values``) within each family stated below.  ``bench letor
--analyses findings`` (the named analysis of ``_analyses.py``, which the research's data
presets ask for) writes ``findings.md`` and ``findings.json`` beside its report.
"""

from __future__ import annotations

import json
import pathlib

import pandas as pd

from gbrank.evaluation import EvaluationResult, adjust_p_values, compare
from gbrank.metrics import parse, parse_metric

from ..._validation import plural as count  # "1 gain", "2 gains", "0 losses"

UNBOUNDED = ["ndcg", "ap", "rr", "nrbp@0.8", "nrbp@0.9", "nrbp@0.95"]
NRBP = ["nrbp@0.8", "nrbp@0.9", "nrbp@0.95"]
BOUNDINGS = ["minmax", "expectation", "expectation_max", "distribution"]
EVAL = ["ndcg@10", "ap", "rr", "nrbp@0.8", "nrbp@0.9", "nrbp@0.95"]
PREFIXES = {"gbrank": "LightGBM", "gbrank-xgb": "XGBoost"}
#: the metrics of the table of bounded objectives
C_METRICS = ("ndcg@10", "nrbp@0.8", "nrbp@0.9", "nrbp@0.95")


def results(pq: pd.DataFrame) -> dict:
    out = {}
    for name, rows in pq.groupby("contender", sort=False):
        t = rows.set_index(["split", "qid"])[[*EVAL, "n_items", "n_relevant"]]
        out[name] = EvaluationResult(per_query=t, metrics=tuple(EVAL), settings={"empty": "zero"})
    return out


def tests(res: dict, pairs: list[tuple[str, str]], metric: str) -> list[dict]:
    """Paired t-tests a - b on ``metric``, Holm over the pairs given."""
    pairs = [(a, b) for a, b in pairs if a in res and b in res]
    rows = []
    for a, b in pairs:
        c = compare(res[a], res[b], test="t").pair().loc[metric]
        rows.append({"a": a, "b": b, "metric": metric, "mean_a": float(c["mean_a"]), "mean_b": float(c["mean_b"]),
                     "diff": float(c["diff"]), "p": float(c["p_value"])})
    for row, p in zip(rows, adjust_p_values([r["p"] for r in rows], "holm")):
        row["p_holm"] = float(p)
    return rows


def on_own_metric(row: dict) -> bool:
    """Whether ``row`` tests objective ``a`` on the metric it optimises (``gbrank:nrbp@0.8+minmax``
    on ``nrbp@0.8``), as the metric record names both (:attr:`gbrank.metrics.MetricSpec.metric`)."""
    objective = parse(row["a"].split(":", 1)[1], bounding=True, role="objective metric")
    return objective.metric == parse_metric(row["metric"]).metric


def sig(rows, sign) -> int:
    """How many of ``rows`` are significant (Holm p < 0.05) in the direction of ``sign``."""
    return sum(1 for r in rows if r["p_holm"] < 0.05 and (r["diff"] > 0) == (sign > 0))


TITLE = "# Findings: three claims tested on this benchmark"
INTRO = ("(a) optimising RR is worst, even when evaluated by RR; (b) nRBP objectives are at least as good as the "
         "nDCG and AP ones; (c) bounding helps nRBP.  Each claim per library, from paired t-tests over the pooled "
         "test queries, Holm-corrected within each family stated.  Only what was run is listed.")


def write_findings(folder, per_query: pd.DataFrame | None = None) -> dict:
    """Test the three claims on a bench letor output ``folder`` (its ``per_query.csv.gz``
    unless ``per_query`` is given); writes ``findings.md`` and ``findings.json`` there and
    returns the JSON document.  A library whose six unbounded objectives were not all run
    is skipped, and the files say so."""
    folder = pathlib.Path(folder)
    pq = pd.read_csv(folder / "per_query.csv.gz") if per_query is None else per_query
    res = results(pq)
    means = pq.groupby("contender", sort=False)[EVAL].mean()
    doc, md = {}, [TITLE, "", INTRO, ""]
    for prefix, lib in PREFIXES.items():
        names = [f"{prefix}:{m}" for m in UNBOUNDED]
        if not all(n in res for n in names):
            md.append(f"*{lib}: not every unbounded objective was run; skipped.*\n")
            continue
        # (a) RR: rank of the rr objective among the six, per metric; rr vs each other, Holm over 5
        ranks = means.loc[names].rank(ascending=False, method="min")
        a_rows = [r for m in EVAL for r in tests(res, [(f"{prefix}:rr", n) for n in names if n != f"{prefix}:rr"], m)]
        rr_on_rr = [r for r in a_rows if on_own_metric(r)]  # the rr objective on RR
        # (b) each nRBP objective vs ndcg and ap, Holm over the 6 pairs, per metric
        b_rows = [r for m in EVAL for r in tests(res, [(f"{prefix}:{n}", f"{prefix}:{o}") for n in NRBP
                                                        for o in ("ndcg", "ap")], m)]
        # (c) each bounding vs the unbounded nRBP objective, Holm over the 4 boundings, per (p, metric)
        c_rows = [r for n in NRBP for m in EVAL
                  for r in tests(res, [(f"{prefix}:{n}+{b}", f"{prefix}:{n}") for b in BOUNDINGS], m)]
        c_own = [r for r in c_rows if on_own_metric(r)]
        doc[lib] = {"means": {n: {m: float(means.loc[n, m]) for m in EVAL} for n in names},
                    "ranks": {n: {m: int(ranks.loc[n, m]) for m in EVAL} for n in names},
                    "a_rr_vs_others": a_rows, "b_nrbp_vs_ndcg_ap": b_rows, "c_bounded_vs_unbounded": c_rows}
        md += [f"**{lib}** (`{prefix}:`): mean per objective (rank among the six in brackets)", "",
               "| objective | " + " | ".join(EVAL) + " |", "|---|" + "---:|" * len(EVAL)]
        for n in names:
            md.append(f"| {n} | " + " | ".join(f"{means.loc[n, m]:.4f} ({int(ranks.loc[n, m])})" for m in EVAL) + " |")
        worst_rr = int(ranks.loc[f"{prefix}:rr", "rr"]) == len(names)
        if c_rows:
            c_text = (f"(c) bounded against unbounded nRBP ({len({r['a'] for r in c_rows})} bounded objectives run; "
                      f"per p and metric, Holm over the boundings run): on the optimised nRBP@p, "
                      f"{count(sig(c_own, +1), 'significant gain')} and {count(sig(c_own, -1), 'loss', 'losses')} "
                      f"of {count(len(c_own), 'comparison')}; over all metrics {count(sig(c_rows, +1), 'gain')} and "
                      f"{count(sig(c_rows, -1), 'loss', 'losses')} of {count(len(c_rows), 'comparison')}.")
        else:
            c_text = (f"(c) no bounded nRBP objective of {lib} was run (`--contenders bounded` adds them), so the "
                      "claim is not tested here.")
        md += ["", f"(a) {prefix}:rr ranks {int(ranks.loc[f'{prefix}:rr', 'rr'])} of 6 on RR "
               f"({'worst' if worst_rr else 'not worst'}); on RR it is significantly below "
               f"{sig(rr_on_rr, -1)} of the 5 other objectives and above {sig(rr_on_rr, +1)} (paired t, Holm over 5); "
               f"over all {len(EVAL)} metrics, significantly below in {sig(a_rows, -1)} of "
               f"{count(len(a_rows), 'comparison')}.",
               f"(b) nRBP objectives against ndcg and ap (3 x 2 pairs per metric, Holm over the 6): "
               f"{count(sig(b_rows, +1), 'significant win')} and "
               f"{count(sig(b_rows, -1), 'significant loss', 'significant losses')} of "
               f"{count(len(b_rows), 'comparison')} over the {len(EVAL)} metrics.",
               c_text, ""]
        ran = [(n, b) for n in NRBP for b in BOUNDINGS if any(r["a"] == f"{prefix}:{n}+{b}" for r in c_rows)]
        if ran:
            md += ["| bounded nRBP objective | " + " | ".join(f"{m} diff (Holm p)" for m in C_METRICS) + " |",
                   "|---|" + "---:|" * len(C_METRICS)]
            for n, b in ran:
                cells = []
                for m in C_METRICS:
                    r = next(r for r in c_rows if r["a"] == f"{prefix}:{n}+{b}" and r["metric"] == m)
                    cells.append(f"{r['diff']:+.4f} ({r['p_holm']:.2g})")
                md.append(f"| {prefix}:{n}+{b} | " + " | ".join(cells) + " |")
            md.append("")
    (folder / "findings.json").write_text(json.dumps(doc, indent=1) + "\n")
    (folder / "findings.md").write_text("\n".join(md) + "\n")
    return doc

