"""Per-user random hold-out and negative sampling (numpy, vectorised over users)."""

from __future__ import annotations

import numpy as np

from ._checks import display_id
from ._csr import csr_rows, csr_take


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
    _check_sampling_inputs(need, exclude, n_items, rng)
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


def _check_sampling_inputs(need, exclude, n_items, rng) -> None:
    """The inputs of :func:`sample_negatives`, refused with the argument named."""
    raw = np.asarray(need)
    if raw.ndim != 1 or (len(raw) and raw.dtype.kind not in "iu" and not (
            raw.dtype.kind == "f" and np.isfinite(raw).all() and (raw == np.round(raw)).all())):
        raise ValueError(f"need must be a 1-d array of whole numbers (negatives per user), got dtype {raw.dtype} "
                         f"and shape {raw.shape}")
    if len(raw) and (raw < 0).any():
        u = int(np.flatnonzero(raw < 0)[0])
        raise ValueError(f"need must be non-negative, found {raw[u]} for user #{u}")
    if isinstance(n_items, bool) or not isinstance(n_items, (int, np.integer)) or n_items < 1:
        raise ValueError(f"n_items must be a positive integer (the catalogue size), got {n_items!r}")
    try:
        ex_ptr, ex_items = exclude
    except (TypeError, ValueError):
        raise TypeError("exclude must be a CSR pair (indptr, items), e.g. from csr_from") from None
    if len(ex_ptr) != len(raw) + 1:
        raise ValueError(f"exclude has {len(ex_ptr) - 1} users but need has {len(raw)}: give one need per CSR row")
    if len(ex_items) and (np.min(ex_items) < 0 or np.max(ex_items) >= n_items):
        raise ValueError(f"exclude holds item codes outside 0..{n_items - 1} (n_items={n_items}); codes must "
                         "index the catalogue")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), got {rng!r}")
