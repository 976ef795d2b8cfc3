"""``LambdaObjective``: LambdaRank gradients whose pair weights are metric swap deltas."""

from __future__ import annotations

import numpy as np

from .._validation import as_1d_float, check_bool, check_choice, check_group_ptr, check_labels, check_number
from ..metrics import GAINS, METRICS, check_bounding, merge_param, parse, with_delta
from ._deltas import delta_codes
from ._kernels import BOUND_DIST, BOUND_LINEAR, BOUND_NONE, HESS_LIGHTGBM, HESS_XGBOOST, all_gradients
from ._pairweights import PAIR_METHODS, WEIGHTINGS, weighted_gradients

HESSIANS = {"lightgbm": HESS_LIGHTGBM, "xgboost": HESS_XGBOOST}
LIGHTGBM_EPS = float(np.float32(0.01))  # LightGBM adds the float literal 0.01f
DEFAULT_MU = 10.0  # NDCG-Loss2++'s weight of delta_ij (allRank's default; tune it)
#: XGBoost's built-in LambdaRank objectives: gbrank family -> XGBoost's objective name
XGBOOST_BUILTINS = {"ndcg": "rank:ndcg", "ap": "rank:map"}
#: the pair weightings written for one metric's gains and discounts (Wang et al. 2018): weighting -> family
WEIGHTING_METRIC = {"ndcg_loss2": "ndcg", "ndcg_loss2++": "ndcg"}


def _check_xgboost_builtin(metric) -> None:
    if metric not in XGBOOST_BUILTINS:
        raise ValueError(f"XGBoost's built-in lambda objectives are {' and '.join(map(repr, XGBOOST_BUILTINS))}, "
                         f"got {metric!r}")


def parse_objective_metric(metric: str, p=None, truncation=None, bounding=None):
    """Split an objective name such as ``"nrbp@0.95"``, ``"ndcg@30"`` or ``"ap+minmax"``
    into (metric, p, truncation, bounding), merging the keyword arguments.

    The parser is ``gbrank.metrics.parse`` over the families that have a swap delta: after
    ``@`` the persistence p for p-families (nRBP), the truncation level for the others; a
    value given both in the name and as an argument must agree.  Raises ``ValueError`` for
    unknown names or parameters (the message lists the objective metrics).
    """
    spec = parse(metric, families=with_delta(), bounding=True, role="objective metric", required=False)
    spec = merge_param(spec, p=p, truncation=truncation)
    if bounding is not None:
        bounding = check_bounding(bounding)
        if spec.bounding is not None and spec.bounding != bounding:
            raise ValueError(f"bounding is given twice and differs: '+{spec.bounding}' and bounding={bounding!r}")
    trunc = spec.k or (int(truncation) if truncation is not None else None)
    return spec.name, (spec.p or None), trunc, spec.bounding or bounding


