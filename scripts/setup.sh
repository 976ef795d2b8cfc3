#!/usr/bin/env bash
# Create .venv (if missing) and install gbrank with every extra its jobs and tests use.
# CPU-only wheels: torch is pinned by constraints.txt, XGBoost comes as xgboost-cpu.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -c constraints.txt -e ".[lightgbm,xgboost-cpu,catboost,torch,dask,plot,bench,test,docs]"
# compile the numba kernels into their on-disk cache now, not in the user's first fit
.venv/bin/python scripts/warmup.py
