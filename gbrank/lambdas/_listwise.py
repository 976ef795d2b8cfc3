r"""``ListwiseObjective``: smoothed listwise losses as gradient-boosting objectives.

The losses are those of the torch path (``gbrank.torch.listwise_{ndcg,ap,rr,nrbp}_loss``,
Li, Urbano & Hanjalic, SIGIR 2021, Eqs 11-19, with the thesis' bounded variants), plus the
listwise families users know: ApproxNDCG (Qin, Liu & Li 2010), the softmax cross-entropy
and ListNet's top-one loss (Cao et al. 2007), ListMLE (Xia et al. 2008) and NeuralNDCG
(Pobrotyn & Bialobrzeski 2021, without its Sinkhorn scaling).  A boosting library needs,
per row, the derivative g of the loss with respect to the score and a positive h; here both
come from numba kernels: one list at a time (O(n^2) at most), ranges of lists on threads,
one compiled variant per family (its first use compiles that family only).

The smoothed rank of item i, with temperature T, is
R~_i = 1 + sum_{j != i} sigmoid((s_j - s_i) / T).  With a_k = dL/dR~_k, the chain rule
through every R~_k collapses to one sum over the pairs of the list,

    g_i = (1/T) sum_{k != i} q_ik (a_k - a_i),        q_ik = P_ik (1 - P_ik),
                                                      P_ik = sigmoid((s_i - s_k) / T),

and AP's and RR's extra pair sums (over relevant pairs) add terms of the same shape.  The
formulas of each family, the hessian choices and their measurement: docs/objectives.md.

Imports ``gbrank.metrics`` (names, gains) and ``gbrank.bounds`` (bounded losses) only.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from .._validation import as_1d_float, check_bool, check_choice, check_group_ptr, check_number
from ..metrics import GAINS, METRICS, check_bounding, parse, with_listwise
from .._jit import FAST_MATH, compile_notice, jit_variant, kernel_variants
from ._kernels import in_list_ranges
from ._objective import ObjectiveBase

# family codes of the kernel
FAM_NDCG, FAM_AP, FAM_RR, FAM_NRBP, FAM_SOFTMAX, FAM_LISTNET, FAM_LISTMLE, FAM_NEURAL_NDCG = range(8)

#: the paper's smoothed metric families (``listwise_<family>``): family -> kernel code
METRIC_FAMILIES = {"ndcg": FAM_NDCG, "ap": FAM_AP, "rr": FAM_RR, "nrbp": FAM_NRBP}
#: the other listwise families, by name -> kernel code (``approx_ndcg`` is Eq 14, ApproxNDCG)
OTHER_FAMILIES = {"approx_ndcg": FAM_NDCG, "softmax": FAM_SOFTMAX, "listnet": FAM_LISTNET,
                  "listmle": FAM_LISTMLE, "neural_ndcg": FAM_NEURAL_NDCG}
#: every name ``ListwiseObjective`` takes (``listwise_`` prefix optional)
LISTWISE_FAMILIES = tuple(f"listwise_{m}" for m in METRIC_FAMILIES) + tuple(OTHER_FAMILIES)
#: hessian choices (docs/objectives.md has the measurement that chose the default)
HESSIANS = ("bound", "constant", "curvature")
DEFAULT_HESSIAN = "bound"
#: the metric a family smooths, whose bounds a bounded loss uses (as ``gbrank.torch``'s BOUNDED_METRIC)
BOUNDED_METRIC = {n: rec.listwise for n, rec in with_listwise().items()}

_LN2 = math.log(2.0)
#: seconds the first-use notice says a family's kernels take to compile (measured: docs/speed.md)
LISTWISE_COMPILE_SECONDS = 5.0


# ---------------------------------------------------------------------------------------
# kernels


@njit(cache=True)
def _sigmoid(x):
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


@njit(cache=True)
def _softplus(x):
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


@njit(cache=True)
def _gain(label, gain_code):
    return 2.0**label - 1.0 if gain_code == 0 else label


_FAST = FAST_MATH  # reorder sums (vectorised loops); no inf/NaN assumptions


class ListwiseSettings(NamedTuple):
    """The settings of one kernel call, one numba-typed record (``listwise_gradients``)."""

    family: int  # kernel code (METRIC_FAMILIES, OTHER_FAMILIES)
    inv_t: float  # 1 / temperature
    gain_code: int  # 0: 2**l - 1, 1: l
    threshold: float  # label >= threshold is relevant (ap, rr, nrbp)
    log_rr: bool  # rr: -ln RR~ (else -RR~)
    normalize: bool  # nrbp: divide by R (n - R)
    curvature: bool  # also accumulate the curvature form of the hessian (hessian="curvature")


@njit(cache=True)
def _active_first(active):
    """(order, n_act): the rows of ``active`` items first, then the others, each in row order."""
    n = active.shape[0]
    order = np.empty(n, np.int64)
    n_act = 0
    for i in range(n):
        if active[i]:
            order[n_act] = i
            n_act += 1
    j = n_act
    for i in range(n):
        if not active[i]:
            order[j] = i
            j += 1
    return order, n_act


@njit(cache=True, error_model="numpy", fastmath=_FAST)
def _pair_rows(s, st, n_act):
    """For the items a < ``n_act`` (the active ones, first) and every b > a: M[a, b] =
    sigmoid((s_a - s_b) / T) (an n_act x n array; M[b, a] = 1 - M[a, b]), and the smoothed
    ranks R~_a = 1 + sum_{j != a} M[j, a] of the active items (the other entries of the
    returned R~ lack their pairs with one another and are not used).

    With e_i = exp((s_i - max s) / T), M[a, b] = e_a / (e_a + e_b): one exp per item, not per
    pair, unless the scores span more than 600 T (e would leave the normal range), when
    every pair gets its own exp.  ``st``: the call's ``ListwiseSettings`` (T)."""
    n = s.shape[0]
    inv_t = st.inv_t
    m = np.empty((n_act, n))
    r = np.ones(n)
    if n_act == 0:
        return m, r
    top = s.max()
    if (top - s.min()) * inv_t < 600.0:
        e = np.empty(n)
        for i in range(n):
            e[i] = math.exp((s[i] - top) * inv_t)
        for a in range(n_act):
            ea = e[a]
            acc = 0.0
            for b in range(a + 1, n):
                p = ea / (ea + e[b])
                m[a, b] = p
                r[b] += p
                acc += 1.0 - p
            r[a] += acc
        return m, r
    for a in range(n_act):
        sa = s[a]
        acc = 0.0
        for b in range(a + 1, n):
            p = 1.0 / (1.0 + math.exp((s[b] - sa) * inv_t))  # branch-free, so that LLVM vectorises it
            m[a, b] = p
            r[b] += p
            acc += 1.0 - p
        r[a] += acc
    return m, r


