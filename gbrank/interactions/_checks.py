"""Input checks of the interaction data: (user, item) pairs, the negative-sampling ratio, ids in messages."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._validation import as_1d_float, check_same_length


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
    if y is None:
        if len(users) == 0:
            raise ValueError(f"{what} is empty: no (user, item) pair was given")
        return users, items, None
    check_same_length(X=users, y=y)
    return users, items, as_1d_float(y, "y")


def check_nsr(nsr) -> int:
    """The negative-sampling ratio (negatives per positive) as an int; ValueError unless a positive integer."""
    if isinstance(nsr, bool) or not float(nsr).is_integer() or int(nsr) < 1:
        raise ValueError(f"nsr (negatives per positive) must be a positive integer, got {nsr!r}")
    return int(nsr)


def display_id(value) -> str:
    """``repr`` of an id as the user wrote it (a numpy scalar shows as its Python value)."""
    return repr(value.item() if isinstance(value, np.generic) else value)
