"""Speed of the working tree against a base commit: did a change slow the kernels down?

The base commit's package is copied beside a checkout of it and renamed ``gbrank_base``, so
that one process imports both trees (each compiles into, and loads from, its own numba
cache) and times them call by call, alternating: a change of load or clock during the run
falls on both, which separate processes on a shared machine do not give (their best-of-7
gradient calls differed by up to 1.6x from one process to the next). Three parts:

* ``calls``: one gradient call of each objective on the MSLR-sized synthetic set of
  ``bench_objective_speed.py``, base and new alternating ``--calls`` times, for the default
  LambdaRank metrics, LightGBM's configuration, bounded variants, the LambdaLoss weighting,
  the drawn pairs of ``pair_method="mean"``, the unbiased objective, the smoothed listwise
  objectives and ``evaluate``;
* ``training``: ``bench_objective_speed.py``'s LightGBM training runs (the built-in
  ``lambdarank`` and gbrank's dnDCG configured alike, truncation 30 and off, ``--rounds``
  rounds), the built-in, base and new interleaved ``--repeats`` times, so that both trees'
  gbrank / built-in ratio of medians (the figure that script reports) comes from one run;
* ``compile``: the import and first gradient call of four metrics (``--compile-metrics``) with an empty numba cache
  (compiles) and again from the cache that run filled, in fresh processes of each tree
  alternating (``--compile-pairs``).

Each row prints both trees' medians and new / base, the ratio of medians, with the middle
half (quartiles) of the ratios of adjacent base and new timings in brackets.

    python benchmarks/bench_against_commit.py --base ce19cfe --worktree /tmp/base

``--cases`` times some of the call cases only (``--cases ndcg ap``). ``--worktree`` keeps the
base checkout, its renamed copy and their numba caches for the next run; without it a
temporary one is made and removed. Run it on a quiet machine, and first
against ``--base HEAD`` with nothing changed: identical code compiled into two places is not
equally fast (on a shared 2-core machine some gradient calls differed by up to 20 % between
the two copies, the same way in two runs), and that floor, not zero, is what a change is
read against (docs/speed.md, "Settings records").
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_objective_speed import COMPILE_SNIPPET, _interleaved, synthetic_set  # noqa: E402
BASE_PACKAGE = "gbrank_base"

#: case name -> the objective (``gradients(scores, y, ptr)``) built from package ``g``, or "evaluate"
CALL_CASES = {
    "ndcg": 'g.lambdas.LambdaObjective("ndcg")',
    "ap": 'g.lambdas.LambdaObjective("ap")',
    "rr": 'g.lambdas.LambdaObjective("rr")',
    "nrbp@0.95": 'g.lambdas.LambdaObjective("nrbp@0.95")',
    "err": 'g.lambdas.LambdaObjective("err")',
    "ndcg like LightGBM (trunc 30)": "g.lambdas.LambdaObjective.like_lightgbm()",
    "ndcg+minmax": 'g.lambdas.LambdaObjective("ndcg+minmax")',
    "nrbp@0.95+distribution": 'g.lambdas.LambdaObjective("nrbp@0.95+distribution")',
    "ndcg, ndcg_loss2++ weighting": 'g.lambdas.LambdaObjective("ndcg", weighting="ndcg_loss2++")',
    "ndcg, mean pairs (4 per doc)": 'g.lambdas.LambdaObjective("ndcg", pair_method="mean", pairs_per_doc=4, '
                                    'random_state=0)',
    "unbiased ndcg": 'g.lambdas.UnbiasedLambdaObjective("ndcg", positions=positions)',
    "listwise ndcg": 'g.lambdas.ListwiseObjective("ndcg")',
    "listwise ap": 'g.lambdas.ListwiseObjective("ap")',
    "evaluate ndcg@10 ap rr": "evaluate",
}

# bench_objective_speed.py's first-use snippet (its last line: the seconds), then where gbrank came from
COMPILE_CHILD = COMPILE_SNIPPET + "import gbrank\nprint(gbrank.__file__)\n"
#: the metrics whose first call ``COMPILE_SNIPPET`` compiles, as written in it
SNIPPET_METRICS = ("ndcg", "ap", "rr", "nrbp@0.9")


def compile_child(metrics=SNIPPET_METRICS) -> str:
    """``COMPILE_CHILD`` with the first call of ``metrics`` instead of the snippet's four."""
    source = lambda ms: "(" + ", ".join(json.dumps(m) for m in ms) + ("," if len(ms) == 1 else "") + ")"  # noqa: E731
    if source(SNIPPET_METRICS) not in COMPILE_CHILD:
        raise RuntimeError("COMPILE_SNIPPET of bench_objective_speed.py no longer lists its metrics as "
                           f"{source(SNIPPET_METRICS)}: update SNIPPET_METRICS")
    return COMPILE_CHILD.replace(source(SNIPPET_METRICS), source(tuple(metrics)))