@njit(cache=True, error_model="numpy", fastmath=_FAST)
def _rank_rows(m, a, n_act, k_end, curvature, grad, hb, hc):
    """grad_i += sum_{k != i} q_ik (a_k - a_i), q_ik = P_ik (1 - P_ik), over the pairs of an
    item i < ``n_act`` and an item k < ``k_end`` (``a`` is zero past ``n_act``: a pair of two
    inactive items adds nothing); ``a`` is dL/dR~ / T, so each term is the gradient's.  Each
    term's |.| goes to ``hb`` and its (1 - 2 P_ik)(.) to ``hc`` (when ``curvature``), both still
    to be multiplied by 1/T.  One visit per pair (q_ik = q_ki, the terms are opposite)."""
    if curvature:
        for i in range(n_act):
            ai = a[i]
            gi = 0.0
            bi = 0.0
            ci = 0.0
            for k in range(i + 1, k_end):
                p = m[i, k]
                d = p * (1.0 - p) * (a[k] - ai)
                c = (1.0 - 2.0 * p) * d
                gi += d
                bi += abs(d)
                ci += c
                grad[k] -= d
                hb[k] += abs(d)
                hc[k] += c
            grad[i] += gi
            hb[i] += bi
            hc[i] += ci
        return
    for i in range(n_act):
        ai = a[i]
        gi = 0.0
        bi = 0.0
        for k in range(i + 1, k_end):
            p = m[i, k]
            d = p * (1.0 - p) * (a[k] - ai)
            gi += d
            bi += abs(d)
            grad[k] -= d
            hb[k] += abs(d)
        grad[i] += gi
        hb[i] += bi


@njit(cache=True)
def _gains_and_ideal_dcg(y, gain_code):
    """The gains of labels ``y`` and their ideal DCG (the gains sorted, log2 discount)."""
    n = y.shape[0]
    gains = np.empty(n)
    for i in range(n):
        gains[i] = _gain(y[i], gain_code)
    g = np.sort(gains)[::-1]
    total = 0.0
    for r in range(n):
        total += g[r] / math.log2(r + 2.0)
    return gains, total


# The families below take the items of a list with the active ones first (``_active_first``:
# those of positive gain for ndcg, the relevant ones for ap and rr; the others have
# dL/dR~ = 0), ``n_act`` of them, and add into per-list buffers: the gradient, and the two
# hessian forms divided by 1/T (``_permuted_list`` scatters them back).


@njit(cache=True)
def _ndcg(s, gains, idcg, n_act, st, grad, hb, hc):
    n, inv_t = s.shape[0], st.inv_t
    m, r = _pair_rows(s, st, n_act)
    a = np.zeros(n)
    loss = 0.0
    for i in range(n_act):
        lg = math.log2(1.0 + r[i])
        loss -= gains[i] / lg
        a[i] = gains[i] / ((1.0 + r[i]) * _LN2 * lg * lg) / idcg * inv_t
    _rank_rows(m, a, n_act, n, st.curvature, grad, hb, hc)
    return loss / idcg


