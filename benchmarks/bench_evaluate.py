"""Time ``gbrank.evaluate`` against pytrec_eval and ranx on the same lists and metrics.

    python benchmarks/bench_evaluate.py                       # 10,000 lists x 100 items
    python benchmarks/bench_evaluate.py --lists 1000 --save bench-output/evaluate.json

Random tie-free scores and graded labels 0..4, eight metrics that all three libraries
compute (nDCG, nDCG@5, nDCG@10, AP, AP@10, RR, P@10, R@10), one process:

1. gbrank's numba compilation, timed on a tiny input (the first call), and whether the
   machine code came from numba's on-disk cache;
2. best-of-N wall time of ``gbrank.evaluate`` on numpy arrays (validation, grouping, the
   kernels and the per-query table included);
3. pytrec_eval: ``RelevanceEvaluator(qrels, measures)`` + ``.evaluate(run)`` on ready
   dicts ("evaluation"), and the same plus building the dicts from the arrays;
4. ranx: ``evaluate(qrels, run, metrics)`` on ready ``Qrels``/``Run`` objects, and the same
   plus building them (from dicts, and from pandas), after a warm-up call that compiles
   ranx's own numba code.

The per-metric means of the three libraries are checked against each other (gbrank with
``gain="linear", empty="zero"``, trec_eval's conventions) so that the timings compare the
same computation.  ``--save`` writes the table with the configuration and versions.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import json
import os
import pathlib
import platform
import sys
import time

import numpy as np

# gbrank name -> (pytrec_eval measure, ranx metric)
METRICS = {
    "ndcg": ("ndcg", "ndcg"),
    "ndcg@5": ("ndcg_cut_5", "ndcg@5"),
    "ndcg@10": ("ndcg_cut_10", "ndcg@10"),
    "ap": ("map", "map"),
    "ap@10": ("map_cut_10", "map@10"),
    "rr": ("recip_rank", "mrr"),
    "p@10": ("P_10", "precision@10"),
    "r@10": ("recall_10", "recall@10"),
}
TREC_MEASURES = {"ndcg", "ndcg_cut.5,10", "map", "map_cut.10", "recip_rank", "P.10", "recall.10"}


def make_data(n_lists: int, n_items: int, seed: int):
    rng = np.random.default_rng(seed)
    n = n_lists * n_items
    qid = np.repeat(np.arange(n_lists, dtype=np.int64), n_items)
    scores = rng.random(n)
    relevant = rng.random(n) < rng.uniform(0.0, 0.4, n_lists).repeat(n_items)
    labels = np.where(relevant, rng.integers(1, 5, n), 0).astype(np.float64)
    return labels, scores, qid


def best_of(repeats: int, fn):
    times, value = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t0)
    return min(times), value


def numba_compile_time():
    """First call of gbrank.evaluate on a tiny input: compilation or cache load."""
    t0 = time.perf_counter()
    import gbrank
    from gbrank.metrics import evaluate_lists

    t_import = time.perf_counter() - t0
    t0 = time.perf_counter()
    gbrank.evaluate([1.0, 0.0, 2.0], [0.3, 0.2, 0.1], [0, 0, 0], list(METRICS), gain="linear")
    t_first = time.perf_counter() - t0
    stats = evaluate_lists.stats
    hits, misses = sum(stats.cache_hits.values()), sum(stats.cache_misses.values())
    source = "on-disk cache" if hits and not misses else ("compiled" if misses else "unknown")
    return t_import, t_first, source, str(stats.cache_path)


def trec_dicts(labels, scores, qid, n_items):
    """qrels and run dicts from the arrays (rows of one list are contiguous here)."""
    n_lists = len(labels) // n_items
    docids = [f"d{j}" for j in range(n_items)]
    lab = labels.astype(np.int64).reshape(n_lists, n_items).tolist()
    sco = scores.reshape(n_lists, n_items).tolist()
    qids = [f"q{q}" for q in qid[::n_items].tolist()]
    qrels = {q: dict(zip(docids, row)) for q, row in zip(qids, lab)}
    run = {q: dict(zip(docids, row)) for q, row in zip(qids, sco)}
    return qrels, run


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lists", type=int, default=10_000)
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip", nargs="*", default=[], choices=["pytrec_eval", "ranx"])
    parser.add_argument("--save", type=pathlib.Path, help="write the results as JSON here")
    args = parser.parse_args(argv)

    t_import, t_first, source, cache_path = numba_compile_time()
    import numba

    import gbrank

    labels, scores, qid = make_data(args.lists, args.items, args.seed)
    names = list(METRICS)
    rows = []  # (library, what, seconds)
    means = {}

    t, result = best_of(args.repeats, lambda: gbrank.evaluate(
        labels, scores, qid, names, gain="linear", empty="zero", ties="average"))
    rows.append(("gbrank", "evaluate(arrays)", t, None))
    means["gbrank"] = result.mean().to_dict()

    if "pytrec_eval" not in args.skip:
        import pytrec_eval

        t_dicts, (qrels, run) = best_of(args.repeats, lambda: trec_dicts(labels, scores, qid, args.items))

        def trec_eval():
            return pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES).evaluate(run)

        t, per_query = best_of(args.repeats, trec_eval)
        rows.append(("pytrec_eval", "evaluator + evaluate(dicts)", t, None))
        rows.append(("pytrec_eval", "+ building the dicts", t + t_dicts, None))
        means["pytrec_eval"] = {g: float(np.mean([v[m] for v in per_query.values()]))
                                for g, (m, _) in METRICS.items()}
        del per_query

    if "ranx" not in args.skip:
        import pandas as pd
        import ranx

        if "pytrec_eval" in args.skip:
            t_dicts, (qrels, run) = best_of(args.repeats, lambda: trec_dicts(labels, scores, qid, args.items))
        ranx_metrics = [r for _, r in METRICS.values()]
        # warm-up: ranx compiles (or loads) its own numba code.  ranx.evaluate sets numba's
        # global thread count to 1 for fewer than 10 queries, so warm up with 10 and check
        # that every library below runs with the same threads.
        threads = numba.get_num_threads()
        t0 = time.perf_counter()
        ranx.evaluate(ranx.Qrels({f"q{i}": {"a": 1} for i in range(10)}),
                      ranx.Run({f"q{i}": {"a": 1.0, "b": 0.5} for i in range(10)}), ranx_metrics)
        t_ranx_first = time.perf_counter() - t0
        assert numba.get_num_threads() == threads, "the ranx warm-up changed numba's threads"

        def ranx_objects():
            return ranx.Qrels.from_dict(qrels), ranx.Run.from_dict(run)

        t_objects, (rq, rr) = best_of(args.repeats, ranx_objects)
        frame_q = pd.DataFrame({  # ranx wants object (str) id columns
            "q_id": pd.Series(np.char.add("q", qid.astype(str)), dtype=object),
            "doc_id": pd.Series(np.char.add("d", np.tile(np.arange(args.items), args.lists).astype(str)),
                                dtype=object),
            "score": labels.astype(np.int64),
        })
        frame_r = frame_q.assign(score=scores)

        def ranx_frames():
            return ranx.Qrels.from_df(frame_q), ranx.Run.from_df(frame_r)

        t_frames, _ = best_of(args.repeats, ranx_frames)
        t, ranx_means = best_of(args.repeats, lambda: ranx.evaluate(rq, rr, ranx_metrics))
        rows.append(("ranx", "evaluate(Qrels, Run)", t, None))
        rows.append(("ranx", "+ Qrels/Run from dicts", t + t_objects, None))
        rows.append(("ranx", "+ building dicts and Qrels/Run", t + t_objects + t_dicts, None))
        rows.append(("ranx", "+ Qrels/Run from pandas", t + t_frames, None))
        means["ranx"] = {g: float(ranx_means[r]) for g, (_, r) in METRICS.items()}

    base = rows[0][2]
    print(f"gbrank.evaluate on {args.lists:,} lists x {args.items} items x {len(names)} metrics "
          f"({', '.join(names)}); best of {args.repeats}; numba threads: "
          f"{numba.get_num_threads()}")
    print(f"import gbrank: {t_import:.2f} s; first call on a tiny input: {t_first:.2f} s ({source}; "
          f"cache {cache_path})")
    if "ranx" not in args.skip:
        print(f"ranx first call on a tiny input (its numba compilation or cache): {t_ranx_first:.2f} s")
    print()
    print(f"| {'library':<12} | {'what is timed':<34} | {'seconds':>8} | {'x gbrank':>8} |")
    print(f"|{'-' * 14}|{'-' * 36}|{'-' * 9}:|{'-' * 9}:|")
    for lib, what, t, _ in rows:
        print(f"| {lib:<12} | {what:<34} | {t:8.3f} | {t / base:8.1f} |")
    print()
    print("means (the libraries must agree on the same computation):")
    libs = list(means)
    print(f"  {'metric':<8}" + "".join(f"{lib:>14}" for lib in libs))
    worst = 0.0
    for g in names:
        vals = [means[lib][g] for lib in libs]
        worst = max(worst, max(vals) - min(vals))
        print(f"  {g:<8}" + "".join(f"{v:14.6f}" for v in vals))
    print(f"largest difference between libraries: {worst:.2e}")

    if args.save:
        args.save.parent.mkdir(parents=True, exist_ok=True)
        versions = {p: _version(p) for p in ("numpy", "numba", "pandas", "pytrec_eval-terrier", "ranx")}
        args.save.write_text(json.dumps({
            "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
            "config": vars(args) | {"save": str(args.save), "metrics": METRICS},
            "versions": versions | {"python": platform.python_version(), "gbrank": gbrank.__version__},
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
            "import_s": t_import, "first_call_s": t_first, "first_call_source": source,
            "timings": [{"library": lib, "what": what, "seconds": t} for lib, what, t, _ in rows],
            "means": means,
        }, indent=2))
    return 0


def _version(package: str) -> str | None:
    try:
        return md.version(package)
    except md.PackageNotFoundError:
        return None


if __name__ == "__main__":
    sys.exit(main())
