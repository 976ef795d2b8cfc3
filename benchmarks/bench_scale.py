"""Scale: loading, training, predicting, evaluating and benchmarking at full LETOR size.

Synthetic data the size of MSLR-WEB30K (31,500 lists of 60-180 documents, about 3.8M rows x
136 features) and of Istella (33,000 lists of 150-450 documents, about 9.9M rows x 220
features), with ``small`` (3,000 lists of 60-180 x 136) and ``tiny`` (60 lists of 10-30 x 16,
for smoke tests) beside them.  Labels are 0-4 (about MSLR's proportions, shifted per list);
features carry signal about the label (label-dependent means plus noise, counts, per-list
constants and pure noise columns), so the models learn.  The rows are generated from
``--seed`` in blocks of lists, directly as float32 (no float64 copy of the matrix), on a grid
of 0.001 with |x| < 100, so that the text form (6 significant digits) holds exactly the
float32 values of the Parquet form.  The lists are split 60/20/20 into train, vali and test
(the layout of an MSLR-WEB30K fold), and each split is written once under
``--data-dir``/<size> as LETOR/SVMlight text (``label qid:Q 1:v 2:v ...``, written by chunks
of rows) and as Parquet (float32 columns ``f0..``, int32 ``label`` and ``qid``, row groups of
65,536 rows); a ``manifest.json`` written last marks a complete folder, which later runs reuse
while it matches the size's settings and the seed.

Then each measurement runs in a fresh Python process (this script again, with ``--one``),
which prints one JSON line: the wall seconds of the measured call, and the peak RSS of the
process (``ru_maxrss``, MB = 2**20 bytes) read at its end; the RSS once the data is loaded,
before the measured call, is reported too.  On Linux exec carries a parent's peak RSS over into
its child's ``ru_maxrss``, so the parent stays small (the data are written by a child too, and
gbrank is not imported here); each child also reports ``VmHWM``, its own peak, as a check.
A child that fails (an exception such as MemoryError, or killed: returncode -9 is SIGKILL,
usually the kernel's OOM killer) is reported as ``failed: <reason>`` and the run goes on.
Contenders, and the reference each ratio is taken against (``ref``):

- ``load`` (the train split): ``sklearn.datasets.load_svmlight_file(path, query_id=True,
  zero_based=False)`` + ``.toarray()`` (ref), ``gbrank.datasets.load_letor(path)`` (and with
  ``dtype=np.float32`` where this gbrank's ``load_letor`` takes it), and ``pandas.read_parquet``
  + ``to_numpy(float32)`` of the feature columns.  scikit-learn 1.9's ``query_id=True`` appends
  each row's id with ``np.append`` (a copy of every id so far): quadratic in the rows.  80,000
  such appends took 5.8 s here, so web30k's 2.27M training rows would spend about 78 minutes
  and istella's 5.9M about 9 hours in them (extrapolated); use ``--timeout`` to cut it short;
- ``fit`` (the train split, read from its Parquet as float32 C-ordered arrays before the timed
  part), per backend: ``lightgbm.train({"objective": "lambdarank", "num_leaves": 31,
  "num_threads": T, "verbosity": -1}, lightgbm.Dataset(X, y, group=sizes), R)`` (ref) against
  ``gbrank.GBRanker("ndcg", backend="lightgbm", n_estimators=R, n_jobs=T)`` (31 leaves,
  learning rate 0.1: LightGBM's defaults); ``xgboost.train({"objective": "rank:ndcg",
  "tree_method": "hist", "nthread": T, "eta": 0.1, "grow_policy": "lossguide",
  "max_leaves": 31, "max_depth": 0}, xgboost.QuantileDMatrix(X, y, qid=qid), R)`` (ref: the
  tree shape and learning rate of GBRanker's XGBoost backend, which grows 31-leaf trees
  leaf-wise at learning rate 0.1) against ``GBRanker("ndcg", backend="xgboost", ...)``.  The
  library's data set construction is inside the timed part, as it is inside ``GBRanker.fit``.
  gbrank's numba kernels are loaded (from numba's cache) by a 2-round fit on a tiny set before
  the timed part (its seconds: ``warmup_s``).  The fitted GBRanker is pickled under
  ``<size>/models`` for ``predict``;
- ``predict`` (the test split): ``GBRanker.predict`` against its booster's own predict
  (ref: LightGBM's ``Booster.predict``, XGBoost's ``inplace_predict``), the model of
  ``fit`` (trained in a child of its own first when ``fit`` did not leave one);
- ``evaluate`` (the test split): ``gbrank.evaluate(y, scores, qid, ["ndcg@10", "err@10",
  "ap"])``, scores = label + N(0, 1) noise (seeded), after a warm-up call on a tiny set;
- ``bench``: one fold of ``gbrank bench letor`` on the size's folder (train/vali/test text
  files) with ``--bench-contenders`` (default: the default contenders), ``--rounds`` and
  ``--patience`` ``--bench-rounds``, ``--jobs 1 --threads T --dtype`` ``--bench-dtype``
  (default float32), into a new output folder (no cached runs).

Every child gets ``NUMBA_NUM_THREADS`` and ``OMP_NUM_THREADS`` = ``--threads`` and writes its
standard error to ``--data-dir``/logs.  ``--repeats`` runs every measurement that many times,
interleaved (alternating order); medians are reported.  Loads read files that may sit in the
page cache (the first read after generating them usually does).  Data sizes, extrapolated from
the first block of about 48,000 rows of each (2-core machine, shared): web30k 3,775,691 rows,
4.7 GB of text and 1.0 GB of Parquet, written in about 2.5 minutes; istella 9,893,130 rows,
19.8 GB of text and 3.8 GB of Parquet, about 6 minutes.  The estimate is printed after the
first block, and generation stops when the disk lacks the room.  ``gbrank bench letor`` holds
every split of the fold dense (istella as float32: 9.9M x 220 x 4 bytes = 8.7 GB; as float64,
``--bench-dtype float64``, 17.4 GB).

    python benchmarks/bench_scale.py --sizes tiny --rounds 2        # smoke run (43-127 s on a shared 2-core machine)
    nice python benchmarks/bench_scale.py --sizes small --markdown --save runs/scale-small.json
    nice python benchmarks/bench_scale.py --sizes web30k --markdown --save runs/scale-web30k.json \\
        2>&1 | tee runs/scale-web30k.log
    nice python benchmarks/bench_scale.py --sizes istella --tasks load fit predict evaluate --timeout 3600 \\
        --markdown --save runs/scale-istella.json 2>&1 | tee runs/scale-istella.log
    python benchmarks/bench_scale.py --sizes web30k --tasks fit --backends lightgbm --rounds 100 --repeats 3
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import os
import pathlib
import pickle
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from typing import NamedTuple

import numpy as np

# ---------------------------------------------------------------------------------------
# the data


class Size(NamedTuple):
    name: str
    n_lists: int
    docs: tuple[int, int]  # documents per list, drawn uniformly from lo..hi
    n_features: int

    @property
    def lists_per_block(self) -> int:
        """Lists generated together (about 48,000 rows): fixed per size, so the data do not
        depend on anything but the size and the seed."""
        return max(1, 48_000 // (sum(self.docs) // 2))


SIZES = {
    "tiny": Size("tiny", 60, (10, 30), 16),
    "small": Size("small", 3_000, (60, 180), 136),
    "web30k": Size("web30k", 31_500, (60, 180), 136),
    "istella": Size("istella", 33_000, (150, 450), 220),
}
SPLITS = ("train", "vali", "test")
FRACTIONS = {"vali": 0.2, "test": 0.2}  # of the lists; train gets the rest (an MSLR-WEB30K fold's layout)
GENERATOR_VERSION = 1
GRID = 1000  # features are k / GRID, |k| <= GRID_MAX: at most 6 significant digits, exact in text
GRID_MAX = 99_999
ROW_GROUP = 65_536  # rows per Parquet row group
TEXT_ROWS = 8_192  # rows formatted at a time
# latent relevance thresholds: about MSLR-WEB30K's label shares (52 %, 32 %, 13 %, 2 %, 1 %)
THRESHOLDS = np.array([0.056, 1.11, 2.10, 2.60], dtype=np.float32)


def _design(size: Size, seed: int) -> dict:
    """What does not change from block to block: list sizes, the split of every list, and
    each feature's kind and coefficients."""
    rng = np.random.default_rng([seed, 0])
    d = size.n_features
    list_sizes = rng.integers(size.docs[0], size.docs[1] + 1, size.n_lists)
    split = np.zeros(size.n_lists, dtype=np.int8)  # 0 train, 1 vali, 2 test
    perm = rng.permutation(size.n_lists)
    n_test = int(round(FRACTIONS["test"] * size.n_lists))
    n_vali = int(round(FRACTIONS["vali"] * size.n_lists))
    split[perm[:n_test]] = 2
    split[perm[n_test:n_test + n_vali]] = 1
    kind = rng.choice(4, size=d, p=[0.45, 0.15, 0.10, 0.30])  # 0 graded, 1 count, 2 per list, 3 noise
    kind[0], kind[1] = 0, 1  # every size has signal, whatever the draw
    sign = rng.choice(np.array([-1.0, 1.0]), size=d)
    weight = (rng.uniform(0.05, 0.35, size=d) * sign).astype(np.float32)
    weight[kind >= 2] = 0.0
    weight[kind == 1] = rng.uniform(0.5, 1.5, size=int((kind == 1).sum()))
    scale = rng.choice(np.array([0.5, 1.0, 2.0, 5.0], dtype=np.float32), size=d)
    scale[kind == 1] = 1.0
    return {"list_sizes": list_sizes, "split": split, "kind": kind, "weight": weight, "scale": scale}


