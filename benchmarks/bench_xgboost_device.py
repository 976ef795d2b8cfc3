"""XGBoost on a GPU with a gbrank objective: gradients on the device against the built-in.

Three ways to train the same model on ``--device`` (default cuda), interleaved in one
process (alternating order, ``--repeats`` times; the ratio of medians is the figure):

- ``builtin``: XGBoost's ``rank:ndcg`` (top-32 pairs per item, both normalisations: the
  configuration ``LambdaObjective.like_xgboost()`` reproduces);
- ``gbrank-device``: ``LambdaObjective.like_xgboost()`` through
  ``gbrank.backends._xgboost.train_xgboost_device``: margins kept on the device, gradients
  computed there with torch (float64), handed to ``Booster.boost`` as device arrays;
- ``gbrank-host``: the same objective through ``xgboost.train(obj=XGBoostObjective(...))``:
  XGBoost copies its predictions to the host every round, numba computes the gradients on
  the CPU (all cores) and they are copied back.

It also prints what the three models are worth (nDCG@10 on a held-out synthetic set) and,
at the margins after ``--rounds`` rounds, the largest difference between the torch
gradients on the device and the numba ones on the host, and the time of one gradient call
of each.  On a machine without CUDA, ``--device cpu`` runs the same comparison on the CPU.

    python benchmarks/bench_xgboost_device.py --repeats 5 --save docs/results/xgboost_device.json
    python benchmarks/bench_xgboost_device.py --quick --device cpu     # smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_objective_speed import XGB_TOPK, _interleaved, synthetic_set  # noqa: E402


def _median_ratio(times, ref, ours):
    return float(np.median(times[ours]) / np.median(times[ref]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--queries", type=int, default=6000, help="training queries (60-180 documents each)")
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="600 queries, 10 rounds, 1 repeat")
    ap.add_argument("--save", help="write the figures to this JSON file")
    args = ap.parse_args(argv)
    if args.quick:
        args.queries, args.rounds, args.repeats = 600, 10, 1

    import torch
    import xgboost as xgb

    from gbrank import evaluate
    from gbrank.backends import XGBoostMetric, XGBoostObjective
    from gbrank.backends._xgboost import train_xgboost_device, xgboost_params
    from gbrank.lambdas import LambdaObjective
    from gbrank.torch._boosting import PaddedLists, lambda_gradients

    gpu = args.device.startswith("cuda")
    X, y, sizes = synthetic_set(args.queries)
    Xt, yt, st = synthetic_set(max(200, args.queries // 5))
    Xt, yt, st = Xt[::-1].copy(), yt[::-1].copy(), st[::-1].copy()  # another order: not the training lists
    ptr = np.concatenate(([0], np.cumsum(sizes)))
    base = dict(tree_method="hist", max_depth=6, eta=0.1, device=args.device, base_score=0.0, seed=0,
                disable_default_eval_metric=1)
    builtin = dict(base, objective="rank:ndcg", **XGB_TOPK)
    objective = LambdaObjective.like_xgboost()
    host_params, host_obj = xgboost_params(base, objective)
    data = torch.as_tensor(X.astype(np.float32), device=args.device) if gpu else X.astype(np.float32)
    dtrain = xgb.QuantileDMatrix(data, label=y.astype(np.float32), group=sizes)
    metric = XGBoostMetric(["ndcg@10"])
    models = {}

    def sync():
        if gpu:
            torch.cuda.synchronize()

    def run_builtin(rounds):
        t = time.perf_counter()
        models["builtin"] = xgb.train(builtin, dtrain, num_boost_round=rounds)
        sync()
        return time.perf_counter() - t

    def run_device(rounds):
        t = time.perf_counter()
        models["gbrank-device"] = train_xgboost_device(base, X, y, ptr, None, [], objective, metric, rounds,
                                                       None, False)[0]
        sync()
        return time.perf_counter() - t

    def run_host(rounds):
        t = time.perf_counter()
        models["gbrank-host"] = xgb.train(host_params, dtrain, num_boost_round=rounds, obj=host_obj)
        sync()
        return time.perf_counter() - t

    runs = {"builtin": run_builtin, "gbrank-device": run_device, "gbrank-host": run_host}
    for f in runs.values():  # warm-up: CUDA context, numba cache, XGBoost's first-round setup
        f(2)
    times = _interleaved({k: (lambda f=f: f(args.rounds)) for k, f in runs.items()}, args.repeats)

    qid = np.repeat(np.arange(len(st)), st)
    quality = {}
    for name, booster in models.items():
        pred = booster.predict(xgb.DMatrix(Xt))
        quality[name] = float(evaluate(yt, pred, qid, ["ndcg@10"]).mean()["ndcg@10"])

    # one gradient call at the trained model's training margins: torch on the device, numba on the host
    margin = models["gbrank-device"].predict(xgb.DMatrix(X), output_margin=True).astype(np.float64)
    lists = PaddedLists(y, ptr, truncation=objective.truncation, device=args.device)
    dev_margin = torch.as_tensor(margin, device=args.device)
    param = objective.kernel_parameter(y)
    g_dev, h_dev = lambda_gradients(objective, dev_margin, lists, parameter=param)
    g_host, h_host = objective.gradients(margin, y, ptr)
    diff = max(float(np.abs(g_dev.cpu().numpy() - g_host).max()), float(np.abs(h_dev.cpu().numpy() - h_host).max()))

    def call_device():
        sync()
        t = time.perf_counter()
        lambda_gradients(objective, dev_margin, lists, parameter=param)
        sync()
        return time.perf_counter() - t

    def call_host():
        t = time.perf_counter()
        objective.gradients(margin, y, ptr)
        return time.perf_counter() - t

    calls = _interleaved({"device": call_device, "host": call_host}, 9)

    med = {k: float(np.median(v)) for k, v in times.items()}
    out = {
        "command": "python benchmarks/bench_xgboost_device.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "device": torch.cuda.get_device_name(0) if gpu else platform.processor() or platform.machine(),
        "cpus": os.cpu_count(), "xgboost": xgb.__version__, "torch": torch.__version__,
        "queries": int(len(sizes)), "rows": int(len(y)), "rounds": args.rounds, "repeats": args.repeats,
        "params": builtin, "train_s": times, "median_s": med,
        "ratio_device_to_builtin": _median_ratio(times, "builtin", "gbrank-device"),
        "ratio_host_to_builtin": _median_ratio(times, "builtin", "gbrank-host"),
        "ndcg10_heldout": quality, "max_grad_diff_torch_vs_numba": diff,
        "gradient_call_s": {k: float(np.median(v)) for k, v in calls.items()},
    }
    print(f"{out['device']}: {out['queries']} queries, {out['rows']} rows, {args.rounds} rounds, "
          f"median of {args.repeats}")
    for name in runs:
        print(f"  {name:14s} {med[name]:7.2f} s  ({min(times[name]):.2f}-{max(times[name]):.2f})  "
              f"ratio {med[name] / med['builtin']:.3f}  held-out nDCG@10 {quality[name]:.4f}")
    print(f"  one gradient call: torch on {args.device} {out['gradient_call_s']['device'] * 1e3:.1f} ms, "
          f"numba on the host {out['gradient_call_s']['host'] * 1e3:.1f} ms; largest |difference| {diff:.2e}")
    if args.save:
        with open(args.save, "w") as f:
            json.dump(out, f, indent=1)
    return out


if __name__ == "__main__":
    main()
