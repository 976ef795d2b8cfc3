"""``gbrank bench letor``: ranking objectives compared on LETOR folds under one protocol.

Protocol (every contender alike): train on a fold's ``train`` split; after every boosting
round evaluate the ``vali`` split with gbrank's evaluator (the early-stopping metric,
ndcg@10 by default; empty lists 0, ties averaged); stop after ``patience`` rounds without
improvement or at ``rounds``; predict the ``test`` split with the best round.  Same seed,
learning rate and round budget for all; tree sizes: ``num_leaves`` for LightGBM and XGBoost
(XGBoost grows leaf-wise, ``max_leaves``), symmetric trees of ``depth`` for CatBoost.
Everything else is the library's default.  A fold without a ``vali`` split (the bundled
example) gets one: ``vali_fraction`` of its training queries, drawn with the seed.

The parts: the plan (``_letor_plan.py``: contenders, arguments, folds), one run
(``_letor_run.py``), the run store (``_store.py``: each finished (contender, fold) run in
``<out>/runs`` under a hash of everything that determines it, so an interrupted benchmark
resumes where it stopped and a run made under other versions is trained again; locks let
two processes share one ``--out``), the process pool (``_pool.py``) and the report
(``_report.py``).  This module runs the benchmark: train what is missing, evaluate the test
predictions per fold, write the report.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import time
from typing import Callable

import numpy as np

from .._progress import progress
from . import _store
from ._letor_plan import (CURVE_METRICS, REGISTRY, REPORT_METRICS, Contender, LetorPlan, contender_listing,
                          prepare_letor, select_contenders)
from ._letor_run import fingerprint, load_cached, run_key, run_name, run_versions, train_task
from ._pool import train_missing

log = logging.getLogger("gbrank.bench")

__all__ = ["run_letor", "prepare_letor", "contender_listing", "select_contenders", "REGISTRY", "REPORT_METRICS",
           "load_cached", "run_key"]


def run_letor(plan: LetorPlan, write: Callable[[str], None] | None = None) -> dict:
    """Train what is not cached yet, evaluate every run's test predictions and write the report.
    Returns the report's summary (``write_report``'s return value).

    Progress lines go to ``write`` (the CLI prints them), by default to the ``gbrank.bench``
    logger at INFO level."""
    write = write or log.info
    from ._letor_findings import write_findings
    from ._report import write_report

    out = plan.out_dir
    store = _store.RunStore(out / "runs")
    fingerprints = {f.name: fingerprint(f) for f in plan.folds}
    names = {(c.name, f.name): run_name(c, f.name, fingerprints[f.name], plan.settings)
             for c in plan.contenders for f in plan.folds}
    todo, counts = [], {"ok": 0, "missing": 0, "stale": 0, "unreadable": 0}
    for c in sorted(plan.contenders, key=_priority):  # a contender's folds together, cheap ones first
        versions = run_versions(c)
        for fold in plan.folds:
            state, _ = store.state(names[c.name, fold.name], versions)
            counts[state] += 1
            if state != "ok":
                todo.append((c, fold))
    jobs = plan.jobs if len(todo) > 1 else 1  # workers set their own numba threads
    tasks = [(c, fold, plan.settings, plan.threads, str(store.folder), names[c.name, fold.name], jobs > 1)
             for c, fold in todo]
    write(f"gbrank bench letor: {plan.data_label}, {len(plan.folds)} fold(s), {len(plan.contenders)} contenders: "
          f"{len(tasks)} runs to train, {counts['ok']} cached in {store.folder}; {plan.jobs} job(s) x "
          f"{plan.threads} thread(s)"
          + _store.retrain_notes(counts))
    t_start = time.perf_counter()
    trained = set()
    bar = progress(total=len(tasks), enabled=bool(tasks), unit="run", desc="training")
    with _numba_threads(plan.threads if jobs == 1 else None):
        for task, (rec, here) in train_missing(tasks, train_task, jobs=jobs):
            bar.update(1)
            if here:
                trained.add(task[5])
                line = _line(rec)
            else:
                line = f"{rec['fold']:>10s} {rec['contender']:40s} trained by another process"
            # around a live bar, tqdm's own write keeps the bar whole
            (write if bar.disable else bar.write)(line)
    bar.close()
    train_seconds = time.perf_counter() - t_start

    records = []
    for c in plan.contenders:
        for fold in plan.folds:
            rec = dict(store.load(names[c.name, fold.name]).record)
            rec["cached"] = names[c.name, fold.name] not in trained
            records.append(rec)
    per_query = evaluate_runs(plan, store, names)
    base_rows = per_query[per_query["contender"] == plan.contenders[0].name]
    n_queries, n_empty = len(base_rows), int((base_rows["n_relevant"] == 0).sum())
    conventions = {
        "empty lists": f"a query without a relevant test document scores 0 on nDCG, AP, RR and nRBP "
                       f"(gbrank.evaluate empty='zero'); {n_empty} of the {n_queries} test queries have none",
        "ties": "tied scores are averaged over all their orders (ties='average'), never input order",
        "gain": "nDCG gain 2^label - 1, IDCG over the query's own test documents",
        "relevance": "AP, RR, RBP and nRBP count label >= 1 as relevant (binary gain)",
        "RBP": "RBP(p) = (1 - p) sum_r rel_r p^(r-1); nRBP(p) = RBP(p) / RBP(p) of the ideal order",
        "pooling": "the test queries of all folds are pooled (each query is in one test fold); paired tests "
                   "pair the contenders' values of the same (fold, query)",
    }
    config = _config(plan, records, fingerprints, train_seconds)
    title = f"gbrank bench letor: {plan.data_label}, {', '.join(f.name for f in plan.folds)}"
    watched = plan.settings["early_stopping_metric"]
    watched = watched if watched in per_query.columns else "ndcg@10"
    best = per_query[per_query["contender"] != plan.baseline].groupby("contender")[watched].mean()
    highlight = [plan.baseline, *best.sort_values(ascending=False, kind="stable").index[:5]]
    with store.report_lock():
        summary = write_report(per_query, out, baseline=plan.baseline, metrics=REPORT_METRICS, title=title,
                               config=config, conventions=conventions, notes=_notes(plan, records),
                               highlight=highlight)
        write_findings(out, per_query)
    write(f"report written to {out.resolve()}/ (summary.md, summary.json, findings.md, config.json, "
          "per_query.csv.gz, " + ", ".join(f for f in summary["files"] if f.endswith(".png")) + ")")
    return summary


def evaluate_runs(plan: LetorPlan, store: _store.RunStore, names: dict):
    """The tidy per-query table of every stored run's test predictions: one row per
    (contender, fold, query), the report metrics and the nDCG@k curve."""
    import pandas as pd

    from gbrank.evaluation import evaluate

    extra = [m for m in CURVE_METRICS if m not in REPORT_METRICS]
    rows = []
    for c in plan.contenders:
        for fold in plan.folds:
            scores = store.load(names[c.name, fold.name]).arrays["scores"]
            pq = evaluate(fold.test.y, scores, fold.test.qid, REPORT_METRICS + extra).per_query.reset_index()
            pq.insert(0, "split", fold.name)
            pq.insert(0, "contender", c.name)
            rows.append(pq)
    per_query = pd.concat(rows, ignore_index=True)
    return per_query[["contender", "split", "qid", "n_items", "n_relevant", *REPORT_METRICS, *extra]]


@contextlib.contextmanager
def _numba_threads(threads: int | None):
    """Numba's thread count set to ``threads`` inside the block (None: left alone), then
    restored: runs trained in this process get the per-run budget."""
    if threads is None:
        yield
        return
    import numba

    saved = numba.get_num_threads()
    try:
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        yield
    finally:
        numba.set_num_threads(saved)


def _priority(c: Contender) -> tuple:
    """Training order: built-ins, then gbrank on LightGBM, then on XGBoost, unbounded before
    bounded; so that an interrupted benchmark has whole contenders (all folds) to report."""
    return (c.kind == "gbrank", c.library == "xgboost", c.bounding is not None)


def _line(rec: dict) -> str:
    return (f"{rec['fold']:>10s} {rec['contender']:40s} best round {rec['best_iteration']:4d} of "
            f"{rec['rounds_trained']:4d}, vali {rec['vali_at_best']:.4f}, {rec['seconds']:6.1f} s")


def _config(plan: LetorPlan, records: list[dict], fingerprints: dict, train_seconds: float) -> dict:
    from ._report import environment

    return {
        "command": plan.command,
        "data": {"data": plan.data, "label": plan.data_label,
                 "folds": {f.name: {"train_queries": int(len(np.unique(f.train.qid))),
                                    "vali_queries": int(len(np.unique(f.vali.qid))),
                                    "test_queries": int(len(np.unique(f.test.qid))),
                                    "features": int(f.n_features), "fingerprint": fingerprints[f.name]}
                           for f in plan.folds}},
        "protocol": {
            **plan.settings,
            "baseline": plan.baseline,
            "early_stopping": "every contender: gbrank.evaluate of the early-stopping metric on the vali split "
                              "after each round (empty lists 0, ties averaged); stop after `patience` rounds "
                              "without improvement; predict with the best round. LightGBM/XGBoost through "
                              "GBRanker (eval_metric, early_stopping_rounds); CatBoost through a custom "
                              "eval_metric computing the same gbrank metric, od_type='Iter', od_wait=patience, "
                              "use_best_model=True",
            "trees": "LightGBM num_leaves; XGBoost hist, grow_policy lossguide, max_leaves = num_leaves, "
                     "max_depth 0; CatBoost symmetric trees of catboost_depth; all else library defaults "
                     "(gbrank objectives: GBRanker's min_child_weight 1e-3), no tuning",
            "xgboost:rank:map": "trained on binary labels (label >= 1): XGBoost refuses graded labels for MAP; "
                                "early stopping still watches the graded metric",
            "jobs": plan.jobs, "threads_per_run": plan.threads,
        },
        "contenders": {c.name: {**dataclasses.asdict(c), "description": c.describe()} for c in plan.contenders},
        "versions": environment(("numpy", "scipy", "pandas", "numba", "sklearn", "lightgbm", "xgboost",
                                 "catboost", "matplotlib")),
        "runs": records,
        "train_seconds_this_invocation": train_seconds,
    }


def _notes(plan: LetorPlan, records: list[dict]) -> list[str]:
    s = plan.settings
    notes = [
        f"Data: {plan.data_label} ({len(plan.folds)} fold(s)). Protocol: train on each fold's train split, "
        f"early-stop every contender on its vali split by gbrank's {s['early_stopping_metric']} (patience "
        f"{s['patience']}, at most {s['rounds']} rounds), predict its test split. Learning rate "
        f"{s['learning_rate']}, {s['num_leaves']} leaves (LightGBM, XGBoost), depth {s['catboost_depth']} "
        f"(CatBoost), seed {s['seed']}; library defaults otherwise, no tuning. CatBoost stops by the same "
        "gbrank metric through a custom eval_metric and its overfitting detector (od_type Iter, od_wait = "
        "patience). XGBoost's rank:map is trained on binary labels (label >= 1): it refuses graded ones.",
        *plan.notes,
    ]
    by = {}
    for r in records:
        by.setdefault(r["contender"], []).append(r)
    lines = ["| contender | training | best round per fold | seconds (sum) |", "|---|---|---|---:|"]
    for c in plan.contenders:
        rs = by.get(c.name, [])
        lines.append(f"| {c.name} | {c.describe()} | {[r['best_iteration'] for r in rs]} | "
                     f"{sum(r['seconds'] for r in rs):.1f} |")
    notes.append("\n".join(lines))
    return notes
