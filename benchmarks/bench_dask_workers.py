"""Wall time of gbrank.dask training on 1, 2 and 4 local Dask workers against
single-machine GBRanker, for LightGBM and XGBoost, on an MSLR-sized synthetic set.

    nice -n 10 python benchmarks/bench_dask_workers.py                    # MSLR-sized, 100 rounds
    nice -n 10 python benchmarks/bench_dask_workers.py --queries 1200 --rounds 30  # the run in docs/dask.md
    nice -n 10 python benchmarks/bench_dask_workers.py --queries 200 --rounds 5    # smoke run

Data: ``make_letor`` with 4,800 lists x 120 documents, 136 features, labels 0-4 (MSLR-WEB
sized).  Model: gbrank's nDCG objective, 100 rounds, 31 leaves, learning rate 0.1.
Single machine: ``gbrank.GBRanker`` with all the machine's threads.  Dask: a
``LocalCluster`` (worker processes on 127.0.0.1) with ``workers`` processes sharing the
machine's cores (``threads_per_worker = max(1, cores // workers)``); the row blocks (two
per worker, cut at arbitrary rows so queries straddle them) are scattered to the workers
first ("load"), then ``DaskGBRanker.fit`` is timed ("fit": making queries whole, checking
labels, training).  Each configuration runs once, in this one process, side by side;
ratios are fit time / single-machine time of the same library.  Results go to
``docs/results/dask_workers.json`` with the configuration and library versions.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]


def scatter_blocks(client, arrays, n_blocks):
    """Dask arrays whose row blocks already live on the workers, round-robin."""
    import dask.array as da

    workers = sorted(client.nthreads())
    cuts = np.linspace(0, len(arrays[0]), n_blocks + 1).astype(int)
    cuts[1:-1] += 37  # off the query boundaries: queries straddle blocks, as in real data
    out, held = [], []
    for a in arrays:
        parts = [a[lo:hi] for lo, hi in zip(cuts[:-1], cuts[1:])]
        futs = [client.scatter(p, workers=[workers[i % len(workers)]]) for i, p in enumerate(parts)]
        held += futs
        out.append(da.concatenate([da.from_delayed(f, shape=p.shape, dtype=p.dtype)
                                   for f, p in zip(futs, parts)]))
    return out, held


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=4800)
    ap.add_argument("--docs", type=int, default=120)
    ap.add_argument("--features", type=int, default=136)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--leaves", type=int, default=31)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--backends", nargs="+", default=["lightgbm", "xgboost"])
    ap.add_argument("--objective", default="ndcg")
    ap.add_argument("--out", default=str(ROOT / "docs/results/dask_workers.json"))
    args = ap.parse_args(argv)

    import dask
    import distributed
    import lightgbm
    import xgboost

    import gbrank
    from gbrank.dask import DaskGBRanker
    from gbrank.datasets import make_letor

    cores = os.cpu_count() or 1
    X, y, qid = make_letor(n_queries=args.queries, docs_per_query=args.docs, n_features=args.features,
                           max_label=4, random_state=0)
    X = X.astype(np.float32)
    settings = dict(objective=args.objective, n_estimators=args.rounds, num_leaves=args.leaves,
                    learning_rate=0.1, random_state=0)
    print(f"{len(y)} rows, {args.queries} lists, {args.features} features; {cores} cores", flush=True)

    results = []
    out = {
        "command": "python " + " ".join([f"benchmarks/{pathlib.Path(__file__).name}",
                                         *(argv if argv is not None else sys.argv[1:])]),
        "config": vars(args) | {"rows": int(len(y)), "learning_rate": 0.1, "cores": cores,
                                "blocks_per_worker": 2, "X_dtype": "float32"},
        "versions": {"gbrank": gbrank.__version__, "lightgbm": lightgbm.__version__,
                     "xgboost": xgboost.__version__, "dask": dask.__version__,
                     "distributed": distributed.__version__, "numpy": np.__version__,
                     "python": platform.python_version(), "machine": platform.machine()},
        "load_average_at_start": list(os.getloadavg()),
        "results": results,
    }
    path = pathlib.Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)

    def save(row):
        results.append(row | {"load_average_1min": round(os.getloadavg()[0], 1)})
        print(results[-1], flush=True)
        path.write_text(json.dumps(out, indent=2) + "\n")  # after every row: partial runs keep data

    for backend in args.backends:
        t = time.perf_counter()
        local = gbrank.GBRanker(backend=backend, **settings).fit(X, y, qid=qid)
        single = time.perf_counter() - t
        ndcg = float(gbrank.evaluate(y, local.predict(X), qid, ["ndcg@10"]).mean().iloc[0])
        row = {"backend": backend, "setup": "single machine (GBRanker)", "workers": 0,
               "threads": cores, "fit_s": round(single, 2), "ratio": 1.0, "train_ndcg@10": round(ndcg, 4)}
        save(row)
        for n in args.workers:
            threads = max(1, cores // n)
            with distributed.LocalCluster(n_workers=n, threads_per_worker=threads, processes=True,
                                          host="127.0.0.1", dashboard_address=None) as cluster, \
                    distributed.Client(cluster) as client:
                client.run(lambda: __import__("gbrank.dask"))  # imports outside the timings
                t = time.perf_counter()
                (dX, dy, dq), held = scatter_blocks(client, (X, y, qid), 2 * n)
                load = time.perf_counter() - t
                t = time.perf_counter()
                model = DaskGBRanker(backend=backend, client=client, **settings).fit(dX, dy, qid=dq)
                fit = time.perf_counter() - t
                ndcg = float(gbrank.evaluate(y, model.to_local().predict(X), qid, ["ndcg@10"]).mean().iloc[0])
                del held
            row = {"backend": backend, "setup": f"dask, {n} worker(s)", "workers": n, "threads": threads,
                   "load_s": round(load, 2), "fit_s": round(fit, 2), "ratio": round(fit / single, 2),
                   "train_ndcg@10": round(ndcg, 4), "moved_rows": model.moved_rows_}
            save(row)
    print(f"saved {path}")


if __name__ == "__main__":
    main()
