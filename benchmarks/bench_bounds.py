"""Time ``gbrank.bounds.prepare`` on every MQ2008 training list, every metric and bounding.

    GBRANK_DATA=/work/shared/data python benchmarks/bench_bounds.py
    GBRANK_DATA=/work/shared/data python benchmarks/bench_bounds.py --save bench-output/bounds.json

The lists are the train splits of MQ2008 Fold1..Fold5 (each query appears in three of
them; 2,352 lists), or with ``--all-queries`` the 784 distinct queries once.  For each of
nDCG, AP, RR, nRBP(p) and the nRBP loss, ``prepare(..., distribution=True)`` computes
the minimum, maximum and expectation (min-max, expectation and expectation-max maps) and
each list's distribution and smoothed CDF table (distribution map):

1. numba compilation, timed on a tiny input (the first calls), reported on its own;
2. the timed run: cache cleared, all five metrics one after the other (so nothing is
   shared between them but the compiled code), best of ``--repeat`` runs.

Printed: the time, the number of lists, the distinct shapes per metric and how many of
them were enumerated exactly versus sampled.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import json
import os
import pathlib
import platform
import sys
import time

import numpy as np


def load_lists(all_queries: bool):
    from gbrank.datasets import load_letor_folds

    folds = load_letor_folds("mq2008")
    splits = [f.train for f in folds]
    if all_queries:
        splits += [folds[0].vali, folds[0].test]
    labels, sizes, seen = [], [], set()
    for split in splits:
        change = np.flatnonzero(np.diff(split.qid)) + 1
        ptr = np.concatenate([[0], change, [len(split.qid)]])
        for a, b in zip(ptr[:-1], ptr[1:]):
            q = split.qid[a]
            if all_queries and q in seen:
                continue
            seen.add(q)
            labels.append(split.y[a:b])
            sizes.append(b - a)
    group_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return np.concatenate(labels).astype(np.float64), group_ptr


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--all-queries", action="store_true", help="the 784 distinct queries instead of the 5 train splits")
    ap.add_argument("--p", type=float, default=0.95, help="nRBP persistence (default 0.95)")
    ap.add_argument("--grid", type=int, default=257)
    ap.add_argument("--n-samples", type=int, default=None, help="Monte Carlo orders per shape (default: the library's)")
    ap.add_argument("--exact-limit", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--save", type=pathlib.Path, help="write the results and configuration as JSON")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    from gbrank import bounds

    import_s = time.perf_counter() - t0
    metrics = {"ndcg": {}, "ap": {}, "rr": {}, "nrbp": {"p": args.p}, "nrbp_loss": {}}
    options = dict(distribution=True, grid=args.grid)
    if args.n_samples is not None:
        options["n_samples"] = args.n_samples
    if args.exact_limit is not None:
        options["exact_limit"] = args.exact_limit

    # 1. compile every kernel on a tiny input (exact and Monte Carlo paths)
    t0 = time.perf_counter()
    tiny, tiny_ptr = np.array([2.0, 0, 1, 0, 0, 1, 0, 0]), np.array([0, 3, 8])
    for name, extra in metrics.items():
        bounds.prepare(name, tiny, tiny_ptr, **extra, distribution=True, grid=5, exact_limit=4, n_samples=8)
    lb = bounds.prepare("ap", tiny, tiny_ptr, distribution=True, grid=5)
    lb.smoothed_cdf(lb.minimum)
    compile_s = time.perf_counter() - t0

    labels, group_ptr = load_lists(args.all_queries)
    n_lists = len(group_ptr) - 1

    runs, shapes = [], {}
    for _ in range(args.repeat):
        bounds.clear_cache()
        t0, c0 = time.perf_counter(), time.process_time()
        per_metric = {}
        for name, extra in metrics.items():
            t1 = time.perf_counter()
            lb = bounds.prepare(name, labels, group_ptr, **extra, **options)
            per_metric[name] = time.perf_counter() - t1
            shapes[name] = {"shapes": lb.n_shapes,
                            "exact": int(len(set(lb.shape_index[lb.exact].tolist()))),
                            "sampled": int(len(set(lb.shape_index[~lb.exact].tolist()))),
                            "degenerate_lists": int(lb.degenerate.sum())}
        runs.append((time.perf_counter() - t0, per_metric, time.process_time() - c0))
    total, per_metric, cpu = min(runs, key=lambda r: r[0])

    # a second call with a warm cache costs only the grouping
    t0 = time.perf_counter()
    for name, extra in metrics.items():
        bounds.prepare(name, labels, group_ptr, **extra, **options)
    warm_s = time.perf_counter() - t0

    threads = os.environ.get("NUMBA_NUM_THREADS") or str(__import__("numba").get_num_threads())
    print(f"MQ2008 {'distinct queries' if args.all_queries else 'Fold1..5 train lists'}: {n_lists} lists, "
          f"{len(labels)} items; numba threads {threads}")
    print(f"import {import_s:.2f} s, numba compile/load {compile_s:.2f} s (tiny input, reported apart)")
    for name in metrics:
        s = shapes[name]
        print(f"  {name:10s} {per_metric[name]:6.3f} s  {s['shapes']:4d} distinct shapes "
              f"({s['exact']} exact, {s['sampled']} Monte Carlo), {s['degenerate_lists']} degenerate lists")
    print(f"all metrics, cold cache: {total:.3f} s wall, {cpu:.3f} s CPU over all threads "
          f"(best of {args.repeat}); warm cache: {warm_s:.3f} s")
    print(f"load average while running: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    if args.save:
        from gbrank.bounds._shapes import DEFAULT_EXACT_LIMIT, DEFAULT_N_SAMPLES

        record = {
            "benchmark": "bounds.prepare on MQ2008", "lists": n_lists, "items": int(len(labels)),
            "seconds_cold": total, "cpu_seconds_cold": cpu, "load_average": os.getloadavg()[0], "seconds_per_metric": per_metric, "seconds_warm": warm_s,
            "compile_seconds": compile_s, "shapes": shapes,
            "config": {"p": args.p, "grid": args.grid, "all_queries": args.all_queries,
                       "n_samples": options.get("n_samples", DEFAULT_N_SAMPLES),
                       "exact_limit": options.get("exact_limit", DEFAULT_EXACT_LIMIT), "repeat": args.repeat},
            "versions": {"python": sys.version.split()[0], "numpy": np.__version__,
                         "numba": md.version("numba"), "platform": platform.platform(),
                         "cpus": os.cpu_count(), "numba_threads": threads},
        }
        args.save.parent.mkdir(parents=True, exist_ok=True)
        args.save.write_text(json.dumps(record, indent=2))
        print(f"saved {args.save}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
