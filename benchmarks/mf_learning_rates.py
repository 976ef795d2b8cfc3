"""Search of the default optimiser and learning rate of every torch recommender loss.

For each dataset, loss, optimiser and learning rate, one ``MFRanker`` (32 factors, NSR 1,
a fixed epoch budget with early stopping on the validation metric) is trained and
evaluated; results are cached in a JSON file (one entry per configuration), so an
interrupted run resumes where it stopped.  ``--report`` applies the selection rule and
writes the Markdown table.

Data
----
* ``citeulike``: the SIGIR'21 authors' CiteULike-a split, fold 0, ``train.csv.gz`` only
  (user_id, item_id; every pair a positive);
* ``movielens``: MovieLens latest-small through ``gbrank.datasets.load_movielens``;
  ratings >= 4 are positives, users with >= 25 positives are kept.

Either is optionally cut to ``--users`` random users (seed 0).  Per user, 10 % of the
positives are held out (``split_interactions(test_size=0.1)``): the held-out positives with
as many sampled negatives are the validation lists that pick the epoch (the loss's own
metric, sampled protocol), and the same held-out positives, ranked against the whole
catalogue minus the user's training items, give the reported full-catalogue AUC and
nDCG@10.  Popularity (training positives per item) and the untrained model (the factors
at initialisation) are evaluated the same way.

Selection rule (``--report``, :func:`choose`): per loss, the runs of its largest epoch budget;
among the non-diverging configurations (spec, optimizer, learning_rate) run on every dataset
of that budget, those above popularity on both full-catalogue metrics on every dataset
first, then the best mean full-catalogue nDCG@10 over the datasets; among the runs within
``NOISE`` of the best, Adam is preferred (its steps do not
scale with the loss: SGD's right rate for the unnormalised lambda losses grows and shrinks
with the number of pairs per list, and lambda_ndcg's SGD rate 10, as good as Adam on
MovieLens, diverges on CiteULike-a), and among those the largest mean AUC.

Losses are named by specs: a loss name, optionally with ``/``-separated settings, ``ppl=N``
or ``ppl=none`` for ``positives_per_list`` and any other ``name=value`` as a loss option
(``listwise_rr/ppl=1``, ``kos_auc/k=3``; :func:`parse_spec`).  A plain name means the
estimator's defaults at the time of the run, so the runs of a setting that later changed
carry it explicitly in their key (e.g. ``kos_auc/k=5``, ``listwise_rr/ppl=none``).
Several searches may share one results file (it is merged under a lock).

Usage::

    # the first round: 20 epochs, the grid of each loss
    GBRANK_DATA=/work/shared/data nice -n 10 .venv/bin/python benchmarks/mf_learning_rates.py \
        --datasets movielens --epochs 20 > /tmp/lr.log 2>&1 &
    # the second round, to convergence: chosen specs and rates
    GBRANK_DATA=/work/shared/data nice -n 10 .venv/bin/python benchmarks/mf_learning_rates.py \
        --datasets movielens citeulike --epochs 100 --early-stopping 10 --losses kos_warp/k=3 \
        --optimizers adam --rates 0.01
    # every loss at its current defaults (one configuration each), e.g. on CiteULike-a
    GBRANK_DATA=/work/shared/data .venv/bin/python benchmarks/mf_learning_rates.py --datasets citeulike \
        --defaults --epochs 100 --early-stopping 10 --results docs/results/mf_defaults_citeulike.json
    .venv/bin/python benchmarks/mf_learning_rates.py --report
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results" / "mf_learning_rates.json"
REPORT = ROOT / "docs" / "results" / "mf_learning_rates.md"

LOSSES = ("listwise_ndcg", "listwise_ap", "listwise_rr", "listwise_nrbp", "listwise_nrbp+minmax",
          "lambda_ndcg", "lambda_ap", "lambda_rr", "lambda_nrbp@0.95", "lambda_err",
          "kos_auc", "kos_warp", "warp", "bpr")
#: The searched rates: per family, SGD over the SIGIR'21 authors' range (their result tables:
#: listwise 0.001-10, lambda 0.001-0.01) extended upwards where gbrank's losses need it
#: (they are means of per-list losses, so their SGD rates sit above the paper's), and Adam at
#: 0.001, 0.01 and 0.1.  The cache keeps what is done; widen a family by adding rates.
ADAM = (0.001, 0.01, 0.1)
RATES = {
    "listwise": {"sgd": (1.0, 10.0, 100.0, 1000.0), "adam": ADAM},
    "listwise_nrbp": {"sgd": (0.01, 0.1, 1.0), "adam": ADAM},  # not normalised per list
    "lambda": {"sgd": (0.01, 0.1, 1.0, 10.0), "adam": ADAM},
    "sampled": {"sgd": (1.0, 10.0, 100.0), "adam": ADAM},
    "bpr": {"sgd": (10.0, 100.0, 1000.0), "adam": ADAM},
    "kos_auc": {"sgd": (10.0, 100.0, 1000.0), "adam": ADAM},
}


def rates_for(loss: str, optimizer: str) -> tuple:
    """The searched learning rates of a loss and optimiser."""
    if loss in RATES:
        return RATES[loss][optimizer]
    kind = loss.split("_")[0] if loss.startswith(("listwise_", "lambda_")) else "sampled"
    return RATES[kind][optimizer]


#: two runs closer than this in full-catalogue nDCG@10 count as a tie (an assumed noise level, not measured)
NOISE = 0.005
METRICS = ("auc", "ndcg@10")


def load(dataset: str, n_users: int | None, seed: int = 0):
    """(X, y, relevance_threshold, min_positives) of a dataset, cut to ``n_users`` random users."""
    import pandas as pd

    data = pathlib.Path(os.environ.get("GBRANK_DATA", ROOT.parent / "shared" / "data"))
    if dataset == "citeulike":
        path = data / "citeulike-a-paper-splits" / "fold_0" / "train.csv.gz"
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing; set GBRANK_DATA to the shared data folder")
        frame = pd.read_csv(path, usecols=["user_id", "item_id"])
        X, y, threshold, min_pos = frame.to_numpy(), np.ones(len(frame)), 1.0, 1
    elif dataset == "movielens":
        from gbrank.datasets import load_movielens

        frame = load_movielens(data / "movielens-latest-small")
        X, y, threshold, min_pos = frame[["user", "item"]].to_numpy(), frame["rating"].to_numpy(), 4.0, 25
    else:
        raise ValueError(f"unknown dataset {dataset!r}; known: citeulike, movielens")
    if n_users is not None:
        users = np.unique(X[:, 0])
        # among the users the protocol keeps, so that n_users users remain
        pos = pd.Series(y >= threshold).groupby(X[:, 0]).sum()
        eligible = pos.index[pos.to_numpy() >= min_pos].to_numpy()
        users = np.random.default_rng(seed).choice(eligible, size=min(n_users, len(eligible)), replace=False)
        keep = np.isin(X[:, 0], users)
        X, y = X[keep], y[keep]
    return X, y, threshold, min_pos


def make_split(dataset: str, n_users: int | None, seed: int = 0):
    from gbrank.interactions import split_interactions

    X, y, threshold, min_pos = load(dataset, n_users, seed)
    return split_interactions(X, y, test_size=0.1, relevance_threshold=threshold, min_positives=min_pos, nsr=1,
                              random_state=seed)


def full_metrics(model, split) -> dict:
    """Full-catalogue AUC and nDCG@10 of the split's held-out positives."""
    from gbrank.torch import evaluate_recommender

    res = evaluate_recommender(model, split, protocol="full", metrics=METRICS)
    return {k: float(v) for k, v in res.mean().items()}


