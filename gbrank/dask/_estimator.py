"""``DaskGBRanker``: gbrank objectives trained on a Dask cluster through LightGBM's or
XGBoost's distributed training, with queries kept whole and lost workers reported."""

from __future__ import annotations

import dataclasses
import threading
import time

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._validation import check_choice, check_labels, first_infinite, store_init_params
from ..backends import get_backend
from ..estimators import GBRanker, resolve_objective
from ..lambdas import GRADIENT_OBJECTIVES
from ._evaluate import evaluate
from ._lightgbm import train_lightgbm_dask
from ._queries import _as_array, make_queries_whole
from ._xgboost import train_xgboost_dask


class DaskTrainingError(RuntimeError):
    """Distributed training could not finish: a worker was lost, or it ran past ``timeout``."""


# The backends with a distributed trainer (each imports its library's Dask interface when it
# trains); prediction is the backend record's.
DASK_TRAIN = {"lightgbm": train_lightgbm_dask, "xgboost": train_xgboost_dask}


class DaskGBRanker(BaseEstimator):
    """Gradient-boosted ranker with a gbrank objective, trained on a Dask cluster.

    The same settings as :class:`gbrank.GBRanker` (which see), trained by
    ``lightgbm.dask.DaskLGBMRanker`` or ``xgboost.dask.train`` on the workers that hold
    the rows.  ``fit`` first makes every query whole in one partition
    (:func:`make_queries_whole`): the gradient callback on each worker sees only that
    worker's rows and builds the query boundaries from them.

    Parameters
    ----------
    objective, backend, n_estimators, learning_rate, num_leaves, max_depth,
    min_child_weight, subsample, colsample_bytree, reg_lambda, eval_metric,
    early_stopping_rounds, random_state, backend_params, verbose
        As in :class:`gbrank.GBRanker`.  Early stopping watches the first ``eval_metric``
        on the last ``eval_set``; all workers see the global value, so they stop together.
        Threads per worker are the Dask worker's.
    client : distributed.Client, optional
        The cluster to train on (default: the current client, ``distributed.get_client()``).
    timeout : float, optional
        Seconds after which ``fit`` gives up with :class:`DaskTrainingError` (None: no limit).

    Attributes
    ----------
    booster_, best_iteration_, evals_result_, objective_, n_features_in_
        As in :class:`gbrank.GBRanker`.
    n_partitions_ : int, training partitions after making queries whole
    moved_rows_ : int, training rows that changed partition to make their query whole
    n_workers_ : int, workers that held training rows

    Examples
    --------
    >>> from distributed import Client, LocalCluster                  # doctest: +SKIP
    >>> client = Client(LocalCluster(n_workers=2, threads_per_worker=1))  # doctest: +SKIP
    >>> model = DaskGBRanker("nrbp@0.95", backend="xgboost").fit(X, y, qid=qid)  # doctest: +SKIP
    >>> scores = model.predict(X)                                     # doctest: +SKIP
    """

    def __init__(self, objective="ndcg", backend="lightgbm", n_estimators=100, learning_rate=0.1,
                 num_leaves=31, max_depth=None, min_child_weight=None, subsample=1.0,
                 colsample_bytree=1.0, reg_lambda=0.0, eval_metric="ndcg@10",
                 early_stopping_rounds=None, random_state=None, backend_params=None,
                 verbose=False, client=None, timeout=None):
        store_init_params(self, locals())

    def _local_twin(self) -> GBRanker:
        """The single-machine estimator with the same settings (one definition of the
        library parameters)."""
        names = GBRanker().get_params().keys() - {"n_jobs"}
        return GBRanker(**{k: getattr(self, k) for k in names})

    def _client(self):
        if self.client is not None:
            return self.client
        from distributed import get_client

        try:
            return get_client()
        except ValueError:
            raise ValueError("no Dask client: start one (distributed.Client(address) or "
                             "Client(LocalCluster())) or pass client=... to DaskGBRanker") from None

    def fit(self, X, y, *, qid, eval_set=None):
        """Fit on a dask Array or DataFrame ``X`` with labels ``y`` and one query id per row
        ``qid`` (arrays, Series, or column names of a DataFrame ``X``).  Each query's rows
        must be adjacent; they may straddle partitions.  ``eval_set``: list of (X, y, qid)."""
        check_choice(self.backend, "backend", DASK_TRAIN)
        objective = resolve_objective(self.objective, self.backend)
        if eval_set is not None and not isinstance(eval_set, (list, tuple)):
            raise TypeError(f"eval_set must be a list of (X, y, qid) triples, got {type(eval_set).__name__}")
        self._local_twin()._check_settings(bool(eval_set))
        if self.timeout is not None and not (isinstance(self.timeout, (int, float)) and self.timeout > 0):
            raise ValueError(f"timeout must be None or a positive number of seconds, got {self.timeout!r}")
        if y is None:
            raise ValueError("y is required: pass one label per row")
        _check_numeric_columns(X, (qid, y), "X")
        client = self._client()
        train = make_queries_whole(X, y, qid=qid, client=client)
        if train.n_queries == train.qid.shape[0]:
            raise ValueError(f"every query of qid has a single row ({train.n_queries} queries): a ranking objective "
                             "orders the rows within a query, so there is nothing to learn; check that qid holds "
                             "query ids, not row ids")
        evals = []
        for i, item in enumerate(eval_set or []):
            if not isinstance(item, (list, tuple)) or len(item) != 3:
                raise ValueError(f"eval_set[{i}] must be a triple (X, y, qid)")
            _check_numeric_columns(item[0], item[1:], f"eval_set[{i}] X")
            evals.append(make_queries_whole(*item[:2], qid=item[2], client=client))
        if self.early_stopping_rounds and not evals:
            raise ValueError("early_stopping_rounds needs an eval_set to watch")
        n_features = train.X.shape[1]
        for e in evals:
            if e.X.shape[1] != n_features:
                raise ValueError(f"eval_set X has {e.X.shape[1]} features, the training X {n_features}")
        train, evals, holders = _persist_checked(client, train, evals, objective)
        params = self._local_twin()._library_params(objective)
        metric_names = [self.eval_metric] if isinstance(self.eval_metric, str) else list(self.eval_metric)
        self.booster_, self.best_iteration_, self.evals_result_ = _run_watched(
            client, holders, self.timeout,
            lambda: DASK_TRAIN[self.backend](client, params, train, evals, objective, metric_names,
                                         self.n_estimators, self.early_stopping_rounds, self.verbose))
        self.objective_ = objective
        self.n_features_in_ = n_features
        self.feature_names_ = train.feature_names
        self.n_partitions_ = train.npartitions
        self.moved_rows_ = train.moved_rows
        self.n_workers_ = len(holders)
        return self

    def predict(self, X):
        """Ranking scores as a lazy dask array (one per row), from the best iteration."""
        check_is_fitted(self, "booster_")
        Xa = _as_array(X, "X")
        if Xa.ndim != 2 or Xa.shape[1] != self.n_features_in_:
            raise ValueError(f"X must have {self.n_features_in_} feature columns, got shape {Xa.shape}")
        Xa = Xa.rechunk({1: -1})
        return Xa.map_blocks(_predict_block, get_backend(self.backend).predict, self.booster_,
                             self.best_iteration_, drop_axis=1, dtype=np.float64,
                             meta=np.empty(0, dtype=np.float64))

    def score(self, X, y, qid):
        """Mean of the first ``eval_metric`` over the queries (``gbrank.evaluate`` defaults)."""
        metric = self.eval_metric if isinstance(self.eval_metric, str) else self.eval_metric[0]
        res = evaluate(y, self.predict(X), qid, [metric], client=self._client())
        return float(res.mean().iloc[0])

    def to_local(self) -> GBRanker:
        """The fitted model as a single-machine :class:`gbrank.GBRanker` (numpy in, numpy out)."""
        check_is_fitted(self, "booster_")
        local = self._local_twin()
        for name in ("booster_", "best_iteration_", "evals_result_", "objective_", "n_features_in_"):
            setattr(local, name, getattr(self, name))
        return local


