"""Write docs/results.md from its template and the committed result sets under docs/results/.

The page is generated: ``scripts/results_template.md`` holds its prose, and two kinds of
fields that this script fills from the committed reports (``summary.json``,
``findings.json``, ``paper_comparison.json``, ``config.json``, the per-query and flag CSVs,
the tables of a report's own ``summary.md`` where its JSON lacks them) and from the other
committed JSON results (``unbiased.json``, ``patience_study.json``):

* a line ``{{ table: NAME }}`` becomes the table ``TABLES[NAME]`` builds, between the
  markers ``<!-- table: NAME -->`` and ``<!-- end table -->``;
* ``{{ NAME }}`` inside the prose becomes the value ``values()[NAME]`` (numbers that quote a
  table, counts, ranges), formatted here.

So no figure on the page is typed by hand: change a report, run ``--write``, and the page
follows; ``tests/test_results_page.py`` checks that the committed page equals the output.

    python scripts/results_page.py --write    # rewrite docs/results.md
    python scripts/results_page.py --check    # exit 1 naming each table (or prose line) that differs
    python scripts/results_page.py            # print the page
"""

from __future__ import annotations

import argparse
import functools
import json
import pathlib
import re
import sys

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.multitest import multipletests  # Holm as gbrank.evaluation.adjust_p_values does it

ROOT = pathlib.Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
PAGE = ROOT / "docs" / "results.md"
TEMPLATE = ROOT / "scripts" / "results_template.md"

# the current result sets, one per question (the page's sections say which answers which)
MQ_TUNED = "bench-letor-mq2008-tuned"
MSLR_TUNED = "bench-letor-mslr-sample-tuned"
MQ_ALL = "bench-letor-mq2008"
MQ_PARADIGM = "bench-letor-mq2008-paradigm"
MSLR_PARADIGM = "bench-letor-mslr-sample-paradigm"
CUL = "bench-mf-citeulike-paper-3folds-3000ep"
ML = "bench-mf-movielens-paper-3000ep"
ML30 = "bench-mf-movielens-30ep"
PROTOCOLS = ("full", "sampled", "corrected")


# ---------------------------------------------------------------------------------------
# reading the committed results


@functools.cache
def load(path: str):
    """A committed JSON result, ``path`` relative to docs/results/."""
    file = RESULTS / path
    if not file.is_file():
        raise FileNotFoundError(f"{file} is missing: the results page is generated from it; restore it "
                                "(git checkout) or change scripts/results_page.py")
    return json.loads(file.read_text())


def summary(report: str, protocol: str | None = None) -> dict:
    return load(f"{report}/{protocol}/summary.json" if protocol else f"{report}/summary.json")


def md_table(report: str, heading: str, label: str | None = None) -> list[list[str]]:
    """The first markdown table under ``heading`` (after the line ``label`` when given) of a
    report's own summary.md, as rows of cells (header first, the separator row left out)."""
    file = RESULTS / report / "summary.md"
    lines = file.read_text().splitlines()
    try:
        i = lines.index(heading)
    except ValueError:
        raise ValueError(f"{file} has no heading {heading!r}: its report format changed; "
                         "update scripts/results_page.py") from None
    if label is not None:
        i = lines.index(label, i)
    while not lines[i].startswith("|"):
        i += 1
    rows = []
    while i < len(lines) and lines[i].startswith("|"):
        cells = [c.strip() for c in lines[i].strip().strip("|").split("|")]
        if not all(set(c) <= set("-:") for c in cells):
            rows.append(cells)
        i += 1
    return rows


# ---------------------------------------------------------------------------------------
# formatting


def f4(v) -> str:
    return f"{v:.4f}"


def s4(v) -> str:
    return f"{v:+.4f}".replace("-", "−")


def pval(p) -> str:
    """A p-value: two significant digits, scientific below 0.001."""
    if p >= 0.001:
        return f"{p:.2g}"
    if p == 0:
        return "0"
    mant, exp = f"{p:.1e}".split("e")
    return f"{mant}e{int(exp)}"


def table(header: list[str], rows: list[list], align: list[str] | None = None) -> str:
    align = align or ["---"] + ["---:"] * (len(header) - 1)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def markdown(rows: list[list[str]]) -> str:
    """Rows read by :func:`md_table` written back as a table (first column left, others right)."""
    return table(rows[0], rows[1:], ["---"] + ["---:" if _numeric(rows[1][j]) else "---"
                                               for j in range(1, len(rows[0]))])


def _numeric(cell: str) -> bool:
    return bool(re.match(r"^[+\-−]?\d", cell))


# ---------------------------------------------------------------------------------------
# LETOR, fair tuning: gbrank's objectives against the built-ins


def _effect(test: dict) -> str:
    cell = f"{s4(test['diff'])} [{s4(test['ci_low'])}, {s4(test['ci_high'])}] p={pval(test['p_holm'])}"
    return f"**{cell}**" if test["p_holm"] < 0.05 else cell


def _tuned_table(report: str, top: int) -> str:
    s = summary(report)
    base, ref = s["baseline"], s["also_against"][0]
    means = {c: v["ndcg@10"]["mean"] for c, v in s["contenders"].items()}
    chosen = sorted(means, key=means.get, reverse=True)[:top]
    chosen += [c for c in (base, ref) if c not in chosen]
    chosen.sort(key=means.get, reverse=True)
    short = {base: base.split(":")[-1], ref: ref.split(":")[-1]}
    header = ["contender", "NDCG@10", "ERR@10"] + [f"vs {short[r]}: {m}" for r in (base, ref)
                                                   for m in ("NDCG@10", "ERR@10")]
    rows = []
    for c in chosen:
        name = f"{c} (reference)" if c in (base, ref) else c
        row = [name, f4(s["contenders"][c]["ndcg@10"]["mean"]), f4(s["contenders"][c]["err@10"]["mean"])]
        for r in (base, ref):
            tests = s["tests"] if r == base else s["tests_also"][ref]
            row += [_effect(tests[c][m]) if c in tests else "" for m in ("ndcg@10", "err@10")]
        rows.append(row)
    return table(header, rows, ["---", "---:", "---:", "---", "---", "---", "---"])


