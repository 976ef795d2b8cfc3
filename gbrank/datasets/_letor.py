"""LETOR / SVMlight ranking files: one file, a folder of folds, the bundled example.

Parsing is scikit-learn's ``load_svmlight_file``, fed the file as a stream of lines; this
module adds the LETOR conventions around it: 1-based feature indices, query ids from
``qid:`` fields (collected here as the lines pass, see ``_Rows``) or from a companion file
of group sizes, contiguous queries, and one feature width per fold.
"""

from __future__ import annotations

import array
import contextlib
import dataclasses
import gzip
import importlib.resources
import mmap
import os
import pathlib
import re
import zlib
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from .._validation import first_infinite, plural
from ._files import read_bytes
from ._paths import resolve

SPLITS = ("train", "vali", "test")
_FOLD_DIR = re.compile(r"^Fold(\d+)$")


class LetorSplit(NamedTuple):
    """One split of a LETOR dataset: features, graded labels and one query id per row."""

    X: np.ndarray | sp.csr_matrix
    y: np.ndarray
    qid: np.ndarray


@dataclasses.dataclass(frozen=True)
class LetorFold:
    """One fold of a LETOR dataset; all its splits share the same number of features.

    Attributes
    ----------
    name : str
        ``"Fold1"`` ... for a fold folder, else the dataset folder's name.
    train, test : LetorSplit
    vali : LetorSplit or None
        ``None`` where the fold has no validation file.
    """

    name: str
    train: LetorSplit
    vali: LetorSplit | None
    test: LetorSplit

    @property
    def n_features(self) -> int:
        return self.train.X.shape[1]


# ---------------------------------------------------------------------------------------
# one file


def _read_group_sizes(text: str, source: str) -> np.ndarray:
    try:
        sizes = np.array([int(tok) for tok in text.split()], dtype=np.int64)
    except ValueError:
        raise ValueError(
            f"{source} must hold one integer group size per line (the number of consecutive "
            "rows of each query), but it holds something else"
        ) from None
    if sizes.size == 0:
        raise ValueError(f"{source} is empty; it must hold one group size per query")
    if sizes.min() < 1:
        raise ValueError(
            f"{source} holds a group size of {sizes.min()} (query {int(np.argmin(sizes))}); "
            "every query needs at least one row"
        )
    return sizes


def _companion(path: pathlib.Path) -> pathlib.Path | None:
    """The group-size file ``<path>.query`` (for ``x.gz`` also ``x.query``), if any."""
    candidates = [path.with_name(path.name + ".query")]
    if path.suffix == ".gz":
        candidates.append(path.with_name(path.stem + ".query"))
    return next((c for c in candidates if c.is_file()), None)


def _check_contiguous(qid: np.ndarray, source: str) -> None:
    starts = np.concatenate(([0], np.flatnonzero(qid[1:] != qid[:-1]) + 1))
    run_ids = qid[starts]
    order = np.argsort(run_ids, kind="stable")
    repeats = order[1:][run_ids[order[1:]] == run_ids[order[:-1]]]
    if repeats.size:
        run = int(repeats.min())  # the earliest run of a query seen before
        raise ValueError(
            f"the rows of query {int(run_ids[run])} in {source} are not contiguous (it starts "
            f"again at row {int(starts[run])} after other queries); LETOR files keep each "
            "query's rows together, so sort the file by query id (stably, to keep the "
            "document order)"
        )


def _row_lines(data: bytes) -> list[int]:
    """1-based file line of every data row (lines left after stripping comments and blanks)."""
    return [number for number, raw in enumerate(data.split(b"\n"), start=1)
            if raw.split(b"#", 1)[0].strip()]


def _where(path, row: int) -> str:
    """``"<path>, line <n>"`` for data row ``row``; reads the file again (only for an error message)."""
    lines = _row_lines(read_bytes(path, "LETOR"))
    return f"{path}, line {lines[row] if row < len(lines) else row + 1}"


_LINE_FORM = "each line must read 'label qid:<id> <index>:<value> ... [# comment]'"


