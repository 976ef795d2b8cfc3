"""Tuning GBRanker with scikit-learn: GridSearchCV over GroupKFold, queries kept whole.

The job: pick the objective and the learning rate by cross-validation without ever
splitting a query between training and validation folds.  GBRanker takes one query id per
row (``qid``), which scikit-learn's metadata routing slices with the rows; GroupKFold
with ``groups=qid`` keeps each query in one fold, and GBRanker.score (mean nDCG@10 by
default, its ``eval_metric``) receives the fold's qid too.

    python examples/grid_search.py            # 3 x 2 grid, 5 folds, 100 rounds
    python examples/grid_search.py --quick    # 2 x 1 grid, 3 folds, 10 rounds

Look at: best_params_ and the cross-validated table of mean scores; then the held-out
score of the refitted best model.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pandas as pd
import sklearn
from sklearn.model_selection import GridSearchCV, GroupKFold

import gbrank
from gbrank.datasets import make_letor

from _gallery import GALLERY, run

FIGURES: list[str] = []  # draws nothing


def main(quick: bool = False, out: pathlib.Path = GALLERY) -> None:
    X, y, qid = make_letor(n_queries=120 if quick else 400, n_features=15, random_state=0)
    test = qid >= (90 if quick else 300)  # the last queries are held out
    grid = {"objective": ["ndcg", "nrbp@0.95"] if quick else ["ndcg", "ap", "nrbp@0.95"],
            "learning_rate": [0.1] if quick else [0.05, 0.1]}
    with sklearn.config_context(enable_metadata_routing=True):  # routes qid to fit and score
        search = GridSearchCV(gbrank.GBRanker(n_estimators=10 if quick else 100, random_state=0), grid,
                              cv=GroupKFold(n_splits=3 if quick else 5))
        search.fit(X[~test], y[~test], groups=qid[~test], qid=qid[~test])
        held_out = search.score(X[test], y[test], qid=qid[test])
    table = pd.DataFrame(search.cv_results_)[["params", "mean_test_score", "std_test_score", "rank_test_score"]]
    print("Cross-validated mean nDCG@10 of each setting (GroupKFold: no query is split):")
    print(table.sort_values("rank_test_score").to_string(index=False))
    print(f"\nbest_params_: {search.best_params_}")
    print(f"held-out nDCG@10 of the refitted best model: {held_out:.4f} on {len(np.unique(qid[test]))} queries")


if __name__ == "__main__":
    run(main, __doc__)