def _rounds(report: str) -> tuple[int, int, int]:
    """(runs, runs that reached the round ceiling, the ceiling) of a LETOR report."""
    config = load(f"{report}/config.json")
    ceiling = config["protocol"]["rounds"]
    tuning = RESULTS / report / "tuning.csv"  # a tuned run: every configuration trained, not only the chosen
    trained = pd.read_csv(tuning).rounds_trained if tuning.is_file() else [r["rounds_trained"] for r in config["runs"]]
    return len(trained), sum(r >= ceiling for r in trained), ceiling


def _letor_values(v: dict) -> None:
    for key, report in (("mq_tuned", MQ_TUNED), ("mslr_tuned", MSLR_TUNED), ("mq_all", MQ_ALL)):
        s = summary(report)
        n, at_ceiling, ceiling = _rounds(report)
        means = {c: m["ndcg@10"]["mean"] for c, m in s["contenders"].items()}
        v[f"{key}.runs"] = f"{n:,}"
        v[f"{key}.command"] = load(f"{report}/config.json")["command"]
        v[f"{key}.patience"] = str(load(f"{report}/config.json")["protocol"]["patience"])
        v[f"{key}.at_ceiling"] = str(at_ceiling)
        v[f"{key}.ceiling"] = f"{ceiling:,}"
        v[f"{key}.contenders"] = str(len(s["contenders"]))
        v[f"{key}.queries"] = str(s["n_queries"][s["baseline"]])
        v[f"{key}.empty"] = str(s["n_empty"][s["baseline"]])
        v[f"{key}.nonempty"] = str(s["n_queries"][s["baseline"]] - s["n_empty"][s["baseline"]])
        ci = s["contenders"][s["baseline"]]["ndcg@10"]
        v[f"{key}.halfwidth"] = f"{(ci['ci_high'] - ci['ci_low']) / 2:.3f}"
        v[f"{key}.ndcg10.min"] = f4(min(means.values()))
        v[f"{key}.ndcg10.max"] = f4(max(means.values()))
        v[f"{key}.ndcg10.spread"] = f"{max(means.values()) - min(means.values()):.3f}"
        for c, m in s["contenders"].items():
            for metric, stat in m.items():
                v[f"{key}.mean.{c}.{metric}"] = f4(stat["mean"])
        for c, t in s["tests"].items():
            for metric, stat in t.items():
                v[f"{key}.vs_base.{c}.{metric}"] = s4(stat["diff"])
                v[f"{key}.vs_base_p.{c}.{metric}"] = pval(stat["p_holm"])
        for ref, tests in s.get("tests_also", {}).items():
            for c, t in tests.items():
                for metric, stat in t.items():
                    v[f"{key}.vs_ref.{c}.{metric}"] = s4(stat["diff"])
                    v[f"{key}.vs_ref_p.{c}.{metric}"] = pval(stat["p_holm"])
        v[f"{key}.significant_vs_base.ndcg@10"] = str(sum(
            t["ndcg@10"]["p_holm"] < 0.05 for t in s["tests"].values()))
    # what detecting 0.003 NDCG@10 on MQ2008 would take: sd of the per-query differences
    t = summary(MQ_TUNED)["tests_also"]["catboost:YetiRank"]["gbrank-xgb:nrbp@0.8"]["ndcg@10"]
    sd = abs(t["diff"] / t["d_z"])
    v["mq_tuned.sd"] = f"{sd:.3f}"
    v["mq_tuned.sd2"] = f"{sd:.2f}"
    needed = (2.8 * round(sd, 2) / 0.003) ** 2
    v["mq_tuned.queries_needed"] = f"{round(needed, -2):,.0f}"
    v["mq_tuned.times_mq2008"] = f"{needed / summary(MQ_TUNED)['n_queries']['lightgbm:lambdarank']:.0f}"
    v["mq_tuned.rank.gbrank:ndcg-loss2pp"] = str(1 + sorted(
        (m["ndcg@10"]["mean"] for m in summary(MQ_TUNED)["contenders"].values()), reverse=True).index(
        summary(MQ_TUNED)["contenders"]["gbrank:ndcg-loss2pp"]["ndcg@10"]["mean"]))
    s = summary(MQ_ALL)
    fold = s["splits"][s["baseline"]]
    v["mq_all.fold_min"] = min(fold, key=lambda f: fold[f]["ndcg@10"])
    v["mq_all.fold_max"] = max(fold, key=lambda f: fold[f]["ndcg@10"])
    v["mq_all.fold_min.ndcg10"] = f"{fold[v['mq_all.fold_min']]['ndcg@10']:.3f}"
    v["mq_all.fold_max.ndcg10"] = f"{fold[v['mq_all.fold_max']]['ndcg@10']:.3f}"
    v["mq_all.versions"] = ", ".join(f"{k} {val}" for k, val in load(f"{MQ_ALL}/config.json")["versions"].items()
                                     if k in ("gbrank", "lightgbm", "xgboost", "catboost", "numba", "numpy"))
    best = [r["best_iteration"] for r in load(f"{MQ_ALL}/config.json")["runs"] if r["contender"] == "gbrank-xgb:ndcg"]
    v["mq_all.xgb_ndcg_best_rounds"] = ", ".join(str(b) for b in best)
    lam = _letor_per_query()[lambda d: d.contender == "lightgbm:lambdarank"]
    for k in (1, 3, 5, 10):
        col = lam[f"ndcg@{k}"].where(lam.n_relevant > 0, 1.0)
        v[f"mq_all.lambdarank.empty_one.ndcg@{k}"] = f4(col.mean())


def _paradigm_cell(r: dict) -> str:
    cell = f"{s4(r['diff'])} [{s4(r['ci_low'])}, {s4(r['ci_high'])}] d={r['d_z']:+.2f} p={pval(r['p_holm'])}"
    return f"**{cell}**" if r["significant"] else cell


