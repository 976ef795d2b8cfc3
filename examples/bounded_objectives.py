"""Bounded objectives: weigh every query by how far it can still move, not by its raw scale.

The job: some queries can never score low (many relevant documents) and others never high;
a raw metric lets the first kind dominate the gradient.  gbrank's bounded objectives map
each list's metric with that list's own bounds before the swap deltas are taken:
``"nrbp@0.95+minmax"``, ``+expectation``, ``+expectation_max``, ``+distribution``
(see docs/bounds.md).  Train one GBRanker per bounding and compare them with the plain one.

    python examples/bounded_objectives.py            # 150 rounds on 400 synthetic queries
    python examples/bounded_objectives.py --quick    # 10 rounds, two boundings

Look at: the table of test means per bounding and docs/gallery/bounded_objectives.png,
the per-query difference to the unbounded objective against the number of relevant items.
"""

from __future__ import annotations

import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

import gbrank  # noqa: E402
from gbrank.datasets import make_letor  # noqa: E402

from _gallery import GALLERY, run, save_figure  # noqa: E402

FIGURES = ["bounded_objectives.png"]
BASE = "nrbp@0.95"


def main(quick: bool = False, out: pathlib.Path = GALLERY) -> None:
    X, y, qid = make_letor(n_queries=150 if quick else 400, n_features=15, random_state=1)
    test = qid >= (100 if quick else 300)
    boundings = ["minmax", "distribution"] if quick else ["minmax", "expectation", "expectation_max", "distribution"]
    results = {}
    for objective in [BASE] + [f"{BASE}+{b}" for b in boundings]:
        model = gbrank.GBRanker(objective, n_estimators=10 if quick else 150, learning_rate=0.05, random_state=0)
        model.fit(X[~test], y[~test], qid=qid[~test])
        results[objective] = gbrank.evaluate(y[test], model.predict(X[test]), qid[test], ["nrbp@0.95", "ndcg@10"])
    table = pd.DataFrame({name: r.mean()[["nrbp@0.95", "ndcg@10"]] for name, r in results.items()}).T
    print("Test means per objective (rows):")
    print(table.round(4).to_string())

    out.mkdir(parents=True, exist_ok=True)
    base = results[BASE].per_query
    fig, ax = plt.subplots(figsize=(7, 3.6), constrained_layout=True)
    for name, result in results.items():
        if name == BASE:
            continue
        diff = (result.per_query["nrbp@0.95"] - base["nrbp@0.95"]).groupby(base["n_relevant"]).mean()
        ax.plot(diff.index, diff.values, "o-", ms=3, label=name)
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xlabel("relevant documents in the query")
    ax.set_ylabel(f"mean nRBP@0.95 difference to {BASE}")
    ax.legend(fontsize=8)
    ax.set_title("Bounded minus unbounded objective, per query size")
    save_figure(fig, out, "bounded_objectives.png")


if __name__ == "__main__":
    run(main, __doc__)
