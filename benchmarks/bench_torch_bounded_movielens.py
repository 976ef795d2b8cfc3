"""MovieLens ml-latest-small, bounded listwise losses (thesis Ch. 4, Table 5.1) with torch MF.

Same protocol as benchmarks/bench_torch_movielens.py (ratings >= 4 relevant, users with at
least 25 relevant ratings, 20 % of each user's positives held out, test lists = held-out
positives + NSR x as many unrated items, MF with 32 factors, batches of 32 users, Adam,
best epoch on a 10 % validation split).  Losses listwise nDCG, AP, nRBP, each unbounded and
with the four boundings (min-max, expectation, expectation-max, distribution), NSR 1, 2, 3.
Every model's test lists are evaluated with gbrank.evaluate (nDCG, AP, nRBP@0.95); each
bounded variant is compared with the unbounded loss by a paired t-test over users
(gbrank.compare), Holm-corrected over the four boundings per (loss, NSR, metric).

    OMP_WAIT_POLICY=PASSIVE GBRANK_DATA=../shared/data .venv/bin/python \\
        benchmarks/bench_torch_bounded_movielens.py --epochs 35 --early-stopping 6 --splits 2

Writes docs/results/movielens_bounded/summary.json and table.md.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from bench_torch_movielens import METRIC, THESIS_NSR  # noqa: E402
from mq2008_objectives import holm  # noqa: E402

BOUNDINGS = ("none", "minmax", "expectation", "expectation_max", "distribution")
EVAL = ["ndcg", "ap", "nrbp@0.95"]
THESIS_BOUNDED_NRBP = {1: 0.9473, 2: 0.9158, 3: 0.8848}  # best bounded listwise nRBP (min-max), Table 5.1


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nsr", default="1,2,3")
    parser.add_argument("--splits", type=int, default=1)
    parser.add_argument("--losses", default="listwise_ndcg,listwise_ap,listwise_nrbp")
    parser.add_argument("--boundings", default=",".join(BOUNDINGS))
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--learning-rate", type=float, default=0.01)
    parser.add_argument("--early-stopping", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default="docs/results/movielens_bounded")
    args = parser.parse_args(argv)

    import numpy as np
    import pandas as pd
    import torch

    import gbrank
    from gbrank.datasets import load_movielens
    from gbrank.torch import MFRanker, evaluate_recommender, split_interactions

    torch.set_num_threads(args.threads)
    ratings = load_movielens()
    X, y = ratings[["user", "item"]].to_numpy(), ratings["rating"].to_numpy()
    losses, boundings = args.losses.split(","), args.boundings.split(",")
    rows, tests = [], []
    start = time.perf_counter()
    for nsr in [int(v) for v in args.nsr.split(",")]:
        for split_seed in range(args.splits):
            split = split_interactions(X, y, relevance_threshold=4, min_positives=25, test_size=0.2, nsr=nsr,
                                       random_state=split_seed)
            for loss in losses:
                results = {}
                for bounding in boundings:
                    t0 = time.perf_counter()
                    model = MFRanker(loss=loss, bounding=None if bounding == "none" else bounding, n_factors=32,
                                     nsr=nsr, optimizer="adam", learning_rate=args.learning_rate,
                                     epochs=args.epochs, batch_size=32, eval_metric=METRIC[loss],
                                     relevance_threshold=4, early_stopping=args.early_stopping,
                                     validation_size=0.1, random_state=split_seed, verbose=0)
                    model.fit(split.X_train, split.y_train, items=split.items)
                    res = evaluate_recommender(model, split, metrics=EVAL)
                    results[bounding] = res
                    means = res.mean()
                    row = {"nsr": nsr, "split": split_seed, "loss": loss, "bounding": bounding,
                           **{m: float(means[m]) for m in EVAL}, "best_epoch": model.best_epoch_,
                           "epochs_run": len(model.history_), "seconds": time.perf_counter() - t0}
                    rows.append(row)
                    print(json.dumps(row), flush=True)
                if "none" not in results:
                    continue
                cmp = [(b, gbrank.compare(results[b], results["none"], test="t")) for b in boundings if b != "none"]
                for m in EVAL:
                    p = holm([c.loc[m, "p_value"] for _, c in cmp])
                    for (b, c), ph in zip(cmp, p):
                        tests.append({"nsr": nsr, "split": split_seed, "loss": loss, "bounding": b, "metric": m,
                                      "diff": float(c.loc[m, "diff"]), "p_value": float(c.loc[m, "p_value"]),
                                      "p_holm": float(ph), "n_users": int(c.loc[m, "n"])})
    elapsed = time.perf_counter() - start

    df = pd.DataFrame(rows)
    tt = pd.DataFrame(tests)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    lines = [f"MovieLens ml-latest-small, MF + listwise losses, {args.splits} split(s), at most {args.epochs} "
             f"epochs (early stopping {args.early_stopping}), {elapsed:.0f} s in all. Test metric = the metric "
             "the loss smooths; `*` = bounded differs from unbounded at Holm-adjusted p < 0.05 "
             "(paired t-test over users), with the sign of the difference.", ""]
    nsrs = sorted(df["nsr"].unique())
    lines.append("| loss | bounding | " + " | ".join(f"NSR {n}" for n in nsrs) + " |")
    lines.append("|---|---|" + "---|" * len(nsrs))
    for loss in losses:
        m = METRIC[loss]
        for b in boundings:
            cells = []
            for n in nsrs:
                v = df[(df.loss == loss) & (df.bounding == b) & (df.nsr == n)][m].mean()
                mark = ""
                if b != "none" and len(tt):
                    t = tt[(tt.loss == loss) & (tt.bounding == b) & (tt.nsr == n) & (tt.metric == m)]
                    if len(t) and (t.p_holm < 0.05).all():
                        mark = " *+" if t["diff"].mean() > 0 else " *-"
                cells.append(f"{v:.4f}{mark}")
            lines.append(f"| {loss} ({m}) | {b} | " + " | ".join(cells) + " |")
        thesis = [THESIS_NSR.get(n, {}).get(loss) for n in nsrs]
        lines.append(f"| {loss} ({m}) | thesis, unbounded | " + " | ".join(
            "-" if t is None else f"{t:.4f}" for t in thesis) + " |")
        if loss == "listwise_nrbp":
            lines.append(f"| {loss} ({m}) | thesis, best bounded (min-max) | " + " | ".join(
                f"{THESIS_BOUNDED_NRBP.get(n, float('nan')):.4f}" for n in nsrs) + " |")
    table = "\n".join(lines) + "\n"
    (out / "table.md").write_text(table)
    meta = {"python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__,
            "cpu_count": os.cpu_count(), "load_average": os.getloadavg(), "seconds": elapsed,
            "command": " ".join([pathlib.Path(sys.executable).name] + sys.argv), "config": vars(args)}
    (out / "summary.json").write_text(json.dumps({"meta": meta, "rows": rows, "tests": tests,
                                                  "thesis_unbounded": THESIS_NSR,
                                                  "thesis_best_bounded_nrbp": THESIS_BOUNDED_NRBP}, indent=1))
    print(table)
    print(f"written to {out}")


if __name__ == "__main__":
    main()
