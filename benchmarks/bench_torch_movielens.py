"""MovieLens ml-latest-small with the thesis protocol, beside thesis Table 5.1 (no bounding).

Protocol (Westerborg 2022, Sec. 4; Li et al. 2021, Sec. 4.2): ratings >= 4 are relevant;
users with at least 25 relevant ratings; per user, 20 % of the relevant ratings held out
for test; test lists = held-out positives + NSR x as many sampled unrated items; matrix
factorisation with 32 factors, batches of 32 users, Adam; each loss evaluated with the
metric it optimises (listwise nDCG -> nDCG, listwise AP -> AP, listwise nRBP -> nRBP(0.95)).

Two choices of the epoch are reported: gbrank's (best epoch on a validation split of 10 %
of each user's training positives, then the test lists) and the paper's (best epoch on the
test lists themselves, which is optimistic).  Means over ``--splits`` random splits.

    GBRANK_DATA=../shared/data .venv/bin/python benchmarks/bench_torch_movielens.py

Results are written with the configuration and versions to ``bench-output/torch_movielens.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import sys
import time

THESIS_NSR = {1: {"listwise_ndcg": 0.9659, "listwise_ap": 0.8960, "listwise_nrbp": 0.9349},
              2: {"listwise_ndcg": 0.9466, "listwise_ap": 0.8448, "listwise_nrbp": 0.9046},
              3: {"listwise_ndcg": 0.9294, "listwise_ap": 0.8051, "listwise_nrbp": 0.8749}}
METRIC = {"listwise_ndcg": "ndcg", "listwise_ap": "ap", "listwise_nrbp": "nrbp@0.95"}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nsr", type=int, default=1)
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--losses", default="listwise_ndcg,listwise_ap,listwise_nrbp")
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--learning-rate", type=float, default=0.01)
    parser.add_argument("--early-stopping", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--no-paper-selection", action="store_true", help="skip the epoch chosen on the test lists")
    parser.add_argument("--negatives", choices=["unrated", "non_relevant"], default="unrated",
                        help="draw negatives from the items a user never rated (gbrank's default), or from all "
                             "its non-relevant items, ratings below 4 included (drops those ratings first)")
    parser.add_argument("--out", default="bench-output/torch_movielens.json")
    args = parser.parse_args(argv)

    import numpy as np
    import torch

    from gbrank.datasets import load_movielens
    from gbrank.torch import MFRanker, evaluate_recommender, split_interactions

    torch.set_num_threads(args.threads)
    ratings = load_movielens()
    if args.negatives == "non_relevant":  # a rating below 4 is then no interaction: it may be drawn as a negative
        ratings = ratings[ratings["rating"] >= 4]
    X, y = ratings[["user", "item"]].to_numpy(), ratings["rating"].to_numpy()
    rows = []
    start = time.perf_counter()
    for split_seed in range(args.splits):
        split = split_interactions(X, y, relevance_threshold=4, min_positives=25, test_size=0.2, nsr=args.nsr,
                                   random_state=split_seed)
        for loss in args.losses.split(","):
            metric = METRIC[loss]
            common = dict(loss=loss, n_factors=32, nsr=args.nsr, optimizer="adam", learning_rate=args.learning_rate,
                          epochs=args.epochs, batch_size=32, eval_metric=metric, relevance_threshold=4,
                          early_stopping=args.early_stopping, random_state=split_seed, verbose=0)
            t0 = time.perf_counter()
            model = MFRanker(validation_size=0.1, **common).fit(split.X_train, split.y_train, items=split.items)
            sampled = evaluate_recommender(model, split, metrics=[metric]).mean()[metric]
            full = evaluate_recommender(model, split, protocol="full", metrics=[metric]).mean()[metric]
            row = {"split": split_seed, "loss": loss, "metric": metric, "test_sampled": float(sampled),
                   "test_full": float(full), "best_epoch": model.best_epoch_, "epochs_run": len(model.history_),
                   "seconds": time.perf_counter() - t0}
            if not args.no_paper_selection:
                paper = MFRanker(validation_size=0, **common).fit(split.X_train, split.y_train, items=split.items,
                                                                   eval_set=(split.X_test, split.y_test))
                row["test_sampled_epoch_on_test"] = float(paper.best_score_)
                row["best_epoch_on_test"] = paper.best_epoch_
            rows.append(row)
            print(json.dumps(row), flush=True)
    elapsed = time.perf_counter() - start

    thesis = THESIS_NSR.get(args.nsr, {})
    print(f"\nMovieLens ml-latest-small, NSR {args.nsr}, {args.splits} split(s), users {split.settings['n_users']}, "
          f"negatives from {args.negatives} items, {elapsed:.0f} s in all")
    head = f"{'loss':<15}{'metric':<11}{'validation-selected':>21}{'epoch on test':>15}{'full catalogue':>16}{'thesis':>8}"
    print(head)
    for loss in args.losses.split(","):
        mine = [r for r in rows if r["loss"] == loss]
        v = np.array([r["test_sampled"] for r in mine])
        f = np.array([r["test_full"] for r in mine])
        p = [r["test_sampled_epoch_on_test"] for r in mine if "test_sampled_epoch_on_test" in r]
        on_test = f"{np.mean(p):>15.4f}" if p else f"{'-':>15}"
        print(f"{loss:<15}{METRIC[loss]:<11}{v.mean():>13.4f} ± {v.std():.4f}{on_test}"
              f"{f.mean():>16.4f}{thesis.get(loss, float('nan')):>8.4f}")
    meta = {"python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__,
            "cpu_count": os.cpu_count(), "load_average": os.getloadavg(), "seconds": elapsed,
            "command": " ".join([pathlib.Path(sys.executable).name] + sys.argv), "config": vars(args)}
    path = pathlib.Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"meta": meta, "rows": rows, "thesis": thesis}, indent=1))
    print(f"written to {path}")


if __name__ == "__main__":
    main()
