"""``GBRanker``: one scikit-learn estimator for gbrank objectives and the built-in ones.

Everything that depends on the boosting library (parameter names, weights, training,
prediction, its own objectives) comes from its :class:`gbrank.backends.Backend` record.
"""

from __future__ import annotations

import inspect

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_array, check_is_fitted

from .._validation import as_1d_float, check_labels, contiguous_groups
from ..backends import BACKENDS, SETTINGS, get_backend
from ..evaluation import evaluate
from ..lambdas import LambdaObjective

# The libraries' own ranking objectives, runnable through the same estimator as baselines:
# "<library>:<its objective>" -> (library, objective).
BUILTIN_OBJECTIVES = {f"{b.name}:{o}": (b.name, o) for b in BACKENDS.values() for o in b.objectives}
# Scale-aware leaf constraint for gbrank's lambda-scale hessians (the libraries' defaults,
# LightGBM min_sum_hessian_in_leaf=1e-3 and XGBoost min_child_weight=1, are for pointwise losses).
DEFAULT_MIN_CHILD_WEIGHT = 1e-3


def resolve_objective(objective, backend: str):
    """(library objective name or gbrank LambdaObjective) for an estimator's ``objective``."""
    record = get_backend(backend)
    if isinstance(objective, str) and objective in BUILTIN_OBJECTIVES:
        lib, name = BUILTIN_OBJECTIVES[objective]
        if lib != backend:
            raise ValueError(f"objective {objective!r} is {BACKENDS[lib].label}'s own; use backend={lib!r} for it")
        return name
    if isinstance(objective, str) and ":" in objective:
        raise ValueError(f"unknown built-in objective {objective!r}; known: {sorted(BUILTIN_OBJECTIVES)}")
    if not isinstance(objective, (str, LambdaObjective)):
        raise TypeError(f"objective must be a name such as 'nrbp@0.95' or a LambdaObjective, got {objective!r}")
    if not record.gbrank_objectives:
        own = [f"{backend}:{o}" for o in record.objectives]
        able = sorted(b.name for b in BACKENDS.values() if b.gbrank_objectives)
        raise ValueError(f"{record.label} takes no gbrank objective such as {str(objective)!r}; use one of "
                         f"its own, {own}, or a backend that does: {able}")
    return objective if isinstance(objective, LambdaObjective) else LambdaObjective(objective)


