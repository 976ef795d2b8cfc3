"""Seconds per training epoch of gbrank.torch's MFRanker on CiteULike-a, for every loss.

The paper's setting (Li et al. SIGIR 2021, Sec. 4): users with at least 25 items, an 80/20
split per user, 32 factors, NSR negatives per positive; one epoch = every user's list once
(negatives redrawn, batched 32 users at a time, forward, backward, optimiser step).  Each
(loss, NSR) runs in a fresh process so that its peak resident memory
(``resource.getrusage``) is its own; the time of an epoch is the median over the epochs
after the first (the first includes one-off warm-up).  The measured processes run with
``OMP_WAIT_POLICY=PASSIVE`` by default: on a CPU shared with other jobs, OpenMP threads
that spin at every barrier wait for a descheduled partner and an epoch can take 30x longer.

    GBRANK_DATA=../shared/data .venv/bin/python benchmarks/bench_torch_epoch.py
    GBRANK_DATA=../shared/data .venv/bin/python benchmarks/bench_torch_epoch.py --nsr 1 --losses lambda_ndcg

Results are written with the configuration and versions to ``bench-output/torch_epoch.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import resource
import subprocess
import sys
import time

LOSSES = ["listwise_ndcg", "listwise_ap", "listwise_rr", "listwise_nrbp", "lambda_ndcg", "lambda_ap", "lambda_rr",
          "lambda_err", "lambda_nrbp@0.95", "kos_warp", "kos_auc", "warp", "bpr"]


def one(loss: str, nsr: int, epochs: int, threads: int, device: str, seed: int, optimizer: str = "sgd",
        learning_rate: float | None = None) -> dict:
    """Train one model in this process and measure it."""
    import numpy as np
    import torch

    from gbrank.datasets import load_citeulike
    from gbrank.torch import MFRanker, split_interactions

    torch.set_num_threads(threads)
    likes = load_citeulike()
    split = split_interactions(likes[["user", "item"]].to_numpy(), likes["rating"].to_numpy(), relevance_threshold=1,
                               min_positives=25, test_size=0.2, nsr=nsr, random_state=seed)
    model = MFRanker(loss=loss, n_factors=32, nsr=nsr, epochs=epochs, batch_size=32, validation_size=0,
                     optimizer=optimizer, learning_rate=learning_rate, device=device, random_state=seed, verbose=0)
    start = time.perf_counter()
    model.fit(split.X_train, split.y_train, items=split.items)
    total = time.perf_counter() - start
    seconds = model.history_["seconds"].to_numpy()
    return {
        "loss": loss, "nsr": nsr, "epochs": epochs,
        "epoch_s_median": float(np.median(seconds[1:] if len(seconds) > 1 else seconds)),
        "epoch_s_min": float(seconds.min()), "epoch_s_first": float(seconds[0]),
        "fit_s": total, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "users": split.settings["n_users"], "train_positives": split.settings["n_train_positives"],
        "items": len(split.items), "device": model.device_, "threads": torch.get_num_threads(),
        "optimizer": model.optimizer, "learning_rate": model.learning_rate,
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--losses", default=",".join(LOSSES))
    parser.add_argument("--nsr", default="1,2,5")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--optimizer", default="sgd", choices=("sgd", "adam"))
    parser.add_argument("--learning-rate", type=float, default=None,
                        help="default: the loss's default rate for the optimizer (a diverging rate stops the run)")
    parser.add_argument("--omp-wait-policy", default="PASSIVE",
                        help="OMP_WAIT_POLICY of the measured processes ('' keeps the environment's): spinning "
                             "OpenMP threads collapse when other processes share the cores")
    parser.add_argument("--out", default="bench-output/torch_epoch.json")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.losses, int(args.nsr), args.epochs, args.threads, args.device, args.seed,
                             args.optimizer, args.learning_rate)))
        return
    rows = []
    print(f"{'loss':<18}{'NSR':>4}{'epoch s':>10}{'min s':>8}{'peak RSS MB':>13}")
    for nsr in [int(x) for x in args.nsr.split(",")]:
        for loss in args.losses.split(","):
            cmd = [sys.executable, __file__, "--one", "--losses", loss, "--nsr", str(nsr), "--epochs", str(args.epochs),
                   "--threads", str(args.threads), "--device", args.device, "--seed", str(args.seed),
                   "--optimizer", args.optimizer]
            if args.learning_rate is not None:
                cmd += ["--learning-rate", str(args.learning_rate)]
            env = dict(os.environ)
            if args.omp_wait_policy:
                env["OMP_WAIT_POLICY"] = args.omp_wait_policy
            out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
            row = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append(row)
            print(f"{loss:<18}{nsr:>4}{row['epoch_s_median']:>10.3f}{row['epoch_s_min']:>8.3f}{row['peak_rss_mb']:>13.0f}",
                  flush=True)
    import numpy
    import torch

    meta = {"python": platform.python_version(), "torch": torch.__version__, "numpy": numpy.__version__,
            "machine": platform.machine(), "cpu_count": os.cpu_count(), "load_average": os.getloadavg(),
            "command": " ".join([pathlib.Path(sys.executable).name] + sys.argv), "config": vars(args)}
    path = pathlib.Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    print(f"\nusers {rows[0]['users']}, training positives {rows[0]['train_positives']}, items {rows[0]['items']}; "
          f"torch {torch.__version__}, {args.threads} thread(s), {args.device}; load average {os.getloadavg()}")
    print(f"written to {path}")


if __name__ == "__main__":
    main()
