"""LambdaRank gradients: a kernel for one list and a parallel loop over lists.

For a pair (i, j) of one list with l_i > l_j, d = s_i - s_j and weight |dM_ij|
(``_deltas.delta``, optionally divided by eps + |d|):

    rho     = 1 / (1 + exp(sigma * d))
    g_i    -= sigma * |dM| * rho            g_j += sigma * |dM| * rho
    h_i, h_j += sigma**2 * |dM| * rho * (1 - rho)           (hessian="lightgbm")
             or 2 * |dM| * max(rho * (1 - rho), 1e-16)       (hessian="xgboost")

Pairs are the pairs of different labels with at least one member in the current top
``trunc`` positions (all pairs when ``trunc <= 0``); the current ranking is a stable
descending sort of the scores, so tied scores keep their input order (as LightGBM and
XGBoost).  With list normalisation the list's g and h are multiplied by
log2(1 + S) / S, S = sum over pairs of 2 * sigma * |dM| * rho.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ._deltas import delta, prepare

HESS_LIGHTGBM, HESS_XGBOOST = 0, 1
_TABLE_BINS = 1024 * 1024


@njit(cache=True)
def _rho(d, sigma, table):
    """(rho, rho * (1 - rho)) with rho = 1 / (1 + exp(sigma * d)).

    Exact mode evaluates rho (1 - rho) = e / (1 + e)**2 without cancellation, so a badly
    mis-ordered pair keeps a positive hessian while its gradient is largest.  Table mode
    reproduces LightGBM's 2**20-bin lookup table and its rho * (1 - rho).
    """
    if table:
        lo = -50.0 / sigma / 2.0
        factor = _TABLE_BINS / (-2.0 * lo)
        if d <= lo:
            x = lo
        elif d >= -lo:
            x = (_TABLE_BINS - 1) / factor + lo
        else:
            x = int((d - lo) * factor) / factor + lo
        rho = 1.0 / (1.0 + math.exp(x * sigma))
        return rho, rho * (1.0 - rho)
    x = sigma * d
    if x >= 0.0:
        e = math.exp(-x)
        rho = e / (1.0 + e)
        return rho, rho / (1.0 + e)
    e = math.exp(x)
    rho = 1.0 / (1.0 + e)
    return rho, e * rho * rho


@njit(cache=True)
def list_gradients(scores, labels, metric, p, sigma, trunc, score_norm, eps, list_norm,
                   hess_mode, table, gain_code, threshold, grad, hess):
    """Gradients and hessians of one list, written into ``grad`` and ``hess``."""
    n = scores.shape[0]
    for r in range(n):
        grad[r] = 0.0
        hess[r] = 0.0
    if n < 2:
        return
    order = np.argsort(-scores, kind="mergesort")
    s = scores[order]
    lab = labels[order]
    aux = np.empty((3, n))
    norm, first, second = prepare(metric, lab, gain_code, threshold, p, trunc, aux)
    if norm == 0.0:
        return
    g = np.zeros(n)
    h = np.zeros(n)
    by_score = score_norm and s[0] != s[n - 1]
    top = n - 1 if trunc <= 0 or trunc > n - 1 else trunc
    total = 0.0
    for i in range(top):
        li = lab[i]
        for j in range(i + 1, n):
            lj = lab[j]
            if li == lj:
                continue
            dm = delta(metric, i, j, aux, norm, first, second)
            if dm == 0.0:
                continue
            if li > lj:
                hi, lo = i, j
            else:
                hi, lo = j, i
            d = s[hi] - s[lo]
            if by_score:
                dm /= eps + abs(d)
            rho, q = _rho(d, sigma, table)
            lam = sigma * dm * rho
            if hess_mode == HESS_LIGHTGBM:
                hh = sigma * sigma * dm * q
            else:
                hh = 2.0 * dm * max(q, 1e-16)
            g[hi] -= lam
            g[lo] += lam
            h[hi] += hh
            h[lo] += hh
            total += 2.0 * lam
    factor = 1.0
    if list_norm and total > 0.0:
        factor = math.log2(1.0 + total) / total
    for r in range(n):
        grad[order[r]] = g[r] * factor
        hess[order[r]] = h[r] * factor


@njit(parallel=True, cache=True)
def all_gradients(scores, labels, ptr, metric, p, sigma, trunc, score_norm, eps, list_norm,
                  hess_mode, table, gain_code, threshold):
    """Gradients and hessians of every list; list q is rows ``ptr[q]:ptr[q+1]``."""
    n = scores.shape[0]
    grad = np.empty(n)
    hess = np.empty(n)
    for q in prange(ptr.shape[0] - 1):
        a, b = ptr[q], ptr[q + 1]
        list_gradients(scores[a:b], labels[a:b], metric, p, sigma, trunc, score_norm, eps,
                       list_norm, hess_mode, table, gain_code, threshold, grad[a:b], hess[a:b])
    return grad, hess