@njit(cache=True)
def _ap(s, n_rel, st, grad, hb, hc):
    n, inv_t = s.shape[0], st.inv_t
    m, r = _pair_rows(s, st, n_rel)
    a = np.zeros(n)
    b = np.zeros(n)
    loss = 0.0
    for i in range(n_rel):
        num = 1.0  # 1/2 + sum_{j relevant} M[j, i], the j = i term 1/2
        for j in range(i):
            num += m[j, i]
        for j in range(i + 1, n_rel):
            num += 1.0 - m[i, j]
        loss -= num / r[i]
        a[i] = num / (n_rel * r[i] * r[i]) * inv_t
        b[i] = -1.0 / (n_rel * r[i]) * inv_t
    _rank_rows(m, a, n_rel, n, st.curvature, grad, hb, hc)
    _rank_rows(m, b, n_rel, n_rel, st.curvature, grad, hb, hc)  # the numerators' sums over relevant pairs
    return loss / n_rel


@njit(cache=True)
def _rr(s, n_rel, st, grad, hb, hc):
    n, inv_t = s.shape[0], st.inv_t
    m, r = _pair_rows(s, st, n_rel)
    log_t = np.zeros(n_rel)  # ln Q_i = -sum_{j relevant, != i} softplus((s_j - s_i)/T), then - ln R~_i
    for i in range(n_rel):
        for j in range(i + 1, n_rel):
            x = (s[j] - s[i]) * inv_t
            sp = _softplus(x)
            log_t[i] -= sp
            log_t[j] -= sp - x  # softplus(-x) = softplus(x) - x
    top = -np.inf
    for i in range(n_rel):
        log_t[i] -= math.log(r[i])
        top = max(top, log_t[i])
    total = 0.0
    for i in range(n_rel):
        total += math.exp(log_t[i] - top)
    lse = top + math.log(total)
    w = np.zeros(n_rel)  # dL/dT_i * T_i / T, T_i = Q_i / R~_i
    a = np.zeros(n)
    for i in range(n_rel):
        w[i] = (-math.exp(log_t[i] - lse) if st.log_rr else -math.exp(log_t[i])) * inv_t
        a[i] = -w[i] / r[i]
    _rank_rows(m, a, n_rel, n, st.curvature, grad, hb, hc)
    for i in range(n_rel):  # ln Q_i = -sum_{j relevant, != i} softplus((s_j - s_i)/T)
        for k in range(i + 1, n_rel):
            p = m[i, k]  # P_ik; P_ki = 1 - p
            d_i = w[i] * (1.0 - p) - w[k] * p  # the pair's term in g_i
            d_k = w[k] * p - w[i] * (1.0 - p)  # and in g_k
            c = -(w[i] + w[k]) * p * (1.0 - p)
            grad[i] += d_i
            grad[k] += d_k
            hb[i] += abs(d_i)
            hb[k] += abs(d_k)
            hc[i] += c
            hc[k] += c
    return -lse if st.log_rr else -math.exp(lse)


def _permuted_list_template(family_code):
    """``permuted_list`` for one of the ndcg, ap and rr codes (a closure cell: the other
    families' branches are pruned before typing, so they are not compiled)."""
    FAMILY = family_code

    def permuted_list(s, y, st, grad, hb, hc):
        """Loss of one ndcg, ap or rr list: the family on the list's items, active ones first,
        its terms added back to the rows in place."""
        n = s.shape[0]
        if FAMILY == FAM_NDCG:
            gains, idcg = _gains_and_ideal_dcg(y, st.gain_code)
            if not idcg > 0.0:
                return 0.0
            order, n_act = _active_first(gains > 0.0)
        else:
            order, n_act = _active_first(y >= st.threshold)
            if n_act == 0:
                return 0.0
        sp = s[order]
        g = np.zeros(n)
        h = np.zeros(n)
        c = np.zeros(n)
        if FAMILY == FAM_NDCG:
            loss = _ndcg(sp, gains[order], idcg, n_act, st, g, h, c)
        elif FAMILY == FAM_AP:
            loss = _ap(sp, n_act, st, g, h, c)
        else:
            loss = _rr(sp, n_act, st, g, h, c)
        for u in range(n):
            i = order[u]
            grad[i] += g[u]
            hb[i] += h[u] * st.inv_t
            hc[i] += c[u] * st.inv_t
        return loss

    return permuted_list


@njit(cache=True)
def _nrbp(s, y, inv_t, threshold, normalize, grad, hb, hc):
    n = s.shape[0]
    rel = y >= threshold
    n_rel = rel.sum()
    pairs = n_rel * (n - n_rel)
    if pairs == 0:
        return 0.0
    c = 1.0 / pairs if normalize else 1.0
    loss = 0.0
    for i in range(n):
        if not rel[i]:
            continue
        for j in range(n):
            if rel[j]:
                continue
            p = _sigmoid((s[j] - s[i]) * inv_t)  # relevant i below non-relevant j
            loss += p
            q = c * p * (1.0 - p) * inv_t
            grad[j] += q
            grad[i] -= q
            hb[j] += q * inv_t
            hb[i] += q * inv_t
            curv = q * (1.0 - 2.0 * p) * inv_t
            hc[j] += curv
            hc[i] += curv
    return loss * c


