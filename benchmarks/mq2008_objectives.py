"""MQ2008, 5 folds: which training objective gives the best ranker, for which metric?

    GBRANK_DATA=/work/shared/data python benchmarks/mq2008_objectives.py            # all 5 folds
    GBRANK_DATA=/work/shared/data python benchmarks/mq2008_objectives.py --quick    # smoke run, < 1 min

Protocol (every contender alike): train on Fold k ``train``, early-stop on Fold k ``vali``
watching ndcg@10 under gbrank's default evaluation (empty lists = 0, ties averaged;
50 rounds of patience, at most 1000 rounds), predict Fold k ``test``; learning rate 0.05,
31 leaves, ``min_child_weight`` left at GBRanker's default (1e-3 for gbrank objectives,
the library default for built-ins), fixed seed.  Contenders:

* gbrank objectives on LightGBM with GBRanker's defaults (all pairs, no normalisation):
  ndcg, ap, rr, nrbp@0.8, nrbp@0.9, nrbp@0.95 (``gbrank:<metric>``);
* the same six with LightGBM-style score and list normalisation (``gbrank-norm:<metric>``);
* gbrank ndcg and nrbp@0.95 (defaults) on XGBoost (``gbrank-xgb:<metric>``);
* the libraries' own objectives: lightgbm:lambdarank (the baseline), lightgbm:rank_xendcg,
  xgboost:rank:ndcg, xgboost:rank:map (trained on binary labels >= 1: XGBoost refuses
  graded labels for MAP; early stopping still watches graded ndcg@10), xgboost:rank:pairwise.

The test predictions of the folds are pooled (784 queries, each in exactly one test set)
and evaluated with ``gbrank.evaluate``: NDCG@1/3/5/10, AP, RR, nRBP@0.95 with
``empty="zero"`` (trec_eval's convention, the headline), and NDCG@1/3/5/10 with
``empty="one"`` (LightGBM's convention).  Every contender is compared with
lightgbm:lambdarank by a paired t-test over the pooled queries (``gbrank.compare``), with
Holm's correction across the contenders, per metric.

Writes to ``--out`` (default ``docs/results/mq2008``; ``bench-output/mq2008-quick`` with
``--quick``): ``per_query.csv``, ``fold_means.csv``, ``ttest.csv``, ``secondary_tests.csv``
(normalised vs default gbrank objectives, RR vs the others, nRBP vs nDCG/AP), ``table.md``,
``summary.json`` and ``metrics.png``.  Results: ``docs/results-mq2008.md``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pathlib
import platform
import subprocess
import sys
import time

import numpy as np
import pandas as pd

REPO = pathlib.Path(__file__).resolve().parents[1]
if "GBRANK_DATA" not in os.environ and (REPO.parent / "shared" / "data").is_dir():
    os.environ["GBRANK_DATA"] = str(REPO.parent / "shared" / "data")

import gbrank  # noqa: E402
from gbrank.datasets import load_letor_folds, make_letor  # noqa: E402
from gbrank.estimators import GBRanker  # noqa: E402
from gbrank.lambdas import LambdaObjective  # noqa: E402

METRICS = ["ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "ap", "rr", "nrbp@0.95"]
METRICS_ONE = ["ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10"]
ONE_SUFFIX = "_emptyone"
WATCHED = "ndcg@10"
BASELINE = "lightgbm:lambdarank"
GBRANK_METRICS = ["ndcg", "ap", "rr", "nrbp@0.8", "nrbp@0.9", "nrbp@0.95"]
# MQ2008, LightGBM 2.2.3 built-in lambdarank, empty lists = 1 (LightGBM issue 2239)
PUBLISHED_ONE = {"ndcg@1": 0.4319, "ndcg@3": 0.4574, "ndcg@5": 0.4953, "ndcg@10": 0.5844}


def binary_labels(y):
    return (np.asarray(y) >= 1).astype(np.float64)


def contenders():
    """name -> (backend, objective, training-label transform or None, note)."""
    out = {}
    for m in GBRANK_METRICS:
        out[f"gbrank:{m}"] = ("lightgbm", m, None, "gbrank LambdaObjective, GBRanker defaults (all pairs, no normalisation)")
    for m in GBRANK_METRICS:
        obj = LambdaObjective(m, score_normalization=True, list_normalization=True)
        out[f"gbrank-norm:{m}"] = ("lightgbm", obj, None, "score_normalization=True, list_normalization=True (all pairs)")
    for m in ["ndcg", "nrbp@0.95"]:
        out[f"gbrank-xgb:{m}"] = ("xgboost", m, None, "gbrank LambdaObjective on XGBoost, GBRanker defaults")
    out["lightgbm:lambdarank"] = ("lightgbm", "lightgbm:lambdarank", None, "LightGBM built-in, library defaults (truncation 30, lambdarank_norm)")
    out["lightgbm:rank_xendcg"] = ("lightgbm", "lightgbm:rank_xendcg", None, "LightGBM built-in")
    out["xgboost:rank:ndcg"] = ("xgboost", "xgboost:rank:ndcg", None, "XGBoost built-in, library defaults")
    out["xgboost:rank:map"] = ("xgboost", "xgboost:rank:map", binary_labels,
                               "XGBoost built-in; trained on labels >= 1 (XGBoost refuses graded labels for MAP)")
    out["xgboost:rank:pairwise"] = ("xgboost", "xgboost:rank:pairwise", None, "XGBoost built-in, library defaults")
    return out


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error)."""
    p = np.asarray(p_values, dtype=np.float64)
    m = len(p)
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adjusted
    return out


