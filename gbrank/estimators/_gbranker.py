"""``GBRanker``: one scikit-learn estimator for gbrank objectives and the built-in ones.

Everything that depends on the boosting library (parameter names, weights, training,
prediction, its own objectives) comes from its :class:`gbrank.backends.Backend` record.
"""

from __future__ import annotations

import inspect
import sys

import numpy as np
import sklearn
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_array, check_is_fitted

from .._validation import (as_1d_float, check_feature_matrix, check_labels, check_query_ids, contiguous_groups,
                           no_usable_features, store_init_params)
from ..backends import BACKENDS, SETTINGS, get_backend, ptr_from_sizes
from ..evaluation import evaluate
from ..metrics import parse_metric
from ..lambdas import GRADIENT_OBJECTIVES, LambdaObjective, ListwiseObjective, is_listwise_name

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
    if not isinstance(objective, (str, *GRADIENT_OBJECTIVES)):
        raise TypeError(f"objective must be a name such as 'nrbp@0.95' or 'listwise_ndcg', a LambdaObjective or a "
                        f"ListwiseObjective, got {objective!r}")
    if not record.gbrank_objectives:
        own = [f"{backend}:{o}" for o in record.objectives]
        able = sorted(b.name for b in BACKENDS.values() if b.gbrank_objectives)
        raise ValueError(f"{record.label} takes no gbrank objective such as {str(objective)!r}; use one of "
                         f"its own, {own}, or a backend that does: {able}")
    if isinstance(objective, GRADIENT_OBJECTIVES):
        return objective
    return ListwiseObjective(objective) if is_listwise_name(objective) else LambdaObjective(objective)


#: Settings ``check_settings`` validates (the estimator's and DaskGBRanker's).
_CHECKED_SETTINGS = ("n_estimators", "learning_rate", "num_leaves", "max_depth", "min_child_weight", "subsample",
                     "colsample_bytree", "reg_lambda", "early_stopping_rounds", "random_state", "backend_params",
                     "verbose")


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_real(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_)) \
        and bool(np.isfinite(v))


def check_settings(values: dict) -> None:
    """Out-of-range tree-boosting settings raise ``ValueError`` (``TypeError`` for a wrong
    kind) naming the setting, the value and the accepted range; ``values``: name -> value."""
    def bad(name, rule, kind=ValueError):
        raise kind(f"{name} must be {rule}, got {values[name]!r}")

    v = values.get
    if "n_estimators" in values and not (_is_int(v("n_estimators")) and v("n_estimators") >= 1):
        bad("n_estimators", "a positive integer (boosting rounds; 0 rounds would give a model without trees)")
    if "learning_rate" in values and not (_is_real(v("learning_rate")) and v("learning_rate") > 0):
        bad("learning_rate", "a positive finite number, e.g. 0.1 (the shrinkage of each tree)")
    if "num_leaves" in values and not (_is_int(v("num_leaves")) and v("num_leaves") >= 2):
        bad("num_leaves", "an integer of at least 2 (leaves per tree)")
    if v("max_depth") is not None and not (_is_int(v("max_depth")) and v("max_depth") >= 1):
        bad("max_depth", "None (no limit) or a positive integer")
    if v("min_child_weight") is not None and not (_is_real(v("min_child_weight")) and v("min_child_weight") >= 0):
        bad("min_child_weight", "None (the default) or a non-negative finite number")
    for name in ("subsample", "colsample_bytree"):
        if name in values and not (_is_real(v(name)) and 0 < v(name) <= 1):
            bad(name, "a fraction in (0, 1] (1: use every row/column)")
    if "reg_lambda" in values and not (_is_real(v("reg_lambda")) and v("reg_lambda") >= 0):
        bad("reg_lambda", "a non-negative finite number (L2 penalty on leaf values)")
    es = v("early_stopping_rounds")
    if es is not None and not (_is_int(es) and es >= 1):
        bad("early_stopping_rounds", "None or a positive integer (rounds without improvement)")
    if v("random_state") is not None and not (_is_int(v("random_state")) and v("random_state") >= 0):
        bad("random_state", "None or a non-negative integer seed", TypeError if not _is_int(v("random_state"))
            else ValueError)
    bp = v("backend_params")
    if bp is not None and not (isinstance(bp, dict) and all(isinstance(k, str) for k in bp)):
        bad("backend_params", "None or a dict of library parameter names to values", TypeError)
    verbose = v("verbose", False)
    if not (isinstance(verbose, (bool, np.bool_)) or (_is_int(verbose) and verbose >= 0)):
        bad("verbose", "a bool or a non-negative integer (log every that many rounds)")