class ObjectiveBase:
    """Base of the objectives: equal when of one class with equal ``get_params()`` (so a
    configured objective is a value, as scikit-learn's ``clone`` expects), hashed by them;
    the input checks every ``gradients`` call starts with; and the delegations that let an
    objective be passed straight to a boosting library (the conventions are gbrank.backends')."""

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and self.get_params() == other.get_params()

    def __hash__(self):
        return hash(tuple(self.get_params().items()))

    def check_labels(self, labels) -> np.ndarray:
        """Validated float64 labels (non-negative; integers up to 30 with exp gain)."""
        y = as_1d_float(labels, "labels")
        check_labels(y, self.gain)
        return y

    def _checked_lists(self, scores, labels, group_ptr):
        """``(scores, labels, group_ptr)`` of a ``gradients`` call as float64 arrays and checked
        boundaries; raises on no rows, labels the objective refuses, or lengths that differ."""
        s = as_1d_float(scores, "scores")
        if len(s) == 0:
            raise ValueError("scores is empty: no rows were given; gradients need at least one query of "
                             "one row (an empty training set has nothing to rank)")
        y = self.check_labels(labels)
        if len(s) != len(y):
            raise ValueError(f"scores and labels must have one entry per row, got {len(s)} and {len(y)}")
        return s, y, check_group_ptr(group_ptr, len(s))

    # -- passed straight to a boosting library: thin delegations to gbrank.backends --------
    # The calling conventions live in gbrank.backends (one dispatch, ``call_objective``);
    # these two methods only let the objective itself be the callable that lightgbm.train,
    # LGBMRanker and xgboost.train accept.  Their lazy import is the one documented
    # exception to the layering (lambdas -> backends, tests/test_layering.py).
    def __call__(self, preds_or_labels, data_or_preds, weight=None, group=None):
        """The objective as ``lightgbm.train({"objective": obj}, dataset)`` (``obj(preds,
        dataset)``), ``xgboost.train(params, dtrain, obj=obj)`` (``obj(predt, dtrain)``, arrays
        of shape (n, 1)) and ``lightgbm.LGBMRanker(objective=obj)`` (``obj(y_true, y_pred,
        weight, group)``: exactly four parameters, so LightGBM passes ``group``) call it:
        :func:`gbrank.backends.call_objective`.  A call without groups (``XGBRegressor``,
        ``LGBMRegressor``) gets a ``TypeError`` naming the ways that work."""
        from ..backends import call_objective

        return call_objective(self, preds_or_labels, data_or_preds, weight, group)

    def calc_ders_range(self, approxes, targets, weights):
        """CatBoost's hook for a Python objective: refused with the ways that work
        (:func:`gbrank.backends.refuse_python_objective`; CatBoost passes no query groups)."""
        from ..backends import refuse_python_objective

        refuse_python_objective(self)