def _block(size: Size, design: dict, seed: int, b: int):
    """Rows of block ``b``: (K int32 grid values, X float32 = K / GRID, labels int32, qid int32,
    split of every row)."""
    first = b * size.lists_per_block
    last = min(size.n_lists, first + size.lists_per_block)
    sizes = design["list_sizes"][first:last]
    rng = np.random.default_rng([seed, b + 1])
    n, d = int(sizes.sum()), size.n_features
    of_row = np.repeat(np.arange(last - first), sizes)
    latent = rng.standard_normal(n, dtype=np.float32)
    latent += rng.normal(0.0, 0.6, last - first).astype(np.float32)[of_row]
    y = np.searchsorted(THRESHOLDS, latent).astype(np.int32)
    Z = rng.standard_normal((n, d), dtype=np.float32)
    kind, w, s = design["kind"], design["weight"], design["scale"]
    Z += y[:, None].astype(np.float32) * w[None, :]
    per_list = np.flatnonzero(kind == 2)
    if per_list.size:
        Z[:, per_list] = rng.standard_normal((last - first, per_list.size), dtype=np.float32)[of_row]
    Z *= s[None, :]
    counts = np.flatnonzero(kind == 1)
    if counts.size:
        Z[:, counts] = np.floor(np.maximum(Z[:, counts] * np.float32(2) + np.float32(2), np.float32(0)))
    Z *= np.float32(GRID)
    np.rint(Z, out=Z)
    np.clip(Z, -GRID_MAX, GRID_MAX, out=Z)
    K = Z.astype(np.int32)
    del Z
    X = K.astype(np.float32)
    X /= np.float32(GRID)
    qid = np.repeat(np.arange(first + 1, last + 1, dtype=np.int32), sizes)
    return K, X, y, qid, np.repeat(design["split"][first:last], sizes)


