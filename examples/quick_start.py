"""Quick start: train a LambdaRank model for the metric you care about, and evaluate it.

The job: you have learning-to-rank data (features, graded labels, one query id per row)
and want a gradient-boosted ranker that optimises nRBP@0.95 instead of nDCG, evaluated on
held-out queries with confidence intervals.

    python examples/quick_start.py            # 100 rounds on LightGBM's example data
    python examples/quick_start.py --quick    # 10 rounds, a few seconds

Look at: the summary table (mean of each metric with its 95 % interval over test queries)
and the per-query table, where the spread behind each mean shows.
"""

from __future__ import annotations

import pathlib

import gbrank
from gbrank.datasets import load_example

from _gallery import GALLERY, run

FIGURES: list[str] = []  # draws nothing


def main(quick: bool = False, out: pathlib.Path = GALLERY) -> None:
    fold = load_example()  # LightGBM's lambdarank example data, bundled (MIT)
    model = gbrank.GBRanker("nrbp@0.95", n_estimators=10 if quick else 100, random_state=0)
    model.fit(fold.train.X, fold.train.y, qid=fold.train.qid)
    result = gbrank.evaluate(fold.test.y, model.predict(fold.test.X), fold.test.qid,
                             ["ndcg@10", "ap", "rr", "nrbp@0.95"])
    print("Mean of each metric over the test queries, with its 95 % confidence interval:")
    print(result.summary().round(4).to_string())
    print("\nThe first per-query rows (one row per test query):")
    print(result.per_query.head().round(4).to_string())


if __name__ == "__main__":
    run(main, __doc__, quick_help="a few seconds: fewer rounds")