class GBRanker(BaseEstimator):
    """Gradient-boosted ranker trained with a gbrank LambdaRank objective or a built-in one.

    Parameters
    ----------
    objective : str or LambdaObjective, default "ndcg"
        A gbrank objective name (``"ndcg"``, ``"ap"``, ``"rr"``, ``"nrbp@0.95"``,
        ``"ndcg@30"`` for truncation 30), a configured :class:`LambdaObjective`, or a
        library's own objective (``"lightgbm:lambdarank"``, ``"lightgbm:rank_xendcg"``,
        ``"xgboost:rank:ndcg"``, ``"xgboost:rank:map"``, ``"xgboost:rank:pairwise"``,
        ``"catboost:YetiRank"``, ``"catboost:LambdaMart:metric=NDCG"``, ...: every key of
        :data:`BUILTIN_OBJECTIVES`).
    backend : {"lightgbm", "xgboost", "catboost"}
        A key of :data:`gbrank.backends.BACKENDS`.  CatBoost trains only its own objectives.
    n_estimators, learning_rate, num_leaves, max_depth, subsample, colsample_bytree,
    reg_lambda : the usual tree-boosting settings, mapped to each library's names by its
        record (``Backend.params``).  A setting the library lacks (CatBoost's symmetric
        trees have no ``num_leaves``, ...) must stay at its default.
    min_child_weight : float, optional
        Minimum sum of hessians in a leaf.  None: 1e-3 for gbrank objectives (their
        hessians are lambda-scale, far below 1), the library default for built-ins.
    eval_metric : str or list of str, default "ndcg@10"
        gbrank evaluator metric(s) reported on ``eval_set``; the first drives early stopping.
    early_stopping_rounds : int, optional
    random_state : int, optional
    n_jobs : int, optional
        Threads of the booster (None: the library default).
    backend_params : dict, optional
        Extra library parameters, passed unchanged (they win over the above).
    verbose : bool or int

    Attributes
    ----------
    booster_ : the trained ``lightgbm.Booster``, ``xgboost.Booster`` or ``catboost.CatBoostRanker``
    best_iteration_ : int, number of boosting rounds used by ``predict``
    evals_result_ : dict, the metric history on each evaluation set
    objective_ : LambdaObjective or str, the resolved objective
    n_features_in_ : int

    Examples
    --------
    >>> from gbrank.datasets import make_letor
    >>> X, y, qid = make_letor(n_queries=30, random_state=0)
    >>> model = GBRanker("nrbp@0.95", n_estimators=20).fit(X, y, qid=qid)
    >>> model.predict(X).shape == y.shape
    True
    """

    # qid is routed to fit and score by scikit-learn's metadata routing without set_*_request
    __metadata_request__fit = {"qid": True}
    __metadata_request__score = {"qid": True}

    def __init__(self, objective="ndcg", backend="lightgbm", n_estimators=100, learning_rate=0.1,
                 num_leaves=31, max_depth=None, min_child_weight=None, subsample=1.0,
                 colsample_bytree=1.0, reg_lambda=0.0, eval_metric="ndcg@10",
                 early_stopping_rounds=None, random_state=None, n_jobs=None, backend_params=None,
                 verbose=False):
        self.objective = objective
        self.backend = backend
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.max_depth = max_depth
        self.min_child_weight = min_child_weight
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree
        self.reg_lambda = reg_lambda
        self.eval_metric = eval_metric
        self.early_stopping_rounds = early_stopping_rounds
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.backend_params = backend_params
        self.verbose = verbose

    # -- parameters ---------------------------------------------------------------------
    def _library_params(self, objective) -> dict:
        record = get_backend(self.backend)
        settings = {name: getattr(self, name) for name in SETTINGS}
        if settings["min_child_weight"] is None and not isinstance(objective, str):
            settings["min_child_weight"] = DEFAULT_MIN_CHILD_WEIGHT
        defaults = inspect.signature(GBRanker.__init__).parameters
        lacking = [n for n in SETTINGS if n not in record.params and settings[n] != defaults[n].default]
        if lacking:
            raise ValueError(f"{record.label} has no equivalent of {lacking}; leave them at their defaults "
                             f"(its settings: {sorted(record.params)}) or pass library parameters in backend_params")
        params = record.library_params(settings)
        params.update(self.backend_params or {})
        return params

    # -- data ---------------------------------------------------------------------------
    def _check_X(self, X, reset: bool):
        X = check_array(X, accept_sparse="csr", dtype=np.float64, ensure_all_finite="allow-nan")
        if reset:
            self.n_features_in_ = X.shape[1]
        elif X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but the model was fitted with {self.n_features_in_}")
        return X

    def _check_lists(self, X, y, qid, reset=False):
        X = self._check_X(X, reset)
        if qid is None:
            raise ValueError("ranking needs query ids: pass qid=... (one per row) to fit, score and eval_set")
        y = as_1d_float(y, "y")
        qid = np.asarray(qid)
        if not (X.shape[0] == len(y) == len(qid)):
            raise ValueError(f"X, y and qid must have one entry per row, got {X.shape[0]}, {len(y)} and {len(qid)}")
        check_labels(y, "linear")  # non-negative; fit checks what the objective needs
        ptr, _ = contiguous_groups(qid)
        return X, y, ptr

    # -- estimator API ------------------------------------------------------------------
    def fit(self, X, y, *, qid, sample_weight=None, eval_set=None):
        """Fit on rows X with labels y grouped by ``qid`` (each query's rows together).

        ``sample_weight``: one weight per row (constant within a query for XGBoost and
        CatBoost, whose ranking weights are per query: ``Backend.weights``).
        ``eval_set``: list of (X, y, qid) triples.
        """
        record = get_backend(self.backend)
        objective = resolve_objective(self.objective, self.backend)
        X, y, ptr = self._check_lists(X, y, qid, reset=True)
        if isinstance(objective, LambdaObjective):
            objective.check_labels(y)
        else:
            check_labels(y, "exp")
            if objective in record.binary_objectives and not np.isin(y, (0.0, 1.0)).all():
                raise ValueError(
                    f"{record.label}'s {objective} takes binary labels (0 or 1), but y has grades "
                    f"{sorted(set(np.unique(y)) - {0.0, 1.0})[:5]}; binarise them, e.g. y >= 1, "
                    "or use gbrank's 'ap' objective, which binarises at relevance_threshold")
        weight = None if sample_weight is None else self._weights(sample_weight, ptr, record)
        evals = []
        for item in eval_set or []:
            if len(item) != 3:
                raise ValueError("each eval_set entry must be a triple (X, y, qid)")
            evals.append(self._check_lists(*item))
        metric = record.metric(self.eval_metric)
        self.objective_ = objective
        self.booster_, self.best_iteration_, self.evals_result_ = record.train(
            self._library_params(objective), X, y, ptr, weight, evals, objective, metric,
            self.n_estimators, self.early_stopping_rounds, self.verbose,
        )
        return self

    def _weights(self, sample_weight, ptr, record):
        w = as_1d_float(sample_weight, "sample_weight")
        if len(w) != ptr[-1]:
            raise ValueError(f"sample_weight must have one entry per row ({ptr[-1]}), got {len(w)}")
        if (w < 0).any():
            raise ValueError("sample_weight must be non-negative")
        return record.library_weights(w, ptr)

    def predict(self, X):
        """Ranking scores (higher ranks first), from the best iteration."""
        check_is_fitted(self, "booster_")
        X = self._check_X(X, reset=False)
        return get_backend(self.backend).predict(self.booster_, X, self.best_iteration_)

    def score(self, X, y, qid, sample_weight=None):
        """Mean of the first ``eval_metric`` over the queries (gbrank.evaluate defaults:
        empty lists score 0, ties averaged)."""
        if sample_weight is not None:
            raise ValueError("score does not take sample_weight: ranking metrics are averaged over queries")
        metric = self.eval_metric if isinstance(self.eval_metric, str) else self.eval_metric[0]
        return float(evaluate(y, self.predict(X), qid, [metric]).mean().iloc[0])
