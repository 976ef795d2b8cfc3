"""Choosing the objective on your own LETOR data: train one model per metric, compare.

The job: you have LETOR/SVMlight data and do not know whether to optimise nDCG, AP, RR or
nRBP.  Train one GBRanker per objective under one protocol (same rounds, seed, early
stopping on a validation split) and evaluate every model on every metric: the objective
that wins on *your* target metric is the one to use.  Put your own files in with
``gbrank.datasets.load_letor("train.txt")``; here LightGBM's bundled example data (or
``--synthetic``: seeded ``make_letor`` data).

    python examples/choose_objective.py             # 200 rounds, early stopping
    python examples/choose_objective.py --quick     # 15 rounds, a few seconds

Look at: the table (rows: objective trained, columns: metric evaluated) and
docs/gallery/choose_objective.png; a diagonal that wins says "optimise what you measure".
"""

from __future__ import annotations

import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import gbrank  # noqa: E402
from gbrank.datasets import load_example, make_letor  # noqa: E402

from _gallery import GALLERY, run, save_figure  # noqa: E402

FIGURES = ["choose_objective.png"]
OBJECTIVES = ["ndcg", "ap", "rr", "nrbp@0.95"]
METRICS = ["ndcg@10", "ap", "rr", "nrbp@0.95"]


def data(synthetic: bool):
    """(train, validation, test) as (X, y, qid) triples, split by query."""
    if synthetic:
        X, y, qid = make_letor(n_queries=300, n_features=20, random_state=0)
        cut = np.searchsorted(qid, [180, 240])
        return [(X[a:b], y[a:b], qid[a:b]) for a, b in zip([0, *cut], [*cut, len(qid)])]
    fold = load_example()
    train, test = fold.train, fold.test
    cut = np.searchsorted(train.qid, np.unique(train.qid)[int(0.8 * len(np.unique(train.qid)))])
    return [(train.X[:cut], train.y[:cut], train.qid[:cut]), (train.X[cut:], train.y[cut:], train.qid[cut:]),
            (test.X, test.y, test.qid)]


def main(quick: bool = False, out: pathlib.Path = GALLERY, synthetic: bool = False) -> None:
    (X, y, qid), (Xv, yv, qv), (Xt, yt, qt) = data(synthetic)
    rows = {}
    for objective in OBJECTIVES:
        model = gbrank.GBRanker(objective, n_estimators=15 if quick else 200, learning_rate=0.05,
                                eval_metric=objective, early_stopping_rounds=None if quick else 30,
                                random_state=0)
        model.fit(X, y, qid=qid, eval_set=[(Xv, yv, qv)])
        rows[objective] = gbrank.evaluate(yt, model.predict(Xt), qt, METRICS).mean()[METRICS]
    table = pd.DataFrame(rows).T.rename_axis("objective trained")
    print("Test means (rows: the objective trained, columns: the metric evaluated):")
    print(table.round(4).to_string())
    print("\nBest objective for each metric:", table.idxmax().to_dict())

    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 3.6), constrained_layout=True)
    width = 0.8 / len(OBJECTIVES)
    for i, objective in enumerate(OBJECTIVES):
        ax.bar(np.arange(len(METRICS)) + i * width, table.loc[objective], width, label=f"trained on {objective}")
    ax.set_xticks(np.arange(len(METRICS)) + 0.4 - width / 2, METRICS)
    ax.set_ylim(table.values.min() - 0.05, min(1.0, table.values.max() + 0.05))
    ax.set_ylabel("test mean")
    ax.legend(fontsize=8, ncol=2)
    ax.set_title("One GBRanker per objective, evaluated on every metric")
    save_figure(fig, out, "choose_objective.png")


if __name__ == "__main__":
    run(main, __doc__, flags={"synthetic": "seeded make_letor data instead"})