def _paradigm_pairs_table(report: str) -> str:
    """Listwise - LambdaRank per pair, on the metric the pair aims at and on NDCG@10, ERR@10."""
    doc = load(f"{report}/paradigm.json")
    metrics = ["ndcg@10", "err@10", "ap", "rr", "nrbp@0.95"]
    header = ["listwise", "LambdaRank twin"] + [m.upper() if m in ("ap", "rr") else m.replace("ndcg", "NDCG").replace(
        "err", "ERR").replace("nrbp", "nRBP") for m in metrics]
    rows = []
    for pair in doc["pairs"]:
        row = [pair["listwise"], pair["lambdarank"]]
        for m in metrics:
            r = next(r for r in doc["paradigm"][m] if r["a"] == pair["listwise"])
            row.append(_paradigm_cell(r) + (" (aim)" if m == pair["aim"] else ""))
        rows.append(row)
    return table(header, rows, ["---", "---"] + ["---"] * len(metrics))


def _paradigm_refs_table(report: str) -> str:
    """Each listwise objective: its means and its difference to lambdarank and YetiRank."""
    doc = load(f"{report}/paradigm.json")
    means = doc["means"]
    refs = doc["references"]
    header = ["objective", "NDCG@10", "ERR@10"] + [f"vs {ref.split(':')[-1]}: {m}" for ref in refs
                                                   for m in ("NDCG@10", "ERR@10")]
    rows = [[f"{ref} (reference)", f4(means[ref]["ndcg@10"]), f4(means[ref]["err@10"])] + [""] * (2 * len(refs))
            for ref in refs]
    listwise = [r["a"] for r in doc["against"][refs[0]]["ndcg@10"]]
    for lw in sorted(listwise, key=lambda n: means[n]["ndcg@10"], reverse=True):
        row = [lw, f4(means[lw]["ndcg@10"]), f4(means[lw]["err@10"])]
        for ref in refs:
            for m in ("ndcg@10", "err@10"):
                row.append(_paradigm_cell(next(r for r in doc["against"][ref][m] if r["a"] == lw)))
        rows.append(row)
    return table(header, rows, ["---", "---:", "---:"] + ["---"] * (2 * len(refs)))


def _tuning_seconds(report: str) -> float:
    """Summed training seconds of every run of a tuned bench (its tuning.csv): the same
    figure whether the report was written while training or from the run store."""
    import csv

    with open(RESULTS / report / "tuning.csv", newline="") as f:
        return sum(float(row["seconds"]) for row in csv.DictReader(f))


def _paradigm_values(v: dict) -> None:
    for key, report in (("mq_paradigm", MQ_PARADIGM), ("mslr_paradigm", MSLR_PARADIGM)):
        doc = load(f"{report}/paradigm.json")
        s = summary(report)
        n, at_ceiling, ceiling = _rounds(report)
        config = load(f"{report}/config.json")
        v[f"{key}.command"] = config["command"]
        v[f"{key}.runs"] = f"{n:,}"
        v[f"{key}.at_ceiling"] = str(at_ceiling)
        v[f"{key}.ceiling"] = f"{ceiling:,}"
        v[f"{key}.patience"] = str(config["protocol"]["patience"])
        v[f"{key}.contenders"] = str(len(s["contenders"]))
        v[f"{key}.queries"] = str(doc["n_queries"])
        v[f"{key}.minutes"] = f"{_tuning_seconds(report) / 60:.0f}"
        own = [next(r for r in doc["paradigm"][p["aim"]] if r["a"] == p["listwise"]) for p in doc["pairs"]]
        v[f"{key}.pairs"] = str(len(doc["pairs"]))
        v[f"{key}.own_listwise"] = str(sum(r["significant"] and r["diff"] > 0 for r in own))
        v[f"{key}.own_lambda"] = str(sum(r["significant"] and r["diff"] < 0 for r in own))
        v[f"{key}.own_none"] = str(sum(not r["significant"] for r in own))
        allm = [r for rows in doc["paradigm"].values() for r in rows]
        v[f"{key}.all_tests"] = str(len(allm))
        v[f"{key}.all_listwise"] = str(sum(r["significant"] and r["diff"] > 0 for r in allm))
        v[f"{key}.all_lambda"] = str(sum(r["significant"] and r["diff"] < 0 for r in allm))
        v[f"{key}.better_both"] = ", ".join(f"`{n}`" for n in doc["better_than_both"]) or "none"
        v[f"{key}.listwise"] = str(len(doc["against"][doc["references"][0]]["ndcg@10"]))
        for ref in doc["references"]:
            for m in ("ndcg@10", "err@10"):
                rows = doc["against"][ref][m]
                v[f"{key}.vs.{ref}.{m}.up"] = str(sum(r["significant"] and r["diff"] > 0 for r in rows))
                v[f"{key}.vs.{ref}.{m}.down"] = str(sum(r["significant"] and r["diff"] < 0 for r in rows))


@functools.cache
def _letor_per_query() -> pd.DataFrame:
    return pd.read_csv(RESULTS / MQ_ALL / "per_query.csv.gz")


def _significant_table() -> str:
    """Contenders of the untuned MQ2008 run that differ from the baseline after Holm, by metric."""
    s = summary(MQ_ALL)
    rows = []
    for c, tests in s["tests"].items():
        worse = [m for m, t in tests.items() if t["p_holm"] < 0.05 and t["diff"] < 0]
        better = [m for m, t in tests.items() if t["p_holm"] < 0.05 and t["diff"] > 0]
        if worse or better:
            rows.append([c, ", ".join(better) or "none", ", ".join(worse) or "none", len(worse) + len(better)])
    rows.sort(key=lambda r: -r[3])
    return table(["contender", "significantly better on", "significantly worse on", "of the metrics"],
                 [r[:3] + [f"{r[3]} of {len(s['metrics'])}"] for r in rows], ["---", "---", "---", "---:"])


def _findings_means(library: str) -> str:
    f = load(f"{MQ_ALL}/findings.json")[library]
    metrics = list(next(iter(f["means"].values())))
    rows = [[c] + [f"{f['means'][c][m]:.4f} ({f['ranks'][c][m]})" for m in metrics] for c in f["means"]]
    return table(["objective"] + metrics, rows)