def _predict_block(X, predict, booster, best_iteration):
    return np.asarray(predict(booster, X, best_iteration), dtype=np.float64).reshape(-1)


def _check_numeric_columns(X, named, what):
    """Refuse a non-numeric feature column of a dask DataFrame (named ``qid``/``y`` columns excepted)."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or not hasattr(X, "columns"):
        dtype = getattr(X, "dtype", None)
        if dtype is not None and dtype.kind not in "biuf":
            raise TypeError(f"{what} must be numeric, got dtype {dtype}; encode categories as numbers first")
        return
    skip = {c for c in named if isinstance(c, str)}
    bad = [str(c) for c, t in dtypes.items() if c not in skip and getattr(t, "kind", "O") not in "biuf"]
    if bad:
        raise TypeError(f"{what} has non-numeric column(s) {bad[:10]}; features must be numbers: encode "
                        "categories as numbers (e.g. categorize + codes) and convert numeric strings with "
                        "dask.dataframe.to_numeric")


def _checked_features(block, block_info=None):
    """A feature block, refused if it holds an infinite value (NaN is a missing value);
    checked by blocks of rows (``first_infinite``), its dtype (float32 included) kept."""
    inf = first_infinite(np.asarray(block)) if np.asarray(block).dtype.kind == "f" else None
    if inf is not None:
        r, c, count = inf
        first = block_info[0]["array-location"][0][0] if block_info else 0
        raise ValueError(
            f"X has {count} infinite value(s) (first at row {first + r}, column {c}: {block[r, c]}); "
            "gbrank takes NaN as a missing value but refuses inf: replace it by NaN (missing) or by a large "
            "finite value, e.g. X = da.where(da.isinf(X), np.nan, X)")
    return block


def _checked_labels(block, objective):
    if isinstance(objective, GRADIENT_OBJECTIVES):
        objective.check_labels(block)
    else:
        check_labels(np.asarray(block, dtype=np.float64), "exp")
    return block


def _persist_checked(client, train, evals, objective):
    """Persist the training and evaluation arrays (labels checked on the way); returns
    them and the addresses of the workers holding the training rows."""
    from distributed import wait

    sets = [train, *evals]
    arrays = []
    for s in sets:
        arrays += [s.X.map_blocks(_checked_features, dtype=s.X.dtype),
                   s.y.map_blocks(_checked_labels, objective, dtype=s.y.dtype), s.group, s.codes]
    arrays = client.persist(arrays)
    wait(arrays)
    out = [dataclasses.replace(s, X=arrays[4 * i], y=arrays[4 * i + 1], group=arrays[4 * i + 2],
                               codes=arrays[4 * i + 3]) for i, s in enumerate(sets)]
    for a in arrays:  # surface a worker's error (bad labels) here, with its message
        for f in client.futures_of(a):
            if f.status == "error":
                f.result()
    holders = set()
    for addrs in client.who_has(arrays[:4]).values():
        holders.update(addrs)
    return out[0], out[1:], holders


#: how long a failed training waits for the scheduler to report a lost worker before it
#: re-raises the library's own error
LOST_WORKER_GRACE_S = 5.0


def _run_watched(client, workers: set, timeout, train):
    """Run ``train`` (which blocks on the cluster) while watching the workers that hold the
    training rows: a lost worker or an exceeded ``timeout`` raises DaskTrainingError at
    once instead of leaving the caller waiting on peers that will never answer."""
    outcome = {}

    def target():
        try:
            outcome["value"] = train()
        except BaseException as exc:  # re-raised in the caller's thread
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="gbrank-dask-train", daemon=True)
    start = time.monotonic()
    thread.start()
    lost: set = set()
    while thread.is_alive():
        thread.join(0.25)
        if not thread.is_alive():
            break
        lost = _lost(client, workers)
        if lost:
            thread.join(2.0)  # let the library report first, if it will
            break
        if timeout is not None and time.monotonic() - start > timeout:
            raise DaskTrainingError(
                f"distributed training did not finish within timeout={timeout} s; the "
                "cluster may be overloaded or a worker stuck. Raise timeout, or check the "
                "workers (dashboard, logs) and restart them (client.restart())")
    if "error" in outcome and not lost and not isinstance(outcome["error"], (ValueError, TypeError)):
        # the surviving workers' library can fail on the broken connection ("Socket recv
        # error, Connection reset by peer") before the scheduler has noticed the lost worker:
        # give it a few seconds to, so that the error names the cause
        deadline = time.monotonic() + LOST_WORKER_GRACE_S
        while not lost and time.monotonic() < deadline:
            lost = _lost(client, workers)
            if not lost:
                time.sleep(0.25)
    if lost:
        raise DaskTrainingError(
            f"Dask worker(s) {sorted(lost)} left the cluster during distributed training "
            "(killed, out of memory or crashed); the boosting library cannot go on without "
            "the rows they held. Restart the lost workers or the cluster (client.restart()), "
            "check the workers' memory limit, and fit again") from outcome.get("error")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _lost(client, workers: set) -> set:
    """Watched workers the scheduler no longer lists (asked directly: ``client.nthreads``;
    ``scheduler_info`` returns a cache that a background refresh may leave without workers)."""
    try:
        alive = set(client.nthreads())
    except Exception:  # a slow or briefly unreachable scheduler is no proof of a lost worker
        return set()
    return set(workers) - alive
