"""``UnbiasedLambdaObjective``: LambdaRank on clicks with position propensities learned
jointly with the trees (Unbiased LambdaMART, Hu, Wang, Peng and Li, WWW 2019, Algorithm 1).

Labels are clicks (or click counts): in a pair (i, j) with c_i > c_j the clicked row i sits
at displayed position k = pos_i and the unclicked row j at position m = pos_j.  With the
LambdaRank terms of ``_kernels`` (|dM_ij| the swap delta of the chosen metric, rho =
1 / (1 + exp(sigma d)), d = s_i - s_j)::

    lambda_ij = sigma |dM_ij| rho / (t+_k t-_m)           h_ij = (hessian form) / (t+_k t-_m)

and the pair's loss L_ij = |dM_ij| log(1 + exp(-sigma d)) (RankNet's log-loss weighted by the
delta, the paper's Eq. 5).  After each boosting round (each call of the objective) the
propensities are re-estimated from that round's pairs (the paper's Eqs. 30-31, XGBoost's
``LambdaRankUpdatePositionBias``)::

    t+_k = ( sum_{pairs with i at k} L_ij / t-_m  /  (the same sum at position 1) ) ** (1 / (p + 1))
    t-_m = ( sum_{pairs with j at m} L_ij / t+_k  /  (the same sum at position 1) ) ** (1 / (p + 1))

p is the order of the p-norm regulariser of the propensities (``bias_norm``; XGBoost's
``lambdarank_bias_norm``, default 2).  t+_1 = t-_1 = 1: the propensities are ratios to
position 1.  Pairs with a member below the ``max_position`` tracked positions, or at a
position whose propensity is below 1e-16, are neither reweighted nor counted in the update
(as XGBoost).  With p = 0 and a ranker whose order does not depend on the displayed
position, t+_k estimates theta_k / theta_1 of the position-based model; with p > 0,
t+_k ** (p + 1) does (``examination_``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .._validation import as_1d_float, check_bool, check_choice, check_group_ptr, check_number, is_positive_int
from ..metrics import GAINS
from ._deltas import delta, delta_codes
from ._kernels import HESS_LIGHTGBM, _rho, list_factor, ranked_list, scatter
from ._objective import HESSIANS, LambdaObjective, ObjectiveBase, weigh_and_floor
from ._settings import settings

#: pair loss whose sums update the propensities: the paper's RankNet log-loss, or the
#: cost XGBoost 3.x accumulates, |dM| log(1 + exp(+sigma d)) (of the reversed pair)
PAIR_LOSSES = {"logistic": 0, "xgboost": 1}
TINY = 1e-16  # propensities below it switch the reweighting of a pair off (XGBoost's Eps64)
DEFAULT_MAX_POSITION = 32  # XGBoost tracks min(32, the longest list) positions


@njit(cache=True, inline="always")
def _softplus(x):
    """log(1 + exp(x)) without overflow."""
    if x > 0.0:
        return x + math.log1p(math.exp(-x))
    return math.log1p(math.exp(x))


@njit(cache=True)
def unbiased_list_gradients(scores, labels, pos, cfg, t_plus, t_minus, loss_code, grad, hess, loss_plus, loss_minus):
    """Gradients and hessians of one list (into ``grad``, ``hess``) with every pair divided by
    t+ at the higher-labelled row's position and t- at the other's; adds each pair's loss
    L_ij / t-_m to ``loss_plus`` at row i and L_ij / t+_k to ``loss_minus`` at row j.
    ``cfg`` is the call's ``_settings.Settings`` (its table and bounding code unused).

    ``pos`` holds 0-based position indices into ``t_plus`` / ``t_minus``.  The pair loop
    visits pairs (i < top, j > i) of the current ranking (stable descending sort of the
    scores) with different labels, as ``_kernels.list_gradients``."""
    sigma, eps, form, hess_mode = cfg.sigma, cfg.eps, cfg.form, cfg.hess_mode
    n = scores.shape[0]
    for r in range(n):
        grad[r] = 0.0
        hess[r] = 0.0
        loss_plus[r] = 0.0
        loss_minus[r] = 0.0
    if n < 2:
        return
    order, s, lab, aux, norm, first, second, by_score, top = ranked_list(scores, labels, cfg.metric, cfg.gain_code,
                                                                         cfg.threshold, cfg.p, cfg.trunc,
                                                                         cfg.score_norm)
    ps = pos[order]
    if norm == 0.0:
        return
    g = np.zeros(n)
    h = np.zeros(n)
    lp = np.zeros(n)
    lm = np.zeros(n)
    n_pos = t_plus.shape[0]
    total = 0.0
    for i in range(top):
        for j in range(i + 1, n):
            if lab[i] == lab[j]:
                continue
            dm = delta(form, i, j, aux, norm, first, second)
            if dm == 0.0:
                continue
            if lab[i] > lab[j]:
                hi, lo = i, j
            else:
                hi, lo = j, i
            d = s[hi] - s[lo]
            if by_score:
                dm = dm / (eps + abs(d))
            rho, q = _rho(d, sigma, False)
            lam = sigma * dm * rho
            if hess_mode == HESS_LIGHTGBM:
                hh = sigma * sigma * dm * max(q, 1e-16)
            else:
                hh = 2.0 * dm * max(q, 1e-16)
            k = ps[hi]
            m = ps[lo]
            if k < n_pos and m < n_pos:
                tp = t_plus[k]
                tm = t_minus[m]
                cost = dm * (_softplus(-sigma * d) if loss_code == 0 else _softplus(sigma * d))
                if tm >= TINY:
                    lp[hi] += cost / tm
                if tp >= TINY:
                    lm[lo] += cost / tp
                if tp >= TINY and tm >= TINY:
                    lam = lam / (tp * tm)
                    hh = hh / (tp * tm)
            g[hi] -= lam
            g[lo] += lam
            h[hi] += hh
            h[lo] += hh
            total += 2.0 * lam
    scatter(order, g, h, list_factor(cfg.list_norm, total), grad, hess)
    for r in range(n):
        loss_plus[order[r]] = lp[r]
        loss_minus[order[r]] = lm[r]


@njit(parallel=True, cache=True)
def _all_unbiased(scores, labels, pos, ptr, cfg, t_plus, t_minus, loss_code):
    """Every list in parallel; returns (grad, hess, loss_plus, loss_minus) per row (the
    losses are summed per position afterwards, so no two threads write one entry)."""
    n = scores.shape[0]
    grad = np.empty(n)
    hess = np.empty(n)
    loss_plus = np.empty(n)
    loss_minus = np.empty(n)
    for q in prange(ptr.shape[0] - 1):
        a, b = ptr[q], ptr[q + 1]
        unbiased_list_gradients(scores[a:b], labels[a:b], pos[a:b], cfg, t_plus, t_minus, loss_code, grad[a:b],
                                hess[a:b], loss_plus[a:b], loss_minus[a:b])
    return grad, hess, loss_plus, loss_minus


def update_propensity(loss_by_position: np.ndarray, current: np.ndarray, bias_norm: float) -> np.ndarray:
    """``(loss_k / loss_1) ** (1 / (bias_norm + 1))``; unchanged when position 1 has no loss
    (below 1e-16), as XGBoost."""
    if loss_by_position[0] < TINY:
        return current.copy()
    return (loss_by_position / loss_by_position[0]) ** (1.0 / (bias_norm + 1.0))


def _check_positions(positions, n_rows: int | None = None) -> np.ndarray:
    """Displayed positions: whole numbers >= 1, one per row."""
    raw = np.asarray(positions)
    if raw.ndim != 1:
        raise ValueError(f"positions must be one-dimensional (the displayed position of each row), got shape "
                         f"{raw.shape}")
    if raw.dtype.kind not in "iuf" or (raw.dtype.kind == "f" and not np.all(np.isfinite(raw))):
        raise ValueError(f"positions must be whole numbers >= 1 (1 = the top of the displayed list), got dtype "
                         f"{raw.dtype}")
    if len(raw) and (np.any(raw != np.round(raw)) or raw.min() < 1):
        bad = int(np.flatnonzero((raw != np.round(raw)) | (raw < 1))[0])
        raise ValueError(f"positions must be whole numbers >= 1 (1-based: 1 is the top of the displayed list); "
                         f"found {raw[bad]!r} at row {bad}; add 1 to 0-based positions")
    if n_rows is not None and len(raw) != n_rows:
        raise ValueError(f"positions has {len(raw)} entries but the data has {n_rows} rows; give the displayed "
                         "position of every training row, in the rows' order (set_positions)")
    return raw.astype(np.int64)


class UnbiasedLambdaObjective:
    """Unbiased LambdaMART: LambdaRank gradients on clicks, every pair divided by position
    propensities t+ (clicked row) and t- (unclicked row) learned jointly with the trees.

    For a pair (i, j) of one list with c_i > c_j (clicks as labels), displayed at positions
    k = pos_i and m = pos_j, with |dM_ij| the swap delta of ``metric`` and
    rho = 1 / (1 + exp(sigma (s_i - s_j)))::

        g_i -= sigma |dM_ij| rho / (t+_k t-_m)           g_j += the same
        h_i, h_j += (the hessian of ``LambdaObjective``) / (t+_k t-_m)

    After every round (every call) the propensities are re-estimated from the round's pair
    losses L_ij = |dM_ij| log(1 + exp(-sigma (s_i - s_j)))::

        t+_k = (sum_{i at k} L_ij / t-_m  /  sum_{i at 1} L_ij / t-_m) ** (1 / (bias_norm + 1))
        t-_m = (sum_{j at m} L_ij / t+_k  /  sum_{j at 1} L_ij / t+_k) ** (1 / (bias_norm + 1))

    so t+_1 = t-_1 = 1.  All propensities start at 1: the first round is the biased
    ``LambdaObjective``.  Hu, Wang, Peng and Li, *Unbiased LambdaMART: An Unbiased Pairwise
    Learning-to-Rank Algorithm*, WWW 2019 (Algorithm 1, Eqs. 30-31); XGBoost's
    ``lambdarank_unbiased``.

    Parameters
    ----------
    metric : str, default "ndcg"
        Any objective metric of :class:`LambdaObjective` ("ndcg", "ap", "rr", "nrbp@0.9",
        "err", "ndcg@10" for truncation 10, ...); not the bounded variants.
    positions : array-like of shape (n_rows,), optional
        Displayed position of every training row, 1-based (1 = top), in the rows' order;
        or later with :meth:`set_positions`.  Checked against the row count at each call.
    bias_norm : float, default 2.0
        p of the p-norm regulariser (XGBoost's ``lambdarank_bias_norm``): the update takes
        the 1 / (p + 1) power.  0 is the unregularised estimate.
    max_position : int, default 32
        Positions 1..max_position get propensities (XGBoost tracks 32, or its truncation);
        pairs with a row below are not reweighted.
    pair_loss : {"logistic", "xgboost"}, default "logistic"
        Loss summed by the update: the paper's |dM| log(1 + exp(-sigma d)), or XGBoost
        3.x's |dM| log(1 + exp(+sigma d)) (to reproduce its ``lambdarank_unbiased``).
    learn : bool, default True
        Update the propensities after each call; False keeps them fixed (at
        ``initial_plus`` / ``initial_minus``: inverse propensity weighting with known
        propensities).
    update_rounds : int, optional
        Update the propensities after the first ``update_rounds`` calls (rounds) only, then
        keep them fixed for the rest of the training; None (default, XGBoost's behaviour)
        updates after every call.  The estimate is made from the current model's pair
        losses, and as the trees fit the clicks those losses come to reflect where the
        model still disagrees with the clicks rather than where users look: on MQ2008 with
        simulated clicks the learned t+ drift upwards over the rounds (t+_2 about 0.4 after
        5 rounds, 0.6-1.0 after 100, against theta_2 / theta_1 = 0.5), and stopping the
        update early is what lets the learned propensities beat the biased objective
        (docs/results.md, "Position-debiased training from simulated clicks").
    initial_plus, initial_minus : array-like of shape (max_position,), optional
        Starting propensities (default all 1).
    p, sigma, truncation, score_normalization, list_normalization, hessian,
    relevance_threshold, gain, score_normalization_eps, hessian_floor
        As :class:`LambdaObjective` (validated by it).  The score-normalised |dM| enters
        both the lambda and the loss L_ij, as in XGBoost.

    Attributes
    ----------
    propensity_plus_, propensity_minus_ : numpy.ndarray of shape (max_position,)
        Current t+ and t-, position 1 first.
    propensity_plus_history_, propensity_minus_history_ : numpy.ndarray of shape (n_calls + 1, max_position)
        The propensities before the first round and after each round.
    examination_ : numpy.ndarray
        ``propensity_plus_ ** (bias_norm + 1)``: the estimate of theta_k / theta_1.
    n_updates_ : int
        The number of propensity updates made so far (at most ``update_rounds``).

    Notes
    -----
    The object keeps state across calls.  ``lightgbm.train`` deep-copies its params, so
    ``copy.deepcopy`` returns this same object: the learned propensities are read from the
    object passed in.  Call :meth:`reset` before training another model with it.

    Examples
    --------
    >>> obj = UnbiasedLambdaObjective("ndcg", positions=[1, 2, 3, 1, 2, 3], bias_norm=0, max_position=3)
    >>> g, h = obj.gradients([0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0, 0, 1, 1, 0, 0], [0, 3, 6])
    >>> obj.propensity_plus_.round(3).tolist(), obj.n_updates_
    ([1.0, 0.0, 0.726], 1)
    """

    def __init__(self, metric="ndcg", positions=None, *, bias_norm=2.0, max_position=DEFAULT_MAX_POSITION,
                 pair_loss="logistic", learn=True, update_rounds=None, initial_plus=None, initial_minus=None,
                 p=None, sigma=1.0,
                 truncation=None, score_normalization=False, list_normalization=False, hessian="lightgbm",
                 relevance_threshold=1, gain="exp", score_normalization_eps=0.01, hessian_floor=0.0):
        self._base = LambdaObjective(metric, p=p, sigma=sigma, truncation=truncation,
                                     score_normalization=score_normalization,
                                     list_normalization=list_normalization, hessian=hessian,
                                     relevance_threshold=relevance_threshold, gain=gain,
                                     score_normalization_eps=score_normalization_eps, hessian_floor=hessian_floor)
        if self._base.bounding is not None:
            raise ValueError(f"UnbiasedLambdaObjective takes an unbounded metric, got {metric!r}; drop the "
                             f"'+{self._base.bounding}' suffix")
        self.bias_norm = check_number(bias_norm, "bias_norm", low_inclusive=True)
        if not is_positive_int(max_position):
            raise ValueError(f"max_position must be a positive integer (the number of tracked positions), got "
                             f"{max_position!r}")
        self.max_position = int(max_position)
        check_choice(pair_loss, "pair_loss", PAIR_LOSSES)
        self.pair_loss = pair_loss
        self.learn = check_bool(learn, "learn")
        if update_rounds is not None and not is_positive_int(update_rounds):
            raise ValueError(f"update_rounds must be a positive integer (the number of rounds whose pair losses update "
                             f"the propensities) or None (every round), got {update_rounds!r}")
        self.update_rounds = None if update_rounds is None else int(update_rounds)
        self.initial_plus = self._initial(initial_plus, "initial_plus")
        self.initial_minus = self._initial(initial_minus, "initial_minus")
        self.positions = None if positions is None else _check_positions(positions)
        self.reset()

    def _initial(self, values, name):
        if values is None:
            return np.ones(self.max_position)
        t = as_1d_float(values, name)
        if len(t) != self.max_position or (t < 0).any():
            raise ValueError(f"{name} must hold {self.max_position} non-negative propensities (one per tracked "
                             f"position, max_position={self.max_position}), got {len(t)} values, min "
                             f"{t.min() if len(t) else float('nan'):g}")
        return t.copy()

    # -- state ---------------------------------------------------------------------------
    def reset(self) -> "UnbiasedLambdaObjective":
        """Forget the learned propensities: back to ``initial_plus`` / ``initial_minus``."""
        self.propensity_plus_ = self.initial_plus.copy()
        self.propensity_minus_ = self.initial_minus.copy()
        self._history = [(self.propensity_plus_.copy(), self.propensity_minus_.copy())]
        self.n_updates_ = 0
        return self

    def set_positions(self, positions) -> "UnbiasedLambdaObjective":
        """Set the displayed position (1-based) of every training row, in the rows' order."""
        self.positions = _check_positions(positions)
        return self

    @property
    def propensity_plus_history_(self) -> np.ndarray:
        return np.array([h[0] for h in self._history])

    @property
    def propensity_minus_history_(self) -> np.ndarray:
        return np.array([h[1] for h in self._history])

    @property
    def examination_(self) -> np.ndarray:
        return self.propensity_plus_ ** (self.bias_norm + 1.0)

    def __deepcopy__(self, memo):
        return self  # lightgbm.train deep-copies params: keep the learned state visible to the caller

    # -- description ---------------------------------------------------------------------
    def get_params(self) -> dict:
        out = self._base.get_params()
        del out["sigmoid_table"], out["bounding"]
        out.update(bias_norm=self.bias_norm, max_position=self.max_position, pair_loss=self.pair_loss,
                   learn=self.learn, update_rounds=self.update_rounds)
        return out

    @property
    def name(self) -> str:
        return f"unbiased-{self._base.name}"

    def __repr__(self) -> str:
        base = self._base.get_params()
        defaults = LambdaObjective().get_params()
        shown = [f"{k}={v!r}" for k, v in base.items() if k == "metric" or v != defaults[k]]
        shown += [f"bias_norm={self.bias_norm:g}", f"max_position={self.max_position}"]
        if self.pair_loss != "logistic":
            shown.append(f"pair_loss={self.pair_loss!r}")
        if not self.learn:
            shown.append("learn=False")
        if self.update_rounds is not None:
            shown.append(f"update_rounds={self.update_rounds}")
        return f"UnbiasedLambdaObjective({', '.join(shown)})"

    def lambda_objective(self) -> LambdaObjective:
        """The biased :class:`LambdaObjective` with the same settings (all propensities 1)."""
        return LambdaObjective(**{k: v for k, v in self._base.get_params().items()})

    # -- gradients -----------------------------------------------------------------------
    def gradients(self, scores, labels, group_ptr, weights=None, *, update: bool | None = None):
        """Gradient and hessian with the current propensities; then (unless ``learn`` is
        False, ``update_rounds`` updates were made, or ``update=False``) one propensity update
        from this round's pairs.

        Parameters
        ----------
        scores, labels : array-like of shape (n_rows,)
            Labels are clicks or click counts (c_i > c_j makes the pair).
        group_ptr : array-like of shape (n_queries + 1,)
        weights : array-like, optional
            One per row or one per query; scale g and h (not the propensity update, as
            XGBoost).
        update : bool, optional
            Override ``learn`` and ``update_rounds`` for this call.

        Returns
        -------
        grad, hess : numpy.ndarray of shape (n_rows,)
        """
        base = self._base
        s = as_1d_float(scores, "scores")
        if len(s) == 0:
            raise ValueError("scores is empty: no rows were given")
        y = base.check_labels(labels)
        if len(s) != len(y):
            raise ValueError(f"scores and labels must have one entry per row, got {len(s)} and {len(y)}")
        ptr = check_group_ptr(group_ptr, len(s))
        if self.positions is None:
            raise ValueError("UnbiasedLambdaObjective has no positions: pass positions=... (the displayed "
                             "position of every training row, 1-based) or call set_positions first")
        pos = _check_positions(self.positions, len(s)) - 1
        metric, form = delta_codes(base.metric)
        cfg = settings(metric, form, base.kernel_parameter(y), base.sigma, base.truncation or 0,
                       base.score_normalization, base.score_normalization_eps, base.list_normalization,
                       HESSIANS[base.hessian], False, GAINS[base.gain], base.relevance_threshold, 0)
        grad, hess, lp, lm = _all_unbiased(
            s, y, pos, ptr, cfg, np.ascontiguousarray(self.propensity_plus_, dtype=np.float64),
            np.ascontiguousarray(self.propensity_minus_, dtype=np.float64), PAIR_LOSSES[self.pair_loss])
        weigh_and_floor(grad, hess, weights, ptr, base.hessian_floor)
        if update is None:
            update = self.learn and (self.update_rounds is None or self.n_updates_ < self.update_rounds)
        if update:
            tracked = pos < self.max_position
            k = self.max_position
            self.last_loss_plus_ = np.bincount(pos[tracked], weights=lp[tracked], minlength=k)
            self.last_loss_minus_ = np.bincount(pos[tracked], weights=lm[tracked], minlength=k)
            self.propensity_plus_ = update_propensity(self.last_loss_plus_, self.propensity_plus_, self.bias_norm)
            self.propensity_minus_ = update_propensity(self.last_loss_minus_, self.propensity_minus_, self.bias_norm)
            self._history.append((self.propensity_plus_.copy(), self.propensity_minus_.copy()))
            self.n_updates_ += 1
        return grad, hess

    # the boosting libraries' calling conventions: the objectives' shared delegation to
    # gbrank.backends (lightgbm.train params["objective"], xgboost.train(obj=...), LGBMRanker)
    __call__ = ObjectiveBase.__call__
    calc_ders_range = ObjectiveBase.calc_ders_range
