"""Speed and peak memory of evaluating TREC files: gbrank against pytrec_eval and ranx.

One seeded run file (``--queries`` x ``--docs`` lines, scores with ties) and its qrels file
(``--judged`` judgements per query, graded 0-3, some relevant documents not retrieved) are
written once; then each tool reads both files and computes the same measures (AP, nDCG@10,
P@10, recall@100, RR), in a fresh process each time (peak memory is the process's maximum
resident set), interleaved, best of ``--repeats``.  Every tool's means are checked against
gbrank's (``ties="trec_eval"``, trec_eval's conventions), so the timed work is the same work.

    python benchmarks/bench_trec_files.py --save docs/results/trec_files.json
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

MEASURES = {  # gbrank name -> (pytrec_eval request, pytrec_eval output, ranx name)
    "map": ("map", "map", "map"),
    "ndcg_cut_10": ("ndcg_cut.10", "ndcg_cut_10", "ndcg@10"),
    "P_10": ("P.10", "P_10", "precision@10"),
    "recall_100": ("recall.100", "recall_100", "recall@100"),
    "recip_rank": ("recip_rank", "recip_rank", "mrr"),
}

TOOLS = {
    "gbrank": """
import gbrank
r = gbrank.evaluate_run(RUN, QRELS, list(M), ties="trec_eval", gain="linear")
means = {m: float(r.per_query[m].mean()) for m in M}
""",
    "pytrec_eval": """
import pytrec_eval
with open(RUN) as f:
    run = pytrec_eval.parse_run(f)
with open(QRELS) as f:
    qrels = pytrec_eval.parse_qrel(f)
res = pytrec_eval.RelevanceEvaluator(qrels, {v[0] for v in M.values()}).evaluate(run)
means = {m: sum(q[v[1]] for q in res.values()) / len(res) for m, v in M.items()}
""",
    "ranx": """
import ranx
qrels = ranx.Qrels.from_file(QRELS, kind="trec")
run = ranx.Run.from_file(RUN, kind="trec")
res = ranx.evaluate(qrels, run, [v[2] for v in M.values()])
means = {m: float(res[v[2]]) for m, v in M.items()}
""",
}


def write_files(folder: pathlib.Path, n_queries: int, n_docs: int, n_judged: int, seed: int):
    import pandas as pd

    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(n_queries), n_docs)
    doc = rng.integers(0, 50 * n_docs, size=n_queries * n_docs)
    # unique documents per query: offset each query's draws into its own block of ids
    doc = np.concatenate([rng.choice(50 * n_docs, n_docs, replace=False) for _ in range(n_queries)])
    score = rng.normal(size=len(qid))  # no ties: every tool orders them alike
    run = pd.DataFrame({"q": qid, "Q0": "Q0", "d": "D" + pd.Series(doc).astype(str), "rank": 0,
                        "s": score, "tag": "bench"})
    run.to_csv(folder / "run.txt", sep=" ", header=False, index=False)
    judged_docs = np.concatenate([
        np.concatenate([rng.choice(doc[q * n_docs:(q + 1) * n_docs], n_judged // 2, replace=False),
                        50 * n_docs + rng.choice(10 * n_docs, n_judged - n_judged // 2, replace=False)])
        for q in range(n_queries)])  # half retrieved, half never retrieved
    qrels = pd.DataFrame({"q": np.repeat(np.arange(n_queries), n_judged), "it": 0,
                          "d": "D" + pd.Series(judged_docs).astype(str),
                          "rel": rng.choice([0, 0, 1, 2, 3], size=n_queries * n_judged)})
    qrels.to_csv(folder / "qrels.txt", sep=" ", header=False, index=False)


def run_tool(name: str, run: pathlib.Path, qrels: pathlib.Path, threads: int) -> dict:
    code = f"""
import json, resource, time
RUN, QRELS, M = {str(run)!r}, {str(qrels)!r}, {MEASURES!r}
t0 = time.perf_counter()
{TOOLS[name]}
seconds = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"seconds": seconds, "peak_mib": peak, "means": means}}))
"""
    env = dict(os.environ, NUMBA_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("--judged", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--save", type=pathlib.Path)
    args = parser.parse_args(argv)
    tools = args.tools.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        folder = pathlib.Path(tmp)
        t0 = time.perf_counter()
        write_files(folder, args.queries, args.docs, args.judged, seed=0)
        print(f"wrote {args.queries * args.docs:,} run lines and {args.queries * args.judged:,} qrels lines "
              f"in {time.perf_counter() - t0:.0f} s", flush=True)
        run_tool("gbrank", folder / "run.txt", folder / "qrels.txt", args.threads)  # numba cache warm
        best: dict = {}
        for rep in range(args.repeats):
            for name in tools:
                res = run_tool(name, folder / "run.txt", folder / "qrels.txt", args.threads)
                print(f"repeat {rep}: {name:12s} {res['seconds']:7.1f} s  peak {res['peak_mib']:7.0f} MiB", flush=True)
                if name not in best or res["seconds"] < best[name]["seconds"]:
                    best[name] = res
    ref = best.get("gbrank", {}).get("means", {})
    for name, res in best.items():
        for m, v in res["means"].items():
            assert abs(v - ref[m]) < 1e-6, f"{name} disagrees with gbrank on {m}: {v} vs {ref[m]}"
    print("\nall tools agree on every mean (1e-6)")
    for name, res in best.items():
        ratio = res["seconds"] / best["gbrank"]["seconds"]
        print(f"{name:12s} {res['seconds']:7.1f} s ({ratio:4.2f}x gbrank)  peak {res['peak_mib']:7.0f} MiB")
    if args.save:
        import importlib.metadata as md

        doc = {"config": vars(args) | {"save": str(args.save)}, "best": best,
               "versions": {p: md.version(p) for p in ("gbrank", "numpy", "numba", "pandas", "pytrec-eval-terrier",
                                                        "ranx")},
               "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                           "load_average": os.getloadavg()}}
        args.save.parent.mkdir(parents=True, exist_ok=True)
        args.save.write_text(json.dumps(doc, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
