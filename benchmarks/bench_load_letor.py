"""Loading a LETOR file at MSLR-WEB30K / Istella size: ``load_letor`` against scikit-learn's parser.

A seeded synthetic LETOR file like MSLR-WEB30K is written once (``--queries`` lists of 60-180
documents, 136 features written on every row as the real files do, one in three of them 0,
the others integers or values with 6 significant digits, labels 0-4 in WEB30K's
proportions, increasing query ids); the default 3,000 lists give about 360,000 rows,
``--queries 31500`` about 3.8 million (WEB30K's size, a file of several GB).  Then every
loader of ``--loaders`` reads it in a fresh Python process (``python -c``),
``--repeats`` times, interleaved; each process times the load call alone (wall clock) and
reports its peak resident set (``ru_maxrss``, read at the end, so it includes the imports:
see ``rss_before_mib``).  The loaders:

* ``sklearn-qid-csr``: ``load_svmlight_file(path, query_id=True, zero_based=False)``, the
  baseline; ``sklearn-qid-dense``: the same + ``.toarray()``;
* ``sklearn-noqid-csr`` / ``-dense``: the same with ``query_id=False`` (the parse alone; no
  query ids, so no LETOR loader can do less);
* ``letor-csr``: ``load_letor(path, dense=False)``; ``letor-dense``: ``load_letor(path)``;
* each with a ``-f32`` twin: ``dtype=np.float32``.

Every loader's ``(X, y, qid)`` fingerprint (shape, sums) is checked against the others', so
the timed work is the same work.  The table gives medians (min-max) and the ratios of the
medians to scikit-learn's loader with the same output (CSR or dense, same dtype): "x sklearn"
to ``sklearn-qid-*``, "x parse" to ``sklearn-noqid-*``.

    python benchmarks/bench_load_letor.py --save load_letor.json
    python benchmarks/bench_load_letor.py --queries 31500 --loaders letor-csr,letor-dense --repeats 1

The loaders import the ``gbrank`` that ``python -c`` finds from the current folder; to measure
another copy, run from outside the repository with ``PYTHONPATH=<copy>`` (the line above the
table names the ``gbrank`` measured).  ``--report FILE.json`` prints the table of a saved run.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

N_FEATURES = 136
LABEL_SHARES = (0.51, 0.32, 0.135, 0.025, 0.01)  # MSLR-WEB30K's grades 0-4, roughly

_SK = "load_svmlight_file(PATH, query_id={}, zero_based=False{})"
_LETOR = "load_letor(PATH{}{})"


def _loaders(f32: bool) -> dict[str, str]:
    dt = ", dtype=np.float32" if f32 else ""  # float64 is every loader's default
    return {
        "sklearn-qid-csr": f"X, y, qid = {_SK.format(True, dt)}",
        "sklearn-qid-dense": f"X, y, qid = {_SK.format(True, dt)}\nX = X.toarray()",
        "sklearn-noqid-csr": f"X, y = {_SK.format(False, dt)}\nqid = None",
        "sklearn-noqid-dense": f"X, y = {_SK.format(False, dt)}\nX = X.toarray()\nqid = None",
        "letor-csr": f"X, y, qid = {_LETOR.format(', dense=False', dt)}",
        "letor-dense": f"X, y, qid = {_LETOR.format('', dt)}",
    }


LOADERS = _loaders(False) | {f"{name}-f32": code for name, code in _loaders(True).items()}


def _reference(name: str, kind: str) -> str:
    """scikit-learn's loader (``kind`` "qid": the baseline; "noqid": the parse alone) with the
    output form and dtype of loader ``name``."""
    return f"sklearn-{kind}-" + ("dense" if "dense" in name else "csr") + ("-f32" if name.endswith("-f32") else "")

_CHILD = """
import json, resource, time
import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file
import gbrank
from gbrank.datasets import load_letor
PATH = {path!r}
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t0 = time.perf_counter()
{code}
seconds = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
data = X.data if sp.issparse(X) else X
print(json.dumps({{"seconds": seconds, "peak_mib": peak, "rss_before_mib": before,
    "shape": list(X.shape), "sparse": sp.issparse(X), "dtype": str(X.dtype), "x_sum": float(data.sum(dtype=np.float64)),
    "y_sum": float(y.sum()), "qid_sum": None if qid is None else int(qid.sum()), "gbrank": gbrank.__file__}}))