def _findings_bounded(library: str) -> str:
    f = load(f"{MQ_ALL}/findings.json")[library]
    cells: dict[str, dict[str, str]] = {}
    metrics: list[str] = []
    for t in f["c_bounded_vs_unbounded"]:
        if t["metric"] not in metrics:
            metrics.append(t["metric"])
        cells.setdefault(t["a"], {})[t["metric"]] = f"{t['diff']:+.4f} ({pval(t['p_holm'])})"
    shown = [m for m in ("ndcg@10", "nrbp@0.8", "nrbp@0.9", "nrbp@0.95") if m in metrics]
    return table(["bounded nRBP objective"] + [f"{m} diff (Holm p)" for m in shown],
                 [[a] + [row.get(m, "") for m in shown] for a, row in cells.items()])


def _findings_values(v: dict) -> None:
    for library in ("LightGBM", "XGBoost"):
        f = load(f"{MQ_ALL}/findings.json")[library]
        rr = next(c for c in f["means"] if c.endswith(":rr"))
        v[f"find.{library}.rr_rank_on_rr"] = str(f["ranks"][rr]["rr"])
        v[f"find.{library}.objectives"] = str(len(f["means"]))
        on_rr = [t for t in f["a_rr_vs_others"] if t["metric"] == "rr"]
        v[f"find.{library}.rr_below_on_rr"] = str(sum(t["p_holm"] < 0.05 and t["diff"] < 0 for t in on_rr))
        v[f"find.{library}.rr_below_all"] = str(sum(t["p_holm"] < 0.05 and t["diff"] < 0 for t in f["a_rr_vs_others"]))
        v[f"find.{library}.rr_tests_all"] = str(len(f["a_rr_vs_others"]))
        b = f["b_nrbp_vs_ndcg_ap"]
        v[f"find.{library}.b_tests"] = str(len(b))
        v[f"find.{library}.b_wins"] = str(sum(t["p_holm"] < 0.05 and t["diff"] > 0 for t in b))
        v[f"find.{library}.b_losses"] = str(sum(t["p_holm"] < 0.05 and t["diff"] < 0 for t in b))
        c = f["c_bounded_vs_unbounded"]
        own = [t for t in c if t["metric"] == t["b"].split(":")[-1]]
        v[f"find.{library}.c_own_tests"] = str(len(own))
        v[f"find.{library}.c_own_gains"] = str(sum(t["p_holm"] < 0.05 and t["diff"] > 0 for t in own))
        v[f"find.{library}.c_own_losses"] = str(sum(t["p_holm"] < 0.05 and t["diff"] < 0 for t in own))
        v[f"find.{library}.c_tests"] = str(len(c))
        v[f"find.{library}.c_gains"] = str(sum(t["p_holm"] < 0.05 and t["diff"] > 0 for t in c))
        v[f"find.{library}.c_losses"] = str(sum(t["p_holm"] < 0.05 and t["diff"] < 0 for t in c))
        for t in c:
            v[f"find.{library}.c.{t['a']}.{t['metric']}"] = s4(t["diff"])
            v[f"find.{library}.c_p.{t['a']}.{t['metric']}"] = pval(t["p_holm"])
        for name, row in f["means"].items():
            best = [m for m in row if f["ranks"][name][m] == 1]
            v[f"find.{library}.best_on.{name}"] = str(len(best))


def _bounding_every_objective() -> tuple[str, dict]:
    """Every bounding of every gbrank objective on LightGBM against the objective unbounded:
    mean paired difference over the pooled test queries, Holm over the four boundings per
    objective and metric (from the committed per-query table of the untuned MQ2008 run)."""
    pq = _letor_per_query()
    metrics = ["ndcg@10", "ap", "rr", "nrbp@0.95"]
    boundings = ["minmax", "expectation", "expectation_max", "distribution"]
    objectives = ["ndcg", "ap", "rr", "nrbp@0.95"]
    wide = {c: g.set_index(["split", "qid"]).sort_index() for c, g in pq.groupby("contender")}
    rows, values = [], {}
    cells: dict[tuple[str, str], str] = {}
    for obj in objectives:
        base = wide[f"gbrank:{obj}"]
        for m in metrics:
            diffs, ps = [], []
            for b in boundings:
                other = wide[f"gbrank:{obj}+{b}"]
                d = other[m] - base[m]
                diffs.append(d.mean())
                ps.append(stats.ttest_rel(other[m], base[m]).pvalue)
            for b, d, p in zip(boundings, diffs, multipletests(ps, method="holm")[1]):
                cells[(f"gbrank:{obj}+{b}", m)] = f"{d:+.4f} ({pval(p)})"
                values[f"bound.{obj}+{b}.{m}"] = s4(d)
                values[f"bound_p.{obj}+{b}.{m}"] = pval(p)
    for obj in objectives:
        for b in boundings:
            name = f"gbrank:{obj}+{b}"
            rows.append([name] + [cells[(name, m)] for m in metrics])
    return table(["bounded objective − unbounded"] + [f"{m} (Holm p)" for m in metrics], rows), values


# ---------------------------------------------------------------------------------------
# MF: the SIGIR'21 protocol, converged


def _nsr_means(report: str, protocol: str) -> dict[tuple[str, int], dict[str, float]]:
    """Mean per (loss, NSR) over the NSR's splits (each split holds the same users), per metric."""
    s = summary(report, protocol)
    out = {}
    for loss, splits in s["splits"].items():
        by_nsr: dict[int, list[dict]] = {}
        for split, means in splits.items():
            by_nsr.setdefault(int(split.split("-")[0][3:]), []).append(means)
        for nsr, rows in by_nsr.items():
            out[(loss, nsr)] = {m: float(np.mean([r[m] for r in rows])) for m in rows[0]}
    return out


def _plan(report: str) -> dict:
    return load(f"{report}/config.json")["plan"]


