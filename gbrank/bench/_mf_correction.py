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
"""

from __future__ import annotations

import math

import numba
import numpy as np

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


def _check_metrics(metrics) -> tuple[list[int], list[float]]:
    cutoffs, ps = [], []
    for name in metrics:
        base, _, arg = name.partition("@")
        if base == "ndcg" and arg:
            c = int(arg)
            if not 1 <= c <= CUT:
                raise ValueError(f"the corrected estimate handles ndcg@1..ndcg@{CUT}, not {name!r}")
            cutoffs.append(c)
        elif base == "nrbp" and arg:
            ps.append(float(arg))
        elif name not in ("ndcg", "ap", "rr", "auc"):
            raise ValueError(f"no corrected estimate for metric {name!r}; available: ndcg, ndcg@1..ndcg@{CUT}, "
                             "ap, rr, nrbp@p, auc")
    return cutoffs, ps


def corrected_metrics(user: np.ndarray, k: np.ndarray, n_negatives: np.ndarray, n_sampled: np.ndarray,
                      metrics) -> dict[str, np.ndarray]:
    """Posterior-mean (corrected) estimates of full-catalogue metrics from sampled ranks.

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
    if len(k_s):
        _posterior_moments(k_s, j.astype(np.int64), N[user_s], m[user_s], invlog, inv, p_arr, CUT, out)
    Rf = np.maximum(R, 1).astype(np.float64)

    def per_user(values):
        return np.bincount(user_s, weights=values, minlength=n_users)

    cum_invlog = np.cumsum(invlog)  # cum_invlog[r] = sum_{i=1..r} 1/log2(i + 1)
    res = {}
    has = R > 0
    for name in metrics:
        base, _, arg = name.partition("@")
        if name == "ndcg":
            v = per_user(out[:, 0]) / np.where(has, cum_invlog[R], 1.0)
        elif base == "ndcg":
            c = int(arg)
            # sum over K <= c - j of P(K) / log2(1 + j + K)
            term = np.zeros(len(k_s))
            for K in range(c):
                term += np.where(j + K <= c, out[:, 3 + K] * invlog[np.minimum(j + K, size - 1)], 0.0)
            v = per_user(term) / np.where(has, cum_invlog[np.minimum(R, c)], 1.0)
        elif name == "ap":
            v = per_user(j * out[:, 1]) / Rf
        elif name == "rr":
            v = per_user(np.where(j == 1, out[:, 1], 0.0))
        elif name == "auc":
            v = np.where(has, 1.0 - per_user(out[:, 2]) / (Rf * np.maximum(N, 1)), 0.0)
        else:  # nrbp@p
            p = float(arg)
            t = ps.index(p)
            v = per_user((1 - p) * p ** (j - 1.0) * out[:, 3 + CUT + t]) / np.where(has, 1 - p ** Rf, 1.0)
        res[name] = np.where(has, v, 0.0)
    return res


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