def baselines(split, seed: int = 0) -> dict:
    """Popularity and the untrained model (factors at initialisation), full catalogue."""
    import torch

    from gbrank.torch import MFRanker

    model = MFRanker(loss="bpr", epochs=1, optimizer="sgd", learning_rate=1e-12, validation_size=0,
                     random_state=seed, device="cpu")
    model.fit(split.X_train, split.y_train, items=split.items)
    out = {"untrained": full_metrics(model, split)}
    counts = np.zeros(model.n_items_)
    pos = split.y_train >= split.settings["relevance_threshold"]
    codes = np.searchsorted(model.items_, split.X_train[pos, 1])
    np.add.at(counts, codes, 1.0)
    popular = copy.copy(model)
    popular.module_ = copy.deepcopy(model.module_)
    with torch.no_grad():  # s(u, i) = count_i: a one-factor model with U = 1, V = counts
        popular.module_.user_factors.weight.zero_()[:, 0] = 1.0
        popular.module_.item_factors.weight.zero_()[:, 0] = torch.as_tensor(counts, dtype=torch.float32)
    out["popularity"] = full_metrics(popular, split)
    return out


def parse_spec(spec: str) -> tuple[str, dict]:
    """(loss name, MFRanker keyword arguments) of a searched loss spec: a loss name, optionally
    with ``/``-separated settings: ``ppl=N`` or ``ppl=none`` (``positives_per_list``; without
    it the estimator's "auto"), anything else a loss option (``k=2``: ``loss_params``).
    E.g. ``listwise_rr/ppl=1``, ``kos_auc/k=3``."""
    loss, *settings = spec.split("/")
    kwargs: dict = {}
    params: dict = {}
    for item in settings:
        name, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"loss spec {spec!r}: setting {item!r} is not name=value")
        if name == "ppl":
            kwargs["positives_per_list"] = None if value == "none" else int(value)
        else:
            params[name] = int(value) if value.lstrip("-").isdigit() else float(value)
    if params:
        kwargs["loss_params"] = params
    return loss, kwargs


