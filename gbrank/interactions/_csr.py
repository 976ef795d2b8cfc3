"""Per-user CSR lists of item codes: build, take rows, union, difference (numpy, vectorised).

A CSR is a pair ``(indptr, items)``: the items of user u are ``items[indptr[u]:indptr[u + 1]]``,
sorted and unique.
"""

from __future__ import annotations

import numpy as np


def csr_from(users: np.ndarray, items: np.ndarray, n_users: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR of integer codes, items sorted and de-duplicated within each user.

    Examples
    --------
    >>> indptr, items = csr_from(np.array([1, 0, 1, 1]), np.array([4, 2, 0, 4]), 3)
    >>> indptr.tolist(), items.tolist()
    ([0, 1, 3, 3], [2, 0, 4])
    """
    key = np.unique(users.astype(np.int64) * (int(items.max(initial=0)) + 1) + items.astype(np.int64))
    width = int(items.max(initial=0)) + 1
    u, it = key // width, key % width
    indptr = np.zeros(n_users + 1, dtype=np.int64)
    np.add.at(indptr, u + 1, 1)
    return np.cumsum(indptr), it.astype(np.int64)


def csr_rows(indptr: np.ndarray) -> np.ndarray:
    """The row (user code) of every stored entry."""
    return np.repeat(np.arange(len(indptr) - 1, dtype=np.int64), np.diff(indptr))


def csr_take(indptr: np.ndarray, items: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Entries of the given rows: ``(local row index 0..len(rows)-1, item)`` per entry."""
    lengths = indptr[rows + 1] - indptr[rows]
    local = np.repeat(np.arange(len(rows), dtype=np.int64), lengths)
    offsets = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return local, items[np.repeat(indptr[rows], lengths) + offsets]


def csr_union(a, b, n_users: int):
    """Entries in CSR ``a`` or CSR ``b`` (same rows)."""
    ra, rb = csr_rows(a[0]), csr_rows(b[0])
    return csr_from(np.concatenate([ra, rb]), np.concatenate([a[1], b[1]]), n_users)


def csr_difference(a, b, n_items: int):
    """Entries of CSR ``a`` that are not in CSR ``b`` (same rows)."""
    ka = csr_rows(a[0]) * n_items + a[1]
    kb = csr_rows(b[0]) * n_items + b[1]
    keep = ~np.isin(ka, kb)
    n_users = len(a[0]) - 1
    return csr_from(csr_rows(a[0])[keep], a[1][keep], n_users) if keep.any() else (
        np.zeros(n_users + 1, dtype=np.int64), np.zeros(0, dtype=np.int64))
