r"""``gbrank.beyond_accuracy``: what a recommender's top-k lists look like beyond accuracy.

Coverage and aggregate diversity of the catalogue, novelty, intra-list diversity,
serendipity against a primitive recommender, and popularity bias, per user and aggregated,
from the lists alone plus the training and test interactions.

Every user and item is an integer *code*: users index the rows of ``recommendations`` (or
appear in its ``user`` column), items are ``0 .. n_items - 1`` (map ids to codes first, e.g.
with ``pandas.factorize``).  Vectorised numpy: no Python loop per user (intra-list diversity
and the primitive lists loop over chunks of users).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from .._validation import is_positive_int

@dataclass(frozen=True)
class BeyondAccuracyResult:
    """What :func:`beyond_accuracy` returns, always in this shape.

    Attributes
    ----------
    per_user : pandas.DataFrame
        Indexed by user code (``user``), one row per list: ``novelty`` (mean self-information
        of its items, bits), ``intra_list_diversity`` (NaN without item vectors or a
        similarity, or for one-item lists), ``serendipity``, ``popularity`` (mean training
        popularity of its items, in users) and ``n_relevant`` (the user's test items).
    aggregate : pandas.Series
        ``coverage``, ``aggregate_diversity``, and the means over users of the per-user
        values: ``novelty``, ``intra_list_diversity`` (over lists where it is defined),
        ``serendipity``, ``arp`` (average recommendation popularity); then
        ``catalogue_popularity`` (mean popularity of all ``n_items`` items) and
        ``popularity_ratio`` = arp / catalogue_popularity.
    settings : dict
        ``k``, ``n_items``, ``n_users`` (popularity denominator), ``primitive``,
        ``diversity`` and the novelty convention.
    """

    per_user: pd.DataFrame
    aggregate: pd.Series
    settings: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        s = self.settings
        return (f"BeyondAccuracyResult({len(self.per_user)} lists of k={s.get('k')}, catalogue of "
                f"{s.get('n_items')} items)\n" + self.aggregate.to_string())


def beyond_accuracy(
    recommendations,
    test,
    train,
    n_items: int,
    *,
    k: int | None = None,
    n_users: int | None = None,
    item_vectors=None,
    similarity: Callable | np.ndarray | None = None,
    primitive="popularity",
    chunk_size: int = 1024,
) -> BeyondAccuracyResult:
    r"""Beyond-accuracy metrics of top-k recommendation lists.

    With :math:`L_u` the list of user u (k items), :math:`U` the users with a list,
    :math:`I` the catalogue (``n_items``), :math:`\mathrm{pop}(i)` the number of distinct
    users who interacted with item i in ``train`` and :math:`n` = ``n_users``:

    * **catalogue coverage** :math:`|\bigcup_u L_u| / |I|` and **aggregate diversity**
      :math:`|\bigcup_u L_u|` (Adomavicius & Kwon 2012);
    * **novelty** (mean self-information, Zhou et al. 2010):
      :math:`\mathrm{nov}(u) = \frac1k \sum_{i \in L_u} -\log_2 p(i)` with
      :math:`p(i) = \mathrm{pop}(i)/n`; an item nobody interacted with in training counts
      as seen by one user, :math:`p(i) = 1/n`, so its self-information is
      :math:`\log_2 n`, the largest finite value (convention);
    * **intra-list diversity** (Ziegler et al. 2005; Smyth & McClave 2001):
      :math:`\mathrm{ILD}(u) = \frac{2}{k(k-1)} \sum_{i<j \in L_u} (1 - \mathrm{sim}(i, j))`,
      with sim the cosine of ``item_vectors`` (a zero vector has cosine 0 with every item)
      or the given ``similarity``; NaN for k = 1 or when neither is given;
    * **serendipity** (Ge, Delgado-Battenfeld & Jannach 2010, in the form of Kaminskas &
      Bridge 2016): :math:`\mathrm{ser}(u) = |\{i \in L_u : i \in T_u,\ i \notin P_u\}| / k`,
      the fraction of the list that is relevant (in the user's test items :math:`T_u`)
      *and* unexpected (not in the primitive recommender's list :math:`P_u`); by default
      :math:`P_u` is the k most popular training items the user did not interact with in
      training (ties by item code);
    * **popularity bias** (Abdollahpouri et al. 2019): per user the mean popularity of the
      list :math:`\frac1k \sum_{i \in L_u} \mathrm{pop}(i)`, its mean over users (the
      average recommendation popularity, ARP), and ARP divided by the mean popularity of
      the whole catalogue :math:`\frac1{|I|}\sum_{i \in I} \mathrm{pop}(i)` (1: the lists
      are as popular as a random catalogue item; above 1: biased to popular items).

    Aggregates of per-user values are plain means over the lists (users without test items
    count, with serendipity 0).

    Parameters
    ----------
    recommendations : array-like of shape (n_lists, k) or pandas.DataFrame
        Item codes, best first, row u = the list of user u; or a table with columns
        ``user``, ``item`` and ``rank`` (every user the same number of rows; rank orders
        them).  An item may appear once per list.
    test : array-like of shape (n, 2) or pandas.DataFrame
        (user, item) codes of the relevant held-out interactions (columns ``user``, ``item``
        for a table).  May be empty.
    train : array-like of shape (n, 2) or pandas.DataFrame
        (user, item) codes of the training interactions: the popularity, and the items the
        primitive recommender leaves out.
    n_items : int
        Size of the catalogue (item codes are 0 .. n_items - 1).
    k : int, optional
        Use the first k items of each list (default: the whole list).
    n_users : int, optional
        Denominator of p(i) (default: the number of distinct users in ``train``).
    item_vectors : array-like of shape (n_items, d) or scipy.sparse matrix, optional
        One vector per item code for the cosine of intra-list diversity (e.g. the item's
        column of the user-item training matrix, or its latent factors).
    similarity : callable or array of shape (n_items, n_items), optional
        Instead of ``item_vectors``: ``similarity(a, b)`` vectorised over two equal-length
        integer arrays of item codes, returning one similarity per pair; or a matrix.
    primitive : "popularity" or array-like of shape (n_lists, k_p)
        The primitive recommender of serendipity: the popularity lists (default) or the
        lists of another model (item codes, rows aligned with ``recommendations``).
    chunk_size : int, default 1024
        Users per chunk of intra-list diversity (memory: chunk_size x d).

    Returns
    -------
    BeyondAccuracyResult

    Raises
    ------
    ValueError
        Item codes outside 0..n_items - 1, negative user codes, a non-positive k, shapes
        that do not match (lists of unequal length, vectors per item, a (n, 2) table), an
        item repeated in a list, empty training data.

    References
    ----------
    Ge, Delgado-Battenfeld & Jannach (2010), *Beyond accuracy: evaluating recommender systems
    by coverage and serendipity*, RecSys; Kaminskas & Bridge (2016), *Diversity,
    serendipity, novelty, and coverage: a survey and empirical analysis of beyond-accuracy
    objectives in recommender systems*, ACM TiiS 7(1); Zhou et al. (2010), PNAS 107(10);
    Ziegler et al. (2005), WWW; Abdollahpouri, Burke & Mobasher (2019), FLAIRS.

    Examples
    --------
    Three users, four items; items 0 and 1 were each seen by two of the three users in
    training, items 2 and 3 by none.  The popularity lists (primitive) are [1, 2], [2, 3]
    and [0, 2]: user 0's relevant item 2 was expected, users 1 and 2 got one relevant,
    unexpected item each.

    >>> train = [[0, 0], [1, 0], [1, 1], [2, 1]]
    >>> r = beyond_accuracy([[2, 3], [2, 0], [3, 1]], [[0, 2], [1, 0], [2, 3]], train, 4)
    >>> r.per_user["serendipity"].tolist()
    [0.0, 0.5, 0.5]
    >>> r.aggregate[["coverage", "aggregate_diversity", "arp", "popularity_ratio"]].round(4).tolist()
    [1.0, 4.0, 0.6667, 0.6667]
    >>> round(float(r.per_user.loc[1, "novelty"]), 4)  # (log2 3 + log2(3/2)) / 2
    1.085
    """
    recs, users = _recommendations(recommendations, n_items, k)
    k = recs.shape[1]
    train_u, train_i = _pairs(train, "train", n_items)
    test_u, test_i = _pairs(test, "test", n_items)
    if not len(train_u):
        raise ValueError("train is empty: popularity, novelty and the primitive lists need the training "
                         "interactions; pass them as (user, item) pairs")
    n_train_users = len(np.unique(train_u))
    if n_users is None:
        n_users = n_train_users
    elif isinstance(n_users, bool) or not isinstance(n_users, (int, np.integer)) or n_users < n_train_users:
        raise ValueError(f"n_users must be an integer at least the {n_train_users} distinct users of train, "
                         f"got {n_users!r}; leave it None to use that number")
    if not is_positive_int(chunk_size):
        raise ValueError(f"chunk_size must be a positive integer (users per chunk), got {chunk_size!r}")

    pop = np.bincount(train_i, minlength=n_items).astype(np.float64)  # pairs are distinct
    self_information = -np.log2(np.maximum(pop, 1.0) / n_users)
    novelty = self_information[recs].mean(axis=1)
    popularity = pop[recs].mean(axis=1)

    # serendipity: relevant and not in the primitive list
    test_keys = np.unique(test_u * n_items + test_i)
    rec_keys = users[:, None] * n_items + recs
    relevant = _contains(test_keys, rec_keys)
    if isinstance(primitive, str):
        if primitive != "popularity":
            raise ValueError(f"primitive must be 'popularity' or an array of item codes per list, got {primitive!r}")
        prim = _popular_lists(pop, users, train_u, train_i, k, n_items)
    else:
        prim = _item_lists(primitive, "primitive", n_items)
        if len(prim) != len(recs):
            raise ValueError(f"primitive has {len(prim)} lists for {len(recs)} recommendation lists; give one "
                             "primitive list per user, rows aligned with recommendations")
    prim_rows = np.broadcast_to(users[:, None], prim.shape)
    ok = prim >= 0
    prim_keys = np.unique(prim_rows[ok] * n_items + prim[ok])
    expected = _contains(prim_keys, rec_keys)
    serendipity = (relevant & ~expected).sum(axis=1) / k

    ild, diversity = _intra_list_diversity(recs, n_items, item_vectors, similarity, chunk_size)
    n_relevant = np.bincount(np.searchsorted(users, test_u[_member(users, test_u)]), minlength=len(users))

    per_user = pd.DataFrame({"novelty": novelty, "intra_list_diversity": ild, "serendipity": serendipity,
                             "popularity": popularity, "n_relevant": n_relevant.astype(np.int64)},
                            index=pd.Index(users, name="user"))
    distinct = len(np.unique(recs))
    arp = float(popularity.mean())
    catalogue = float(pop.mean())
    aggregate = pd.Series({
        "coverage": distinct / n_items, "aggregate_diversity": float(distinct), "novelty": float(novelty.mean()),
        "intra_list_diversity": float(np.nanmean(ild)) if np.isfinite(ild).any() else float("nan"),
        "serendipity": float(serendipity.mean()), "arp": arp, "catalogue_popularity": catalogue,
        "popularity_ratio": arp / catalogue if catalogue > 0 else float("nan")}, name="value")
    settings = {"k": int(k), "n_items": int(n_items), "n_users": int(n_users),
                "primitive": "popularity (top-k training items the user did not interact with)"
                if isinstance(primitive, str) else "given lists",
                "diversity": diversity,
                "novelty": "-log2(pop(i) / n_users); pop(i) = 0 counts as 1"}
    return BeyondAccuracyResult(per_user=per_user, aggregate=aggregate, settings=settings)


# ---------------------------------------------------------------------------------------
# inputs


def _check_n_items(n_items) -> int:
    if not is_positive_int(n_items):
        raise ValueError(f"n_items must be a positive integer (the catalogue size), got {n_items!r}")
    return int(n_items)


def _codes(values, name: str) -> np.ndarray:
    """Integer codes as int64; floats only when whole."""
    arr = np.asarray(values)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64, copy=False)
    if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
        return arr.astype(np.int64)
    if arr.size == 0:
        return arr.astype(np.int64)
    raise ValueError(f"{name} must hold integer codes, got dtype {arr.dtype}; map ids to codes 0..n-1 first, "
                     "e.g. with pandas.factorize")


def _check_items(items: np.ndarray, name: str, n_items: int) -> None:
    bad = (items < 0) | (items >= n_items)
    if bad.any():
        first = items[bad].flat[0]
        raise ValueError(f"{name} holds item code {first} outside the catalogue 0..{n_items - 1} (n_items={n_items}) "
                         f"({int(bad.sum())} such entries); map item ids to codes 0..n_items-1 (e.g. with "
                         "pandas.factorize) or pass the catalogue size as n_items")


def _item_lists(values, name: str, n_items: int) -> np.ndarray:
    try:
        arr = np.asarray(values)
    except ValueError:  # ragged rows
        raise ValueError(f"{name} has lists of different lengths; every list must hold the same number of items "
                         "(truncate them to a common k, or pass a table with columns user, item, rank)") from None
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D, one row of item codes per user ([n_users, k]), got shape {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape}); give at least one item per list")
    arr = _codes(arr, name)
    _check_items(arr, name, n_items)
    return arr


def _recommendations(values, n_items, k) -> tuple[np.ndarray, np.ndarray]:
    """(lists [n, k], user code of each row, sorted)."""
    n_items = _check_n_items(n_items)
    if isinstance(values, pd.DataFrame):
        missing = [c for c in ("user", "item", "rank") if c not in values.columns]
        if missing:
            raise ValueError(f"recommendations lacks the columns {missing}; a table needs 'user', 'item' and 'rank' "
                             f"(it has {list(values.columns)})")
        if values.empty:
            raise ValueError("recommendations is empty; give at least one list")
        u = _codes(values["user"].to_numpy(), "recommendations['user']")
        if (u < 0).any():
            raise ValueError("recommendations['user'] holds negative user codes; users are codes 0..n_users-1")
        order = np.lexsort((values["rank"].to_numpy(), u))
        u, items, rank = u[order], values["item"].to_numpy()[order], values["rank"].to_numpy()[order]
        if np.any((u[1:] == u[:-1]) & (rank[1:] == rank[:-1])):
            raise ValueError("recommendations has two rows with the same (user, rank); give each item of a list "
                             "its own rank")
        users, counts = np.unique(u, return_counts=True)
        if (counts != counts[0]).any():
            bad = users[np.argmax(counts != counts[0])]
            raise ValueError(f"every user needs the same number of recommendations: user {bad} has "
                             f"{counts[counts != counts[0]][0]}, user {users[0]} has {counts[0]}; cut or pad the "
                             "lists to a common k")
        recs = _item_lists(items.reshape(len(users), counts[0]), "recommendations['item']", n_items)
    else:
        recs = _item_lists(values, "recommendations", n_items)
        users = np.arange(len(recs), dtype=np.int64)
    if k is not None:
        if not is_positive_int(k):
            raise ValueError(f"k must be a positive integer (items per list), got {k!r}; leave it None to use "
                             "whole lists")
        if k > recs.shape[1]:
            raise ValueError(f"k={k} exceeds the {recs.shape[1]} items of each list; lower k or give longer lists")
        recs = recs[:, :k]
    srt = np.sort(recs, axis=1)
    dup = srt[:, 1:] == srt[:, :-1]
    if dup.any():
        row = int(np.flatnonzero(dup.any(axis=1))[0])
        raise ValueError(f"recommendations repeat item {srt[row, 1:][dup[row]][0]} in the list of user "
                         f"{users[row]}; a top-k list holds each item once")
    return np.ascontiguousarray(recs), users


def _pairs(values, name: str, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct (user, item) code pairs of an (n, 2) array or a user/item table."""
    if isinstance(values, pd.DataFrame):
        missing = [c for c in ("user", "item") if c not in values.columns]
        if missing:
            raise ValueError(f"{name} lacks the columns {missing}; a table needs 'user' and 'item' "
                             f"(it has {list(values.columns)})")
        arr = values[["user", "item"]].to_numpy()
    else:
        arr = np.asarray(values)
        if arr.size == 0:
            arr = arr.reshape(0, 2)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"{name} must be (user, item) pairs of shape (n, 2), got shape {arr.shape}; stack the "
                         f"columns, e.g. np.column_stack([users, items])")
    arr = _codes(arr, name)
    if (arr[:, 0] < 0).any():
        raise ValueError(f"{name} holds negative user codes; users are codes 0..n_users-1")
    _check_items(arr[:, 1], name, n_items)
    keys = np.unique(arr[:, 0] * n_items + arr[:, 1])
    return keys // n_items, keys % n_items


def _contains(sorted_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Elementwise ``keys in sorted_keys``."""
    if not len(sorted_keys):
        return np.zeros(keys.shape, dtype=bool)
    at = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return sorted_keys[at] == keys


def _member(users: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Which codes are among the (sorted) users."""
    return _contains(users, codes)


# ---------------------------------------------------------------------------------------
# the primitive recommender and intra-list diversity


def _popular_lists(pop, users, train_u, train_i, k, n_items, chunk_entries: int = 1 << 24) -> np.ndarray:
    """Per user the k most popular items it did not interact with in training (ties by item
    code), -1 where fewer than k are left.  A user's list lies among the first
    k + (its training items) of the popularity order, so each chunk of users marks its
    training items in that prefix and takes the first k free places."""
    order = np.argsort(-pop, kind="stable")
    place = np.empty(n_items, dtype=np.int64)
    place[order] = np.arange(n_items)
    known = _member(users, train_u)
    row = np.searchsorted(users, train_u[known])
    where = place[train_i[known]]
    width = int(min(n_items, k + np.bincount(row, minlength=len(users)).max(initial=0)))
    keep = where < width
    row, where = row[keep], where[keep]
    by_row = np.argsort(row, kind="stable")
    row, where = row[by_row], where[by_row]
    out = np.full((len(users), k), -1, dtype=np.int64)
    step = max(1, chunk_entries // max(width, 1))
    for a in range(0, len(users), step):
        b = min(a + step, len(users))
        lo, hi = np.searchsorted(row, [a, b])
        free = np.ones((b - a, width), dtype=bool)
        free[row[lo:hi] - a, where[lo:hi]] = False
        take = free & (np.cumsum(free, axis=1) <= k)
        r, c = np.nonzero(take)
        count = take.sum(axis=1)
        slot = np.arange(len(r)) - np.repeat(np.cumsum(count) - count, count)
        out[a + r, slot] = order[c]
    return out


def _intra_list_diversity(recs, n_items, item_vectors, similarity, chunk_size) -> tuple[np.ndarray, str | None]:
    """(ILD per list, what it was computed from)."""
    n, k = recs.shape
    if item_vectors is not None and similarity is not None:
        raise ValueError("give item_vectors or similarity, not both")
    if item_vectors is None and similarity is None:
        return np.full(n, np.nan), None
    if k < 2:
        return np.full(n, np.nan), "undefined for one-item lists"
    n_pairs = k * (k - 1) // 2
    ild = np.empty(n)
    if item_vectors is not None:
        from scipy import sparse

        if sparse.issparse(item_vectors):
            V = sparse.csr_matrix(item_vectors, dtype=np.float64)
            norms = np.sqrt(np.asarray(V.multiply(V).sum(axis=1)).ravel())
        else:
            V = np.asarray(item_vectors, dtype=np.float64)
            if V.ndim != 2:
                raise ValueError(f"item_vectors must be 2-D, one row per item code, got shape {V.shape}")
            if not np.all(np.isfinite(V)):
                raise ValueError("item_vectors has NaN or infinite entries; give finite vectors")
            norms = np.linalg.norm(V, axis=1)
        if V.shape[0] != n_items:
            raise ValueError(f"item_vectors has {V.shape[0]} rows but the catalogue has n_items={n_items} items; give "
                             "one vector per item code (row i = item i)")
        inv = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
        nonzero = (norms > 0).astype(np.float64)
        # sum_{i<j} cos(i, j) = (|sum_i w_i|^2 - sum_i |w_i|^2) / 2, w_i = v_i / |v_i|
        for a in range(0, n, chunk_size):
            r = recs[a:a + chunk_size]
            c = len(r)
            pick = sparse.csr_matrix((inv[r].ravel(), r.ravel(), np.arange(0, c * k + 1, k)), shape=(c, n_items))
            total = pick @ V
            sq = np.asarray(total.multiply(total).sum(axis=1)).ravel() if sparse.issparse(total) \
                else np.einsum("ij,ij->i", total, total)
            cos_sum = (sq - nonzero[r].sum(axis=1)) / 2.0
            ild[a:a + c] = 1.0 - cos_sum / n_pairs
        return ild, "1 - cosine of item_vectors"
    iu, ju = np.triu_indices(k, 1)
    matrix = None
    if not callable(similarity):
        matrix = np.asarray(similarity, dtype=np.float64)
        if matrix.shape != (n_items, n_items):
            raise ValueError(f"similarity must be a callable or an (n_items, n_items) = ({n_items}, {n_items}) "
                             f"matrix, got shape {matrix.shape}")
    for a in range(0, n, chunk_size):
        r = recs[a:a + chunk_size]
        left, right = r[:, iu].ravel(), r[:, ju].ravel()
        sim = matrix[left, right] if matrix is not None else np.asarray(similarity(left, right), dtype=np.float64)
        if sim.shape != left.shape:
            raise ValueError(f"similarity(a, b) must return one value per pair, shape {left.shape}; got shape "
                             f"{sim.shape}")
        if not np.all(np.isfinite(sim)):
            raise ValueError("similarity returned NaN or infinite values; it must be finite for every item pair")
        ild[a:a + len(r)] = 1.0 - sim.reshape(len(r), n_pairs).mean(axis=1)
    return ild, "1 - given similarity"