def _find_bad_token(data: bytes, path) -> str | None:
    """The first line that is not SVMlight, described with its file, line and token."""
    for number, raw in enumerate(data.split(b"\n"), start=1):
        tokens = raw.split(b"#", 1)[0].split()
        if not tokens:
            continue
        where = f"{path} is not a valid SVMlight/LETOR file: line {number}"
        shown = [t.decode("utf-8", "replace") for t in tokens]
        try:
            float(tokens[0])
        except ValueError:
            return f"{where}: the label {shown[0]!r} is not a number; {_LINE_FORM}"
        for tok, text in zip(tokens[1:], shown[1:]):
            name, sep, value = tok.partition(b":")
            if not sep or not name or not value:
                return f"{where}: the field {text!r} is not '<index>:<value>'; {_LINE_FORM}"
            if name == b"qid":
                try:
                    int(value)
                except ValueError:
                    return f"{where}: the query id in {text!r} is not an integer; {_LINE_FORM}"
                continue
            try:
                index = int(name)
            except ValueError:
                return f"{where}: the feature index in {text!r} is not an integer; {_LINE_FORM}"
            if index < 1:
                return (f"{where}: the feature index in {text!r} is below 1, but LETOR feature indices "
                        "are 1-based (feature j is column j-1); shift the indices by one when writing the "
                        "file, e.g. sklearn's dump_svmlight_file(..., zero_based=False)")
            try:
                float(value)
            except ValueError:
                return f"{where}: the feature value in {text!r} is not a number; {_LINE_FORM}"
    return None


def _check_values(X: _Blocks, y: np.ndarray, path) -> None:
    """Labels finite and >= 0; features finite or NaN (a missing value).  See ``load_letor``.

    Works on the blocks of rows one by one: never a dense copy of a whole CSR ``X``."""
    bad = ~np.isfinite(y) | (y < 0)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{_where(path, row)} has the label {y[row]:g} ({plural(bad.sum(), 'such row')} in all); "
            "relevance labels must be finite and non-negative: fix or drop those rows"
        )
    for first_row, block in X.with_rows():
        found = block.first_inf()
        if found is not None:
            row, column, value = found
            raise ValueError(
                f"{_where(path, first_row + row)} has the feature value {value:g} for feature "
                f"{column + 1}; features must be finite, or NaN for a missing value "
                "(LightGBM and XGBoost treat NaN as missing): replace it"
            )


DENSE_WIDTH_LIMIT = 10_000  # a dense X wider than this must use at least 1 in 10 of its columns


def _check_dense_width(X: _Blocks, path) -> None:
    """Refuse a dense matrix of mostly empty columns: more than ``DENSE_WIDTH_LIMIT`` wide
    and using fewer than one column in ten (one stray feature index of 10**7 would otherwise
    allocate n_rows x 10**7 floats)."""
    n_rows, width = X.shape
    if width <= DENSE_WIDTH_LIMIT:
        return
    used = np.unique(np.concatenate([block.columns() for block in X.blocks])).size
    if width <= 10 * used:
        return
    # the widest column is in a sparse block: dense ones are at most DENSE_WIDTH_LIMIT wide
    for first, block in X.with_rows():
        row = block.first_row_using(width - 1)
        if row is not None:
            break
    mib = n_rows * width * np.dtype(X.dtype).itemsize / 2**20
    raise ValueError(
        f"{_where(path, first + row)} uses feature index {width}, but the file has only "
        f"{plural(used, 'distinct feature')}: a dense X would be {n_rows} x {width} ({mib:,.0f} MiB) of "
        "mostly empty columns; fix the index, or pass dense=False for a sparse CSR matrix"
    )


# ---------------------------------------------------------------------------------------
# parsing by blocks of rows


def _mapped(shape, dtype) -> np.ndarray:
    """Zeros in an anonymous memory map of their own: dropping the array hands its pages back
    to the system at once (a freed malloc block of this size may stay in the heap, resident)."""
    size = int(np.prod(shape)) * np.dtype(dtype).itemsize
    return np.frombuffer(mmap.mmap(-1, max(size, 1)), dtype=dtype, count=int(np.prod(shape))).reshape(shape)


