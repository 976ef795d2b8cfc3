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

``--cold`` measures instead what a fresh ``pip install`` gives: for each objective of
``--objectives`` (default ndcg, ap, rr, nrbp@0.95, nrbp@0.95+minmax), ``--repeats`` times, a
fresh process with ``NUMBA_CACHE_DIR`` set to a new empty directory times its first
``GBRanker(objective, n_estimators=20).fit`` on the bundled example
(``gbrank.datasets.load_example()``, 3,005 rows in 201 lists), which compiles every kernel the
fit runs, and then a second fit (the compile time is the difference); also the CPU time of
the fitting thread (compilation runs there, so it is less disturbed by other processes than
the wall clock) and the first-use log lines gbrank wrote.  Medians over the repeats, goal
<= 8 s.

Run ``bash scripts/setup.sh`` (which warms the cache with ``scripts/warmup.py``) first::

    python benchmarks/bench_first_use.py                      # table
    python benchmarks/bench_first_use.py --save out.json      # and JSON with versions
    NUMBA_CACHE_DIR=$(mktemp -d) python benchmarks/bench_first_use.py   # cold: every kernel compiled
    python benchmarks/bench_first_use.py --cold --repeats 3 --save docs/results/first_use_cold.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
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

COLD_OBJECTIVES = ("ndcg", "ap", "rr", "nrbp@0.95", "nrbp@0.95+minmax")
COLD_GOAL = 8.0

COLD = """
import json, logging, sys, time
lines = []
class Keep(logging.Handler):
    def emit(self, record):
        lines.append(record.getMessage())
logging.getLogger("gbrank").addHandler(Keep())
logging.getLogger("gbrank").setLevel(logging.INFO)
t = time.perf_counter()
import gbrank
from gbrank.datasets import load_example
out = {"import": time.perf_counter() - t}
train = load_example().train
def once():
    t, c = time.perf_counter(), time.thread_time()
    gbrank.GBRanker(sys.argv[1], n_estimators=20).fit(train.X, train.y, qid=train.qid)
    return time.perf_counter() - t, time.thread_time() - c
(out["first"], out["first_cpu"]), (out["second"], out["second_cpu"]) = once(), once()
out["compile"] = out["first"] - out["second"]
out["log"] = lines
print("RESULT " + json.dumps(out))
"""


def measure_cold(objective: str) -> dict:
    """One fresh process, an empty numba cache: the first and second fit of ``objective``."""
    with tempfile.TemporaryDirectory(prefix="gbrank-cold-cache-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        proc = subprocess.run([sys.executable, "-c", COLD, objective], capture_output=True, text=True, env=env)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"cold fit of {objective!r} failed:\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT "):])


def cold_table(objectives, repeats: int) -> dict:
    """Median (and range) of ``measure_cold`` over ``repeats`` runs of each objective,
    the objectives interleaved; prints the table."""
    runs = {obj: [] for obj in objectives}
    for _ in range(repeats):
        for obj in objectives:
            runs[obj].append(measure_cold(obj))
    print(f"{'objective':20s} {'first fit (s)':>14s} {'range':>13s} {'cpu (s)':>8s} {'second (s)':>11s}  goal")
    results = {}
    for obj, rs in runs.items():
        first = [r["first"] for r in rs]
        med = {key: statistics.median(r[key] for r in rs) for key in ("first", "first_cpu", "second", "compile",
                                                                     "import")}
        results[obj] = {"median": med, "runs": rs}
        verdict = "met" if med["first"] <= COLD_GOAL else "missed"
        print(f"{obj:20s} {med['first']:14.2f} {min(first):6.2f}-{max(first):<6.2f} {med['first_cpu']:8.2f} "
              f"{med['second']:11.2f}  <= {COLD_GOAL:g} s: {verdict}")
    notes = sorted({line for rs in runs.values() for r in rs for line in r["log"]})
    for line in notes:
        print("  logged:", line)
    return results


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
    parser.add_argument("--cold", action="store_true",
                        help="the first fit of each objective with an empty numba cache (module docstring)")
    parser.add_argument("--objectives", nargs="*", default=list(COLD_OBJECTIVES), help="objectives of --cold")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each objective with --cold (median)")
    args = parser.parse_args(argv)
    if args.cold:
        results = cold_table(args.objectives, args.repeats)
        if args.save:
            _save(args.save, {"cold_first_fit": results, "goal_seconds": COLD_GOAL})
        return results
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
        _save(args.save, {"results": results, "numba_cache_dir": os.environ.get("NUMBA_CACHE_DIR")})
    return results


def _save(path: str, record: dict) -> None:
    """``record`` with the versions, the machine and the command, as JSON."""
    import lightgbm
    import numba
    import numpy

    import gbrank

    record = dict(record, versions={"python": platform.python_version(), "gbrank": gbrank.__version__,
                                    "numba": numba.__version__, "numpy": numpy.__version__,
                                    "lightgbm": lightgbm.__version__},
                  machine={"cpus": os.cpu_count(), "load_average": os.getloadavg()},
                  command=" ".join([os.path.basename(sys.executable), *sys.argv]))
    with open(path, "w") as fh:
        json.dump(record, fh, indent=2)


if __name__ == "__main__":
    main()
