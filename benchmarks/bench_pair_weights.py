"""Speed of the pair weightings and pair sampling against the plain dnDCG gradient call.

One gradient call of ``LambdaObjective`` on the MSLR-sized synthetic set of
``bench_objective_speed.py`` (4,800 lists of 60-180 documents, labels 0-4), with LightGBM's
settings (dnDCG, truncation 30, score and list normalisation, eps 0.01f, exact sigmoid)
against the same call with each new option; timed interleaved in one process (each round
times every variant once; best of ``--repeats`` rounds), so only the printed ratios mean
anything on a shared machine.

    python benchmarks/bench_pair_weights.py                 # full
    python benchmarks/bench_pair_weights.py --quick         # smoke run
    python benchmarks/bench_pair_weights.py --save docs/results/pair_weights_speed.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import numpy as np


def synthetic_lists(n_queries):
    """Labels and list sizes of the MSLR-sized synthetic set (bench_objective_speed.py's)."""
    from gbrank.datasets import make_letor

    _, y, qid = make_letor(n_queries=n_queries, docs_per_query=(60, 180), n_features=136, max_label=4,
                           random_state=0)
    return y, np.unique(qid, return_counts=True)[1]


def variants():
    """(label, objective): the reference first."""
    from gbrank.lambdas import LambdaObjective
    from gbrank.lambdas._objective import LIGHTGBM_EPS

    common = dict(score_normalization=True, list_normalization=True, score_normalization_eps=LIGHTGBM_EPS)
    top = dict(common, truncation=30)
    return [
        ("dnDCG (reference)", LambdaObjective("ndcg", **top)),
        ("ndcg_loss2", LambdaObjective("ndcg", weighting="ndcg_loss2", **top)),
        ("ndcg_loss2++", LambdaObjective("ndcg", weighting="ndcg_loss2++", **top)),
        ("stochastic=1", LambdaObjective("ndcg", stochastic=1, random_state=0, **top)),
        ("stochastic=10", LambdaObjective("ndcg", stochastic=10, random_state=0, **top)),
        ("mean, 1 pair/doc", LambdaObjective("ndcg", pair_method="mean", random_state=0, **common)),
        ("mean, 8 pairs/doc", LambdaObjective("ndcg", pair_method="mean", pairs_per_doc=8, random_state=0,
                                              **common)),
    ]


def gradient_calls(y, ptr, repeats):
    scores = np.random.default_rng(1).normal(size=len(y))
    objs = variants()
    for _, obj in objs:  # compile or load from the cache
        obj.gradients(scores, y, ptr)
    best = {label: np.inf for label, _ in objs}
    for _ in range(repeats):  # interleaved: drifting load falls on every variant
        for label, obj in objs:
            t = time.perf_counter()
            obj.gradients(scores, y, ptr)
            best[label] = min(best[label], time.perf_counter() - t)
    ref = best[objs[0][0]]
    out = {}
    for label, obj in objs:
        out[label] = {"objective": repr(obj), "call_s": best[label], "ratio": best[label] / ref}
        print(f"  {label:20s} {best[label] * 1e3:8.1f} ms   {best[label] / ref:5.2f}x dnDCG")
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=4800)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--quick", action="store_true", help="300 lists, 3 repeats")
    parser.add_argument("--save", help="write the numbers to this JSON file")
    args = parser.parse_args(argv)
    if args.quick:
        args.queries, args.repeats = 300, 3
    import numba

    print(f"gbrank pair weightings, one gradient call — numba {numba.__version__}, {os.cpu_count()} cores, "
          f"{numba.get_num_threads()} numba threads, {platform.python_version()}")
    y, sizes = synthetic_lists(args.queries)
    ptr = np.concatenate(([0], np.cumsum(sizes)))
    print(f"data: {len(y):,} rows, {len(sizes):,} lists (mean {sizes.mean():.1f}), labels 0-{int(y.max())}; "
          f"best of {args.repeats}, interleaved")
    result = {"args": vars(args), "versions": {"numba": numba.__version__, "numpy": np.__version__,
                                               "python": platform.python_version()},
              "calls": gradient_calls(y, ptr, args.repeats), "load_average": os.getloadavg()}
    if args.save:
        with open(args.save, "w") as fh:
            json.dump(result, fh, indent=2)
    return result


if __name__ == "__main__":
    main()