"""


# ---------------------------------------------------------------------------------------
# the file


def _value_tables(digits: int = 6) -> dict[int, np.ndarray]:
    """``tables[k][m]``: the text of ``m / 10**k`` for ``m < 10**digits`` with trailing zeros cut ("%g"-like)."""
    tables = {0: np.array([str(m).encode() for m in range(10**digits)])}
    for k in range(2, digits + 1):
        tables[k] = np.array([f"{m / 10**k:.{k}f}".rstrip("0").rstrip(".").encode() for m in range(10**digits)])
    return tables


def write_letor(path: pathlib.Path, n_queries: int, seed: int, chunk: int = 250) -> dict:
    """Write the synthetic file, ``chunk`` lists at a time; returns its row count and size."""
    rng = np.random.default_rng(seed)
    tables = _value_tables()
    # per feature: 0 = small integer count, 6 = a share in [0, 1], 2..4 = a score; a third of the scores negative
    kind = rng.choice([0, 6, 2, 3, 4], size=N_FEATURES, p=[0.4, 0.3, 0.1, 0.1, 0.1])
    negative = (kind >= 2) & (kind <= 4) & (rng.random(N_FEATURES) < 1 / 3)
    index = np.array([f"{j}:".encode() for j in range(1, N_FEATURES + 1)])
    index_neg = np.array([f"{j}:-".encode() for j in range(1, N_FEATURES + 1)])
    prefix = np.where(negative, index_neg, index)
    next_qid, n_rows = 1, 0
    with open(path, "wb") as out:
        for start in range(0, n_queries, chunk):
            sizes = rng.integers(60, 181, size=min(chunk, n_queries - start))
            qids = next_qid + np.cumsum(rng.integers(1, 4, size=sizes.size)) - 1  # increasing, with gaps
            next_qid = int(qids[-1]) + 1
            n = int(sizes.sum())
            m = rng.integers(10**5, 10**6, size=(n, N_FEATURES))  # 6 significant digits
            m[:, kind == 0] = np.minimum(rng.geometric(0.15, size=(n, int((kind == 0).sum()))) - 1, 10**6 - 1)
            m[:, kind == 6] //= 10 ** rng.integers(0, 2, size=(n, 1))  # shares 0.xxxxxx, some 0.0xxxxx
            m[rng.random((n, N_FEATURES)) < 1 / 3] = 0
            tokens = np.empty((n, N_FEATURES + 2), dtype="S24")
            tokens[:, 0] = rng.choice(5, size=n, p=LABEL_SHARES).astype("S1")
            tokens[:, 1] = np.strings.add(b"qid:", np.repeat(qids, sizes).astype("S"))
            for j in range(N_FEATURES):
                text = tables[int(kind[j])][m[:, j]]
                tokens[:, j + 2] = np.strings.add(np.where(m[:, j] == 0, index[j], prefix[j]), text)
            tokens[:, :-1] = np.strings.add(tokens[:, :-1], b" ")
            tokens[:, -1] = np.strings.add(tokens[:, -1], b"\n")
            out.write(tokens.tobytes().replace(b"\x00", b""))  # drop the fixed width's padding
            n_rows += n
    return {"rows": n_rows, "bytes": path.stat().st_size}


# ---------------------------------------------------------------------------------------
# the measurements


def write_in_child(path: pathlib.Path, n_queries: int, seed: int) -> dict:
    """``write_letor`` in a child process.  Linux hands a process's peak resident set on to the
    program it starts (``exec`` keeps the larger of the two), so this process must stay small
    for its loaders' ``ru_maxrss`` to be their own."""
    code = (f"import json, pathlib, sys; sys.path.insert(0, {str(pathlib.Path(__file__).parent)!r}); "
            f"import bench_load_letor as b; "
            f"print(json.dumps(b.write_letor(pathlib.Path({str(path)!r}), {n_queries}, {seed})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"writing {path} failed (status {out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_one(name: str, path: pathlib.Path) -> dict:
    """Load ``path`` with loader ``name`` in a fresh process; its time, peak memory and fingerprint."""
    code = _CHILD.format(path=str(path), code=LOADERS[name])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"loader {name} failed (status {out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _check_same_data(results: dict[str, list[dict]]) -> None:
    """Every loader of one dtype gave the same shape, labels and feature sum; all query ids agree."""
    first = {}
    for name, runs in results.items():
        r = runs[0]
        key = r["dtype"]
        ref = first.setdefault(key, (name, r))[1]
        assert r["shape"] == ref["shape"] and r["y_sum"] == ref["y_sum"], (name, r, ref)
        assert np.isclose(r["x_sum"], ref["x_sum"], rtol=1e-9), (name, r["x_sum"], ref["x_sum"])
    qids = {x["qid_sum"] for runs in results.values() for x in runs if x["qid_sum"] is not None}
    assert len(qids) <= 1, qids


def _summary(results: dict[str, list[dict]]) -> dict[str, dict]:
    """Medians (and ranges) per loader, with the ratios of the medians to both references."""
    out = {}
    for name, runs in results.items():
        secs = [r["seconds"] for r in runs]
        peaks = [r["peak_mib"] for r in runs]
        out[name] = {"runs": len(runs), "seconds_median": statistics.median(secs), "seconds_min": min(secs),
                     "seconds_max": max(secs), "peak_mib_median": statistics.median(peaks),
                     "peak_mib_min": min(peaks), "peak_mib_max": max(peaks),
                     "rss_before_mib": statistics.median(r["rss_before_mib"] for r in runs),
                     "dtype": runs[0]["dtype"], "sparse": runs[0]["sparse"]}
    for name, row in out.items():
        for kind in ("qid", "noqid"):
            ref = out.get(_reference(name, kind))
            row[f"time_ratio_{kind}"] = None if ref is None else row["seconds_median"] / ref["seconds_median"]
            row[f"peak_ratio_{kind}"] = None if ref is None else row["peak_mib_median"] / ref["peak_mib_median"]
    return out


def _table(summary: dict[str, dict]) -> str:
    """Markdown table: x sklearn = ratio of the medians to ``sklearn-qid-*`` (the baseline), x parse =
    to ``sklearn-noqid-*`` (no query ids), each with the same output form and dtype."""
    def ratio(value):
        return "" if value is None else f"{value:.2f}"

    lines = ["| loader | X | seconds, median (min-max) | x sklearn | x parse | peak RSS MiB, median (min-max) "
             "| x sklearn | x parse |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for name, r in summary.items():
        form = ("CSR " if r["sparse"] else "dense ") + r["dtype"]
        lines.append(f"| `{name}` | {form} | {r['seconds_median']:.1f} ({r['seconds_min']:.1f}-{r['seconds_max']:.1f})"
                     f" | {ratio(r['time_ratio_qid'])} | {ratio(r['time_ratio_noqid'])} | {r['peak_mib_median']:,.0f} "
                     f"({r['peak_mib_min']:,.0f}-{r['peak_mib_max']:,.0f}) | {ratio(r['peak_ratio_qid'])} "
                     f"| {ratio(r['peak_ratio_noqid'])} |")
    return "\n".join(lines)


def _report(doc: dict) -> str:
    info, runs = doc["file"], doc["runs"]
    first = next(iter(runs.values()))[0]
    return (f"{info['rows']:,} rows x {N_FEATURES} features, {info['bytes'] / 2**20:,.0f} MiB; every loader's data "
            f"agree; gbrank from {first.get('gbrank', '(not recorded)')}\n\n{_table(_summary(runs))}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=3000,
                        help="number of lists (60-180 documents each) in the synthetic file (default 3000, "
                             "about 360,000 rows; 31500 gives about 3.8 million, WEB30K's size)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic file (default 0)")
    parser.add_argument("--file", type=pathlib.Path,
                        help="where to write the synthetic file (default: the temporary folder, named after "
                             "--queries and --seed)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the file afterwards, and reuse it instead of writing it when it exists")
    parser.add_argument("--loaders", default=",".join(LOADERS),
                        help=f"comma-separated loaders to measure, in this order (default all: {','.join(LOADERS)})")
    parser.add_argument("--repeats", type=int, default=3,
                        help="runs of each loader, interleaved; the table gives medians (default 3)")
    parser.add_argument("--save", type=pathlib.Path,
                        help="write every run, the medians, the configuration and the versions to this JSON file")
    parser.add_argument("--report", type=pathlib.Path, metavar="FILE.json",
                        help="measure nothing: print the table of a file written by --save")
    args = parser.parse_args(argv)
    if args.report:
        print(_report(json.loads(args.report.read_text())))
        return 0
    path = args.file or pathlib.Path(tempfile.gettempdir()) / f"gbrank_bench_letor_q{args.queries}_s{args.seed}.txt"
    names = args.loaders.split(",")
    unknown = sorted(set(names) - set(LOADERS))
    if unknown:
        parser.error(f"unknown loaders {unknown}; choose among {sorted(LOADERS)}")
    load_before = os.getloadavg()
    if args.keep and path.is_file():
        info = {"rows": None, "bytes": path.stat().st_size, "written_seconds": None}
        print(f"reusing {path} ({info['bytes'] / 2**20:,.0f} MiB)", flush=True)
    else:
        t0 = time.perf_counter()
        info = write_in_child(path, args.queries, args.seed)
        info["written_seconds"] = time.perf_counter() - t0
        print(f"wrote {path}: {info['rows']:,} rows, {info['bytes'] / 2**20:,.0f} MiB in "
              f"{info['written_seconds']:.0f} s", flush=True)
    results: dict[str, list[dict]] = {name: [] for name in names}
    try:
        for rep in range(args.repeats):
            for name in names:
                r = run_one(name, path)
                results[name].append(r)
                print(f"repeat {rep}: {name:22s} {r['seconds']:8.2f} s  peak {r['peak_mib']:8,.0f} MiB "
                      f"(before the load {r['rss_before_mib']:,.0f})", flush=True)
    finally:
        if not args.keep:
            path.unlink(missing_ok=True)
    _check_same_data(results)
    info["rows"] = info["rows"] or results[names[0]][0]["shape"][0]
    summary = _summary(results)
    print("\n" + _report({"file": info, "runs": results}))
    if args.save:
        import importlib.metadata as md

        doc = {"config": vars(args) | {"save": str(args.save), "file": str(path)}, "file": info,
               "summary": summary, "runs": results,
               "versions": {p: md.version(p) for p in ("gbrank", "numpy", "scipy", "scikit-learn")},
               "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                           "platform": platform.platform(), "load_average_before": load_before,
                           "load_average_after": os.getloadavg(),
                           "date": time.strftime("%Y-%m-%d %H:%M:%S %z")}}
        args.save.parent.mkdir(parents=True, exist_ok=True)
        args.save.write_text(json.dumps(doc, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
