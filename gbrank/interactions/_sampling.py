"""Per-user random hold-out and negative sampling (numpy, vectorised over users; one numba
pass for the rejection test on small key spaces)."""

from __future__ import annotations

import numpy as np
from numba import njit

from .._validation import is_positive_int, plural
from ._checks import ArgumentError, display_id
from ._csr import csr_rows, csr_take

#: largest user x item key space whose taken-keys mask (one byte a key) is built per call
_MASK_BYTES = 1 << 26


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


class NotEnoughNegatives(ArgumentError):
    """More negatives were asked for a user than the catalogue has items it never interacted with
    (an :class:`ArgumentError` naming ``nsr``)."""

    ARGUMENTS = ("nsr",)


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
            f"items are not among its interactions ({plural(short.sum(), 'user')} short in all); "
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
    taken = _TakenKeys(ex_keys, n_users * n_items)
    while remaining.sum() > 0:
        users = np.flatnonzero(remaining > 0)
        accept = available[users] / n_items
        draws = np.ceil(remaining[users] / accept * 1.2 + 4).astype(np.int64)
        cu = np.repeat(users, draws)
        ci = rng.integers(0, n_items, size=len(cu))
        keys = cu * n_items + ci
        # the first draw of each distinct key, kept when the key is neither excluded nor
        # chosen already, in draw order: the first distinct draws are a uniform subset
        first = taken.first_new(keys)
        keys, cu, ci = keys[first], cu[first], ci[first]
        # cu is still grouped by user in draw order (np.repeat of ascending users): each
        # draw's rank within its user is its distance from the start of the user's run
        starts = np.flatnonzero(np.r_[True, cu[1:] != cu[:-1]])
        rank = np.arange(len(cu)) - np.repeat(starts, np.diff(np.r_[starts, len(cu)]))
        take = rank < remaining[cu]
        out_users.append(cu[take])
        out_items.append(ci[take])
        remaining -= np.bincount(cu[take], minlength=n_users)
        taken.settle(keys, take)
    users = np.concatenate(out_users)
    items = np.concatenate(out_items)
    if np.any(users[1:] < users[:-1]):  # dense users or several rounds: regroup, draw order kept
        items = items[np.argsort(users, kind="stable")]
    indptr = np.zeros(n_users + 1, dtype=np.int64)
    indptr[1:] = np.cumsum(np.bincount(users, minlength=n_users))
    return indptr, items.astype(np.int64)


class _TakenKeys:
    """The keys (user * n_items + item) a user may not draw: its excluded items, then the
    ones drawn so far.  A flat boolean mask over every key when it takes at most
    ``_MASK_BYTES`` (one pass over the draws in numba), else sorted arrays, ``np.unique``
    and binary search; both keep the same draws."""

    def __init__(self, excluded: np.ndarray, n_keys: int):
        self.mask = None
        if n_keys <= _MASK_BYTES:
            self.mask = np.zeros(n_keys, dtype=bool)
            self.mask[excluded] = True
        self.excluded, self.chosen = excluded, np.zeros(0, dtype=np.int64)

    def first_new(self, keys: np.ndarray) -> np.ndarray:
        """Indices, in draw order, of the first draw of each key not taken (with the mask,
        those keys are marked taken until ``settle``)."""
        if self.mask is not None:
            return _first_new_draws(keys, self.mask)
        distinct, first = np.unique(keys, return_index=True)
        new = ~(_sorted_contains(self.excluded, distinct) | _sorted_contains(self.chosen, distinct))
        return np.sort(first[new])

    def settle(self, kept: np.ndarray, take: np.ndarray) -> None:
        """``kept``: the keys ``first_new`` returned; ``take``: those the users took."""
        if self.mask is not None:
            self.mask[kept[~take]] = False
        else:
            self.chosen = np.sort(np.concatenate([self.chosen, kept[take]]))


@njit(cache=True)
def _first_new_draws(keys, mask):
    """Indices of the draws whose key is not marked, first draw of a key only; marks them."""
    out = np.empty(keys.shape[0], dtype=np.int64)
    n = 0
    for t in range(keys.shape[0]):
        k = keys[t]
        if not mask[k]:
            mask[k] = True
            out[n] = t
            n += 1
    return out[:n]


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
    if not is_positive_int(n_items):
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