def check_metric_names(names) -> None:
    """``eval_metric`` names (one or a list) parse as gbrank metrics; raises otherwise (as the
    metric callbacks do when an eval_set is watched)."""
    if not isinstance(names, str) and not hasattr(names, "__iter__"):
        raise TypeError(f"eval_metric must be a metric name or a list of them, e.g. ['ndcg@10'], got {names!r:.40}")
    names = [names] if isinstance(names, str) else list(names)
    if not names:
        raise ValueError("eval_metric is empty: give at least one metric, e.g. ['ndcg@10']")
    for name in names:
        parse_metric(name)


def check_trainable(X, y, ptr) -> None:
    """Refuse, before training, data from which no ranking model can be learnt: no feature a
    tree can split on, or no query with two rows of different labels."""
    categorical = _categorical_columns(X)
    if categorical:  # a DataFrame: a categorical column with two values present is usable
        if any(X[c].nunique() > 1 for c in categorical):
            X = None
        else:
            X = X.drop(columns=categorical).to_numpy(dtype=np.float64) if len(categorical) < X.shape[1] else None
            if X is None:
                raise ValueError(f"X has no feature a tree can split on: every column is categorical with a "
                                 f"single value ({categorical[:5]})")
    if X is not None and not hasattr(X, "nnz"):
        unusable = no_usable_features(X)
        if len(unusable) == X.shape[1]:
            nan = [j for j in unusable if np.isnan(X[:, j]).all()]
            raise ValueError(
                f"X has no feature a tree can split on: every column is all NaN ({len(nan)} column(s), "
                f"e.g. {nan[:5]}) or constant ({X.shape[1] - len(nan)}); NaN is a missing value, so an all-NaN "
                "column carries nothing. Check the feature extraction (or the column selection) of X")
    sizes = np.diff(ptr)
    if sizes.max() < 2:
        raise ValueError(f"every query of qid has a single row ({len(sizes)} queries): a ranking objective "
                         "orders the rows within a query, so there is nothing to learn; check that qid holds "
                         "query ids (one per row, shared by the rows of a query), not row ids")
    starts = ptr[:-1]
    if not (np.maximum.reduceat(y, starts) > np.minimum.reduceat(y, starts)).any():
        raise ValueError(f"no query has two rows with different labels ({len(sizes)} queries): the ranking "
                         "gradients are all zero and the model would be constant; check y (all one grade?) and qid")


#: The fix for a search or cross-validation that calls ``score`` without ``qid``.
ROUTING_HELP = ("turn on scikit-learn's metadata routing, which hands each fold's qid to fit and score: "
                "sklearn.set_config(enable_metadata_routing=True), then "
                "GridSearchCV(GBRanker(...), param_grid, cv=GroupKFold(n_splits=3)).fit(X, y, qid=qid, groups=qid) "
                "(or pass scoring=gbrank.estimators.make_ranking_scorer('ndcg@10'))")


def in_search_without_routing() -> bool:
    """True inside scikit-learn's cross-validation loop (``GridSearchCV``,
    ``cross_validate``, ...) while metadata routing is off: ``score`` will then be called
    without ``qid``, and the error it raises would be turned into a NaN score."""
    if sklearn.get_config().get("enable_metadata_routing", False):
        return False
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "_fit_and_score" and \
                frame.f_globals.get("__name__", "").startswith("sklearn.model_selection"):
            return True
        frame = frame.f_back
    return False


def _categorical_columns(X) -> list:
    """The pandas ``category`` columns of a DataFrame (none for anything else)."""
    if not (hasattr(X, "columns") and hasattr(X, "dtypes")):
        return []
    return [c for c, dtype in zip(X.columns, X.dtypes) if getattr(dtype, "name", "") == "category"]


def explain_library_error(err: Exception, label: str, n_rows: int):
    """A clear exception for a boosting library's internal failure that gbrank cannot check
    before training, or None."""
    text = str(err)
    if "num_features()) > (0)" in text:
        return ValueError(
            f"{label} found no feature it can split on in the {n_rows} training rows: with its default "
            "min_data_in_leaf=20 a split needs at least 40 rows with distinct feature values. Give more rows, "
            "or pass backend_params={'min_data_in_leaf': 1, 'min_data_in_bin': 1} for tiny data")
    return None


