"""Input checks of the interaction data: (user, item) pairs, the negative-sampling ratio, ids in messages."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from .._validation import as_1d_float, check_query_ids, check_same_length, plural


class ArgumentError(ValueError):
    """A ``ValueError`` whose message names arguments of the call that failed (``arguments``),
    so that a caller which took them under other names can restate it in those: the command
    line says ``--min-positives`` where Python says ``min_positives``.

    Examples
    --------
    >>> exc = ArgumentError("no user has 25 positives; lower min_positives", ["min_positives"])
    >>> exc.restated({"min_positives": "--min-positives"})
    'no user has 25 positives; lower --min-positives'
    """

    #: the arguments named when a raise names none
    ARGUMENTS: tuple = ()

    def __init__(self, message: str, arguments=None):
        super().__init__(message)
        self.arguments = tuple(self.ARGUMENTS if arguments is None else arguments)

    def restated(self, names: dict) -> str:
        """The message with each argument of ``arguments`` that ``names`` maps written as
        its mapped name (whole words only)."""
        text = str(self)
        for arg in self.arguments:
            if arg in names:
                text = re.sub(rf"(?<![\w-]){re.escape(arg)}(?![\w@])", names[arg], text)
        return text


def check_pairs(X, y=None, what: str = "X"):
    """``X`` as two 1-d id arrays (users, items) and ``y`` as float64 (or None).

    ``X`` has one row per interaction and two columns: a user id and an item id (any
    hashable values: ints, strings); a DataFrame's first two columns are used.

    Examples
    --------
    >>> users, items, y = check_pairs([[0, 3], [1, 5], [1, 3]], [5, 4, 1])
    >>> users.tolist(), items.tolist(), y.tolist()
    ([0, 1, 1], [3, 5, 3], [5.0, 4.0, 1.0])
    """
    if hasattr(X, "tocoo") and hasattr(X, "nnz"):  # a scipy sparse matrix
        raise TypeError(
            f"{what} must be (user id, item id) pairs of shape (n, 2), not a {type(X).__name__} user-item matrix; "
            "convert it: m = X.tocoo(); X = np.column_stack([m.row, m.col]); y = m.data")
    if isinstance(X, pd.DataFrame):
        if X.shape[1] < 2:
            raise ValueError(f"{what} must have two columns (user id, item id), got {X.shape[1]}")
        users, items = X.iloc[:, 0].to_numpy(), X.iloc[:, 1].to_numpy()
    else:
        arr = np.asarray(X)
        if arr.ndim != 2 or arr.shape[1] != 2:
            raise ValueError(f"{what} must have shape (n, 2): one (user id, item id) pair per row; "
                             f"got shape {arr.shape}")
        users, items = arr[:, 0], arr[:, 1]
    if len(users) == 0:
        raise ValueError(f"no rows were given: {what} is empty (no (user, item) pair)")
    check_query_ids(users, f"{what}[:, 0]", "user id")
    check_query_ids(items, f"{what}[:, 1]", "item id")
    if y is None:
        return users, items, None
    check_same_length(X=users, y=y)
    y = as_1d_float(y, "y")
    if (y < 0).any():
        rows = np.flatnonzero(y < 0)
        raise ValueError(f"y (ratings) must be non-negative, found {y[rows[0]]:g} at "
                         f"{'row' if len(rows) == 1 else 'rows'} {rows[:5].tolist()}; "
                         "ratings are binarised at relevance_threshold: shift them so that 0 is the lowest")
    return users, items, y


def check_unique_pairs(users, items, what: str = "X") -> None:
    """Refuse a (user, item) pair given twice: which of its ratings counts would be a guess."""
    frame = pd.DataFrame({"u": users, "i": items})
    dup = frame.duplicated(keep=False).to_numpy()
    if dup.any():
        rows = np.flatnonzero(dup)
        u, i = users[rows[0]], items[rows[0]]
        same = rows[(frame["u"].to_numpy()[rows] == u) & (frame["i"].to_numpy()[rows] == i)]
        raise ValueError(
            f"{what} holds {plural(frame.duplicated().sum(), 'repeated (user, item) pair')}, e.g. "
            f"({display_id(u)}, {display_id(i)}) at rows {same[:5].tolist()}; give each pair once: aggregate "
            "the ratings first, e.g. df.groupby([user, item], as_index=False)[rating].max()")


def check_nsr(nsr) -> int:
    """The negative-sampling ratio (negatives per positive) as an int; ValueError unless a positive integer."""
    if isinstance(nsr, bool) or not isinstance(nsr, (int, float, np.integer, np.floating)) \
            or not np.isfinite(nsr) or not float(nsr).is_integer() or int(nsr) < 1:
        raise ValueError(f"nsr (negatives per positive) must be a positive integer, got {nsr!r}")
    return int(nsr)


def display_id(value) -> str:
    """``repr`` of an id as the user wrote it (a numpy scalar shows as its Python value)."""
    return repr(value.item() if isinstance(value, np.generic) else value)
