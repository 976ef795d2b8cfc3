"""Corrected sampled metrics (Krichene & Rendle, KDD 2020) for ``gbrank bench mf``.

A user's sampled test list ranks its R held-out positives among m negatives drawn
uniformly, without replacement, from the N items the full catalogue would rank against
them (the catalogue minus the user's interactions).  Write K_j for the number of those N
negatives scored above the j-th relevant item (relevant items ordered by score, j = 1..R),
so its full-catalogue rank is j + K_j, and k_j for the number of *sampled* negatives above
it.  Given K_j, k_j is hypergeometric: k_j ~ Hypergeometric(N, K_j, m) (the binomial
Binomial(m, K_j / N) of the paper is its with-replacement form).

Every metric reported here is a sum over the relevant items of a function of (j, j + K_j):

* nDCG = sum_j 1/log2(1 + j + K_j) / IDCG(R), nDCG@c keeps the terms with j + K_j <= c;
* AP = (1/R) sum_j j / (j + K_j);  RR = 1 / (1 + K_1);
* nRBP(p) = (1 - p) sum_j p^(j - 1 + K_j) / (1 - p^R);  AUC = 1 - sum_j K_j / (R N).

The **corrected** estimate replaces each term f(j, j + K_j) by its posterior mean given the
observed k_j under a uniform prior on K_j in 0..N:

    f^(k) = sum_K P(k | K) f(j, j + K) / sum_K P(k | K).

This is the paper's bias-variance correction with gamma = 1 (the per-rank estimate that
minimises the mean squared error averaged uniformly over true ranks): by the law of total
expectation it is unbiased for the *average* metric when true ranks are uniform, and with
m = N (nothing sampled away) it returns the exact metric.  It is not unbiased for every
single true rank (no estimator from m + 1 sampled ranks can be, for top-heavy metrics);
``tests/test_bench_mf.py`` checks both properties by simulation.  The simple rank estimate
K^ = k N / m (``rescaled_rank``) is exactly unbiased for K, hence for AUC.

**The family** (Krichene & Rendle, Sec. 5): for one term f(K) and fixed (N, m), a correction
is a table x_k (k = 0..m) used in place of f.  With A[K, k] = P(k | K) and the prior
p(K) = 1/(N + 1), the bias-variance loss with trade-off gamma >= 0 is

    L_gamma(x) = sum_K p(K) [ (E[x_k | K] - f(K))^2 + gamma Var(x_k | K) ],

minimised by x = ((1 - gamma) A^T P A + gamma diag(A^T P 1))^+ A^T P f.  gamma = 1 minimises
the mean squared error and gives the posterior mean above (the default, computed by the
kernel below); gamma = 0 is the minimal-bias (least-squares) end: it makes sum_K p(K) bias^2
as small as the m + 1 values allow (zero for f linear in K, such as AUC's), at the price of
large, oscillating x_k and a high variance.  Between the two, the bias shrinks as gamma
falls.  ``corrected_metrics(..., gamma=g)`` applies it to every term of every metric (the
estimate is linear in f, so the sums and normalisers above carry over).

Two more variants complete the study (:func:`estimated_metrics`): the plain **sampled**
metric (the metric of the sampled list, f(j, j + k), AUC normalised by m) and the
**rank mapping** of REFERENCE.md Sec. 5, which puts the expected full rank back in the
metric: K^ = k N / m, i.e. full rank 1 + (n - 1)(r - 1)/m for one relevant item of sampled
rank r among n = N + 1 items.  :func:`correction_study` measures each variant's bias, RMSE
and Kendall tau against the full-catalogue values of several systems.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numba
import numpy as np

if TYPE_CHECKING:
    import pandas

#: cut-offs up to which nDCG@c can be corrected (posterior masses of K = 0..CUT-1 are kept)
CUT = 20


@numba.njit(parallel=True, cache=True, fastmath=True)
def _posterior_moments(k, j, N, m, invlog, inv, ps, cut, out):  # pragma: no cover - numba
    """For relevant item i: posterior of K given k[i] under a uniform prior on 0..N[i].

    out[i, 0] = E[1/log2(1 + j + K)], out[i, 1] = E[1/(j + K)], out[i, 2] = E[K],
    out[i, 3 + c] = P(K = c) for c < cut, out[i, 3 + cut + t] = E[ps[t]^K].

    The posterior weight is C(K, k) C(N - K, m - k); consecutive weights have the ratio
    w(K + 1) / w(K) = (K + 1)(N - K - m + k) / ((K + 1 - k)(N - K)), which is >= 1 exactly
    while K <= (kN - m + k) / m.  The sums start at that mode (weight 1) and run outward
    until the weight falls below 1e-30.
    """
    n_p = len(ps)
    for i in numba.prange(len(k)):
        ki, ji, Ni, mi = k[i], j[i], N[i], m[i]
        d = mi - ki
        lo, hi = ki, Ni - d  # support of K: k <= K <= N - (m - k)
        if mi == 0:
            mode = lo
        else:
            mode = min(max(int(math.floor((ki * Ni - d) / mi)) + 1, lo), hi)
        row = out[i]
        for c in range(3 + cut + n_p):
            row[c] = 0.0
        total = 0.0
        s_log = 0.0
        s_inv = 0.0
        s_k = 0.0
        for direction in range(2):
            w = 1.0
            K = mode
            if direction == 1:  # downward from the mode (the mode itself was counted)
                if K <= lo:
                    break
                w = (K - ki) * (Ni - K + 1.0) / (K * (Ni - K + 1.0 - d))
                K -= 1
            while True:
                total += w
                s_log += w * invlog[ji + K]
                s_inv += w * inv[ji + K]
                s_k += w * K
                if K < cut:
                    row[3 + K] = w
                if direction == 0:
                    if K >= hi:
                        break
                    w *= (K + 1.0) * (Ni - K - d) / ((K + 1.0 - ki) * (Ni - K))
                    K += 1
                else:
                    if K <= lo:
                        break
                    w *= (K - ki) * (Ni - K + 1.0) / (K * (Ni - K + 1.0 - d))
                    K -= 1
                if w < 1e-30:
                    break
        for t in range(n_p):
            p = ps[t]
            acc = 0.0
            # E[p^K]: the weights again, from the mode while p^K is not negligible
            w = 1.0
            K = mode
            pk = p ** mode
            while True:
                acc += w * pk
                if K >= hi or pk < 1e-30 or w < 1e-30:
                    break
                w *= (K + 1.0) * (Ni - K - d) / ((K + 1.0 - ki) * (Ni - K))
                K += 1
                pk *= p
            w = 1.0
            K = mode
            pk = p ** mode
            while K > lo:
                w *= (K - ki) * (Ni - K + 1.0) / (K * (Ni - K + 1.0 - d))
                K -= 1
                pk /= p
                if w < 1e-30:
                    break
                acc += w * pk
            row[3 + cut + t] = acc / total
        row[0] = s_log / total
        row[1] = s_inv / total
        row[2] = s_k / total
        for c in range(cut):
            row[3 + c] /= total


#: the families these estimates cover (each a sum over relevant items of a term of (j, j + K_j)),
#: and what their ``@x`` is here: "cutoff" an optional cutoff 1..CUT, "persistence" a required one,
#: "" none.  The term functions of :func:`corrected_metrics` and :func:`rank_mapped_metrics`
#: are dicts with exactly these keys.
ESTIMATED = {"ndcg": "cutoff", "ap": "", "rr": "", "nrbp": "persistence", "auc": ""}


def _check_metrics(metrics) -> tuple[list[int], list[float]]:
    """(cutoffs, persistences) named in ``metrics``; raises for a name no estimate covers."""
    cutoffs, ps = [], []
    for name in metrics:
        base, _, arg = name.partition("@")
        takes = ESTIMATED.get(base)
        if takes == "cutoff" and arg:
            c = int(arg)
            if not 1 <= c <= CUT:
                raise ValueError(f"the corrected estimate handles {base}@1..{base}@{CUT}, not {name!r}")
            cutoffs.append(c)
        elif takes == "persistence" and arg:
            ps.append(float(arg))
        elif takes is None or takes == "persistence" or arg:  # unknown, or a parameter missing or not taken
            known = ", ".join(f"{n}, {n}@1..{n}@{CUT}" if t == "cutoff" else f"{n}@p" if t == "persistence" else n
                              for n, t in ESTIMATED.items())
            raise ValueError(f"no corrected estimate for metric {name!r}; available: {known}")
    return cutoffs, ps


def corrected_metrics(user: np.ndarray, k: np.ndarray, n_negatives: np.ndarray, n_sampled: np.ndarray,
                      metrics, gamma: float = 1.0) -> dict[str, np.ndarray]:
    """Corrected estimates of full-catalogue metrics from sampled ranks (the bias-variance family).

    Parameters
    ----------
    user : numpy.ndarray of int, shape (n,)
        User code 0..U-1 of each relevant item.
    k : numpy.ndarray of int, shape (n,)
        Sampled negatives scored above each relevant item (its sampled rank among the
        negatives only).
    n_negatives : numpy.ndarray of int, shape (U,)
        N: negatives of the user's full-catalogue list.
    n_sampled : numpy.ndarray of int, shape (U,)
        m: negatives in the user's sampled list (a uniform subset of the N, m <= N).
    metrics : sequence of str
        ``ndcg``, ``ndcg@c`` (c <= 20), ``ap``, ``rr``, ``nrbp@p``, ``auc``.
    gamma : float in [0, 1], default 1
        Trade-off of the bias-variance correction (module notes): 1 (the default) is the
        posterior mean under a uniform prior on K (minimal mean squared error); 0 is the
        least-squares, minimal-bias end.  gamma < 1 solves one least-squares problem per
        distinct (N, m) (cost about N m^2 each).

    Returns
    -------
    dict
        metric name -> estimate per user (shape (U,)); users without a relevant item get 0.

    Examples
    --------
    With nothing sampled away (m = N) the estimate is the exact metric: one relevant item
    with 2 negatives above it has RR 1/3.

    >>> corrected_metrics(np.array([0]), np.array([2]), np.array([5]), np.array([5]), ["rr"])["rr"].round(4)
    array([0.3333])
    """
    cutoffs, ps = _check_metrics(metrics)
    gamma = _check_gamma(gamma)
    user = np.asarray(user, dtype=np.int64)
    k = np.asarray(k, dtype=np.int64)
    N = np.asarray(n_negatives, dtype=np.int64)
    m = np.asarray(n_sampled, dtype=np.int64)
    n_users = len(N)
    if len(m) != n_users:
        raise ValueError("n_negatives and n_sampled need one entry per user")
    if (m > N).any() or (m < 0).any():
        raise ValueError("each user's sampled negatives must be a subset of its full-catalogue negatives (0 <= m <= N)")
    if len(k) and ((k < 0).any() or (k > m[user]).any()):
        raise ValueError("k counts sampled negatives above an item: it must lie in 0..m")
    # position j of each relevant item among its user's relevant items, by k (= by score)
    order = np.lexsort((k, user))
    user_s, k_s = user[order], k[order]
    R = np.bincount(user_s, minlength=n_users)
    start = np.concatenate([[0], np.cumsum(R)[:-1]])
    j = np.arange(len(user_s)) - start[user_s] + 1
    size = int(N.max(initial=0)) + int(R.max(initial=0)) + 2
    ranks = np.arange(size, dtype=np.float64)
    invlog = np.zeros(size)
    invlog[1:] = 1.0 / np.log2(ranks[1:] + 1.0)
    inv = np.zeros(size)
    inv[1:] = 1.0 / ranks[1:]
    p_arr = np.asarray(ps if ps else [0.5], dtype=np.float64)
    out = np.empty((len(k_s), 3 + CUT + len(p_arr)))
    if len(k_s) and gamma == 1.0:
        _posterior_moments(k_s, j.astype(np.int64), N[user_s], m[user_s], invlog, inv, p_arr, CUT, out)
    elif len(k_s):
        _bias_variance_moments(k_s, j.astype(np.int64), N[user_s], m[user_s], invlog, inv, p_arr, CUT, gamma, out)
    Rf = np.maximum(R, 1).astype(np.float64)

    def per_user(values):
        return np.bincount(user_s, weights=values, minlength=n_users)

    cum_invlog = np.cumsum(invlog)  # cum_invlog[r] = sum_{i=1..r} 1/log2(i + 1)
    has = R > 0

    def ndcg(arg):
        if not arg:
            return per_user(out[:, 0]) / np.where(has, cum_invlog[R], 1.0)
        c = int(arg)
        # sum over K <= c - j of P(K) / log2(1 + j + K)
        term = np.zeros(len(k_s))
        for K in range(c):
            term += np.where(j + K <= c, out[:, 3 + K] * invlog[np.minimum(j + K, size - 1)], 0.0)
        return per_user(term) / np.where(has, cum_invlog[np.minimum(R, c)], 1.0)

    def nrbp(arg):
        p = float(arg)
        t = ps.index(p)
        return per_user((1 - p) * p ** (j - 1.0) * out[:, 3 + CUT + t]) / np.where(has, 1 - p ** Rf, 1.0)

    terms = {"ndcg": ndcg, "nrbp": nrbp,
             "ap": lambda arg: per_user(j * out[:, 1]) / Rf,
             "rr": lambda arg: per_user(np.where(j == 1, out[:, 1], 0.0)),
             "auc": lambda arg: np.where(has, 1.0 - per_user(out[:, 2]) / (Rf * np.maximum(N, 1)), 0.0)}
    return _per_metric(metrics, terms, has)


def _per_metric(metrics, terms: dict, has: np.ndarray) -> dict[str, np.ndarray]:
    """metric name -> ``terms[family](argument after '@')`` per user, 0 for users without a
    relevant item (names checked by ``_check_metrics``)."""
    res = {}
    for name in metrics:
        base, _, arg = name.partition("@")
        res[name] = np.where(has, terms[base](arg), 0.0)
    return res


def _check_gamma(gamma) -> float:
    if isinstance(gamma, bool) or not isinstance(gamma, (int, float, np.integer, np.floating)) \
            or not 0.0 <= float(gamma) <= 1.0:
        raise ValueError(f"gamma must be a number in [0, 1] (0: minimal bias, 1: minimal mean squared error, "
                         f"the posterior mean), got {gamma!r}")
    return float(gamma)


def hypergeometric_matrix(N: int, m: int) -> np.ndarray:
    """A[K, k] = P(k | K): k of the m sampled negatives (drawn without replacement from N)
    lie among the K negatives above an item; shape (N + 1, m + 1)."""
    from scipy.stats import hypergeom

    K = np.arange(N + 1)[:, None]
    return hypergeom.pmf(np.arange(m + 1)[None, :], N, K, m)


def bias_variance_table(N: int, m: int, f: np.ndarray, gamma: float) -> np.ndarray:
    """The correction x_k, k = 0..m, of the terms ``f[K]`` (columns: several terms at once).

    Minimises sum_K p(K) [(E[x | K] - f(K))^2 + gamma Var(x | K)] with p uniform on 0..N
    (module notes), as the least-squares problem
    ``[sqrt((1 - gamma) P) A ; sqrt(gamma c)] x = [sqrt(P / (1 - gamma)) f ; 0]``, c = A^T P 1
    (minimum-norm solution where it is not unique); gamma = 1 gives the posterior mean
    ``A^T f / A^T 1``.

    Parameters
    ----------
    N, m : int
        Negatives of the full list and of the sampled list (0 <= m <= N).
    f : numpy.ndarray, shape (N + 1,) or (N + 1, t)
    gamma : float in [0, 1]

    Returns
    -------
    numpy.ndarray, shape (m + 1,) or (m + 1, t)
    """
    gamma = _check_gamma(gamma)
    A = hypergeometric_matrix(int(N), int(m))
    f = np.asarray(f, dtype=np.float64)
    p = 1.0 / (N + 1)
    c = A.sum(axis=0) * p  # A^T P 1
    if gamma == 1.0:
        return (A.T @ f) / (A.sum(axis=0)[:, None] if f.ndim == 2 else A.sum(axis=0))
    design = np.vstack([math.sqrt((1.0 - gamma) * p) * A, np.diag(np.sqrt(gamma * c))])
    rhs_top = math.sqrt(p / (1.0 - gamma)) * f
    rhs = np.concatenate([rhs_top, np.zeros((m + 1,) + f.shape[1:])])
    return np.linalg.lstsq(design, rhs, rcond=None)[0]


def _bias_variance_moments(k, j, N, m, invlog, inv, ps, cut, gamma, out):
    """``_posterior_moments``' columns, each term estimated with the gamma correction:
    one table per distinct (N, m), the j-dependent terms 1/log2(1 + j + K), 1/(j + K) per j."""
    out[:] = 0.0
    keys = np.stack([N, m], axis=1)
    groups, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    for g, (Ng, mg) in enumerate(groups):
        at = np.flatnonzero(inverse == g)
        Kv = np.arange(Ng + 1)
        fixed = [Kv.astype(np.float64)] + [(Kv == c).astype(np.float64) for c in range(cut)] + \
            [np.asarray(p, dtype=np.float64) ** Kv for p in ps]
        js = np.unique(j[at])
        f = np.column_stack(fixed + [invlog[jj + Kv] for jj in js] + [inv[jj + Kv] for jj in js])
        x = bias_variance_table(int(Ng), int(mg), f, gamma)  # (m + 1, columns)
        rows = x[k[at]]
        out[at, 2] = rows[:, 0]
        out[at, 3:3 + cut] = rows[:, 1:1 + cut]
        out[at, 3 + cut:3 + cut + len(ps)] = rows[:, 1 + cut:1 + cut + len(ps)]
        slot = np.searchsorted(js, j[at])
        base = 1 + cut + len(ps)
        out[at, 0] = rows[np.arange(len(at)), base + slot]
        out[at, 1] = rows[np.arange(len(at)), base + len(js) + slot]


def rank_mapped_metrics(user, k, n_negatives, n_sampled, metrics) -> dict[str, np.ndarray]:
    """The rank-mapping estimate: each relevant item's metric term at its expected full rank.

    The k sampled negatives above the j-th relevant item become K^ = k N / m full-catalogue
    negatives (for one relevant item of sampled rank r among m + 1 items of a catalogue of
    n = N + 1: the full rank 1 + (n - 1)(r - 1)/m), and the metric is evaluated at the
    (fractional) rank j + K^: nDCG sums 1/log2(1 + j + K^), nDCG@c the terms with
    j + K^ <= c, AP j/(j + K^), RR 1/(1 + K^_1), nRBP p^(j - 1 + K^), AUC 1 - sum K^/(R N)
    (unbiased: E[K^ | K] = K).  Inputs as :func:`corrected_metrics`; users without a
    relevant item get 0.

    Examples
    --------
    One relevant item with 1 of 4 sampled negatives above it, among N = 100: K^ = 25, RR 1/26.

    >>> rank_mapped_metrics(np.array([0]), np.array([1]), np.array([100]), np.array([4]), ["rr"])["rr"].round(4)
    array([0.0385])
    """
    _check_metrics(metrics)
    user, k, N, m, order = _checked_ranks(user, k, n_negatives, n_sampled)
    user_s, k_s = user[order], k[order]
    n_users = len(N)
    R = np.bincount(user_s, minlength=n_users)
    start = np.concatenate([[0], np.cumsum(R)[:-1]])
    j = (np.arange(len(user_s)) - start[user_s] + 1).astype(np.float64)
    Kh = k_s * (N[user_s] / np.maximum(m[user_s], 1)).astype(np.float64)
    rank = j + Kh
    has = R > 0
    Rf = np.maximum(R, 1).astype(np.float64)

    def per_user(values):
        return np.bincount(user_s, weights=values, minlength=n_users)

    def idcg(r):
        return np.array([np.sum(1.0 / np.log2(np.arange(2, x + 2))) for x in r]) if len(r) else np.zeros(0)

    def ndcg(arg):
        if not arg:
            return per_user(1.0 / np.log2(1.0 + rank)) / np.where(has, idcg(R), 1.0)
        c = int(arg)
        return per_user(np.where(rank <= c, 1.0 / np.log2(1.0 + rank), 0.0)) / np.where(has, idcg(np.minimum(R, c)), 1)

    def nrbp(arg):
        p = float(arg)
        return per_user((1 - p) * p ** (rank - 1.0)) / np.where(has, 1 - p ** Rf, 1.0)

    terms = {"ndcg": ndcg, "nrbp": nrbp,
             "ap": lambda arg: per_user(j / rank) / Rf,
             "rr": lambda arg: per_user(np.where(j == 1, 1.0 / rank, 0.0)),
             "auc": lambda arg: 1.0 - per_user(Kh) / (Rf * np.maximum(N, 1))}
    return _per_metric(metrics, terms, has)


def _checked_ranks(user, k, n_negatives, n_sampled):
    user = np.asarray(user, dtype=np.int64)
    k = np.asarray(k, dtype=np.int64)
    N = np.asarray(n_negatives, dtype=np.int64)
    m = np.asarray(n_sampled, dtype=np.int64)
    if len(m) != len(N):
        raise ValueError("n_negatives and n_sampled need one entry per user")
    if (m > N).any() or (m < 0).any():
        raise ValueError("each user's sampled negatives must be a subset of its full-catalogue negatives (0 <= m <= N)")
    if len(k) and ((k < 0).any() or (k > m[user]).any()):
        raise ValueError("k counts sampled negatives above an item: it must lie in 0..m")
    return user, k, N, m, np.lexsort((k, user))


#: variant names of :func:`estimated_metrics` besides ``"bv@<gamma>"``
PLAIN_VARIANTS = ("sampled", "rank_mapping")


def estimated_metrics(variant: str, user, k, n_negatives, n_sampled, metrics) -> dict[str, np.ndarray]:
    """Per-user estimates of full-catalogue metrics by one variant.

    Parameters
    ----------
    variant : str
        ``"sampled"`` (the plain metric of the sampled list: k in place of K, AUC over the
        m sampled negatives), ``"rank_mapping"`` (:func:`rank_mapped_metrics`) or
        ``"bv@<gamma>"`` (:func:`corrected_metrics` with that gamma, e.g. ``"bv@1"``,
        ``"bv@0.1"``, ``"bv@0"``).
    user, k, n_negatives, n_sampled, metrics :
        As :func:`corrected_metrics`.
    """
    if variant == "sampled":
        m = np.asarray(n_sampled, dtype=np.int64)
        return corrected_metrics(user, k, m, m, metrics)
    if variant == "rank_mapping":
        return rank_mapped_metrics(user, k, n_negatives, n_sampled, metrics)
    head, at, arg = variant.partition("@")
    if head == "bv" and at:
        try:
            gamma = float(arg)
        except ValueError:
            gamma = None
        if gamma is not None:
            return corrected_metrics(user, k, n_negatives, n_sampled, metrics, gamma=gamma)
    raise ValueError(f"unknown variant {variant!r}; use one of {list(PLAIN_VARIANTS)} or 'bv@<gamma>' with gamma "
                     "in [0, 1], e.g. 'bv@1' (posterior mean) or 'bv@0' (minimal bias)")


#: columns :func:`correction_study` reads
STUDY_COLUMNS = ("system", "user", "metric", "variant", "estimate", "full")


def correction_study(frame) -> "pandas.DataFrame":
    """Bias, RMSE and Kendall tau of each estimate variant against the full-catalogue metric.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per (system, user, metric, variant), columns:

        - ``system``: the recommender (any hashable; at least two for a Kendall tau);
        - ``user``: the user (any hashable);
        - ``metric``: the metric name, e.g. ``"ndcg@10"``;
        - ``variant``: the estimate's name, e.g. ``"sampled"``, ``"rank_mapping"``, ``"bv@1"``;
        - ``estimate``: the variant's value for that user;
        - ``full``: the user's full-catalogue value of the metric (the same in every
          variant's row of a (system, user, metric)).

        Every variant must cover the same (system, user, metric) cells.

    Returns
    -------
    pandas.DataFrame
        One row per (variant, metric), sorted, with columns ``bias`` (mean over systems of
        the system's mean estimate minus its full-catalogue mean), ``abs_bias`` (mean over
        systems of the absolute difference), ``rmse`` (root mean square of estimate - full
        over all (system, user) rows), ``kendall_tau`` and ``tau_p_value``
        (``scipy.stats.kendalltau`` between the systems' mean estimates and their
        full-catalogue means; NaN with fewer than two systems), ``n_systems``, ``n_users``
        (rows per system, averaged).

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"system": ["a", "a", "b", "b"], "user": [1, 2, 1, 2], "metric": "ap",
    ...                   "variant": "sampled", "estimate": [0.5, 0.7, 0.4, 0.4], "full": [0.2, 0.4, 0.3, 0.1]})
    >>> row = correction_study(f).iloc[0]
    >>> float(round(row.bias, 3)), float(round(row.rmse, 3)), float(row.kendall_tau)
    (0.25, 0.265, 1.0)
    """
    import pandas as pd
    from scipy.stats import kendalltau

    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas DataFrame with columns {list(STUDY_COLUMNS)}, got {type(frame)}")
    missing = [c for c in STUDY_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"frame lacks column(s) {missing}; correction_study needs {list(STUDY_COLUMNS)}")
    for col in ("estimate", "full"):
        values = pd.to_numeric(frame[col], errors="coerce")
        if not np.isfinite(values.to_numpy(dtype=np.float64)).all():
            raise ValueError(f"column {col!r} must hold finite numbers; first bad row: "
                             f"{frame.index[~np.isfinite(values.to_numpy(dtype=np.float64))][0]!r}")
    cell = ["system", "user", "metric"]
    if frame.duplicated(cell + ["variant"]).any():
        raise ValueError("frame holds a (system, user, metric, variant) twice; give one row each")
    cover = frame.groupby("variant").apply(lambda g: frozenset(map(tuple, g[cell].to_numpy())), include_groups=False)
    if len(set(cover)) > 1:
        raise ValueError("the variants cover different (system, user, metric) cells; give every variant a row for "
                         "each cell, so that they are compared on the same users")
    if (frame.groupby(cell)["full"].nunique() > 1).any():
        raise ValueError("a (system, user, metric) has different 'full' values in different variants' rows")
    rows = []
    for (variant, metric), g in frame.groupby(["variant", "metric"], sort=True):
        per = g.groupby("system").agg(estimate=("estimate", "mean"), full=("full", "mean"), n=("user", "size"))
        diff = per["estimate"] - per["full"]
        if len(per) >= 2:
            tau, p_value = kendalltau(per["estimate"], per["full"])
        else:
            tau, p_value = float("nan"), float("nan")
        err = g["estimate"].to_numpy(dtype=float) - g["full"].to_numpy(dtype=float)
        rows.append({"variant": variant, "metric": metric, "bias": float(diff.mean()),
                     "abs_bias": float(diff.abs().mean()), "rmse": float(np.sqrt(np.mean(err ** 2))),
                     "kendall_tau": float(tau), "tau_p_value": float(p_value), "n_systems": len(per),
                     "n_users": float(per["n"].mean())})
    return pd.DataFrame(rows)


def rescaled_rank(k, n_negatives, n_sampled) -> np.ndarray:
    """The unbiased estimate K^ = k N / m of the number of full-catalogue negatives above
    an item from the number k of sampled negatives above it (E[K^ | K] = K)."""
    return np.asarray(k, dtype=np.float64) * np.asarray(n_negatives) / np.asarray(n_sampled)


def sampled_ranks(user: np.ndarray, scores: np.ndarray, relevant: np.ndarray, n_users: int):
    """For every relevant row: (its user, the number k of non-relevant rows of the same user
    scored strictly higher).  Rows may come in any order."""
    user = np.asarray(user, dtype=np.int64)
    scores = np.asarray(scores, dtype=np.float64)
    relevant = np.asarray(relevant, dtype=bool)
    neg_u, neg_s = user[~relevant], scores[~relevant]
    order = np.lexsort((neg_s, neg_u))
    neg_u, neg_s = neg_u[order], neg_s[order]
    ptr = np.searchsorted(neg_u, np.arange(n_users + 1))
    pu, ps = user[relevant], scores[relevant]
    k = np.empty(len(pu), dtype=np.int64)
    # per user: negatives above = count - (number <= s)
    for u in np.unique(pu):
        sel = pu == u
        seg = neg_s[ptr[u]:ptr[u + 1]]
        k[sel] = len(seg) - np.searchsorted(seg, ps[sel], side="right")
    return pu, k