def versions() -> dict:
    v = {"python": platform.python_version(), "gbrank": gbrank.__version__}
    for module in ("numpy", "scipy", "pandas", "numba", "lightgbm", "xgboost", "sklearn"):
        try:  # the module's own version: xgboost's distribution may be named xgboost-cpu
            v[module] = importlib.import_module(module).__version__
        except ImportError:
            v[module] = None
    try:
        v["git_commit"] = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True,
                                         text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        v["git_commit"] = None
    return v


def make_model(objective, backend, args) -> GBRanker:
    return GBRanker(objective, backend=backend, n_estimators=args.max_rounds, learning_rate=args.learning_rate,
                    num_leaves=args.num_leaves, eval_metric=WATCHED, early_stopping_rounds=args.early_stopping,
                    random_state=args.seed, n_jobs=args.n_jobs)


def warm_up(args) -> float:
    """Compile gbrank's numba kernels (objective and evaluator) and load both libraries
    on tiny synthetic data, so that no contender's wall time includes it."""
    t0 = time.perf_counter()
    X, y, qid = make_letor(n_queries=20, random_state=0)
    for backend in ("lightgbm", "xgboost"):
        m = GBRanker("nrbp@0.95", backend=backend, n_estimators=3, early_stopping_rounds=2, n_jobs=args.n_jobs)
        m.fit(X, y, qid=qid, eval_set=[(X, y, qid)])
        gbrank.evaluate(y, m.predict(X), qid, METRICS)
    for m in GBRANK_METRICS:
        LambdaObjective(m, score_normalization=True, list_normalization=True).gradients(np.zeros(len(y)), y, np.r_[0, len(y)])
        LambdaObjective(m).gradients(np.zeros(len(y)), y, np.r_[0, len(y)])
    return time.perf_counter() - t0


