"""Seconds per epoch of MFRanker on MovieLens with DistributedDataParallel over 1, 2 and 4 local processes.

The setting of the MovieLens benchmark (ratings >= 4 are positives, users with at least 25
of them, an 80/20 split per user, 32 factors, NSR 1, 32 users per step, SGD at the loss'
default rate, no validation).  Each process runs one torch thread.  Rows:

* ``1 process``: ``MFRanker(...).fit`` in this process (the reference model);
* ``DDP xN``: ``fit_distributed(..., nprocs=N)``, N gloo processes on the loopback
  interface, each computing 1/N of the lists of every step.

The epoch time is the median over the epochs after the first (``history_["seconds"]``,
measured on rank 0, all-reduces included); ``max |dw|`` is the largest difference of a
parameter from the one-process model, ``ndcg`` the sampled test nDCG.  On a machine with
C free cores, N processes can at best divide the forward/backward part by min(N, C); every
rank still draws the negatives and pads the batches of all users (so that all ranks see
the same global batches), and every step all-reduces the whole user and item tables.

    GBRANK_DATA=../shared/data .venv/bin/python benchmarks/bench_torch_ddp.py
    GBRANK_DATA=../shared/data .venv/bin/python benchmarks/bench_torch_ddp.py --nprocs 1,2 --epochs 3

Results are written with the configuration and versions to ``bench-output/torch_ddp.json``.
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


def _flat(module):
    import torch

    return torch.cat([p.detach().reshape(-1) for p in module.parameters()])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nprocs", default="1,2,4", help="process counts of the DDP runs")
    parser.add_argument("--loss", default="lambda_ndcg")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="bench-output/torch_ddp.json")
    args = parser.parse_args(argv)

    import torch

    from gbrank.datasets import load_movielens
    from gbrank.torch import MFRanker, evaluate_recommender, fit_distributed, split_interactions

    torch.set_num_threads(1)
    ratings = load_movielens()
    split = split_interactions(ratings[["user", "item"]].to_numpy(), ratings["rating"].to_numpy(),
                               relevance_threshold=4, min_positives=25, test_size=0.2, nsr=1, random_state=args.seed)
    params = dict(loss=args.loss, n_factors=32, nsr=1, optimizer="sgd", epochs=args.epochs, batch_size=32,
                  validation_size=0, relevance_threshold=4, device="cpu", random_state=args.seed, verbose=0)
    fit_args, fit_kwargs = (split.X_train, split.y_train), {"items": split.items}

    def measure(name, fit):
        start = time.perf_counter()
        model = fit()
        seconds = model.history_["seconds"].to_numpy()
        return model, {"run": name, "fit_s": time.perf_counter() - start,
                       "epoch_s_median": float(np.median(seconds[1:] if len(seconds) > 1 else seconds)),
                       "epoch_s_first": float(seconds[0]),
                       "ndcg": float(evaluate_recommender(model, split, metrics=["ndcg"]).mean()["ndcg"])}

    reference, row = measure("1 process", lambda: MFRanker(**params).fit(*fit_args, **fit_kwargs))
    row["max_abs_dw"] = 0.0
    rows = [row]
    print(f"{'run':<12}{'epoch s':>9}{'first s':>9}{'fit s':>8}{'max |dw|':>11}{'ndcg':>9}")

    def show(r):
        print(f"{r['run']:<12}{r['epoch_s_median']:>9.2f}{r['epoch_s_first']:>9.2f}{r['fit_s']:>8.1f}"
              f"{r['max_abs_dw']:>11.2e}{r['ndcg']:>9.4f}", flush=True)

    show(row)
    for n in [int(v) for v in args.nprocs.split(",")]:
        model, row = measure(f"DDP x{n}", lambda: fit_distributed(MFRanker(**params), *fit_args, nprocs=n,
                                                                  timeout=3600, **fit_kwargs))
        row["max_abs_dw"] = float((_flat(model.module_) - _flat(reference.module_)).abs().max())
        rows.append(row)
        show(row)
    out = {
        "benchmark": "torch_ddp", "rows": rows, "params": params, "nprocs": args.nprocs,
        "data": {"users": split.settings["n_users"], "train_positives": split.settings["n_train_positives"],
                 "items": len(split.items)},
        "max_abs_weight": float(_flat(reference.module_).abs().max()),
        "versions": {"python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__},
        "machine": {"cpus": os.cpu_count(), "load_average_1m_at_end": os.getloadavg()[0],
                    "platform": platform.platform()},
        "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
    }
    path = pathlib.Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2))
    print(f"written to {path}")


if __name__ == "__main__":
    main()