def run_one(split, loss: str, optimizer: str, lr: float | None, epochs: int, early_stopping: int | None,
            seed: int = 0) -> dict:
    """Train one configuration (``loss``: a spec, :func:`parse_spec`); returns its record
    (curves, divergence, full-catalogue metrics)."""
    from gbrank.torch import MFRanker

    name, kwargs = parse_spec(loss)
    model = MFRanker(loss=name, n_factors=32, nsr=1, optimizer=optimizer, learning_rate=lr, epochs=epochs,
                     early_stopping=early_stopping, validation_size=0, random_state=seed, device="cpu", **kwargs)
    start = time.perf_counter()
    try:
        model.fit(split.X_train, split.y_train, items=split.items, eval_set=(split.X_test, split.y_test))
    except FloatingPointError as err:
        return {"diverged": True, "error": str(err), "seconds": time.perf_counter() - start}
    h = model.history_
    record = {"diverged": False, "seconds": time.perf_counter() - start, "epochs_run": int(len(h)),
              "best_epoch": model.best_epoch_, "eval_metric": model.eval_metric_,
              "best_score": model.best_score_, "curve": [round(float(v), 5) for v in h[model.eval_metric_]],
              "loss_curve": [float(f"{v:.6g}") for v in h["loss"]],
              "optimizer": optimizer,
              "learning_rate": lr}
    record.update(full_metrics(model, split))
    return record


def _key(dataset, users, epochs, loss, optimizer, lr) -> str:
    return f"{dataset}|users={users}|epochs={epochs}|{loss}|{optimizer}|{lr:g}"


def _save(results: dict, path: pathlib.Path) -> None:
    """Merge ``results`` into the file (under a lock: several searches may share one file)."""
    import fcntl

    from gbrank.bench._store import write_atomic

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        merged = json.loads(path.read_text()) if path.exists() else {}
        merged.update(results)
        results.update(merged)
        text = json.dumps(merged, indent=1, sort_keys=True).encode()
        write_atomic(path, lambda f: f.write(text))