def run(args) -> dict:
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    table = contenders()
    if args.contenders:
        unknown = sorted(set(args.contenders) - set(table))
        if unknown:
            raise SystemExit(f"unknown contenders {unknown}; known: {sorted(table)}")
        keep = set(args.contenders) | {BASELINE}
        table = {k: v for k, v in table.items() if k in keep}

    t_start = time.perf_counter()
    load0 = os.getloadavg()
    folds = load_letor_folds("mq2008", folds=args.folds)
    t_warm = warm_up(args)
    print(f"loaded {len(folds)} fold(s); warm-up (numba, libraries) {t_warm:.1f} s; "
          f"{len(table)} contenders; n_jobs={args.n_jobs}; load average {load0[0]:.1f}", flush=True)

    jobs = [(f, name) for f in folds for name in table]
    bar = None
    if sys.stdout.isatty():  # a bar on a terminal, one line per fit in a log
        try:
            from tqdm import tqdm
            bar = tqdm(total=len(jobs), unit="fit", file=sys.stdout)
        except ImportError:  # pragma: no cover
            pass
    say = bar.write if bar else (lambda line: print(line, flush=True))

    scores = {name: [] for name in table}     # per fold test scores
    runs = {name: [] for name in table}       # per fold training record
    for i, (fold, name) in enumerate(jobs, 1):
        backend, objective, transform, _ = table[name]
        ytr = fold.train.y if transform is None else transform(fold.train.y)
        model = make_model(objective, backend, args)
        t0, c0 = time.perf_counter(), time.process_time()
        model.fit(fold.train.X, ytr, qid=fold.train.qid, eval_set=[(fold.vali.X, fold.vali.y, fold.vali.qid)])
        s = model.predict(fold.test.X)
        seconds, cpu_seconds = time.perf_counter() - t0, time.process_time() - c0
        hist = model.evals_result_["valid_0"][WATCHED]
        vali_best = float(hist[model.best_iteration_ - 1])
        test_watch = float(gbrank.evaluate(fold.test.y, s, fold.test.qid, [WATCHED]).mean().iloc[0])
        scores[name].append(s)
        runs[name].append({"fold": fold.name, "best_iteration": int(model.best_iteration_),
                           "rounds_trained": len(hist), "vali_ndcg@10_at_best": vali_best,
                           "test_ndcg@10": test_watch, "seconds": seconds,
                           "cpu_seconds": cpu_seconds})
        if bar:
            bar.update(1)
            bar.set_postfix_str(f"{fold.name} {name}")
        say(f"[{i}/{len(jobs)}] {fold.name} {name:24s} best_it={model.best_iteration_:4d} vali {WATCHED}={vali_best:.4f} "
            f"test {WATCHED}={test_watch:.4f} {seconds:6.1f} s")
    if bar:
        bar.close()

    # ---- pooled evaluation ---------------------------------------------------------------
    y = np.concatenate([f.test.y for f in folds])
    qid = np.concatenate([f.test.qid for f in folds])
    fold_of = pd.Series(np.concatenate([[f.name] * len(np.unique(f.test.qid)) for f in folds]),
                        index=np.concatenate([np.unique(f.test.qid) for f in folds]))
    if fold_of.index.has_duplicates:
        raise RuntimeError("a query id appears in two test folds; pooling by qid would merge them")
    res_zero, res_one, rows = {}, {}, []
    for name in table:
        s = np.concatenate(scores[name])
        rz = gbrank.evaluate(y, s, qid, METRICS, empty="zero")
        ro = gbrank.evaluate(y, s, qid, METRICS_ONE, empty="one")
        res_zero[name], res_one[name] = rz, ro
        pq = rz.per_query.copy()
        for m in METRICS_ONE:
            pq[m + ONE_SUFFIX] = ro.per_query[m]
        pq.insert(0, "fold", fold_of.loc[pq.index].to_numpy())
        pq.insert(0, "contender", name)
        rows.append(pq.reset_index())
    per_query = pd.concat(rows, ignore_index=True)
    cols = ["contender", "fold", "qid", "n_items", "n_relevant", *METRICS, *(m + ONE_SUFFIX for m in METRICS_ONE)]
    per_query = per_query[cols]
    # The empty="one" columns are redundant (the empty="zero" value where the query has a
    # relevant document, 1 where it has none): check that, and keep them out of the file.
    for m in METRICS_ONE:
        derived = np.where(per_query["n_relevant"] > 0, per_query[m], 1.0)
        if not np.array_equal(derived, per_query[m + ONE_SUFFIX].to_numpy()):
            raise RuntimeError(f"{m}: empty='one' differs from empty='zero' on a query with a relevant document")
    per_query[cols[: -len(METRICS_ONE)]].to_csv(out / "per_query.csv", index=False, float_format="%.6g")

    value_cols = [*METRICS, *(m + ONE_SUFFIX for m in METRICS_ONE)]
    fm = per_query.groupby(["contender", "fold"], sort=False)[value_cols].mean()
    fm.insert(0, "n_queries", per_query.groupby(["contender", "fold"], sort=False).size())
    pooled = per_query.groupby("contender", sort=False)[value_cols].mean()
    pooled.insert(0, "n_queries", per_query.groupby("contender", sort=False).size())
    pooled["fold"] = "pooled"
    pooled = pooled.reset_index().set_index(["contender", "fold"])
    fold_means = pd.concat([fm, pooled]).sort_index(level=0, sort_remaining=False, key=lambda i: i.map(list(table).index))
    fold_means.reset_index().to_csv(out / "fold_means.csv", index=False, float_format="%.6g")

    # ---- paired t-tests against the baseline, Holm per metric ------------------------------
    tests = []
    if BASELINE in table:
        others = [n for n in table if n != BASELINE]
        for name in others:
            c = gbrank.compare(res_zero[name], res_zero[BASELINE], test="t")
            for m in METRICS:
                tests.append({"contender": name, "metric": m, "mean": c.loc[m, "mean_a"],
                              "baseline_mean": c.loc[m, "mean_b"], "diff": c.loc[m, "diff"],
                              "ci_low": c.loc[m, "ci_low"], "ci_high": c.loc[m, "ci_high"],
                              "p_value": c.loc[m, "p_value"], "n": int(c.loc[m, "n"])})
    ttest = pd.DataFrame(tests)
    if len(ttest):
        ttest["p_holm"] = np.nan
        for m in METRICS:
            sel = ttest["metric"] == m
            ttest.loc[sel, "p_holm"] = holm(ttest.loc[sel, "p_value"].to_numpy())
        ttest.to_csv(out / "ttest.csv", index=False, float_format="%.6g")
    secondary = secondary_tests(table, res_zero)
    if len(secondary):
        secondary.to_csv(out / "secondary_tests.csv", index=False, float_format="%.6g")

    # ---- summary -------------------------------------------------------------------------
    wall = time.perf_counter() - t_start
    summary = {
        "command": "python " + " ".join([os.path.relpath(sys.argv[0], REPO), *sys.argv[1:]]),
        "dataset": "LETOR 4.0 MQ2008", "folds": [f.name for f in folds],
        "n_test_queries": int(len(np.unique(qid))), "n_test_queries_without_relevant": res_zero[next(iter(table))].n_empty,
        "protocol": {
            "train": "Fold k train", "early_stopping_on": "Fold k vali", "predict": "Fold k test",
            "watched_metric": f"{WATCHED} (gbrank.evaluate defaults: empty='zero', ties='average')",
            "early_stopping_rounds": args.early_stopping, "max_rounds": args.max_rounds,
            "learning_rate": args.learning_rate, "num_leaves": args.num_leaves,
            "min_child_weight": "GBRanker default: 1e-3 for gbrank objectives; library default for built-ins "
                                "(LightGBM min_sum_hessian_in_leaf 1e-3, XGBoost min_child_weight 1)",
            "seed": args.seed, "n_jobs": args.n_jobs,
        },
        "evaluation": {"headline": res_zero[next(iter(table))].settings,
                       "lightgbm_convention": res_one[next(iter(table))].settings,
                       "pooling": "test queries of all folds pooled; each query in exactly one test fold",
                       "test": "paired t-test (gbrank.compare) vs " + BASELINE + ", Holm across contenders per metric"},
        "versions": versions(), "machine": {"cpus": os.cpu_count(), "load_average_start": load0,
                                            "load_average_end": os.getloadavg()},
        "published_lightgbm_2_2_3_empty_one": PUBLISHED_ONE,
        "warm_up_seconds": t_warm, "wall_seconds_total": wall,
        "contenders": {},
    }
    for name, (backend, objective, transform, note) in table.items():
        rz, ro = res_zero[name].summary(), res_one[name].summary()
        entry = {
            "backend": backend, "objective": repr(objective) if not isinstance(objective, str) else objective,
            "note": note, "train_labels": "binary (label >= 1)" if transform is not None else "graded 0-2",
            "best_iteration": [r["best_iteration"] for r in runs[name]],
            "seconds": sum(r["seconds"] for r in runs[name]),
            "cpu_seconds": sum(r["cpu_seconds"] for r in runs[name]), "folds": runs[name],
            "pooled": {m: {"mean": rz.loc[m, "mean"], "ci_low": rz.loc[m, "ci_low"], "ci_high": rz.loc[m, "ci_high"]}
                       for m in METRICS},
            "pooled_empty_one": {m: {"mean": ro.loc[m, "mean"], "ci_low": ro.loc[m, "ci_low"],
                                     "ci_high": ro.loc[m, "ci_high"]} for m in METRICS_ONE},
            "fold_means": {fname: {m: float(fold_means.loc[(name, fname), m]) for m in value_cols}
                           for fname in [f.name for f in folds]},
        }
        if len(ttest) and name != BASELINE:
            sub = ttest[ttest["contender"] == name].set_index("metric")
            entry["vs_baseline"] = {m: {k: float(sub.loc[m, k]) for k in ("diff", "ci_low", "ci_high", "p_value", "p_holm")}
                                    for m in METRICS}
        summary["contenders"][name] = entry
    if BASELINE in table:  # LightGBM's own tie order too, for the published-number comparison
        s = np.concatenate(scores[BASELINE])
        stable = gbrank.evaluate(y, s, qid, METRICS_ONE, empty="one", ties="stable").mean()
        summary["baseline_empty_one_ties_stable"] = {m: float(stable[m]) for m in METRICS_ONE}
    # Constant scores with ties averaged = the exact expectation over uniformly random orders:
    # the floor any trained ranker must clear, under each convention.
    rz = gbrank.evaluate(y, np.zeros(len(y)), qid, METRICS, empty="zero").mean()
    ro = gbrank.evaluate(y, np.zeros(len(y)), qid, METRICS_ONE, empty="one").mean()
    summary["reference_random_order"] = {"empty_zero": {m: float(rz[m]) for m in METRICS},
                                         "empty_one": {m: float(ro[m]) for m in METRICS_ONE}}
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=float) + "\n")
    (out / "table.md").write_text(markdown(summary, ttest, table) + "\n\n" + markdown_secondary(secondary) + "\n")
    plot(summary, out / "metrics.png")
    print(f"\nwrote {out}/  (per_query.csv, fold_means.csv, ttest.csv, secondary_tests.csv, table.md, "
          "summary.json, metrics.png)")
    print(f"total wall time {wall:.1f} s")
    return summary