def _own_metric_table(report: str) -> str:
    plan = _plan(report)
    means = {p: _nsr_means(report, p) for p in PROTOCOLS}
    losses = list(summary(report, "full")["contenders"])
    header = ["loss (metric)"] + [f"NSR {n} {p}" for n in plan["nsr"] for p in PROTOCOLS]
    rows = []
    for loss in losses:
        metric = plan["metric_of"].get(loss, "ndcg")
        if metric not in summary(report, "full")["metrics"]:
            metric = "ndcg"
        rows.append([f"{loss} ({metric})"] + [f4(means[p][(loss, n)][metric]) for n in plan["nsr"] for p in PROTOCOLS])
    return table(header, rows)


def _training_table(report: str) -> str:
    config = load(f"{report}/config.json")
    ceiling = config["plan"]["epochs"]
    runs = [r for r in config["runs"] if r["learning_rate"] is not None]
    rows = []
    for loss in config["plan"]["losses"]:
        mine = [r for r in runs if r["loss"] == loss]
        best = [r["best_epoch"] for r in mine]
        ran = [r["epochs_run"] for r in mine]
        rows.append([loss, len(mine), f"{min(best)}-{max(best)}", f"{min(ran)}-{max(ran)}",
                     sum(e >= ceiling for e in ran), f"{sum(r['train_seconds'] for r in mine):,.0f}"])
    return table(["loss", "runs", "best epoch", "epochs run", f"at the {ceiling:,}-epoch ceiling", "training s"],
                 rows)


def _rr_rank_table(report: str) -> str:
    plan = _plan(report)
    rows = []
    for n in plan["nsr"]:
        for p in ("full", "sampled"):
            means = _nsr_means(report, p)
            losses = [l for (l, k) in means if k == n]
            order = sorted(losses, key=lambda l: -means[(l, n)]["rr"])
            rank = {l: i + 1 for i, l in enumerate(order)}
            rows.append([n, p, rank["listwise_rr"], rank["lambda_rr"], order[0], len(order)])
    return table(["NSR", "protocol", "rank of listwise_rr", "rank of lambda_rr", "best by RR", "of"], rows,
                 ["---:", "---", "---:", "---:", "---", "---:"])


def _mf_values(v: dict, key: str, report: str) -> None:
    config = load(f"{report}/config.json")
    plan = config["plan"]
    runs = [r for r in config["runs"] if r["learning_rate"] is not None]
    v[f"{key}.runs"] = str(len(runs))
    v[f"{key}.command"] = plan["command"]
    v[f"{key}.epochs"] = f"{plan['epochs']:,}"
    v[f"{key}.patience"] = str(plan["patience"])
    v[f"{key}.at_ceiling"] = str(sum(r["epochs_run"] >= plan["epochs"] for r in runs))
    v[f"{key}.best_last"] = str(sum(r["best_epoch"] >= plan["epochs"] for r in runs))
    v[f"{key}.best_epoch.min"] = str(min(r["best_epoch"] for r in runs))
    v[f"{key}.best_epoch.max"] = str(max(r["best_epoch"] for r in runs))
    v[f"{key}.train_s"] = f"{sum(r['train_seconds'] for r in runs):,.0f}"
    v[f"{key}.users"] = str(runs[0]["users"])
    v[f"{key}.user_runs"] = f"{summary(report, 'full')['n_queries'][plan['baseline']]:,}"
    v[f"{key}.splits"] = str(len(plan["seeds"]))
    nsr = _nsr_means(report, "full")
    for (loss, n), means in nsr.items():
        for m, val in means.items():
            v[f"{key}.full.{loss}.nsr{n}.{m}"] = f4(val)
    for p in PROTOCOLS:
        for loss, m in summary(report, p)["contenders"].items():
            for metric, stat in m.items():
                v[f"{key}.{p}.{loss}.{metric}"] = f4(stat["mean"])
    for loss in ("listwise_rr", "lambda_rr"):
        aucs = [nsr[(loss, n)]["auc"] for n in plan["nsr"]]
        v[f"{key}.auc.{loss}.min"] = f"{min(aucs):.3f}"
        v[f"{key}.auc.{loss}.max"] = f"{max(aucs):.3f}"
    aucs = [nsr[(l, n)]["auc"] for l in ("listwise_rr", "lambda_rr") for n in plan["nsr"]]
    v[f"{key}.auc.rr.min"] = f"{min(aucs):.3f}"
    v[f"{key}.auc.rr.max"] = f"{max(aucs):.3f}"
    v[f"{key}.auc.random"] = f"{summary(report, 'full')['contenders']['random']['auc']['mean']:.3f}"
    flags = pd.read_csv(RESULTS / report / "baseline_flags.csv")
    v[f"{key}.flags"] = str(int(flags.at_or_below.sum()))
    v[f"{key}.flag_cells"] = str(len(flags))
    flagged = sorted(set(flags.loss[flags.at_or_below]))
    v[f"{key}.flagged_losses"] = ", ".join(flagged)
    below = flags[flags.at_or_below]
    v[f"{key}.flags_rr"] = str(int(below.loss.isin(["listwise_rr", "lambda_rr"]).sum()))
    never = [l for l in plan["losses"] if not flags[(flags.loss == l)].at_or_below.any()]
    v[f"{key}.never_flagged"] = ", ".join(never)
    # (b): nRBP losses against nDCG and AP, from the report's own paired tests
    for p in ("full", "sampled"):
        for row in md_table(report, "### (b) nRBP losses against the nDCG and AP losses of the same family",
                            f"{p}:")[1:]:
            a, b = (x.strip() for x in row[0].split("−"))
            for metric, cell in zip(["ndcg@10", "ap", "rr", "nrbp@0.95"], row[1:]):
                diff, p_ = re.match(r"([+\-][\d.]+) \(p=([^)]+)\)", cell).groups()
                v[f"{key}.b.{p}.{a}-{b}.{metric}"] = diff.replace("-", "−")
                v[f"{key}.b_p.{p}.{a}-{b}.{metric}"] = p_


def _b_table(report: str, protocol: str) -> str:
    return markdown(md_table(report, "### (b) nRBP losses against the nDCG and AP losses of the same family",
                             f"{protocol}:"))