class _TextWriter:
    """LETOR/SVMlight text, ``label qid:Q 1:v 2:v ...``, values with 6 significant digits
    (``%.6g`` of every grid value, formatted once and looked up)."""

    def __init__(self, path: pathlib.Path, n_features: int, table: np.ndarray):
        self.fh = open(path, "w", encoding="ascii", newline="\n")
        self.table = table
        self.fmt = "%d qid:%d " + " ".join(f"{j}:%s" for j in range(1, n_features + 1)) + "\n"

    def write(self, K, y, qid):
        fmt = self.fmt
        for r0 in range(0, len(y), TEXT_ROWS):
            tokens = self.table[K[r0:r0 + TEXT_ROWS] + GRID_MAX].tolist()
            self.fh.write("".join(fmt % (label, q, *row) for label, q, row in
                                  zip(y[r0:r0 + TEXT_ROWS].tolist(), qid[r0:r0 + TEXT_ROWS].tolist(), tokens)))

    def close(self):
        self.fh.close()


class _ParquetWriter:
    """float32 columns ``f0..``, int32 ``label`` and ``qid``, in row groups of ``ROW_GROUP`` rows."""

    def __init__(self, path: pathlib.Path, n_features: int):
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.pa = pa
        self.names = [f"f{j}" for j in range(n_features)] + ["label", "qid"]
        self.schema = pa.schema([(f"f{j}", pa.float32()) for j in range(n_features)]
                                + [("label", pa.int32()), ("qid", pa.int32())])
        self.writer = pq.ParquetWriter(path, self.schema)
        self.parts, self.rows = [], 0

    def write(self, X, y, qid):
        self.parts.append((X, y, qid))
        self.rows += len(y)
        while self.rows >= ROW_GROUP:
            self._flush(ROW_GROUP)

    def _flush(self, rows):
        X = np.concatenate([p[0] for p in self.parts])
        y = np.concatenate([p[1] for p in self.parts])
        qid = np.concatenate([p[2] for p in self.parts])
        Xf = np.asfortranarray(X[:rows])  # contiguous columns for arrow
        arrays = [self.pa.array(Xf[:, j]) for j in range(X.shape[1])] + [self.pa.array(y[:rows]),
                                                                          self.pa.array(qid[:rows])]
        self.writer.write_table(self.pa.Table.from_arrays(arrays, schema=self.schema))
        self.parts = [(X[rows:], y[rows:], qid[rows:])] if rows < len(y) else []
        self.rows = len(y) - rows

    def close(self):
        if self.rows:
            self._flush(self.rows)
        self.writer.close()


def _value_table() -> np.ndarray:
    values = (np.arange(-GRID_MAX, GRID_MAX + 1, dtype=np.float32) / np.float32(GRID)).tolist()
    return np.array(["%.6g" % v for v in values], dtype=object)


def _manifest_key(size: Size, seed: int) -> dict:
    return {"generator_version": GENERATOR_VERSION, "size": size._asdict(), "seed": seed,
            "fractions": FRACTIONS, "grid": GRID, "lists_per_block": size.lists_per_block}


def data_files(folder: pathlib.Path) -> dict[str, pathlib.Path]:
    return {f"{split}.{ext}": folder / f"{split}.{ext}" for split in SPLITS for ext in ("txt", "parquet")}


