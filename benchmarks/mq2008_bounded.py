"""MQ2008, 5 folds: does bounding a lambda objective per query (thesis Ch. 3) help?

    GBRANK_DATA=/work/shared/data python benchmarks/mq2008_bounded.py            # all 5 folds
    GBRANK_DATA=/work/shared/data python benchmarks/mq2008_bounded.py --quick    # smoke run

Contenders: every objective metric in {ndcg, ap, rr, nrbp@0.95} x every bounding in
{none, minmax, expectation, expectation_max, distribution}, as ``GBRanker("<metric>+<bounding>")``
("<metric>" alone for none) on LightGBM, with GBRanker's defaults otherwise (all pairs, no
score or list normalisation), so that the bounding is the only change.

Protocol: that of ``mq2008_objectives.py`` (its ``make_model``): train on Fold k ``train``,
early-stop on Fold k ``vali`` watching ndcg@10 (gbrank.evaluate defaults: empty lists = 0,
ties averaged; patience 50, at most 1000 rounds), predict Fold k ``test``; learning rate
0.05, 31 leaves, seed 0, n_jobs 2.

Evaluation: the test predictions of the five folds pooled (784 queries) and evaluated with
``gbrank.evaluate``: NDCG@1/3/5/10, AP, RR, RBP@0.95 (raw) and nRBP@0.95, empty lists = 0,
ties averaged.  For each objective metric, each bounded variant is compared with the same
metric's unbounded objective by a paired t-test over the pooled queries (``gbrank.compare``),
Holm-corrected over the four boundings per (objective metric, evaluation metric).  A
secondary evaluation under conventions closer to the thesis (whole-list nDCG, AP, nRBP@0.95
on labels binarised at 2, queries without a relevant document left out) is in summary.json.

Writes to ``--out`` (default ``docs/results/mq2008_bounded``; ``bench-output/mq2008-bounded-quick``
with ``--quick``): ``per_query.csv``, ``ttest.csv``, ``table.md``, ``summary.json``.
Results: ``docs/results-mq2008-bounded.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time

import numpy as np
import pandas as pd

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import mq2008_objectives as mo  # noqa: E402  (sets GBRANK_DATA when unset)

import gbrank  # noqa: E402
from gbrank.datasets import load_letor_folds, make_letor  # noqa: E402
from gbrank.estimators import GBRanker  # noqa: E402

REPO = mo.REPO
OBJECTIVE_METRICS = ["ndcg", "ap", "rr", "nrbp@0.95"]
BOUNDINGS = ["none", "minmax", "expectation", "expectation_max", "distribution"]
EVAL_METRICS = ["ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "ap", "rr", "rbp@0.95", "nrbp@0.95"]
HEADLINE = ["ndcg@10", "ap", "rr", "nrbp@0.95"]
WATCHED = mo.WATCHED
# Thesis Table 5.1, MQ2008 row, unbounded and bounded listwise losses, one-hidden-layer network,
# each loss evaluated with its own metric (nDCG, AP, "RBP 95" for nRBP).
THESIS = {"ndcg": {"none": 0.7940, "minmax": 0.7932, "expectation": 0.7940, "distribution": 0.7945,
                   "expectation_max": 0.7963},
          "ap": {"none": 0.6687, "minmax": 0.6705, "expectation": 0.6640, "distribution": 0.6726,
                 "expectation_max": 0.6679},
          "nrbp@0.95": {"none": 0.7140, "minmax": 0.7173, "expectation": 0.7181, "distribution": 0.7139,
                        "expectation_max": 0.7181}}
THESIS_EVAL = {"ndcg": "ndcg", "ap": "ap", "nrbp@0.95": "nrbp@0.95"}


def objective_name(metric: str, bounding: str) -> str:
    return metric if bounding == "none" else f"{metric}+{bounding}"


def warm_up(args) -> float:
    """Compile the numba kernels of every objective and bounding, and of the evaluator, on
    tiny synthetic data, so that no fit's wall time includes compilation.  (The per-shape
    bound tables of MQ2008 are still prepared inside each fit: that cost is the method's.)"""
    t0 = time.perf_counter()
    X, y, qid = make_letor(n_queries=20, random_state=0)
    for m in OBJECTIVE_METRICS:
        for b in BOUNDINGS:
            model = GBRanker(objective_name(m, b), n_estimators=2, early_stopping_rounds=2, n_jobs=args.n_jobs)
            model.fit(X, y, qid=qid, eval_set=[(X, y, qid)])
    gbrank.evaluate(y, model.predict(X), qid, EVAL_METRICS)
    return time.perf_counter() - t0