def _mapped_copy(values: np.ndarray, dtype) -> np.ndarray:
    out = _mapped(values.shape, dtype)
    out[...] = values
    return out


_INT32_MAX = np.iinfo(np.int32).max


class _SparseBlock:
    """Consecutive rows of a file in CSR form: values, 0-based column indices, row pointers from 0."""

    def __init__(self, X: sp.csr_matrix, dtype):
        index = np.int32 if max(X.shape[1], X.nnz) <= _INT32_MAX else np.int64
        self.data = _mapped_copy(X.data, dtype)
        self.indices = _mapped_copy(X.indices, index)
        self.indptr = _mapped_copy(X.indptr, index)
        self.n_rows = X.shape[0]

    def first_inf(self) -> tuple[int, int, float] | None:
        """(row, column, value) of the first infinite value, or None."""
        found = first_infinite(self.data.reshape(-1, 1))  # by blocks: no mask as large as the data
        if found is None:
            return None
        at = found[0]
        return int(np.searchsorted(self.indptr, at, side="right") - 1), int(self.indices[at]), self.data[at]

    def columns(self) -> np.ndarray:
        return np.unique(self.indices)

    def first_row_using(self, column: int) -> int | None:
        hits = np.flatnonzero(self.indices == column)
        return int(np.searchsorted(self.indptr, hits[0], side="right") - 1) if hits.size else None

    def csr(self, width: int) -> sp.csr_matrix:
        return sp.csr_matrix((self.data, self.indices, self.indptr), shape=(self.n_rows, width))

    def fill(self, out: np.ndarray) -> None:
        """Write the rows into ``out`` (zeros, C-ordered, this block's rows by the output's width)."""
        self.csr(out.shape[1]).toarray(out=out)


class _DenseBlock:
    """Consecutive rows of a file as a dense array (as wide as the widest of them), with the
    columns they use (a dense array no longer tells an absent feature from a written 0)."""

    def __init__(self, X: sp.csr_matrix, dtype):
        self.values = _mapped(X.shape, dtype)
        X.toarray(out=self.values)
        self.used = np.flatnonzero(np.bincount(X.indices, minlength=X.shape[1]))
        self.n_rows = X.shape[0]

    def first_inf(self) -> tuple[int, int, float] | None:
        found = first_infinite(self.values)
        if found is None:
            return None
        row, column, _ = found
        return row, column, self.values[row, column]

    def columns(self) -> np.ndarray:
        return self.used

    def first_row_using(self, column: int) -> int | None:
        return None  # only asked for a column wider than DENSE_WIDTH_LIMIT, which no dense block has

    def fill(self, out: np.ndarray) -> None:
        out[:, :self.values.shape[1]] = self.values


class _Blocks:
    """The features of one file as blocks of consecutive rows, joined once at the end.

    Each block is a few MiB of text parsed by scikit-learn at a time and kept in the form of
    the output: dense when a dense ``X`` is asked for (unless the block is wider than
    ``DENSE_WIDTH_LIMIT``), else CSR with int32 column indices where they fit.  ``to_dense`` /
    ``to_csr`` copy the blocks into the one output, dropping each block once copied, so the
    peak memory is about the output plus one block (a whole-file CSR matrix, as
    ``load_svmlight_file`` gives, with int64 column indices, would stay beside the dense array
    that ``toarray`` makes of it).
    """

    def __init__(self, blocks: list, width: int, dtype):
        self.blocks = blocks
        self.dtype = dtype
        self.shape = (sum(block.n_rows for block in blocks), width)

    def with_rows(self):
        """(first row, block) of every block, in file order."""
        first = 0
        for block in self.blocks:
            yield first, block
            first += block.n_rows

    def _drain(self):
        """``with_rows``, each block dropped after its turn (its caller copies it out)."""
        first = 0
        self.blocks.reverse()
        while self.blocks:
            block = self.blocks.pop()
            yield first, block
            first += block.n_rows
            del block

    def to_dense(self, width: int) -> np.ndarray:
        out = np.zeros((self.shape[0], width), dtype=self.dtype)  # pages touched only as rows are filled
        for first, block in self._drain():
            block.fill(out[first:first + block.n_rows])
        return out

    def to_csr(self, width: int) -> sp.csr_matrix:
        """One CSR matrix (of sparse blocks only: a file read for a dense X stays dense)."""
        nnz = sum(block.data.size for block in self.blocks)
        index = np.int32 if max(width, nnz) <= _INT32_MAX else np.int64
        data, indices = np.empty(nnz, dtype=self.dtype), np.empty(nnz, dtype=index)
        indptr = np.zeros(self.shape[0] + 1, dtype=index)
        at = 0
        for first, block in self._drain():
            end = at + block.data.size
            data[at:end], indices[at:end] = block.data, block.indices
            indptr[first + 1:first + block.n_rows + 1] = block.indptr[1:] + at
            at = end
        return sp.csr_matrix((data, indices, indptr), shape=(self.shape[0], width))