@njit(cache=True)
def _softmax_ce(s, target, inv_t, grad, hb, hc):
    """-sum_i target_i ln softmax(s / T)_i with sum(target) = 1."""
    n = s.shape[0]
    top = s.max() * inv_t
    z = 0.0
    for i in range(n):
        z += math.exp(s[i] * inv_t - top)
    lz = top + math.log(z)
    loss = 0.0
    for i in range(n):
        p = math.exp(s[i] * inv_t - lz)
        if target[i] > 0.0:
            loss -= target[i] * (s[i] * inv_t - lz)
        grad[i] += (p - target[i]) * inv_t
        h = p * (1.0 - p) * inv_t * inv_t
        hb[i] += h
        hc[i] += h
    return loss


@njit(cache=True)
def _softmax(s, y, inv_t, grad, hb, hc):
    total = y.sum()
    if not total > 0.0:
        return 0.0
    return _softmax_ce(s, y / total, inv_t, grad, hb, hc)


@njit(cache=True)
def _listnet(s, y, inv_t, grad, hb, hc):
    e = np.exp(y - y.max())
    return _softmax_ce(s, e / e.sum(), inv_t, grad, hb, hc)


@njit(cache=True)
def ideal_order(s, y):
    """The order ListMLE's likelihood is of: labels descending, ties in labels by score
    descending (the most likely of the orders consistent with the labels), then by row."""
    n = s.shape[0]
    order = np.argsort(-s, kind="mergesort")
    labels = np.empty(n)
    for r in range(n):
        labels[r] = -y[order[r]]
    return order[np.argsort(labels, kind="mergesort")]


@njit(cache=True)
def _listmle(s, y, inv_t, grad, hb, hc):
    n = s.shape[0]
    order = ideal_order(s, y)
    z = np.empty(n)
    for r in range(n):
        z[r] = s[order[r]] * inv_t
    suffix = np.empty(n)  # ln sum_{m >= r} exp(z_m)
    acc = -np.inf
    for r in range(n - 1, -1, -1):
        hi = max(acc, z[r])
        acc = hi + math.log(math.exp(acc - hi) + math.exp(z[r] - hi))
        suffix[r] = acc
    loss = 0.0
    for r in range(n):
        loss += suffix[r] - z[r]
        g = -1.0
        h = 0.0
        for m in range(r + 1):
            p = math.exp(z[r] - suffix[m])
            g += p
            h += p * (1.0 - p)
        i = order[r]
        grad[i] += g * inv_t
        hb[i] += h * inv_t * inv_t
        hc[i] += h * inv_t * inv_t
    return loss


@njit(cache=True)
def _neural_ndcg(s, y, inv_t, gain_code, grad, hb, hc):
    n = s.shape[0]
    gains, idcg = _gains_and_ideal_dcg(y, gain_code)
    if not idcg > 0.0:
        return 0.0
    spread = np.zeros(n)  # B_i = sum_j |s_i - s_j|
    for i in range(n):
        for j in range(n):
            spread[i] += abs(s[i] - s[j])
    u = np.zeros(n)  # sum_r dL/dZ_ri
    direct = np.zeros(n)  # sum_r (n + 1 - 2r) dL/dZ_ri
    hdirect = np.zeros(n)
    z = np.empty(n)
    p = np.empty(n)
    loss = 0.0
    for r in range(1, n + 1):
        c = n + 1.0 - 2.0 * r
        top = -np.inf
        for i in range(n):
            z[i] = (c * s[i] - spread[i]) * inv_t
            top = max(top, z[i])
        tot = 0.0
        for i in range(n):
            p[i] = math.exp(z[i] - top)
            tot += p[i]
        value = 0.0
        for i in range(n):
            p[i] /= tot
            value += p[i] * gains[i]
        d = 1.0 / math.log2(1.0 + r) / idcg
        loss -= d * value
        for i in range(n):
            w = -d * p[i] * (gains[i] - value)
            u[i] += w
            direct[i] += c * w
            hdirect[i] += abs(c * w)
    for k in range(n):
        g = direct[k]
        h = hdirect[k]
        for j in range(n):
            if s[k] > s[j]:
                g -= u[k] + u[j]
                h += abs(u[k] + u[j])
            elif s[k] < s[j]:
                g += u[k] + u[j]
                h += abs(u[k] + u[j])
        grad[k] += g * inv_t
        hb[k] += h * inv_t * inv_t
        hc[k] += h * inv_t * inv_t
    return loss


