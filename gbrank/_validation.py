"""Input checks shared by the evaluator, the objectives and the estimators.

Each check raises ``ValueError`` (or ``TypeError``) with a message that names the
problem and the fix.  Nothing is silently dropped, reordered or turned into NaN.
"""

from __future__ import annotations

import numpy as np

MAX_EXP_LABEL = 30  # 2**31 - 1 no longer fits the gain tables of the boosting libraries


def as_1d_float(values, name: str) -> np.ndarray:
    """A contiguous float64 1-d copy-free view where possible; raises on NaN/inf."""
    arr = np.asarray(values)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.reshape(-1)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one value per row), got shape {arr.shape}")
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    bad = ~np.isfinite(arr)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name} contains {int(bad.sum())} NaN or infinite value(s) (first at row {first}, "
            f"value {arr[first]}); remove or impute those rows before ranking"
        )
    return arr


def check_same_length(**arrays) -> int:
    """All arrays have the same number of rows; returns it."""
    lengths = {}
    for name, a in arrays.items():
        if a is None:
            continue
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