class _Binary(Exception):
    """A NUL byte in the text: ``read_bytes`` words the error (with its line)."""


class _Rows:
    """A file's lines for scikit-learn's parser, a block at a time, noting each data row's
    query id on the way.

    ``load_svmlight_file(f)`` treats any object with a ``read`` method as an open file and
    only iterates over its lines; each iteration here gives the next lines, up to about
    ``block_bytes`` of text, until ``exhausted``.  scikit-learn's own ``query_id=True`` grows
    the ids with one ``np.append`` per row, a copy of every id so far (scikit-learn 1.9:
    quadratic in the rows, minutes for 360,000 rows, hours for MSLR-WEB30K); here they go to
    an ``array.array``.  A row's query id is what scikit-learn reads: the text after the
    first ``:`` of the field after the label, when that field starts with ``qid``, in the
    part of the line before ``#``.
    """

    def __init__(self, lines, block_bytes: int):
        self._lines = iter(lines)
        self._block_bytes = block_bytes
        self.qid = array.array("q")
        self.exhausted = False

    def read(self, size: int = -1) -> bytes:  # pragma: no cover - only its presence is used
        raise NotImplementedError("_Rows is read line by line")

    def __iter__(self):
        append = self.qid.append
        left = self._block_bytes
        for line in self._lines:
            if b"\0" in line:
                raise _Binary
            fields = line.split(b"#", 1)[0].split(None, 2)
            if len(fields) > 1 and fields[1].startswith(b"qid"):
                append(int(fields[1].partition(b":")[2]))
            yield line
            left -= len(line)
            if left <= 0:
                return
        self.exhausted = True


_READ_BUFFER = 1 << 20
_BLOCK_BYTES = 1 << 24  # text parsed per call of scikit-learn's parser (16 MiB: about 2 million values)


def _parse(path: pathlib.Path, dtype, dense: bool):
    """(X as _Blocks, y, qid) of a plain or gzipped file, streamed: the text is never held whole."""
    blocks, labels, width = [], [], 0
    with contextlib.ExitStack() as stack:
        stream = stack.enter_context(open(path, "rb", buffering=_READ_BUFFER))
        gzipped = stream.read(2) == b"\x1f\x8b"
        stream.seek(0)
        if gzipped:
            stream = stack.enter_context(gzip.GzipFile(fileobj=stream, mode="rb"))
        rows = _Rows(stream, _BLOCK_BYTES)
        while not rows.exhausted:
            X, y = load_svmlight_file(rows, query_id=False, zero_based=False, dtype=dtype)
            width = max(width, X.shape[1])
            if X.shape[0]:
                form = _DenseBlock if dense and X.shape[1] <= DENSE_WIDTH_LIMIT else _SparseBlock
                blocks.append(form(X, dtype))
                labels.append(y)
            del X
    y = np.concatenate(labels) if labels else np.zeros(0)
    return _Blocks(blocks, width, dtype), y, np.frombuffer(rows.qid, dtype=np.int64)


