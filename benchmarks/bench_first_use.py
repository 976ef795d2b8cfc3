"""First use: how long a new process waits for gbrank's first calls, with a warm numba cache.

Each measurement runs in a fresh Python process (``sys.executable``), so that numba must load
(or, with an empty cache, compile) its kernels again:

- ``import gbrank``;
- the first ``GBRanker.fit`` on small data (5 rounds, 40 lists of 20 rows, float32 features,
  int32 query ids as loaders give them); compile/load time = first fit - second fit;
- the first ``gbrank.evaluate`` (nDCG@10, AP, RR, nRBP(0.9)), and the second;
- the first ``MFRanker.fit`` (3 epochs on 50 users x 40 items; skipped without torch);
- a first small ``GridSearchCV`` over ``GBRanker`` with ``GroupKFold`` (3 folds x 2 settings,
  metadata routing), and a second one in the same process.

Run ``bash scripts/setup.sh`` (which warms the cache with ``scripts/warmup.py``) first::

    python benchmarks/bench_first_use.py                      # table
    python benchmarks/bench_first_use.py --save out.json      # and JSON with versions
    NUMBA_CACHE_DIR=$(mktemp -d) python benchmarks/bench_first_use.py   # cold: every kernel compiled
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

DATA = """
import numpy as np
rng = np.random.default_rng(0)
n_lists, per_list = 40, 20
qid = np.repeat(np.arange(n_lists, dtype=np.int32), per_list)
X = rng.normal(size=(n_lists * per_list, 8)).astype(np.float32)
y = np.clip((X[:, 0] + rng.normal(size=len(X))).round(), 0, 3).astype(np.int32)
"""

SNIPPETS = {
    "import": """
t = time.perf_counter()
import gbrank
out["first"] = time.perf_counter() - t
""",
    "fit": DATA + """
import gbrank
def once():
    t = time.perf_counter()
    gbrank.GBRanker("ndcg", n_estimators=5, random_state=0).fit(X, y, qid=qid)
    return time.perf_counter() - t
out["first"], out["second"] = once(), once()
""",
    "evaluate": DATA + """
import gbrank
s = rng.normal(size=len(y))
def once():
    t = time.perf_counter()
    gbrank.evaluate(y, s, qid, metrics=["ndcg@10", "ap", "rr", "nrbp@0.9"])
    return time.perf_counter() - t
out["first"], out["second"] = once(), once()
""",
    "mf": """
import numpy as np
try:
    import torch  # noqa: F401
except ImportError:
    out["skipped"] = "torch is not installed"
else:
    import gbrank
    rng = np.random.default_rng(0)
    pairs = rng.choice(50 * 40, size=600, replace=False)
    X = np.column_stack([pairs // 40, pairs % 40])
    def once():
        t = time.perf_counter()
        gbrank.MFRanker(loss="lambda_ndcg", epochs=3, verbose=0, random_state=0).fit(X)
        return time.perf_counter() - t
    out["first"], out["second"] = once(), once()
""",
    "grid": DATA + """
import gbrank, sklearn
from sklearn.model_selection import GridSearchCV, GroupKFold
sklearn.set_config(enable_metadata_routing=True)
def once():
    est = gbrank.GBRanker("ndcg", n_estimators=5, random_state=0)
    est.set_fit_request(qid=True).set_score_request(qid=True)
    t = time.perf_counter()
    GridSearchCV(est, {"learning_rate": [0.1, 0.2]}, cv=GroupKFold(n_splits=3)).fit(X, y, qid=qid, groups=qid)
    return time.perf_counter() - t
out["first"], out["second"] = once(), once()
""",
}

GOALS = {"import": ("first", 0.5), "fit": ("load", 2.0), "grid": ("first", 5.0)}


def measure(name: str) -> dict:
    code = "import json, time\nout = {}\n" + SNIPPETS[name] + "\nprint('RESULT ' + json.dumps(out))\n"
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    wall = time.perf_counter() - start
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"{name} failed:\n{proc.stderr[-3000:]}")
    out = json.loads(lines[-1][len("RESULT "):])
    out["process_seconds"] = wall
    if "second" in out:
        out["load"] = out["first"] - out["second"]
    return out


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", choices=sorted(SNIPPETS), help="measure these only")
    parser.add_argument("--save", help="write the results, with versions, to this JSON file")
    args = parser.parse_args(argv)
    results = {name: measure(name) for name in (args.only or SNIPPETS)}
    print(f"{'measurement':12s} {'first (s)':>10s} {'second (s)':>11s} {'load (s)':>9s}  goal")
    for name, r in results.items():
        if "skipped" in r:
            print(f"{name:12s} skipped: {r['skipped']}")
            continue
        fmt = lambda key: f"{r[key]:.2f}" if key in r else "-"  # noqa: E731
        goal = GOALS.get(name)
        goal_text = f"{goal[0]} < {goal[1]} s: {'met' if r[goal[0]] < goal[1] else 'missed'}" if goal else ""
        print(f"{name:12s} {fmt('first'):>10s} {fmt('second'):>11s} {fmt('load'):>9s}  {goal_text}")
    if args.save:
        import numba
        import numpy
        import gbrank
        record = {"results": results, "numba_cache_dir": os.environ.get("NUMBA_CACHE_DIR"),
                  "versions": {"python": platform.python_version(), "gbrank": gbrank.__version__,
                               "numba": numba.__version__, "numpy": numpy.__version__},
                  "machine": {"cpus": os.cpu_count(), "load_average": os.getloadavg()},
                  "command": " ".join([os.path.basename(sys.executable), *sys.argv])}
        with open(args.save, "w") as fh:
            json.dump(record, fh, indent=2)
    return results


if __name__ == "__main__":
    main()
