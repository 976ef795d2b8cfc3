"""User-item interactions for the recommendation path: ids, per-user CSR lists, splits and
negative sampling (Li et al. 2021, Sec. 4.2; thesis Sec. 4.3).

Everything here is numpy and vectorised over users; seeds are parameters
(``numpy.random.Generator``).  A CSR is a pair ``(indptr, items)``: the items of user u
are ``items[indptr[u]:indptr[u + 1]]``, sorted and unique.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._validation import as_1d_float, check_same_length


def check_pairs(X, y=None, what: str = "X"):
    """``X`` as two 1-d id arrays (users, items) and ``y`` as float64 (or None).

    ``X`` has one row per interaction and two columns: a user id and an item id (any
    hashable values: ints, strings); a DataFrame's first two columns are used.
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


def csr_from(users: np.ndarray, items: np.ndarray, n_users: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR of integer codes, items sorted and de-duplicated within each user."""
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


def holdout(indptr: np.ndarray, fraction: float, rng: np.random.Generator) -> np.ndarray:
    """Per-user random hold-out: a boolean per stored entry, True for the held-out ones.

    User u with n entries holds out round(fraction * n) of them (half up), chosen
    uniformly; ``fraction=0.2`` on 25 items holds out 5 (the paper's 80/20 split).
    """
    counts = np.diff(indptr)
    n_out = np.floor(fraction * counts + 0.5).astype(np.int64)
    rows = csr_rows(indptr)
    order = np.lexsort((rng.random(len(rows)), rows))  # random order within each user
    rank = np.empty(len(rows), dtype=np.int64)
    rank[order] = np.arange(len(rows)) - indptr[rows[order]]
    return rank < n_out[rows]


def display_id(value) -> str:
    """``repr`` of an id as the user wrote it (a numpy scalar shows as its Python value)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


class NotEnoughNegatives(ValueError):
    """More negatives were asked for a user than the catalogue has items it never interacted with."""


def sample_negatives(need: np.ndarray, exclude: tuple[np.ndarray, np.ndarray], n_items: int,
                     rng: np.random.Generator, what: str = "negatives",
                     names: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """For each user u, ``need[u]`` distinct items drawn uniformly from those not in ``exclude[u]``.

    Rejection sampling, vectorised over users, for users that need at most half of their
    available items; an exact draw (random keys over the catalogue) for the others.

    Returns
    -------
    (indptr, items)
        A CSR of the drawn items (in draw order within each user).

    Raises
    ------
    NotEnoughNegatives
        When a user needs more items than it has available; the message names the user
        code, the numbers, and how to fix it.
    """
    need = np.asarray(need, dtype=np.int64)
    n_users = len(need)
    ex_ptr, ex_items = exclude
    available = n_items - np.diff(ex_ptr)
    short = need > available
    if short.any():
        u = int(np.flatnonzero(short)[0])
        who = f"#{u}" if names is None else display_id(names[u])
        raise NotEnoughNegatives(
            f"cannot draw {need[u]} {what} for user {who}: only {available[u]} of the {n_items} "
            f"items are not among its interactions ({int(short.sum())} user(s) are short); "
            "lower nsr, or filter out users with that many interactions"
        )
    ex_keys = csr_rows(ex_ptr) * n_items + ex_items  # sorted: CSR rows ascending, items sorted
    out_users, out_items = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    dense = (need > 0) & (2 * need > available)
    if dense.any():
        du = np.flatnonzero(dense)
        for start in range(0, len(du), 256):
            rows = du[start:start + 256]
            keys = rng.random((len(rows), n_items))
            local, excluded = csr_take(ex_ptr, ex_items, rows)
            keys[local, excluded] = np.inf
            order = np.argsort(keys, axis=1, kind="stable")
            take = np.arange(n_items)[None, :] < need[rows][:, None]
            out_users.append(np.broadcast_to(rows[:, None], order.shape)[take])
            out_items.append(order[take])
    remaining = np.where(dense, 0, need)
    chosen = np.zeros(0, dtype=np.int64)
    while remaining.sum() > 0:
        users = np.flatnonzero(remaining > 0)
        accept = available[users] / n_items
        draws = np.ceil(remaining[users] / accept * 1.2 + 4).astype(np.int64)
        cu = np.repeat(users, draws)
        ci = rng.integers(0, n_items, size=len(cu))
        keys = cu * n_items + ci
        ok = ~_sorted_contains(ex_keys, keys) & ~_sorted_contains(chosen, keys)
        keys, cu, ci = keys[ok], cu[ok], ci[ok]
        _, first = np.unique(keys, return_index=True)
        first.sort()  # keep draw order: the first distinct draws are a uniform subset
        keys, cu, ci = keys[first], cu[first], ci[first]
        order = np.argsort(cu, kind="stable")
        cu, ci, keys = cu[order], ci[order], keys[order]
        start = np.searchsorted(cu, cu, side="left")
        rank = np.arange(len(cu)) - start
        take = rank < remaining[cu]
        out_users.append(cu[take])
        out_items.append(ci[take])
        np.subtract.at(remaining, cu[take], 1)
        chosen = np.sort(np.concatenate([chosen, keys[take]]))
    users = np.concatenate(out_users)
    items = np.concatenate(out_items)
    order = np.argsort(users, kind="stable")
    indptr = np.zeros(n_users + 1, dtype=np.int64)
    np.add.at(indptr, users + 1, 1)
    return np.cumsum(indptr), items[order].astype(np.int64)


def _sorted_contains(sorted_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    if len(sorted_keys) == 0:
        return np.zeros(len(keys), dtype=bool)
    at = np.searchsorted(sorted_keys, keys)
    at[at == len(sorted_keys)] = 0
    return sorted_keys[at] == keys


@dataclass
class InteractionSplit:
    """A per-user split of interactions into training data and the paper's test lists.

    Attributes
    ----------
    X_train, y_train : numpy.ndarray
        Training interactions of the kept users: their training positives and all their
        interactions below the relevance threshold (those are never test targets).
        Pass them to :meth:`MFRanker.fit`.
    X_test, y_test : numpy.ndarray
        The sampled test lists (the paper's protocol): each user's held-out positives
        (with their rating, so ``y_test >= relevance_threshold`` marks them) plus ``nsr``
        times as many negatives (``y_test = 0``) drawn from the catalogue items the user
        never interacted with (in training or test).
    test_positives : numpy.ndarray
        The held-out positive pairs, shape (n, 2), for the full-catalogue protocol.
    items : numpy.ndarray
        The catalogue: every item the kept users interacted with (training or test).  Pass
        it to ``MFRanker.fit(..., items=split.items)`` so that items seen only in the test
        part are known to the model (drawn as negatives in training, as in the paper).
    settings : dict
        relevance_threshold, min_positives, test_size, nsr, random_state, and counts.
    """

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    test_positives: np.ndarray
    items: np.ndarray
    settings: dict = field(default_factory=dict)


def split_interactions(X, y, *, test_size: float = 0.2, relevance_threshold: float = 4.0,
                       min_positives: int = 25, nsr: int = 1, random_state=None) -> InteractionSplit:
    """Split interactions per user into training data and sampled test lists (Li et al. 2021).

    1. binarise: an interaction is positive when ``y >= relevance_threshold`` (paper: 4);
    2. keep users with at least ``min_positives`` positives (paper: 25);
    3. per user, hold out ``round(test_size * n_pos)`` positives uniformly at random
       (paper: 20 %, so at least 5 test and 20 training positives);
    4. per user, draw ``nsr`` times as many test negatives, without replacement, from the
       catalogue (every item of the kept users) minus every item the user interacted with.

    Interactions below the threshold stay in the training part (they are never test
    targets, and never drawn as negatives for their user).

    Parameters
    ----------
    X : array-like of shape (n, 2)
        (user id, item id) pairs.
    y : array-like of shape (n,)
        Ratings, or 1 for implicit feedback (use ``relevance_threshold=1`` then).
    nsr : int, default 1
        Negatives per test positive in the sampled test lists (paper: 1, 2, 5).
    random_state : int or None
        Seed of the split and of the test negatives.

    Returns
    -------
    InteractionSplit

    Raises
    ------
    ValueError
        On empty input, when no user keeps ``min_positives`` positives, or when a user has
        too few non-interacted items for its test negatives.
    """
    users, items, ratings = check_pairs(X, y)
    if not 0.0 < float(test_size) < 1.0:
        raise ValueError(f"test_size must lie strictly between 0 and 1, got {test_size!r}")
    nsr = _check_nsr(nsr)
    min_positives = int(min_positives)
    if min_positives < 1:
        raise ValueError(f"min_positives must be at least 1, got {min_positives!r}")
    rng = np.random.default_rng(random_state)
    user_ids, ucode = np.unique(users, return_inverse=True)
    positive = ratings >= relevance_threshold
    n_pos = np.bincount(ucode[positive], minlength=len(user_ids))
    kept = n_pos >= min_positives
    if not kept.any():
        raise ValueError(f"no user has at least {min_positives} positive interactions (rating >= "
                         f"{relevance_threshold:g}); the most any user has is {int(n_pos.max(initial=0))}. "
                         "Lower min_positives or relevance_threshold")
    rows = np.flatnonzero(kept[ucode])
    # order rows by user so the hold-out can work per user on positives
    pos_rows = rows[positive[rows]]
    pos_rows = pos_rows[np.argsort(ucode[pos_rows], kind="stable")]
    indptr = np.zeros(len(user_ids) + 1, dtype=np.int64)
    np.add.at(indptr, ucode[pos_rows] + 1, 1)
    indptr = np.cumsum(indptr)
    held = holdout(indptr, float(test_size), rng)
    test_rows = pos_rows[held]
    train_rows = np.setdiff1d(rows, test_rows)
    item_ids, icode = np.unique(items, return_inverse=True)
    catalogue = np.unique(icode[rows])  # every item of the kept users
    n_cat = len(catalogue)
    cat_code = np.full(len(item_ids), -1, dtype=np.int64)
    cat_code[catalogue] = np.arange(n_cat)
    # every interaction of a kept user excludes that item from its test negatives
    inter_rows = rows[cat_code[icode[rows]] >= 0]
    exclude = csr_from(ucode[inter_rows], cat_code[icode[inter_rows]], len(user_ids))
    need = nsr * np.bincount(ucode[test_rows], minlength=len(user_ids))
    neg_ptr, neg_items = sample_negatives(need, exclude, n_cat, rng, what="test negatives", names=user_ids)
    neg_users = csr_rows(neg_ptr)
    X_all = np.column_stack([users, items]) if not isinstance(X, pd.DataFrame) else np.column_stack(
        [X.iloc[:, 0].to_numpy(), X.iloc[:, 1].to_numpy()])
    X_neg = np.column_stack([user_ids[neg_users], item_ids[catalogue[neg_items]]]).astype(X_all.dtype)
    X_test = np.concatenate([X_all[test_rows], X_neg])
    y_test = np.concatenate([ratings[test_rows], np.zeros(len(neg_items))])
    order = np.argsort(np.concatenate([ucode[test_rows], neg_users]), kind="stable")
    return InteractionSplit(
        X_train=X_all[train_rows], y_train=ratings[train_rows], items=item_ids[catalogue],
        X_test=X_test[order], y_test=y_test[order], test_positives=X_all[test_rows],
        settings={"relevance_threshold": float(relevance_threshold), "min_positives": min_positives,
                  "test_size": float(test_size), "nsr": nsr, "random_state": random_state,
                  "n_users": int(kept.sum()), "n_users_dropped": int((~kept).sum()),
                  "n_items": n_cat, "n_train_positives": int(len(pos_rows) - len(test_rows)),
                  "n_test_positives": int(len(test_rows))},
    )


def _check_nsr(nsr) -> int:
    if isinstance(nsr, bool) or not float(nsr).is_integer() or int(nsr) < 1:
        raise ValueError(f"nsr (negatives per positive) must be a positive integer, got {nsr!r}")
    return int(nsr)