def _read_letor(path: pathlib.Path, group_sizes: np.ndarray | None = None, dtype=np.float64, dense: bool = False):
    """(X as _Blocks, y, qid) of one file, with its own width; see ``load_letor``.  ``dense``
    keeps the blocks dense, for a dense ``X``."""
    if not path.exists():
        raise FileNotFoundError(f"no LETOR file at {path}")
    try:
        X, y, qid = _parse(path, dtype, dense)
    except (ValueError, _Binary, EOFError, OSError, zlib.error) as err:
        # the slow road, only for a failure: read_bytes refuses a folder, a binary file and a
        # broken gzip stream with their own messages; a parse error is found with its line
        data = read_bytes(path, "LETOR")
        found = _find_bad_token(data, path)
        if found is not None:
            raise ValueError(found) from None
        if "Invalid index 0" in str(err):
            raise ValueError(
                f"{path} has a feature index 0, but LETOR feature indices are 1-based (feature j "
                "is column j-1); shift the indices by one when writing the file, e.g. "
                "sklearn's dump_svmlight_file(..., zero_based=False)"
            ) from None
        raise ValueError(f"{path} is not a valid SVMlight/LETOR file: {err}") from None
    _check_values(X, y, path)
    n = X.shape[0]
    if n == 0:
        raise ValueError(f"{path} holds no rows")
    has_qid = qid.size > 0
    if has_qid and qid.size != n:
        raise ValueError(
            f"{path} has {plural(n, 'row')} but only {qid.size} carry a 'qid:' field; either every row "
            "or none must have one"
        )
    if group_sizes is None and not has_qid:
        companion = _companion(path)
        if companion is None:
            raise ValueError(
                f"{path} has no 'qid:' fields and no companion file {path.name}.query of group "
                "sizes, so its rows cannot be grouped into queries; add 'qid:<id>' after each "
                f"label, or write the number of rows of each consecutive query, one per line, "
                f"to {path.with_name(path.name + '.query')}"
            )
        group_sizes = _read_group_sizes(companion.read_text(), str(companion))
        source = str(companion)
    else:
        source = f"the group sizes given for {path}"
    if not has_qid:
        total = int(group_sizes.sum())
        if total != n:
            raise ValueError(
                f"{source} lists {plural(group_sizes.size, 'query', 'queries')} with {plural(total, 'row')} in "
                f"all, but {path} has {plural(n, 'row')}; the group sizes must sum to the row count (is it the right "
                "file?)"
            )
        qid = np.repeat(np.arange(group_sizes.size, dtype=np.int64), group_sizes)
    _check_contiguous(qid, str(path))
    return X, np.asarray(y, dtype=np.float64), np.asarray(qid, dtype=np.int64)


def _finish(X: _Blocks, y, qid, n_features: int | None, dense: bool, source) -> LetorSplit:
    """The split with ``X`` joined into one dense array or CSR matrix of ``n_features`` columns
    (by default the file's own width)."""
    width = X.shape[1]
    if n_features is not None:
        if width > n_features:
            raise ValueError(
                f"{source} uses feature index {width}, more than n_features={n_features}; "
                "raise n_features or leave it as None to use the file's own width"
            )
        width = n_features
    return LetorSplit(X.to_dense(width) if dense else X.to_csr(width), y, qid)


def _check_n_features(n_features) -> int | None:
    if n_features is None:
        return None
    if isinstance(n_features, bool) or not isinstance(n_features, (int, np.integer)) \
            or n_features < 1:
        raise ValueError(f"n_features must be a positive integer or None, got {n_features!r}")
    return int(n_features)


DTYPES = (np.float64, np.float32)  # the feature types load_letor returns


def _check_dtype(dtype) -> type:
    """``dtype`` as ``np.float64`` or ``np.float32``, else a ValueError naming the argument."""
    try:
        found = None if dtype is None or isinstance(dtype, bool) else np.dtype(dtype).type
    except (TypeError, ValueError):
        found = None
    if found not in DTYPES:
        raise ValueError(
            f"dtype must be np.float64 or np.float32 (the type of the features X), got {dtype!r}"
        )
    return found


