"""A feature-based ranking network (one hidden layer) trained with the same losses: :class:`NetRanker`."""

from __future__ import annotations

import math

import numpy as np
import torch

from .._validation import (as_1d_float, as_float64, check_labels, check_query_ids, check_same_length, group_by_qid,
                           is_positive_int, store_init_params)
from ..evaluation import evaluate
from ._base import TorchRanker
from ._batching import bucket_batches, pad
from ._losses import LOSSES
from ._persist import persistable
from ._training import train

ACTIVATIONS = {"relu": torch.nn.ReLU, "sigmoid": torch.nn.Sigmoid, "tanh": torch.nn.Tanh}
#: Largest feature magnitude NetRanker takes: float32 holds up to 3.4e38, and scores of
#: features far above 1e18 overflow after one hidden layer.
FLOAT32_LIMIT = 1e18


class RankingNet(torch.nn.Module):
    """s(x) = w2 . act(W1 x + b1) + b2: one hidden layer (the thesis uses 46 units on MQ2008)."""

    def __init__(self, n_features: int, hidden: int, activation: str = "relu"):
        super().__init__()
        self.hidden = torch.nn.Linear(n_features, hidden)
        self.activation = ACTIVATIONS[activation]()
        self.out = torch.nn.Linear(hidden, 1)

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """PyTorch's default ``Linear`` initialisation, drawn from ``generator``."""
        with torch.no_grad():
            for layer in (self.hidden, self.out):
                torch.nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=generator)
                bound = 1.0 / math.sqrt(layer.weight.shape[1])
                torch.nn.init.uniform_(layer.bias, -bound, bound, generator=generator)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x [..., n_features]`` -> scores ``[...]``."""
        return self.out(self.activation(self.hidden(x))).squeeze(-1)


def _check_features(X, n_features: int | None = None) -> np.ndarray:
    arr = np.asarray(X)
    if arr.ndim != 2:
        raise ValueError(f"X must be a 2-d array of features (n_rows, n_features), got shape {arr.shape}")
    wide, bad = as_float64(arr, "X")
    if bad.any():
        r, c = (int(v[0]) for v in np.nonzero(bad))
        raise ValueError(f"X contains {int(bad.sum())} NaN or infinite value(s) (first at row {r}, column {c}: "
                         f"{wide[r, c]}); the network has no missing-value rule: impute or drop those rows")
    big = np.abs(wide) > FLOAT32_LIMIT
    if big.any():
        r, c = (int(v[0]) for v in np.nonzero(big))
        raise ValueError(f"X holds {int(big.sum())} value(s) beyond +-{FLOAT32_LIMIT:.0e} (first at row {r}, column "
                         f"{c}: {wide[r, c]:g}), which the float32 network cannot use; standardise the features, "
                         "e.g. sklearn.preprocessing.StandardScaler (or log-transform heavy-tailed ones)")
    arr = np.ascontiguousarray(wide, dtype=np.float32)
    if n_features is not None and arr.shape[1] != n_features:
        raise ValueError(f"X has {arr.shape[1]} features, but the model was fitted with {n_features}")
    return arr


class _Lists:
    """Query lists as a flat CSR over row indices of the feature matrix."""

    def __init__(self, labels: np.ndarray, qid):
        order, starts, qids = group_by_qid(qid)
        self.rows, self.ptr, self.qids = order, starts, qids
        self.labels = labels[order].astype(np.float32)


class _NetTask:
    def __init__(self, features, lists: _Lists, keep: np.ndarray, batch_size, validation):
        self.features, self.lists, self.batch_size, self.validation = features, lists, batch_size, validation
        self.keep = keep
        self._x = None

    def batches(self, rng):
        lengths = np.diff(self.lists.ptr)
        for group in bucket_batches(self.keep, lengths, self.batch_size, rng):
            rows, labels, mask = pad(group, self.lists.ptr, self.lists.rows, self.lists.labels)
            yield rows, labels, mask

    def tensors(self, batch, device):
        if self._x is None or self._x.device != device:
            self._x = torch.from_numpy(self.features).to(device)
        rows, labels, mask = batch
        return ((torch.from_numpy(rows).to(device),), torch.from_numpy(labels).to(device),
                torch.from_numpy(mask).to(device))

    @staticmethod
    def slice(inputs, a, b):
        return (inputs[0][a:b],)

    def scores(self, module, inputs):
        return module(self._x[inputs[0]])

    def validate(self, module):
        return None if self.validation is None else self.validation(module)


def _net_scores(module, features: np.ndarray, chunk: int = 1 << 16) -> np.ndarray:
    device = next(module.parameters()).device
    out = np.empty(len(features), dtype=np.float64)
    with torch.no_grad():
        for a in range(0, len(features), chunk):
            out[a:a + chunk] = module(torch.from_numpy(features[a:a + chunk]).to(device)).double().cpu().numpy()
    return out


@persistable
class NetRanker(TorchRanker):
    """A one-hidden-layer network scoring feature vectors, trained per query with a ranking loss.

    The thesis (Westerborg 2022, Sec. 4.1) trains this model on MQ2008 with the listwise
    losses, 46 hidden units and Adam.  Lists are the queries (``qid``); each step takes
    ``batch_size`` queries.  Queries without a relevant item have nothing to order and are
    left out of training (they still count in evaluation, by gbrank.evaluate's ``empty``
    policy, here "zero").

    Parameters
    ----------
    loss : str, default "listwise_ndcg"
        Any name of :func:`make_loss`.  nDCG losses use graded gains 2**l - 1; the others
        count ``label >= relevance_threshold`` as relevant.
    hidden : int, default 46
    activation : {"relu", "sigmoid", "tanh"}, default "relu"
    optimizer : {"adam", "sgd"}, default "adam"
    learning_rate : float or None
        None: 0.01 for Adam; for SGD a value per loss (see :class:`MFRanker`).
    weight_decay, epochs, batch_size, eval_every, eval_metric, early_stopping
        As in :class:`MFRanker`.
    validation_size : float, default 0.2
        Fraction of the queries held out for model selection (0: none).  Ignored with
        ``eval_set``.
    relevance_threshold : float, default 1
        Labels at or above it are relevant for AP, RR, nRBP, k-OS/WARP/BPR and the
        evaluation (MQ2008 in the thesis: 2, the highest grade).
    loss_params, device, random_state, verbose, bounding
        As in :class:`MFRanker`.

    Attributes
    ----------
    module_ : RankingNet
        On the CPU after ``fit``.
    n_features_in_ : int
    loss_, eval_metric_, history_, best_epoch_, best_score_
        As in :class:`MFRanker`.
    """

    # what save/load keep (gbrank.torch._persist)
    _module_class = RankingNet
    _fitted_attributes = ("n_features_in_", "eval_metric_", "history_", "best_epoch_", "best_score_", "device_")

    @staticmethod
    def _module_config(module: RankingNet) -> dict:
        return {"n_features": module.hidden.in_features, "hidden": module.hidden.out_features,
                "activation": type(module.activation).__name__.lower()}

    def __init__(self, loss: str = "listwise_ndcg", hidden: int = 46, activation: str = "relu",
                 optimizer: str = "adam", learning_rate: float | None = None, weight_decay: float = 0.0,
                 epochs: int = 100, batch_size: int = 32, eval_every: int = 1, eval_metric: str | None = None,
                 validation_size: float = 0.2, early_stopping: int | None = None, relevance_threshold: float = 1.0,
                 loss_params: dict | None = None, device: str = "auto", random_state: int | None = None,
                 verbose: int = 0, bounding: str | None = None):
        store_init_params(self, locals())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False  # no missing-value rule: NaN and inf are refused
        tags.input_tags.sparse = False
        tags.target_tags.required = True  # graded labels, grouped by qid
        return tags

    def _loss_options(self) -> dict:
        """``loss_params``, with ``relevance_threshold`` for the losses that binarise labels."""
        options = super()._loss_options()
        base = str(self.loss).partition("+")[0].partition("@")[0].strip().lower()
        if base in LOSSES and "relevance_threshold" in LOSSES[base].options:
            options.setdefault("relevance_threshold", float(self.relevance_threshold))
        return options

    def _checked(self, X, y, qid, n_features=None):
        features = _check_features(X, n_features)
        if qid is None:
            raise ValueError("ranking needs query ids: pass qid=... (one per row)")
        check_same_length(X=features, y=y, qid=qid)
        check_query_ids(qid)
        labels = as_1d_float(y, "y")
        check_labels(labels, "exp")
        return features, labels

    def fit(self, X, y, *, qid, eval_set=None):
        """Train on feature rows grouped into queries.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
        y : array-like of shape (n_rows,)
            Graded relevance labels (non-negative integers).
        qid : array-like of shape (n_rows,)
            Query id of every row (rows of a query may come in any order).
        eval_set : (X, y, qid), optional
            Model-selection data replacing the internal validation split.

        Returns
        -------
        self
        """
        loss, metric, config, device, rng, generator = self._setup()
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {self.activation!r}")
        if not is_positive_int(self.hidden):
            raise ValueError(f"hidden must be a positive integer (units of the hidden layer), got {self.hidden!r}")
        val_size = float(self.validation_size)
        if not 0.0 <= val_size < 1.0:
            raise ValueError(f"validation_size must lie in [0, 1), got {self.validation_size!r}")
        features, labels = self._checked(X, y, qid)
        lists = _Lists(labels, qid)
        n_lists = len(lists.qids)
        has_rel = np.add.reduceat(lists.labels >= self.relevance_threshold, lists.ptr[:-1]) > 0
        val_lists = np.zeros(n_lists, dtype=bool)
        validation = None
        if eval_set is not None:
            try:
                Xe, ye, qe = eval_set
            except (TypeError, ValueError):
                raise ValueError("eval_set must be a triple (X, y, qid)") from None
            fe, le = self._checked(Xe, ye, qe, features.shape[1])
            validation = self._validation(fe, le, np.asarray(qe), metric)
        elif val_size > 0:
            n_val = int(math.floor(val_size * n_lists + 0.5))
            if n_val >= n_lists:
                raise ValueError(f"validation_size={val_size} leaves no query to train on ({n_lists} queries)")
            val_lists[rng.permutation(n_lists)[:n_val]] = True
            rows = np.concatenate([lists.rows[lists.ptr[q]:lists.ptr[q + 1]] for q in np.flatnonzero(val_lists)]) \
                if n_val else np.zeros(0, dtype=np.int64)
            validation = self._validation(features[rows], labels[rows], np.asarray(qid)[rows], metric)
        keep = np.flatnonzero(has_rel & ~val_lists)
        if len(keep) == 0:
            raise ValueError(f"no training query has a relevant row (label >= {self.relevance_threshold:g}); "
                             "check relevance_threshold")
        task = _NetTask(features, lists, keep, int(self.batch_size), validation)
        module = RankingNet(features.shape[1], int(self.hidden), self.activation)
        module.reset_parameters(generator)
        module.to(device)
        history, best_epoch, best_score = train(module, task, loss, config, device, generator, rng, str(metric))
        self.module_ = module.cpu().eval()
        self.n_features_in_ = features.shape[1]
        self.loss_ = loss
        self.eval_metric_ = str(metric)
        self.history_ = history
        self.best_epoch_ = int(best_epoch)
        self.best_score_ = best_score
        self.device_ = str(device)
        return self

    def _validation(self, features, labels, qid, metric):
        name, threshold = str(metric), float(self.relevance_threshold)

        def score(module):
            s = _net_scores(module, features)
            return float(evaluate(labels, s, qid, [metric], relevance_threshold=threshold, empty="zero").mean()[name])
        return score

    def predict(self, X) -> np.ndarray:
        """Scores of the feature rows, shape (n_rows,)."""
        self._check_fitted()
        return _net_scores(self.module_, _check_features(X, self.n_features_in_))

    def score(self, X, y, qid) -> float:
        """Mean of ``eval_metric_`` over the queries, via :func:`gbrank.evaluate` (empty lists score 0)."""
        self._check_fitted()
        features, labels = self._checked(X, y, qid, self.n_features_in_)
        s = _net_scores(self.module_, features)
        res = evaluate(labels, s, qid, [self.eval_metric_], relevance_threshold=float(self.relevance_threshold),
                       empty="zero")
        return float(res.mean()[self.eval_metric_])
