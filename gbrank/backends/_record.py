"""``Backend``: everything gbrank knows about one boosting library, in one record.

The estimator and the benchmarks read these records instead of branching on library names:
a new library is one module (its train, predict and metric adapter, and its record) plus
one entry in :data:`gbrank.backends.BACKENDS`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping

import numpy as np

#: The tree-boosting settings of gbrank's estimators, in their order; a record maps them
#: to its library's parameter names.
SETTINGS = ("learning_rate", "num_leaves", "max_depth", "min_child_weight", "subsample",
            "colsample_bytree", "reg_lambda", "random_state", "n_jobs")
#: How a library takes ranking weights (``Backend.weights``).
WEIGHT_RULES = ("row", "query", "query-as-rows")


@dataclasses.dataclass(frozen=True)
class Backend:
    """One boosting library as gbrank uses it.

    Attributes
    ----------
    name : str
        Registry key and the library's import name (``"lightgbm"``).
    label : str
        The library's name in messages (``"LightGBM"``).
    extra : str
        The pip extra that installs it: ``pip install 'gbrank[<extra>]'``.
    train : callable
        ``train(params, X, y, ptr, weight, eval_sets, objective, metric, n_estimators,
        early_stopping_rounds, verbose) -> (model, best_iteration, history)``.  ``ptr``:
        query boundaries; ``weight``: what :meth:`library_weights` returned, or None;
        ``eval_sets``: list of (X, y, ptr); ``objective``: a gbrank objective or the name
        of one of :attr:`objectives`; ``metric``: an instance of :attr:`metric`, whose
        first metric early stopping watches on the last evaluation set; ``history``:
        ``{"valid_<i>": {metric name: [value per round]}}``.  Imports the library.
    predict : callable
        ``predict(model, X, best_iteration) -> scores`` (higher ranks first).
    metric : type
        The adapter of gbrank metrics to the library's custom-metric hook (a
        :class:`MetricCallback` subclass, built from metric names).
    params : mapping
        Estimator setting (one of :data:`SETTINGS`) -> the library's parameter name.  A
        setting missing here has no equivalent in the library.
    unset : mapping
        The library value of a setting left at None (``max_depth``: -1 for LightGBM);
        other settings left at None are not passed.
    fixed : mapping
        Parameters always passed (XGBoost: ``tree_method="hist"``, ...).
    derived : callable or None
        ``derived(settings) -> dict`` of parameters computed from the settings
        (LightGBM's ``bagging_freq``: 1 when ``subsample < 1``).
    weights : {"row", "query", "query-as-rows"}
        ``"row"``: any weight per row; ``"query"``: one weight per query, passed as one per
        query; ``"query-as-rows"``: one weight per query, passed as one per row.
    objectives : tuple of str
        The library's own ranking objectives (names as the library spells them).
    binary_objectives : frozenset of str
        Those of :attr:`objectives` that refuse graded labels.
    gbrank_objectives : bool
        Whether the library trains with gbrank's objectives (a gradient callback that
        receives the query groups).
    tree_size : str
        The setting that bounds a tree's size (``"num_leaves"`` for leaf-wise growth,
        ``"max_depth"`` for CatBoost's symmetric trees).
    importance : callable or None
        ``importance(model, n_features, best_iteration) -> array`` of one non-negative
        importance per feature (the total gain of its splits where the library has it).
    categorical : bool
        Whether pandas ``category`` columns are passed to the library as categorical
        features (LightGBM: detected from the dtype; XGBoost: ``enable_categorical=True``).
    """

    name: str
    label: str
    extra: str
    train: Callable
    predict: Callable
    metric: type
    params: Mapping[str, str]
    unset: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    fixed: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    derived: Callable[[Mapping[str, Any]], dict] | None = None
    weights: str = "row"
    objectives: tuple = ()
    binary_objectives: frozenset = frozenset()
    gbrank_objectives: bool = True
    tree_size: str = "num_leaves"
    importance: Callable | None = None
    categorical: bool = False

    def __post_init__(self):
        unknown = sorted(set(self.params) - set(SETTINGS))
        if unknown:
            raise ValueError(f"{self.name}: params maps unknown settings {unknown}; settings: {list(SETTINGS)}")
        if self.weights not in WEIGHT_RULES:
            raise ValueError(f"{self.name}: weights must be one of {list(WEIGHT_RULES)}, got {self.weights!r}")
        if self.tree_size not in self.params:
            raise ValueError(f"{self.name}: tree_size {self.tree_size!r} is not one of its params")

    def library_params(self, settings: Mapping[str, Any]) -> dict:
        """The library's parameters for estimator ``settings`` (setting name -> value).

        Settings without a library name are left out (the estimator decides whether that
        is allowed); None means "library default" unless :attr:`unset` says otherwise.

        >>> from gbrank.backends import BACKENDS
        >>> BACKENDS["xgboost"].library_params({"learning_rate": 0.1, "max_depth": None})
        {'eta': 0.1, 'max_depth': 0, 'grow_policy': 'lossguide', 'tree_method': 'hist', 'base_score': 0.0}
        """
        params = {}
        for setting, value in settings.items():
            name = self.params.get(setting)
            if name is None:
                continue
            if value is None:
                if setting not in self.unset:
                    continue
                value = self.unset[setting]
            params[name] = value
        params.update(self.fixed)
        if self.derived is not None:
            params.update(self.derived(settings))
        return params

    def library_weights(self, weight: np.ndarray, ptr: np.ndarray) -> np.ndarray:
        """The library's ranking weights from one non-negative weight per row; raises
        ``ValueError`` when the library weighs queries and ``weight`` varies within one."""
        if self.weights == "row":
            return weight
        first = weight[ptr[:-1]]
        if not np.array_equal(np.repeat(first, np.diff(ptr)), weight):
            raise ValueError(f"{self.label}'s ranking weights are per query: sample_weight must be "
                             "constant within each query")
        return first if self.weights == "query" else weight