def _paper_cells_table() -> str:
    cells = load(f"{CUL}/paper_comparison.json")["cells"]
    rows = []
    for n in sorted({c["nsr"] for c in cells}):
        mine = [c for c in cells if c["nsr"] == n]
        rows.append([n, len(mine), sum(c["status"] == "ok" for c in mine), sum(c["status"] == "flag" for c in mine)])
    rows.append(["all", len(cells), sum(c["status"] == "ok" for c in cells), sum(c["status"] == "flag" for c in cells)])
    tol = load(f"{CUL}/paper_comparison.json")["tolerance"]
    return table(["NSR", "cells", f"within {tol} of the paper", "flagged"], rows, ["---:", "---:", "---:", "---:"])


PARADIGM = {"lambda": "LambdaRank-MF", "listwise": "listwise"}


def _paper_flagged_table() -> str:
    """The flagged cells of the three-fold comparison, one row per (objective, NSR)."""
    cells = [c for c in load(f"{CUL}/paper_comparison.json")["cells"] if c["status"] == "flag"]
    groups: dict[tuple, list[dict]] = {}
    for c in cells:
        groups.setdefault((c["paradigm"], c["objective"], c["loss"], c["nsr"]), []).append(c)
    rows = []
    for (paradigm, objective, loss, nsr), mine in groups.items():
        rows.append([f"{PARADIGM[paradigm]} {objective} (`{loss}`)", nsr,
                     ", ".join(c["metric_eval"] for c in mine),
                     ", ".join(f4(c["paper"]) for c in mine), ", ".join(f4(c["a"]) for c in mine),
                     ", ".join(s4(c["diff_a"]) for c in mine)])
    return table(["paper objective (gbrank loss)", "NSR", "metrics", "paper", "gbrank (a)", "difference"], rows,
                 ["---", "---:", "---", "---", "---", "---"])


def _paper_values(v: dict) -> None:
    data = load(f"{CUL}/paper_comparison.json")
    cells = data["cells"]
    v["cul.paper.cells"] = str(len(cells))
    v["cul.paper.within"] = str(sum(c["status"] == "ok" for c in cells))
    v["cul.paper.flagged"] = str(sum(c["status"] == "flag" for c in cells))
    v["cul.paper.tolerance"] = str(data["tolerance"])
    gap = [abs(c["a"] - c["b"]) for c in cells if c["a"] is not None and c["b"] is not None]
    v["cul.paper.ab_mean"] = f"{np.mean(gap):.3f}"
    v["cul.paper.ab_max"] = f"{max(gap):.3f}"
    for c in cells:
        v[f"cul.paper.{c['loss']}.nsr{c['nsr']}.{c['metric_eval']}.paper"] = f4(c["paper"])
        v[f"cul.paper.{c['loss']}.nsr{c['nsr']}.{c['metric_eval']}.a"] = f4(c["a"])


# ---------------------------------------------------------------------------------------
# MF: protocols, patience, bounding


def _tau_table() -> str:
    rows = []
    for name, report in (("CiteULike-a, paper's folds", CUL), ("MovieLens", ML)):
        tau = md_table(report, "## Do the protocols agree on the order of the losses?")
        frame = pd.DataFrame(tau[1:], columns=tau[0])
        for n, g in frame.groupby("NSR", sort=False):
            s, c = g["sampled vs full"].astype(float), g["corrected vs full"].astype(float)
            rows.append([name, n, f"{s.mean():.2f} ({s.min():.2f})", f"{c.mean():.2f} ({c.min():.2f})"])
    return table(["data", "NSR", "sampled vs full: mean tau (lowest)", "corrected vs full: mean tau (lowest)"],
                 rows, ["---", "---:", "---:", "---:"])


def _tau_values(v: dict) -> None:
    better = total = 0
    for report in (CUL, ML):
        tau = md_table(report, "## Do the protocols agree on the order of the losses?")
        frame = pd.DataFrame(tau[1:], columns=tau[0])
        for _, g in frame.groupby("NSR", sort=False):
            total += 1
            better += g["corrected vs full"].astype(float).mean() > g["sampled vs full"].astype(float).mean()
    v["tau.corrected_better"] = str(better)
    v["tau.pairs"] = str(total)


def _patience_table() -> str:
    study = load("patience_study.json")
    rows = [[r["patience"], f"{r['stopped_early']} of {r['runs']}",
             f"{r['validation_lost_mean']:.4f} / {r['validation_lost_max']:.4f}",
             f"{r['test_lost_mean']:.4f} / {r['test_lost_max']:.4f}", f"{r['epochs_saved_mean']:.1f}"]
            for r in study["table"] if r["stopped_early"] > 0]
    return table(["patience", "runs stopped before their best epoch", "own metric lost on validation, mean / max",
                  "on test, mean / max", "epochs saved, mean"], rows, ["---:"] * 5)


def _patience_values(v: dict) -> None:
    study = load("patience_study.json")
    for r in study["table"]:
        p = r["patience"]
        v[f"patience.{p}.test_mean"] = f"{r['test_lost_mean']:.4f}"
        v[f"patience.{p}.test_max"] = f"{r['test_lost_max']:.3f}"
        v[f"patience.{p}.ceiling"] = str(r["ended_on_ceiling"])
        v[f"patience.{p}.runs"] = str(r["runs"])
    v["patience.command"] = study["command"]


def _bounding_table(protocol: str) -> str:
    return markdown(md_table(ML30, "### (c) Bounded against unbounded listwise nRBP", f"{protocol}:"))


def _bounding_nsr_table() -> str:
    return markdown(md_table(ML30, "### (c) Bounded against unbounded listwise nRBP",
                             "Per NSR, sampled lists, nRBP@0.95 (the thesis' Table 5.1 setting):"))


