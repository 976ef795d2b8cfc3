"""``gbrank bench letor``: ranking objectives compared on LETOR folds under one protocol.

Protocol (every contender alike): train on a fold's ``train`` split; after every boosting
round evaluate the ``vali`` split with gbrank's evaluator (the early-stopping metric,
ndcg@10 by default; empty lists 0, ties averaged); stop after ``patience`` rounds without
improvement or at ``rounds``; predict the ``test`` split with the best round.  Same seed,
learning rate and round budget for all; tree sizes: ``num_leaves`` for LightGBM and XGBoost
(XGBoost grows leaf-wise, ``max_leaves``), symmetric trees of ``depth`` for CatBoost.
Everything else is the library's default.  A fold without a ``vali`` split (the bundled
example) gets one: ``vali_fraction`` of its training queries, drawn with the seed.

The parts: the plan (``_plan.py``: contenders, arguments, folds), one run
(``_run.py``), the run store (``bench/_store.py``: each finished (contender, fold) run in
``<out>/runs`` under a hash of everything that determines it, so an interrupted benchmark
resumes where it stopped and a run made under other versions is trained again; locks let
two processes share one ``--out``), the process pool (``bench/_pool.py``) and the report
(``bench/_report.py``).  This module runs the benchmark: train what is missing, evaluate the test
predictions per fold, write the report.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import pathlib
import time
from typing import Callable

import numpy as np

from ..._progress import RunProgress
from ..._validation import plural
from .._pool import train_missing
from .._store import RunStore, retrain_notes
from ._plan import (CURVE_METRICS, REGISTRY, REPORT_METRICS, Contender, LetorPlan, contender_listing,
                    prepare_letor, select_contenders)
from ._run import fingerprint, load_cached, release_folds, run_key, run_name, run_versions, train_task

log = logging.getLogger("gbrank.bench")
#: the metrics of ``effects.md``
EFFECT_METRICS = ("ndcg@10", "err@10", "ndcg@5", "ap", "rr", "nrbp@0.95")

__all__ = ["run_letor", "prepare_letor", "contender_listing", "select_contenders", "REGISTRY", "REPORT_METRICS",
           "load_cached", "run_key"]


def run_letor(plan: LetorPlan, write: Callable[[str], None] | None = None) -> dict:
    """Train what is not cached yet, evaluate every run's test predictions and write the report.
    Returns the report's summary (``write_report``'s return value).

    With ``plan.configs`` (``--tune``), every contender is trained with every configuration
    on every fold; the vali-best configuration of each (contender, fold) is the one whose
    test predictions are evaluated (``_tune.py``), and ``tuning.md``/``.csv``/``.png``
    are written beside the report.  The named analyses of ``plan.analyses`` (``_analyses.py``)
    write their files there too.

    Progress lines go to ``write`` (the CLI prints them), by default to the ``gbrank.bench``
    logger at INFO level."""
    write = write or log.info
    from .._report import write_report
    from ._analyses import ANALYSES

    out = plan.out_dir
    store = RunStore(out / "runs")
    fingerprints = {f.name: fingerprint(f) for f in plan.folds}
    for why in plan.left_out:
        write(why)
    runs = _runs(plan, fingerprints)  # (contender, fold, config index or None) -> (run name, settings)
    todo, counts, seen = [], {"ok": 0, "missing": 0, "stale": 0, "unreadable": 0}, set()
    for c in sorted(plan.contenders, key=_priority):  # a contender's folds together, cheap ones first
        versions = run_versions(c)
        for fold in plan.folds:
            for i in (range(len(plan.configs)) if plan.configs else [None]):
                name, settings = runs[c.name, fold.name, i]
                if name in seen:  # two configurations that reach the library alike: one run
                    continue
                seen.add(name)
                state, _ = store.state(name, versions)
                counts[state] += 1
                if state != "ok":
                    todo.append((c, fold, settings, name, i))
    jobs = plan.jobs if len(todo) > 1 else 1  # workers set their own numba threads
    # fold by fold (stable: within a fold, the contenders' order above), so that a process
    # bins each fold once per library and holds one fold's data sets at a time
    order = {f.name: k for k, f in enumerate(plan.folds)}
    todo.sort(key=lambda t: order[t[1].name])
    tasks = [(c, fold, settings, plan.threads, str(store.folder), name, jobs > 1, i, fingerprints[fold.name])
             for c, fold, settings, name, i in todo]
    tuned = (f"; --tune {plan.tune}: {len(plan.configs)} configurations per contender and fold"
             if plan.configs else "")
    write(f"gbrank bench letor: {plan.data_label}, {plural(len(plan.folds), 'fold')}, "
          f"{plural(len(plan.contenders), 'contender')}"
          f"{tuned}: {plural(len(tasks), 'run')} to train, {counts['ok']} cached in {store.folder}; "
          f"{plural(plan.jobs, 'job')} x {plural(plan.threads, 'thread')}"
          + retrain_notes(counts))
    t_start = time.perf_counter()
    trained = set()
    # a bar on a terminal; elsewhere a log line per run and a heartbeat (gbrank._progress)
    with _numba_threads(plan.threads if jobs == 1 else None), \
            RunProgress(len(tasks), label="gbrank bench letor", logger=log) as shown:
        try:
            for task, (rec, here) in train_missing(tasks, train_task, jobs=jobs):
                if here:
                    trained.add(task[5])
                    shown.finished(_line(rec, task[7]))
                else:
                    shown.finished(f"{rec['fold']} {rec['contender']}: trained by another process")
        finally:
            release_folds()
    train_seconds = time.perf_counter() - t_start

    names, records, tuning = _choose(plan, store, runs, trained)
    per_query = evaluate_runs(plan, store, names)
    base_rows = per_query[per_query["contender"] == plan.contenders[0].name]
    n_queries, n_empty = len(base_rows), int((base_rows["n_relevant"] == 0).sum())
    conventions = {
        "empty lists": f"a query without a relevant test document scores 0 on nDCG, ERR, AP, RR and nRBP "
                       f"(gbrank.evaluate empty='zero'); {n_empty} of the {n_queries} test queries have none",
        "ties": "tied scores are averaged over all their orders (ties='average'), never input order",
        "gain": "nDCG gain 2^label - 1, IDCG over the query's own test documents",
        "ERR": f"ERR@10 (Chapelle et al. 2009) with the exponential gain: stop probability of a document of grade "
               f"l is (2^l - 1) / 2^g_max, g_max = {_grade(plan.max_grade)}, the top grade of the data's labels "
               "over all its splits (gbrank.evaluate max_grade); no normalisation by an ideal ERR",
        "relevance": "AP, RR, RBP and nRBP count label >= 1 as relevant (binary gain)",
        "RBP": "RBP(p) = (1 - p) sum_r rel_r p^(r-1); nRBP(p) = RBP(p) / RBP(p) of the ideal order",
        "pooling": "the test queries of all folds are pooled (each query is in one test fold); paired tests "
                   "pair the contenders' values of the same (fold, query)",
    }
    config = _config(plan, records, fingerprints, train_seconds)
    title = f"gbrank bench letor: {plan.data_label}, {', '.join(f.name for f in plan.folds)}"
    if plan.configs:
        title += f", tuned ({plan.tune}, {len(plan.configs)} configurations)"
    watched = plan.settings["early_stopping_metric"]
    watched = watched if watched in per_query.columns else "ndcg@10"
    best = per_query[per_query["contender"] != plan.baseline].groupby("contender")[watched].mean()
    highlight = [plan.baseline, *best.sort_values(ascending=False, kind="stable").index[:5]]
    with store.report_lock():
        summary = write_report(per_query, out, baseline=plan.baseline, metrics=REPORT_METRICS, title=title,
                               config=config, conventions=conventions, notes=_notes(plan, records),
                               highlight=highlight, also_against=plan.also_against,
                               seconds={c.name: run_seconds([r for r in records if r["contender"] == c.name])
                                        for c in plan.contenders})
        extra = write_effects(out, summary, plan)
        for name in plan.analyses:  # the named analyses asked for (--analyses, or the data preset)
            extra += [f for f in ANALYSES[name].run(out, per_query) if f.endswith(".md")]
        if plan.configs:
            from ._tune import write_tuning

            extra += write_tuning(out, tuning, plan.configs, plan.settings["early_stopping_metric"], plan.tune)
    write(f"report written to {out.resolve()}/ (summary.md, summary.json, config.json, "
          "per_query.csv.gz, " + ", ".join([*extra, *(f for f in summary["files"] if f.endswith(".png"))]) + ")")
    return summary


def _grade(g) -> str:
    return "the largest label of each test fold" if g is None else f"{g:g}"


def _runs(plan: LetorPlan, fingerprints: dict) -> dict:
    """(contender, fold, configuration index, or None untuned) -> (run name, run settings)."""
    from ._run import tuned_settings

    runs = {}
    for c in plan.contenders:
        for f in plan.folds:
            if not plan.configs:
                runs[c.name, f.name, None] = (run_name(c, f.name, fingerprints[f.name], plan.settings), plan.settings)
            for i, config in enumerate(plan.configs):
                settings = tuned_settings(plan.settings, config, c.library)
                runs[c.name, f.name, i] = (run_name(c, f.name, fingerprints[f.name], settings), settings)
    return runs


def _choose(plan: LetorPlan, store: RunStore, runs: dict, trained: set):
    """The run whose test predictions count, per (contender, fold): the only one, or the
    vali-best configuration.  Returns (names, their records, the tuning table rows)."""
    from gbrank.metrics import parse_metric

    from ._tune import TUNED, choose, library_settings

    higher = parse_metric(plan.settings["early_stopping_metric"]).higher_is_better
    names, records, table = {}, [], []
    for c in plan.contenders:
        for fold in plan.folds:
            if not plan.configs:
                name = runs[c.name, fold.name, None][0]
                k = None
            else:
                recs = [store.load(runs[c.name, fold.name, i][0]).record for i in range(len(plan.configs))]
                k = choose([r["vali_at_best"] for r in recs], higher)
                name = runs[c.name, fold.name, k][0]
                for i, (config, r) in enumerate(zip(plan.configs, recs)):
                    table.append({"contender": c.name, "fold": fold.name, "config": i, "vali": r["vali_at_best"],
                                  "best_iteration": r["best_iteration"], "rounds_trained": r["rounds_trained"],
                                  "seconds": r["seconds"], "chosen": i == k, **{t: config[t] for t in TUNED},
                                  "library_params": json.dumps(library_settings(config, c.library)[0],
                                                               sort_keys=True)})
            names[c.name, fold.name] = name
            rec = dict(store.load(name).record)
            rec["cached"] = name not in trained
            if k is not None:
                rec["config"] = k
            records.append(rec)
    return names, records, table


def write_effects(out, summary: dict, plan: LetorPlan) -> list[str]:
    """``effects.md``: each contender's mean difference to every reference (the baseline and
    ``--also-against``) with its 95% CI and Holm-adjusted p, on the headline metrics, and
    which gbrank objectives beat every reference significantly on nDCG@10 or ERR@10."""
    refs = [plan.baseline, *plan.also_against]
    tests = {plan.baseline: summary.get("tests", {}), **summary.get("tests_also", {})}
    metrics = [m for m in EFFECT_METRICS if m in summary["metrics"]]
    level = round(100 * summary["confidence"])
    lines = [f"# Effect sizes against {', '.join(refs)}", "",
             f"Each cell: mean paired difference contender − reference over the pooled test queries, its {level}% "
             "Student-t interval in brackets, and the Holm-adjusted p of the paired t-test (Holm across the "
             "contenders of each metric, within each reference). ▲/▼: p < 0.05.", ""]
    for ref in refs:
        T = tests.get(ref, {})
        lines += [f"## against {ref}", "", "| contender | " + " | ".join(metrics) + " |",
                  "|---|" + "---:|" * len(metrics)]
        for name, by in T.items():
            cells = []
            for m in metrics:
                t = by[m]
                mark = "" if t["p_holm"] is None or t["p_holm"] >= 0.05 else (" ▲" if t["diff"] > 0 else " ▼")
                cells.append(f"{t['diff']:+.4f} [{t['ci_low']:+.4f}, {t['ci_high']:+.4f}] "
                             f"(p={t['p_holm']:.3g}){mark}")
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
    gbrank = [c.name for c in plan.contenders if c.kind == "gbrank"]
    winners = {m: [n for n in gbrank if all(
        tests.get(r, {}).get(n, {}).get(m, {}).get("p_holm") is not None
        and tests[r][n][m]["p_holm"] < 0.05 and tests[r][n][m]["diff"] > 0 for r in refs)]
        for m in ("ndcg@10", "err@10") if m in summary["metrics"]}
    verdict = "; ".join(f"{m}: {', '.join(w) if w else 'none'}" for m, w in winners.items())
    lines += [f"gbrank objectives significantly better (Holm p < 0.05) than every reference ({', '.join(refs)}): "
              f"{verdict}.", ""]
    (pathlib.Path(out) / "effects.md").write_text("\n".join(lines))
    return ["effects.md"]


def evaluate_runs(plan: LetorPlan, store: RunStore, names: dict):
    """The tidy per-query table of every stored run's test predictions: one row per
    (contender, fold, query), the report metrics and the nDCG@k curve."""
    import pandas as pd

    from gbrank.evaluation import evaluate

    extra = [m for m in CURVE_METRICS if m not in REPORT_METRICS]
    rows = []
    for c in plan.contenders:
        for fold in plan.folds:
            scores = store.load(names[c.name, fold.name]).arrays["scores"]
            pq = evaluate(fold.test.y, scores, fold.test.qid, REPORT_METRICS + extra,
                          max_grade=plan.max_grade).per_query.reset_index()
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


def _line(rec: dict, config: int | None = None) -> str:
    """One finished run in words: fold, contender, rounds, best vali value, seconds."""
    where = f"{rec['contender']} [config {config}]" if config is not None else rec["contender"]
    vali = "n/a" if rec["vali_at_best"] is None else f"{rec['vali_at_best']:.4f}"
    warm = rec.get("compile_seconds") or 0.0
    return (f"{rec['fold']} {where}: best round {rec['best_iteration']} of {rec['rounds_trained']}, "
            f"vali {vali}, {rec['seconds']:.1f} s training" + (f" (+ {warm:.1f} s warm-up)" if warm >= 0.05 else ""))


def _config(plan: LetorPlan, records: list[dict], fingerprints: dict, train_seconds: float) -> dict:
    from .._report import environment

    return {
        "command": plan.command,
        "data": {"data": plan.data, "label": plan.data_label, "dtype": plan.dtype,
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
            "max_grade": plan.max_grade,
            "also_against": list(plan.also_against),
            "tune": _tune_protocol(plan),
        },
        "left_out": list(plan.left_out),
        "analyses": list(plan.analyses),
        "contenders": {c.name: {**dataclasses.asdict(c), "description": c.describe()} for c in plan.contenders},
        "versions": environment(("numpy", "scipy", "pandas", "numba", "sklearn", "lightgbm", "xgboost",
                                 "catboost", "matplotlib")),
        "runs": records,
        "train_seconds_this_invocation": train_seconds,
    }


def _tune_protocol(plan: LetorPlan) -> dict:
    from ._tune import mapping_text, space_text

    if not plan.configs:
        return {"mode": "none"}
    return {"mode": plan.tune, "configurations": plan.configs, "space": space_text(),
            "mapping": mapping_text(),
            "selection": f"per contender and fold, the configuration with the best vali "
                         f"{plan.settings['early_stopping_metric']} at its best round (the first on ties); "
                         "its test predictions are evaluated; learning_rate, num_leaves and depth of the "
                         "plan are replaced by the configuration's"}


def _notes(plan: LetorPlan, records: list[dict]) -> list[str]:
    s = plan.settings
    if plan.configs:
        from ._tune import mapping_text

        return [
            f"Data: {plan.data_label} ({plural(len(plan.folds), 'fold')}). "
            f"Protocol with fair tuning (--tune {plan.tune}): "
            f"every contender is trained with the same {len(plan.configs)} configurations (tuning.md lists them) "
            f"on each fold's train split, early-stopped on its vali split by gbrank's {s['early_stopping_metric']} "
            f"(patience {s['patience']}, at most {s['rounds']} rounds, seed {s['seed']}); per contender and fold "
            f"the configuration with the best vali score is chosen and predicts the test split. Library defaults "
            f"for everything the configuration does not set. XGBoost's rank:map is trained on binary labels.",
            "How a configuration reaches each library: " + " | ".join(mapping_text()) + ".",
            *plan.notes, _run_table(plan, records, "chosen configuration per fold")]
    notes = [
        f"Data: {plan.data_label} ({plural(len(plan.folds), 'fold')}). Protocol: train on each fold's train split, "
        f"early-stop every contender on its vali split by gbrank's {s['early_stopping_metric']} (patience "
        f"{s['patience']}, at most {s['rounds']} rounds), predict its test split. Learning rate "
        f"{s['learning_rate']}, {s['num_leaves']} leaves (LightGBM, XGBoost), depth {s['catboost_depth']} "
        f"(CatBoost), seed {s['seed']}; library defaults otherwise, no tuning. CatBoost stops by the same "
        "gbrank metric through a custom eval_metric and its overfitting detector (od_type Iter, od_wait = "
        "patience). XGBoost's rank:map is trained on binary labels (label >= 1): it refuses graded ones.",
        *plan.notes,
    ]
    notes.append(_run_table(plan, records))
    return notes


def _run_table(plan: LetorPlan, records: list[dict], chosen: str | None = None) -> str:
    """The markdown table of the runs per contender: best rounds per fold, training seconds
    and, apart, the seconds its workers spent loading or compiling gbrank's kernels before
    timing it (:func:`gbrank.bench.letor._run.warm_up`)."""
    by = {}
    for r in records:
        by.setdefault(r["contender"], []).append(r)
    head = ("| contender | training | best round per fold | training seconds (sum) | compile/warm-up seconds (sum) |"
            + (f" {chosen} |" if chosen else ""))
    lines = [head, "|---|---|---|---:|---:|" + ("---|" if chosen else "")]
    for c in plan.contenders:
        rs = by.get(c.name, [])
        seconds = run_seconds(rs)
        warm = "-" if seconds["compile"] is None else f"{seconds['compile']:.1f}"
        lines.append(f"| {c.name} | {c.describe()} | {', '.join(str(r['best_iteration']) for r in rs)} | "
                     f"{seconds['training']:.1f} | {warm} |"
                     + (f" {', '.join(str(r.get('config')) for r in rs)} |" if chosen else ""))
    return "\n".join(lines)


def run_seconds(records: list[dict]) -> dict:
    """``{"training": seconds, "compile": seconds or None}`` summed over runs: training as
    timed (warm-up excluded), and the warm-up before them (None when no run recorded one:
    runs stored before gbrank timed it apart)."""
    warm = [r["compile_seconds"] for r in records if r.get("compile_seconds") is not None]
    return {"training": float(sum(r["seconds"] for r in records)), "compile": float(sum(warm)) if warm else None}
