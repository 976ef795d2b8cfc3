"""Listwise against lambda: the two paradigms of metric optimisation on gradient-boosted trees.

The job: decide between a LambdaRank objective (pair weights = metric swap deltas) and a
listwise one (the metric itself, smoothed, differentiated exactly) for the same metric.
gbrank has both for LightGBM and XGBoost: ``GBRanker("ndcg")`` and
``GBRanker("listwise_ndcg")`` (a ``gbrank.ListwiseObjective``), plus the listwise families
users know (``"softmax"``, ``"listmle"``, ``"approx_ndcg"``, ``"neural_ndcg"``).  Train each on
the bundled LETOR-style data and compare them on the test queries (NDCG@10 and AP, empty
lists scoring 0).

    python examples/listwise_vs_lambda.py            # 200 rounds, every family
    python examples/listwise_vs_lambda.py --quick    # 15 rounds, four objectives

Look at: the table of test means (with the paired difference to the lambda objective) and
docs/gallery/listwise_vs_lambda.png, the mean NDCG@10 of each objective with its standard error.
"""

from __future__ import annotations

import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import gbrank  # noqa: E402
from gbrank.datasets import load_example  # noqa: E402

from _gallery import GALLERY, run, save_figure  # noqa: E402

FIGURES = ["listwise_vs_lambda.png"]
LAMBDA = "ndcg"


def main(quick: bool = False, out: pathlib.Path = GALLERY) -> None:
    fold = load_example()
    objectives = [LAMBDA, "listwise_ndcg", "softmax", "listmle"]
    if not quick:
        objectives += ["listwise_ap", "listwise_nrbp", "listwise_nrbp+minmax", "neural_ndcg", "listnet"]
    per_query = {}
    for objective in objectives:
        model = gbrank.GBRanker(objective, n_estimators=15 if quick else 200, learning_rate=0.05, random_state=0)
        model.fit(fold.train.X, fold.train.y, qid=fold.train.qid)
        result = gbrank.evaluate(fold.test.y, model.predict(fold.test.X), fold.test.qid, ["ndcg@10", "ap"],
                                 empty="zero")
        per_query[objective] = result.per_query[["ndcg@10", "ap"]]
    base = per_query[LAMBDA]["ndcg@10"]
    table = pd.DataFrame({name: {"ndcg@10": pq["ndcg@10"].mean(), "ap": pq["ap"].mean(),
                                 "ndcg@10 - lambda": (pq["ndcg@10"] - base).mean()}
                          for name, pq in per_query.items()}).T
    print(f"Test means over {len(base)} queries (lambda objective: {LAMBDA!r}):")
    print(table.round(4).to_string())

    out.mkdir(parents=True, exist_ok=True)
    means = [pq["ndcg@10"].mean() for pq in per_query.values()]
    errors = [pq["ndcg@10"].std(ddof=1) / np.sqrt(len(pq)) for pq in per_query.values()]
    fig, ax = plt.subplots(figsize=(7, 3.6), constrained_layout=True)
    colours = ["tab:orange" if name == LAMBDA else "tab:blue" for name in per_query]
    ax.bar(range(len(means)), means, yerr=errors, color=colours, capsize=3)
    ax.set_xticks(range(len(means)), list(per_query), rotation=30, ha="right", fontsize=8)
    ax.set_ylim(min(means) - 0.1, max(means) + 0.05)
    ax.set_ylabel("test NDCG@10 (mean, standard error)")
    ax.set_title("LambdaRank (orange) against listwise objectives (blue)")
    save_figure(fig, out, "listwise_vs_lambda.png")


if __name__ == "__main__":
    run(main, __doc__)