def _lists_range_template(family_code):
    """``lists_range`` for one family code (a closure cell: numba's on-disk cache keeps one
    entry per family, and a family's first use compiles its own kernels only)."""
    FAMILY = family_code

    def lists_range(st, s, y, ptr, q0, q1, loss, grad, hb, hc):
        """The lists ``q0 <= q < q1`` (list q is rows ``ptr[q]:ptr[q + 1]``): their losses into
        ``loss``, their g and hessian forms added into ``grad``, ``hb``, ``hc``."""
        if st.family != FAMILY:
            raise ValueError("lists_range: called with another family code than its variant's")
        for q in range(q0, q1):
            a, b = ptr[q], ptr[q + 1]
            s_q, y_q, g_q, hb_q, hc_q = s[a:b], y[a:b], grad[a:b], hb[a:b], hc[a:b]
            if FAMILY == FAM_NDCG:
                loss[q] = permuted_list(s_q, y_q, st, g_q, hb_q, hc_q)
            elif FAMILY == FAM_AP:
                loss[q] = permuted_list(s_q, y_q, st, g_q, hb_q, hc_q)
            elif FAMILY == FAM_RR:
                loss[q] = permuted_list(s_q, y_q, st, g_q, hb_q, hc_q)
            elif FAMILY == FAM_NRBP:
                loss[q] = _nrbp(s_q, y_q, st.inv_t, st.threshold, st.normalize, g_q, hb_q, hc_q)
            elif FAMILY == FAM_SOFTMAX:
                loss[q] = _softmax(s_q, y_q, st.inv_t, g_q, hb_q, hc_q)
            elif FAMILY == FAM_LISTNET:
                loss[q] = _listnet(s_q, y_q, st.inv_t, g_q, hb_q, hc_q)
            elif FAMILY == FAM_LISTMLE:
                loss[q] = _listmle(s_q, y_q, st.inv_t, g_q, hb_q, hc_q)
            else:
                loss[q] = _neural_ndcg(s_q, y_q, st.inv_t, st.gain_code, g_q, hb_q, hc_q)

    return lists_range


@kernel_variants
def lists_kernel(family_code: int):
    """The compiled loop over a range of lists of one family (its kernels only; numba's
    on-disk cache keeps each, ``scripts/warmup.py`` fills it)."""
    tag = f"family_{family_code}"
    callees = {}
    if family_code in (FAM_NDCG, FAM_AP, FAM_RR):
        callees["permuted_list"] = jit_variant(_permuted_list_template(family_code), tag, {})
    return jit_variant(_lists_range_template(family_code), tag, {"nogil": True, "cache": True}, **callees)


def listwise_lists(st: ListwiseSettings, s, y, ptr):
    """(loss per list, g, bound hessian, curvature) of every list ``ptr[q]:ptr[q + 1]``, in
    ranges of lists on ``numba.get_num_threads()`` threads (``gbrank.lambdas._kernels``'s
    pool); each list is computed alone, so the values do not depend on the thread count.
    The curvature form is zero unless ``st.curvature``."""
    n = s.shape[0]
    grad = np.zeros(n)
    hb = np.zeros(n)
    hc = np.zeros(n)
    loss = np.zeros(ptr.shape[0] - 1)
    args = (st, s, y, ptr)
    kernel = lists_kernel(int(st.family))
    name = next(k for k, v in {**METRIC_FAMILIES, **OTHER_FAMILIES}.items() if v == st.family)
    name = f"listwise_{name}" if name in METRIC_FAMILIES else name
    compile_notice(kernel, f"the {name} objective kernels", args + (0, len(loss), loss, grad, hb, hc),
                   LISTWISE_COMPILE_SECONDS)
    in_list_ranges(kernel, len(loss), args, (loss, grad, hb, hc))
    return loss, grad, hb, hc




def listwise_gradients(family: int, scores, labels, group_ptr, *, temperature: float = 1.0, gain: str = "exp",
                       relevance_threshold: float = 1.0, log: bool = False, normalize: bool = False,
                       curvature: bool = True):
    """Typed, validated call of the kernel: ``(loss per list, grad, bound hessian, curvature)``.

    ``family``: a kernel code (``METRIC_FAMILIES`` / ``OTHER_FAMILIES`` values); ``curvature``:
    whether to compute the curvature form (else zeros, a lighter pass)."""
    if family not in range(8):
        raise ValueError(f"family must be a kernel code 0..7 (METRIC_FAMILIES, OTHER_FAMILIES), got {family!r}")
    s = np.ascontiguousarray(as_1d_float(scores, "scores"), dtype=np.float64)
    y = np.ascontiguousarray(as_1d_float(labels, "labels"), dtype=np.float64)
    if len(s) != len(y):
        raise ValueError(f"scores and labels must have one entry per row, got {len(s)} and {len(y)}")
    if not np.isfinite(s).all():
        bad = int(np.flatnonzero(~np.isfinite(s))[0])
        raise ValueError(f"scores must be finite, found {s[bad]!r} at row {bad}; a diverged model gives NaN "
                         "scores: lower the learning rate or raise the hessian floor")
    ptr = np.ascontiguousarray(check_group_ptr(group_ptr, len(s)), dtype=np.int64)
    t = check_number(temperature, "temperature")
    check_choice(gain, "gain", GAINS)
    st = ListwiseSettings(int(family), 1.0 / t, 0 if gain == "exp" else 1,
                          float(check_number(relevance_threshold, "relevance_threshold")), bool(log), bool(normalize),
                          bool(curvature))
    return listwise_lists(st, s, y, ptr)


