"""Query groups kept whole across the partitions of Dask collections.

A ranking objective needs all rows of a query in one place: the gradient callback runs on
each worker over that worker's rows only.  :func:`make_queries_whole` moves partition
boundaries to query boundaries (a rechunk that shifts only the rows of straddling
queries), keeps the row order, and says which queries each partition holds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_query_ids


@dataclass(frozen=True)
class WholeQueries:
    """Dask arrays whose row blocks each hold whole queries, in the input row order.

    Attributes
    ----------
    X : dask.array.Array or None
        Features, one block per partition along rows and one along columns.
    y, qid : dask.array.Array
        Labels (None if not given) and the original query ids, blocked like ``X``.
    group : dask.array.Array
        Query sizes: block ``j`` lists the sizes of the queries in row block ``j`` (the
        ``group`` argument of LightGBM's Dask interface).
    codes : dask.array.Array
        Query index 0, 1, 2, ... in row order, blocked like ``X``: increasing, as
        XGBoost's ``qid`` must be.
    n_queries : int
    moved_rows : int
        Rows that changed partition to make their query whole.
    feature_names : list of str or None
        Column names when ``X`` was a DataFrame.
    """

    X: object
    y: object
    qid: object
    group: object
    codes: object
    n_queries: int
    moved_rows: int
    feature_names: list | None = None

    @property
    def npartitions(self) -> int:
        return len(self.qid.chunks[0])


def _runs(q, block: int | None = None, offset: int = 0) -> tuple[np.ndarray, np.ndarray, int]:
    """Runs of equal query ids in one block: (run ids, run starts, rows).  With ``block``
    (its index, and ``offset``, its first row), missing or mixed ids raise naming the rows."""
    q = np.asarray(q)
    if q.ndim != 1:
        raise ValueError(f"qid must be one-dimensional (one query id per row), got shape {q.shape}")
    if len(q) == 0:
        return q[:0], np.zeros(0, dtype=np.int64), 0
    if block is not None:
        try:
            check_query_ids(q)
        except (TypeError, ValueError) as err:
            raise type(err)(f"in partition {block} (rows from {offset}; rows below count within the partition): "
                            f"{err}") from None
    cut = np.flatnonzero(q[1:] != q[:-1]) + 1
    starts = np.concatenate(([0], cut)).astype(np.int64)
    return q[starts], starts, len(q)


def _as_array(data, name: str, *, column_of=None):
    """A dask array from a dask array, Series, DataFrame, or a column name of ``column_of``."""
    import dask.array as da
    import dask.dataframe as dd

    if isinstance(data, str):
        if column_of is None or not isinstance(column_of, dd.DataFrame):
            raise TypeError(f"{name}={data!r} names a column, which needs X to be a dask DataFrame")
        if data not in column_of.columns:
            raise ValueError(f"{name}={data!r} names no column of X; its columns are {list(column_of.columns)[:20]}; "
                             f"pass an existing column name, or {name} as a dask array or Series")
        data = column_of[data]
    if isinstance(data, (dd.DataFrame, dd.Series)):
        return data.to_dask_array(lengths=True)
    if isinstance(data, da.Array):
        return data
    raise TypeError(
        f"{name} must be a dask array, dask Series or DataFrame (or a column name of X), got "
        f"{type(data).__name__}; wrap in-memory data with dask.array.from_array(a, chunks=...), "
        "or train on one machine with gbrank.GBRanker")


def _align(arrays: dict, qid):
    """Rechunk every array to qid's row blocks (one block across columns)."""
    import dask.array as da

    if any(np.isnan(c) for c in qid.chunks[0]):
        qid = qid.compute_chunk_sizes()
    out = {}
    for name, a in arrays.items():
        if a is None:
            out[name] = None
            continue
        if any(np.isnan(c) for c in a.chunks[0]):
            a = a.compute_chunk_sizes()
        if a.shape[0] != qid.shape[0]:
            raise ValueError(f"{name} and qid must have one entry per row, got {a.shape[0]} and {qid.shape[0]} rows")
        if a.ndim == 2 and name != "X" and a.shape[1] == 1:
            a = a.reshape(-1)
        spec = {0: qid.chunks[0]} | ({1: -1} if a.ndim == 2 else {})
        out[name] = a.rechunk(spec)
    return out, qid


def _query_layout(block_runs):
    """From each block's runs: global query starts, their ids and sizes; raises on a query id
    that occurs in two separate places."""
    ids, starts, owner = [], [], []
    offset, prev_id, have_prev = 0, None, False
    for b, (run_ids, run_starts, n) in enumerate(block_runs):
        if n == 0:
            continue
        keep = np.ones(len(run_ids), dtype=bool)
        if have_prev and run_ids[0] == prev_id:
            keep[0] = False  # the query goes on from the previous block
        ids.append(run_ids[keep])
        starts.append(run_starts[keep] + offset)
        owner.append(np.full(int(keep.sum()), b))
        prev_id, have_prev = run_ids[-1], True
        offset += n
    ids = np.concatenate(ids)
    starts = np.concatenate(starts)
    owner = np.concatenate(owner)
    try:
        order = np.argsort(ids, kind="stable")
    except TypeError:
        kinds = sorted({type(v).__name__ for v in ids})
        raise TypeError(f"qid mixes kinds of query id across partitions ({kinds}); ids must all be numbers or "
                        "all strings: convert them to one kind first, e.g. qid.astype(str)") from None
    same = np.flatnonzero(ids[order][1:] == ids[order][:-1])
    if len(same):
        first, second = order[same[0]], order[same[0] + 1]
        dup = ids[first].item() if hasattr(ids[first], "item") else ids[first]
        raise ValueError(
            f"query id {dup!r} occurs in two separate places (from row {starts[first]} in "
            f"partition {owner[first]} and from row {starts[second]} in partition {owner[second]}): "
            "the rows of a query must be adjacent (interleaved or unsorted ids), which moving "
            "partition boundaries cannot repair. Bring each query's rows together first, keeping "
            "their order, e.g. for a dask DataFrame: df = df.shuffle('qid').map_partitions("
            "lambda d: d.sort_values('qid', kind='stable'))")
    return ids, starts, offset


def make_queries_whole(X=None, y=None, *, qid, client=None) -> WholeQueries:
    """Repartition rows so that no query straddles two partitions.

    Each partition boundary that falls inside a query moves back to that query's first row
    (a rechunk: only the rows of straddling queries change partition); the row order,
    within and across queries, is kept.  Empty partitions disappear.

    Parameters
    ----------
    X : dask Array or DataFrame, optional
        Features (rows x columns).
    y : dask Array or Series, or a column name of X, optional
    qid : dask Array or Series, or a column name of X
        One query id per row; each query's rows adjacent (in any qid order).  A named
        column is taken out of the features.
    client : distributed.Client, optional
        Computes the per-partition query runs (default: the current client).

    Returns
    -------
    WholeQueries

    Raises
    ------
    ValueError
        When a query id occurs in two non-adjacent places (interleaved or unsorted rows).

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> q = da.from_array(np.array([1, 1, 1, 2, 2, 3]), chunks=2)      # blocks [1 1][1 2][2 3]
    >>> w = make_queries_whole(qid=q)
    >>> w.qid.chunks, w.group.compute().tolist()         # blocks [1 1 1][2 2 3]
    (((3, 3),), [3, 2, 1])
    """
    import dask
    import dask.array as da
    import dask.dataframe as dd

    feature_names = None
    qid_a = _as_array(qid, "qid", column_of=X)
    y_a = None if y is None else _as_array(y, "y", column_of=X)
    if isinstance(X, dd.DataFrame):
        drop = [c for c in (qid, y) if isinstance(c, str)]
        X = X.drop(columns=drop) if drop else X
        feature_names = [str(c) for c in X.columns]
    X_a = None if X is None else _as_array(X, "X")
    if X_a is not None and X_a.ndim != 2:
        raise ValueError(f"X must be two-dimensional (rows x features), got {X_a.ndim} dimensions")
    arrays, qid_a = _align({"X": X_a, "y": y_a}, qid_a)
    if qid_a.shape[0] == 0:
        raise ValueError("no rows were given: qid is empty (0 rows); pass at least one query")

    compute = client.compute if client is not None else None
    firsts = np.concatenate(([0], np.cumsum(qid_a.chunks[0])[:-1])).tolist()
    tasks = [dask.delayed(_runs)(b, j, int(firsts[j])) for j, b in enumerate(qid_a.to_delayed().ravel())]
    block_runs = (client.gather(compute(tasks)) if compute else dask.compute(*tasks))
    ids, starts, n = _query_layout(block_runs)

    old = np.cumsum(qid_a.chunks[0])[:-1]
    moved_to = starts[np.searchsorted(starts, old, side="right") - 1]
    bounds = np.unique(np.concatenate(([0], moved_to, [n])))
    chunks = tuple(int(c) for c in np.diff(bounds))
    moved = int(sum(abs(int(a) - int(b)) for a, b in zip(old, moved_to)))

    sizes = np.diff(np.concatenate((starts, [n])))
    per_block = np.diff(np.searchsorted(starts, bounds))
    group = da.from_array(sizes, chunks=(tuple(int(c) for c in per_block),))
    code_offsets = np.concatenate(([0], np.cumsum(per_block)))

    qid_w = qid_a.rechunk({0: chunks})
    codes = qid_w.map_blocks(_codes_block, code_offsets, dtype=np.int64)
    out = {k: (None if v is None else v.rechunk({0: chunks})) for k, v in arrays.items()}
    return WholeQueries(X=out["X"], y=out["y"], qid=qid_w, group=group, codes=codes,
                        n_queries=len(ids), moved_rows=moved, feature_names=feature_names)


def _codes_block(q, offsets, block_info=None):
    """Query index of each row of a block of whole queries (offset by earlier blocks)."""
    j = block_info[0]["chunk-location"][0] if block_info else 0
    _, starts, n = _runs(q)
    sizes = np.diff(np.concatenate((starts, [n])))
    return np.repeat(np.arange(offsets[j], offsets[j] + len(starts), dtype=np.int64), sizes)
