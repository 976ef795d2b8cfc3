#!/usr/bin/env bash
# The torch path's checks on a CUDA machine, in one call sized for a short GPU lease
# (docs/torch.md, "GPU"; docs/results.md, "CiteULike-a against the paper"):
#   1. epoch time per loss on CiteULike-a, CUDA against the same machine's CPU;
#   2. the CUDA tests of the torch path (every torch, swap-delta and interaction test file);
#   3. the SIGIR'21 reproduction on the paper's own CiteULike-a folds (`gbrank bench mf
#      --data citeulike-paper --device cuda`), stopped at a wall-clock budget: the finished
#      runs are kept (the run store), so a later call or `--report-only` carries on.
# Needs python3 with torch (CUDA), numpy, numba, scipy, pandas, pyarrow, scikit-learn,
# statsmodels, tqdm, matplotlib and pytest (+ pytest-xdist); gbrank itself from this checkout.
#
#   GBRANK_DATA=/path/to/shared/data OUT=/tmp/gpu bash scripts/gpu_checks.sh [BUDGET_S] [JOBS] [EPOCHS]
#
# Writes to $OUT: versions.txt, epoch_cuda.json, epoch_cpu.json, cuda_tests.log, bench.log and
# the reproduction's run store as runs.tar.partNN (15 MiB pieces; `cat runs.tar.part* | tar x`
# into the bench's --out folder, then `gbrank bench mf ... --report-only` writes the reports).
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 OMP_WAIT_POLICY=PASSIVE
OUT="${OUT:-gpu-out}"
mkdir -p "$OUT"
BUDGET="${1:-420}"
JOBS="${2:-12}"
EPOCHS="${3:-3000}"  # the paper's; a short lease needs a cap (runs that reach it did not converge)
T0=$(date +%s)
since() { echo $(( $(date +%s) - T0 )); }
BENCH_OUT=/tmp/gbrank-bench-mf-citeulike-paper

{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  python3 -c "import platform, os, torch, numpy, numba, pandas; print('python', platform.python_version(), 'torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0), 'numpy', numpy.__version__, 'numba', numba.__version__, 'pandas', pandas.__version__, 'cpus', os.cpu_count())"
} > "$OUT/versions.txt" 2>&1
cat "$OUT/versions.txt"

# numba's kernels into their on-disk cache once, beside the epoch timing (one core), so that
# the reproduction's processes load them instead of each compiling its own
python3 scripts/warmup.py > "$OUT/warmup.log" 2>&1 &
WARM=$!

# 1. epoch time: CUDA, then the same losses on this machine's CPU (all its cores)
python3 benchmarks/bench_torch_epoch.py --device cuda --nsr 1 --epochs 3 --optimizer adam \
    --losses listwise_ap,lambda_ndcg,listwise_nrbp,lambda_nrbp@0.95 --threads 1 \
    --out "$OUT/epoch_cuda.json" 2>&1 | tail -9
python3 benchmarks/bench_torch_epoch.py --device cpu --nsr 1 --epochs 3 --optimizer adam \
    --losses listwise_ap,lambda_ndcg --threads "$(nproc)" --out "$OUT/epoch_cpu.json" 2>&1 | tail -4
echo "epoch times done at $(since) s"
wait $WARM
echo "numba warm-up done at $(since) s"

# 3. the reproduction, in the background from now until the budget is spent
( timeout -k 10 --signal=INT $(( BUDGET - $(since) )) python3 -m gbrank.cli bench mf --data citeulike-paper \
      --nsr 1,2,5 --losses listwise_ap,listwise_ndcg,listwise_rr,listwise_nrbp,lambda_ap,lambda_ndcg,lambda_rr,lambda_nrbp@0.8,lambda_nrbp@0.9,lambda_nrbp@0.95 \
      --optimizer sgd --learning-rates paper --epochs "$EPOCHS" --patience 20 --device cuda \
      --jobs "$JOBS" --threads 1 --no-plots --out "$BENCH_OUT" > "$OUT/bench.log" 2>&1 ) &
BENCH=$!

# 2. the CUDA tests, beside it
timeout 300 python3 -m pytest -q -p no:cacheprovider -o addopts="-ra" -m "not slow" -n 3 \
    tests/test_torch_*.py tests/test_swap_deltas.py tests/test_interactions.py tests/test_mf_conventions.py \
    tests/test_mf_speed_paths.py > "$OUT/cuda_tests.log" 2>&1
echo "tests: $(tail -1 "$OUT/cuda_tests.log") at $(since) s"

wait $BENCH
echo "reproduction stopped at $(since) s: $(ls "$BENCH_OUT/runs" 2>/dev/null | grep -c npz) runs stored"
tail -3 "$OUT/bench.log"
(cd "$BENCH_OUT" && tar cf - runs/*.npz) | split -b 15M -d - "$OUT/runs.tar.part"
ls -la "$OUT"
