"""A metric of your own: register it through the metric record, evaluate and train with it.

The job: your application values "relevant items in the first three slots, the first slot
most" and no built-in metric says exactly that.  One numba kernel and one
``register(Metric(...))`` make it known to the parser, ``gbrank.evaluate``, the error
messages and the boosting adapters, without editing gbrank (CONTRIBUTING.md, "The metric
record").  Here it is evaluated, and then selects the model: GBRanker trains gbrank's nDCG@3
objective and early-stops on the new metric.  Making the metric itself an *objective* needs
its swap delta inside gbrank (CONTRIBUTING.md, recipe 2).

The metric, top3w: sum over positions r = 1..3 of w_r rel_r / the same sum for the ideal
order, w = (1, 1/2, 1/4), binary relevance; tied scores count with the expected relevance
of their tie group (by linearity, the exact expectation over the tied orders).

    python examples/custom_metric.py            # 200 rounds, early stopping on top3w
    python examples/custom_metric.py --quick    # 20 rounds

Look at: the per-query values of top3w beside nDCG@3 on a toy list, the round early
stopping chose, and the test means.
"""

from __future__ import annotations

import pathlib

import numpy as np
from numba import njit

import gbrank
from gbrank.datasets import make_letor
from gbrank.metrics import EXTERNAL, METRICS, Metric, register

from _gallery import GALLERY, run

FIGURES: list[str] = []  # draws nothing


@njit(cache=False)
def top3w(gains, rel, groups, k, p):
    """One list in rank order; tie group g holds positions groups[g] .. groups[g + 1] - 1."""
    n_rel = rel.sum()
    if n_rel == 0.0:
        return np.nan  # undefined: the evaluator's empty policy decides
    weights = np.array([1.0, 0.5, 0.25])
    value = 0.0
    for g in range(len(groups) - 1):
        start, stop = groups[g], groups[g + 1]
        expected = rel[start:stop].sum() / (stop - start)  # expected relevance at each tied position
        for r in range(start, min(stop, 3)):
            value += weights[r] * expected
    ideal = weights[: min(3, int(n_rel))].sum()
    return value / ideal


def main(quick: bool = False, out: pathlib.Path = GALLERY) -> None:
    if "top3w" not in METRICS:  # register once per process
        register(Metric("top3w", EXTERNAL, "", True, True, False,
                        "sum_{r<=3} w_r rel_r / ideal, w = (1, 1/2, 1/4)", kernel=top3w))

    y = [1, 0, 1, 0, 0, 1, 1, 0]
    s = [0.9, 0.8, 0.7, 0.1, 0.5, 0.5, 0.2, 0.1]  # the second list ties its first two items
    q = [1, 1, 1, 1, 2, 2, 2, 2]
    print("A toy evaluation with the new metric beside nDCG@3:")
    print(gbrank.evaluate(y, s, q, ["top3w", "ndcg@3"]).per_query.round(4).to_string())

    X, yy, qid = make_letor(n_queries=150 if quick else 400, n_features=15, random_state=3)
    cut = np.searchsorted(qid, [100, 125] if quick else [250, 325])
    (X1, y1, q1), (X2, y2, q2), (X3, y3, q3) = [(X[a:b], yy[a:b], qid[a:b])
                                                  for a, b in zip([0, *cut], [*cut, len(qid)])]
    model = gbrank.GBRanker("ndcg@3", n_estimators=20 if quick else 200, learning_rate=0.05,
                            eval_metric="top3w", early_stopping_rounds=5 if quick else 30, random_state=0)
    model.fit(X1, y1, qid=q1, eval_set=[(X2, y2, q2)])
    print(f"\nGBRanker('ndcg@3'), early stopping on top3w: best iteration {model.best_iteration_}")
    print("test means:", gbrank.evaluate(y3, model.predict(X3), q3, ["top3w", "ndcg@3", "ap"]).mean()
          .round(4).to_dict())


if __name__ == "__main__":
    run(main, __doc__)
