"""Which hessian should ``ListwiseObjective`` hand the boosting library?  Measured on MQ2008.

For each listwise family and each ``hessian=`` choice, LightGBM (through ``GBRanker``) trains
on MQ2008's Fold1 training split, early-stopped on its vali split (NDCG@10, patience 30, up
to 300 rounds, learning rate 0.05, 31 leaves), and the test split is scored: NDCG@10 (empty
lists score 0, trec_eval's convention) and the rounds used.  Result: docs/objectives.md.

    GBRANK_DATA=/work/shared/data nice .venv/bin/python benchmarks/listwise_hessian.py [--folds 1]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folds", default="1", help="comma-separated MQ2008 folds (default 1)")
    ap.add_argument("--families", default="listwise_ndcg,listwise_ap,listwise_nrbp")
    ap.add_argument("--hessians", default="bound,constant,curvature")
    ap.add_argument("--rounds", type=int, default=300)
    args = ap.parse_args()
    from gbrank import evaluate
    from gbrank.datasets import load_letor_folds, resolve
    from gbrank.estimators import GBRanker
    from gbrank.lambdas import ListwiseObjective

    folds = load_letor_folds(resolve("mq2008"), folds=[int(f) for f in args.folds.split(",")])
    print("| family | hessian | fold | test NDCG@10 | rounds | seconds |")
    print("| --- | --- | --- | --- | --- | --- |")
    for family in args.families.split(","):
        for hessian in args.hessians.split(","):
            for fold in folds:
                t0 = time.perf_counter()
                model = GBRanker(ListwiseObjective(family, hessian=hessian), n_estimators=args.rounds,
                                 learning_rate=0.05, early_stopping_rounds=30, random_state=0, n_jobs=1)
                model.fit(fold.train.X, fold.train.y, qid=fold.train.qid,
                          eval_set=[(fold.vali.X, fold.vali.y, fold.vali.qid)])
                scores = model.predict(fold.test.X)
                ndcg = float(evaluate(fold.test.y, scores, fold.test.qid, ["ndcg@10"], empty="zero")
                             .mean()["ndcg@10"])
                print(f"| {family} | {hessian} | {fold.name} | {ndcg:.4f} | {model.best_iteration_} | "
                      f"{time.perf_counter() - t0:.1f} |", flush=True)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