def _ml30_values(v: dict) -> None:
    config = load(f"{ML30}/config.json")
    ceiling = config["plan"]["epochs"]
    runs = [r for r in config["runs"] if r.get("learning_rate", 0) is not None]
    v["ml30.runs"] = str(len(runs))
    v["ml30.command"] = config["plan"]["command"]
    v["ml30.epochs"] = str(ceiling)
    v["ml30.patience"] = str(config["plan"]["patience"])
    v["ml30.at_ceiling"] = str(sum(r["epochs_run"] >= ceiling for r in runs))
    v["ml30.best_last"] = str(sum(r["best_epoch"] >= ceiling for r in runs))
    for name in ("listwise_nrbp", "listwise_nrbp+minmax"):
        mine = [r for r in runs if r["loss"] == name]
        v[f"ml30.best_last.{name}"] = f"{sum(r['best_epoch'] >= ceiling for r in mine)} of {len(mine)}"


# ---------------------------------------------------------------------------------------
# position-debiased training


UNBIASED_ROWS = [
    ("biased", "`LambdaObjective` (biased)"),
    ("unbiased_p0", "`UnbiasedLambdaObjective`, bias_norm 0, every round"),
    ("unbiased_p2", "`UnbiasedLambdaObjective`, bias_norm 2, every round"),
    ("unbiased_p0_r1", "bias_norm 0, first 1 round"),
    ("unbiased_p0_r3", "bias_norm 0, first 3 rounds"),
    ("unbiased_p0_r5", "bias_norm 0, first 5 rounds"),
    ("unbiased_p0_r10", "bias_norm 0, first 10 rounds"),
    ("unbiased_p0_r20", "bias_norm 0, first 20 rounds"),
    ("unbiased_p0_vali", "bias_norm 0, first N rounds, N chosen on validation"),
    ("ipw_true_theta", "the true propensities, fixed (IPW)"),
    ("skyline", "true labels (skyline)"),
]


def _propensities(name: str) -> np.ndarray:
    """Mean learned t+ at positions 1-4 over the folds and click logs."""
    folds = load("unbiased.json")["folds"]
    if name == "unbiased_p0_vali":
        t = [r["propensities"][r["chosen_on_validation"]]["plus"][:4] for r in folds]
    else:
        t = [r["propensities"][name]["plus"][:4] for r in folds]
    return np.mean(t, axis=0)


def _unbiased_table() -> str:
    d = load("unbiased.json")
    tests = {(t["b"], t["metric"]): t for t in d["paired_t_tests"]}
    rows = []
    for name, label in UNBIASED_ROWS:
        row = [label] + [f4(d["overall"][name][m]) for m in ("ndcg@10", "err@10")]
        for m in ("ndcg@10", "err@10"):
            t = tests.get((name, m))
            cell = "" if t is None else f"{s4(t['mean_diff'])}, Holm p = {pval(t['p_holm'])}"
            row.append(f"**{cell}**" if t is not None and t["p_holm"] < 0.05 else cell)
        if name == "biased":
            row.append("(1, 1, 1)")
        elif name == "ipw_true_theta":
            theta = d["folds"][0]["theta"]
            row.append("θ_k / θ_1: " + ", ".join(f"{theta[k] / theta[0]:.2f}" for k in (1, 2, 3)))
        elif name.startswith("unbiased"):
            row.append(", ".join(f"{t:.2f}" for t in _propensities(name)[1:4]))
        else:
            row.append("")
        rows.append(row)
    return table(["trained on clicks with", "NDCG@10", "ERR@10", "against biased, NDCG@10", "against biased, ERR@10",
                  "learned t⁺ at positions 2, 3, 4"], rows, ["---", "---:", "---:", "---", "---", "---"])


def _unbiased_values(v: dict) -> None:
    d = load("unbiased.json")
    v["unbiased.command"] = d["command"]
    v["unbiased.tests"] = str(len(d["paired_t_tests"]))
    v["unbiased.queries"] = str(d["paired_t_tests"][0]["n_queries"])
    v["unbiased.runs"] = str(len(d["folds"]))
    cfg = d["config"]
    v["unbiased.sessions"] = str(cfg["sessions"])
    v["unbiased.rounds"] = str(cfg["rounds"])
    v["unbiased.lr"] = str(cfg["learning_rate"])
    v["unbiased.leaves"] = str(cfg["num_leaves"])
    v["unbiased.log_fraction"] = f"{cfg['log_fraction']:.0%}"
    for t in d["paired_t_tests"]:
        v[f"unbiased.diff.{t['b']}.{t['metric']}"] = s4(t["mean_diff"])
        v[f"unbiased.p.{t['b']}.{t['metric']}"] = pval(t["p_holm"])
        v[f"unbiased.p_raw.{t['b']}.{t['metric']}"] = pval(t["p_value"])
        v[f"unbiased.wins.{t['b']}.{t['metric']}"] = str(t["wins"])
        v[f"unbiased.losses.{t['b']}.{t['metric']}"] = str(t["losses"])
    for name, _ in UNBIASED_ROWS:
        for m in ("ndcg@10", "err@10"):
            v[f"unbiased.mean.{name}.{m}"] = f4(d["overall"][name][m])
        if name.startswith("unbiased"):
            v[f"unbiased.t2.{name}"] = f"{_propensities(name)[1]:.2f}"
    chosen = [r["chosen_on_validation"] for r in d["folds"]]
    v["unbiased.chosen_3_to_10"] = str(sum(c in ("unbiased_p0_r3", "unbiased_p0_r5", "unbiased_p0_r10")
                                           for c in chosen))
    ipw = next(t for t in d["paired_t_tests"] if t["b"] == "ipw_true_theta" and t["metric"] == "ndcg@10")
    vali = next(t for t in d["paired_t_tests"] if t["b"] == "unbiased_p0_vali" and t["metric"] == "ndcg@10")
    v["unbiased.share_of_ipw"] = f"{vali['mean_diff'] / ipw['mean_diff']:.2f}"


# ---------------------------------------------------------------------------------------
# the page


