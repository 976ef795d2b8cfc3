#!/usr/bin/env bash
# Set up and run gbrank's main job: `gbrank bench letor` on the bundled example data.
# Ten contenders (LightGBM, XGBoost and CatBoost's own ranking objectives; gbrank's nDCG, AP,
# RR, nRBP@0.95 and bounded nRBP@0.95 on LightGBM), each early-stopped on ndcg@10 of held-out
# training queries (at most 100 rounds, patience 20); the report goes to runs/bench-letor-example/.
# One thread per run: on data this small a second OpenMP thread gains nothing, and on a busy
# machine spinning threads made the same job ten times slower.
# Extra arguments are passed on, e.g. `bash scripts/main.sh --contenders default`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/gbrank bench letor --data example \
    --contenders lightgbm:lambdarank,lightgbm:rank_xendcg,xgboost:rank:ndcg,catboost:YetiRank,catboost:LambdaMart:metric=NDCG,gbrank:ndcg,gbrank:ap,gbrank:rr,gbrank:nrbp@0.95,gbrank:nrbp@0.95+minmax \
    --rounds 100 --patience 20 --threads 1 --out runs/bench-letor-example "$@"