def thesis_style(y, s, qid) -> dict:
    """Whole-list nDCG, AP and nRBP@0.95 closer to the thesis' set-up (its Sec. 4.2: only the
    highest MQ2008 grade counts as relevant), under two treatments of queries left without a
    relevant document; and on gbrank's labels (>= 1) with those queries left out."""
    metrics = ["ndcg", "ap", "nrbp@0.95"]
    yb = (np.asarray(y) >= 2).astype(np.float64)
    out = {}
    for tag, labels, empty in (("label>=2, empty skipped", yb, "skip"), ("label>=2, empty = 0", yb, "zero"),
                               ("graded (>=1), empty skipped", y, "skip"), ("graded (>=1), empty = 0", y, "zero")):
        r = gbrank.evaluate(labels, s, qid, metrics, empty=empty)
        out[tag] = {"n_queries": int(len(r.per_query)), **{m: float(r.per_query[m].mean()) for m in metrics}}
    return out


def run(args) -> dict:
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    table = {(m, b): objective_name(m, b) for m in OBJECTIVE_METRICS for b in BOUNDINGS}

    t_start = time.perf_counter()
    load0 = os.getloadavg()
    folds = load_letor_folds("mq2008", folds=args.folds)
    t_warm = warm_up(args)
    print(f"loaded {len(folds)} fold(s); warm-up (numba) {t_warm:.1f} s; {len(table)} contenders; "
          f"n_jobs={args.n_jobs}; load average {load0[0]:.1f}", flush=True)

    jobs = [(f, key) for f in folds for key in table]
    bar = None
    if sys.stdout.isatty():
        try:
            from tqdm import tqdm
            bar = tqdm(total=len(jobs), unit="fit", file=sys.stdout)
        except ImportError:  # pragma: no cover
            pass
    say = bar.write if bar else (lambda line: print(line, flush=True))

    scores = {key: [] for key in table}
    runs = {key: [] for key in table}
    for i, (fold, key) in enumerate(jobs, 1):
        model = mo.make_model(table[key], "lightgbm", args)
        t0, c0 = time.perf_counter(), time.process_time()
        model.fit(fold.train.X, fold.train.y, qid=fold.train.qid,
                  eval_set=[(fold.vali.X, fold.vali.y, fold.vali.qid)])
        s = model.predict(fold.test.X)
        seconds, cpu_seconds = time.perf_counter() - t0, time.process_time() - c0
        hist = model.evals_result_["valid_0"][WATCHED]
        vali_best = float(hist[model.best_iteration_ - 1])
        test_watch = float(gbrank.evaluate(fold.test.y, s, fold.test.qid, [WATCHED]).mean().iloc[0])
        scores[key].append(s)
        runs[key].append({"fold": fold.name, "best_iteration": int(model.best_iteration_),
                          "rounds_trained": len(hist), "vali_ndcg@10_at_best": vali_best,
                          "test_ndcg@10": test_watch, "seconds": seconds, "cpu_seconds": cpu_seconds})
        if bar:
            bar.update(1)
            bar.set_postfix_str(f"{fold.name} {table[key]}")
        say(f"[{i}/{len(jobs)}] {fold.name} {table[key]:28s} best_it={model.best_iteration_:4d} "
            f"vali {WATCHED}={vali_best:.4f} test {WATCHED}={test_watch:.4f} {seconds:6.1f} s")
    if bar:
        bar.close()

    # ---- pooled evaluation --------------------------------------------------------------
    y = np.concatenate([f.test.y for f in folds])
    qid = np.concatenate([f.test.qid for f in folds])
    fold_of = pd.Series(np.concatenate([[f.name] * len(np.unique(f.test.qid)) for f in folds]),
                        index=np.concatenate([np.unique(f.test.qid) for f in folds]))
    if fold_of.index.has_duplicates:
        raise RuntimeError("a query id appears in two test folds; pooling by qid would merge them")
    res, rows, thesis_rows = {}, [], {}
    for key, name in table.items():
        s = np.concatenate(scores[key])
        r = gbrank.evaluate(y, s, qid, EVAL_METRICS, empty="zero")
        res[key] = r
        pq = r.per_query.copy()
        pq.insert(0, "fold", fold_of.loc[pq.index].to_numpy())
        pq.insert(0, "bounding", key[1])
        pq.insert(0, "objective_metric", key[0])
        pq.insert(0, "objective", name)
        rows.append(pq.reset_index())
        thesis_rows[name] = thesis_style(y, s, qid)
    per_query = pd.concat(rows, ignore_index=True)
    cols = ["objective", "objective_metric", "bounding", "fold", "qid", "n_items", "n_relevant", *EVAL_METRICS]
    per_query = per_query[cols]
    per_query.to_csv(out / "per_query.csv", index=False, float_format="%.6g")

    # ---- paired t-tests, bounded vs unbounded, Holm over the four boundings -------------
    tests = []
    for m in OBJECTIVE_METRICS:
        for b in BOUNDINGS[1:]:
            c = gbrank.compare(res[(m, b)], res[(m, "none")], test="t")
            for e in EVAL_METRICS:
                tests.append({"objective_metric": m, "bounding": b, "metric": e, "mean": c.loc[e, "mean_a"],
                              "unbounded_mean": c.loc[e, "mean_b"], "diff": c.loc[e, "diff"],
                              "ci_low": c.loc[e, "ci_low"], "ci_high": c.loc[e, "ci_high"],
                              "p_value": c.loc[e, "p_value"], "n": int(c.loc[e, "n"])})
    ttest = pd.DataFrame(tests)
    ttest["p_holm"] = np.nan
    for _, idx in ttest.groupby(["objective_metric", "metric"]).groups.items():
        ttest.loc[idx, "p_holm"] = mo.holm(ttest.loc[idx, "p_value"].to_numpy())
    ttest.to_csv(out / "ttest.csv", index=False, float_format="%.6g")

    # ---- summary ------------------------------------------------------------------------
    wall = time.perf_counter() - t_start
    first = res[next(iter(table))]
    summary = {
        "command": "python " + " ".join([os.path.relpath(sys.argv[0], REPO), *sys.argv[1:]]),
        "dataset": "LETOR 4.0 MQ2008", "folds": [f.name for f in folds],
        "n_test_queries": int(len(np.unique(qid))), "n_test_queries_without_relevant": first.n_empty,
        "protocol": {
            "backend": "lightgbm via gbrank.estimators.GBRanker (mq2008_objectives.make_model)",
            "objective": "GBRanker('<metric>+<bounding>'), defaults otherwise: all pairs, no score/list "
                         "normalisation, min_child_weight 1e-3",
            "train": "Fold k train", "early_stopping_on": "Fold k vali", "predict": "Fold k test",
            "watched_metric": f"{WATCHED} (gbrank.evaluate defaults: empty='zero', ties='average')",
            "early_stopping_rounds": args.early_stopping, "max_rounds": args.max_rounds,
            "learning_rate": args.learning_rate, "num_leaves": args.num_leaves, "seed": args.seed,
            "n_jobs": args.n_jobs,
        },
        "evaluation": {"settings": first.settings, "metrics": EVAL_METRICS,
                       "pooling": "test queries of all folds pooled; each query in exactly one test fold",
                       "test": "paired t-test (gbrank.compare), bounded - unbounded of the same objective metric; "
                               "Holm over the four boundings per (objective metric, evaluation metric)"},
        "versions": mo.versions(),
        "machine": {"cpus": os.cpu_count(), "load_average_start": load0, "load_average_end": os.getloadavg()},
        "warm_up_seconds": t_warm, "wall_seconds_total": wall,
        "thesis_table_5_1_mq2008": THESIS,
        "contenders": {},
    }
    for key, name in table.items():
        sm = res[key].summary()
        entry = {"objective_metric": key[0], "bounding": key[1],
                 "best_iteration": [r["best_iteration"] for r in runs[key]],
                 "seconds": sum(r["seconds"] for r in runs[key]),
                 "cpu_seconds": sum(r["cpu_seconds"] for r in runs[key]), "folds": runs[key],
                 "pooled": {e: {"mean": sm.loc[e, "mean"], "ci_low": sm.loc[e, "ci_low"],
                                "ci_high": sm.loc[e, "ci_high"]} for e in EVAL_METRICS},
                 "thesis_style": thesis_rows[name]}
        if key[1] != "none":
            sub = ttest[(ttest["objective_metric"] == key[0]) & (ttest["bounding"] == key[1])].set_index("metric")
            entry["vs_unbounded"] = {e: {k: float(sub.loc[e, k]) for k in ("diff", "ci_low", "ci_high", "p_value", "p_holm")}
                                     for e in EVAL_METRICS}
        summary["contenders"][name] = entry
    rz = gbrank.evaluate(y, np.zeros(len(y)), qid, EVAL_METRICS, empty="zero").mean()
    summary["reference_random_order"] = {e: float(rz[e]) for e in EVAL_METRICS}
    summary["reference_random_order_thesis_style"] = thesis_style(y, np.zeros(len(y)), qid)
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=float) + "\n")
    (out / "table.md").write_text(markdown(summary, ttest) + "\n")
    print(f"\nwrote {out}/  (per_query.csv, ttest.csv, table.md, summary.json)")
    print(f"total wall time {wall:.1f} s")
    return summary


