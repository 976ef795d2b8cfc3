"""Where the distribution map's gradient cost goes: the pair loop and the table lookup.

One thread, one list at a time, so the numbers are per pair and free of the per-list work
that a whole gradient call shares between the bounded and the unbounded objectives:

1. nanoseconds per pair of the pair loop (every pair of a list of n documents, labels
   0-4) for the unbounded nDCG and AP weights and for their distribution-bounded twins
   (each pair's weight interpolated in a 257-point table of F~);
2. nanoseconds per point of a vectorised loop that sums F~ by interpolation in that
   table (two table reads per point, which the compiler turns into gathers), against the
   same loop with the reads replaced by arithmetic on the cell index (the cost of the
   lookup alone), and with one read of a float32 pair packed into 64 bits (the cell's
   two ends: a route gbrank does not take, as it redefines F~ at float32 precision).

    python benchmarks/bench_distribution_loop.py --save docs/results/distribution_loop.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from gbrank.bounds._kernels import grid_cell, grid_interp
from gbrank.lambdas import _kernels as K
from gbrank.lambdas._deltas import N_ROWS, prepare
from gbrank.lambdas import DELTA_METRICS
from gbrank.metrics import GAINS

FAST = {"reassoc", "contract", "nsz", "arcp"}


@njit(cache=True)
def _repeat_pairs(reps, s, lab, e, aux, norm, dist, cdf, c, u, fm, product, g, h):
    total = 0.0
    for _ in range(reps):
        total += K._pairs_linear(s, lab, e, aux, norm, s.shape[0] - 1, 1.0, False, 0.0, K.HESS_LIGHTGBM, dist,
                                 cdf, c, u, fm, product, g, h)
    return total


@njit(cache=True, error_model="numpy", fastmath=FAST)
def _sum_lookups(row, t, reps):
    total = 0.0
    for _ in range(reps):
        for k in range(np.uint64(0), np.uint64(t.shape[0])):
            total += grid_interp(row, t[k])
    return total


@njit(cache=True, error_model="numpy", fastmath=FAST)
def _sum_without_lookups(row, t, reps):
    """``_sum_lookups`` with row[j] replaced by 0.001 j: the same clamp, cell and
    interpolation arithmetic, no table read."""
    total = 0.0
    for _ in range(reps):
        for k in range(np.uint64(0), np.uint64(t.shape[0])):
            j, f = grid_cell(t[k], row.shape[0] - 1)
            total += (1.0 - f) * (0.001 * j) + f * (0.001 * (j + 1))
    return total


@intrinsic
def _as_float32(typingctx, bits):
    """The float32 whose bit pattern is the uint32 ``bits``."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())

    return types.float32(types.uint32), codegen


@njit(cache=True, error_model="numpy", fastmath=FAST)
def _sum_packed_lookups(packed, t, reps):
    """``_sum_lookups`` over ``packed[j]`` = (float32 F~ at j, float32 F~ at j + 1): one read."""
    low = np.uint64(0xFFFFFFFF)
    total = 0.0
    for _ in range(reps):
        for k in range(np.uint64(0), np.uint64(t.shape[0])):
            j, f = grid_cell(t[k], packed.shape[0])
            both = packed[j]
            a = np.float64(_as_float32(np.uint32(both & low)))
            b = np.float64(_as_float32(np.uint32(both >> np.uint64(32))))
            total += (1.0 - f) * a + f * b
    return total


def _packed(row):
    ends = row.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ends[:-1] | (ends[1:] << np.uint64(32))


def _best(fn, repeats):
    best = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def pair_loops(sizes, repeats, work=2e8):
    rng = np.random.default_rng(0)
    cdf = np.sort(rng.random(257))
    cdf[0], cdf[-1] = 0.0, 1.0
    out = {}
    for metric in ("ndcg", "ap"):
        code = DELTA_METRICS[metric]
        for n in sizes:
            s = np.sort(rng.normal(size=n))[::-1].copy()
            lab = rng.integers(0, 5, n).astype(float)
            e = np.exp(s - s[0])
            aux = np.empty((N_ROWS, n))
            norm, _, _ = prepare(code, lab, GAINS["exp"], 1.0, 0.0, 0, aux)
            g, h = np.zeros(n), np.zeros(n)
            pairs = n * (n - 1) / 2
            reps = max(1, int(work / pairs))
            row = {}
            for dist in (False, True):
                args = (s, lab, e, aux, norm, dist, cdf, 256.0, 128.0, 0.5, metric != "ap", g, h)
                _repeat_pairs(1, *args)
                row["distribution" if dist else "unbounded"] = _best(lambda: _repeat_pairs(reps, *args),
                                                                     repeats) / reps / pairs * 1e9
            row["ratio"] = row["distribution"] / row["unbounded"]
            out[f"{metric} n={n}"] = row
            print(f"  {metric:4s} n={n:5d}  unbounded {row['unbounded']:.2f} ns/pair   "
                  f"distribution {row['distribution']:.2f} ns/pair   {row['ratio']:.2f}x")
    return out


def lookups(repeats, points=1000, reps=100_000):
    rng = np.random.default_rng(1)
    row = np.sort(rng.random(257))
    t = rng.random(points) * 300.0 - 20.0
    out = {}
    for name, fn, table in (("with the table reads", _sum_lookups, row),
                            ("arithmetic only", _sum_without_lookups, row),
                            ("one packed float32 read", _sum_packed_lookups, _packed(row))):
        fn(table, t, 1)
        out[name] = _best(lambda: fn(table, t, reps), repeats) / (points * reps) * 1e9
        print(f"  {name:24s} {out[name]:.3f} ns per point")
    assert abs(_sum_packed_lookups(_packed(row), t, 1) - _sum_lookups(row, t, 1)) < 1e-4 * points
    out["lookup_ns"] = out["with the table reads"] - out["arithmetic only"]
    print(f"  the two table reads cost {out['lookup_ns']:.3f} ns per point")
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[60, 120, 180, 1000])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--save", help="write the numbers to this JSON file")
    args = parser.parse_args(argv)
    import numba

    numba.set_num_threads(1)
    print(f"gbrank distribution loop — numba {numba.__version__}, one thread, {platform.processor() or 'cpu'}")
    print(f"1. pair loop, ns per pair (best of {args.repeats})")
    result = {"pair_loop_ns": pair_loops(args.sizes, args.repeats)}
    print("2. F~ by interpolation in a 257-point table, ns per point")
    result["lookup_ns"] = lookups(args.repeats)
    result["load_average"] = os.getloadavg()
    result["versions"] = {"numba": numba.__version__, "numpy": np.__version__, "python": platform.python_version()}
    if args.save:
        with open(args.save, "w") as fh:
            json.dump(result, fh, indent=2)
    return result


if __name__ == "__main__":
    main()