def secondary_tests(table: dict, res: dict) -> pd.DataFrame:
    """Paired t-tests between gbrank configurations, Holm within each (family, metric).

    * ``normalisation``: gbrank-norm:<m> vs gbrank:<m> for the six objectives;
    * ``normalisation, mean of the six``: each query's mean over the six objectives,
      normalised vs defaults (one test per metric);
    * ``rr``: <config>:rr vs every other objective of the same configuration;
    * ``nrbp``: <config>:nrbp@p vs <config>:ndcg and <config>:ap, p in 0.8, 0.9, 0.95.
    """
    pairs = []
    for m in GBRANK_METRICS:
        pairs.append(("normalisation", f"gbrank-norm:{m}", f"gbrank:{m}"))
    for c in ("gbrank", "gbrank-norm"):
        for m in GBRANK_METRICS:
            if m != "rr":
                pairs.append(("rr", f"{c}:rr", f"{c}:{m}"))
    for c in ("gbrank", "gbrank-norm"):
        for p in ("nrbp@0.8", "nrbp@0.9", "nrbp@0.95"):
            for other in ("ndcg", "ap"):
                pairs.append(("nrbp", f"{c}:{p}", f"{c}:{other}"))
    rows = []

    def add(family, a_name, b_name, a, b):
        c = gbrank.compare(a, b, test="t")
        for m in METRICS:
            rows.append({"family": family, "a": a_name, "b": b_name, "metric": m, "mean_a": c.loc[m, "mean_a"],
                         "mean_b": c.loc[m, "mean_b"], "diff": c.loc[m, "diff"], "ci_low": c.loc[m, "ci_low"],
                         "ci_high": c.loc[m, "ci_high"], "p_value": c.loc[m, "p_value"]})

    for family, a, b in pairs:
        if a in res and b in res:
            add(family, a, b, res[a], res[b])
    names = {cfg: [f"{cfg}:{m}" for m in GBRANK_METRICS] for cfg in ("gbrank", "gbrank-norm")}
    if all(n in res for ns in names.values() for n in ns):
        mean_of = {}
        for cfg, ns in names.items():
            first = res[ns[0]]
            avg = sum(res[n].per_query[list(METRICS)] for n in ns) / len(ns)
            mean_of[cfg] = gbrank.EvaluationResult(per_query=avg, metrics=first.metrics, settings=first.settings,
                                                   n_empty=first.n_empty)
        add("normalisation, mean of the six", "gbrank-norm:<mean of six>", "gbrank:<mean of six>",
            mean_of["gbrank-norm"], mean_of["gbrank"])
    out = pd.DataFrame(rows)
    if len(out):
        out["p_holm"] = np.nan
        for (_, _), idx in out.groupby(["family", "metric"]).groups.items():
            out.loc[idx, "p_holm"] = holm(out.loc[idx, "p_value"].to_numpy())
    return out