class LambdaObjective(ObjectiveBase):
    """LambdaRank gradients for gradient boosting with the swap delta of a chosen metric.

    For each pair (i, j) of one list with l_i > l_j and score difference d = s_i - s_j,
    with rho = 1 / (1 + exp(sigma d)) and |dM_ij| the change of the metric if i and j
    swapped their current ranks::

        g_i -= sigma |dM_ij| rho         g_j += sigma |dM_ij| rho
        h_i, h_j += sigma^2 |dM_ij| max(rho (1 - rho), 1e-16)   (hessian="lightgbm")
                    2 |dM_ij| max(rho (1 - rho), 1e-16)         (hessian="xgboost")

    g is the derivative of the RankNet-style loss with respect to the score, as the
    boosting libraries expect.  The current ranking is a stable descending sort of the
    scores (ties keep their input order, as LightGBM and XGBoost).

    Parameters
    ----------
    metric : {"ndcg", "ap", "rr", "nrbp"} or e.g. "nrbp@0.95", "ndcg@30", "ap+minmax"
        Whose swap delta weighs each pair: any family of ``gbrank.metrics.METRICS`` whose
        record has a ``delta``.  AP, RR and nRBP binarise the labels at
        ``relevance_threshold``; nDCG uses graded gains.  After ``@``: p for nRBP, the
        truncation for the others.
    p : float, optional
        Persistence of nRBP, in (0, 1).
    sigma : float, default 1.0
        Steepness of the pairwise logistic (LightGBM's ``sigmoid``).
    truncation : int or None
        Only pairs with at least one member in the current top ``truncation`` count, and
        nDCG's IDCG is cut there (LightGBM ``lambdarank_truncation_level``, XGBoost
        ``lambdarank_num_pair_per_sample`` with ``topk``).  None: all pairs.
    score_normalization : bool
        Divide |dM| by ``score_normalization_eps + |d|`` unless all scores of the list
        are equal (LightGBM ``lambdarank_norm``, XGBoost ``lambdarank_score_normalization``).
    list_normalization : bool
        Multiply the list's g and h by log2(1 + S) / S, S the sum over pairs of
        2 sigma |dM| rho (LightGBM ``lambdarank_norm``, XGBoost ``lambdarank_normalization``).
    hessian : {"lightgbm", "xgboost"}
        Hessian form (above).  XGBoost's carries a factor 2 that halves leaf values.
    relevance_threshold : float, default 1
        ``label >= relevance_threshold`` is relevant for AP, RR and nRBP.
    gain : {"exp", "linear"}
        nDCG gain 2**l - 1 or l.
    score_normalization_eps : float, default 0.01
    sigmoid_table : bool, default False
        Evaluate rho through LightGBM's 2**20-bin lookup table instead of exactly (used
        only to reproduce LightGBM's built-in bit for bit).
    hessian_floor : float, default 0.0
        Lower bound applied to every hessian.
    bounding : {None, "minmax", "expectation", "expectation_max", "distribution"}
        Weigh each pair by the change of the *bounded* metric (thesis Ch. 3,
        ``gbrank.bounds``): |dM| / (M_max - M_min), |dM| / E[M], |dM| / (M_max - E[M]),
        or |F~(M +- |dM|) - F~(M)| with F~ the list's smoothed CDF under random orders
        and M its current value.  Also written as a suffix: ``"nrbp@0.95+minmax"``.
        Lists that cannot be bounded (max = min, E = 0, no relevant item) get zero
        weight.  Bounds are prepared once per label set (cached per list shape).
    weighting : {"delta", "ndcg_loss2", "ndcg_loss2++"}, default "delta"
        The pair weight.  "delta": |dM_ij| (above).  The LambdaLoss weights of nDCG
        (Wang et al., "The LambdaLoss Framework for Ranking Metric Optimization", CIKM
        2018; the same weights as TF-Ranking's ``DCGLambdaWeight`` "u" and "v" terms and
        allRank's ``ndcgLoss2_scheme`` / ``ndcgLoss2PP_scheme``), for a pair at current ranks
        r_i, r_j (1-based) with gains G and D(x) = log2(1 + x)::

            ndcg_loss2    |G_i - G_j| delta_ij / IDCG
            ndcg_loss2++  |G_i - G_j| (rho_ij + mu delta_ij) / IDCG
            delta_ij = |1/D(|r_i - r_j|) - 1/D(|r_i - r_j| + 1)|,   rho_ij = |1/D(r_i) - 1/D(r_j)|

        (rho_ij |G_i - G_j| / IDCG is |dnDCG_ij|, the "delta" weight.)  nDCG only, without
        ``bounding``; truncation (top-k pairs, IDCG@k) and the normalisations apply as for
        "delta".  gbrank does not multiply by the list size as TF-Ranking does.
    mu : float, default 10.0
        Weight of delta_ij in "ndcg_loss2++" (only there: another weighting with a mu other
        than the default raises).
    stochastic : int, default 0
        YetiRank-style stochastic pair weights (Gulin, Kuralenok, Pavlov 2011): for each of
        ``stochastic`` samples every score gets logistic noise log(u / (1 - u)), u ~ U(0, 1),
        the list is ranked by the perturbed scores, and each pair's weight is its |dM| (or
        LambdaLoss weight) at its *perturbed* ranks; the pair weight is the mean over the
        samples.  rho and the hessian use the unperturbed score difference; the pairs are
        those of the unperturbed ranking (top ``truncation``).  Any metric; linear bounding
        maps apply, the distribution map does not.  0: off.  Costs about ``stochastic``
        times the plain call (one sort and one pass over the pairs per sample).
    pair_method : {"topk", "mean"}, default "topk"
        "topk": every pair with a member in the current top ``truncation`` (all pairs when
        None).  "mean": XGBoost's ``lambdarank_pair_method="mean"``: each item draws
        ``pairs_per_doc`` partners uniformly among the items of its list with a different
        label; each drawn pair has its usual weight (any metric and weighting), nDCG's IDCG
        is the whole list's, and ``list_normalization`` multiplies g and h by
        1 / ``pairs_per_doc`` (XGBoost's normalisation for "mean").  No ``truncation``.
    pairs_per_doc : int, default 1
        Partners drawn per item with "mean" (XGBoost ``lambdarank_num_pair_per_sample``).
    random_state : int or None
        Seed of the draws of ``stochastic`` and "mean".  The draws of a call are a function of
        (random_state, the bits of all the call's scores, the list's index): each boosting
        round has new scores and so new draws, the same objective with the same seed gives
        the same gradients over the rounds, whatever the number of threads, and there is no
        hidden counter, so a copy (``lightgbm.train`` deep-copies its params), a pickle or a
        second fit draws exactly what the original would.  Two calls with identical scores
        draw the same.  None: fresh operating-system entropy on every call (not
        reproducible).  Ignored when nothing is drawn.

    Examples
    --------
    >>> obj = LambdaObjective("nrbp@0.95")
    >>> g, h = obj.gradients([0.0, 1.0, 2.0], [1, 0, 0], [0, 3])
    >>> bool(g[0] < 0 < g[2] and abs(g.sum()) < 1e-12)
    True
    """

    def __init__(self, metric="ndcg", p=None, sigma=1.0, truncation=None, score_normalization=False,
                 list_normalization=False, hessian="lightgbm", relevance_threshold=1, gain="exp",
                 score_normalization_eps=0.01, sigmoid_table=False, hessian_floor=0.0, bounding=None,
                 weighting="delta", mu=DEFAULT_MU, stochastic=0, pair_method="topk", pairs_per_doc=1,
                 random_state=None):
        self.metric, self.p, self.truncation, self.bounding = parse_objective_metric(
            metric, p, truncation, bounding)
        self._prepared = None
        self.sigma = check_number(sigma, "sigma")
        self.score_normalization = check_bool(score_normalization, "score_normalization")
        self.list_normalization = check_bool(list_normalization, "list_normalization")
        check_choice(hessian, "hessian", HESSIANS)
        self.hessian = hessian
        self.relevance_threshold = check_number(relevance_threshold, "relevance_threshold")
        check_choice(gain, "gain", GAINS)
        self.gain = gain
        self.score_normalization_eps = check_number(score_normalization_eps, "score_normalization_eps")
        self.sigmoid_table = check_bool(sigmoid_table, "sigmoid_table")
        self.hessian_floor = check_number(hessian_floor, "hessian_floor", low_inclusive=True)
        self.weighting, self.mu, self.stochastic, self.pair_method, self.pairs_per_doc, self.random_state = \
            _check_pair_options(self.metric, self.truncation, self.bounding, weighting, mu, stochastic,
                                pair_method, pairs_per_doc, random_state)

    @classmethod
    def like_lightgbm(cls, truncation: int = 30, sigma: float = 1.0) -> "LambdaObjective":
        """dnDCG configured exactly as LightGBM's ``objective="lambdarank"`` defaults
        (truncation 30, ``lambdarank_norm=True``, its hessian and sigmoid table)."""
        return cls("ndcg", sigma=sigma, truncation=truncation, score_normalization=True,
                   list_normalization=True, hessian="lightgbm",
                   score_normalization_eps=LIGHTGBM_EPS, sigmoid_table=True)

    @classmethod
    def like_xgboost(cls, metric: str = "ndcg", truncation: int = 32) -> "LambdaObjective":
        """dnDCG or dAP configured as XGBoost's ``rank:ndcg`` / ``rank:map`` with
        ``lambdarank_pair_method="topk"`` (k = 32 by default) and both normalisations."""
        _check_xgboost_builtin(metric)
        return cls(metric, truncation=truncation, score_normalization=True, list_normalization=True,
                   hessian="xgboost")

    @classmethod
    def like_xgboost_mean(cls, metric: str = "ndcg", pairs_per_doc: int = 1, random_state=None) -> "LambdaObjective":
        """dnDCG or dAP configured as XGBoost's ``rank:ndcg`` / ``rank:map`` with
        ``lambdarank_pair_method="mean"`` and ``lambdarank_num_pair_per_sample=pairs_per_doc``
        (both normalisations).  The draws differ from XGBoost's; lists where every item has
        a single partner of another label (two items of different labels) or none get the
        same gradients."""
        _check_xgboost_builtin(metric)
        return cls(metric, score_normalization=True, list_normalization=True, hessian="xgboost",
                   pair_method="mean", pairs_per_doc=pairs_per_doc, random_state=random_state)

    def get_params(self) -> dict:
        return {k: getattr(self, k) for k in (
            "metric", "p", "sigma", "truncation", "score_normalization", "list_normalization",
            "hessian", "relevance_threshold", "gain", "score_normalization_eps", "sigmoid_table",
            "hessian_floor", "bounding", "weighting", "mu", "stochastic", "pair_method", "pairs_per_doc",
            "random_state")}

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_prepared"] = None  # the bounds cache is rebuilt on demand
        return state

    def __repr__(self) -> str:
        defaults = LambdaObjective().get_params()
        shown = [f"{k}={v!r}" for k, v in self.get_params().items() if k == "metric" or v != defaults[k]]
        return f"LambdaObjective({', '.join(shown)})"

    @property
    def name(self) -> str:
        """Short name, e.g. ``"nrbp@0.95"`` or ``"ndcg@30"``."""
        if METRICS[self.metric].param == "p":
            base = f"{self.metric}@{self.p:g}"
            if self.truncation is not None:
                base = f"{base}[top{self.truncation}]"
        else:
            base = self.metric if self.truncation is None else f"{self.metric}@{self.truncation}"
        return base if self.bounding is None else f"{base}+{self.bounding}"

    def gradients(self, scores, labels, group_ptr, weights=None):
        """Gradient and hessian of the loss with respect to ``scores``.

        Parameters
        ----------
        scores, labels : array-like of shape (n_rows,)
            Rows of each query contiguous.
        group_ptr : array-like of shape (n_queries + 1,)
            Query boundaries: query q is rows ``group_ptr[q]:group_ptr[q+1]``.
        weights : array-like, optional
            One weight per row (LightGBM's convention) or one per query (XGBoost's); g
            and h are multiplied by it.

        Returns
        -------
        grad, hess : numpy.ndarray of shape (n_rows,), float64
            One-item lists and lists without a relevant item get g = 0 (and h =
            ``hessian_floor``): they hold no pair.
        """
        s, y, ptr = self._checked_lists(scores, labels, group_ptr)
        bound_code, scale, cdf, x0, x1 = self._bounding_arrays(y, ptr)
        if self.weighting == "delta" and self.stochastic == 0 and self.pair_method == "topk":
            grad, hess = all_gradients(
                s, y, ptr, *delta_codes(self.metric), self.kernel_parameter(y), self.sigma, self.truncation or 0,
                self.score_normalization, self.score_normalization_eps, self.list_normalization,
                HESSIANS[self.hessian], self.sigmoid_table, GAINS[self.gain], self.relevance_threshold,
                bound_code, scale, cdf, x0, x1,
            )
        else:  # scale: 1, or the linear bounding map's (the options refuse the distribution map)
            grad, hess = weighted_gradients(
                s, y, ptr, *delta_codes(self.metric), self.kernel_parameter(y), self.sigma, self.truncation or 0,
                self.score_normalization, self.score_normalization_eps, self.list_normalization,
                HESSIANS[self.hessian], self.sigmoid_table, GAINS[self.gain], self.relevance_threshold, scale,
                WEIGHTINGS[self.weighting], self.mu, self.stochastic, PAIR_METHODS[self.pair_method],
                self.pairs_per_doc, self._draw_seed(),
            )
        return weigh_and_floor(grad, hess, weights, ptr, self.hessian_floor)

    def _draw_seed(self) -> int:
        """The 64-bit seed of this call's draws: ``random_state``, or fresh entropy when None."""
        if self.random_state is None:
            return int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
        return self.random_state

    def kernel_parameter(self, labels: np.ndarray) -> float:
        """The metric parameter the kernels take, by the record's one rule
        (:meth:`gbrank.metrics.Metric.kernel_parameter`): nRBP's persistence p, or for a metric
        on the top grade of the scale (ERR) the gain of that grade, the largest of ``labels``."""
        return METRICS[self.metric].kernel_parameter(self.p, labels, self.gain)

    def _bounding_arrays(self, labels, ptr):
        """(bound code, scale, cdf, x0, x1) for the kernel, one entry (row) per list.

        The bounds of a label set are prepared once and kept until labels or query
        boundaries change (compared by value: cheap next to the gradient call)."""
        n_lists = len(ptr) - 1
        one = np.ones(n_lists)
        if self.bounding is None:
            return BOUND_NONE, one, np.zeros((n_lists, 2)), np.zeros(n_lists), one
        cached = self._prepared
        if cached is None or not (np.array_equal(cached[0], labels) and np.array_equal(cached[1], ptr)):
            from ..bounds import inverse_scale, prepare

            lb = prepare(self.metric, labels, ptr, p=self.p, relevance_threshold=self.relevance_threshold,
                         gain=self.gain, truncation=self.truncation,
                         distribution=self.bounding == "distribution")
            if self.bounding == "distribution":
                arrays = (BOUND_DIST, one, lb.cdf, lb.cdf_x0, lb.cdf_x1)
            else:
                arrays = (BOUND_LINEAR, inverse_scale(self.bounding, lb), np.zeros((n_lists, 2)),
                          np.zeros(n_lists), one)
            cached = self._prepared = (labels.copy(), np.array(ptr, copy=True), arrays)
        return cached[2]


