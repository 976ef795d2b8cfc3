"""Input checks shared by the evaluator, the objectives and the estimators.

Each check raises ``ValueError`` (or ``TypeError``) with a message that names the
problem and the fix.  Nothing is silently dropped, reordered or turned into NaN.
"""

from __future__ import annotations

import numpy as np

MAX_EXP_LABEL = 30  # 2**31 - 1 no longer fits the gain tables of the boosting libraries


def refuse_sparse(values, name: str, ndim: int | None = 1) -> None:
    """Raise ``TypeError`` naming a scipy.sparse input and the fix (``ndim``: the dense
    shape wanted, 1 or 2; None: read it from the matrix).  ``np.asarray`` of a sparse matrix
    is a 0-d object array, so without this check the message would say "got shape ()".
    Checked by duck typing: scipy is not imported here."""
    if not (hasattr(values, "tocsr") and hasattr(values, "nnz") and hasattr(values, "toarray")):
        return
    shape = tuple(getattr(values, "shape", ()))
    vector = 1 in shape
    if ndim is None:
        ndim = 1 if vector else 2
    if ndim == 2:
        fix = f"pass a dense 2-D array, e.g. {name}.toarray()"
    elif vector:
        fix = f"pass a dense 1-D array, e.g. {name}.toarray().ravel()"
    else:
        fix = "pass a dense 1-D array with one value per row"
    raise TypeError(f"{name} is a scipy.sparse matrix of shape {shape}; {fix}")


def as_1d_float(values, name: str) -> np.ndarray:
    """A contiguous float64 1-d copy-free view where possible; raises on NaN/inf."""
    refuse_sparse(values, name)
    arr = np.asarray(values)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.reshape(-1)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one value per row), got shape {arr.shape}")
    arr, bad = as_float64(arr, name)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name} contains {int(bad.sum())} NaN or infinite value(s) (first at row {first}, "
            f"value {arr[first]}); remove or impute those rows before ranking"
        )
    return arr


def as_float64(arr: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """A numeric array of any shape as a contiguous float64 array (no copy where it is one
    already), and the mask of its NaN and infinite values; a dtype that is not a number
    (bool, integer, float) raises ``TypeError`` naming ``name``.  The caller words the error
    about the non-finite values (its rows, or rows and columns, and its fix)."""
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    return arr, ~np.isfinite(arr)


def check_same_length(**arrays) -> int:
    """All arrays have the same number of rows; returns it."""
    lengths = {}
    for name, a in arrays.items():
        if a is None:
            continue
        refuse_sparse(a, name, ndim=None)
        try:
            lengths[name] = len(a)
        except TypeError:
            raise TypeError(
                f"{name} must be an array-like with one entry per row, got {type(a).__name__} {a!r:.40}"
            ) from None
    if len(set(lengths.values())) > 1:
        detail = ", ".join(f"{k}={v}" for k, v in lengths.items())
        raise ValueError(f"inputs must have one entry per row, but their lengths differ: {detail}")
    n = next(iter(lengths.values()))
    if n == 0:
        raise ValueError("no rows were given: every input is empty")
    return n


def check_labels(labels, gain: str = "exp", integer: bool | None = None, *, graded: bool = True,
                 name: str = "labels") -> np.ndarray:
    """The one label contract of gbrank; returns the labels as a float64 1-d array.

    Labels are finite and non-negative.  Where they are used as graded gains
    (``graded=True``: nDCG, DCG) with ``gain="exp"`` they must also be integers up to
    :data:`MAX_EXP_LABEL` (2**l - 1 of a fractional or huge label is not what anyone means);
    ``integer`` overrides the integer rule.  Binary metrics (``graded=False``) only compare
    labels with the relevance threshold.
    """
    if gain not in ("exp", "linear"):
        raise ValueError(f"gain must be 'exp' (2**l - 1) or 'linear' (l), got {gain!r}")
    refuse_sparse(labels, name)
    if np.isscalar(labels):
        raise TypeError(f"{name} must be a 1-D array of relevance labels, got the scalar {labels!r}")
    if np.ndim(labels) != 1:
        raise ValueError(f"{name} must be 1-D (one label per row), got shape {np.shape(labels)}")
    labels = as_1d_float(labels, name)
    if len(labels) and labels.min() < 0:
        first = int(np.argmin(labels))
        raise ValueError(
            f"{name} must be non-negative relevance grades, found {labels[first]} at row {first}; "
            "shift or clip the labels so that 0 means not relevant"
        )
    if not graded or not len(labels):
        return labels
    if integer is None:
        integer = gain == "exp"
    if integer and not np.all(labels == np.round(labels)):
        first = int(np.flatnonzero(labels != np.round(labels))[0])
        raise ValueError(
            f"graded {name} must be integers here (found {labels[first]} at row {first}); "
            "round them, or use gain='linear' for real-valued relevance"
        )
    if gain == "exp" and labels.max() > MAX_EXP_LABEL:
        raise ValueError(
            f"{name} over {MAX_EXP_LABEL} overflow the exponential gain 2**l - 1 (max label "
            f"{labels.max():g} at row {int(np.argmax(labels))}); rescale the grades or use gain='linear'"
        )
    return labels


def check_choice(value, name: str, choices) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)}, got {value!r}")


