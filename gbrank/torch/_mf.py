"""Matrix factorisation trained with a ranking loss: :class:`MFRanker`."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from ..interactions import (NotEnoughNegatives, check_nsr, check_pairs, check_unique_pairs, csr_difference, csr_from,
                            csr_rows, csr_take, display_id, holdout, sample_negatives, top_k)
from .._validation import check_query_ids, is_positive_int, store_init_params
from ..metrics import MetricSpec
from ._base import TorchRanker
from ._batching import bucket_batches, pad
from ._distributed import ONE_PROCESS, check_distributed, data_parallel
from ._losses import RankingLoss
from ._persist import persistable
from ._protocol import PROTOCOLS, evaluate_full, evaluate_sampled
from ._training import TrainConfig, train


class MatrixFactorization(torch.nn.Module):
    """Scores s(u, i) = <U_u, V_i> from user factors U [n_users, D] and item factors V [n_items, D]."""

    def __init__(self, n_users: int, n_items: int, n_factors: int):
        super().__init__()
        self.user_factors = torch.nn.Embedding(n_users, n_factors)
        self.item_factors = torch.nn.Embedding(n_items, n_factors)

    def reset_parameters(self, std: float, generator: torch.Generator | None = None) -> None:
        with torch.no_grad():
            torch.nn.init.normal_(self.user_factors.weight, 0.0, std, generator=generator)
            torch.nn.init.normal_(self.item_factors.weight, 0.0, std, generator=generator)

    def forward(self, users: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
        """``users [B]`` and ``items [B, L]`` -> scores ``[B, L]``."""
        u = self.user_factors(users)
        v = self.item_factors(items)
        return (v * u[:, None, :]).sum(dim=2)


def _combine(pos, neg):
    """Per-user lists: positives (label 1) then negatives (label 0), as flat CSR arrays."""
    lp, ln = np.diff(pos[0]), np.diff(neg[0])
    ptr = np.concatenate([[0], np.cumsum(lp + ln)]).astype(np.int64)
    items = np.empty(ptr[-1], dtype=np.int64)
    labels = np.zeros(ptr[-1], dtype=np.float32)
    rp = csr_rows(pos[0])
    at = ptr[rp] + np.arange(len(rp)) - pos[0][rp]
    items[at], labels[at] = pos[1], 1.0
    rn = csr_rows(neg[0])
    items[ptr[rn] + lp[rn] + np.arange(len(rn)) - neg[0][rn]] = neg[1]
    return ptr, items, labels


def _split_lists(pos, neg, per_list, nsr, rng):
    """Each user's positives (in random order) cut into lists of ``per_list``, each list with
    its share of the user's negatives (``nsr`` per positive, in drawn order): flat CSR arrays
    ``(ptr, items, labels)`` (positives first in a list), the user of each list, and the
    first list of each user (user u owns lists first[u]:first[u + 1])."""
    lp = np.diff(pos[0])
    n_lists = -(-lp // per_list)
    first = np.concatenate([[0], np.cumsum(n_lists)]).astype(np.int64)
    rp = csr_rows(pos[0])
    order = np.lexsort((rng.random(len(rp)), rp))  # a random order of each user's positives
    list_p = first[rp] + (np.arange(len(rp)) - pos[0][rp]) // per_list
    rn = csr_rows(neg[0])
    list_n = first[rn] + (np.arange(len(rn)) - neg[0][rn]) // (per_list * nsr)
    owner = np.concatenate([list_p, list_n])
    by_list = np.argsort(owner, kind="stable")  # positives before negatives within a list
    items = np.concatenate([pos[1][order], neg[1]])[by_list]
    labels = np.concatenate([np.ones(len(rp), np.float32), np.zeros(len(rn), np.float32)])[by_list]
    ptr = np.concatenate([[0], np.cumsum(np.bincount(owner, minlength=int(first[-1])))]).astype(np.int64)
    return (ptr, items, labels), np.repeat(np.arange(len(lp)), n_lists), first


class _MFTask:
    """Training lists (positives + sampled negatives; one list per user, or lists of
    ``per_list`` positives each) and validation."""

    def __init__(self, train_pos, exclude, n_items, nsr, resample, batch_size, names, validation, per_list=None):
        self.train_pos, self.exclude, self.n_items, self.nsr = train_pos, exclude, n_items, nsr
        self.need = nsr * np.diff(train_pos[0])
        self.users = np.flatnonzero(self.need > 0)
        self.resample, self.batch_size, self.names = resample, batch_size, names
        self.validation = validation
        self.per_list = per_list
        self._lists = None
        # list r belongs to user owner[r]; user u owns lists first[u]:first[u + 1]
        n_users = len(self.need)
        self._owner, self._first = np.arange(n_users), np.arange(n_users + 1)

    def lists(self, rng):
        """(ptr, items, labels) of the training lists: one per user (list r is user r's),
        or ``per_list`` positives each (list r is user ``self._owner[r]``'s)."""
        if self._lists is None or self.resample:
            neg = sample_negatives(self.need, self.exclude, self.n_items, rng, what="training negatives",
                                   names=self.names)
            if self.per_list is None:
                self._lists = _combine(self.train_pos, neg)
            else:
                self._lists, self._owner, self._first = _split_lists(self.train_pos, neg, self.per_list, self.nsr,
                                                                     rng)
        return self._lists

    def batches(self, rng):
        """Padded batches of ``batch_size`` users with every list of theirs: (user of each
        row, items, labels, mask).  With ``per_list`` the number of steps and the positives a
        step sees are those of one list per user."""
        ptr, items, labels = self.lists(rng)
        first = self._first
        for users in bucket_batches(self.users, ptr[first[1:]] - ptr[first[:-1]], self.batch_size, rng):
            count = first[users + 1] - first[users]
            # the lists first[u]..first[u + 1] - 1 of each user, in the batch's user order
            rows = np.repeat(first[users] - np.concatenate([[0], np.cumsum(count)[:-1]]), count) \
                + np.arange(int(count.sum()))
            yield (self._owner[rows],) + tuple(pad(rows, ptr, items, labels))

    @staticmethod
    def tensors(batch, device):
        rows, items, labels, mask = batch
        return ((torch.from_numpy(rows).to(device), torch.from_numpy(items).to(device)),
                torch.from_numpy(labels).to(device), torch.from_numpy(mask).to(device))

    @staticmethod
    def slice(inputs, a, b):
        return inputs[0][a:b], inputs[1][a:b]

    @staticmethod
    def scores(module, inputs):
        return module(*inputs)

    def validate(self, module):
        if self.validation is None:
            return None
        return self.validation(module)


def _pair_scores(module, users: np.ndarray, items: np.ndarray, chunk: int = 1 << 20) -> np.ndarray:
    device = module.user_factors.weight.device
    out = np.empty(len(users), dtype=np.float64)
    with torch.no_grad():
        for a in range(0, len(users), chunk):
            u = module.user_factors(torch.from_numpy(users[a:a + chunk]).to(device))
            v = module.item_factors(torch.from_numpy(items[a:a + chunk]).to(device))
            out[a:a + chunk] = (u * v).sum(dim=1).double().cpu().numpy()
    return out


def _row_scores(module, users: np.ndarray, double: bool = True) -> np.ndarray:
    """Scores of every item for each of ``users``: float64, or the model's float32 with ``double=False``."""
    device = module.user_factors.weight.device
    with torch.no_grad():
        u = module.user_factors(torch.from_numpy(np.asarray(users, dtype=np.int64)).to(device))
        scores = u @ module.item_factors.weight.T
        return (scores.double() if double else scores).cpu().numpy()


def _matrix_pairs(X, y, items, user_ids, item_ids):
    """A scipy.sparse user-item matrix as the equivalent ``(pairs, ratings, catalogue)`` of fit."""
    if y is not None:
        raise TypeError(
            f"y is given, so X must be (user id, item id) pairs, not a {type(X).__name__} user-item matrix (its "
            "stored values are the ratings): pass y=None, or pairs: m = X.tocoo(); X = np.column_stack([m.row, "
            "m.col]); y = m.data")
    if len(X.shape) != 2:
        raise ValueError(f"a sparse X must be a 2-d user-item matrix, got shape {X.shape}")
    m = X.tocoo()
    n_rows, n_cols = X.shape
    rows, cols = np.asarray(m.row, dtype=np.int64), np.asarray(m.col, dtype=np.int64)
    data = np.asarray(m.data)
    if len(data) == 0:
        raise ValueError(f"X is a {n_rows} x {n_cols} user-item matrix without any stored entry: no interaction to "
                         "train on")
    if data.dtype.kind not in "biuf":
        raise TypeError(f"the values of a sparse X are ratings and must be numbers, got dtype {data.dtype}")
    data = data.astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(data) | (data < 0))
    if len(bad):
        r = bad[0]
        raise ValueError(
            f"X stores {len(bad)} NaN, infinite or negative value(s), e.g. X[{rows[r]}, {cols[r]}] = {data[r]:g}; "
            "its values are ratings (1 for implicit feedback) and must be finite and non-negative")
    key = rows * n_cols + cols
    if len(np.unique(key)) < len(key):
        _, first, counts = np.unique(key, return_index=True, return_counts=True)
        r = first[np.flatnonzero(counts > 1)[0]]
        raise ValueError(
            f"X stores entry ({rows[r]}, {cols[r]}) more than once ({int((counts > 1).sum())} such entries; a "
            f"{type(X).__name__} may hold duplicates, which scipy would sum): keep one rating per (user, item), e.g. "
            "X.sum_duplicates() to add them up, or aggregate the pairs first with pandas "
            "(df.groupby([user, item], as_index=False)[rating].max())")
    users = _axis_ids(user_ids, n_rows, "user_ids", "rows")
    columns = _axis_ids(item_ids, n_cols, "item_ids", "columns")
    pairs = pd.DataFrame({"user": users[rows], "item": columns[cols]})
    catalogue = columns if items is None else np.concatenate([columns, np.asarray(items).reshape(-1)])
    return pairs, data, catalogue


def _axis_ids(ids, n: int, name: str, axis: str) -> np.ndarray:
    """The ids of the rows or columns of a sparse X: given (unique, one per row/column) or 0..n-1."""
    if ids is None:
        return np.arange(n, dtype=np.int64)
    ids = np.asarray(ids)
    if ids.ndim != 1 or len(ids) != n:
        raise ValueError(f"{name} must give one id per {axis[:-1]} of X: X has {n} {axis}, {name} has shape "
                         f"{ids.shape}")
    check_query_ids(ids, name, "user id" if name == "user_ids" else "item id")  # none missing, one kind
    values, counts = np.unique(ids, return_counts=True)
    if (counts > 1).any():
        raise ValueError(f"{name} must be unique: {display_id(values[counts > 1][0])} names "
                         f"{int(counts[counts > 1][0])} {axis} of X")
    return ids


#: Scores held at a time by recommend and similar_items (users or items per batch x catalogue).
_SCORES_PER_BATCH = 1 << 22


def _top_k_rows(codes: np.ndarray, scores_of, filtered: np.ndarray, k: int, n_items: int):
    """The ``k`` best item codes of each of ``codes`` and their scores, best first (:func:`top_k`),
    as two arrays of shape (len(codes), k): ``scores_of(rows)`` gives the scores of every item
    for a batch of rows, [len(rows), n_items], with the items it leaves out at -inf; the
    ``filtered`` items are left out for all.  At most about :data:`_SCORES_PER_BATCH` scores
    are held at a time."""
    out_items = np.empty((len(codes), k), dtype=np.int64)
    out_scores = np.empty((len(codes), k), dtype=np.float64)
    step = max(1, _SCORES_PER_BATCH // max(n_items, 1))
    for a in range(0, len(codes), step):
        scores = scores_of(codes[a:a + step])
        scores[:, filtered] = -np.inf
        top = top_k(scores, k)
        out_items[a:a + step] = top
        out_scores[a:a + step] = np.take_along_axis(scores, top, axis=1)
    return out_items, out_scores


class _Validation:
    """Model selection on sampled lists (explicit candidates) or on the full catalogue."""

    def __init__(self, metric, protocol, users=None, items=None, labels=None, positives=None,
                 exclude=None, n_items=None):
        self.metric, self.protocol = metric, protocol
        self.users, self.items, self.labels = users, items, labels
        self.positives, self.exclude, self.n_items = positives, exclude, n_items

    def __call__(self, module) -> float:
        name = str(self.metric)
        if self.protocol == "sampled":
            scores = _pair_scores(module, self.users, self.items)
            return float(evaluate_sampled(scores, self.labels, self.users, [self.metric]).mean()[name])
        with_pos = np.flatnonzero(np.diff(self.positives[0]) > 0)
        res = evaluate_full(lambda rows: _row_scores(module, rows), with_pos, self.positives, self.exclude,
                            self.n_items, [self.metric])
        return float(res.mean()[name])


@dataclass(frozen=True)
class _Prepared:
    """What :meth:`MFRanker.fit` trains on, from its data preparation: the resolved loss,
    model-selection metric, training settings and device, the random streams (``rng`` for
    data, ``generator`` for torch) and the training task (its lists and validation)."""

    loss: RankingLoss
    metric: MetricSpec
    config: TrainConfig
    device: torch.device
    rng: np.random.Generator
    generator: torch.Generator
    task: _MFTask


@persistable
class MFRanker(TorchRanker):
    r"""Matrix factorisation for top-n recommendation, trained with a ranking loss.

    Scores are s(u, i) = <U_u, V_i> with ``n_factors``-dimensional user and item factors
    (Li et al. 2021, Sec. 3.1).  Training follows the paper's protocol (Sec. 4.2): ratings
    are binarised at ``relevance_threshold``; each user's list holds its training positives
    and ``nsr`` times as many negatives drawn from the items it never interacted with;
    the loss is computed per list and averaged over a batch of ``batch_size`` users.

    Parameters
    ----------
    loss : str, default "listwise_nrbp"
        ``listwise_ndcg``, ``listwise_ap``, ``listwise_rr``, ``listwise_nrbp`` (smoothed
        listwise losses), ``lambda_ndcg``, ``lambda_ap``, ``lambda_rr``, ``lambda_nrbp@p``
        (LambdaRank with the RankNet log-loss), ``kos_warp``, ``kos_auc``, ``warp``, ``bpr``.
        See :func:`make_loss`.
    n_factors : int, default 32
    nsr : int, default 1
        Negative sampling ratio: negatives per training positive (paper: 1, 2, 5).  Also the
        ratio of the sampled validation lists.
    optimizer : {"sgd", "adam"} or None, default None
        None: the loss's default (``make_loss(loss).optimizer``, from the registry's
        ``DEFAULTS``, chosen by ``benchmarks/mf_learning_rates.py``; see docs/torch.md,
        "Default optimiser and learning rate per loss").  The paper trains with SGD; the
        thesis with Adam.
    learning_rate : float or None
        None: the loss's default for the optimiser (``make_loss(loss).default_learning_rate
        (optimizer)``): the searched rate for the loss's default optimiser, else the loss's
        ``sgd_learning_rate`` for SGD and 0.01 for Adam.
    weight_decay : float, default 0
        L2 penalty of the optimiser.
    epochs : int, default 100
    batch_size : int, default 32
        Users per optimisation step (each with its list, or its lists: ``positives_per_list``).
    eval_every : int, default 1
        Evaluate the validation metric every this many epochs (and after the last one).
    eval_metric : str or None
        Model-selection metric for :func:`gbrank.evaluate`; None: the metric the loss aims
        at (``ndcg``, ``ap``, ``rr``, ``nrbp@0.95`` for the listwise nRBP loss, ``nrbp@p``
        for ``lambda_nrbp@p``, ``ndcg`` for k-OS, WARP and BPR).
    eval_protocol : {"sampled", "full"}, default "sampled"
        Validation lists: held-out positives with ``nsr`` x sampled negatives, or against
        the whole catalogue minus the user's training items.
    validation_size : float, default 0.1
        Fraction of each user's positives held out for validation (round half up; 0: no
        validation, the last epoch is kept).  Ignored when ``fit`` gets ``eval_set``.
    early_stopping : int or None
        Stop after this many evaluations without improvement.
    resample_negatives : bool, default True
        Draw new training negatives every epoch; False draws them once (the paper's fixed
        sample).
    positives_per_list : "auto", None or int, default "auto"
        Training lists.  None: one list per user, all its training positives and ``nsr``
        times as many negatives (the paper's).  m: each user's positives, in a random order
        (new whenever the negatives are redrawn), cut into lists of m (the last may be
        shorter), each with ``nsr``
        negatives per positive; a step still takes ``batch_size`` users, with all their
        lists (the loss is the mean over the lists).  "auto": the loss's
        default (``make_loss(loss).positives_per_list``): 1 for the top-one losses
        (``listwise_rr``, ``lambda_rr``, ``lambda_err``), whose gradient on a user's whole
        list rests on its first relevant item and learns nothing of the catalogue; None for
        the others.  See docs/torch.md, "Default optimiser and learning rate per loss".
    relevance_threshold : float, default 1
        ``y >= relevance_threshold`` is a positive (the paper binarises ratings at 4).
    min_positives : int, default 1
        Users with fewer positives in ``fit`` are left out (``dropped_users_``) and unknown
        to the model (the paper keeps users with at least 25).
    bounding : None or str, default None
        Bounded listwise losses (thesis Ch. 3-4): ``"minmax"``, ``"expectation"``,
        ``"expectation_max"`` or ``"distribution"`` maps each list's smoothed metric value
        with that list's bounds (``gbrank.bounds``); degenerate lists get weight 0.  Only
        for the listwise losses; same as the loss suffix ``"listwise_nrbp+minmax"``.
    loss_params : dict or None
        Options of the loss (``temperature``, ``sigma``, ``normalize``, k-OS's ``k``...).
    init_std : float, default 0.1
        Factors start as N(0, init_std^2).
    device : str, default "auto"
        "auto" (CUDA when available), "cpu", "cuda", "cuda:1"...
    random_state : int or None
        Seed of everything random in ``fit`` (split, negatives, initialisation, k-OS/WARP
        draws); on the CPU a seed gives identical models.
    verbose : int, default 0
        1 shows a progress bar over the epochs (on a terminal or in a notebook only; never in
        a log file), 0 (default) is quiet; each epoch is also logged at DEBUG on the
        ``gbrank.torch`` logger.
    distributed : bool, default False
        Train as one process of a ``torch.distributed`` group with DistributedDataParallel
        (under ``torchrun``, or through :func:`fit_distributed`): each step's users are
        split over the processes and the model equals the one-process model for the same
        ``random_state`` (an int is required), up to float summation order.  See
        ``gbrank.torch._distributed``.

    Attributes
    ----------
    users_, items_ : numpy.ndarray
        Known user and item ids (sorted).
    dropped_users_ : numpy.ndarray
        Users left out by ``min_positives`` (including users without any positive).
    module_ : MatrixFactorization
        The trained factors, on the CPU.
    loss_ : RankingLoss
    eval_metric_ : str
    history_ : pandas.DataFrame
        Per epoch: loss, seconds, and the validation metric where evaluated (plus the
        columns of ``fit``'s ``monitor``).
    best_epoch_, best_score_ : int, float or None
        Epoch whose weights were kept, and its validation score.

    Examples
    --------
    >>> X = [[u, i] for u in range(4) for i in range(6) if (u + i) % 2 == 0]
    >>> model = MFRanker(loss="lambda_ndcg", epochs=3, verbose=0, random_state=0,
    ...                  validation_size=0).fit(X)
    >>> model.recommend([0], k=2).shape
    (1, 2)

    The same interactions as a scipy.sparse user-item matrix (rows users, columns items):

    >>> import scipy.sparse as sp
    >>> m = sp.csr_matrix(([1.0] * len(X), ([u for u, _ in X], [i for _, i in X])))
    >>> same = MFRanker(loss="lambda_ndcg", epochs=3, verbose=0, random_state=0, validation_size=0).fit(m)
    >>> bool((same.predict(X) == model.predict(X)).all()), same.similar_items([0], k=2).shape
    (True, (1, 2))
    """

    # what save/load keep (gbrank.torch._persist)
    _module_class = MatrixFactorization
    _fitted_attributes = ("users_", "items_", "n_users_", "n_items_", "dropped_users_", "seen_indptr_", "seen_items_",
                          "eval_metric_", "history_", "best_epoch_", "best_score_", "device_")

    @staticmethod
    def _module_config(module: MatrixFactorization) -> dict:
        return {"n_users": module.user_factors.num_embeddings, "n_items": module.item_factors.num_embeddings,
                "n_factors": module.user_factors.embedding_dim}

    def __init__(self, loss: str = "listwise_nrbp", n_factors: int = 32, nsr: int = 1, optimizer: str | None = None,
                 learning_rate: float | None = None, weight_decay: float = 0.0, epochs: int = 100,
                 batch_size: int = 32, eval_every: int = 1, eval_metric: str | None = None,
                 eval_protocol: str = "sampled", validation_size: float = 0.1, early_stopping: int | None = None,
                 resample_negatives: bool = True, positives_per_list: int | str | None = "auto",
                 relevance_threshold: float = 1.0, min_positives: int = 1,
                 loss_params: dict | None = None, init_std: float = 0.1, device: str = "auto",
                 random_state: int | None = None, verbose: int = 0, bounding: str | None = None,
                 distributed: bool = False):
        store_init_params(self, locals())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True  # X holds (user id, item id) pairs of any hashable ids
        tags.input_tags.sparse = False
        tags.target_tags.required = False  # y=None: every pair is a positive
        return tags

    # ---- fit --------------------------------------------------------------------------
    def fit(self, X, y=None, *, items=None, eval_set=None, user_ids=None, item_ids=None, monitor=None):
        """Train on (user, item) interactions.

        Parameters
        ----------
        X : array-like of shape (n, 2), or scipy.sparse matrix or array
            (user id, item id) pairs; ids may be any hashable values.  Or a user-item
            matrix: rows are users, columns items, and every stored entry an interaction
            whose value is its rating (1s for implicit feedback; an explicitly stored 0 is
            an interaction rated 0: never a positive, never drawn as a negative; drop such
            entries first with ``X.eliminate_zeros()`` if they mean nothing).  Every column
            is an item of the catalogue, interacted with or not.  The model is the one
            ``fit(pairs, ratings, items=item ids)`` trains on the equivalent pairs.
        y : array-like of shape (n,), optional
            Ratings (binarised at ``relevance_threshold``) or 1s; None means every pair is
            a positive.  Pairs below the threshold are interactions too: they are never
            drawn as negatives, nor recommended with ``exclude_seen``.  Must be None for a
            sparse ``X`` (its values are the ratings).
        items : array-like, optional
            Further item ids of the catalogue (e.g. ``split.items``): they get factors, can
            be drawn as negatives and recommended, though no user interacted with them in X.
        eval_set : (X_eval, y_eval), optional
            Explicit candidate lists for model selection (e.g. ``split.X_test,
            split.y_test``, which is the paper's choice of the epoch on the test set);
            replaces the internal validation split.
        user_ids, item_ids : array-like, optional
            For a sparse ``X`` only: the ids of its rows and of its columns (unique, one
            per row / column).  Default: the row and column indices 0, 1, ...
        monitor : callable or None
            ``monitor(estimator, epoch) -> dict[str, float]``, called after every evaluated
            epoch (every ``eval_every`` epochs and after the last), after the validation
            score, with the estimator scoring with the weights of that epoch:
            ``predict``, ``score`` and ``recommend`` work inside it (in eval mode, without
            gradients).  Its values become columns of ``history_`` (NaN at the epochs not
            evaluated); it must not change the estimator, and does not change the
            training (the same seed gives the same weights with or without it).  E.g.
            the test-set metric of every epoch:
            ``monitor=lambda est, epoch: {"test_ndcg": est.score(X_test, y_test)}``.

        Returns
        -------
        self
        """
        return self._train(self._prepare(X, y, items, eval_set, user_ids, item_ids, monitor), monitor)

    def _prepare(self, X, y, items, eval_set, user_ids, item_ids, monitor) -> _Prepared:
        """Data preparation of :meth:`fit`: check the parameters and the data, set the id maps
        (``users_``, ``items_``, ``n_users_``, ``n_items_``, ``dropped_users_``, ``seen_*``),
        hold out the validation data and build the training task.  Of the random streams it
        draws from ``rng`` only (held-out positives, validation negatives), before training."""
        if hasattr(X, "tocoo") and hasattr(X, "nnz"):
            X, y, items = _matrix_pairs(X, y, items, user_ids, item_ids)
        elif user_ids is not None or item_ids is not None:
            raise ValueError("user_ids and item_ids name the rows and columns of a scipy.sparse user-item matrix X; "
                             "with (user id, item id) pairs, X holds the ids themselves: leave them out")
        if monitor is not None and not callable(monitor):
            raise TypeError(f"monitor must be a callable monitor(estimator, epoch) -> dict or None, got {monitor!r}")
        loss, metric, config, device, rng, generator = self._setup()
        nsr, per_list, val_size, min_pos = self._mf_settings(loss)
        seen, positives = self._id_maps(X, y, items, min_pos)
        train_pos, exclude, validation = self._split(seen, positives, eval_set, metric, val_size, nsr, rng)
        task = _MFTask(train_pos, exclude, self.n_items_, nsr, bool(self.resample_negatives), int(self.batch_size),
                       self.users_, validation, per_list)
        # fail early, with the user's id, when nsr asks for more negatives than exist
        need, available = task.need, self.n_items_ - np.diff(exclude[0])
        if (need > available).any():
            u = int(np.flatnonzero(need > available)[0])
            raise NotEnoughNegatives(
                f"nsr={nsr} asks for {need[u]} training negatives for user {display_id(self.users_[u])}, but only "
                f"{available[u]} of the {self.n_items_} items are not among its interactions "
                f"({int((need > available).sum())} user(s) are short); lower nsr or leave such users out")
        return _Prepared(loss, metric, config, device, rng, generator, task)

    def _mf_settings(self, loss):
        """The checked MF parameters: ``(nsr, positives per list, validation size, min_positives)``."""
        check_distributed(self.distributed, self.random_state)
        nsr = check_nsr(self.nsr)
        per_list = self._positives_per_list(loss)
        if self.eval_protocol not in PROTOCOLS:
            raise ValueError(f"eval_protocol must be one of {list(PROTOCOLS)}, got {self.eval_protocol!r}")
        val_size = float(self.validation_size)
        if not 0.0 <= val_size < 1.0:
            raise ValueError(f"validation_size must lie in [0, 1), got {self.validation_size!r}")
        if not is_positive_int(self.n_factors):
            raise ValueError(f"n_factors must be a positive integer, got {self.n_factors!r}")
        min_pos = int(self.min_positives)
        if min_pos < 1:
            raise ValueError(f"min_positives must be at least 1, got {self.min_positives!r}")
        threshold = self.relevance_threshold
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.integer, np.floating)) \
                or not np.isfinite(threshold) or threshold <= 0:
            raise ValueError(f"relevance_threshold must be a positive finite number (ratings at or above it are "
                             f"positives), got {threshold!r}")
        return nsr, per_list, val_size, min_pos

    def _id_maps(self, X, y, items_extra, min_pos):
        """Known users (those with ``min_positives``) and items as codes 0..n-1: sets ``users_``,
        ``items_``, ``n_users_``, ``n_items_``, ``dropped_users_`` and ``seen_indptr_, seen_items_``;
        returns the CSR rows (indptr, items) of every interaction and of the positives."""
        users, items, ratings = check_pairs(X, y)
        check_unique_pairs(users, items)
        if ratings is None:
            ratings = np.ones(len(users))
        positive = ratings >= self.relevance_threshold

        user_ids, ucode = np.unique(users, return_inverse=True)
        n_pos = np.bincount(ucode[positive], minlength=len(user_ids))
        kept = n_pos >= min_pos
        if not kept.any():
            raise ValueError(
                f"no user has at least {min_pos} positive interaction(s) (y >= {self.relevance_threshold:g}); "
                f"the most any user has is {int(n_pos.max(initial=0))}. Ranking losses need positives: "
                "check relevance_threshold (ratings are binarised at it) or min_positives")
        self.dropped_users_ = user_ids[~kept]
        remap = np.full(len(user_ids), -1, dtype=np.int64)
        remap[kept] = np.arange(int(kept.sum()))
        rows = kept[ucode]
        self.users_ = user_ids[kept]
        catalogue = items[rows] if items_extra is None else np.concatenate(
            [items[rows], np.asarray(items_extra).reshape(-1)])
        self.items_ = np.unique(catalogue)
        icode = np.searchsorted(self.items_, items[rows])
        ucode = remap[ucode[rows]]
        positive = positive[rows]
        n_users, n_items = len(self.users_), len(self.items_)
        self.n_users_, self.n_items_ = n_users, n_items

        seen = csr_from(ucode, icode, n_users)
        positives = csr_from(ucode[positive], icode[positive], n_users)
        self.seen_indptr_, self.seen_items_ = seen
        return seen, positives

    def _split(self, seen, positives, eval_set, metric, val_size, nsr, rng):
        """``(training positives, items never drawn as training negatives, validation)``:
        ``eval_set``'s lists, a held-out ``validation_size`` of each user's positives, or none."""
        n_users, n_items = self.n_users_, self.n_items_
        validation = None
        if eval_set is not None:
            train_pos, exclude = positives, seen
            validation = self._eval_set_validation(eval_set, metric)
        elif val_size > 0:
            held = holdout(positives[0], val_size, rng)
            if not held.any():
                most = int(np.diff(positives[0]).max())
                raise ValueError(
                    f"validation_size={val_size:g} holds out no positive: each user has at most {most} positive(s) "
                    f"and round({val_size:g} x {most}) = 0. Raise validation_size, pass eval_set=(X_eval, y_eval), "
                    "or set validation_size=0 (no validation: the last epoch is kept)")
            prow = csr_rows(positives[0])
            val_pos = csr_from(prow[held], positives[1][held], n_users)
            train_pos = csr_from(prow[~held], positives[1][~held], n_users)
            exclude = csr_difference(seen, val_pos, n_items)  # held-out positives may be drawn, as test ones
            if self.eval_protocol == "sampled":
                need = nsr * np.diff(val_pos[0])
                neg = sample_negatives(need, seen, n_items, rng, what="validation negatives", names=self.users_)
                lists = _combine(val_pos, neg)
                qid = csr_rows(lists[0])
                validation = _Validation(metric, "sampled", users=qid, items=lists[1],
                                         labels=lists[2].astype(np.float64))
            else:
                validation = _Validation(metric, "full", positives=val_pos, exclude=exclude, n_items=n_items)
        else:
            train_pos, exclude = positives, seen
        if np.diff(train_pos[0]).sum() == 0:
            raise ValueError("no training positive is left after the validation split; lower validation_size")
        return train_pos, exclude, validation

    def _train(self, prepared: _Prepared, monitor) -> MFRanker:
        """Training step of :meth:`fit`: initialise the factors, train, set the fitted attributes."""
        p = prepared
        module = MatrixFactorization(self.n_users_, self.n_items_, int(self.n_factors))
        module.reset_parameters(float(self.init_std), p.generator)
        # fitted before training, so that a monitor can predict and score with the current weights
        self.loss_, self.eval_metric_ = p.loss, str(p.metric)
        device = p.device
        try:
            with self._replicas(device) as replicas:
                device = replicas.device_for(device)
                self.module_ = module.to(device)
                history, best_epoch, best_score = train(
                    module, p.task, p.loss, p.config, device, p.generator, p.rng, str(p.metric), replicas,
                    monitor=None if monitor is None else (lambda epoch: monitor(self, epoch)))
        except BaseException:
            self.__dict__.pop("module_", None)  # a failed fit leaves no half-trained model behind
            raise
        self.module_ = module.cpu().eval()
        self.history_ = history
        self.best_epoch_ = int(best_epoch)
        self.best_score_ = best_score
        self.device_ = str(device)
        return self

    def _positives_per_list(self, loss):
        """The resolved ``positives_per_list``: None (one list per user) or a positive int."""
        value = self.positives_per_list
        if isinstance(value, str) and value == "auto":
            return loss.positives_per_list
        if value is None:
            return None
        if not is_positive_int(value):
            raise ValueError(f"positives_per_list must be 'auto' (the loss's default), None (one list per user) or "
                             f"a positive number of positives per training list, got {value!r}")
        return int(value)

    def _replicas(self, device):
        """The processes this fit trains with: one, or a DDP group when ``distributed=True``."""
        if not check_distributed(self.distributed, self.random_state):
            return contextlib.nullcontext(ONE_PROCESS)
        return data_parallel(device, self.random_state)

    def _eval_set_validation(self, eval_set, metric):
        try:
            X_eval, y_eval = eval_set
        except (TypeError, ValueError):
            raise ValueError("eval_set must be a pair (X_eval, y_eval)") from None
        u, i, y_e = self._codes(X_eval, y_eval)
        labels = (y_e >= self.relevance_threshold).astype(np.float64)
        order = np.argsort(u, kind="stable")
        return _Validation(metric, "sampled", users=u[order], items=i[order], labels=labels[order])

    # ---- prediction -------------------------------------------------------------------
    def _codes(self, X, y=None, allow_unknown: bool = False):
        users, items, y = check_pairs(X, y)
        u = pd.Index(self.users_).get_indexer(users)
        i = pd.Index(self.items_).get_indexer(items)
        if not allow_unknown and ((u < 0).any() or (i < 0).any()):
            bad_u, bad_i = users[u < 0], items[i < 0]
            show = lambda ids: ", ".join(display_id(v) for v in pd.unique(ids)[:5])  # noqa: E731
            first = "; ".join(([f"users {show(bad_u)}"] if len(bad_u) else []) +
                              ([f"items {show(bad_i)}"] if len(bad_i) else []))
            raise ValueError(
                f"X holds {len(pd.unique(bad_u))} unknown user id(s) and {len(pd.unique(bad_i))} unknown item "
                f"id(s) (first: {first}); the model scores only users and items seen in fit "
                f"(users with fewer than min_positives={self.min_positives} positives were left out)")
        return u.astype(np.int64), i.astype(np.int64), y

    def _score_codes(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        return _pair_scores(self.module_, users, items)

    def _score_user_rows(self, users: np.ndarray, double: bool = True) -> np.ndarray:
        return _row_scores(self.module_, users, double)

    def _seen(self):
        return self.seen_indptr_, self.seen_items_

    def predict(self, X) -> np.ndarray:
        """Scores s(u, i) of (user id, item id) pairs, shape (n,); unknown ids raise ValueError."""
        self._check_fitted()
        u, i, _ = self._codes(X)
        return self._score_codes(u, i)

    def recommend(self, users, k: int = 10, exclude_seen: bool = True, return_scores: bool = False,
                  filter_items=None):
        """The top ``k`` items of each user, best first.

        Scores every item for a batch of users at a time (s(u, i) = <U_u, V_i>), then
        selects each user's top ``k`` with ``np.argpartition`` and sorts only those
        (:func:`top_k`).  Ties are broken by the item's position in ``items_`` (the sorted
        ids): the lower id first, as a stable full sort would.

        Parameters
        ----------
        users : array-like of user ids
        k : int, default 10
        exclude_seen : bool, default True
            Leave out the items the user interacted with in ``fit`` (any rating).
        return_scores : bool, default False
            Also return the scores.
        filter_items : array-like of item ids, optional
            Items never to recommend to anyone (e.g. unavailable ones), as in the
            ``implicit`` library's ``recommend``.  Every id must be known (``items_``).

        Returns
        -------
        items : numpy.ndarray of shape (len(users), k)
            Item ids; with ``return_scores``, a pair ``(items, scores)``.

        Raises
        ------
        ValueError
            Naming them: unknown user ids or ``filter_items`` ids; ``k`` not a positive
            integer, or more than the items left to some requested user after
            ``exclude_seen`` and ``filter_items``.
        """
        self._check_fitted()
        users = np.asarray(users).reshape(-1)
        codes = pd.Index(self.users_).get_indexer(users)
        if (codes < 0).any():
            shown = ", ".join(display_id(v) for v in pd.unique(users[codes < 0])[:5])
            raise ValueError(f"unknown user id(s) {shown}; the model knows the "
                             f"{self.n_users_} users of fit (minus those dropped by min_positives)")
        if not is_positive_int(k):
            raise ValueError(f"k must be a positive integer, got {k!r}")
        filtered = self._item_codes(filter_items, "filter_items")
        n_seen = np.diff(self.seen_indptr_)[codes] if exclude_seen else np.zeros(len(codes), dtype=np.int64)
        if exclude_seen and len(filtered) and len(codes):  # items both seen and filtered count once
            local, items = csr_take(self.seen_indptr_, self.seen_items_, codes)
            n_seen = n_seen - np.bincount(local[np.isin(items, filtered)], minlength=len(codes))
        left = self.n_items_ - len(filtered) - n_seen
        if len(codes) and k > left.min():
            raise ValueError(f"k={k} exceeds the {int(left.min())} items a requested user has not seen"
                             f"{' and that are not in filter_items' if len(filtered) else ''}; lower k"
                             f"{' or pass exclude_seen=False' if exclude_seen else ''}")

        def scores_of(rows):
            scores = self._score_user_rows(rows, double=False)  # float32: the order is that of float64
            if exclude_seen:
                local, items = csr_take(self.seen_indptr_, self.seen_items_, rows)
                scores[local, items] = -np.inf
            return scores
        out_items, out_scores = _top_k_rows(codes, scores_of, filtered, k, self.n_items_)
        ids = self.items_[out_items]
        return (ids, out_scores) if return_scores else ids

    def similar_items(self, items, k: int = 10, return_scores: bool = False, filter_items=None):
        r"""The ``k`` items most similar to each given item, most similar first.

        Similarity is the cosine of the item factors,
        :math:`\cos(i, j) = \langle V_i, V_j \rangle / (\lVert V_i \rVert \lVert V_j \rVert)`,
        in [-1, 1] (0 where a factor vector is all zeros).  The item itself is never among
        its own similar items.  Ties are broken by the position in ``items_`` (lower id
        first), as in :meth:`recommend`.

        Parameters
        ----------
        items : array-like of item ids
        k : int, default 10
        return_scores : bool, default False
            Also return the cosine similarities.
        filter_items : array-like of item ids, optional
            Items never to return.

        Returns
        -------
        similar : numpy.ndarray of shape (len(items), k)
            Item ids; with ``return_scores``, a pair ``(similar, cosines)``.

        Raises
        ------
        ValueError
            Naming them: unknown item ids (in ``items`` or ``filter_items``); ``k`` not a
            positive integer, or more than the other items left after ``filter_items``.
        """
        self._check_fitted()
        codes = self._item_codes(items, "items")
        if not is_positive_int(k):
            raise ValueError(f"k must be a positive integer, got {k!r}")
        filtered = self._item_codes(filter_items, "filter_items")
        left = self.n_items_ - 1 - len(filtered) + np.isin(codes, filtered)
        if len(codes) and k > left.min():
            raise ValueError(f"k={k} exceeds the {int(left.min())} other items"
                             f"{' not in filter_items' if len(filtered) else ''} a requested item can be similar to; "
                             "lower k")
        with torch.no_grad():
            factors = self.module_.item_factors.weight.detach().double().cpu().numpy()
        norms = np.linalg.norm(factors, axis=1)
        unit = factors / np.where(norms > 0, norms, 1.0)[:, None]

        def scores_of(rows):
            scores = unit[rows] @ unit.T
            scores[np.arange(len(rows)), rows] = -np.inf  # not itself
            return scores
        out_items, out_scores = _top_k_rows(codes, scores_of, filtered, k, self.n_items_)
        ids = self.items_[out_items]
        return (ids, out_scores) if return_scores else ids

    def _item_codes(self, ids, name: str) -> np.ndarray:
        """Positions in ``items_`` of item ids (None: none); unknown ids raise ValueError naming them."""
        if ids is None:
            return np.zeros(0, dtype=np.int64)
        ids = np.asarray(ids).reshape(-1)
        codes = pd.Index(self.items_).get_indexer(ids)
        if (codes < 0).any():
            shown = ", ".join(display_id(v) for v in pd.unique(ids[codes < 0])[:5])
            raise ValueError(f"{name} holds {len(pd.unique(ids[codes < 0]))} unknown item id(s) ({shown}); the model "
                             f"knows the {self.n_items_} items of fit (its items_)")
        return np.unique(codes).astype(np.int64) if name == "filter_items" else codes.astype(np.int64)

    def score(self, X, y) -> float:
        """Mean of ``eval_metric_`` over the users of candidate lists (X, y), via :func:`gbrank.evaluate`.

        Labels are binarised at ``relevance_threshold``; a user without a relevant item
        scores 0 (``empty="zero"``); ties are averaged.
        """
        self._check_fitted()
        u, i, y = self._codes(X, y)
        scores = self._score_codes(u, i)
        labels = (y >= self.relevance_threshold).astype(np.float64)
        res = evaluate_sampled(scores, labels, u, [self.eval_metric_])
        return float(res.mean()[self.eval_metric_])
