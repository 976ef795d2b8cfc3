#!/usr/bin/env bash
# The GPU checks, in one call sized for a short lease (docs/torch.md, "GPU"; docs/objectives.md,
# "XGBoost on a GPU"; docs/results.md, "CiteULike-a against the paper"):
#   1. XGBoost on the GPU with a gbrank objective whose gradients stay on the device, against
#      the built-in rank:ndcg and against the host round trip (benchmarks/bench_xgboost_device.py),
#      alone on the GPU so that its timings are not shared; skipped when xgboost is missing;
#   2. the CUDA tests of the torch path and of the XGBoost device loop;
#   3. beside them, the SIGIR'21 reproduction on one of the paper's own CiteULike-a folds
#      (`gbrank bench mf --data citeulike-paper --device cuda`, the protocol of the CPU runs in
#      docs/results.md: Adam 0.01, up to EPOCHS epochs, patience 20), stopped at a wall-clock
#      budget: the finished runs are kept (the run store), so a later call or the same command
#      on the CPU carries on.
# Needs python3 with torch (CUDA), numpy, numba, scipy, pandas, scikit-learn, statsmodels, tqdm,
# matplotlib and pytest (+ pytest-xdist); xgboost with CUDA and CuPy for step 1; gbrank from
# this checkout. XGBoost's CUDA wheel (xgboost_cu13 3.3.0, 59 MB; 55 MB as the unpacked
# package in tar.xz) did not fit beside the 26 MB tree in one call of the device tool (64 MiB):
# it went in two halves, the first parked in /tmp of the warm machine by a first call, the
# second carried by the call that runs this script after
#   mkdir -p /tmp/xgb && cat /tmp/xgbpart00 .gpu2/xgbpart01 | tar xJ -C /tmp/xgb && export PYTHONPATH=/tmp/xgb
#
#   GBRANK_DATA=/path/to/shared/data OUT=/tmp/gpu bash scripts/gpu_checks.sh [BUDGET_S] [JOBS] [SPLIT] [EPOCHS]
#
# Writes to $OUT: versions.txt, xgboost_device.json, cuda_tests.log, bench.log and the
# reproduction's run store as runs.tar.partNN (15 MiB pieces; `cat runs.tar.part* | tar x` into
# the bench's --out folder, then the same `gbrank bench mf` command with --report-only).
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 OMP_WAIT_POLICY=PASSIVE
OUT="${OUT:-gpu-out}"
mkdir -p "$OUT"
BUDGET="${1:-480}"
JOBS="${2:-12}"
SPLIT="${3:-fold_1}"
EPOCHS="${4:-200}"
T0=$(date +%s)
since() { echo $(( $(date +%s) - T0 )); }
BENCH_OUT=/tmp/gbrank-bench-mf-citeulike-paper

{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  python3 -c "import platform, os, torch, numpy, numba, pandas; print('python', platform.python_version(), 'torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0), 'numpy', numpy.__version__, 'numba', numba.__version__, 'pandas', pandas.__version__, 'cpus', os.cpu_count())"
  python3 -c "import xgboost, cupy; print('xgboost', xgboost.__version__, xgboost.build_info().get('USE_CUDA'), 'cupy', cupy.__version__)"
} > "$OUT/versions.txt" 2>&1
cat "$OUT/versions.txt"

# numba's kernels into their on-disk cache once, so that the processes below load them
python3 scripts/warmup.py > "$OUT/warmup.log" 2>&1
echo "numba warm-up done at $(since) s"

# 1. XGBoost on the GPU, alone on it
if python3 -c "import xgboost, cupy" 2>/dev/null; then
    timeout 240 python3 benchmarks/bench_xgboost_device.py --device cuda --repeats 3 \
        --save "$OUT/xgboost_device.json" 2>&1 | grep -v Warning | tail -8
    echo "xgboost on the GPU done at $(since) s"
fi

# 3. the reproduction, in the background from now until the budget is spent
( timeout -k 10 --signal=INT $(( BUDGET - $(since) )) python3 -m gbrank.cli bench mf --data citeulike-paper \
      --splits "$SPLIT" --nsr 1,2,5 --losses listwise_ap,listwise_ndcg,listwise_rr,listwise_nrbp,lambda_ap,lambda_ndcg,lambda_rr,lambda_nrbp@0.8,lambda_nrbp@0.9,lambda_nrbp@0.95 \
      --optimizer adam --learning-rates 0.01 --epochs "$EPOCHS" --patience 20 --device cuda \
      --jobs "$JOBS" --threads 1 --no-plots --analyses paper --out "$BENCH_OUT" > "$OUT/bench.log" 2>&1 ) &
BENCH=$!

# 2. the CUDA tests, beside it
timeout 300 python3 -m pytest -q -p no:cacheprovider -o addopts="-ra" -m "not slow" -n 3 \
    tests/test_torch_*.py tests/test_swap_deltas.py tests/test_interactions.py tests/test_mf_conventions.py \
    tests/test_mf_speed_paths.py > "$OUT/cuda_tests.log" 2>&1
echo "tests: $(tail -1 "$OUT/cuda_tests.log") at $(since) s"
grep -E "^(FAILED|ERROR)" "$OUT/cuda_tests.log" | head -20

wait $BENCH
echo "reproduction stopped at $(since) s: $(ls "$BENCH_OUT/runs" 2>/dev/null | grep -c npz) runs stored"
tail -3 "$OUT/bench.log"
(cd "$BENCH_OUT" && tar cf - runs) | split -b 15M -d - "$OUT/runs.tar.part"
ls -la "$OUT"