# ---------------------------------------------------------------------------------------
# names


def is_listwise_name(name) -> bool:
    """True for a name ``ListwiseObjective`` takes: ``listwise_<ndcg|ap|rr|nrbp>[@p][+bounding]``
    or one of ``approx_ndcg, softmax, listnet, listmle, neural_ndcg`` (``listwise_`` prefix
    optional)."""
    if not isinstance(name, str):
        return False
    text = name.strip().lower()
    body = text.partition("+")[0].partition("@")[0]
    return body.startswith("listwise_") or body in OTHER_FAMILIES


def _families() -> dict:
    """The metric families of the listwise losses, as the parser takes them: nRBP with its
    persistence (optional: the loss does not depend on p), no cutoff for the others."""
    from dataclasses import replace

    return {n: replace(rec, param="p" if rec.param == "p" else "") for n, rec in with_listwise().items()
            if n in METRIC_FAMILIES}


def parse_listwise(name: str, bounding=None) -> tuple[str, float | None, str | None]:
    """(family, p, bounding) of a listwise objective name such as ``"listwise_nrbp@0.9+minmax"``,
    ``"ndcg"``, ``"listwise_ap+expectation"`` or ``"listmle"``.

    The metric families go through the one parser, ``gbrank.metrics.parse``; a bounding
    given both in the name and as ``bounding`` must agree."""
    if not isinstance(name, str):
        raise TypeError(f"a listwise objective is named by a string such as 'listwise_ndcg', got {name!r}")
    text = name.strip().lower()
    body, plus, suffix = text.partition("+")
    bare = body[len("listwise_"):] if body.startswith("listwise_") else body
    if bare in OTHER_FAMILIES:
        if plus or bounding is not None:
            raise ValueError(f"{bare!r} takes no bounding (the bounded losses are listwise_ndcg, listwise_ap, "
                             f"listwise_rr and listwise_nrbp); got {name!r}" +
                             (f" with bounding={bounding!r}" if bounding is not None else ""))
        return bare, None, None
    if not body.startswith("listwise_"):
        text = "listwise_" + text
    try:
        spec = parse(text, families=_families(), bounding=True, paradigm=True, role="listwise objective",
                     required=False)
    except ValueError as exc:
        raise ValueError(f"{exc}; the other listwise families: {', '.join(OTHER_FAMILIES)}") from None
    if spec.paradigm != "listwise":
        raise ValueError(f"{name!r} is a {spec.paradigm} name; ListwiseObjective takes listwise_* names "
                         f"({', '.join(LISTWISE_FAMILIES)}); use LambdaObjective for LambdaRank")
    named = spec.bounding
    if bounding is not None:
        bounding = check_bounding(bounding)
        if named is not None and named != bounding:
            raise ValueError(f"bounding is given twice and differs: '+{named}' and bounding={bounding!r}")
    return spec.name, (spec.p or None), named or bounding


# ---------------------------------------------------------------------------------------
# the objective