def default_config(spec: str) -> tuple[str, float]:
    """(optimizer, learning rate) that ``MFRanker`` trains ``spec`` with when given neither:
    the loss's registry defaults (its settings do not change them)."""
    from gbrank.torch import make_loss

    loss = make_loss(parse_spec(spec)[0], training_defaults=True)
    return loss.optimizer, loss.default_learning_rate(loss.optimizer)


def search(datasets, losses, optimizers, n_users, epochs, early_stopping, path, rates=None,
           defaults=False) -> dict:
    import torch

    torch.set_num_threads(1)
    results = json.loads(path.read_text()) if path.exists() else {}
    for dataset in datasets:
        split = make_split(dataset, n_users)
        base_key = f"{dataset}|users={n_users}|baselines"
        if base_key not in results:
            results[base_key] = baselines(split)
            _save(results, path)
        print(dataset, results[base_key], flush=True)
        for loss in losses:
            if defaults:  # the one configuration the estimator takes without optimizer or rate
                optimizer, lr = default_config(loss)
                configs = [(optimizer, lr)]
            else:
                configs = [(optimizer, lr) for optimizer in optimizers
                           for lr in (rates or rates_for(parse_spec(loss)[0], optimizer))]
            for optimizer, lr in configs:
                key = _key(dataset, n_users, epochs, loss, optimizer, lr)
                if key in results:
                    continue
                rec = run_one(split, loss, optimizer, lr, epochs, early_stopping)
                results[key] = rec
                _save(results, path)
                show = "DIVERGED" if rec["diverged"] else (
                    f"auc {rec['auc']:.4f} ndcg@10 {rec['ndcg@10']:.4f} {rec['eval_metric']} "
                    f"{rec['best_score']:.4f} @ {rec['best_epoch']}/{rec['epochs_run']}")
                print(f"{key}: {show} ({rec['seconds']:.1f} s)", flush=True)
    return results


def _beats_popularity(rec: dict, base: dict | None) -> bool:
    pop = (base or {}).get("popularity")
    return pop is not None and rec["auc"] > pop["auc"] and rec["ndcg@10"] > pop["ndcg@10"]


def choose(results: dict) -> dict:
    """Per loss, the chosen (spec, optimizer, learning_rate) and the evidence (module notes).

    A loss's runs are those of its largest epoch budget (the runs to convergence supersede
    the 20-epoch search where they exist); among its configurations (spec, optimizer, rate)
    run on every cell of that budget without diverging, those that beat popularity on both
    full-catalogue metrics in every cell are preferred when there are any; then the best
    mean nDCG@10, Adam within ``NOISE`` of it, the largest mean AUC."""
    runs: dict = {}
    for key, rec in results.items():
        parts = key.split("|")
        if len(parts) != 6:
            continue
        dataset, users, epochs, spec, optimizer, lr = parts
        budget = int(epochs.partition("=")[2])
        runs.setdefault(parse_spec(spec)[0], {}).setdefault(budget, {}).setdefault(
            (spec, optimizer, float(lr)), {})[f"{dataset}|{users}"] = rec
    chosen = {}
    for loss, budgets in runs.items():
        epochs = max(budgets)
        configs = budgets[epochs]
        cells = set().union(*(set(c) for c in configs.values()))
        rows = []
        for (spec, optimizer, lr), by_cell in configs.items():
            if set(by_cell) != cells or any(r["diverged"] for r in by_cell.values()):
                continue
            above = all(_beats_popularity(r, results.get(f"{cell}|baselines")) for cell, r in by_cell.items())
            rows.append((float(np.mean([r["ndcg@10"] for r in by_cell.values()])),
                         float(np.mean([r["auc"] for r in by_cell.values()])), optimizer, lr, spec, above))
        if not rows:
            continue
        pool = [r for r in rows if r[5]] or rows
        best = max(r[0] for r in pool)
        near = [r for r in pool if r[0] >= best - NOISE]
        adam = [r for r in near if r[2] == "adam"]
        pick = max(adam or near, key=lambda r: (r[1], r[0]))
        chosen[loss] = {"spec": pick[4], "optimizer": pick[2], "learning_rate": pick[3], "ndcg@10": pick[0],
                        "auc": pick[1], "above_popularity": pick[5], "best_ndcg@10": max(r[0] for r in rows),
                        "epochs": epochs, "cells": sorted(cells)}
    return chosen


