"""gbrank objectives and metrics in native LightGBM and XGBoost training.

The job: you already train with ``lightgbm.train`` or ``xgboost.train`` (callbacks,
custom data handling) and want gbrank's objective and metrics there, not the estimator.
The adapters of ``gbrank.backends`` wrap one ``LambdaObjective`` in each library's
calling convention: ``LightGBMObjective`` (``params["objective"]``), ``LightGBMMetric``
(``feval``), ``XGBoostObjective`` (``obj=``) and ``XGBoostMetric`` (``custom_metric=``).

    python examples/native_backends.py            # 100 rounds each
    python examples/native_backends.py --quick    # 10 rounds each

Look at: the per-round validation metric both libraries print through gbrank's metric,
and the final test means of the two boosters, which should be close.
"""

from __future__ import annotations

import pathlib

import lightgbm as lgb
import numpy as np
import xgboost as xgb

import gbrank
from gbrank.backends import LightGBMMetric, LightGBMObjective, XGBoostMetric, XGBoostObjective
from gbrank.datasets import load_example

from _gallery import GALLERY, run

FIGURES: list[str] = []  # draws nothing
METRICS = ["ndcg@10", "nrbp@0.95"]


def main(quick: bool = False, out: pathlib.Path = GALLERY) -> None:
    fold = load_example()
    train, test = fold.train, fold.test
    rounds = 10 if quick else 100
    objective = gbrank.LambdaObjective("nrbp@0.95")

    # LightGBM: groups are sizes of consecutive queries.
    sizes = lambda q: np.unique(q, return_counts=True)[1]  # noqa: E731 (qids are sorted)
    dtrain = lgb.Dataset(train.X, train.y, group=sizes(train.qid))
    dtest = lgb.Dataset(test.X, test.y, group=sizes(test.qid), reference=dtrain)
    params = {"objective": LightGBMObjective(objective), "learning_rate": 0.1, "num_leaves": 31,
              "metric": "None", "verbose": -1, "seed": 0, "num_threads": 2}
    log = {}
    booster = lgb.train(params, dtrain, num_boost_round=rounds, valid_sets=[dtest], valid_names=["test"],
                        feval=LightGBMMetric(METRICS), callbacks=[lgb.record_evaluation(log)])
    print("LightGBM, nrbp@0.95 on the test set every 10 rounds:",
          np.round(log["test"]["nrbp@0.95"][::10], 4).tolist())
    lgb_result = gbrank.evaluate(test.y, booster.predict(test.X), test.qid, METRICS).mean()

    # XGBoost: query ids per row; a custom objective goes through xgboost.train(obj=...).
    xtrain = xgb.DMatrix(train.X, train.y, qid=train.qid)
    xtest = xgb.DMatrix(test.X, test.y, qid=test.qid)
    xlog = {}
    xbooster = xgb.train({"eta": 0.1, "max_depth": 6, "disable_default_eval_metric": 1, "seed": 0, "nthread": 2},
                         xtrain, num_boost_round=rounds, obj=XGBoostObjective(objective),
                         custom_metric=XGBoostMetric(METRICS), evals=[(xtest, "test")], evals_result=xlog,
                         verbose_eval=False)
    print("XGBoost,  nrbp@0.95 on the test set every 10 rounds:",
          np.round(xlog["test"]["nrbp@0.95"][::10], 4).tolist())
    xgb_result = gbrank.evaluate(test.y, xbooster.predict(xtest), test.qid, METRICS).mean()

    print("\nTest means of the two boosters trained with gbrank's nRBP@0.95 objective:")
    for name, result in (("lightgbm", lgb_result), ("xgboost", xgb_result)):
        print(f"  {name:9s}" + "  ".join(f"{m} {result[m]:.4f}" for m in METRICS))


if __name__ == "__main__":
    run(main, __doc__)