TABLES = {
    "letor-mq2008-tuned": lambda: _tuned_table(MQ_TUNED, 8),
    "letor-mslr-sample-tuned": lambda: _tuned_table(MSLR_TUNED, 3),
    "letor-mq2008-significant": _significant_table,
    "letor-mq2008-findings-lightgbm": lambda: _findings_means("LightGBM"),
    "letor-mq2008-bounded-lightgbm": lambda: _findings_bounded("LightGBM"),
    "letor-mq2008-findings-xgboost": lambda: _findings_means("XGBoost"),
    "letor-mq2008-bounded-xgboost": lambda: _findings_bounded("XGBoost"),
    "letor-mq2008-bounding-every-objective": lambda: _bounding_every_objective()[0],
    "citeulike-paper-cells": _paper_cells_table,
    "citeulike-paper-flagged": _paper_flagged_table,
    "citeulike-paper-training": lambda: _training_table(CUL),
    "citeulike-paper-own-metric": lambda: _own_metric_table(CUL),
    "citeulike-paper-rr-ranks": lambda: _rr_rank_table(CUL),
    "citeulike-paper-nrbp-full": lambda: _b_table(CUL, "full"),
    "citeulike-paper-nrbp-sampled": lambda: _b_table(CUL, "sampled"),
    "movielens-paper-training": lambda: _training_table(ML),
    "movielens-paper-own-metric": lambda: _own_metric_table(ML),
    "movielens-paper-rr-ranks": lambda: _rr_rank_table(ML),
    "movielens-paper-nrbp-full": lambda: _b_table(ML, "full"),
    "movielens-paper-nrbp-sampled": lambda: _b_table(ML, "sampled"),
    "protocols-tau": _tau_table,
    "patience": _patience_table,
    "bounding-movielens-30ep-full": lambda: _bounding_table("full"),
    "bounding-movielens-30ep-sampled": lambda: _bounding_table("sampled"),
    "bounding-movielens-30ep-nsr": _bounding_nsr_table,
    "unbiased": _unbiased_table,
    "letor-mq2008-paradigm-pairs": lambda: _paradigm_pairs_table(MQ_PARADIGM),
    "letor-mq2008-paradigm-vs-builtins": lambda: _paradigm_refs_table(MQ_PARADIGM),
    "letor-mslr-sample-paradigm-pairs": lambda: _paradigm_pairs_table(MSLR_PARADIGM),
    "letor-mslr-sample-paradigm-vs-builtins": lambda: _paradigm_refs_table(MSLR_PARADIGM),
}


@functools.cache
def values() -> dict[str, str]:
    """Every ``{{ NAME }}`` field of the template: name -> text."""
    v: dict[str, str] = {}
    _letor_values(v)
    _paradigm_values(v)
    _findings_values(v)
    v.update(_bounding_every_objective()[1])
    _mf_values(v, "cul", CUL)
    _mf_values(v, "ml", ML)
    _paper_values(v)
    _tau_values(v)
    _patience_values(v)
    _ml30_values(v)
    _unbiased_values(v)
    return v


# a generated table in the page: blank lines around it, so that markdown renders it as a table
BLOCK = re.compile(r"<!-- table: ([\w.-]+) -->\n\n(.*?)\n\n<!-- end table -->", flags=re.S)
TABLE_LINE = re.compile(r"^\{\{ table: ([\w.-]+) \}\}$")
FIELD = re.compile(r"\{\{ ([^{}]+?) \}\}")


def render_blocks() -> list[tuple[str | None, str]]:
    """The page as ``(table name or None for prose, text)`` blocks, in order."""
    blocks: list[tuple[str | None, str]] = []
    prose: list[str] = []
    vals = values()

    def field(match):
        name = match.group(1)
        if name not in vals:
            raise KeyError(f"{TEMPLATE.name} uses the field {{{{ {name} }}}}, which scripts/results_page.py does "
                           "not compute; fix the name or add it to values()")
        return vals[name]

    for line in TEMPLATE.read_text().splitlines():
        m = TABLE_LINE.match(line)
        if m:
            name = m.group(1)
            if name not in TABLES:
                raise KeyError(f"{TEMPLATE.name} asks for the table {name!r}; known: {sorted(TABLES)}")
            if prose:
                blocks.append((None, "\n".join(prose)))
                prose = []
            blocks.append((name, f"<!-- table: {name} -->\n\n{TABLES[name]()}\n\n<!-- end table -->"))
        else:
            prose.append(FIELD.sub(field, line))
    if prose:
        blocks.append((None, "\n".join(prose)))
    return blocks


def render() -> str:
    return "\n".join(text for _, text in render_blocks()) + "\n"


def differences(committed: str) -> list[str]:
    """What differs between ``committed`` and the generated page: each table by name, and the
    first differing prose line (empty: equal)."""
    blocks = render_blocks()
    if committed == "\n".join(t for _, t in blocks) + "\n":
        return []
    out = []
    found = dict(BLOCK.findall(committed))
    for name, text in blocks:
        if name is not None and found.get(name) != BLOCK.match(text).group(2):
            out.append(f"table {name}")
    strip = BLOCK
    mine = strip.sub("", "\n".join(t for _, t in blocks) + "\n").splitlines()
    theirs = strip.sub("", committed).splitlines()
    for i, (a, b) in enumerate(zip(mine, theirs)):
        if a != b:
            out.append(f"prose: {b[:70]!r} (generated: {a[:70]!r})")
            break
    else:
        if len(mine) != len(theirs):
            out.append("prose: the page's length")
    return out or ["the order of the blocks"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Write or check docs/results.md from the committed result sets.")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", action="store_true", help="rewrite docs/results.md")
    group.add_argument("--check", action="store_true",
                       help="exit 1, naming each differing table or prose line, when docs/results.md is stale")
    args = parser.parse_args(argv)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    if args.write:
        PAGE.write_text(render())
        print(f"wrote {PAGE.relative_to(ROOT)}")
        return 0
    if args.check:
        diff = differences(PAGE.read_text() if PAGE.exists() else "")
        if diff:
            print(f"{PAGE.relative_to(ROOT)} differs from the generated page: " + "; ".join(diff)
                  + "; run `python scripts/results_page.py --write`", file=sys.stderr)
            return 1
        print(f"{PAGE.relative_to(ROOT)} is up to date")
        return 0
    sys.stdout.write(render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