def weigh_and_floor(grad: np.ndarray, hess: np.ndarray, weights, ptr: np.ndarray, floor: float):
    """Multiply ``grad`` and ``hess`` in place by the row weights (``weights``: one per row, or
    one per query repeated over its rows; None: none) and raise ``hess`` to ``floor``;
    returns ``(grad, hess)``."""
    if weights is not None:
        n = len(grad)
        w = as_1d_float(weights, "weights")
        if len(w) == len(ptr) - 1 and len(w) != n:
            w = np.repeat(w, np.diff(ptr))
        elif len(w) != n:
            raise ValueError(f"weights must have one entry per row ({n}) or per query ({len(ptr) - 1}), got {len(w)}")
        if (w < 0).any():
            raise ValueError("weights must be non-negative")
        grad *= w
        hess *= w
    if floor > 0:
        np.maximum(hess, floor, out=hess)
    return grad, hess


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _check_pair_options(metric, truncation, bounding, weighting, mu, stochastic, pair_method, pairs_per_doc,
                        random_state):
    """Validated (weighting, mu, stochastic, pair_method, pairs_per_doc, random_state)."""
    check_choice(weighting, "weighting", WEIGHTINGS)
    mu = check_number(mu, "mu", low_inclusive=True)
    own = WEIGHTING_METRIC.get(weighting)
    if own is not None and metric != own:
        raise ValueError(f"weighting={weighting!r} is a LambdaLoss weight of nDCG (gains and rank discounts); "
                         f"metric {metric!r} has none: use metric={own!r} or weighting='delta'")
    if weighting != "delta" and bounding is not None:
        raise ValueError(f"weighting={weighting!r} takes no bounding (got bounding={bounding!r}); bound the "
                         "'delta' weighting, or leave bounding=None")
    if weighting != "ndcg_loss2++" and mu != DEFAULT_MU:
        raise ValueError(f"mu={mu!r} weighs delta_ij in weighting='ndcg_loss2++' only, but weighting={weighting!r}; "
                         "set weighting='ndcg_loss2++' or leave mu at its default")
    if not _is_int(stochastic) or stochastic < 0:
        raise (TypeError if not _is_int(stochastic) else ValueError)(
            f"stochastic must be a whole number of noise samples >= 0 (0: off), got {stochastic!r}")
    check_choice(pair_method, "pair_method", PAIR_METHODS)
    if not _is_int(pairs_per_doc) or pairs_per_doc < 1:
        raise (TypeError if not _is_int(pairs_per_doc) else ValueError)(
            f"pairs_per_doc must be a whole number >= 1, got {pairs_per_doc!r}")
    if pair_method != "mean" and pairs_per_doc != 1:
        raise ValueError(f"pairs_per_doc={pairs_per_doc!r} counts the partners drawn with pair_method='mean', but "
                         f"pair_method={pair_method!r}; set pair_method='mean' or leave pairs_per_doc=1")
    if pair_method == "mean" and truncation is not None:
        raise ValueError(f"pair_method='mean' draws partners over the whole list and takes no truncation (got "
                         f"{truncation!r}); leave truncation=None (and no '@k' in the metric name), or use "
                         "pair_method='topk'")
    if (stochastic or pair_method == "mean") and bounding == "distribution":
        raise ValueError("bounding='distribution' works with the plain pairs only (stochastic=0, "
                         "pair_method='topk'); use a linear map ('minmax', 'expectation', 'expectation_max')")
    if random_state is not None and not (_is_int(random_state) and 0 <= random_state < 2**64):
        raise (TypeError if not _is_int(random_state) else ValueError)(
            f"random_state must be None or an integer seed in [0, 2**64), got {random_state!r}")
    return weighting, mu, int(stochastic), pair_method, int(pairs_per_doc), \
        (None if random_state is None else int(random_state))

