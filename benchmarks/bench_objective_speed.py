"""Speed of gbrank's LambdaRank objectives against LightGBM's built-in lambdarank.

Runs both in one process on an MSLR-sized synthetic set and prints ratios (the machine
is shared and noisy, so only ratios measured side by side in one run mean anything):

1. whole training runs (``lightgbm.train``, 100 rounds, 31 leaves, 2 threads) of the
   built-in ``lambdarank`` and of gbrank's dnDCG configured the same way (its two
   normalisations, exact sigmoid), with truncation 30 and with truncation off
   (LightGBM: truncation level = the longest list);
2. one gradient call of each gbrank metric (dnDCG, dAP, dRR, dnRBP) at default settings,
   and of each bounded variant against its unbounded twin;
3. numba compilation, cold (empty cache directory) and from the on-disk cache, each in a
   fresh interpreter;
4. peak memory of training on one list of 50,000 documents with truncation 30.

    python benchmarks/bench_objective_speed.py            # full (a few minutes)
    python benchmarks/bench_objective_speed.py --quick    # smoke run
    python benchmarks/bench_objective_speed.py --training-only --save docs/results/objective_speed_training.json
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


def training_runs(args):
    import lightgbm as lgb

    from gbrank.backends import LightGBMObjective
    from gbrank.lambdas import LambdaObjective
    from gbrank.lambdas._objective import LIGHTGBM_EPS

    X, y, sizes = synthetic_set(args.queries)
    print(f"data: {X.shape[0]:,} rows, {len(sizes):,} lists (mean {sizes.mean():.1f}, max {sizes.max()}), "
          f"{X.shape[1]} features, labels 0-{int(y.max())}")
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
        t_builtin, t_ours = [], []
        for _ in range(args.repeats):  # interleaved so that drifting load hits both
            t_builtin.append(_train_seconds(lgb, dataset, "lambdarank", builtin_params, args.rounds))
            t_ours.append(_train_seconds(lgb, dataset, ours, base, args.rounds))
        rows.append({"setting": label, "lightgbm_s": min(t_builtin), "gbrank_s": min(t_ours),
                     "ratio": min(t_ours) / min(t_builtin)})
        print(f"  {label:15s} LightGBM lambdarank {min(t_builtin):7.2f} s   gbrank dnDCG {min(t_ours):7.2f} s"
              f"   ratio {min(t_ours) / min(t_builtin):.3f}")
    return rows, (y, sizes)


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
    parser.add_argument("--queries", type=int, default=4800)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="300 lists, 10 rounds, 1 repeat")
    parser.add_argument("--save", help="write the numbers to this JSON file")
    parser.add_argument("--training-only", action="store_true", help="only part 1, the training runs")
    parser.add_argument("--calls-only", action="store_true", help="only part 2, the gradient calls")
    args = parser.parse_args(argv)
    if args.quick:
        args.queries, args.rounds, args.repeats = 300, 10, 1
    import lightgbm
    import numba

    print(f"gbrank objective speed — lightgbm {lightgbm.__version__}, numba {numba.__version__}, "
          f"{os.cpu_count()} cores, {platform.python_version()}")
    result = {"args": vars(args),
              "versions": {"lightgbm": lightgbm.__version__, "numba": numba.__version__,
                           "numpy": np.__version__, "python": platform.python_version()}}
    if args.calls_only:
        _, y, sizes = synthetic_set(args.queries)
    else:
        print("1. training runs (best of", args.repeats, "each)")
        result["training"], (y, sizes) = training_runs(args)
    if not args.training_only:
        ptr = np.concatenate(([0], np.cumsum(sizes)))
        print("2. one gradient call per metric (default settings, best of 5)")
        result["gradient_call_s"] = gradient_calls(y, ptr, 5)
        print("2b. bounded objectives, one gradient call (best of 7, alternating with the unbounded twin)")
        result["bounded"] = bounded_calls(y, ptr, 7)
    if not (args.training_only or args.calls_only):
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