def markdown_secondary(sec: pd.DataFrame) -> str:
    if not len(sec):
        return ""
    lines = ["Secondary paired t-tests (a − b; Holm within each family and metric; all numbers in "
             "secondary_tests.csv):"]
    for family, sub in sec.groupby("family", sort=False):
        lines += ["", f"*{family}*", "", "| a | b | " + " | ".join(METRICS) + " |",
                  "|---|---|" + "---:|" * len(METRICS)]
        for (a, b), pair in sub.groupby(["a", "b"], sort=False):
            pair = pair.set_index("metric")
            lines.append(f"| {a} | {b} | " + " | ".join(
                f"{pair.loc[m, 'diff']:+.4f} (p={_fmt_p(pair.loc[m, 'p_holm'])})" for m in METRICS) + " |")
    return "\n".join(lines)


def _fmt_p(p: float) -> str:
    return "<1e-4" if p < 1e-4 else f"{p:.4f}" if p < 0.01 else f"{p:.3f}"


def markdown(summary: dict, ttest: pd.DataFrame, table: dict) -> str:
    C = summary["contenders"]
    n = summary["n_test_queries"]
    lines = [f"Mean over {n} pooled test queries ± half-width of the 95% Student-t interval; "
             "empty lists = 0, ties averaged. ▲/▼: better/worse than lightgbm:lambdarank, "
             "Holm-adjusted paired t-test p < 0.05.", "",
             "| contender | " + " | ".join(METRICS) + " | best iteration per fold | seconds |",
             "|---|" + "---:|" * len(METRICS) + "---|---:|"]
    for name in table:
        cells = []
        for m in METRICS:
            v = C[name]["pooled"][m]
            cell = f"{v['mean']:.4f} ± {(v['ci_high'] - v['ci_low']) / 2:.4f}"
            vs = C[name].get("vs_baseline", {}).get(m)
            if vs and vs["p_holm"] < 0.05:
                cell += " ▲" if vs["diff"] > 0 else " ▼"
            cells.append(cell)
        bold = f"**{name}**" if name == BASELINE else name
        lines.append(f"| {bold} | " + " | ".join(cells) + f" | {C[name]['best_iteration']} | {C[name]['seconds']:.1f} |")
    rnd = summary["reference_random_order"]
    lines.append("| *random order (expectation; constant scores, ties averaged)* | "
                 + " | ".join(f"{rnd['empty_zero'][m]:.4f}" for m in METRICS) + " | | |")
    if len(ttest):
        lines += ["", "Paired difference to lightgbm:lambdarank (contender − baseline), "
                  "Holm-adjusted p of the paired t-test (raw p in ttest.csv):", "",
                  "| contender | " + " | ".join(METRICS) + " |", "|---|" + "---:|" * len(METRICS)]
        for name in table:
            if name == BASELINE:
                continue
            sub = ttest[ttest["contender"] == name].set_index("metric")
            lines.append(f"| {name} | " + " | ".join(
                f"{sub.loc[m, 'diff']:+.4f} (p={_fmt_p(sub.loc[m, 'p_holm'])})" for m in METRICS) + " |")
    lines += ["", "NDCG@k with empty lists = 1 (LightGBM's convention), ties averaged:", "",
              "| contender | " + " | ".join(METRICS_ONE) + " |", "|---|" + "---:|" * len(METRICS_ONE)]
    for name in table:
        lines.append(f"| {name} | " + " | ".join(f"{C[name]['pooled_empty_one'][m]['mean']:.4f}" for m in METRICS_ONE) + " |")
    if "baseline_empty_one_ties_stable" in summary:
        st = summary["baseline_empty_one_ties_stable"]
        lines.append("| lightgbm:lambdarank, ties in input order (LightGBM's own) | "
                     + " | ".join(f"{st[m]:.4f}" for m in METRICS_ONE) + " |")
    lines.append("| *random order (expectation)* | "
                 + " | ".join(f"{rnd['empty_one'][m]:.4f}" for m in METRICS_ONE) + " |")
    lines.append("| published: LightGBM 2.2.3 lambdarank (issue 2239) | "
                 + " | ".join(f"{PUBLISHED_ONE[m]:.4f}" for m in METRICS_ONE) + " |")
    return "\n".join(lines)