def group_by_qid(qid) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group rows by query id, in any row order and any qid order.

    Returns ``(order, starts, qids)``: rows ``order[starts[i]:starts[i+1]]`` form list
    ``qids[i]``, kept in their input order (which the "stable" tie policy uses).
    """
    refuse_sparse(qid, "qid")
    q = np.asarray(qid)
    if q.ndim != 1:
        raise ValueError(f"qid must be one-dimensional (one query id per row), got shape {q.shape}")
    if q.dtype.kind == "f" and not np.all(np.isfinite(q)):
        raise ValueError("qid contains NaN or infinite values; every row needs a query id")
    try:
        order = np.argsort(q, kind="stable")
    except TypeError:
        raise TypeError(
            "qid values must be comparable with each other (all numbers or all strings, none "
            "missing); found mixed types or None"
        ) from None
    sq = q[order]
    cut = np.flatnonzero(sq[1:] != sq[:-1]) + 1
    starts = np.concatenate(([0], cut, [len(q)])).astype(np.int64)
    return order.astype(np.int64), starts, sq[starts[:-1]]


def contiguous_groups(qid) -> tuple[np.ndarray, np.ndarray]:
    """Boundaries of query groups for the boosting backends, which need each query's rows
    together.  Returns ``(group_ptr, qids)``; raises when a query id appears in two
    separate runs of rows."""
    refuse_sparse(qid, "qid")
    q = np.asarray(qid)
    if q.ndim != 1:
        raise ValueError(f"qid must be one-dimensional (one query id per row), got shape {q.shape}")
    if len(q) == 0:
        raise ValueError("no rows were given: qid is empty")
    cut = np.flatnonzero(q[1:] != q[:-1]) + 1
    ptr = np.concatenate(([0], cut, [len(q)])).astype(np.int64)
    runs = q[ptr[:-1]]
    if len(np.unique(runs)) != len(runs):
        uniq, counts = np.unique(runs, return_counts=True)
        dup = uniq[counts > 1][0]
        raise ValueError(
            f"query id {dup!r} appears in more than one run of rows (rows are interleaved or "
            "unsorted); the boosting libraries need each query's rows together: sort the rows "
            "by qid first, e.g. order = np.argsort(qid, kind='stable')"
        )
    return ptr, runs


def check_group_ptr(group_ptr, n_rows: int, *, allow_empty: bool = False) -> np.ndarray:
    """The one contract of query boundaries: ``group_ptr`` = (0, ..., n_rows), integers,
    rising (list q is rows ``group_ptr[q]:group_ptr[q+1]``).  Empty lists are refused
    unless ``allow_empty``.  Returns it as int64."""
    refuse_sparse(group_ptr, "group_ptr")
    raw = np.asarray(group_ptr)
    if raw.ndim != 1 or len(raw) < 2:
        raise ValueError(f"group_ptr must be a 1-D array of query boundaries (0, ..., {n_rows}) with at "
                         f"least two entries; got shape {raw.shape}")
    if raw.dtype.kind not in "iu":
        if raw.dtype.kind != "f" or not np.all(np.isfinite(raw)) or not np.all(raw == np.round(raw)):
            bad = np.flatnonzero(~np.isfinite(raw) | (raw != np.round(raw))) if raw.dtype.kind == "f" else [0]
            raise ValueError(f"group_ptr must hold whole row numbers, found {raw[bad[0]]!r} at entry {bad[0]}; "
                             "pass integer boundaries, e.g. np.concatenate(([0], np.cumsum(sizes)))")
    ptr = raw.astype(np.int64)
    if ptr[0] != 0 or ptr[-1] != n_rows:
        raise ValueError(
            f"group_ptr must run from 0 to the number of rows ({n_rows}); it runs from {ptr[0]} to {ptr[-1]} "
            f"({len(ptr) - 1} queries)"
        )
    sizes = np.diff(ptr)
    if (sizes < 0).any():
        first = int(np.flatnonzero(sizes < 0)[0])
        raise ValueError(
            f"group_ptr must not decrease, but group_ptr[{first}] = {ptr[first]} > group_ptr[{first + 1}] = "
            f"{ptr[first + 1]}; boundaries are cumulative row counts, not group sizes"
        )
    if not allow_empty and (sizes == 0).any():
        first = int(np.flatnonzero(sizes == 0)[0])
        raise ValueError(
            f"query {first} is empty (group_ptr[{first}] = group_ptr[{first + 1}] = {ptr[first]}); "
            "remove empty queries from the group sizes"
        )
    return ptr


def check_query_ids(qid, name: str = "qid", what: str = "query id") -> np.ndarray:
    """One query id per row, every one present and all of one kind (numbers or strings).

    Raises ``ValueError`` on an empty, multi-dimensional or missing (NaN, None, inf) id and
    ``TypeError`` on ids of mixed kinds, naming the rows; returns the ids as an array.
    """
    refuse_sparse(qid, name)
    q = np.asarray(qid)
    if q.ndim == 2 and q.shape[1] == 1:
        q = q.reshape(-1)
    if q.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one {what} per row), got shape {q.shape}")
    if len(q) == 0:
        raise ValueError(f"no rows were given: {name} is empty")
    if q.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(q))
    elif q.dtype.kind == "O":
        bad = np.flatnonzero([v is None or (isinstance(v, (float, np.floating)) and not np.isfinite(v)) for v in q])
    else:
        bad = np.zeros(0, dtype=np.int64)
    if len(bad):
        raise ValueError(
            f"{name} has {len(bad)} missing or infinite {what}(s) (NaN/None/inf) at row(s) "
            f"{bad[:5].tolist()}; every row needs a {what}: fill them in or drop those rows")
    if q.dtype.kind == "O":
        kinds = np.array(["string" if isinstance(v, (str, bytes, np.str_, np.bytes_)) else "number"
                          if isinstance(v, (int, float, np.integer, np.floating)) else type(v).__name__ for v in q])
        found = list(dict.fromkeys(kinds.tolist()))
        if len(found) > 1:
            rows = [int(np.flatnonzero(kinds == k)[0]) for k in found]
            show = ", ".join(f"row {r}: {q[r]!r} ({k})" for r, k in zip(rows, found))
            raise TypeError(
                f"{name} mixes kinds of {what} ({show}); ids must all be numbers or all strings: "
                f"convert them to one kind first, e.g. {name}=np.asarray({name}).astype(str)")
    return q


#: values per block of the finiteness check (``first_infinite``): a 1 MB temporary
_CHECK_BLOCK_VALUES = 1 << 20


def feature_dtype(dtype) -> np.dtype:
    """The float type features are kept in: float32 stays float32 (the boosting libraries
    take it as it is), everything else numeric becomes float64."""
    return np.dtype(np.float32) if np.dtype(dtype) == np.float32 else np.dtype(np.float64)


def first_infinite(arr: np.ndarray):
    """``(row, column, count)`` of the first infinite value of the 2-d float array ``arr``
    and how many there are, or None; checked by blocks of rows, so the temporaries stay
    small whatever the size of ``arr``."""
    first, count = None, 0
    rows = max(1, _CHECK_BLOCK_VALUES // max(1, arr.shape[1]))
    for r0 in range(0, arr.shape[0], rows):
        inf = np.isinf(arr[r0:r0 + rows])
        n = int(np.count_nonzero(inf))
        if n:
            count += n
            if first is None:
                r, c = (int(v[0]) for v in np.nonzero(inf))
                first = (r0 + r, c)
    return None if first is None else (*first, count)


def check_feature_matrix(X, name: str = "X") -> np.ndarray:
    """Dense features as a 2-d float array: every column numeric, no infinite value.

    float32 features stay float32 (a float32 DataFrame too: every column float32) and are
    not copied; everything else numeric becomes float64.  A C- or Fortran-ordered array is
    returned as it is (no copy), any other layout as a C-ordered copy.  NaN is kept (the
    boosting libraries take it as a missing value).  A column that is not numeric raises
    ``TypeError`` naming the column, the first offending row and value; an infinite value
    raises ``ValueError`` naming its row and column.  The finiteness check runs by blocks
    of rows (no temporary the size of ``X``).
    """
    refuse_sparse(X, name, ndim=2)
    columns = None
    if hasattr(X, "columns") and hasattr(X, "dtypes"):  # a pandas DataFrame
        columns = [str(c) for c in X.columns]
        for c, dtype in zip(X.columns, X.dtypes):
            if getattr(dtype, "kind", "O") not in "biuf":
                col = X[c]
                _refuse_complex(name, repr(c), col.to_numpy())
                conv = _to_float_or_none(col.to_numpy())
                if conv is None:
                    _raise_not_numeric(name, repr(c), col.to_numpy())
        single = len(X.dtypes) > 0 and all(getattr(d, "kind", "O") == "f" and d == np.float32 for d in X.dtypes)
        arr = X.to_numpy(dtype=np.float32 if single else np.float64, na_value=np.nan)
    else:
        arr = np.asarray(X)
        if arr.ndim != 2:
            raise ValueError(f"{name} must be a 2-d array (rows x features), got shape {arr.shape}; "
                             "reshape a single feature with x.reshape(-1, 1)")
        if arr.dtype.kind not in "biuf":
            for j in range(arr.shape[1]):
                _refuse_complex(name, str(j), arr[:, j])
                if _to_float_or_none(arr[:, j]) is None:
                    _raise_not_numeric(name, str(j), arr[:, j])
            arr = arr.astype(np.float64)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-d array (rows x features), got shape {arr.shape}")
    arr = np.asarray(arr, dtype=feature_dtype(arr.dtype))
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape}): give at least one row and one feature")
    inf = first_infinite(arr)
    if inf is not None:
        r, c, count = inf
        col = columns[c] if columns else c
        raise ValueError(
            f"{name} has {count} infinite value(s) (first at row {r}, column {col!r}: {arr[r, c]}); "
            "gbrank takes NaN as a missing value but refuses inf: replace it by NaN (missing) or by a "
            "large finite value, e.g. np.where(np.isinf(X), np.nan, X)")
    if not (arr.flags.c_contiguous or arr.flags.f_contiguous):
        arr = np.ascontiguousarray(arr)
    return arr


def _refuse_complex(name: str, column: str, col) -> None:
    """Raise when a column holds complex numbers (numpy would drop their imaginary parts)."""
    col = np.asarray(col)
    if col.dtype.kind == "c":
        hit = np.flatnonzero(np.asarray(col.imag) != 0)
    elif col.dtype.kind == "O":
        hit = np.flatnonzero([isinstance(v, (complex, np.complexfloating)) for v in col])
        if not len(hit):
            return
    else:
        return
    r = int(hit[0]) if len(hit) else 0
    raise ValueError(
        f"Complex data not supported: {name} column {column} holds complex numbers (row {r}: {col[r]!r}); "
        "features must be real: keep the real part (np.real), the modulus (np.abs) or both parts as two features")


def _to_float_or_none(col):
    try:
        return np.asarray(col, dtype=np.float64)
    except (TypeError, ValueError):
        return None


def _raise_not_numeric(name: str, column: str, col) -> None:
    for r, v in enumerate(col):
        try:
            float(v)
        except (TypeError, ValueError):
            break
    else:
        r, v = 0, col[0]
    raise TypeError(
        f"{name} column {column} is not numeric (row {r} holds {v!r}); features must be numbers: "
        "encode categories as numbers (e.g. pandas.factorize or one-hot) and convert numeric "
        "strings with pandas.to_numeric")


def no_usable_features(X) -> list:
    """Columns of a dense float matrix on which no tree can split (all NaN or constant);
    returns their indices."""
    hi = np.fmax.reduce(X, axis=0)
    lo = np.fmin.reduce(X, axis=0)
    return np.flatnonzero(~(hi > lo)).tolist()


def check_number(value, name: str, *, low: float = 0.0, low_inclusive: bool = False) -> float:
    """A finite real number above ``low`` (or at least ``low``), returned as float; a string,
    None, NaN or inf is refused with the argument's name."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r:.40}")
    number = float(value)
    ok = np.isfinite(number) and (number >= low if low_inclusive else number > low)
    if not ok:
        bound = f">= {low:g}" if low_inclusive else ("positive" if low == 0 else f"> {low:g}")
        raise ValueError(f"{name} must be {bound} and finite, got {value!r}")
    return number


