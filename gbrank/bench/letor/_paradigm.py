"""Does the paradigm matter on boosted trees?  The SIGIR'21 comparison on a ``gbrank bench
letor`` report.

Li et al. (SIGIR 2021) compared, for each metric, the listwise loss that smooths it with
LambdaRank on that metric, for matrix factorisation.  On boosted trees the same pairs are
``gbrank:listwise_<m>`` (``ListwiseObjective``) against ``gbrank:<m>`` (``LambdaObjective``),
both on LightGBM with the same trees, tuning and early stopping.  Two questions, each answered
with paired t-tests over the pooled test queries (:func:`gbrank.compare`), Holm-corrected
(:func:`gbrank.evaluation.adjust_p_values`) within the family stated:

1. **Paradigm, metric by metric**: listwise - LambdaRank for nDCG, AP, RR and nRBP (the
   listwise nRBP loss does not depend on p; its LambdaRank twin is ``nrbp@0.95``), on every
   metric of :data:`EVAL`; Holm over the pairs run, per metric.
2. **Against the libraries' best**: every listwise objective run (the paper's four and the
   known families: ApproxNDCG, softmax, ListNet, ListMLE, NeuralNDCG) against
   ``lightgbm:lambdarank`` and ``catboost:YetiRank`` on NDCG@10 and ERR@10; Holm over the
   listwise objectives, per reference and metric.  "Better than both" needs a significant
   gain against each.

``bench letor --analyses paradigm`` (the named analysis of ``_analyses.py``, which the
research's data presets ask for) writes ``paradigm.md`` and ``paradigm.json`` beside its
report when it ran a listwise objective.
"""

from __future__ import annotations

import json
import pathlib

import pandas as pd

from gbrank.evaluation import EvaluationResult, adjust_p_values, compare

from ..._validation import plural as count

#: (listwise objective, its LambdaRank twin, the metric both aim at)
PAIRS = (("listwise_ndcg", "ndcg", "ndcg@10"), ("listwise_ap", "ap", "ap"), ("listwise_rr", "rr", "rr"),
         ("listwise_nrbp", "nrbp@0.95", "nrbp@0.95"))
#: the listwise objectives of question 2 (``gbrank:`` prefixed in the report)
LISTWISE = ("listwise_ndcg", "listwise_ap", "listwise_rr", "listwise_nrbp", "softmax", "listnet",
            "listmle", "neural_ndcg")
REFERENCES = ("lightgbm:lambdarank", "catboost:YetiRank")
EVAL = ("ndcg@10", "err@10", "ap", "rr", "nrbp@0.95")
HEADLINE = ("ndcg@10", "err@10")
ALPHA = 0.05

TITLE = "# Does the paradigm matter? Listwise against LambdaRank on boosted trees"


def _results(pq: pd.DataFrame, metrics) -> dict:
    out = {}
    for name, rows in pq.groupby("contender", sort=False):
        t = rows.set_index(["split", "qid"])[[*metrics, "n_items", "n_relevant"]]
        out[name] = EvaluationResult(per_query=t, metrics=tuple(metrics), settings={"empty": "zero"})
    return out


def _tests(res: dict, pairs, metric: str) -> list[dict]:
    """Paired t-tests a - b on ``metric`` over the queries both have, Holm over ``pairs``."""
    rows = []
    for a, b in pairs:
        c = compare({a: res[a], b: res[b]}, baseline=b, metrics=[metric], test="t").pairs.iloc[0]
        rows.append({"a": a, "b": b, "metric": metric, "diff": float(c["diff"]), "ci_low": float(c["ci_low"]),
                     "ci_high": float(c["ci_high"]), "d_z": float(c["d_z"]), "p": float(c["p_value"]),
                     "n": int(c["n"])})
    for row, p in zip(rows, adjust_p_values([r["p"] for r in rows], "holm")):
        row["p_holm"] = float(p)
        row["significant"] = bool(p < ALPHA)
    return rows


def _cell(r: dict) -> str:
    mark = "**" if r["significant"] else ""
    return (f"{mark}{r['diff']:+.4f}{mark} [{r['ci_low']:+.4f}, {r['ci_high']:+.4f}], d {r['d_z']:+.2f}, "
            f"Holm p {r['p_holm']:.2g}")


