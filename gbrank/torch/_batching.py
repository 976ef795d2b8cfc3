"""Batches of lists: bucketing by length (little padding) and padding flat CSR arrays."""

from __future__ import annotations

import numpy as np


def bucket_batches(users: np.ndarray, lengths: np.ndarray, batch_size: int, rng: np.random.Generator,
                   pool_batches: int = 50) -> list[np.ndarray]:
    """Batches of ``batch_size`` lists of similar length, in random order.

    Lists are shuffled, cut into pools of ``pool_batches`` batches, sorted by length inside
    each pool and then cut into batches, so padding stays small while batches still vary
    from epoch to epoch."""
    users = rng.permutation(users)
    pool = batch_size * pool_batches
    batches = []
    for start in range(0, len(users), pool):
        chunk = users[start:start + pool]
        chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
        batches.extend(chunk[i:i + batch_size] for i in range(0, len(chunk), batch_size))
    return [batches[i] for i in rng.permutation(len(batches))]


def pad(rows: np.ndarray, ptr: np.ndarray, *columns):
    """Padded ``[B, L]`` arrays of the flat CSR ``columns`` for lists ``rows``, and the mask."""
    lengths = ptr[rows + 1] - ptr[rows]
    width = int(lengths.max()) if len(rows) else 0
    ar = np.arange(width)
    mask = ar[None, :] < lengths[:, None]
    index = np.where(mask, ptr[rows][:, None] + ar[None, :], 0)
    return [c[index] for c in columns] + [mask]