def plot(summary: dict, path: pathlib.Path) -> None:
    """Paired difference to the baseline (mean and 95% CI over the pooled queries)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover
        return
    C = summary["contenders"]
    names = [n for n in C if "vs_baseline" in C[n]]
    if not names:
        return
    shown = ["ndcg@10", "ap", "rr", "nrbp@0.95"]
    fig, axes = plt.subplots(1, len(shown), figsize=(3.0 * len(shown), 0.3 * len(names) + 1.3), sharey=True)
    ypos = np.arange(len(names))[::-1]
    colors = ["C0" if n.startswith("gbrank:") else "C1" if n.startswith("gbrank-norm") else "C2"
              if n.startswith("gbrank-xgb") else "C3" for n in names]
    for ax, m in zip(axes, shown):
        d = np.array([C[n]["vs_baseline"][m]["diff"] for n in names])
        lo = np.array([C[n]["vs_baseline"][m]["ci_low"] for n in names])
        hi = np.array([C[n]["vs_baseline"][m]["ci_high"] for n in names])
        ax.errorbar(d, ypos, xerr=[d - lo, hi - d], fmt="none", ecolor="0.65", lw=1)
        ax.scatter(d, ypos, c=colors, s=14, zorder=3)
        ax.axvline(0.0, color="k", lw=0.6)
        ax.set_title(m, fontsize=9)
        ax.xaxis.set_major_locator(plt.MaxNLocator(4))
        ax.tick_params(labelsize=7)
    axes[0].set_yticks(ypos)
    axes[0].set_yticklabels(names, fontsize=7)
    fig.suptitle(f"MQ2008, {summary['n_test_queries']} pooled test queries: contender - {BASELINE}, "
                 "paired mean difference and 95% CI (empty lists = 0, ties averaged)", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def add_protocol_arguments(parser, name: str) -> None:
    """The protocol options shared by the MQ2008 experiments (folds, rounds, patience, ...);
    results go to docs/results/<name> (quick runs: bench-output/<name>-quick)."""
    parser.add_argument("--folds", type=int, nargs="+", default=None, help="fold numbers (default: all 5)")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: fold 1 only, at most 15 rounds, patience 5, output to bench-output/")
    parser.add_argument("--out", default=None, help=f"output folder (default docs/results/{name})")
    parser.add_argument("--max-rounds", type=int, default=1000)
    parser.add_argument("--early-stopping", type=int, default=50)
    parser.add_argument("--learning-rate", type=float, default=0.05)
    parser.add_argument("--num-leaves", type=int, default=31)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-jobs", type=int, default=2)


def finish_protocol_arguments(args, name: str):
    """Apply ``--quick`` and the default output folder."""
    if args.quick:
        args.folds = args.folds or [1]
        args.max_rounds = min(args.max_rounds, 15)
        args.early_stopping = min(args.early_stopping, 5)
        args.out = args.out or str(REPO / "bench-output" / (name.replace("_", "-") + "-quick"))
    args.out = args.out or str(REPO / "docs" / "results" / name)
    return args


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_protocol_arguments(parser, "mq2008")
    parser.add_argument("--contenders", nargs="+", default=None, help="only these (the baseline is always kept)")
    args = finish_protocol_arguments(parser.parse_args(argv), "mq2008")
    run(args)


if __name__ == "__main__":
    main()