def load_letor(
    path: str | os.PathLike, *, n_features: int | None = None, dense: bool = True,
    dtype: type = np.float64,
) -> LetorSplit:
    """Load one SVMlight/LETOR ranking file, plain or gzipped.

    Each line is ``label qid:Q j:v j:v ... [# comment]`` with 1-based feature indices ``j``
    (feature ``j`` becomes column ``j - 1``); absent features are 0.  Parsing is done by
    ``sklearn.datasets.load_svmlight_file(..., zero_based=False, dtype=dtype)``, fed the
    file (gunzipped when it starts with gzip's magic number) as a stream of lines, 16 MiB
    of text at a time: the text is never held in memory whole, the query ids are collected
    as the lines pass (in linear time; scikit-learn's own ``query_id=True`` is quadratic in
    the rows), each block of rows is kept in the output's form (dense rows, or CSR with
    int32 column indices) and the blocks are joined once at the end.  The peak memory is
    about the output plus one block; no float64 copy is made for ``dtype=np.float32``.
    Loading MSLR-WEB30K: ``docs/speed.md``, "Loading LETOR files at full size".

    Query ids come from the ``qid:`` fields.  A file without them (LightGBM's format) takes
    them from the companion file ``<path>.query`` (for ``x.gz`` also ``x.query``): one group
    size per line, the number of consecutive rows of each query; the queries then get ids
    ``0, 1, 2, ...`` in file order.  A file with ``qid:`` fields ignores any companion.

    Parameters
    ----------
    path : str or path-like
        The file.  (Use ``resolve`` to turn a dataset name into a folder.)
    n_features : int, optional
        Width of ``X``; by default the largest feature index in the file.  Set it to give
        several files the same width.
    dense : bool, default True
        Return ``X`` as a dense ``ndarray``; ``False`` keeps scipy's CSR matrix.
    dtype : np.float64 or np.float32, default np.float64
        Type of the features ``X`` (dense or CSR).  ``np.float32`` parses every value
        straight to float32 (no float64 copy on the way): 4 bytes a value instead of 8, in
        the dense matrix and in the CSR's values.  The values are those of the float64 load
        cast to float32.  Labels stay float64 and query ids int64.

    Returns
    -------
    LetorSplit
        Named tuple ``(X, y, qid)``: ``X`` of ``dtype`` (float64 by default) and shape
        ``(n_rows, n_features)``, ``y`` float64 labels, ``qid`` int64, one per row.

    Notes
    -----
    What the loader checks, and what it leaves to the models (``docs/bad-inputs.md``):

    * **Labels** must be finite and non-negative; NaN, inf and negative labels are refused
      with the file and line.  Fractional labels and labels above 30 are returned as they
      are (they are valid for ``gain="linear"``); the evaluator, the objectives and the
      bounds refuse them where the exponential gain ``2**l - 1`` cannot use them.
    * **Features**: ``nan`` values are kept as NaN, a *missing value* (LightGBM and
      XGBoost send missing values down a learned default branch); ``inf`` is refused with
      the file, line and feature.  Absent features are 0.
    * **Width**: with ``dense=True`` and ``n_features=None``, a file whose largest feature
      index is above 10,000 and more than ten times the number of distinct indices it
      uses is refused (one stray index of 10**7 would allocate ``n_rows x 10**7`` floats);
      ``dense=False`` returns a CSR matrix of any width.

    Raises
    ------
    ValueError
        If the rows cannot be grouped into queries (no ``qid:`` fields and no companion
        file, or group sizes that do not sum to the row count), if a query's rows are not
        contiguous (the message names the query id), if a feature index is 0 or exceeds
        ``n_features``, for a label or feature value refused above, or if the file is not
        valid SVMlight (the message names the line and the field), binary, or a truncated
        gzip stream; if ``dtype`` is neither ``np.float64`` nor ``np.float32``.
    FileNotFoundError
        If ``path`` does not exist.
    TypeError
        If ``dense`` is not a bool.

    Examples
    --------
    >>> X, y, qid = load_letor(resolve("mq2008") / "Fold1" / "vali.txt.gz")
    >>> X.shape, float(y.max()), len(np.unique(qid))
    ((2707, 46), 2.0, 157)
    >>> load_letor(resolve("mq2008") / "Fold1" / "vali.txt.gz", dtype=np.float32).X.dtype
    dtype('float32')
    """
    n_features = _check_n_features(n_features)
    if not isinstance(dense, (bool, np.bool_)):
        raise TypeError(f"dense must be True (ndarray) or False (CSR matrix), got {dense!r}")
    dtype = _check_dtype(dtype)
    path = pathlib.Path(path).expanduser()
    X, y, qid = _read_letor(path, dtype=dtype, dense=dense)
    if dense and n_features is None:
        _check_dense_width(X, path)
    return _finish(X, y, qid, n_features, dense, path)


