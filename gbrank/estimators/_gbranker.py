"""``GBRanker``: one scikit-learn estimator for gbrank objectives and the built-in ones."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_array, check_is_fitted

from .._validation import as_1d_float, check_choice, check_labels, contiguous_groups
from ..backends import LightGBMMetric, XGBoostMetric
from ..backends._lightgbm import predict_lightgbm, train_lightgbm
from ..backends._xgboost import predict_xgboost, train_xgboost
from ..evaluation import evaluate
from ..lambdas import LambdaObjective

BACKENDS = {
    "lightgbm": (train_lightgbm, predict_lightgbm, LightGBMMetric),
    "xgboost": (train_xgboost, predict_xgboost, XGBoostMetric),
}
# The libraries' own ranking objectives, runnable through the same estimator as baselines.
BUILTIN_OBJECTIVES = {
    "lightgbm:lambdarank": ("lightgbm", "lambdarank"),
    "lightgbm:rank_xendcg": ("lightgbm", "rank_xendcg"),
    "xgboost:rank:ndcg": ("xgboost", "rank:ndcg"),
    "xgboost:rank:map": ("xgboost", "rank:map"),
    "xgboost:rank:pairwise": ("xgboost", "rank:pairwise"),
}
# Scale-aware leaf constraint for gbrank's lambda-scale hessians (the libraries' defaults,
# LightGBM min_sum_hessian_in_leaf=1e-3 and XGBoost min_child_weight=1, are for pointwise losses).
DEFAULT_MIN_CHILD_WEIGHT = 1e-3


def resolve_objective(objective, backend: str):
    """(library objective name or gbrank LambdaObjective) for an estimator's ``objective``."""
    check_choice(backend, "backend", BACKENDS)
    if isinstance(objective, LambdaObjective):
        return objective
    if not isinstance(objective, str):
        raise TypeError(f"objective must be a name such as 'nrbp@0.95' or a LambdaObjective, got {objective!r}")
    if objective in BUILTIN_OBJECTIVES:
        lib, name = BUILTIN_OBJECTIVES[objective]
        if lib != backend:
            raise ValueError(f"objective {objective!r} is {lib}'s own; use backend={lib!r} for it")
        return name
    if ":" in objective:
        raise ValueError(f"unknown built-in objective {objective!r}; known: {sorted(BUILTIN_OBJECTIVES)}")
    return LambdaObjective(objective)


class GBRanker(BaseEstimator):
    """Gradient-boosted ranker trained with a gbrank LambdaRank objective or a built-in one.

    Parameters
    ----------
    objective : str or LambdaObjective, default "ndcg"
        A gbrank objective name (``"ndcg"``, ``"ap"``, ``"rr"``, ``"nrbp@0.95"``,
        ``"ndcg@30"`` for truncation 30), a configured :class:`LambdaObjective`, or a
        library's own objective (``"lightgbm:lambdarank"``, ``"lightgbm:rank_xendcg"``,
        ``"xgboost:rank:ndcg"``, ``"xgboost:rank:map"``, ``"xgboost:rank:pairwise"``).
    backend : {"lightgbm", "xgboost"}
    n_estimators, learning_rate, num_leaves, max_depth, subsample, colsample_bytree,
    reg_lambda : the usual tree-boosting settings, mapped to each library's names.
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
    booster_ : the trained ``lightgbm.Booster`` or ``xgboost.Booster``
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
        mcw = self.min_child_weight
        if mcw is None and not isinstance(objective, str):
            mcw = DEFAULT_MIN_CHILD_WEIGHT
        if self.backend == "lightgbm":
            params = {
                "learning_rate": self.learning_rate, "num_leaves": self.num_leaves,
                "max_depth": -1 if self.max_depth is None else self.max_depth,
                "bagging_fraction": self.subsample, "bagging_freq": 1 if self.subsample < 1 else 0,
                "feature_fraction": self.colsample_bytree, "lambda_l2": self.reg_lambda,
            }
            if mcw is not None:
                params["min_sum_hessian_in_leaf"] = mcw
            if self.random_state is not None:
                params["seed"] = self.random_state
            if self.n_jobs is not None:
                params["num_threads"] = self.n_jobs
        else:
            params = {
                "eta": self.learning_rate, "max_leaves": self.num_leaves,
                "max_depth": 0 if self.max_depth is None else self.max_depth,
                "grow_policy": "lossguide", "tree_method": "hist", "subsample": self.subsample,
                "colsample_bytree": self.colsample_bytree, "lambda": self.reg_lambda,
                "base_score": 0.0,
            }
            if mcw is not None:
                params["min_child_weight"] = mcw
            if self.random_state is not None:
                params["seed"] = self.random_state
            if self.n_jobs is not None:
                params["nthread"] = self.n_jobs
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

        ``sample_weight``: one weight per row (constant within a query for XGBoost, whose
        ranking weights are per query).  ``eval_set``: list of (X, y, qid) triples.
        """
        check_choice(self.backend, "backend", BACKENDS)
        objective = resolve_objective(self.objective, self.backend)
        X, y, ptr = self._check_lists(X, y, qid, reset=True)
        if isinstance(objective, LambdaObjective):
            objective.check_labels(y)
        else:
            check_labels(y, "exp")
            if objective == "rank:map" and not np.isin(y, (0.0, 1.0)).all():
                raise ValueError(
                    "XGBoost's rank:map takes binary labels (0 or 1), but y has grades "
                    f"{sorted(set(np.unique(y)) - {0.0, 1.0})[:5]}; binarise them, e.g. y >= 1, "
                    "or use gbrank's 'ap' objective, which binarises at relevance_threshold")
        weight = None if sample_weight is None else self._weights(sample_weight, ptr)
        evals = []
        for item in eval_set or []:
            if len(item) != 3:
                raise ValueError("each eval_set entry must be a triple (X, y, qid)")
            evals.append(self._check_lists(*item))
        train, _, metric_cls = BACKENDS[self.backend]
        metric = metric_cls(self.eval_metric)
        self.objective_ = objective
        self.booster_, self.best_iteration_, self.evals_result_ = train(
            self._library_params(objective), X, y, ptr, weight, evals, objective, metric,
            self.n_estimators, self.early_stopping_rounds, self.verbose,
        )
        return self

    def _weights(self, sample_weight, ptr):
        w = as_1d_float(sample_weight, "sample_weight")
        if len(w) != ptr[-1]:
            raise ValueError(f"sample_weight must have one entry per row ({ptr[-1]}), got {len(w)}")
        if (w < 0).any():
            raise ValueError("sample_weight must be non-negative")
        if self.backend == "lightgbm":
            return w
        first = w[ptr[:-1]]
        if not np.array_equal(np.repeat(first, np.diff(ptr)), w):
            raise ValueError("XGBoost's ranking weights are per query: sample_weight must be "
                             "constant within each query")
        return first

    def predict(self, X):
        """Ranking scores (higher ranks first), from the best iteration."""
        check_is_fitted(self, "booster_")
        X = self._check_X(X, reset=False)
        return BACKENDS[self.backend][1](self.booster_, X, self.best_iteration_)

    def score(self, X, y, qid, sample_weight=None):
        """Mean of the first ``eval_metric`` over the queries (gbrank.evaluate defaults:
        empty lists score 0, ties averaged)."""
        if sample_weight is not None:
            raise ValueError("score does not take sample_weight: ranking metrics are averaged over queries")
        metric = self.eval_metric if isinstance(self.eval_metric, str) else self.eval_metric[0]
        return float(evaluate(y, self.predict(X), qid, [metric]).mean().iloc[0])
