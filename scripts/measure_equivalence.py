"""How closely gbrank's objectives configured like the built-ins reproduce them.

On MQ2008 Fold 1 (train), 20 rounds, the settings of ``tests/test_backends.py``: LightGBM's
``lambdarank`` against ``LambdaObjective.like_lightgbm()``, XGBoost's ``rank:ndcg`` and
``rank:map`` (topk 32) against ``like_xgboost("ndcg" | "ap")``.  Prints whether the first
split is the same and the largest prediction difference on the training rows.

    GBRANK_DATA=../shared/data python scripts/measure_equivalence.py --save docs/results/equivalence.json
"""

from __future__ import annotations

import argparse
import json
import pathlib

import numpy as np


def main(argv=None) -> int:
    import lightgbm as lgb
    import xgboost as xgb

    from gbrank.backends import LightGBMObjective, XGBoostObjective
    from gbrank.datasets import load_letor_folds
    from gbrank.lambdas import LambdaObjective

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--save", type=pathlib.Path)
    args = parser.parse_args(argv)
    fold = load_letor_folds("mq2008", folds=[1])[0].train
    X, y, qid = fold.X, fold.y, fold.qid
    sizes = np.diff(np.flatnonzero(np.r_[True, qid[1:] != qid[:-1], True]))
    rows = {}

    lgb_params = dict(learning_rate=0.1, num_leaves=31, verbosity=-1, num_threads=2, seed=1, deterministic=True,
                      force_col_wise=True)

    def lgb_model(objective):
        return lgb.train(dict(lgb_params, objective=objective), lgb.Dataset(X, y, group=sizes), args.rounds)

    def lgb_split(b):
        t = b.dump_model()["tree_info"][0]["tree_structure"]
        return t["split_feature"], t["threshold"]

    ref, ours = lgb_model("lambdarank"), lgb_model(LightGBMObjective(LambdaObjective.like_lightgbm()))
    rows["lightgbm lambdarank"] = (lgb_split(ours) == lgb_split(ref),
                                   float(np.abs(ours.predict(X) - ref.predict(X)).max()))

    topk = dict(lambdarank_pair_method="topk", lambdarank_num_pair_per_sample=32, lambdarank_normalization=True,
                lambdarank_score_normalization=True)
    xgb_params = dict(eta=0.1, max_depth=6, tree_method="hist", nthread=2, seed=1, base_score=0.5,
                      disable_default_eval_metric=1)
    for metric, builtin in (("ndcg", "rank:ndcg"), ("ap", "rank:map")):
        labels = (y >= 1).astype(float) if metric == "ap" else y
        d = xgb.DMatrix(X, labels)
        d.set_group(sizes)
        ref = xgb.train(dict(xgb_params, objective=builtin, **topk), d, args.rounds)
        ours = xgb.train(xgb_params, d, args.rounds, obj=XGBoostObjective(LambdaObjective.like_xgboost(metric)))
        first = ours.get_dump()[0].split("\n")[0] == ref.get_dump()[0].split("\n")[0]
        rows[f"xgboost {builtin}"] = (first, float(np.abs(ours.predict(d) - ref.predict(d)).max()))

    print(f"{'built-in':22s} {'same first split':>16s} {'max |prediction difference|':>28s}")
    for name, (first, diff) in rows.items():
        print(f"{name:22s} {str(first):>16s} {diff:28.2e}")
    if args.save:
        import importlib.metadata as md

        doc = {"rounds": args.rounds, "rows": {k: {"same_first_split": f, "max_abs_diff": v}
                                                for k, (f, v) in rows.items()},
               "versions": {p: md.version(p) for p in ("gbrank", "lightgbm", "xgboost-cpu", "numba")}}
        args.save.write_text(json.dumps(doc, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