# ---------------------------------------------------------------------------------------
# folders of folds


def _split_file(folder: pathlib.Path, split: str) -> pathlib.Path | None:
    """``<split>.txt``, ``<split>.txt.gz`` or ``<split>.<tag>.txt[.gz]`` in ``folder``."""
    pattern = re.compile(rf"^{split}(\.[^.]+)*\.txt(\.gz)?$")
    found = sorted(p for p in folder.iterdir() if p.is_file() and pattern.match(p.name))
    if len(found) > 1:
        names = ", ".join(p.name for p in found)
        raise ValueError(
            f"{folder} holds several {split} files ({names}); keep one of them (e.g. either "
            f"{split}.txt or {split}.txt.gz)"
        )
    return found[0] if found else None


def _load_fold(folder: pathlib.Path, name: str, dtype=np.float64) -> LetorFold:
    files = {split: _split_file(folder, split) for split in SPLITS}
    for split in ("train", "test"):
        if files[split] is None:
            raise FileNotFoundError(
                f"{folder} has no {split} file; a LETOR fold needs {split}.txt or "
                f"{split}.txt.gz (vali is optional)"
            )
    raw = {split: _read_letor(p, dtype=dtype, dense=True) for split, p in files.items() if p is not None}
    for split, (X, _, _) in raw.items():
        _check_dense_width(X, files[split])
    width = max(X.shape[1] for X, _, _ in raw.values())
    parts = {split: _finish(*raw[split], width, True, files[split]) for split in raw}
    return LetorFold(name, parts["train"], parts.get("vali"), parts["test"])


def _check_folds(folds, available: dict[int, pathlib.Path], folder) -> list[int]:
    if folds is None:
        return sorted(available)
    if isinstance(folds, (int, np.integer)) and not isinstance(folds, bool):
        folds = [folds]
    chosen = []
    for k in folds:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or int(k) not in available:
            raise ValueError(
                f"fold {k!r} is not in {folder}; choose among {sorted(available)} "
                f"(the numbers of its Fold<k> sub-folders)"
            )
        if int(k) in chosen:
            raise ValueError(f"fold {int(k)} is listed twice in folds={list(folds)!r}")
        chosen.append(int(k))
    if not chosen:
        raise ValueError(f"folds is empty; choose among {sorted(available)} or pass None for all")
    return chosen


