"""LETOR / SVMlight ranking files: one file, a folder of folds, the bundled example.

Parsing is scikit-learn's ``load_svmlight_file(..., query_id=True)``; this module adds the
LETOR conventions around it: 1-based feature indices, query ids from ``qid:`` fields or
from a companion file of group sizes, contiguous queries, and one feature width per fold.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import io
import os
import pathlib
import re
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from .._validation import plural
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


def _where(path, data: bytes, row: int) -> str:
    lines = _row_lines(data)
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


def _check_values(X: sp.csr_matrix, y: np.ndarray, data: bytes, path) -> None:
    """Labels finite and >= 0; features finite or NaN (a missing value).  See ``load_letor``."""
    bad = ~np.isfinite(y) | (y < 0)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{_where(path, data, row)} has the label {y[row]:g} ({plural(bad.sum(), 'such row')} in all); "
            "relevance labels must be finite and non-negative: fix or drop those rows"
        )
    inf = np.isinf(X.data)
    if inf.any():
        at = int(np.flatnonzero(inf)[0])
        row = int(np.searchsorted(X.indptr, at, side="right") - 1)
        raise ValueError(
            f"{_where(path, data, row)} has the feature value {X.data[at]:g} for feature "
            f"{int(X.indices[at]) + 1}; features must be finite, or NaN for a missing value "
            "(LightGBM and XGBoost treat NaN as missing): replace it"
        )


DENSE_WIDTH_LIMIT = 10_000  # a dense X wider than this must use at least 1 in 10 of its columns


def _check_dense_width(X: sp.csr_matrix, path) -> None:
    """Refuse a dense matrix of mostly empty columns: more than ``DENSE_WIDTH_LIMIT`` wide
    and using fewer than one column in ten (one stray feature index of 10**7 would otherwise
    allocate n_rows x 10**7 floats)."""
    width = X.shape[1]
    if width <= DENSE_WIDTH_LIMIT:
        return
    used = np.unique(X.indices).size
    if width <= 10 * used:
        return
    at = int(np.argmax(X.indices))
    row = int(np.searchsorted(X.indptr, at, side="right") - 1)
    where = _where(path, read_bytes(path, "LETOR"), row)
    raise ValueError(
        f"{where} uses feature index {width}, but the file has only {plural(used, 'distinct feature')}: a "
        f"dense X would be {X.shape[0]} x {width} ({X.shape[0] * width * 8 / 2**20:,.0f} MiB) of "
        "mostly empty columns; fix the index, or pass dense=False for a sparse CSR matrix"
    )


def _read_letor(path: pathlib.Path, group_sizes: np.ndarray | None = None):
    """(CSR X, y, qid) of one file, with its own width; see ``load_letor``."""
    if not path.exists():
        raise FileNotFoundError(f"no LETOR file at {path}")
    data = read_bytes(path, "LETOR")
    try:
        X, y, qid = load_svmlight_file(io.BytesIO(data), query_id=True, zero_based=False)
    except ValueError as err:
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
    _check_values(X, y, data, path)
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
    return X.tocsr(), np.asarray(y, dtype=np.float64), np.asarray(qid, dtype=np.int64)


def _finish(X: sp.csr_matrix, y, qid, n_features: int | None, dense: bool, source) -> LetorSplit:
    if n_features is not None:
        if X.shape[1] > n_features:
            raise ValueError(
                f"{source} uses feature index {X.shape[1]}, more than n_features={n_features}; "
                "raise n_features or leave it as None to use the file's own width"
            )
        X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))
    X = X.toarray() if dense else X
    return LetorSplit(X, y, qid)


def _check_n_features(n_features) -> int | None:
    if n_features is None:
        return None
    if isinstance(n_features, bool) or not isinstance(n_features, (int, np.integer)) \
            or n_features < 1:
        raise ValueError(f"n_features must be a positive integer or None, got {n_features!r}")
    return int(n_features)


def load_letor(
    path: str | os.PathLike, *, n_features: int | None = None, dense: bool = True
) -> LetorSplit:
    """Load one SVMlight/LETOR ranking file, plain or gzipped.

    Each line is ``label qid:Q j:v j:v ... [# comment]`` with 1-based feature indices ``j``
    (feature ``j`` becomes column ``j - 1``); absent features are 0.  Parsing is done by
    ``sklearn.datasets.load_svmlight_file(path, query_id=True, zero_based=False)``, which
    reads ``.gz`` files directly.

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

    Returns
    -------
    LetorSplit
        Named tuple ``(X, y, qid)``: ``X`` float64 of shape ``(n_rows, n_features)``,
        ``y`` float64 labels, ``qid`` int64, one per row.

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
        gzip stream.
    FileNotFoundError
        If ``path`` does not exist.
    TypeError
        If ``dense`` is not a bool.

    Examples
    --------
    >>> X, y, qid = load_letor(resolve("mq2008") / "Fold1" / "vali.txt.gz")
    >>> X.shape, float(y.max()), len(np.unique(qid))
    ((2707, 46), 2.0, 157)
    """
    n_features = _check_n_features(n_features)
    if not isinstance(dense, (bool, np.bool_)):
        raise TypeError(f"dense must be True (ndarray) or False (CSR matrix), got {dense!r}")
    path = pathlib.Path(path).expanduser()
    X, y, qid = _read_letor(path)
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


def _load_fold(folder: pathlib.Path, name: str) -> LetorFold:
    files = {split: _split_file(folder, split) for split in SPLITS}
    for split in ("train", "test"):
        if files[split] is None:
            raise FileNotFoundError(
                f"{folder} has no {split} file; a LETOR fold needs {split}.txt or "
                f"{split}.txt.gz (vali is optional)"
            )
    raw = {split: _read_letor(p) for split, p in files.items() if p is not None}
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
    folder_or_name: str | os.PathLike, folds: int | list[int] | None = None
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

    Returns
    -------
    list of LetorFold

    Raises
    ------
    ValueError
        For an unknown fold number, or ``folds`` given for a single-pair folder.
    FileNotFoundError
        For a folder with neither fold sub-folders nor a train/test pair, or a fold without
        a train or test file.

    Examples
    --------
    >>> fold1, fold3 = load_letor_folds("mq2008", folds=[1, 3])
    >>> fold1.name, fold1.train.X.shape, fold1.vali.X.shape, fold3.test.X.shape
    ('Fold1', (9630, 46), (2707, 46), (3635, 46))
    """
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
        return [_load_fold(available[k], f"Fold{k}") for k in _check_folds(folds, available, folder)]
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
    return [_load_fold(folder, folder.name)]


# ---------------------------------------------------------------------------------------
# the bundled example

_EXAMPLE = "lightgbm-lambdarank-example"


def load_example(*, dense: bool = True) -> LetorFold:
    """LightGBM's lambdarank example data, bundled with gbrank (MIT licence).

    A small graded-relevance set of 1-based sparse features (up to 300) with labels 0-4,
    shipped inside LightGBM's repository as ``examples/lambdarank/rank.{train,test}`` plus
    ``.query`` files of group sizes.  Query ids are ``0, 1, ...`` in file order.  See
    ``gbrank/datasets/data/README.md`` and ``LICENSE`` there.

    Parameters
    ----------
    dense : bool, default True
        Dense ``ndarray`` features; ``False`` keeps CSR.

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
    data = importlib.resources.files("gbrank.datasets") / "data"
    raw = {}
    for split in ("train", "test"):
        sizes = _read_group_sizes(
            (data / f"rank.{split}.query").read_text(), f"bundled rank.{split}.query"
        )
        with importlib.resources.as_file(data / f"rank.{split}.gz") as path:
            raw[split] = _read_letor(path, group_sizes=sizes)
    width = max(X.shape[1] for X, _, _ in raw.values())
    parts = {s: _finish(*raw[s], width, dense, f"bundled rank.{s}.gz") for s in raw}
    return LetorFold(_EXAMPLE, parts["train"], None, parts["test"])
