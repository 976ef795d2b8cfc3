"""Epoch time of gbrank's BPR and WARP against the `implicit` library's BPR, and per loss on CiteULike.

Part 1, MovieLens ml-latest-small (ratings >= 4 are the positives, every user, 32
factors): one epoch of ``implicit.cpu.bpr.BayesianPersonalizedRanking`` (one update per
training positive, the negative drawn uniformly) against one epoch of gbrank's BPR and WARP
on the same positives (every training positive once per epoch, NSR 1 negatives redrawn,
batches of 32 users, plain SGD), by

* ``numba``: the CPU engine ``gbrank.torch._sampled_sgd.sgd_epoch`` (negative sampling,
  batching and the SGD kernel: the whole epoch);
* ``numba kernel``: its SGD kernel alone on lists drawn beforehand;
* ``torch``: ``gbrank.torch._training.train_epoch``, the path of ``MFRanker`` today.

gbrank's ``bpr`` sums every (positive, negative) pair of a list; ``bpr drawn``
(``pairs="drawn"``) takes each drawn negative with one positive, implicit's amount of work
(one pair per positive at NSR 1).
implicit has no WARP: gbrank's WARP epoch is compared with implicit's BPR epoch.  The
contenders run interleaved (one epoch of each per repeat), with one thread and with all
threads (numba, torch and implicit set alike); the table gives the median seconds and the
ratio to implicit measured in the same process.  implicit's epoch is the time of
``fit(iterations=10) / 10`` on a fitted model (its per-call set-up spread over 10 epochs).

Part 2, CiteULike-a (the SIGIR'21 authors' split, ``fold_0/train.csv.gz``), NSR 1, 32
factors, batches of 32: seconds per epoch of ``MFRanker`` for every loss of the registry
(median of the epochs after the first), plus the numba engine's BPR and WARP epoch.

    GBRANK_DATA=../shared/data .venv/bin/python benchmarks/bench_mf_speed.py
    GBRANK_DATA=../shared/data .venv/bin/python benchmarks/bench_mf_speed.py --repeats 5 --skip-citeulike

Results with configuration and versions go to ``bench-output/mf_speed.json``.
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


def _movielens():
    from gbrank.datasets import load_movielens

    r = load_movielens()
    pos = r[r["rating"] >= 4]
    users = pos["user"].astype("category").cat.codes.to_numpy().astype(np.int64)
    items = pos["item"].astype("category").cat.codes.to_numpy().astype(np.int64)
    return users, items


def _set_threads(n: int) -> None:
    import numba
    import torch

    numba.set_num_threads(n)
    torch.set_num_threads(n)


def movielens(repeats: int, threads: list[int], seed: int) -> list[dict]:
    import scipy.sparse as sp
    import torch
    from implicit.cpu.bpr import BayesianPersonalizedRanking

    from gbrank.interactions import csr_from
    from gbrank.torch._batching import bucket_batches
    from gbrank.torch._losses import make_loss
    from gbrank.torch._mf import MatrixFactorization, _MFTask
    from gbrank.torch._sampled_sgd import epoch_arrays, sgd_epoch
    from gbrank.torch._training import train_epoch

    users, items = _movielens()
    n_users, n_items = int(users.max()) + 1, int(items.max()) + 1
    positives = csr_from(users, items, n_users)
    matrix = sp.csr_matrix((np.ones(len(users), np.float32), (users, items)), shape=(n_users, n_items))
    info = {"users": n_users, "items": n_items, "positives": len(users),
            "bpr_pair_terms_per_epoch": int((np.diff(positives[0]).astype(np.int64) ** 2).sum())}
    print(f"ml-latest-small: {n_users} users, {n_items} items, {len(users)} positives (rating >= 4); "
          f"gbrank's BPR sums {info['bpr_pair_terms_per_epoch']:,} (positive, negative) terms per epoch at NSR 1")
    rows = []
    for n_threads in threads:
        _set_threads(n_threads)
        rng = np.random.default_rng(seed)
        gen = torch.Generator().manual_seed(seed)
        task = _MFTask(positives, positives, n_items, 1, True, 32, np.arange(n_users), None)
        variants = {"bpr": ("bpr", {}), "bpr drawn": ("bpr", {"pairs": "drawn"}), "warp": ("warp", {})}
        models = {}
        for name in variants:
            m = MatrixFactorization(n_users, n_items, 32)
            m.reset_parameters(0.1, torch.Generator().manual_seed(seed))
            models[name] = m
        lists = task.lists(rng)
        batches = bucket_batches(task.users, np.diff(lists[0]), 32, rng)
        kernel_U = {k: m.user_factors.weight.detach().numpy().copy() for k, m in models.items()}
        kernel_V = {k: m.item_factors.weight.detach().numpy().copy() for k, m in models.items()}
        torch_models = {k: MatrixFactorization(n_users, n_items, 32) for k in models}
        for m in torch_models.values():
            m.reset_parameters(0.1, torch.Generator().manual_seed(seed))
        lr = {name: 0.05 for name in variants}  # small steps: timing, not accuracy

        imp = BayesianPersonalizedRanking(factors=32, iterations=1, num_threads=n_threads, random_state=seed)
        imp.fit(matrix, show_progress=False)

        def implicit_epoch():
            imp.iterations = 10
            start = time.perf_counter()
            imp.fit(matrix, show_progress=False)
            return (time.perf_counter() - start) / 10

        def timed(fn):
            start = time.perf_counter()
            fn()
            return time.perf_counter() - start

        contenders = {"implicit bpr": implicit_epoch}
        for name, (base, options) in variants.items():
            loss = make_loss(base, **options)
            contenders[f"gbrank {name} numba"] = (lambda loss=loss, name=name: timed(
                lambda: sgd_epoch(models[name], task, loss, lr[name], 0.0, gen, rng)))
            contenders[f"gbrank {name} numba kernel"] = (lambda name=name, base=base, options=options: timed(
                lambda: epoch_arrays(kernel_U[name], kernel_V[name], *lists, batches, base,
                                     learning_rate=lr[name], generator=gen, **options)))
            opt = torch.optim.SGD(torch_models[name].parameters(), lr=lr[name])
            contenders[f"gbrank {name} torch"] = (lambda loss=loss, opt=opt, name=name: timed(
                lambda: train_epoch(torch_models[name], task, loss, opt, torch.device("cpu"), gen, rng, 1 << 22)))
        for fn in contenders.values():  # warm-up: JIT compilation, first allocations
            fn()
        times = {k: [] for k in contenders}
        for _ in range(repeats):
            for k, fn in contenders.items():
                times[k].append(fn())
        ref = float(np.median(times["implicit bpr"]))
        print(f"\n{n_threads} thread(s): {'contender':<26}{'median s':>10}{'min s':>9}{'x implicit':>12}")
        for k, ts in times.items():
            med = float(np.median(ts))
            rows.append({"dataset": "ml-latest-small", "threads": n_threads, "contender": k, "epoch_s_median": med,
                         "epoch_s_min": float(np.min(ts)), "ratio_to_implicit": med / ref, "times": ts, **info})
            print(f"{'':14}{k:<26}{med:>10.4f}{np.min(ts):>9.4f}{med / ref:>12.1f}", flush=True)
    return rows


def citeulike(epochs: int, threads: int, seed: int) -> list[dict]:
    import pandas as pd
    import torch

    from gbrank.datasets import data_home
    from gbrank.interactions import csr_from
    from gbrank.torch import MFRanker
    from gbrank.torch._losses import LOSSES, make_loss
    from gbrank.torch._mf import MatrixFactorization, _MFTask
    from gbrank.torch._sampled_sgd import sgd_epoch

    _set_threads(threads)
    path = data_home() / "citeulike-a-paper-splits" / "fold_0" / "train.csv.gz"
    frame = pd.read_csv(path)
    X = frame[["user", "item"]].to_numpy()
    print(f"\nCiteULike-a paper split fold_0 train: {frame['user'].nunique()} users, {frame['item'].nunique()} items, "
          f"{len(frame)} positives; NSR 1, {epochs} epochs, {threads} thread(s)")
    print(f"{'loss':<22}{'engine':<8}{'epoch s':>10}{'min s':>9}")
    rows = []
    names = [n + ("@0.95" if LOSSES[n].needs_p else "") for n in sorted(LOSSES)]
    for name in names:
        model = MFRanker(loss=name, n_factors=32, nsr=1, epochs=epochs, batch_size=32, validation_size=0,
                         optimizer="sgd", device="cpu", random_state=seed)
        model.fit(X)
        sec = model.history_["seconds"].to_numpy()
        rows.append({"dataset": "citeulike-a fold_0", "loss": name, "engine": "torch", "threads": threads,
                     "epoch_s_median": float(np.median(sec[1:])), "epoch_s_min": float(sec.min())})
        print(f"{name:<22}{'torch':<8}{np.median(sec[1:]):>10.3f}{sec.min():>9.3f}", flush=True)
    users = frame["user"].astype("category").cat.codes.to_numpy().astype(np.int64)
    items = frame["item"].astype("category").cat.codes.to_numpy().astype(np.int64)
    n_users, n_items = int(users.max()) + 1, int(items.max()) + 1
    positives = csr_from(users, items, n_users)
    for name in ("bpr", "warp"):
        loss = make_loss(name)
        task = _MFTask(positives, positives, n_items, 1, True, 32, np.arange(n_users), None)
        m = MatrixFactorization(n_users, n_items, 32)
        m.reset_parameters(0.1, torch.Generator().manual_seed(seed))
        rng, gen = np.random.default_rng(seed), torch.Generator().manual_seed(seed)
        sec = []
        for _ in range(epochs):
            start = time.perf_counter()
            sgd_epoch(m, task, loss, loss.sgd_learning_rate, 0.0, gen, rng)
            sec.append(time.perf_counter() - start)
        sec = np.array(sec)
        rows.append({"dataset": "citeulike-a fold_0", "loss": name, "engine": "numba", "threads": threads,
                     "epoch_s_median": float(np.median(sec[1:])), "epoch_s_min": float(sec.min())})
        print(f"{name:<22}{'numba':<8}{np.median(sec[1:]):>10.3f}{sec.min():>9.3f}", flush=True)
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", default=f"1,{os.cpu_count()}", help="thread counts, comma-separated")
    parser.add_argument("--epochs", type=int, default=4, help="CiteULike epochs per loss")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-citeulike", action="store_true")
    parser.add_argument("--out", default="bench-output/mf_speed.json")
    args = parser.parse_args(argv)
    threads = sorted({int(x) for x in args.threads.split(",")})
    rows = movielens(args.repeats, threads, args.seed)
    if not args.skip_citeulike:
        rows += citeulike(args.epochs, max(threads), args.seed)
    import implicit
    import numba
    import torch

    meta = {"python": platform.python_version(), "torch": torch.__version__, "numba": numba.__version__,
            "implicit": implicit.__version__, "numpy": np.__version__, "machine": platform.machine(),
            "cpu_count": os.cpu_count(), "load_average": os.getloadavg(),
            "command": " ".join([pathlib.Path(sys.executable).name] + sys.argv), "config": vars(args)}
    path = pathlib.Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    print(f"\nload average {os.getloadavg()}; written to {path}")


if __name__ == "__main__":
    main()
