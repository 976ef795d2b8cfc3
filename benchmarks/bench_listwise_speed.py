"""Speed of ``ListwiseObjective`` against ``LambdaObjective`` and LightGBM's built-in lambdarank.

In one process, interleaved (alternating order), so that a change of load on the shared
machine falls on both sides; the figure is the ratio of the medians:

1. one gradient call of ``ListwiseObjective("listwise_ndcg")`` (and of each other family)
   against ``LambdaObjective("ndcg", truncation=None)`` on ``--lists`` lists of 60-180 items
   (graded labels 0-4); goal: listwise_ndcg <= 1.5x;
2. LightGBM training (``lightgbm.train``, ``--rounds`` rounds, 31 leaves, ``--threads``) on
   ``benchmarks/bench_objective_speed.py``'s synthetic set (``--queries`` lists of 60-180
   items, 136 features): the built-in ``lambdarank`` against
   ``LightGBMObjective(ListwiseObjective("listwise_ndcg"))``; goal <= 1.2x.

    nice .venv/bin/python benchmarks/bench_listwise_speed.py                 # both parts
    nice .venv/bin/python benchmarks/bench_listwise_speed.py --calls-only --repeats 15
    nice .venv/bin/python benchmarks/bench_listwise_speed.py --quick         # smoke run
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bench_objective_speed import _interleaved, synthetic_set  # noqa: E402


def _timed(fn):
    def run():
        t = time.perf_counter()
        fn()
        return time.perf_counter() - t
    return run


def gradient_calls(args) -> dict:
    from gbrank.datasets import make_letor
    from gbrank.lambdas import LambdaObjective, ListwiseObjective

    _, y, qid = make_letor(n_queries=args.lists, docs_per_query=(60, 180), n_features=2, max_label=4,
                           random_state=0)
    ptr = np.concatenate([[0], np.cumsum(np.unique(qid, return_counts=True)[1])])
    scores = np.random.default_rng(1).normal(size=len(y))
    objectives = {"lambda ndcg": LambdaObjective("ndcg", truncation=None)}
    families = ["listwise_ndcg"] if args.quick else ["listwise_ndcg", "listwise_ap", "listwise_rr", "listwise_nrbp",
                                                     "listwise_ndcg+minmax", "softmax", "listmle", "neural_ndcg"]
    objectives.update({f: ListwiseObjective(f) for f in families})
    for obj in objectives.values():  # load the kernels (and prepare the bounds) before timing
        obj.gradients(scores, y, ptr)
    times = _interleaved({k: _timed(lambda o=o: o.gradients(scores, y, ptr)) for k, o in objectives.items()},
                         args.repeats)
    med = {k: float(np.median(v)) for k, v in times.items()}
    print(f"gradient call, {args.lists} lists of 60-180 items ({len(y)} rows), {args.repeats} interleaved repeats:")
    for k, v in med.items():
        print(f"  {k:22s} median {v * 1e3:8.1f} ms   ratio to lambda ndcg {v / med['lambda ndcg']:.2f}")
    return med


def training(args) -> dict:
    import lightgbm as lgb

    from gbrank.backends import LightGBMObjective
    from gbrank.lambdas import ListwiseObjective

    X, y, sizes = synthetic_set(args.queries)
    dataset = lgb.Dataset(X, y, group=sizes, params={"verbosity": -1, "max_bin": 255}, free_raw_data=False)
    dataset.construct()
    base = dict(num_leaves=31, learning_rate=0.1, num_threads=args.threads, verbosity=-1, force_col_wise=True,
                seed=0, min_sum_hessian_in_leaf=1e-3)
    objective = LightGBMObjective(ListwiseObjective("listwise_ndcg"))

    def train(obj):
        return _timed(lambda: lgb.train(dict(base, objective=obj), dataset, num_boost_round=args.rounds))

    train(objective)()  # warm: kernels loaded
    times = _interleaved({"lambdarank": train("lambdarank"), "listwise_ndcg": train(objective)}, args.repeats_train)
    med = {k: float(np.median(v)) for k, v in times.items()}
    print(f"LightGBM training, {args.queries} lists ({len(y)} rows), {args.rounds} rounds, {args.threads} threads, "
          f"{args.repeats_train} interleaved repeats:")
    for k, v in times.items():
        print(f"  {k:14s} median {np.median(v):7.2f} s ({min(v):.2f}-{max(v):.2f})")
    print(f"  ratio of medians {med['listwise_ndcg'] / med['lambdarank']:.3f}")
    return med


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lists", type=int, default=2000, help="lists of one gradient call (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=11, help="interleaved repeats of each gradient call (default: %(default)s)")
    parser.add_argument("--queries", type=int, default=4800, help="lists of the training set (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=100, help="boosting rounds of each training (default: %(default)s)")
    parser.add_argument("--repeats-train", type=int, default=3,
                        help="interleaved repeats of each training (default: %(default)s)")
    parser.add_argument("--threads", type=int, default=2, help="LightGBM num_threads (default: %(default)s)")
    parser.add_argument("--calls-only", action="store_true", help="time the gradient calls only")
    parser.add_argument("--training-only", action="store_true", help="time the LightGBM trainings only")
    parser.add_argument("--quick", action="store_true", help="200 lists, 3 repeats, 300-list training of 5 rounds")
    args = parser.parse_args()
    if args.quick:
        args.lists, args.repeats, args.queries, args.rounds, args.repeats_train = 200, 3, 300, 5, 1
    if not args.training_only:
        gradient_calls(args)
    if not args.calls_only:
        training(args)


if __name__ == "__main__":
    main()
