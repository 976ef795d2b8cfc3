"""The SIGIR'21 paper's Sec. 5.3 claim, re-judged on a `gbrank bench mf` report: does the
listwise nRBP loss help active users more?  Per user, the AP of ``--loss`` minus the AP of
each ``--against`` loss, by quartile of the user's held-out positives (a user's activity:
the splits hold out a fixed share of each user's positives), and Spearman's rho between
the gain and that count, for the sampled lists and the full catalogue.

    .venv/bin/python scripts/active_users.py docs/results/bench-mf-citeulike-paper-nsr1-fold0 \\
        --per-query-from /path/to/the/bench/out      # per_query.csv.gz is not committed
"""

from __future__ import annotations

import argparse
import pathlib

import pandas as pd
from scipy.stats import spearmanr

QUARTILES = ["Q1 (fewest)", "Q2", "Q3", "Q4 (most)"]


def gains(per_query: pd.DataFrame, loss: str, against: str, metric: str = "ap") -> pd.DataFrame:
    """One row: mean gain per activity quartile, Spearman's rho and its p."""
    piv = per_query.pivot_table(index=["split", "qid"], columns="contender", values=metric)
    for name in (loss, against):
        if name not in piv.columns:
            raise ValueError(f"{name!r} is not among the report's contenders {sorted(piv.columns)}")
    activity = per_query.groupby(["split", "qid"])["n_relevant"].first().loc[piv.index]
    diff = piv[loss] - piv[against]
    quartile = pd.qcut(activity.rank(method="first"), 4, labels=QUARTILES)
    rho, p = spearmanr(activity, diff)
    return pd.DataFrame([{"against": against, **diff.groupby(quartile, observed=True).mean().to_dict(),
                          "spearman_rho": rho, "p": p, "users": len(diff)}])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("report", type=pathlib.Path, help="the bench mf output folder (with sampled/ and full/)")
    ap.add_argument("--per-query-from", type=pathlib.Path, default=None,
                    help="folder holding sampled/ and full/per_query.csv.gz when the report's are not there")
    ap.add_argument("--loss", default="listwise_nrbp")
    ap.add_argument("--against", nargs="+", default=["listwise_ndcg", "listwise_ap", "lambda_ndcg"])
    ap.add_argument("--metric", default="ap")
    args = ap.parse_args(argv)
    source = args.per_query_from or args.report
    for protocol in ("sampled", "full"):
        frame = pd.read_csv(source / protocol / "per_query.csv.gz")
        table = pd.concat([gains(frame, args.loss, o, args.metric) for o in args.against], ignore_index=True)
        print(f"\n{protocol}: {args.metric} of {args.loss} minus each loss's, by activity quartile")
        print(table.to_markdown(index=False, floatfmt=".4f"))


if __name__ == "__main__":
    main()