def _load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


# ---- the two trees ----------------------------------------------------------------------

def base_checkout(ref: str, worktree: str | None) -> tuple[pathlib.Path, bool]:
    """The checkout of ``ref``: ``worktree`` when it already holds it, else a new one
    (temporary unless ``worktree`` names where to keep it). Returns (path, remove after)."""
    commit = subprocess.run(["git", "rev-parse", "--verify", f"{ref}^{{commit}}"], cwd=ROOT, capture_output=True,
                            text=True)
    if commit.returncode != 0:
        raise SystemExit(f"--base {ref!r} is not a commit of {ROOT}: {commit.stderr.strip()}")
    sha = commit.stdout.strip()
    if worktree is not None and pathlib.Path(worktree).exists():
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=worktree, capture_output=True, text=True).stdout.strip()
        if head != sha:
            raise SystemExit(f"--worktree {worktree} holds {head[:10] or 'no checkout'}, not {ref} ({sha[:10]}); "
                             f"give another folder or remove it with: git worktree remove --force {worktree}")
        return pathlib.Path(worktree), False
    path = pathlib.Path(worktree) if worktree else pathlib.Path(tempfile.mkdtemp(prefix="gbrank-base-")) / "tree"
    subprocess.run(["git", "worktree", "add", "--detach", str(path), sha], cwd=ROOT, check=True, capture_output=True)
    return path, worktree is None


def renamed_copy(tree: pathlib.Path) -> pathlib.Path:
    """``tree/gbrank`` copied to ``tree/.against/gbrank_base`` with its own imports of gbrank
    (and the module paths of its lazy attributes) renamed, so that it imports beside the
    working tree's gbrank. Made once; its numba cache is kept beside it. Returns the folder
    to put on ``sys.path``."""
    home = tree / ".against"
    dest = home / BASE_PACKAGE
    if not dest.exists():
        shutil.copytree(tree / "gbrank", dest, ignore=shutil.ignore_patterns("__pycache__"))
        for f in dest.rglob("*.py"):
            text = f.read_text()
            text = re.sub(r"^(\s*)(from|import) gbrank\b", rf"\1\2 {BASE_PACKAGE}", text, flags=re.M)
            text = re.sub(r"""(["'])gbrank([.:])""", rf"\1{BASE_PACKAGE}\2", text)
            f.write_text(text)
    return home


def _packages(base_home: pathlib.Path) -> dict:
    """tree -> its imported package (the working tree's ``gbrank`` and ``gbrank_base``)."""
    import importlib

    sys.path.insert(0, str(base_home))
    out = {}
    for name, pkg in (("base", BASE_PACKAGE), ("new", "gbrank")):
        g = importlib.import_module(pkg)
        for sub in ("lambdas", "evaluation", "backends"):
            importlib.import_module(f"{pkg}.{sub}")
        out[name] = g
    where = pathlib.Path(out["new"].__file__).resolve()
    if ROOT.resolve() not in where.parents:
        raise SystemExit(f"gbrank was imported from {where}, not from the working tree {ROOT}")
    return out


# ---- the measurements -------------------------------------------------------------------

def paired_rows(times: dict, keys) -> dict:
    """key -> both trees' medians, new / base of the medians, and the quartiles of the
    ratios of adjacent timings (``times[tree][key]``: lists of the same length)."""
    rows = {}
    for key in keys:
        base, new = np.asarray(times["base"][key]), np.asarray(times["new"][key])
        pairs = new / base
        rows[key] = {"base_s": float(np.median(base)), "new_s": float(np.median(new)),
                     "ratio": float(np.median(new) / np.median(base)),
                     "pair_quartiles": [float(q) for q in np.quantile(pairs, [0.25, 0.75])],
                     "base_all_s": base.tolist(), "new_all_s": new.tolist()}
    return rows