def _reusable(folder: pathlib.Path, key: dict):
    """The manifest of a complete folder written with ``key``, or None."""
    try:
        manifest = json.loads((folder / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    if manifest.get("key") != json.loads(json.dumps(key)):
        return None
    for name, path in data_files(folder).items():
        if not path.is_file() or path.stat().st_size != manifest["files"].get(name):
            return None
    return manifest


def _clear(folder: pathlib.Path) -> None:
    """Remove what this script writes in a size's folder (nothing else)."""
    for path in [*data_files(folder).values(), folder / "manifest.json"]:
        path.unlink(missing_ok=True)
    shutil.rmtree(folder / "models", ignore_errors=True)


def ensure_data(size: Size, data_dir: pathlib.Path, seed: int, regenerate: bool = False, say=print) -> dict:
    """The manifest of ``size``'s folder under ``data_dir``, generating the files unless a
    matching complete folder is there."""
    folder = data_dir / size.name
    key = _manifest_key(size, seed)
    manifest = None if regenerate else _reusable(folder, key)
    if manifest is not None:
        say(f"data {size.name}: reusing {folder} ({manifest['rows']:,} rows, written {manifest['written']})")
        return manifest
    _clear(folder)
    folder.mkdir(parents=True, exist_ok=True)
    design = _design(size, seed)
    total_rows = int(design["list_sizes"].sum())
    say(f"data {size.name}: generating {size.n_lists:,} lists, {total_rows:,} rows x {size.n_features} "
        f"features (seed {seed}) into {folder}")
    t0 = time.perf_counter()
    table = _value_table()
    files = data_files(folder)
    text = {s: _TextWriter(files[f"{s}.txt"], size.n_features, table) for s in SPLITS}
    parquet = {s: _ParquetWriter(files[f"{s}.parquet"], size.n_features) for s in SPLITS}
    counts = {s: {"rows": 0, "lists": int((design["split"] == k).sum())} for k, s in enumerate(SPLITS)}
    labels = np.zeros(len(THRESHOLDS) + 1, dtype=np.int64)
    n_blocks = -(-size.n_lists // size.lists_per_block)
    done_rows, last_note = 0, time.perf_counter()
    try:
        for b in range(n_blocks):
            K, X, y, qid, split = _block(size, design, seed, b)
            labels += np.bincount(y, minlength=len(labels))
            for k, s in enumerate(SPLITS):
                rows = split == k
                if rows.any():
                    text[s].write(K[rows], y[rows], qid[rows])
                    parquet[s].write(X[rows], y[rows], qid[rows])
                    counts[s]["rows"] += int(rows.sum())
            done_rows += len(y)
            if b == 0:
                _check_room(folder, text, files, done_rows, total_rows, size.n_features, say)
            if time.perf_counter() - last_note > 30 or b == n_blocks - 1:
                last_note = time.perf_counter()
                say(f"  {size.name}: {done_rows:,} of {total_rows:,} rows written "
                    f"({time.perf_counter() - t0:.0f} s)")
    finally:
        for w in (*text.values(), *parquet.values()):
            w.close()
    manifest = {"key": key, "rows": total_rows, "splits": counts, "label_counts": labels.tolist(),
                "files": {name: path.stat().st_size for name, path in files.items()},
                "seconds": time.perf_counter() - t0, "written": datetime.datetime.now().isoformat(timespec="seconds")}
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2))
    gb = sum(manifest["files"].values()) / 1e9
    say(f"data {size.name}: {gb:.2f} GB written in {manifest['seconds']:.1f} s; splits "
        + ", ".join(f"{s} {c['rows']:,} rows / {c['lists']:,} lists" for s, c in counts.items()))
    return manifest


def _check_room(folder, text: dict, files: dict, done_rows: int, total_rows: int, n_features: int, say):
    """After the first block: the files' size extrapolated to every row, against the free disk.
    The text is extrapolated from what was written; the Parquet (written by row groups, not yet
    on disk) is counted at 4 bytes a value, a bound (noise compresses little)."""
    for w in text.values():
        w.fh.flush()
    txt = sum(files[f"{s}.txt"].stat().st_size for s in SPLITS)
    estimate = (txt / done_rows + 4 * (n_features + 2)) * total_rows
    free = shutil.disk_usage(folder).free + txt
    say(f"  about {estimate / 1e9:.1f} GB to write ({free / 1e9:.0f} GB free)")
    if estimate > 0.95 * free:
        raise OSError(f"{folder}: the data need about {estimate / 1e9:.1f} GB but only {free / 1e9:.1f} GB are "
                      "free; choose another --data-dir")


def read_parquet_arrays(path, n_features: int | None = None):
    """(X float32 C-ordered, label int32, qid int32) of a Parquet split, filled row group by
    row group into arrays allocated once (no second copy of the matrix)."""
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(path)
    names = [n for n in pf.schema_arrow.names if n.startswith("f")]
    n = pf.metadata.num_rows
    X = np.empty((n, len(names)), dtype=np.float32)
    y = np.empty(n, dtype=np.int32)
    qid = np.empty(n, dtype=np.int32)
    r0 = 0
    for g in range(pf.num_row_groups):
        t = pf.read_row_group(g)
        r1 = r0 + t.num_rows
        for j, name in enumerate(names):
            X[r0:r1, j] = t.column(name).to_numpy()
        y[r0:r1] = t.column("label").to_numpy()
        qid[r0:r1] = t.column("qid").to_numpy()
        r0 = r1
        del t
    import pyarrow as pa

    pa.default_memory_pool().release_unused()  # arrow's allocator keeps freed row groups otherwise
    return X, y, qid


# ---------------------------------------------------------------------------------------
# the measurements (children)

TASKS = ("load", "fit", "predict", "evaluate", "bench")
BACKENDS = ("lightgbm", "xgboost")
METRICS = ["ndcg@10", "err@10", "ap"]


class Contender(NamedTuple):
    task: str
    name: str
    group: str  # ratios are taken within (task, size, group)
    reference: bool = False


def contenders(task: str, backends) -> list[Contender]:
    if task == "load":
        float32 = [Contender(task, "gbrank.load_letor(float32)", "load")] if _load_letor_takes_dtype() else []
        return [Contender(task, "sklearn.load_svmlight_file", "load", True),
                Contender(task, "gbrank.load_letor", "load"), *float32,
                Contender(task, "pandas.read_parquet", "load")]
    if task == "fit":
        return [c for b in backends for c in (Contender(task, f"{b}.train", b, True),
                                              Contender(task, f"GBRanker[{b}]", b))]
    if task == "predict":
        return [c for b in backends for c in (Contender(task, f"{b} booster predict", b, True),
                                              Contender(task, f"GBRanker[{b}].predict", b))]
    if task == "evaluate":
        return [Contender(task, "gbrank.evaluate", "evaluate", True)]
    if task == "bench":
        return [Contender(task, "gbrank bench letor", "bench", True)]
    raise ValueError(task)


@functools.cache
def _load_letor_takes_dtype() -> bool:
    """Whether this gbrank's ``load_letor`` has a ``dtype`` argument (float32 features); asked in a
    subprocess, so that the parent does not import gbrank (see :func:`generate`)."""
    code = ("import inspect; from gbrank.datasets import load_letor; "
            "print('dtype' in inspect.signature(load_letor).parameters)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return proc.stdout.strip().endswith("True")


def _peak_mb() -> float:
    """Peak RSS of this process in MB (2**20 bytes): ``ru_maxrss`` is in KiB on Linux, bytes on macOS."""
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024.0


def _hwm_mb() -> float | None:
    """This process's own peak RSS (Linux ``VmHWM``, not carried over from the parent by exec), a
    check of ``ru_maxrss``; None elsewhere."""
    try:
        with open("/proc/self/status") as fh:
            line = next(line for line in fh if line.startswith("VmHWM:"))
        return int(line.split()[1]) / 1024.0
    except (OSError, StopIteration, ValueError, IndexError):
        return None


def _rss_now_mb() -> float:
    """Resident memory now (Linux /proc; the peak so far elsewhere)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return _peak_mb()


def _loaded(out: dict) -> None:
    out["rss_after_load_mb"] = _rss_now_mb()
    out["peak_rss_after_load_mb"] = _peak_mb()


def _timed(out: dict, fn):
    t, c = time.perf_counter(), time.process_time()
    result = fn()
    out["wall_s"] = time.perf_counter() - t
    out["cpu_s"] = time.process_time() - c
    return result


def _model_path(folder: pathlib.Path, backend: str, rounds: int) -> pathlib.Path:
    return folder / "models" / f"GBRanker-{backend}-r{rounds}.pkl"


def _warm_gbrank_fit(backend: str, threads: int, out: dict) -> None:
    """Load gbrank's numba kernels (from numba's cache) outside the timed part."""
    import gbrank
    from gbrank.datasets import make_letor

    t = time.perf_counter()
    X, y, qid = make_letor(n_queries=12, docs_per_query=(8, 12), n_features=4, random_state=0)
    gbrank.GBRanker("ndcg", backend=backend, n_estimators=2, n_jobs=threads).fit(X.astype(np.float32), y, qid=qid)
    out["warmup_s"] = time.perf_counter() - t


def child_load(args, folder, contender, out):
    path = folder / "train.txt"
    if contender.startswith("gbrank.load_letor"):
        from gbrank.datasets import load_letor

        kwargs = {"dtype": np.float32} if contender.endswith("(float32)") else {}
        out["rss_before_load_mb"] = _rss_now_mb()
        X, y, qid = _timed(out, lambda: load_letor(path, **kwargs))
    elif contender == "sklearn.load_svmlight_file":
        from sklearn.datasets import load_svmlight_file

        out["rss_before_load_mb"] = _rss_now_mb()

        def run():
            t = time.perf_counter()
            Xs, y, qid = load_svmlight_file(str(path), query_id=True, zero_based=False)
            out["parse_s"] = time.perf_counter() - t
            return Xs.toarray(), y, qid

        X, y, qid = _timed(out, run)
    else:
        import pandas as pd

        out["rss_before_load_mb"] = _rss_now_mb()

        def run():
            t = time.perf_counter()
            df = pd.read_parquet(folder / "train.parquet")
            out["read_s"] = time.perf_counter() - t
            features = [c for c in df.columns if c.startswith("f")]
            return df[features].to_numpy(dtype=np.float32), df["label"].to_numpy(), df["qid"].to_numpy()

        X, y, qid = _timed(out, run)
    out.update(shape=list(X.shape), X_dtype=str(X.dtype), y_dtype=str(y.dtype), qid_dtype=str(qid.dtype))


def child_fit(args, folder, contender, out):
    backend = contender.split("[")[1].rstrip("]") if contender.startswith("GBRanker") else contender.split(".")[0]
    rounds, threads = args.rounds, args.threads
    import importlib

    import gbrank

    lib = importlib.import_module(backend)  # imported before the load, for both contenders alike

    import pyarrow.parquet  # noqa: F401  (the reader's import is not part of the data's memory)

    if contender.startswith("GBRanker"):
        _warm_gbrank_fit(backend, threads, out)
    out["rss_before_load_mb"] = _rss_now_mb()
    X, y, qid = read_parquet_arrays(folder / "train.parquet")
    _loaded(out)
    out.update(shape=list(X.shape), X_dtype=str(X.dtype))
    if contender == "lightgbm.train":
        sizes = np.unique(qid, return_counts=True)[1]
        params = {"objective": "lambdarank", "num_leaves": 31, "num_threads": threads, "verbosity": -1}
        _timed(out, lambda: lib.train(params, lib.Dataset(X, y, group=sizes), rounds))
        out["params"] = params
    elif contender == "xgboost.train":
        params = {"objective": "rank:ndcg", "tree_method": "hist", "nthread": threads, "eta": 0.1,
                  "grow_policy": "lossguide", "max_leaves": 31, "max_depth": 0}
        _timed(out, lambda: lib.train(params, lib.QuantileDMatrix(X, y, qid=qid), rounds))
        out["params"] = params
    else:
        model = gbrank.GBRanker("ndcg", backend=backend, n_estimators=rounds, n_jobs=threads)
        _timed(out, lambda: model.fit(X, y, qid=qid))
        out["params"] = model._library_params(model.objective_)
        out["peak_rss_mb"], out["vm_hwm_mb"] = _peak_mb(), _hwm_mb()  # before pickling the model for predict
        _save_model(model, _model_path(folder, backend, rounds))
    out["params"] = {k: (v if isinstance(v, (int, float, str, bool, type(None))) else repr(v))
                     for k, v in out["params"].items()}


def _save_model(model, path: pathlib.Path) -> None:
    path.parent.mkdir(exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    with open(tmp, "wb") as fh:
        pickle.dump(model, fh)
    os.replace(tmp, path)


def child_model(args, folder, contender, out):
    """Train and pickle the GBRanker ``predict`` uses (not a measurement)."""
    import gbrank

    X, y, qid = read_parquet_arrays(folder / "train.parquet")
    model = gbrank.GBRanker("ndcg", backend=contender, n_estimators=args.rounds, n_jobs=args.threads)
    _timed(out, lambda: model.fit(X, y, qid=qid))
    _save_model(model, _model_path(folder, contender, args.rounds))


def child_predict(args, folder, contender, out):
    backend = contender.split("[")[1].split("]")[0] if contender.startswith("GBRanker") else contender.split()[0]
    import importlib

    import gbrank

    import pyarrow.parquet  # noqa: F401

    importlib.import_module(backend)
    with open(_model_path(folder, backend, args.rounds), "rb") as fh:
        model = pickle.load(fh)
    out["rss_before_load_mb"] = _rss_now_mb()
    X, y, qid = read_parquet_arrays(folder / "test.parquet")
    _loaded(out)
    out.update(shape=list(X.shape), X_dtype=str(X.dtype))
    if contender.startswith("GBRanker"):
        scores = _timed(out, lambda: model.predict(X))
    elif backend == "lightgbm":
        scores = _timed(out, lambda: model.booster_.predict(X, num_iteration=model.best_iteration_))
    else:
        scores = _timed(out, lambda: model.booster_.inplace_predict(X, iteration_range=(0, model.best_iteration_)))
    out["peak_rss_mb"], out["vm_hwm_mb"] = _peak_mb(), _hwm_mb()  # before the check below
    result = gbrank.evaluate(y, np.asarray(scores, dtype=np.float64), qid, ["ndcg@10"]).mean()
    out["test_ndcg@10"] = float(result.iloc[0])
    noise = np.random.default_rng(args.seed).normal(size=len(y))  # what a model that learnt nothing gets
    out["random_ndcg@10"] = float(gbrank.evaluate(y, noise, qid, ["ndcg@10"]).mean().iloc[0])


def child_evaluate(args, folder, contender, out):
    import pyarrow.parquet as pq

    import gbrank

    t = time.perf_counter()
    rng = np.random.default_rng(0)
    gbrank.evaluate(rng.integers(0, 5, 40), rng.normal(size=40), np.repeat(np.arange(4), 10), METRICS)
    out["warmup_s"] = time.perf_counter() - t
    out["rss_before_load_mb"] = _rss_now_mb()
    table = pq.read_table(folder / "test.parquet", columns=["label", "qid"])
    y, qid = table.column("label").to_numpy(), table.column("qid").to_numpy()
    scores = y + np.random.default_rng(args.seed).normal(size=len(y))
    _loaded(out)
    result = _timed(out, lambda: gbrank.evaluate(y, scores, qid, METRICS))
    out["rows"] = int(len(y))
    out["means"] = {str(k): float(v) for k, v in result.mean().items()}


def child_bench(args, folder, contender, out):
    import io

    from gbrank.cli import main as gbrank_main

    work = pathlib.Path(tempfile.mkdtemp(prefix=f"bench-out-{folder.name}-", dir=folder.parent))
    argv = ["bench", "letor", "--data", str(folder), "--rounds", str(args.bench_rounds), "--patience",
            str(args.bench_rounds), "--jobs", "1", "--threads", str(args.threads), "--dtype", args.bench_dtype,
            "--out", str(work)]
    if args.bench_contenders:
        argv += ["--contenders", args.bench_contenders]
    report = io.StringIO()
    out["rss_before_load_mb"] = _rss_now_mb()  # the bench loads its folds inside the timed part
    try:
        status = _timed(out, lambda: gbrank_main(argv, out=report))
        if status != 0:
            raise RuntimeError(f"gbrank {' '.join(argv)} exited with {status}")
        config = json.loads((work / "config.json").read_text())
        out["runs"] = len(config.get("runs", []))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out["command"] = "gbrank " + " ".join(argv[:-2])  # with --jobs 1 every run trains in this process


def child_generate(args, folder, contender, out):
    """Write (or reuse) the data of a size (not a measurement)."""
    ensure_data(SIZES[args.size_name], pathlib.Path(args.data_dir), args.seed, args.regenerate,
                say=lambda text: print(text, flush=True))


CHILDREN = {"load": child_load, "fit": child_fit, "predict": child_predict, "evaluate": child_evaluate,
            "bench": child_bench, "model": child_model, "generate": child_generate}


def run_child(args) -> int:
    """``--one TASK``: one measurement in this (fresh) process; prints ``RESULT {json}``."""
    out = {"task": args.one, "contender": args.contender, "size": args.size_name, "pid": os.getpid()}
    folder = pathlib.Path(args.data_dir) / args.size_name
    try:
        CHILDREN[args.one](args, folder, args.contender, out)
    except BaseException as exc:  # MemoryError, KeyboardInterrupt, a library's error: reported, not raised
        out["error"] = f"{type(exc).__name__}: {str(exc)[:400]}"
        import traceback

        traceback.print_exc()
        print("RESULT " + json.dumps(out), flush=True)
        return 1
    out.setdefault("peak_rss_mb", _peak_mb())
    out.setdefault("vm_hwm_mb", _hwm_mb())
    if args.one != "generate":
        print("RESULT " + json.dumps(out), flush=True)
    return 0


# ---------------------------------------------------------------------------------------
# the parent


def _reason(proc_rc: int | None, result: dict | None, log: pathlib.Path, timeout: float | None) -> str:
    if proc_rc is None:
        return f"timed out after {timeout:g} s (killed)"
    if result is not None and "error" in result:
        return result["error"]
    if proc_rc < 0:
        try:
            name = signal.Signals(-proc_rc).name
        except ValueError:
            name = f"signal {-proc_rc}"
        why = " (out of memory? the kernel's OOM killer sends it)" if -proc_rc == signal.SIGKILL else ""
        return f"killed by {name}, returncode {proc_rc}{why}"
    tail = ""
    try:
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
        tail = lines[-1][:300] if lines else ""
    except OSError:
        pass
    return f"exit status {proc_rc}" + (f": {tail}" if tail else "")


def spawn(args, task: str, contender: str, size: str, log_dir: pathlib.Path) -> dict:
    """Run one child; its result with ``process_s`` and ``returncode``, or ``{"failed": reason}``."""
    log = log_dir / f"{size}-{task}-{contender.replace('/', '_').replace(' ', '_')}.log"
    cmd = [sys.executable, os.path.abspath(__file__), "--one", task, "--contender", contender, "--size-name", size,
           "--data-dir", str(args.data_dir), "--rounds", str(args.rounds), "--threads", str(args.threads),
           "--seed", str(args.seed), "--bench-rounds", str(args.bench_rounds), "--bench-dtype", args.bench_dtype]
    if args.bench_contenders:
        cmd += ["--bench-contenders", args.bench_contenders]
    env = dict(os.environ, NUMBA_NUM_THREADS=str(args.threads), OMP_NUM_THREADS=str(args.threads),
               PYTHONUNBUFFERED="1")
    timeout = args.timeout or None
    t = time.perf_counter()
    with open(log, "w") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, env=env)
        try:
            stdout, _ = proc.communicate(timeout=timeout)
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, _ = proc.communicate()
            rc = None
    lines = [line for line in stdout.splitlines() if line.startswith("RESULT ")]
    result = json.loads(lines[-1][len("RESULT "):]) if lines else None
    if rc != 0 or result is None or "error" in result:
        return {"failed": _reason(rc, result, log, timeout), "returncode": rc, "log": str(log),
                "process_s": time.perf_counter() - t}
    result.update(process_s=time.perf_counter() - t, returncode=rc, log=str(log))
    return result


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summarise(plan, runs: dict) -> list[dict]:
    """One record per (task, size, contender): medians over the repeats that succeeded, the
    ratios to the reference of the same task, size and group; failed when any repeat failed."""
    records = []
    for size, c in plan:
        rs = runs[size, c.task, c.name]
        failed = [r["failed"] for r in rs if "failed" in r]
        ok = [r for r in rs if "failed" not in r]
        rec = {"task": c.task, "size": size, "contender": c.name, "group": c.group, "is_reference": c.reference,
               "status": "failed" if failed else "ok", "reason": failed[0] if failed else None,
               "wall_s": _median([r.get("wall_s") for r in ok]),
               "peak_rss_mb": _median([r.get("peak_rss_mb") for r in ok]),
               "rss_start_mb": _median([r.get("rss_before_load_mb") for r in ok]),
               "rss_after_load_mb": _median([r.get("rss_after_load_mb") for r in ok]), "runs": rs}
        records.append(rec)
    for rec in records:
        ref = next((r for r in records if r["task"] == rec["task"] and r["size"] == rec["size"]
                    and r["group"] == rec["group"] and r["is_reference"]), None)
        rec["reference"] = ref["contender"] if ref else None
        alone = sum(r["task"] == rec["task"] and r["size"] == rec["size"] and r["group"] == rec["group"]
                    for r in records) == 1
        for key, ratio in (("wall_s", "wall_ratio"), ("peak_rss_mb", "peak_rss_ratio")):
            good = not alone and ref and rec["status"] == ref["status"] == "ok" and ref[key]
            rec[ratio] = rec[key] / ref[key] if good else None
    return records


def table(records, markdown: bool) -> str:
    """The results, one row per record; ``(ref)`` marks the reference of a task, size and library."""
    head = ["task", "size", "contender", "wall s", "RSS start MB", "RSS after load MB", "peak RSS MB", "wall ratio",
            "RSS ratio"]
    f = lambda v, spec: "-" if v is None else format(v, spec)  # noqa: E731
    rows = []
    for r in records:
        name = r["contender"] + (" (ref)" if r["is_reference"] and _grouped(r, records) else "")
        if r["status"] != "ok":
            rows.append([r["task"], r["size"], name, f"failed: {r['reason']}", "", "", "", "", ""])
            continue
        rows.append([r["task"], r["size"], name, f(r["wall_s"], ".2f"), f(r["rss_start_mb"], ".0f"),
                     f(r["rss_after_load_mb"], ".0f"),
                     f(r["peak_rss_mb"], ".0f"), f(r["wall_ratio"], ".2f"), f(r["peak_rss_ratio"], ".2f")])
    if markdown:
        rule = ["---" if i < 3 else "---:" for i in range(len(head))]
        return "\n".join("| " + " | ".join(row) + " |" for row in [head, rule, *rows])
    widths = [max([len(head[i])] + [len(row[i]) for row in rows]) for i in range(len(head))]

    def line(row):
        return "  ".join(c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()

    return "\n".join([line(head), line(["-" * w for w in widths]), *(line(row) for row in rows)])


def _grouped(rec, records) -> bool:
    """Whether ``rec`` shares its task, size and group with another record (a ratio means something)."""
    return sum(r["task"] == rec["task"] and r["size"] == rec["size"] and r["group"] == rec["group"]
               for r in records) > 1


def _versions() -> dict:
    import importlib.metadata as md

    out = {"python": platform.python_version()}
    for name in ("gbrank", "numpy", "pandas", "pyarrow", "scikit-learn", "lightgbm", "xgboost", "numba", "catboost"):
        try:
            out[name] = md.version(name)
        except md.PackageNotFoundError:
            out[name] = None
    return out


def _installed(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", choices=list(SIZES), default=["small"],
                        help="data sizes: tiny (smoke), small (3,000 lists), web30k (~3.8M rows x 136), "
                             "istella (~9.9M rows x 220) (default: %(default)s)")
    parser.add_argument("--tasks", nargs="+", choices=TASKS, default=list(TASKS),
                        help="what to measure (default: all of %(default)s)")
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS),
                        help="boosting libraries of fit and predict; one not installed is skipped "
                             "(default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=10, help="boosting rounds of fit (default: %(default)s)")
    parser.add_argument("--threads", type=int, default=2,
                        help="threads of the libraries, numba (NUMBA_NUM_THREADS) and the bench (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="runs of every measurement, each in a fresh process, interleaved; medians reported "
                             "(default: %(default)s)")
    parser.add_argument("--bench-rounds", type=int, default=5,
                        help="--rounds and --patience of the gbrank bench letor run (default: %(default)s)")
    parser.add_argument("--bench-contenders", default=None,
                        help="--contenders of the gbrank bench letor run (default: its default contenders)")
    parser.add_argument("--bench-dtype", choices=("float32", "float64"), default="float32",
                        help="--dtype of the gbrank bench letor run (default: %(default)s)")
    parser.add_argument("--data-dir", default="runs/scale-data",
                        help="folder of the generated data (one sub-folder per size, reused while its manifest "
                             "matches), the children's logs (logs/) and the models of predict (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated data (default: %(default)s)")
    parser.add_argument("--regenerate", action="store_true", help="write the data again even when they match")
    parser.add_argument("--timeout", type=float, default=0,
                        help="seconds after which a child is killed and reported failed (default: 0, none)")
    parser.add_argument("--save", metavar="FILE.json", help="write the records, versions and machine to this JSON file")
    parser.add_argument("--markdown", action="store_true", help="print the table as markdown")
    # a child process (internal)
    parser.add_argument("--one", choices=list(CHILDREN), help=argparse.SUPPRESS)
    parser.add_argument("--contender", help=argparse.SUPPRESS)
    parser.add_argument("--size-name", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        return run_child(args)
    for name in ("rounds", "threads", "repeats", "bench_rounds"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if not _installed("pyarrow"):
        parser.error("pyarrow is not installed: it writes and reads the Parquet files (pip install pyarrow)")
    args.data_dir = pathlib.Path(args.data_dir).resolve()
    backends = [b for b in args.backends if _installed(b)]
    for b in set(args.backends) - set(backends):
        print(f"note: {b} is not installed; its contenders are left out", flush=True)
    if any(t in ("fit", "predict") for t in args.tasks) and not backends:
        parser.error("none of --backends is installed")
    versions = _versions()
    print(f"gbrank scale benchmark: sizes {', '.join(args.sizes)}; tasks {', '.join(args.tasks)}; backends "
          f"{', '.join(backends)}; {args.rounds} rounds, {args.threads} threads, {args.repeats} repeat(s); "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; "
          + ", ".join(f"{k} {v}" for k, v in versions.items() if v), flush=True)
    log_dir = args.data_dir / "logs"
    manifests, no_data = {}, {}
    for s in args.sizes:
        manifests[s], no_data[s] = generate(args, s)
    log_dir.mkdir(parents=True, exist_ok=True)
    plan = [(s, c) for s in args.sizes for t in TASKS if t in args.tasks for c in contenders(t, backends)]
    runs = {(s, c.task, c.name): [] for s, c in plan}
    total = len(plan) * args.repeats
    done = 0
    t_start = time.perf_counter()
    for rep in range(args.repeats):
        order = plan if rep % 2 == 0 else plan[::-1]
        for s, c in order:
            done += 1
            stamp = lambda: datetime.datetime.now().strftime("%H:%M:%S")  # noqa: E731
            tag = f"[{done}/{total}] {c.task} {s} {c.name}" + (f" (repeat {rep + 1})" if args.repeats > 1 else "")
            if no_data[s]:
                runs[s, c.task, c.name].append({"failed": no_data[s]})
                print(f"{stamp()} {tag}: failed: {no_data[s]}", flush=True)
                continue
            if c.task == "predict":
                missing = _prepare_model(args, s, c, log_dir, stamp)
                if missing:
                    runs[s, c.task, c.name].append({"failed": missing})
                    print(f"{stamp()} {tag}: failed: {missing}", flush=True)
                    continue
            print(f"{stamp()} {tag} ...", flush=True)
            r = spawn(args, c.task, c.name, s, log_dir)
            runs[s, c.task, c.name].append(r)
            if "failed" in r:
                print(f"{stamp()} {tag}: failed: {r['failed']} (log {r['log']})", flush=True)
            else:
                extra = f", RSS after load {r['rss_after_load_mb']:.0f} MB" if "rss_after_load_mb" in r else ""
                print(f"{stamp()} {tag}: {r['wall_s']:.2f} s{extra}, peak RSS {r['peak_rss_mb']:.0f} MB "
                      f"(process {r['process_s']:.1f} s)", flush=True)
    records = summarise(plan, runs)
    print(f"\n{len(records)} measurements in {time.perf_counter() - t_start:.0f} s; wall s: the measured call; "
          "RSS: resident MB (2**20 bytes) at the start (modules imported, before the data), after loading the data "
          "and at the peak; ratios: to the reference (ref) of the same task, size and library")
    print(table(records, args.markdown), flush=True)
    result = {"args": {k: (str(v) if isinstance(v, pathlib.Path) else v) for k, v in vars(args).items()},
              "command": " ".join([os.path.basename(sys.executable), *sys.argv]), "versions": versions,
              "machine": {"cores": os.cpu_count(), "platform": platform.platform(),
                          "memory_gb": _memory_gb(), "load_average_end": os.getloadavg()},
              "data": {s: dict(m, folder=str(args.data_dir / s)) for s, m in manifests.items() if m},
              "records": records}
    if args.save:
        pathlib.Path(args.save).parent.mkdir(parents=True, exist_ok=True)
        with open(args.save, "w") as fh:
            json.dump(result, fh, indent=2)
    return result


def generate(args, size: str):
    """(manifest, None) of ``size``'s data, written by a child process (so that this process stays
    small: on Linux a child's ``ru_maxrss`` starts from its parent's peak, which exec carries
    over), or (None, why they are missing)."""
    cmd = [sys.executable, os.path.abspath(__file__), "--one", "generate", "--size-name", size,
           "--data-dir", str(args.data_dir), "--seed", str(args.seed)] + (["--regenerate"] if args.regenerate else [])
    proc = subprocess.run(cmd)  # its progress lines go straight to this standard output
    try:
        manifest = json.loads((args.data_dir / size / "manifest.json").read_text())
    except (OSError, ValueError):
        manifest = None
    if proc.returncode != 0 or manifest is None:
        why = _reason(proc.returncode, None, pathlib.Path(os.devnull), None)
        return None, f"no data: generating them failed ({why}; its error is printed above)"
    return manifest, None


def _prepare_model(args, size, c, log_dir, stamp) -> str | None:
    """Make sure the pickled GBRanker of ``predict`` exists (``fit`` leaves it); None when it does."""
    backend = c.group
    path = _model_path(args.data_dir / size, backend, args.rounds)
    if path.is_file():
        return None
    print(f"{stamp()} training the GBRanker[{backend}] model of predict on {size} ({args.rounds} rounds) ...",
          flush=True)
    r = spawn(args, "model", backend, size, log_dir)
    if "failed" in r:
        return f"no model to predict with (training it failed: {r['failed']})"
    return None


def _memory_gb():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        return None


if __name__ == "__main__":
    result = main()
    sys.exit(result if isinstance(result, int) else 0)