class ListwiseObjective(ObjectiveBase):
    r"""A smoothed listwise loss as a gradient-boosting objective.

    Per list (query) of scores s and labels l the loss is one of::

        ndcg (= approx_ndcg)  -(1/IDCG) sum_i gain(l_i) / log2(1 + R~_i)                 (Eq 14)
        ap                    -(1/R) sum_{i rel} (1 + sum_{j rel, != i} P_ji) / R~_i       (Eq 15)
        rr                    -ln sum_{i rel} prod_{j rel, != i} (1 - P_ji) / R~_i         (Eq 16, log=True)
        nrbp                  sum_{i rel} sum_{j not rel} P_ji                              (Eq 19)
        softmax               -sum_i (l_i / sum l) ln softmax(s / T)_i
        listnet               -sum_i softmax(l)_i ln softmax(s / T)_i                 (top-one, Cao 2007)
        listmle               -ln PL(ideal order | s / T)                              (Xia et al. 2008)
        neural_ndcg           -(1/IDCG) sum_r (P^ gain)_r / log2(1 + r)   (NeuralSort P^, no Sinkhorn)

    with P_ji = sigmoid((s_j - s_i) / T) and R~_i = 1 + sum_{j != i} P_ji; exactly the losses
    of ``gbrank.torch.listwise_*_loss`` (and of ``make_loss(..., training_defaults=True)``),
    summed over the lists.  ``gradients`` returns dL/ds and a positive hessian.

    Parameters
    ----------
    metric : str, default "ndcg"
        ``"ndcg"``, ``"ap"``, ``"rr"``, ``"nrbp"`` (also written ``"listwise_ndcg"``, with a
        bounding suffix ``"listwise_ap+minmax"``, and nRBP with the persistence of the metric
        it aims at, ``"listwise_nrbp@0.9"``: the loss itself does not depend on p), or one of
        ``"approx_ndcg"``, ``"softmax"``, ``"listnet"``, ``"listmle"``, ``"neural_ndcg"``.
    temperature : float, default 1.0
        T of the sigmoids (smoothed ranks) or of the softmax (s / T); NeuralSort's tau.
    bounding : {None, "minmax", "expectation", "expectation_max", "distribution"}
        Map each list's smoothed metric value with the list's bounds (thesis Ch. 3;
        ``gbrank.torch.bounded_listwise_loss``): ndcg, ap, rr and nrbp only.
    hessian : {"bound", "constant", "curvature"}, default "bound"
        The positive h the library divides by (the families with a softmax, softmax, listnet
        and listmle, always use their exact diagonal p (1 - p) / T^2 sums).  With each
        gradient written as a sum of pair terms t_ik, ``"bound"`` is sum_k |t_ik| / T (it
        bounds the curvature of every sigmoid term, |sigma''| <= sigma'); ``"constant"`` is
        that value's mean over the list, given to every item; ``"curvature"`` is the
        absolute exact diagonal with the loss's own second derivative dropped,
        |sum_k t_ik (1 - 2 P_ik)| / T (the exact diagonal for nrbp).  Chosen on MQ2008:
        docs/objectives.md.
    gain : {"exp", "linear"}
        nDCG's gain 2**l - 1 or l (ndcg, approx_ndcg, neural_ndcg).
    relevance_threshold : float, default 1
        ``label >= relevance_threshold`` is relevant (ap, rr, nrbp).
    log : bool, optional
        rr only: -ln RR~ (True, the estimators' default, ``gbrank.torch.DEFAULTS``) or Eq 16
        itself, -RR~ (False; the only form with a bounding).  None: True without a bounding.
    normalize : bool, default False
        nrbp only: divide by R (n - R) (1 - smoothed AUC); the min-max bounding already.
    hessian_floor : float, default 1e-9
        Lower bound of every hessian (a list without a relevant item has h = 0 otherwise).

    Examples
    --------
    >>> obj = ListwiseObjective("ndcg")
    >>> g, h = obj.gradients([0.0, 1.0, 2.0], [1, 0, 0], [0, 3])
    >>> bool(g[0] < 0 < g[2] and (h > 0).all() and abs(g.sum()) < 1e-12)
    True
    """

    def __init__(self, metric="ndcg", temperature=1.0, bounding=None, hessian=DEFAULT_HESSIAN, gain="exp",
                 relevance_threshold=1, log=None, normalize=False, hessian_floor=1e-9):
        self.metric, self.p, self.bounding = parse_listwise(metric, bounding)
        self.temperature = check_number(temperature, "temperature")
        check_choice(hessian, "hessian", HESSIANS)
        self.hessian = hessian
        check_choice(gain, "gain", GAINS)
        self.gain = gain
        self.relevance_threshold = check_number(relevance_threshold, "relevance_threshold")
        if log is not None:
            check_bool(log, "log")
            if self.family_code != FAM_RR:  # an option of the rr loss's kernel
                raise ValueError(f"log={log!r} is an option of the rr loss (-ln RR~), not of {self.metric!r}; "
                                 "leave log=None")
            if log and self.bounding is not None:
                raise ValueError("log=True (-ln RR~) does not combine with a bounding, which maps the smoothed RR "
                                 "itself; drop log or the bounding")
        self.log = log
        self.normalize = check_bool(normalize, "normalize")
        if self.normalize and self.family_code != FAM_NRBP:  # an option of the nrbp loss's kernel
            raise ValueError(f"normalize=True divides the nrbp loss by R (n - R); {self.metric!r} takes no "
                             "normalize")
        if self.normalize and self.bounding is not None:
            raise ValueError("normalize=True is the min-max bounding already; use bounding='minmax' instead")
        self.hessian_floor = check_number(hessian_floor, "hessian_floor", low_inclusive=True)
        self._prepared = None

    # -- description --------------------------------------------------------------------
    def get_params(self) -> dict:
        return {k: getattr(self, k) for k in ("metric", "p", "temperature", "bounding", "hessian", "gain",
                                              "relevance_threshold", "log", "normalize", "hessian_floor")}

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_prepared"] = None
        return state

    def __repr__(self) -> str:
        defaults = ListwiseObjective().get_params()
        shown = [f"metric={self.name!r}"] + [f"{k}={v!r}" for k, v in self.get_params().items()
                                             if k not in ("metric", "p", "bounding") and v != defaults[k]]
        return f"ListwiseObjective({', '.join(shown)})"

    @property
    def name(self) -> str:
        """Canonical name, e.g. ``"listwise_nrbp@0.9+minmax"`` or ``"listmle"``."""
        if self.metric in OTHER_FAMILIES:
            return self.metric
        base = f"listwise_{self.metric}" + (f"@{self.p:g}" if self.p else "")
        return base if self.bounding is None else f"{base}+{self.bounding}"

    @property
    def family_code(self) -> int:
        return {**METRIC_FAMILIES, **OTHER_FAMILIES}[self.metric]

    @property
    def log_rr(self) -> bool:
        """Whether rr is -ln RR~ (the default without a bounding) or -RR~."""
        return self.family_code == FAM_RR and (self.bounding is None if self.log is None else self.log)

    # -- the computation ----------------------------------------------------------------
    def loss(self, scores, labels, group_ptr) -> np.ndarray:
        """The loss of each list (bounded when ``bounding`` is set), float64 (n_lists,)."""
        raw, *_ = self._raw(scores, labels, group_ptr, curvature=False)
        y, ptr = as_1d_float(labels, "labels"), np.asarray(group_ptr, dtype=np.int64)
        if self.bounding is None:
            return raw
        value, _ = self._bounded(raw, y, ptr)
        return value

    def _raw(self, scores, labels, group_ptr, curvature: bool):
        return listwise_gradients(self.family_code, scores, labels, group_ptr, temperature=self.temperature,
                                  gain=self.gain, relevance_threshold=self.relevance_threshold, log=self.log_rr,
                                  normalize=self.normalize, curvature=curvature)

    def gradients(self, scores, labels, group_ptr, weights=None):
        """Gradient and hessian of the summed loss with respect to ``scores``: the arguments and
        results of :meth:`gbrank.LambdaObjective.gradients` (scores, labels, query boundaries,
        optional weights per row or per query; float64 g and h per row).  Lists with nothing
        to rank (one item; no relevant item or no gain) get g = 0 and h = ``hessian_floor``."""
        s, y, ptr = self._checked_lists(scores, labels, group_ptr)
        curvature = self.hessian == "curvature" and self.family_code < FAM_SOFTMAX
        raw, grad, hb, hc = self._raw(s, y, ptr, curvature)
        hess = np.abs(hc) if curvature else hb
        if self.bounding is not None:
            _, factor = self._bounded(raw, y, ptr)
            per_row = np.repeat(factor, np.diff(ptr))
            grad *= per_row
            hess *= np.abs(per_row)
        if self.hessian == "constant" and self.family_code < FAM_SOFTMAX:
            sizes = np.diff(ptr)
            sums = np.add.reduceat(hess, ptr[:-1]) if len(hess) else hess
            sums = np.where(sizes > 0, sums, 0.0)
            hess = np.repeat(sums / np.maximum(sizes, 1), sizes)
        from ._objective import weigh_and_floor

        return weigh_and_floor(grad, hess, weights, ptr, self.hessian_floor)

    def _bounded(self, raw: np.ndarray, labels: np.ndarray, ptr: np.ndarray):
        """(bounded loss per list, its derivative with respect to the raw loss)."""
        bounds = self._bounds(labels, ptr)
        higher = METRICS[BOUNDED_METRIC[self.metric]].higher_is_better
        value = -raw if higher else raw  # the smoothed metric value M~
        deg = np.asarray(bounds.degenerate, dtype=bool)
        if self.bounding == "distribution":
            cdf, x0, x1 = bounds.cdf, bounds.cdf_x0, bounds.cdf_x1
            cells = cdf.shape[1] - 1
            width = x1 - x0
            ok = width > 0
            t = np.where(ok, (value - x0) / np.where(ok, width, 1.0) * cells, 0.0)
            inside = (t >= 0) & (t <= cells)
            tc = np.clip(t, 0.0, cells)
            j = np.clip(np.floor(tc).astype(np.int64), 0, cells - 1)
            f = tc - j
            rows = np.arange(len(value))
            lo, hi = cdf[rows, j], cdf[rows, j + 1]
            mapped = np.where(ok, lo + f * (hi - lo), (value >= x0).astype(float))
            slope = np.where(ok & inside, (hi - lo) * cells / np.where(ok, width, 1.0), 0.0)
        else:
            if self.bounding == "minmax":
                shift, scale = bounds.minimum, bounds.maximum - bounds.minimum
            elif self.bounding == "expectation":
                shift, scale = np.zeros_like(value), bounds.expectation
            else:
                shift, scale = bounds.expectation, bounds.maximum - bounds.expectation
            ok = ~deg & (scale > 0)
            mapped = np.where(ok, (value - shift) / np.where(ok, scale, 1.0), 0.0)
            slope = np.where(ok, 1.0 / np.where(ok, scale, 1.0), 0.0)
            deg = deg | ~ok
        mapped = np.where(deg, 0.0, mapped)
        slope = np.where(deg, 0.0, slope)
        # L = -map(M~) with M~ = -raw (higher is better), or map(raw): dL/draw = map'(M~) either way
        return (-mapped if higher else mapped), slope

    def _bounds(self, labels, ptr):
        """``gbrank.bounds.prepare`` of the metric the loss smooths, kept until the labels change."""
        cached = self._prepared
        if cached is None or not (np.array_equal(cached[0], labels) and np.array_equal(cached[1], ptr)):
            from ..bounds import prepare

            metric = BOUNDED_METRIC[self.metric]
            options = dict(gain=self.gain) if METRICS[metric].graded else \
                dict(relevance_threshold=self.relevance_threshold)
            lb = prepare(metric, labels, ptr, distribution=self.bounding == "distribution", **options)
            cached = self._prepared = (labels.copy(), np.array(ptr, copy=True), lb)
        return cached[2]