def _print(title: str, rows: dict, unit: float, unit_name: str) -> None:
    if title:
        print(title)
    for key, r in rows.items():
        lo, hi = r["pair_quartiles"]
        print(f"  {key:32s} base {r['base_s'] * unit:9.2f} {unit_name}   new {r['new_s'] * unit:9.2f} {unit_name}"
              f"   new/base {r['ratio']:.3f}  ({lo:.3f}-{hi:.3f})", flush=True)


def _timed(call) -> float:
    t = time.perf_counter()
    call()
    return time.perf_counter() - t


def gradient_calls(packages: dict, y, ptr, scores, repeats: int, cases=CALL_CASES) -> dict:
    qid = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
    positions = np.concatenate([np.arange(1, n + 1) for n in np.diff(ptr)])  # each list as displayed
    times = {"base": {}, "new": {}}
    for case, expr in cases.items():
        calls = {}
        for tree, g in packages.items():
            if expr == "evaluate":
                calls[tree] = lambda g=g: g.evaluation.evaluate(y, scores, qid, ["ndcg@10", "ap", "rr"])
            else:
                obj = eval(expr, {"g": g, "positions": positions})
                calls[tree] = lambda obj=obj: obj.gradients(scores, y, ptr)
            calls[tree]()  # compiled or loaded from the tree's cache; bounds and tables prepared
        for tree, ts in _interleaved({k: (lambda c=c: _timed(c)) for k, c in calls.items()}, repeats).items():
            times[tree][case] = ts
    return times


def training_runs(packages: dict, X, y, sizes, rounds: int, repeats: int, threads: int = 2) -> dict:
    """The runs of ``bench_objective_speed.py --training-only --library lightgbm``: built-in
    ``lambdarank`` and both trees' dnDCG configured alike, interleaved."""
    import lightgbm as lgb

    dataset = lgb.Dataset(X, y, group=sizes, params={"verbosity": -1, "max_bin": 255}, free_raw_data=False)
    dataset.construct()
    params = dict(num_leaves=31, learning_rate=0.1, num_threads=threads, verbosity=-1, force_col_wise=True, seed=0)

    def train(objective, extra, n):
        return _timed(lambda: lgb.train(dict(params, objective=objective, **extra), dataset, num_boost_round=n))

    out = {}
    for label, trunc in (("truncation 30", 30), ("truncation off", None)):
        level = {"lambdarank_truncation_level": 30 if trunc else int(sizes.max())}
        runs = {"built-in": ("lambdarank", level)}
        for tree, g in packages.items():
            runs[tree] = (g.backends.LightGBMObjective(g.lambdas.LambdaObjective(
                "ndcg", truncation=trunc, score_normalization=True, list_normalization=True,
                score_normalization_eps=g.lambdas._objective.LIGHTGBM_EPS)), {})
        for objective, extra in runs.values():  # warm-up: LightGBM's first-iteration set-up, numba's cache
            train(objective, extra, 2)
        out[label] = _interleaved({k: (lambda a=a: train(*a, rounds)) for k, a in runs.items()}, repeats)
        print(f"  {label}: {repeats} x 3 runs done, load {_load()}", file=sys.stderr, flush=True)
    return out


