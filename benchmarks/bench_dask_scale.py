"""DaskGBRanker at MSLR-WEB30K size from Parquet, against LightGBM's own DaskLGBMRanker:
wall time and peak memory per worker of fit, predict and distributed evaluation.

    nice python benchmarks/bench_dask_scale.py --queries 31500 --save docs/results/dask_scale_web30k.json
    nice python benchmarks/bench_dask_scale.py --queries 200 --rounds 2      # smoke run

Data: ``--queries`` lists of 60-180 documents (31,500: about 3.8 M rows, MSLR-WEB30K's
size), ``--features`` float32 features made directly as float32 (labels 0-4; the first ten
features shifted by the label, so the models learn), written once to ``--data-dir`` as
Parquet files of whole queries (one per ``--files``; reused when present).  Each contender
runs on a fresh ``LocalCluster`` of ``--workers`` worker processes with ``--threads`` threads
each (so that each worker's peak RSS is its own), reading the Parquet with
``dask.dataframe.read_parquet``:

* ``gbrank``: ``DaskGBRanker("ndcg", n_estimators=R, num_leaves=31)`` fit on the float32
  columns with ``qid`` and ``label``; ``predict`` computed; ``gbrank.dask.evaluate`` of
  nDCG@10, ERR@10 and AP on the training rows;
* ``lightgbm``: ``lightgbm.dask.DaskLGBMRanker(objective="lambdarank", n_estimators=R,
  num_leaves=31)`` fit with ``group`` (the query sizes of each partition), ``predict``
  computed.

Peak RSS per worker (``ru_maxrss`` of each worker process, read with ``client.run`` after
each step) and wall seconds per step; the figures go to ``--save`` and docs/dask.md.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import resource
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]


def make_parquet(folder: pathlib.Path, queries: int, features: int, files: int, seed: int = 0) -> dict:
    """Write (once) the synthetic set as ``files`` Parquet files of whole queries; return its manifest."""
    import pandas as pd

    manifest = {"queries": queries, "features": features, "files": files, "seed": seed, "dtype": "float32"}
    stamp = folder / "manifest.json"
    if stamp.exists() and json.loads(stamp.read_text()).get("config") == manifest:
        return json.loads(stamp.read_text())
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("part-*.parquet"):
        old.unlink()
    rng = np.random.default_rng(seed)
    sizes = rng.integers(60, 181, queries)
    cuts = np.linspace(0, queries, files + 1).astype(int)
    rows = 0
    for k, (q0, q1) in enumerate(zip(cuts[:-1], cuts[1:])):
        n = int(sizes[q0:q1].sum())
        y = rng.integers(0, 5, n).astype(np.float32)
        X = rng.standard_normal((n, features), dtype=np.float32)
        X[:, :10] += 0.3 * y[:, None]
        frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(features)], copy=False)
        frame["label"] = y
        frame["qid"] = np.repeat(np.arange(q0, q1, dtype=np.int64), sizes[q0:q1])
        frame.to_parquet(folder / f"part-{k:04d}.parquet", index=False)
        rows += n
        del frame, X
    out = {"config": manifest, "rows": rows}
    stamp.write_text(json.dumps(out) + "\n")
    return out


def _worker_peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _peaks(client) -> list[float]:
    return [round(v, 1) for v in client.run(_worker_peak_mb).values()]


def run_contender(name: str, folder: pathlib.Path, args) -> dict:
    """One contender on a fresh LocalCluster: seconds and worker peaks of each step."""
    import dask.dataframe as dd
    import distributed

    steps = {}
    with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=args.threads, processes=True,
                                  host="127.0.0.1", dashboard_address=None, memory_limit=0) as cluster, \
            distributed.Client(cluster) as client:
        client.run(lambda: __import__("gbrank.dask") and __import__("lightgbm"))  # imports outside the timings
        frame = dd.read_parquet(str(folder / "part-*.parquet"))
        features = [c for c in frame.columns if c.startswith("f")]
        t = time.perf_counter()
        frame = frame.persist()
        distributed.wait(frame)
        steps["load"] = {"seconds": round(time.perf_counter() - t, 2), "worker_peak_mb": _peaks(client)}
        X, y, qid = frame[features], frame["label"], frame["qid"]
        t = time.perf_counter()
        if name == "gbrank":
            from gbrank.dask import DaskGBRanker

            model = DaskGBRanker("ndcg", n_estimators=args.rounds, num_leaves=31, client=client).fit(X, y, qid=qid)
        else:
            import lightgbm as lgb

            group = qid.map_partitions(lambda q: q.value_counts(sort=False).sort_index(), meta=("qid", "int64"))
            Xa, ya = X.to_dask_array(lengths=True), y.to_dask_array(lengths=True)
            model = lgb.DaskLGBMRanker(objective="lambdarank", n_estimators=args.rounds, num_leaves=31,
                                       verbose=-1, client=client)
            model.fit(Xa, ya, group=group.to_dask_array(lengths=True))
        steps["fit"] = {"seconds": round(time.perf_counter() - t, 2), "worker_peak_mb": _peaks(client)}
        t = time.perf_counter()
        scores = model.predict(X if name == "gbrank" else X.to_dask_array(lengths=True))
        scores = scores.persist()
        distributed.wait(scores)
        steps["predict"] = {"seconds": round(time.perf_counter() - t, 2), "worker_peak_mb": _peaks(client)}
        if name == "gbrank":
            from gbrank.dask import evaluate

            t = time.perf_counter()
            result = evaluate(y.to_dask_array(lengths=True), scores, qid.to_dask_array(lengths=True),
                              ["ndcg@10", "err@10", "ap"], client=client)
            steps["evaluate"] = {"seconds": round(time.perf_counter() - t, 2), "worker_peak_mb": _peaks(client),
                                 "mean": {k: round(float(v), 4) for k, v in result.mean().items()}}
    return steps


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--queries", type=int, default=31500, help="lists of 60-180 documents (default: %(default)s)")
    ap.add_argument("--features", type=int, default=136, help="float32 features (default: %(default)s)")
    ap.add_argument("--files", type=int, default=16, help="Parquet files of whole queries (default: %(default)s)")
    ap.add_argument("--rounds", type=int, default=10, help="boosting rounds (default: %(default)s)")
    ap.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes (default: %(default)s)")
    ap.add_argument("--threads", type=int, default=1, help="threads per worker (default: %(default)s)")
    ap.add_argument("--contenders", nargs="+", default=["lightgbm", "gbrank"], choices=["lightgbm", "gbrank"],
                    help="what to run, each on a fresh cluster (default: %(default)s)")
    ap.add_argument("--data-dir", default=None,
                    help="where the Parquet files go (default: runs/dask-scale-<queries>)")
    ap.add_argument("--save", default=None, help="write the figures to this JSON file")
    args = ap.parse_args(argv)

    import dask
    import distributed
    import lightgbm

    import gbrank

    folder = pathlib.Path(args.data_dir or ROOT / "runs" / f"dask-scale-{args.queries}")
    t = time.perf_counter()
    manifest = make_parquet(folder, args.queries, args.features, args.files)
    print(f"data: {manifest['rows']} rows x {args.features} float32 features in {args.files} Parquet files "
          f"({folder}; {time.perf_counter() - t:.1f} s)", flush=True)
    results = {}
    for name in args.contenders:
        print(f"{name}: {args.workers} workers x {args.threads} threads ...", flush=True)
        results[name] = run_contender(name, folder, args)
        print(f"{name}: {json.dumps(results[name])}", flush=True)
    print("\n| contender | step | seconds | peak RSS per worker (MB) |\n|---|---|---:|---|")
    for name, steps in results.items():
        for step, v in steps.items():
            print(f"| {name} | {step} | {v['seconds']:.2f} | {', '.join(f'{m:,.0f}' for m in v['worker_peak_mb'])} |")
    if args.save:
        out = {"command": "python benchmarks/bench_dask_scale.py " + " ".join(argv if argv is not None else sys.argv[1:]),
               "data": manifest, "config": vars(args), "results": results,
               "versions": {"gbrank": gbrank.__version__, "lightgbm": lightgbm.__version__, "dask": dask.__version__,
                            "distributed": distributed.__version__, "python": platform.python_version()},
               "cores": os.cpu_count(), "load_average_at_end": list(os.getloadavg())}
        pathlib.Path(args.save).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(args.save).write_text(json.dumps(out, indent=2) + "\n")
        print(f"saved {args.save}")


if __name__ == "__main__":
    main()