class GBRanker(BaseEstimator):
    """Gradient-boosted ranker trained with a gbrank LambdaRank objective or a built-in one.

    Parameters
    ----------
    objective : str or LambdaObjective, default "ndcg"
        A gbrank objective name (``"ndcg"``, ``"ap"``, ``"rr"``, ``"nrbp@0.95"``,
        ``"ndcg@30"`` for truncation 30), a configured :class:`LambdaObjective`, a smoothed
        listwise loss (``"listwise_ndcg"``, ``"listwise_nrbp@0.9+minmax"``, ``"approx_ndcg"``,
        ``"softmax"``, ``"listnet"``, ``"listmle"``, ``"neural_ndcg"``: a
        :class:`gbrank.lambdas.ListwiseObjective`, or one configured), or a
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

    Notes
    -----
    **Missing values.**  NaN in ``X`` is a missing value, by the libraries' own rule:
    LightGBM and XGBoost learn, at every split, which side the rows with a missing value
    go to; CatBoost (``nan_mode="Min"``) treats NaN as smaller than every value.  NaN is
    accepted in ``fit``, ``eval_set`` and ``predict``; a column that is all NaN is never
    split on.  Infinite values are refused (replace them by NaN or a large finite value).

    **Bad input** raises before training, naming the argument, the rows and the fix
    (docs/bad-inputs-models.md lists every case): settings out of range (``n_estimators
    < 1``, ``learning_rate <= 0``, ``num_leaves < 2``, ``subsample`` or
    ``colsample_bytree`` outside (0, 1], ``early_stopping_rounds`` without ``eval_set``,
    ...); a non-numeric column; a missing (NaN, None) or mixed-kind query id; rows of a
    query that are not adjacent; data with nothing to learn, the same on every backend
    (no feature a tree can split on, every query a single row, or no query with two
    different labels).

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
        store_init_params(self, locals())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True  # scipy sparse X: implicit zeros, as LightGBM and XGBoost take it
        tags.input_tags.allow_nan = True  # NaN is a missing value
        record = BACKENDS.get(self.backend)
        tags.input_tags.categorical = bool(record is not None and record.categorical)
        tags.target_tags.required = True
        return tags

    @property
    def feature_importances_(self) -> np.ndarray:
        """Importance of each feature, normalised to sum to 1 (all zeros when no tree split).

        LightGBM and XGBoost: the total gain of the feature's splits in the trees that
        ``predict`` uses (the first ``best_iteration_``); CatBoost: its
        ``PredictionValuesChange`` importances (it keeps no gain totals)."""
        check_is_fitted(self, "booster_")
        raw = get_backend(self.backend).importance(self.booster_, self.n_features_in_, self.best_iteration_)
        total = raw.sum()
        return raw / total if total > 0 else np.zeros_like(raw)

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

    def _check_settings(self, has_eval_set: bool) -> None:
        """Refuse out-of-range settings before any data is touched (the libraries' own
        checks come late, or never: XGBoost trains 0 rounds, CatBoost takes a negative rate)."""
        check_settings({name: getattr(self, name) for name in _CHECKED_SETTINGS})
        if self.early_stopping_rounds is not None and not has_eval_set:
            raise ValueError(f"early_stopping_rounds needs an eval_set to watch (got early_stopping_rounds="
                             f"{self.early_stopping_rounds}): pass eval_set=[(X_valid, y_valid, qid_valid)] to fit, "
                             "or leave early_stopping_rounds=None")

    # -- data ---------------------------------------------------------------------------
    def _check_X(self, X, reset: bool, name: str = "X"):
        self._check_feature_names(X, reset, name)
        categorical = _categorical_columns(X)
        if categorical:
            X = self._check_categorical(X, categorical, name)
        elif hasattr(X, "tocsr") and hasattr(X, "nnz"):  # a scipy sparse matrix: implicit zeros, NaN kept
            X = check_array(X, accept_sparse="csr", dtype=[np.float64, np.float32], ensure_all_finite="allow-nan")
            if np.isinf(X.data).any():
                raise ValueError(f"{name} has infinite values; gbrank takes NaN as a missing value but refuses "
                                 "inf: replace them by NaN or by a large finite value")
        else:
            X = check_feature_matrix(X, name)
        if reset:
            self.n_features_in_ = X.shape[1]
            self.categorical_features_ = list(categorical)
        elif categorical != getattr(self, "categorical_features_", []):
            raise ValueError(f"{name} has categorical columns {categorical}, but the model was fitted with "
                             f"{getattr(self, 'categorical_features_', [])}; pass the same column types as in fit")
        elif X.shape[1] != self.n_features_in_:
            raise ValueError(f"{name} has {X.shape[1]} features, but the model was fitted with {self.n_features_in_}; "
                             "pass the same feature columns, in the same order, as in fit")
        return X

    def _check_feature_names(self, X, reset: bool, name: str) -> None:
        """``feature_names_in_`` from a DataFrame's string column names; the same names, in
        the same order, are required later."""
        names = None
        if hasattr(X, "columns") and hasattr(X, "dtypes") and all(isinstance(c, str) for c in X.columns):
            names = np.asarray(list(X.columns), dtype=object)
        if reset:
            if names is not None:
                self.feature_names_in_ = names
            elif hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
        elif names is not None and hasattr(self, "feature_names_in_") and \
                not np.array_equal(names, self.feature_names_in_):
            raise ValueError(f"{name}'s columns {list(names)[:8]} differ from those seen in fit "
                             f"{list(self.feature_names_in_)[:8]}; pass the same columns, in the same order")

    def _check_categorical(self, X, categorical: list, name: str):
        """A DataFrame with pandas ``category`` columns, kept as a DataFrame for the library
        (its numeric columns validated and made float64)."""
        record = get_backend(self.backend)
        if not record.categorical:
            able = sorted(b.name for b in BACKENDS.values() if b.categorical)
            raise ValueError(f"{name} has categorical columns {categorical[:5]}, which {record.label} does not take "
                             f"through GBRanker; use a backend that does ({able}) or encode them as numbers")
        import pandas as pd

        numeric = [c for c in X.columns if c not in categorical]
        values = check_feature_matrix(X[numeric], name) if numeric else None
        if len(X) == 0:
            raise ValueError(f"{name} is empty (shape {X.shape}): give at least one row and one feature")
        columns = {c: (X[c] if c in categorical else values[:, numeric.index(c)]) for c in X.columns}
        return pd.DataFrame(columns, index=X.index)[list(X.columns)]

    def _check_lists(self, X, y, qid, reset=False, name=""):
        X = self._check_X(X, reset, f"{name}X")
        if qid is None:
            raise ValueError("ranking needs query ids: pass qid=... (one per row) to fit, score and eval_set, "
                             "or group=... (rows per query) to fit")
        y = as_1d_float(y, f"{name}y")
        qid = check_query_ids(qid, f"{name}qid")
        if not (X.shape[0] == len(y) == len(qid)):
            raise ValueError(f"{name}X, y and qid must have one entry per row, got {X.shape[0]}, {len(y)} and "
                             f"{len(qid)}")
        check_labels(y, "linear", name=f"{name}y")  # non-negative; fit checks what the objective needs
        ptr, _ = contiguous_groups(qid)
        return X, y, ptr

    # -- estimator API ------------------------------------------------------------------
    def fit(self, X, y, *, qid=None, group=None, sample_weight=None, eval_set=None):
        """Fit on rows X with labels y grouped by ``qid`` (each query's rows together).

        ``qid``: one query id per row.  ``group``: instead of ``qid``, the number of rows
        of each query in order (LightGBM's convention; give exactly one of the two).
        Prefer ``qid`` under cross-validation: scikit-learn slices per-row metadata but
        not group sizes.
        ``sample_weight``: one weight per row (constant within a query for XGBoost and
        CatBoost, whose ranking weights are per query: ``Backend.weights``).
        ``eval_set``: list of (X, y, qid) triples.

        Memory: X goes to the library as it is given when it is float32 or float64 (float32
        stays float32; other numbers become float64), C- or Fortran-ordered, and its rows
        are not reordered: rows grouped by query, the common case (LETOR files are), are
        trained on in place, and interleaved query ids are refused with the fix rather than
        sorted into a copy.  The inf check runs by blocks of rows.  At MSLR-WEB30K size see
        docs/speed.md, "Full-size LETOR".
        """
        if in_search_without_routing():
            raise ValueError("GBRanker is being cross-validated without metadata routing, so score would get "
                             "no qid and every score would be NaN; " + ROUTING_HELP)
        if y is None:
            raise ValueError("GBRanker requires y to be passed, but the target y is None: give the relevance "
                             "label of every row")
        qid = self._qid_from_group(qid, group, X)
        record = get_backend(self.backend)
        objective = resolve_objective(self.objective, self.backend)
        if eval_set is not None and not isinstance(eval_set, (list, tuple)):
            raise TypeError(f"eval_set must be a list of (X, y, qid) triples, got {type(eval_set).__name__}")
        self._check_settings(bool(eval_set))
        if eval_set:
            metric = record.metric(self.eval_metric)
        else:  # nothing to watch: the names are checked, the evaluator (and its first compilation) is left to score
            metric = None
            check_metric_names(self.eval_metric)
        X, y, ptr = self._check_lists(X, y, qid, reset=True)
        check_trainable(X, y, ptr)
        if isinstance(objective, GRADIENT_OBJECTIVES):
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
        for i, item in enumerate(eval_set or []):
            if not isinstance(item, (list, tuple)) or len(item) != 3:
                raise ValueError(f"eval_set[{i}] must be a triple (X, y, qid), got {type(item).__name__}"
                                 + (f" of length {len(item)}" if isinstance(item, (list, tuple)) else ""))
            evals.append(self._check_lists(*item, name=f"eval_set[{i}] "))
        params = self._library_params(objective)
        self.objective_ = objective
        try:
            self.booster_, self.best_iteration_, self.evals_result_ = record.train(
                params, X, y, ptr, weight, evals, objective, metric,
                self.n_estimators, self.early_stopping_rounds, self.verbose,
            )
        except Exception as err:
            explained = explain_library_error(err, record.label, X.shape[0])
            if explained is None:
                raise
            raise explained from err
        return self

    @staticmethod
    def _qid_from_group(qid, group, X):
        """``qid`` as given, or one id per row built from the group sizes ``group``."""
        if group is None:
            return qid
        if qid is not None:
            raise ValueError("give either qid (one query id per row) or group (rows per query), not both")
        ptr = ptr_from_sizes(group)
        n_rows = X.shape[0] if hasattr(X, "shape") else len(X)
        if ptr[-1] != n_rows:
            raise ValueError(f"group sizes must add up to the number of rows of X ({n_rows}), got {ptr[-1]} "
                             f"over {len(ptr) - 1} queries; group holds the number of rows of each query, in order")
        return np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))

    def _weights(self, sample_weight, ptr, record):
        w = as_1d_float(sample_weight, "sample_weight")
        if len(w) != ptr[-1]:
            raise ValueError(f"sample_weight must have one entry per row ({ptr[-1]}), got {len(w)}")
        if (w < 0).any():
            rows = np.flatnonzero(w < 0)
            raise ValueError(f"sample_weight must be non-negative, found {w[rows[0]]:g} at row(s) {rows[:5].tolist()}; "
                             "use 0 to leave a row out")
        if not (w > 0).any():
            raise ValueError("sample_weight is 0 on every row: nothing would be learnt; give some rows a positive "
                             "weight (or pass sample_weight=None for equal weights)")
        return record.library_weights(w, ptr)

    def predict(self, X):
        """Ranking scores (higher ranks first), from the best iteration."""
        check_is_fitted(self, "booster_")
        X = self._check_X(X, reset=False)
        return get_backend(self.backend).predict(self.booster_, X, self.best_iteration_)

    def score(self, X, y, qid=None, sample_weight=None):
        """Mean of the first ``eval_metric`` over the queries (gbrank.evaluate defaults:
        empty lists score 0, ties averaged).

        Without ``qid`` (as scikit-learn's searches call it when metadata routing is off)
        it raises ``ValueError`` naming the fix (:data:`ROUTING_HELP`)."""
        if sample_weight is not None:
            raise ValueError("score does not take sample_weight: ranking metrics are averaged over queries")
        check_is_fitted(self, "booster_")
        if qid is None:
            raise ValueError("score needs the query ids: pass qid=... (one per row); in a scikit-learn search or "
                             "cross-validation, " + ROUTING_HELP)
        check_query_ids(qid)
        metric = self.eval_metric if isinstance(self.eval_metric, str) else self.eval_metric[0]
        return float(evaluate(y, self.predict(X), qid, [metric]).mean().iloc[0])
