"""Compile gbrank's numba kernels into their on-disk cache once, so that a new process loads them.

``bash scripts/setup.sh`` runs it. numba caches each kernel per signature (argument types,
array layouts, read-only flags), and gbrank's wrappers cast every input to one fixed type
before calling a kernel, so a call on tiny data compiles exactly what real data needs.

Some kernels come in *variants*, each compiled on its own so that a first call compiles only
what it runs (docs/speed.md, "First use"), and each is warmed here:

- the gradients: two per (objective metric, bounding kind: none / linear map) at the lean
  settings (LightGBM's hessian, XGBoost's at sigma 1, no score normalisation: the defaults),
  one for the usual lists and one for lists that need an exp per pair (scores spanning
  >= 700 / sigma, the sigmoid table),
  and one kernel for every other setting (score normalisation, the distribution map, ...):
  each objective metric with and without each bounding map, at the default settings and with
  score normalisation;
- the evaluator: one per single metric code (a boosting library's early stopping on one
  metric) and one for any several metrics: ``evaluate`` of every evaluator metric together
  and of each alone;
- the bounds: one per metric code of ``bounds.prepare`` (with the distributions);
- the listwise objectives (``ListwiseObjective``: one variant per family), each family
  and each bounding.

Each public entry point is called once besides: ``evaluate_run`` (with a depth cut and a
duplicate check), the pair weightings (LambdaLoss, stochastic, ``mean``), ``GBRanker.fit`` /
``score`` with each installed boosting library, and ``MFRanker.fit`` when torch is installed.

    .venv/bin/python scripts/warmup.py          # a few minutes with an empty cache, ~10 s warm

``NUMBA_DEBUG_CACHE=1`` shows which kernels were loaded and which compiled and saved.
"""

from __future__ import annotations

import importlib.util
import time

import numpy as np


def _data():
    rng = np.random.default_rng(0)
    n_lists, per_list = 12, 8
    qid = np.repeat(np.arange(n_lists), per_list)
    X = rng.normal(size=(n_lists * per_list, 3))
    y = np.clip((X[:, 0] + rng.normal(size=len(X))).round(), 0, 3)
    return X, y, qid, np.arange(0, len(qid) + 1, per_list), rng.normal(size=len(qid))


def _single_metrics() -> list[str]:
    """One name of every metric the evaluator's kernels compute (each runs its own variant
    when asked for alone)."""
    from gbrank.metrics import KERNEL_CODES, METRICS

    suffix = {"k": "@5", "p": "@0.9"}
    return [rec.name + suffix.get(rec.param, "") for rec in METRICS.values() if rec.code in KERNEL_CODES]


def main() -> None:
    import gbrank
    from gbrank.bounds import BOUND_METRICS, BOUNDINGS
    from gbrank.lambdas import DELTA_METRICS, LISTWISE_FAMILIES, LambdaObjective
    from gbrank.metrics import METRICS

    X, y, qid, ptr, scores = _data()
    metrics = ["ndcg@10", "dcg", "ap", "rr", "rbp@0.8", "nrbp@0.9", "p@5", "r@5", "auc"]
    steps = {
        "evaluate": lambda: gbrank.evaluate(y, scores, qid, metrics=metrics),
        "evaluate (each metric alone)": lambda: [gbrank.evaluate(y, scores, qid, metrics=[m]) for m in _single_metrics()],
        "evaluate_run": lambda: gbrank.evaluate_run({"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}},
                                                    {"q1": {"d1": 0, "d3": 2}}, depth=2),
        "objectives": lambda: [LambdaObjective(m, p=0.9 if METRICS[m].param == "p" else None, bounding=b,
                                               score_normalization=full).gradients(s, y, ptr)
                               for m in DELTA_METRICS for b in (None, *(BOUNDINGS if m in BOUND_METRICS else ()))
                               for full in (False, True) for s in ((scores,) if full else (scores, 1000.0 * scores))],
        "pair weightings": lambda: [LambdaObjective("ndcg", truncation=3, random_state=0, **kw).gradients(scores, y, ptr)
                                    for kw in ({"weighting": "ndcg_loss2"}, {"weighting": "ndcg_loss2++"},
                                               {"stochastic": 1})]
        + [LambdaObjective(m, pair_method="mean", random_state=0).gradients(scores, y, ptr) for m in ("ndcg", "ap")],
        "listwise objectives": lambda: [gbrank.ListwiseObjective(f, bounding=b).gradients(scores, y, ptr)
                                        for f in LISTWISE_FAMILIES
                                        for b in ((None, *BOUNDINGS) if f.startswith("listwise_") else (None,))],
        "bounds.prepare": lambda: [gbrank.bounds.prepare(m, y, ptr, p=0.9 if METRICS[m].param == "p" else None,
                                                         distribution=True) for m in BOUND_METRICS],
    }
    tiny = {"min_data_in_leaf": 1, "min_data_in_bin": 1}
    for backend, module, params in (("lightgbm", "lightgbm", tiny), ("xgboost", "xgboost", None)):
        if importlib.util.find_spec(module) is not None:
            steps[f"GBRanker.fit ({backend})"] = (
                lambda b=backend, p=params: gbrank.GBRanker("ndcg", backend=b, n_estimators=2, backend_params=p)
                .fit(X, y, qid=qid).score(X, y, qid=qid))
    if importlib.util.find_spec("torch") is not None:
        cells = np.random.default_rng(0).choice(30 * 20, size=200, replace=False)
        pairs = np.column_stack([cells // 20, cells % 20])
        steps["MFRanker.fit"] = lambda: gbrank.MFRanker(loss="lambda_ndcg", epochs=1, verbose=0,
                                                        random_state=0).fit(pairs)
    for name, step in steps.items():
        start = time.perf_counter()
        step()
        print(f"warm-up {name}: {time.perf_counter() - start:.1f} s", flush=True)


if __name__ == "__main__":
    main()