def markdown(summary: dict, ttest: pd.DataFrame) -> str:
    C = summary["contenders"]
    lines = [f"Mean over {summary['n_test_queries']} pooled test queries (empty lists = 0, ties averaged). "
             "Bounded rows: mean, then (difference to the unbounded objective of the same metric; "
             "Holm-adjusted paired t-test p over the four boundings). ▲/▼: Holm p < 0.05."]
    for m in OBJECTIVE_METRICS:
        lines += ["", f"**Objective {m}**", "",
                  "| bounding | " + " | ".join(EVAL_METRICS) + " | best iteration per fold | seconds |",
                  "|---|" + "---:|" * len(EVAL_METRICS) + "---|---:|"]
        for b in BOUNDINGS:
            c = C[objective_name(m, b)]
            cells = []
            for e in EVAL_METRICS:
                cell = f"{c['pooled'][e]['mean']:.4f}"
                if b != "none":
                    v = c["vs_unbounded"][e]
                    mark = (" ▲" if v["diff"] > 0 else " ▼") if v["p_holm"] < 0.05 else ""
                    cell += f" ({v['diff']:+.4f}; p={mo._fmt_p(v['p_holm'])}){mark}"
                cells.append(cell)
            lines.append(f"| {b} | " + " | ".join(cells) + f" | {c['best_iteration']} | {c['seconds']:.1f} |")
    rnd = summary["reference_random_order"]
    lines += ["", "| *random order (expectation)* | " + " | ".join(f"{rnd[e]:.4f}" for e in EVAL_METRICS) + " |",
              "|---|" + "---:|" * len(EVAL_METRICS)]
    lines += ["", "Thesis-style evaluation (whole-list nDCG, AP, nRBP@0.95; only label 2 relevant; queries "
              "without a label-2 document left out), beside thesis Table 5.1 (MQ2008, network, listwise losses; "
              "each loss evaluated with its own metric):", "",
              "| objective | bounding | n queries | gbrank, own metric | thesis | gbrank, same metric, graded labels, empty skipped |",
              "|---|---|---:|---:|---:|---:|"]
    for m in ("ndcg", "ap", "nrbp@0.95"):
        for b in BOUNDINGS:
            ts = C[objective_name(m, b)]["thesis_style"]
            a, g = ts["label>=2, empty skipped"], ts["graded (>=1), empty skipped"]
            lines.append(f"| {m} | {b} | {a['n_queries']} | {a[THESIS_EVAL[m]]:.4f} | {THESIS[m][b]:.4f} | "
                         f"{g[THESIS_EVAL[m]]:.4f} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    mo.add_protocol_arguments(parser, "mq2008_bounded")
    args = mo.finish_protocol_arguments(parser.parse_args(argv), "mq2008_bounded")
    run(args)


if __name__ == "__main__":
    main()