def compile_times(trees: dict, pairs: int, work: pathlib.Path, metrics=SNIPPET_METRICS) -> dict:
    """tree -> {"empty cache": [...], "from the cache": [...]} of fresh processes, alternating."""
    times = {tree: {"empty cache": [], "from the cache": []} for tree in trees}
    for k in range(pairs):
        for tree in (("base", "new") if k % 2 == 0 else ("new", "base")):
            with tempfile.TemporaryDirectory(dir=work) as cache:
                env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(trees[tree]))
                for key in ("empty cache", "from the cache"):
                    proc = subprocess.run([sys.executable, "-c", compile_child(metrics)], cwd=trees[tree], env=env,
                                          capture_output=True, text=True)
                    if proc.returncode != 0:
                        raise SystemExit(f"the compile run in {trees[tree]} failed:\n{proc.stderr[-3000:]}")
                    seconds, where = proc.stdout.strip().splitlines()[-2:]
                    if trees[tree].resolve() not in pathlib.Path(where).resolve().parents:
                        raise SystemExit(f"the process meant for {trees[tree]} imported gbrank from {where}")
                    times[tree][key].append(float(seconds))
        print(f"  compile pair {k + 1}/{pairs} done, load {_load()}", file=sys.stderr, flush=True)
    return times


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--base", default="HEAD", help="the commit to compare the working tree with")
    ap.add_argument("--worktree", default=None, help="where to keep the base checkout between runs")
    ap.add_argument("--parts", default="calls,training,compile", help="comma-separated: calls, training, compile")
    ap.add_argument("--calls", type=int, default=30, help="timed calls of each case and tree, alternating")
    ap.add_argument("--cases", nargs="+", default=list(CALL_CASES), metavar="CASE",
                    help="the call cases to time (quote a name with spaces)")
    ap.add_argument("--repeats", type=int, default=3, help="training runs of each contender, interleaved")
    ap.add_argument("--compile-pairs", type=int, default=3, help="pairs of cold-compile processes, alternating")
    ap.add_argument("--compile-metrics", nargs="+", default=list(SNIPPET_METRICS), metavar="METRIC",
                    help="objectives whose import and first call the compile part times")
    ap.add_argument("--queries", type=int, default=4800, help="lists of the synthetic set")
    ap.add_argument("--rounds", type=int, default=100, help="LightGBM rounds of each training run")
    ap.add_argument("--save", default=None, help="write the figures to this JSON file")
    args = ap.parse_args(argv)
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = sorted(set(parts) - {"calls", "training", "compile"})
    if unknown:
        ap.error(f"unknown part(s) {', '.join(unknown)}; choose among calls, training, compile")
    unknown = [c for c in args.cases if c not in CALL_CASES]
    if unknown:
        ap.error(f"unknown call case(s) {' | '.join(unknown)}; choose among {' | '.join(CALL_CASES)}")
    cases = {c: CALL_CASES[c] for c in args.cases}
    if "compile" in parts:
        from gbrank.lambdas import LambdaObjective
        for m in args.compile_metrics:
            try:
                LambdaObjective(m)
            except ValueError as err:
                ap.error(f"--compile-metrics {m!r}: {err}")

    base, remove = base_checkout(args.base, args.worktree)
    result = {"base": args.base, "base_tree": str(base), "settings": vars(args), "load_at_start": _load(),
              "machine": f"{os.cpu_count()} cores, Python {platform.python_version()}"}
    print(f"working tree {ROOT} against {args.base} ({base}); {os.cpu_count()} cores, load {_load()}", flush=True)
    work = pathlib.Path(tempfile.mkdtemp(prefix="gbrank-against-"))
    try:
        if "calls" in parts or "training" in parts:
            packages = _packages(renamed_copy(base))
            X, y, sizes = synthetic_set(args.queries)
            ptr = np.concatenate([[0], np.cumsum(sizes)])
            print(f"data: {len(y):,} rows, {len(sizes):,} lists, {X.shape[1]} features", flush=True)
        if "calls" in parts:
            scores = np.random.default_rng(1).normal(size=len(y))
            times = gradient_calls(packages, y, ptr, scores, args.calls, cases)
            result["calls"] = paired_rows(times, cases)
            _print(f"1. one gradient call, {args.calls} of each tree, alternating", result["calls"], 1e3, "ms")
        if "training" in parts:
            runs = training_runs(packages, X, y, sizes, args.rounds, args.repeats)
            result["training"] = {}
            print(f"2. LightGBM training, {args.rounds} rounds, {args.repeats} runs of each, interleaved")
            for label, times in runs.items():
                row = paired_rows({"base": {label: times["base"]}, "new": {label: times["new"]}}, [label])[label]
                builtin = float(np.median(times["built-in"]))
                row |= {"builtin_s": builtin, "builtin_all_s": times["built-in"],
                        "base_over_builtin": row["base_s"] / builtin, "new_over_builtin": row["new_s"] / builtin}
                result["training"][label] = row
                _print("", {label: row}, 1, "s ")
                print(f"  {'':32s} built-in {builtin:.2f} s; gbrank / built-in, ratio of medians: "
                      f"base {row['base_over_builtin']:.3f}, new {row['new_over_builtin']:.3f}")
        if "compile" in parts:
            times = compile_times({"base": base, "new": ROOT}, args.compile_pairs, work, args.compile_metrics)
            result["compile"] = paired_rows(times, ["empty cache", "from the cache"])
            _print(f"3. import and first call of {', '.join(args.compile_metrics)}, {args.compile_pairs} fresh "
                   "processes of each tree",
                   result["compile"], 1, "s ")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if remove:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT, capture_output=True)
            shutil.rmtree(base.parent, ignore_errors=True)
    result["load_at_end"] = _load()
    print(f"load average at the end: {_load()}")
    if args.save:
        pathlib.Path(args.save).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