def write_paradigm(folder, per_query: pd.DataFrame | None = None) -> dict | None:
    """Answer the two questions on a bench letor output ``folder`` (its ``per_query.csv.gz``
    unless ``per_query`` is given); writes ``paradigm.md`` and ``paradigm.json`` there and
    returns the JSON document, or writes nothing and returns None when no listwise objective
    was run.  A pair or reference that was not run is left out, and the files say which."""
    folder = pathlib.Path(folder)
    pq = pd.read_csv(folder / "per_query.csv.gz") if per_query is None else per_query
    names = set(pq["contender"])
    listwise = [f"gbrank:{o}" for o in LISTWISE if f"gbrank:{o}" in names]
    if not listwise:
        return None
    metrics = [m for m in EVAL if m in pq.columns]
    res = _results(pq, metrics)
    means = pq.groupby("contender", sort=False)[metrics].mean()
    pairs = [(f"gbrank:{lw}", f"gbrank:{lr}", aim) for lw, lr, aim in PAIRS
             if f"gbrank:{lw}" in names and f"gbrank:{lr}" in names]
    missing_pairs = [f"gbrank:{lw} / gbrank:{lr}" for lw, lr, _ in PAIRS
                     if not (f"gbrank:{lw}" in names and f"gbrank:{lr}" in names)]
    paradigm = {m: _tests(res, [(a, b) for a, b, _ in pairs], m) for m in metrics} if pairs else {}
    refs = [r for r in REFERENCES if r in names]
    against = {ref: {m: _tests(res, [(lw, ref) for lw in listwise], m) for m in HEADLINE if m in metrics}
               for ref in refs}
    better_both = [lw for lw in listwise
                   if len(refs) == len(REFERENCES) and any(
                       all(next(r for r in against[ref][m] if r["a"] == lw)["significant"]
                           and next(r for r in against[ref][m] if r["a"] == lw)["diff"] > 0 for ref in refs)
                       for m in HEADLINE if m in metrics)]
    own = [next(r for r in paradigm[aim] if r["a"] == a) for a, _, aim in pairs] if pairs else []
    doc = {"pairs": [{"listwise": a, "lambdarank": b, "aim": aim} for a, b, aim in pairs],
           "missing_pairs": missing_pairs, "paradigm": paradigm, "references": refs, "against": against,
           "better_than_both": better_both, "n_queries": int(pq.groupby(["split", "qid"]).ngroups),
           "means": {n: {m: float(means.loc[n, m]) for m in metrics} for n in means.index
                     if n in listwise or n in refs or any(n == b for _, b, _ in pairs)}}

    md = [TITLE, "",
          "Paired t-tests over the pooled test queries; difference listwise - other with its 95% interval, "
          "Cohen's d_z and the Holm-adjusted p (bold: significant at 0.05). Only what was run is listed.", ""]
    if pairs:
        lw_wins = sum(1 for r in own if r["significant"] and r["diff"] > 0)
        lr_wins = sum(1 for r in own if r["significant"] and r["diff"] < 0)
        md += ["## 1. Listwise against LambdaRank, metric by metric",
               "", f"Holm over the {count(len(pairs), 'pair')} per metric. On the metric each pair aims at: "
               f"listwise significantly better in {lw_wins}, LambdaRank in {lr_wins}, "
               f"no significant difference in {len(own) - lw_wins - lr_wins}.", "",
               "| listwise | LambdaRank | " + " | ".join(metrics) + " |", "|---|---|" + "---|" * len(metrics)]
        for a, b, aim in pairs:
            cells = [(_cell(next(r for r in paradigm[m] if r["a"] == a)) + (" (aim)" if m == aim else ""))
                     for m in metrics]
            md.append(f"| {a} | {b} | " + " | ".join(cells) + " |")
        md.append("")
    if missing_pairs:
        md += [f"Pairs not run (both sides needed): {', '.join(missing_pairs)}.", ""]
    if refs:
        md += ["## 2. Listwise objectives against the libraries' own", "",
               f"Holm over the {count(len(listwise), 'listwise objective')} per reference and metric.", "",
               "| listwise | " + " | ".join(f"{m} vs {ref}" for ref in refs for m in against[ref]) + " |",
               "|---|" + "---|" * sum(len(against[ref]) for ref in refs)]
        for lw in listwise:
            md.append(f"| {lw} | " + " | ".join(_cell(next(r for r in against[ref][m] if r["a"] == lw))
                                                for ref in refs for m in against[ref]) + " |")
        md.append("")
        if len(refs) == len(REFERENCES):
            md.append("Significantly better than both on NDCG@10 or ERR@10: "
                      + (", ".join(better_both) if better_both else "none") + ".")
        else:
            md.append(f"Not every reference was run ({', '.join(sorted(set(REFERENCES) - set(refs)))} missing), "
                      "so 'better than both' is not tested.")
        md.append("")
    (folder / "paradigm.json").write_text(json.dumps(doc, indent=1) + "\n")
    (folder / "paradigm.md").write_text("\n".join(md))
    return doc
