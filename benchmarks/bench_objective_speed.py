"""Speed of gbrank's LambdaRank objectives against LightGBM's and XGBoost's built-ins.

Runs both in one process on an MSLR-sized synthetic set and prints ratios (the machine
is shared and noisy, so only ratios measured side by side in one run mean anything):

1. whole training runs of each built-in and of gbrank's dnDCG configured the same way,
   interleaved (alternating order) ``--repeats`` times; medians, their range and the ratio
   of the medians are printed:

   - LightGBM (``lightgbm.train``, ``--rounds`` 100, 31 leaves, ``--threads`` 2): the
     built-in ``lambdarank`` against ``LightGBMObjective(LambdaObjective("ndcg", ...))``
     with its two normalisations and exact sigmoid, with truncation 30 and with
     truncation off (LightGBM: truncation level = the longest list);
   - XGBoost (``xgboost.train``, ``--xgboost-rounds`` 30, hist, depth 6, eta 0.1,
     ``nthread`` = ``--threads``): the built-in ``rank:ndcg`` with
     ``lambdarank_pair_method="topk"``, 32 pairs per item and both normalisations against
     ``xgboost.train(params, dtrain, obj=XGBoostObjective(LambdaObjective.like_xgboost()))``;

   ``--library lightgbm|xgboost|both`` picks the libraries (default both);
2. one gradient call of each gbrank metric (dnDCG, dAP, dRR, dnRBP) at default settings,
   and of each bounded variant against its unbounded twin;
3. numba compilation, cold (empty cache directory) and from the on-disk cache, each in a
   fresh interpreter;
4. peak memory of training on one list of 50,000 documents with truncation 30.

``--profile`` instead breaks a training round down (cProfile): gbrank's gradient kernel,
its Python glue (labels, checks, copies) and the library's own work, on both libraries,
and XGBoost's tree building alone (a callable returning fixed gradients), from which the
built-in's gradient time is estimated.

    python benchmarks/bench_objective_speed.py            # full (a few minutes)
    python benchmarks/bench_objective_speed.py --quick    # smoke run
    python benchmarks/bench_objective_speed.py --training-only --repeats 5 --save docs/results/objective_speed_training.json
    python benchmarks/bench_objective_speed.py --training-only --library xgboost --repeats 7
    python benchmarks/bench_objective_speed.py --profile --repeats 3 --save docs/results/objective_speed_profile.json
    python benchmarks/bench_objective_speed.py --calls-only --save docs/results/objective_speed_calls.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np


def _train_seconds(lgb, dataset, objective, params, rounds):
    t = time.perf_counter()
    lgb.train(dict(params, objective=objective), dataset, num_boost_round=rounds)
    return time.perf_counter() - t


def synthetic_set(n_queries):
    """The MSLR-sized synthetic set: features, labels and list sizes."""
    from gbrank.datasets import make_letor

    X, y, qid = make_letor(n_queries=n_queries, docs_per_query=(60, 180), n_features=136,
                           max_label=4, random_state=0)
    return X, y, np.unique(qid, return_counts=True)[1]


def _interleaved(contenders, repeats):
    """Run each contender (name -> zero-argument callable returning seconds) ``repeats``
    times, interleaved and in alternating order, so that a change of load during the run
    falls on all of them.  Returns name -> list of seconds."""
    times = {name: [] for name in contenders}
    names = list(contenders)
    for r in range(repeats):
        for name in (names if r % 2 == 0 else names[::-1]):
            times[name].append(contenders[name]())
    return times


def _summary(times, reference, ours):
    """The row of one setting: medians, spreads and the ratio of medians (and of minimums)."""
    med = {k: float(np.median(v)) for k, v in times.items()}
    return {"median_s": med, "min_s": {k: min(v) for k, v in times.items()},
            "max_s": {k: max(v) for k, v in times.items()}, "all_s": times,
            "ratio": med[ours] / med[reference],
            "ratio_of_minimums": min(times[ours]) / min(times[reference])}


def _print_row(label, row, reference, ours, ref_name, our_name):
    lo, hi = row["min_s"], row["max_s"]
    print(f"  {label:15s} {ref_name} {row['median_s'][reference]:7.2f} s ({lo[reference]:.2f}-{hi[reference]:.2f})"
          f"   {our_name} {row['median_s'][ours]:7.2f} s ({lo[ours]:.2f}-{hi[ours]:.2f})"
          f"   ratio of medians {row['ratio']:.3f} (of minimums {row['ratio_of_minimums']:.3f})")


def training_runs(args, data=None):
    """LightGBM: the built-in ``lambdarank`` against gbrank's dnDCG configured the same way,
    at truncation 30 and with truncation off."""
    import lightgbm as lgb

    from gbrank.backends import LightGBMObjective
    from gbrank.lambdas import LambdaObjective
    from gbrank.lambdas._objective import LIGHTGBM_EPS

    X, y, sizes = data if data is not None else synthetic_set(args.queries)
    dataset = lgb.Dataset(X, y, group=sizes, params={"verbosity": -1, "max_bin": 255}, free_raw_data=False)
    dataset.construct()
    base = dict(num_leaves=31, learning_rate=0.1, num_threads=args.threads, verbosity=-1,
                force_col_wise=True, seed=0)
    rows = []
    for label, trunc in (("truncation 30", 30), ("truncation off", None)):
        level = 30 if trunc else int(sizes.max())
        builtin_params = dict(base, lambdarank_truncation_level=level)
        ours = LightGBMObjective(LambdaObjective(
            "ndcg", truncation=trunc, score_normalization=True, list_normalization=True,
            score_normalization_eps=LIGHTGBM_EPS))
        # warm up both (numba from its cache; LightGBM's first-iteration setup)
        _train_seconds(lgb, dataset, "lambdarank", builtin_params, 2)
        _train_seconds(lgb, dataset, ours, base, 2)
        times = _interleaved({
            "lightgbm": lambda: _train_seconds(lgb, dataset, "lambdarank", builtin_params, args.rounds),
            "gbrank": lambda: _train_seconds(lgb, dataset, ours, base, args.rounds)}, args.repeats)
        row = dict(_summary(times, "lightgbm", "gbrank"), setting=label, library="lightgbm", rounds=args.rounds,
                   lightgbm_s=float(np.median(times["lightgbm"])), gbrank_s=float(np.median(times["gbrank"])))
        rows.append(row)
        _print_row(label, row, "lightgbm", "gbrank", "LightGBM lambdarank", "gbrank dnDCG")
    return rows, (y, sizes)


# XGBoost's rank:ndcg as tests/test_backends.py reproduces it: top-32 pairs, both normalisations
XGB_TOPK = dict(lambdarank_pair_method="topk", lambdarank_num_pair_per_sample=32,
                lambdarank_normalization=True, lambdarank_score_normalization=True)


def xgboost_setup(args, data=None):
    """(dtrain, params shared by both, built-in params, gbrank's objective) for XGBoost."""
    import xgboost as xgb

    from gbrank.backends import XGBoostObjective
    from gbrank.lambdas import LambdaObjective

    X, y, sizes = data if data is not None else synthetic_set(args.queries)
    dtrain = xgb.DMatrix(X, y, nthread=args.threads)
    dtrain.set_group(sizes)
    base = dict(eta=0.1, max_depth=6, tree_method="hist", max_bin=256, nthread=args.threads, seed=0,
                base_score=0.5, disable_default_eval_metric=1)
    builtin = dict(base, objective="rank:ndcg", **XGB_TOPK)
    ours = XGBoostObjective(LambdaObjective.like_xgboost("ndcg", truncation=32))
    return dtrain, base, builtin, ours


def _xgb_seconds(xgb, params, dtrain, rounds, obj=None):
    t = time.perf_counter()
    xgb.train(params, dtrain, num_boost_round=rounds, obj=obj)
    return time.perf_counter() - t


def xgboost_training_runs(args, data=None):
    """XGBoost: the built-in ``rank:ndcg`` (topk, 32 pairs per item, both normalisations)
    against ``xgboost.train(params, dtrain, obj=XGBoostObjective(LambdaObjective.like_xgboost()))``,
    the same trees (hist, depth 6, eta 0.1, ``nthread`` = ``--threads``)."""
    import xgboost as xgb

    dtrain, base, builtin, ours = xgboost_setup(args, data)
    _xgb_seconds(xgb, builtin, dtrain, 2)  # warm up both
    _xgb_seconds(xgb, base, dtrain, 2, ours)
    times = _interleaved({
        "xgboost": lambda: _xgb_seconds(xgb, builtin, dtrain, args.xgboost_rounds),
        "gbrank": lambda: _xgb_seconds(xgb, base, dtrain, args.xgboost_rounds, ours)}, args.repeats)
    row = dict(_summary(times, "xgboost", "gbrank"), setting="top-32 pairs", library="xgboost",
               rounds=args.xgboost_rounds, xgboost_s=float(np.median(times["xgboost"])),
               gbrank_s=float(np.median(times["gbrank"])))
    _print_row("top-32 pairs", row, "xgboost", "gbrank", "XGBoost rank:ndcg", "gbrank dnDCG")
    return [row]


def profile_rounds(args, data=None):
    """Where a training round of gbrank's objective spends its time (cProfile over one run
    per library, after a warm-up), and XGBoost's tree building alone: a callable that
    returns the same precomputed gradients every round (so the built-in's own gradient
    time is about its training time minus that)."""
    import cProfile
    import pstats

    import lightgbm as lgb
    import xgboost as xgb

    from gbrank.backends import LightGBMObjective
    from gbrank.lambdas import LambdaObjective
    from gbrank.lambdas._objective import LIGHTGBM_EPS

    X, y, sizes = data if data is not None else synthetic_set(args.queries)
    out = {}

    def breakdown(run, rounds):
        prof = cProfile.Profile()
        t = time.perf_counter()
        prof.enable()
        run()
        prof.disable()
        total = time.perf_counter() - t
        stats = pstats.Stats(prof).stats  # (file, line, name) -> (cc, nc, tottime, cumtime, callers)
        def cum(name, tot=False):
            return sum(v[2] if tot else v[3] for k, v in stats.items()
                       if k[2] == name and "gbrank" in k[0].replace(os.sep, "/").split("/site-packages/")[-1])
        # the kernel runs on gbrank's gradient threads; the calling thread waits in the entry point
        kernel = cum("_all_gradients_entry")
        objective = cum("__call__")  # the adapter's __call__ holds the whole objective call
        parts = {"total_s": total, "gradient_kernel_s": kernel, "objective_glue_s": objective - kernel,
                 "library_s": total - objective, "rounds": rounds}
        parts.update({f"{k}_per_round_ms": v / rounds * 1e3 for k, v in list(parts.items()) if k.endswith("_s")})
        return parts

    dtrain, base, builtin, ours = xgboost_setup(args, (X, y, sizes))
    rounds = args.xgboost_rounds
    _xgb_seconds(xgb, base, dtrain, 2, ours)
    out["xgboost_gbrank"] = breakdown(lambda: xgb.train(base, dtrain, rounds, obj=ours), rounds)
    g0, h0 = ours(np.full(len(y), 0.5, dtype=np.float32), dtrain)
    fixed = lambda predt, d: (g0, h0)  # noqa: E731
    times = _interleaved({"xgboost": lambda: _xgb_seconds(xgb, builtin, dtrain, rounds),
                          "fixed_gradients": lambda: _xgb_seconds(xgb, base, dtrain, rounds, fixed)}, args.repeats)
    med = {k: float(np.median(v)) for k, v in times.items()}
    out["xgboost_builtin"] = {"total_s": med["xgboost"], "tree_only_s": med["fixed_gradients"],
                              "gradient_estimate_s": med["xgboost"] - med["fixed_gradients"], "all_s": times}
    p = out["xgboost_gbrank"]
    b = out["xgboost_builtin"]
    print(f"  XGBoost, {rounds} rounds, per round: gbrank kernel {p['gradient_kernel_s_per_round_ms']:.1f} ms, "
          f"gbrank glue (labels, checks, copies) {p['objective_glue_s_per_round_ms']:.1f} ms, "
          f"XGBoost predict + tree {p['library_s_per_round_ms']:.1f} ms")
    print(f"  XGBoost built-in: {b['total_s'] / rounds * 1e3:.1f} ms per round; with fixed gradients (tree only) "
          f"{b['tree_only_s'] / rounds * 1e3:.1f} ms; so its gradients about "
          f"{b['gradient_estimate_s'] / rounds * 1e3:.1f} ms per round (median of {args.repeats})")

    dataset = lgb.Dataset(X, y, group=sizes, params={"verbosity": -1, "max_bin": 255}, free_raw_data=False)
    dataset.construct()
    lgb_params = dict(num_leaves=31, learning_rate=0.1, num_threads=args.threads, verbosity=-1,
                      force_col_wise=True, seed=0)
    lgb_ours = LightGBMObjective(LambdaObjective("ndcg", truncation=30, score_normalization=True,
                                                 list_normalization=True, score_normalization_eps=LIGHTGBM_EPS))
    _train_seconds(lgb, dataset, lgb_ours, lgb_params, 2)
    out["lightgbm_gbrank"] = breakdown(lambda: _train_seconds(lgb, dataset, lgb_ours, lgb_params, args.rounds),
                                       args.rounds)
    p = out["lightgbm_gbrank"]
    print(f"  LightGBM, {args.rounds} rounds, truncation 30, per round: gbrank kernel "
          f"{p['gradient_kernel_s_per_round_ms']:.1f} ms, glue {p['objective_glue_s_per_round_ms']:.1f} ms, "
          f"LightGBM tree and predict {p['library_s_per_round_ms']:.1f} ms")
    return out


def gradient_calls(y, ptr, repeats):
    from gbrank.lambdas import LambdaObjective

    scores = np.random.default_rng(1).normal(size=len(y))
    out = {}
    for name in ("ndcg", "ap", "rr", "nrbp@0.95"):
        obj = LambdaObjective(name)
        obj.gradients(scores, y, ptr)
        best = np.inf
        for _ in range(repeats):
            t = time.perf_counter()
            obj.gradients(scores, y, ptr)
            best = min(best, time.perf_counter() - t)
        out[name] = best
    for name, sec in out.items():
        print(f"  {name:10s} {sec * 1e3:8.1f} ms   {sec / out['ndcg']:.2f}x dnDCG")
    return out


def bounded_calls(y, ptr, repeats):
    """Steady-state gradient call of each bounded objective against its unbounded twin
    (the bounds are prepared once per label set; that first call is timed separately).
    The two are timed alternately, best of ``repeats`` each, so that a change of clock or
    load during the run falls on both."""
    from gbrank.lambdas import LambdaObjective

    scores = np.random.default_rng(2).normal(size=len(y))
    out = {}
    for metric in ("ndcg", "ap", "rr", "nrbp@0.95"):
        base = LambdaObjective(metric)
        base.gradients(scores, y, ptr)
        for bounding in ("minmax", "expectation", "expectation_max", "distribution"):
            obj = LambdaObjective(metric, bounding=bounding)
            first = _timed(obj, scores, y, ptr)
            t_base = t = np.inf
            for _ in range(repeats):
                t_base = min(t_base, _timed(base, scores, y, ptr))
                t = min(t, _timed(obj, scores, y, ptr))
            out[f"{metric}+{bounding}"] = {"first_call_s": first, "call_s": t, "unbounded_s": t_base,
                                           "ratio": t / t_base}
            print(f"  {metric + '+' + bounding:28s} {t * 1e3:8.1f} ms  vs {t_base * 1e3:7.1f} ms unbounded:"
                  f" {t / t_base:.2f}x   (first call, preparing bounds: {first:.2f} s)")
    return out


def _timed(obj, scores, y, ptr):
    t = time.perf_counter()
    obj.gradients(scores, y, ptr)
    return time.perf_counter() - t


COMPILE_SNIPPET = """
import time, numpy as np
t = time.perf_counter()
from gbrank.lambdas import LambdaObjective
for m in ("ndcg", "ap", "rr", "nrbp@0.9"):
    LambdaObjective(m).gradients(np.array([0.3, 0.1, 0.2]), np.array([1.0, 0.0, 2.0]), np.array([0, 3]))
print(time.perf_counter() - t)
"""


def compile_times():
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        run = lambda: float(subprocess.run([sys.executable, "-c", COMPILE_SNIPPET], env=env, check=True,  # noqa: E731
                                           capture_output=True, text=True).stdout.split()[-1])
        cold = run()
        warm = run()
    print(f"  first call, empty cache (compiles): {cold:.2f} s; from the on-disk cache: {warm:.2f} s")
    return {"cold_s": cold, "cached_s": warm}


MEMORY_SNIPPET = """
import resource, numpy as np, lightgbm as lgb
from gbrank.backends import LightGBMObjective
from gbrank.lambdas import LambdaObjective
n = 50_000
rng = np.random.default_rng(0)
X = rng.normal(size=(n, 20)); y = rng.integers(0, 5, n).astype(float)
obj = LightGBMObjective(LambdaObjective("ndcg", truncation=30))
lgb.train({"objective": obj, "verbosity": -1, "num_threads": 2, "min_sum_hessian_in_leaf": 1e-3},
          lgb.Dataset(X, y, group=[n]), num_boost_round=5)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def long_list_peak_rss_mib() -> float:
    """Peak RSS of training on one 50,000-document list, in a fresh process whose numba
    kernels load from the on-disk cache (a first process fills it: compiling takes far
    more memory than training and is reported separately)."""
    run = lambda: subprocess.run([sys.executable, "-c", MEMORY_SNIPPET], check=True,  # noqa: E731
                                 capture_output=True, text=True).stdout.split()[-1]
    run()
    return float(run())


def long_list_memory():
    mib = long_list_peak_rss_mib()
    print(f"  one list of 50,000 documents, truncation 30, 5 rounds: peak RSS {mib:.0f} MiB (limit 1024)")
    return {"peak_rss_mib": mib}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=4800, help="lists of the synthetic MSLR-sized set (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=100, help="LightGBM rounds (default: %(default)s)")
    parser.add_argument("--xgboost-rounds", type=int, default=30, help="XGBoost rounds (default: %(default)s)")
    parser.add_argument("--threads", type=int, default=2,
                        help="threads of LightGBM and XGBoost; numba uses NUMBA_NUM_THREADS (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=2, help="interleaved repeats of each timing (default: %(default)s)")
    parser.add_argument("--library", choices=("lightgbm", "xgboost", "both"), default="both",
                        help="whose training runs (part 1) to time")
    parser.add_argument("--quick", action="store_true", help="300 lists, 10 rounds, 1 repeat")
    parser.add_argument("--save", help="write the numbers to this JSON file")
    parser.add_argument("--training-only", action="store_true", help="only part 1, the training runs")
    parser.add_argument("--calls-only", action="store_true", help="only part 2, the gradient calls")
    parser.add_argument("--profile", action="store_true",
                        help="only the per-round breakdown of gbrank's training rounds (cProfile)")
    args = parser.parse_args(argv)
    if args.quick:
        args.queries, args.rounds, args.xgboost_rounds, args.repeats = 300, 10, 10, 1
    import lightgbm
    import numba
    import xgboost

    print(f"gbrank objective speed — lightgbm {lightgbm.__version__}, xgboost {xgboost.__version__}, "
          f"numba {numba.__version__} ({numba.config.NUMBA_NUM_THREADS} threads), {os.cpu_count()} cores, "
          f"{platform.python_version()}, load average {os.getloadavg()[0]:.1f}")
    result = {"args": vars(args),
              "versions": {"lightgbm": lightgbm.__version__, "xgboost": xgboost.__version__,
                           "numba": numba.__version__, "numpy": np.__version__,
                           "python": platform.python_version()},
              "machine": {"cores": os.cpu_count(), "platform": platform.platform(),
                          "processor": platform.processor(), "load_average_start": os.getloadavg()}}
    data = synthetic_set(args.queries)
    X, y, sizes = data
    print(f"data: {X.shape[0]:,} rows, {len(sizes):,} lists (mean {sizes.mean():.1f}, max {sizes.max()}), "
          f"{X.shape[1]} features, labels 0-{int(y.max())}")
    if args.profile:
        print(f"profile of the training rounds (cProfile; built-in against fixed gradients: median of {args.repeats})")
        result["profile"] = profile_rounds(args, data)
    elif not args.calls_only:
        result["training"] = []
        if args.library in ("lightgbm", "both"):
            print(f"1. LightGBM training runs, {args.rounds} rounds (median of {args.repeats}, interleaved; "
                  "range in brackets)")
            rows, _ = training_runs(args, data)
            result["training"] += rows
        if args.library in ("xgboost", "both"):
            print(f"1b. XGBoost training runs, {args.xgboost_rounds} rounds (median of {args.repeats}, "
                  "interleaved; range in brackets)")
            result["training"] += xgboost_training_runs(args, data)
    if not (args.training_only or args.profile):
        ptr = np.concatenate(([0], np.cumsum(sizes)))
        print("2. one gradient call per metric (default settings, best of 5)")
        result["gradient_call_s"] = gradient_calls(y, ptr, 5)
        print("2b. bounded objectives, one gradient call (best of 7, alternating with the unbounded twin)")
        result["bounded"] = bounded_calls(y, ptr, 7)
    if not (args.training_only or args.calls_only or args.profile):
        print("3. numba compilation")
        result["compile"] = compile_times()
        print("4. memory")
        result["memory"] = long_list_memory()
    result["load_average"] = os.getloadavg()
    if args.save:
        with open(args.save, "w") as fh:
            json.dump(result, fh, indent=2)
    return result


if __name__ == "__main__":
    main()
