"""The per-user split of interactions into training data and the paper's sampled test lists."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._validation import is_positive_int, plural
from ._checks import ArgumentError, check_nsr, check_pairs, check_unique_pairs
from ._csr import csr_from, csr_rows
from ._sampling import holdout, sample_negatives


@dataclass
class InteractionSplit:
    """A per-user split of interactions into training data and the paper's test lists.

    Attributes
    ----------
    X_train, y_train : numpy.ndarray
        Training interactions of the kept users: their training positives and all their
        interactions below the relevance threshold (those are never test targets).
        Pass them to ``gbrank.torch.MFRanker.fit``.
    X_test, y_test : numpy.ndarray
        The sampled test lists (the paper's protocol): each user's held-out positives
        (with their rating, so ``y_test >= relevance_threshold`` marks them) plus ``nsr``
        times as many negatives (``y_test = 0``) drawn from the catalogue items the user
        never interacted with (in training or test).
    test_positives : numpy.ndarray
        The held-out positive pairs, shape (n, 2), for the full-catalogue protocol.
    items : numpy.ndarray
        The catalogue: every item the kept users interacted with (training or test).  Pass
        it to ``gbrank.torch.MFRanker.fit(..., items=split.items)`` so that items seen only
        in the test part are known to the model (drawn as negatives in training, as in the
        paper).
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
        On empty input, when no user keeps ``min_positives`` positives (an
        :class:`ArgumentError` naming ``min_positives`` and ``relevance_threshold``), or when
        a user has too few non-interacted items for its test negatives
        (:class:`NotEnoughNegatives`, naming ``nsr``).
    """
    if y is None:
        raise ValueError("y is required: pass the ratings, or np.ones(len(X)) with relevance_threshold=1 for "
                         "implicit feedback")
    users, items, ratings = check_pairs(X, y)
    check_unique_pairs(users, items)
    if not _real(test_size) or not 0.0 < float(test_size) < 1.0:
        raise ValueError(f"test_size must lie strictly between 0 and 1, got {test_size!r}")
    nsr = check_nsr(nsr)
    if not is_positive_int(min_positives):
        raise ValueError(f"min_positives must be a positive integer, got {min_positives!r}")
    min_positives = int(min_positives)
    if not _real(relevance_threshold) or relevance_threshold <= 0:
        raise ValueError(f"relevance_threshold must be a positive finite number (ratings at or above it are "
                         f"positives), got {relevance_threshold!r}")
    if random_state is not None and not isinstance(random_state, (int, np.integer, np.random.Generator)):
        raise TypeError(f"random_state must be None, an int seed or a numpy Generator, got {random_state!r}")
    rng = np.random.default_rng(random_state)
    user_ids, ucode = np.unique(users, return_inverse=True)
    positive = ratings >= relevance_threshold
    n_pos = np.bincount(ucode[positive], minlength=len(user_ids))
    kept = n_pos >= min_positives
    if not kept.any():
        raise ArgumentError(f"no user has at least {plural(min_positives, 'positive interaction')} (rating >= "
                            f"{relevance_threshold:g}); the most any user has is {int(n_pos.max(initial=0))}. "
                            "Lower min_positives or relevance_threshold", ["min_positives", "relevance_threshold"])
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


def _real(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) and bool(np.isfinite(v))