def plural(count: int, one: str, many: str | None = None) -> str:
    """``count`` and the noun that agrees with it, for messages: ``plural(1, "user")`` is
    "1 user", ``plural(3, "user")`` "3 users", ``plural(2, "query", "queries")`` "2 queries"."""
    count = int(count)
    return f"{count} {one if count == 1 else (many or one + 's')}"


def is_positive_int(value) -> bool:
    """Whether ``value`` is a whole number >= 1 of an integer type (Python or numpy), not a bool
    or a float: the test of every count parameter (the caller's error names the parameter)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 1


def check_bool(value, name: str) -> bool:
    """``value`` as bool; anything but True/False (a string such as "no" is truthy) is refused."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r:.40}")
    return bool(value)


def store_init_params(estimator, given: dict) -> None:
    """scikit-learn's ``__init__`` convention in one place: every parameter of the estimator's
    ``__init__`` (``given`` is its ``locals()``) stored unchanged as the attribute of its name,
    nothing validated or derived (``fit`` does that), so ``get_params``, ``set_params`` and
    ``clone`` round-trip.  Shared by every gbrank estimator (``GBRanker``,
    ``DaskGBRanker``, ``MFRanker``, ``NetRanker``)."""
    for name, value in given.items():
        if name not in ("self", "__class__"):
            setattr(estimator, name, value)