def load_letor_folds(
    folder_or_name: str | os.PathLike, folds: int | list[int] | None = None, *,
    dtype: type = np.float64,
) -> list[LetorFold]:
    """Load the folds of a LETOR dataset folder (dense features).

    Two layouts are read:

    * ``Fold1/ ... FoldK/``, each holding ``train``, ``vali`` and ``test`` files
      (``.txt`` or ``.txt.gz``), as LETOR 4.0 and MSLR-WEB ship them;
    * a single ``train`` / ``test`` (optionally ``vali``) pair, read as one fold named after
      the folder.  Tagged names such as ``train.5k.txt.gz`` are accepted.

    Every split of one fold has the same number of features, the largest over its files.

    Parameters
    ----------
    folder_or_name : str or path-like
        The folder, or a dataset name (see ``resolve``), e.g. ``"mq2008"``.
    folds : int or list of int, optional
        Fold numbers to load, in the order given (``[1, 3]`` loads Fold1 and Fold3); all by
        default.  Only for folders with ``Fold<k>`` sub-folders.
    dtype : np.float64 or np.float32, default np.float64
        Type of every split's features, as in ``load_letor``.

    Returns
    -------
    list of LetorFold

    Raises
    ------
    ValueError
        For an unknown fold number, ``folds`` given for a single-pair folder, or a ``dtype``
        other than ``np.float64`` and ``np.float32``.
    FileNotFoundError
        For a folder with neither fold sub-folders nor a train/test pair, or a fold without
        a train or test file.

    Examples
    --------
    >>> fold1, fold3 = load_letor_folds("mq2008", folds=[1, 3])
    >>> fold1.name, fold1.train.X.shape, fold1.vali.X.shape, fold3.test.X.shape
    ('Fold1', (9630, 46), (2707, 46), (3635, 46))
    """
    dtype = _check_dtype(dtype)
    folder = resolve(folder_or_name)
    if not folder.is_dir():
        raise NotADirectoryError(
            f"{folder} is a file; load_letor_folds reads a folder of folds (use load_letor "
            "for a single file)"
        )
    available = {}
    for sub in folder.iterdir():
        match = _FOLD_DIR.match(sub.name)
        if match and sub.is_dir():
            available[int(match.group(1))] = sub
    if available:
        return [_load_fold(available[k], f"Fold{k}", dtype) for k in _check_folds(folds, available, folder)]
    if _split_file(folder, "train") is None and _split_file(folder, "test") is None:
        raise FileNotFoundError(
            f"{folder} holds no LETOR data: expected Fold1, Fold2, ... sub-folders of "
            "train/vali/test files, or train.txt[.gz] and test.txt[.gz] directly in it"
        )
    if folds is not None:
        raise ValueError(
            f"folds={folds!r} selects Fold<k> sub-folders, but {folder} holds a single "
            "train/test pair; leave folds=None"
        )
    return [_load_fold(folder, folder.name, dtype)]


# ---------------------------------------------------------------------------------------
# the bundled example

_EXAMPLE = "lightgbm-lambdarank-example"


def load_example(*, dense: bool = True, dtype: type = np.float64) -> LetorFold:
    """LightGBM's lambdarank example data, bundled with gbrank (MIT licence).

    A small graded-relevance set of 1-based sparse features (up to 300) with labels 0-4,
    shipped inside LightGBM's repository as ``examples/lambdarank/rank.{train,test}`` plus
    ``.query`` files of group sizes.  Query ids are ``0, 1, ...`` in file order.  See
    ``gbrank/datasets/data/README.md`` and ``LICENSE`` there.

    Parameters
    ----------
    dense : bool, default True
        Dense ``ndarray`` features; ``False`` keeps CSR.
    dtype : np.float64 or np.float32, default np.float64
        Type of the features, as in ``load_letor``.

    Returns
    -------
    LetorFold
        ``name="lightgbm-lambdarank-example"``; ``train`` (3,005 rows, 201 queries) and
        ``test`` (768 rows, 50 queries) with the same width; ``vali`` is ``None``.

    Examples
    --------
    >>> example = load_example()
    >>> example.train.X.shape, example.test.X.shape
    ((3005, 300), (768, 300))
    """
    dtype = _check_dtype(dtype)
    data = importlib.resources.files("gbrank.datasets") / "data"
    raw = {}
    for split in ("train", "test"):
        sizes = _read_group_sizes(
            (data / f"rank.{split}.query").read_text(), f"bundled rank.{split}.query"
        )
        with importlib.resources.as_file(data / f"rank.{split}.gz") as path:
            raw[split] = _read_letor(path, group_sizes=sizes, dtype=dtype, dense=dense)
    width = max(X.shape[1] for X, _, _ in raw.values())
    parts = {s: _finish(*raw[s], width, dense, f"bundled rank.{s}.gz") for s in raw}
    return LetorFold(_EXAMPLE, parts["train"], None, parts["test"])
