"""gbrank objectives on a Dask cluster (gbrank.dask.DaskGBRanker), here a local one.

The job: the ranking data outgrows one machine.  DaskGBRanker takes GBRanker's settings
and trains through LightGBM's (or XGBoost's) own distributed training; it first moves rows
so that every query is whole in one partition, because the gradient callback on each
worker only sees that worker's rows.  This starts a LocalCluster of 2 worker processes,
cuts the data into blocks that split queries, trains, and checks the distributed model
against GBRanker on one machine.

    python examples/dask_ranker.py            # 100 rounds, 600 queries
    python examples/dask_ranker.py --quick    # 10 rounds, 150 queries

Look at: how many rows were moved to make queries whole, and the test means of the
distributed and the local model (close, not identical: LightGBM's distributed histograms
differ from one machine's).
"""

from __future__ import annotations

import pathlib

import dask.array as da
from distributed import Client, LocalCluster

import gbrank
from gbrank.dask import DaskGBRanker
from gbrank.datasets import make_letor

from _gallery import GALLERY, run

FIGURES: list[str] = []  # draws nothing
METRICS = ["ndcg@10", "nrbp@0.95"]


def main(quick: bool = False, out: pathlib.Path = GALLERY) -> None:
    X, y, qid = make_letor(n_queries=150 if quick else 600, n_features=12, random_state=0)
    test = qid >= (100 if quick else 450)
    settings = dict(objective="nrbp@0.95", backend="lightgbm", n_estimators=10 if quick else 100, random_state=0)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster) as client:
        chunks = 700  # row blocks that cut through queries
        dX, dy, dq = (da.from_array(a[~test], chunks=chunks if a.ndim == 1 else (chunks, a.shape[1]))
                      for a in (X, y, qid))
        model = DaskGBRanker(**settings, client=client, timeout=300).fit(dX, dy, qid=dq)
        scores = model.predict(da.from_array(X[test], chunks=(500, X.shape[1]))).compute()
        print(f"{model.n_workers_} workers; {model.moved_rows_} of {int((~test).sum())} training rows moved "
              f"to make queries whole; {model.n_partitions_} partitions")
    local = gbrank.GBRanker(**settings).fit(X[~test], y[~test], qid=qid[~test])
    for name, s in (("dask (2 workers)", scores), ("one machine", local.predict(X[test]))):
        mean = gbrank.evaluate(y[test], s, qid[test], METRICS).mean()
        print(f"{name:17s}" + "  ".join(f"{m} {mean[m]:.4f}" for m in METRICS))


if __name__ == "__main__":
    run(main, __doc__)
