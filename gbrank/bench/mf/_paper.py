"""``gbrank bench mf`` on the paper's own splits: its result tables read, and gbrank's two
selections set beside them cell by cell (``OUT/paper_comparison.md`` and ``.json``).

The tables (``paper-results/{listwise,lambda}_results_best.csv.gz`` beside the folds) have
the columns ``metric_optim, lr, fold, NSR, dataset, metric_eval, y``: per optimised
objective, fold, NSR and evaluation metric the best test value ``y`` and the learning rate
that gave it (epoch and learning rate chosen on the test metric itself: optimistic).

How the paper's objectives map to gbrank's losses:

* ``ap``, ``dcg``, ``rr`` -> ``<paradigm>_ap``, ``<paradigm>_ndcg``, ``<paradigm>_rr``;
* LambdaRank-MF ``rbp_80``, ``rbp_90``, ``rbp_95`` -> ``lambda_nrbp@0.8``, ``@0.9``, ``@0.95``
  (the lambda of nRBP depends on p);
* listwise ``rbp_80``, ``rbp_90``, ``rbp_95`` -> the one ``listwise_nrbp`` run: the listwise
  nRBP loss (Eq. 19) does not depend on p, and the paper's three rows are one model whose
  epoch is chosen per evaluation metric (its tables hold the same numbers in the three
  rows), which is what gbrank's per-metric selection does.

Evaluation metrics: ``AP, NDCG, RR`` -> ``ap, ndcg, rr``; ``RBP_80/90/95`` -> gbrank's
``rbp@0.8/0.9/0.95`` (plain, un-normalised RBP on the sampled test list, as the paper's).
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pandas as pd

PARADIGMS = {"listwise": "listwise MF", "lambda": "LambdaRank-MF"}
TABLES = {"listwise": "listwise_results_best.csv.gz", "lambda": "lambda_results_best.csv.gz"}
OBJECTIVES = ("ap", "dcg", "rr", "rbp_80", "rbp_90", "rbp_95")
EVAL_METRICS = {"AP": "ap", "NDCG": "ndcg", "RR": "rr", "RBP_80": "rbp@0.8", "RBP_90": "rbp@0.9",
                "RBP_95": "rbp@0.95"}
COLUMNS = ("metric_optim", "lr", "fold", "NSR", "dataset", "metric_eval", "y")
#: |gbrank (a) - paper| above this is flagged
TOLERANCE = 0.02


def loss_of(paradigm: str, objective: str) -> str:
    """gbrank's loss for the paper's objective in a paradigm (see the module docstring)."""
    if paradigm not in PARADIGMS:
        raise ValueError(f"paradigm must be one of {list(PARADIGMS)}, got {paradigm!r}")
    family = {"ap": "ap", "dcg": "ndcg", "rr": "rr"}.get(objective)
    if family:
        return f"{paradigm}_{family}"
    persistence = {"rbp_80": "0.8", "rbp_90": "0.9", "rbp_95": "0.95"}.get(objective)
    if persistence:
        return "listwise_nrbp" if paradigm == "listwise" else f"lambda_nrbp@{persistence}"
    raise ValueError(f"unknown objective {objective!r}; the paper's are {', '.join(OBJECTIVES)}")


def read_paper_table(path, dataset: str = "citeulike") -> pd.DataFrame:
    """The rows of ``dataset`` in one of the paper's result tables, with gbrank's metric name
    (``metric``) beside ``metric_eval``; raises ValueError when a column is missing."""
    table = pd.read_csv(path)
    missing = [c for c in COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"{path} lacks column(s) {missing}; the paper's result tables have {list(COLUMNS)}")
    rows = table[table["dataset"].astype(str).str.lower() == dataset.lower()].copy()
    unknown = sorted(set(rows["metric_eval"]) - set(EVAL_METRICS))
    if unknown:
        raise ValueError(f"{path}: unknown metric_eval {unknown}; expected {sorted(EVAL_METRICS)}")
    rows["metric"] = rows["metric_eval"].map(EVAL_METRICS)
    return rows


def paper_means(folder, dataset: str = "citeulike") -> pd.DataFrame:
    """Per paradigm, NSR, objective and evaluation metric: the paper's mean over its folds,
    the number of folds and the learning rates it chose."""
    out = []
    for paradigm, name in TABLES.items():
        path = pathlib.Path(folder) / name
        if not path.is_file():
            continue
        rows = read_paper_table(path, dataset)
        g = rows.groupby(["NSR", "metric_optim", "metric_eval", "metric"], sort=False)
        agg = g.agg(paper=("y", "mean"), paper_folds=("fold", "nunique"),
                    paper_lrs=("lr", lambda v: ",".join(f"{x:g}" for x in v))).reset_index()
        agg.insert(0, "paradigm", paradigm)
        out.append(agg)
    if not out:
        raise FileNotFoundError(f"{folder} holds neither {TABLES['listwise']} nor {TABLES['lambda']}")
    return pd.concat(out, ignore_index=True).rename(columns={"NSR": "nsr", "metric_optim": "objective"})


def comparison(paper: pd.DataFrame, means: pd.DataFrame, tolerance: float = TOLERANCE) -> pd.DataFrame:
    """Every cell of the paper's tables beside gbrank's (a) and (b) means (from
    :func:`gbrank.bench.mf._select.selection_means`): one row per paradigm, NSR, objective
    and evaluation metric, in the paper's order.  ``status`` is ``ok``, ``flag`` (|a - paper|
    > tolerance) or ``not run`` (gbrank has no value; the cell is kept)."""
    rows = []
    order = {o: i for i, o in enumerate(OBJECTIVES)}
    metric_order = {m: i for i, m in enumerate(EVAL_METRICS)}
    paper = paper.assign(_o=paper["objective"].map(order), _m=paper["metric_eval"].map(metric_order))
    paper = paper.sort_values(["paradigm", "nsr", "_o", "_m"], kind="stable")
    for r in paper.itertuples(index=False):
        loss = loss_of(r.paradigm, r.objective)
        cell = {"paradigm": r.paradigm, "nsr": int(r.nsr), "objective": r.objective, "loss": loss,
                "metric_eval": r.metric_eval, "metric": r.metric, "paper": float(r.paper),
                "paper_folds": int(r.paper_folds), "paper_lrs": r.paper_lrs}
        for sel in ("a", "b"):
            hit = means[(means["nsr"] == r.nsr) & (means["loss"] == loss) & (means["metric"] == r.metric)
                        & (means["selection"] == sel)] if len(means) else means
            cell[sel] = float(hit["test"].iloc[0]) if len(hit) else None
            cell[f"{sel}_folds"] = int(hit["splits"].iloc[0]) if len(hit) else 0
            cell[f"{sel}_lrs"] = hit["lrs"].iloc[0] if len(hit) else ""
            cell[f"{sel}_epochs"] = hit["epochs"].iloc[0] if len(hit) else ""
        if cell["a"] is None:
            cell.update(diff_a=None, diff_b=None, status="not run")
        else:
            cell["diff_a"] = cell["a"] - cell["paper"]
            cell["diff_b"] = cell["b"] - cell["paper"] if cell["b"] is not None else None
            cell["status"] = "flag" if abs(cell["diff_a"]) > tolerance else "ok"
        rows.append(cell)
    return pd.DataFrame(rows)


def _fmt(v, signed=False) -> str:
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return "not run"
    return f"{v:+.4f}" if signed else f"{v:.4f}"


def write_comparison(out, table: pd.DataFrame, notes: list[str], tolerance: float = TOLERANCE) -> None:
    """``OUT/paper_comparison.md`` (one table per paradigm and NSR) and ``.json`` (every cell)."""
    out = pathlib.Path(out)
    cells = table.replace({np.nan: None}).to_dict(orient="records")
    (out / "paper_comparison.json").write_text(json.dumps({"tolerance": tolerance, "notes": notes, "cells": cells},
                                                          indent=1, default=str) + "\n")
    n_run = int((table["status"] != "not run").sum())
    n_flag = int((table["status"] == "flag").sum())
    lines = ["# gbrank bench mf beside the paper's tables (CiteULike-a, the paper's own folds)", "",
             *notes, "",
             f"{len(table)} cells; {n_run} run by gbrank, {n_flag} flagged (|gbrank (a) - paper| > {tolerance:g}), "
             f"{len(table) - n_run} not run.", "",
             "Columns: **paper** = the paper's value, mean over its folds; **(a)** = gbrank, the paper's selection "
             "(learning rate and epoch chosen on the test metric itself: *optimistic*, comparable with the paper); "
             "**(b)** = gbrank, honest selection (chosen on the validation split, test value reported); both means "
             "over the folds gbrank ran; **a − paper**; **!** marks a flagged cell. lr = the learning rates chosen "
             "per fold (paper | gbrank (a) | gbrank (b)).", ""]
    for paradigm in table["paradigm"].unique():
        for nsr in sorted(table[table["paradigm"] == paradigm]["nsr"].unique()):
            sub = table[(table["paradigm"] == paradigm) & (table["nsr"] == nsr)]
            lines += [f"## {PARADIGMS.get(paradigm, paradigm)}, NSR {nsr}", "",
                      "| objective (gbrank loss) | metric | paper | (a) | (b) | a − paper | b − paper | ! | lr paper | "
                      "lr (a) | lr (b) | epochs (a) | epochs (b) |",
                      "|---|---|---:|---:|---:|---:|---:|---|---|---|---|---|---|"]
            for r in sub.to_dict(orient="records"):
                lines.append(
                    f"| {r['objective']} ({r['loss']}) | {r['metric_eval']} | {r['paper']:.4f} | {_fmt(r['a'])} | "
                    f"{_fmt(r['b'])} | {_fmt(r['diff_a'], True)} | {_fmt(r['diff_b'], True)} | "
                    f"{'!' if r['status'] == 'flag' else ''} | {r['paper_lrs']} | {r['a_lrs'] or '-'} | "
                    f"{r['b_lrs'] or '-'} | {r['a_epochs'] or '-'} | {r['b_epochs'] or '-'} |")
            lines.append("")
    (out / "paper_comparison.md").write_text("\n".join(lines) + "\n")