def report(results: dict, path: pathlib.Path, source: str = "mf_learning_rates.json") -> str:
    chosen = choose(results)
    lines = ["# Default optimiser and learning rate per loss (MFRanker)", "",
             f"Written by `benchmarks/mf_learning_rates.py --report` from `{source}`.", "",
             "Rule: per loss, the runs of its largest epoch budget (to convergence: up to 100 epochs, patience 10, "
             "where run; else the 20-epoch search); among the non-diverging configurations, those above "
             "popularity on both full-catalogue metrics first, then the best mean full-catalogue nDCG@10 over the "
             f"datasets; Adam is preferred when within {NOISE} of the best; ties broken by AUC.", ""]
    for key, rec in sorted(results.items()):
        if key.endswith("|baselines"):
            lines.append(f"- baselines `{key}`: " + "; ".join(
                f"{name} AUC {m['auc']:.4f}, nDCG@10 {m['ndcg@10']:.4f}" for name, m in rec.items()))
    lines += ["", "| loss | chosen spec | optimizer | learning rate | epochs (budget) | mean nDCG@10 | mean AUC | "
              "above popularity | best nDCG@10 of any run |", "|---|---|---|---|---|---|---|---|---|"]
    for loss, c in sorted(chosen.items()):
        lines.append(f"| `{loss}` | `{c['spec']}` | {c['optimizer']} | {c['learning_rate']:g} | {c['epochs']} | "
                     f"{c['ndcg@10']:.4f} | {c['auc']:.4f} | {'yes' if c['above_popularity'] else '**no**'} | "
                     f"{c['best_ndcg@10']:.4f} |")
    lines += ["", "## Every run", "", "| run | diverged | epochs run (best) | val metric | AUC | nDCG@10 | s |",
              "|---|---|---|---|---|---|---|"]
    for key, rec in sorted(results.items()):
        if key.endswith("|baselines"):
            continue
        if rec["diverged"]:
            lines.append(f"| `{key}` | yes | | | | | {rec['seconds']:.1f} |")
        else:
            lines.append(f"| `{key}` | no | {rec['epochs_run']} ({rec['best_epoch']}) | {rec['eval_metric']} "
                         f"{rec['best_score']:.4f} | {rec['auc']:.4f} | {rec['ndcg@10']:.4f} | {rec['seconds']:.1f} |")
    text = "\n".join(lines) + "\n"
    path.write_text(text)
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", default=["movielens"], choices=["movielens", "citeulike"])
    ap.add_argument("--losses", nargs="+", default=list(LOSSES))
    ap.add_argument("--optimizers", nargs="+", default=["sgd", "adam"], choices=["sgd", "adam"])
    ap.add_argument("--rates", nargs="+", type=float, default=None, help="override the grid")
    ap.add_argument("--defaults", action="store_true",
                    help="run each loss at the optimiser and rate MFRanker takes by default (no grid)")
    ap.add_argument("--users", type=int, default=None, help="random users kept (default: all)")
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--early-stopping", type=int, default=4)
    ap.add_argument("--results", type=pathlib.Path, default=RESULTS)
    ap.add_argument("--report", action="store_true", help="only write the report from the cached results")
    args = ap.parse_args(argv)
    if not args.report:
        search(args.datasets, args.losses, args.optimizers, args.users, args.epochs, args.early_stopping,
               args.results, args.rates, args.defaults)
    results = json.loads(args.results.read_text())
    print(report(results, REPORT if args.results == RESULTS else args.results.with_suffix(".md"), args.results.name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
