"""``gbrank bench mf``, the baselines every loss must beat: ``popularity`` (each item scored by
its number of training positives, the same for every user) and ``random`` (seeded scores).

Both are scorers with the interface the evaluation of ``_run.py`` reads from a fitted
``MFRanker`` (``users_``, ``items_``, ``n_users_``, ``n_items_``, ``_seen()``,
``_score_user_rows(rows)``, ``_score_codes(users, items)``, ``predict(X)``), so they are
evaluated under every protocol exactly as the models are.  Scores are a pure function of
(seed, user code, item code), so a pair scores the same in the full catalogue and in a
sampled list.  Popularity ties (items with the same count) are broken by a seeded random
number in [0, 0.5), which never reorders items of different counts.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..._validation import plural

BASELINES = ("popularity", "random")
DESCRIPTIONS = {
    "popularity": "items ranked by their number of training positives (the same list for every user; ties "
                  "broken at random, seeded)",
    "random": "items ranked at random (seeded; a fixed random score per user-item pair)",
}

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def unit_hash(seed: int, users: np.ndarray, items: np.ndarray, n_items: int) -> np.ndarray:
    """A uniform number in [0, 1) per (user code, item code) pair, fixed by ``seed``
    (splitmix64 of ``seed``, user and item)."""
    with np.errstate(over="ignore"):
        x = (np.asarray(users, dtype=np.uint64) * np.uint64(n_items) + np.asarray(items, dtype=np.uint64)
             + np.uint64(seed) * _GOLDEN + _GOLDEN)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    return (x >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


class BaselineScorer:
    """A baseline fitted on a split's training data.

    Parameters
    ----------
    kind : {"popularity", "random"}
    X_train, y_train : numpy.ndarray
        The training interactions (pairs and ratings).
    items : numpy.ndarray
        The catalogue.
    threshold : float
        Ratings at or above it are positives (popularity counts them).
    seed : int
    """

    def __init__(self, kind: str, X_train, y_train, items, threshold: float, seed: int):
        from gbrank.interactions import csr_from

        if kind not in BASELINES:
            raise ValueError(f"unknown baseline {kind!r}; the baselines are {', '.join(BASELINES)}")
        self.kind, self.seed = kind, int(seed)
        X_train = np.asarray(X_train)
        positive = np.asarray(y_train) >= threshold
        self.users_ = np.unique(X_train[positive, 0])
        self.items_ = np.unique(np.asarray(items))
        self.n_users_, self.n_items_ = len(self.users_), len(self.items_)
        keep = np.isin(X_train[:, 0], self.users_)
        u = pd.Index(self.users_).get_indexer(X_train[keep, 0])
        i = pd.Index(self.items_).get_indexer(X_train[keep, 1])
        if (i < 0).any():
            raise ValueError("a training item is missing from the catalogue; pass items=split.items")
        self._seen_csr = csr_from(u, i, self.n_users_)
        self.popularity_ = np.bincount(i[positive[keep]], minlength=self.n_items_).astype(np.float64)
        self.best_epoch_, self.best_score_ = 0, None

    def _seen(self):
        return self._seen_csr

    def _score_codes(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        noise = unit_hash(self.seed, users, items, self.n_items_)
        return noise if self.kind == "random" else self.popularity_[items] + 0.5 * noise

    def _score_user_rows(self, rows: np.ndarray) -> np.ndarray:
        rows = np.asarray(rows, dtype=np.int64)
        users = np.repeat(rows, self.n_items_)
        items = np.tile(np.arange(self.n_items_, dtype=np.int64), len(rows))
        return self._score_codes(users, items).reshape(len(rows), self.n_items_)

    def predict(self, X) -> np.ndarray:
        """Scores of (user id, item id) pairs; unknown ids raise ValueError."""
        X = np.asarray(X)
        u = pd.Index(self.users_).get_indexer(X[:, 0])
        i = pd.Index(self.items_).get_indexer(X[:, 1])
        if (u < 0).any() or (i < 0).any():
            raise ValueError(f"{plural(int((u < 0).sum()), 'pair')} with an unknown user and "
                             f"{int((i < 0).sum())} with an "
                             "unknown item; the baseline scores the users and items of its training split")
        return self._score_codes(u.astype(np.int64), i.astype(np.int64))
