r"""The CPU engine of the BPR and WARP losses: a whole SGD epoch in numba, on the factor matrices.

:func:`sgd_epoch` is the twin of ``_training.train_epoch`` for ``MFRanker(loss="bpr" |
"warp", optimizer="sgd")`` on the CPU: the same lists (the task's positives and freshly
drawn negatives), the same batches (``bucket_batches`` with the same ``rng``), the same
per-list losses (:func:`gbrank.torch.bpr_loss`, :func:`gbrank.torch.warp_loss`, with
WARP's uniforms drawn from the same ``generator`` in the same shapes), and the same update
rule: per batch of B lists, the gradient of ``sum_b loss_b / B`` at the current factors,
then one SGD step ``w <- w - lr (grad + weight_decay w)`` on every row of both matrices.
It skips what torch spends on tiny batches (padding, ``[B, P, L]`` pair blocks, gathers,
autograd, dense embedding gradients).

Per batch, with s_l = <U_u, V_{i_l}> and g_l = d(sum_b loss_b / B) / d s_l:

* the lists of the batch are processed in parallel (``prange``; the users of a batch are
  distinct): their scores, per-list loss and g_l, and dU_u = sum_l g_l V_{i_l};
* then, in one thread and list order (items are shared between users), V_{i_l} -= lr g_l U_u;
  then U_u -= lr dU_u.  Both gradients are taken at the factors before the step, as
  autograd's are, so the result does not depend on the number of threads.

BPR per list (P positives, N negatives): g_i = -(1 / (P N B)) sum_j sigmoid(s_j - s_i) for a
positive i, g_j = (1 / (P N B)) sum_i sigmoid(s_j - s_i) for a negative j; the P N terms use
exp(s_j - s_i) = exp(s_j - c) exp(c - s_i) (P + N exponentials per list instead of P N).
WARP per positive d: v violators among the N negatives, N_draws = 1 + floor(log u_0 /
log(1 - v/N)), the floor(u_1 v)-th violator in list order, weight Phi(floor(N / N_draws)),
exactly as :func:`gbrank.torch.warp_loss`.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from numba import njit, prange

from .._jit import FAST
from ._batching import bucket_batches
from ._sampled import BPR_PAIRS

BPR, WARP, BPR_DRAWN = 0, 1, 2
#: loss name -> kernel code (BPR with ``pairs="drawn"`` is BPR_DRAWN)
KINDS = {"bpr": BPR, "warp": WARP}
#: list score range above which the BPR kernel takes one exponential per pair (the factored
#: exp(s_j - c) exp(c - s_i) would overflow float64 beyond ~1400)
_FACTORED_RANGE = 600.0


def harmonic_table(n: int) -> np.ndarray:
    """``H[eta] = sum_{i=1..eta} 1/i`` for eta = 0..n (float64): WARP's rank-to-weight map Phi."""
    out = np.zeros(n + 1)
    if n:
        out[1:] = np.cumsum(1.0 / np.arange(1, n + 1))
    return out


@njit(cache=True, inline="always")
def _sigmoid_softplus(z):
    """(sigmoid(z), log(1 + exp(z))) without overflow: a pair's BPR gradient weight and loss,
    z = s_negative - s_positive."""
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z)), z + math.log1p(math.exp(-z))
    ez = math.exp(z)
    return ez / (1.0 + ez), math.log1p(ez)


@njit(cache=True, **FAST)
def _bpr_list(sc, lab, threshold, g, scale):
    """Loss of one list and g (its gradient times ``scale``) for the BPR mean over all pairs."""
    n = sc.shape[0]
    n_pos = 0
    lo, hi = np.inf, -np.inf
    for l in range(n):
        g[l] = 0.0
        if lab[l] >= threshold:
            n_pos += 1
        lo = min(lo, sc[l])
        hi = max(hi, sc[l])
    n_neg = n - n_pos
    if n_pos == 0 or n_neg == 0:
        return 0.0
    inv = scale / (n_pos * n_neg)
    total = 0.0
    if hi - lo <= _FACTORED_RANGE:
        # exp(s_j - s_i) = exp(s_j - c) exp(c - s_i): P + N exponentials per list, and
        # log(1 + x) summed as the log of products of ``block`` factors, each <= e^(hi - lo + 1)
        c = 0.5 * (lo + hi)
        block = max(1, int(700.0 / (hi - lo + 1.0)))
        e_pos = np.empty(n_pos)
        e_neg = np.empty(n_neg)
        at_pos = np.empty(n_pos, dtype=np.int64)
        at_neg = np.empty(n_neg, dtype=np.int64)
        kp, kn = 0, 0
        for l in range(n):
            if lab[l] >= threshold:
                e_pos[kp] = math.exp(c - sc[l])
                at_pos[kp] = l
                kp += 1
            else:
                e_neg[kn] = math.exp(sc[l] - c)
                at_neg[kn] = l
                kn += 1
        acc_neg = np.zeros(n_neg)
        for p in range(n_pos):
            bi = e_pos[p]
            acc = 0.0
            for j0 in range(0, n_neg, block):
                prod = 1.0
                for j in range(j0, min(j0 + block, n_neg)):
                    x = e_neg[j] * bi  # exp(s_j - s_i)
                    r = x / (1.0 + x)  # sigmoid(s_j - s_i)
                    acc += r
                    acc_neg[j] += r
                    prod *= 1.0 + x
                total += math.log(prod)
            g[at_pos[p]] = -acc * inv
        for j in range(n_neg):
            g[at_neg[j]] = acc_neg[j] * inv
    else:
        for i in range(n):
            if lab[i] < threshold:
                continue
            for j in range(n):
                if lab[j] >= threshold:
                    continue
                r, loss = _sigmoid_softplus(sc[j] - sc[i])
                total += loss
                g[i] -= r * inv
                g[j] += r * inv
    return total / (n_pos * n_neg)


@njit(cache=True, **FAST)
def _bpr_drawn_list(sc, lab, threshold, g, scale):
    """Loss of one list and g (its gradient times ``scale``) for BPR over the drawn pairs: the
    j-th non-relevant item with the floor(j P / N)-th relevant one (``bpr_loss(pairs="drawn")``)."""
    n = sc.shape[0]
    n_pos = 0
    for l in range(n):
        g[l] = 0.0
        if lab[l] >= threshold:
            n_pos += 1
    n_neg = n - n_pos
    if n_pos == 0 or n_neg == 0:
        return 0.0
    at_pos = np.empty(n_pos, dtype=np.int64)
    kp = 0
    for l in range(n):
        if lab[l] >= threshold:
            at_pos[kp] = l
            kp += 1
    inv = scale / n_neg
    total = 0.0
    j = 0
    for l in range(n):
        if lab[l] >= threshold:
            continue
        i = at_pos[(j * n_pos) // n_neg]
        r, loss = _sigmoid_softplus(sc[l] - sc[i])
        total += loss
        g[i] -= r * inv
        g[l] += r * inv
        j += 1
    return total / n_neg


@njit(cache=True, **FAST)
def _warp_list(sc, lab, threshold, margin, max_trials, uni, harm, g, scale):
    """Loss of one list and g (its gradient times ``scale``) for WARP, with the uniforms
    ``uni[2 t], uni[2 t + 1]`` of the list's t-th positive (as ``warp_loss`` draws them)."""
    n = sc.shape[0]
    at_neg = np.empty(n, dtype=np.int64)
    s_neg = np.empty(n)
    n_neg = 0
    for l in range(n):
        g[l] = 0.0
        if lab[l] < threshold:
            at_neg[n_neg] = l
            s_neg[n_neg] = sc[l]
            n_neg += 1
    n_pos = n - n_neg
    if n_pos == 0:
        return 0.0
    budget = n_neg if max_trials <= 0 else min(max_trials, n_neg)
    total = 0.0
    t = 0
    w_scale = scale / n_pos
    for d in range(n):
        if lab[d] < threshold:
            continue
        sd = sc[d]
        bar = sd - margin
        v = 0
        for q in range(n_neg):
            v += s_neg[q] > bar
        if v > 0:
            p = v / n_neg
            if p >= 1.0:
                draws = 1.0
            else:
                draws = 1.0 + math.floor(math.log(max(uni[2 * t], 1e-300)) / math.log1p(-p))
            if draws <= budget:
                k = min(int(math.floor(uni[2 * t + 1] * v)), v - 1)
                seen = -1
                bad = -1
                for q in range(n_neg):
                    if s_neg[q] > bar:
                        seen += 1
                        if seen == k:
                            bad = q
                            break
                w = harm[int(math.floor(n_neg / draws))]
                total += w * (margin + s_neg[bad] - sd)
                g[at_neg[bad]] += w * w_scale
                g[d] -= w * w_scale
        t += 1
    return total / n_pos


@njit(parallel=True, cache=True, error_model="numpy")
def _epoch(U, V, lists, batches, loss, warp, step):
    """SGD over the batches ``rows[bptr[k]:bptr[k + 1]]``; returns the sum of the per-list losses.
    The settings travel as records: ``lists`` = (ptr, items, labels), ``batches`` = (rows,
    bptr), ``loss`` = (kind, threshold, margin, max_trials), ``warp`` = (uniforms, their
    offsets, harmonic table), ``step`` = (learning rate, weight decay)."""
    ptr, items, labels = lists
    rows, bptr = batches
    kind, threshold, margin, max_trials = loss
    uni, uoff, harm = warp
    lr, wd = step
    n_factors = U.shape[1]
    sc = np.empty(items.shape[0])
    g = np.empty(items.shape[0])
    width = 0
    for k in range(bptr.shape[0] - 1):
        width = max(width, bptr[k + 1] - bptr[k])
    dU = np.empty((width, n_factors))
    losses = np.empty(width)
    decay = 1.0 - lr * wd
    total = 0.0
    for k in range(bptr.shape[0] - 1):
        r0 = bptr[k]
        nb = bptr[k + 1] - r0
        scale = 1.0 / nb
        for t in prange(nb):
            u = rows[r0 + t]
            a, b = ptr[u], ptr[u + 1]
            for l in range(a, b):
                acc = 0.0
                for f in range(n_factors):
                    acc += U[u, f] * V[items[l], f]
                sc[l] = acc
            if kind == BPR:
                losses[t] = _bpr_list(sc[a:b], labels[a:b], threshold, g[a:b], scale)
            elif kind == BPR_DRAWN:
                losses[t] = _bpr_drawn_list(sc[a:b], labels[a:b], threshold, g[a:b], scale)
            else:
                losses[t] = _warp_list(sc[a:b], labels[a:b], threshold, margin, max_trials,
                                       uni[uoff[r0 + t]:], harm, g[a:b], scale)
            for f in range(n_factors):
                dU[t, f] = 0.0
            for l in range(a, b):
                gl = g[l]
                if gl != 0.0:
                    for f in range(n_factors):
                        dU[t, f] += gl * V[items[l], f]
        for t in range(nb):
            total += losses[t]
        if wd > 0.0:
            for i in prange(V.shape[0]):
                for f in range(n_factors):
                    V[i, f] *= decay
        for t in range(nb):  # one thread: lists of a batch share items
            u = rows[r0 + t]
            for l in range(ptr[u], ptr[u + 1]):
                gl = g[l]
                if gl != 0.0:
                    i = items[l]
                    for f in range(n_factors):
                        V[i, f] -= lr * gl * U[u, f]
        if wd > 0.0:
            for i in prange(U.shape[0]):
                for f in range(n_factors):
                    U[i, f] *= decay
        for t in prange(nb):
            u = rows[r0 + t]
            for f in range(n_factors):
                U[u, f] -= lr * dU[t, f]
    return total


def _chunks(n_rows: int, pairs_per_row: int, max_pairs: int):
    """The row chunks of ``_training.train_epoch`` (it draws WARP's uniforms per chunk)."""
    step = max(1, max_pairs // max(pairs_per_row, 1))
    return [(a, min(a + step, n_rows)) for a in range(0, n_rows, step)]


def _warp_uniforms(batches, ptr, labels, threshold, generator, max_pairs):
    """WARP's uniforms in the shapes and order ``train_epoch`` draws them: per chunk of a
    batch, ``torch.rand([rows, S, 2])`` with S the chunk's largest number of positives.
    Returns the flat uniforms and each list's offset into them (in batch order)."""
    def per_list(flags):
        c = np.concatenate([[0], np.cumsum(flags)])
        return c[ptr[1:]] - c[ptr[:-1]]

    pos_count, any_count, lengths = per_list(labels >= threshold), per_list(labels > 0), np.diff(ptr)
    offsets, at = [], 0
    for rows in batches:
        width = int(lengths[rows].max())
        # train_epoch counts labels > 0 on the padded batch, whose padding repeats labels[0]
        n_pos = int((any_count[rows] + (width - lengths[rows]) * (labels[0] > 0)).max())
        for a, b in _chunks(len(rows), max(n_pos, 1) * width, max_pairs):
            s = max(int(pos_count[rows[a:b]].max()), 1)
            offsets.append(at + 2 * s * np.arange(b - a))
            at += 2 * s * (b - a)
    # one call: torch's CPU generator gives the same stream as one call per chunk (tested)
    flat = (torch.rand(at, generator=generator, dtype=torch.float32).numpy().astype(np.float64) if at
            else np.zeros(1))
    off = np.concatenate(offsets).astype(np.int64) if offsets else np.zeros(0, np.int64)
    return flat, off


def epoch_arrays(user_factors: np.ndarray, item_factors: np.ndarray, ptr: np.ndarray, items: np.ndarray,
                 labels: np.ndarray, batches, loss: str, *, learning_rate: float, weight_decay: float = 0.0,
                 relevance_threshold: float = 1.0, margin: float = 1.0, max_trials: int | None = None,
                 pairs: str = "all", generator: torch.Generator | None = None,
                 max_pairs: int = 1 << 22) -> tuple[float, int]:
    """One SGD epoch of BPR or WARP on float32 factor matrices, updated in place.

    Parameters
    ----------
    user_factors, item_factors : numpy.ndarray of float32, shapes (n_users, D), (n_items, D)
        C-contiguous; updated in place.
    ptr, items, labels : numpy.ndarray
        The lists as flat CSR arrays: list u holds ``items[ptr[u]:ptr[u + 1]]`` with
        ``labels`` (``>= relevance_threshold``: a positive).
    batches : sequence of numpy.ndarray
        The list (user) ids of each step, in order; lists within a batch are distinct.
    loss : {"bpr", "warp"}
    learning_rate, weight_decay : float
        Of plain SGD: ``w <- w - learning_rate (grad + weight_decay w)``.
    relevance_threshold, margin, max_trials, pairs :
        The loss options (see :func:`gbrank.torch.bpr_loss`, :func:`gbrank.torch.warp_loss`).
    generator : torch.Generator, optional
        WARP's uniforms, drawn as the torch path draws them (so a seed gives the same model).
    max_pairs : int
        ``TrainConfig.max_pairs``: the torch path's chunking of a batch, which sets the
        shapes of WARP's draws.

    Returns
    -------
    (mean loss per list, number of lists)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> U, V = rng.normal(0, 0.1, (2, 4)).astype(np.float32), rng.normal(0, 0.1, (5, 4)).astype(np.float32)
    >>> ptr, items = np.array([0, 2, 4]), np.array([0, 1, 2, 3])
    >>> labels = np.array([1.0, 0.0, 1.0, 0.0])
    >>> mean, n = epoch_arrays(U, V, ptr, items, labels, [np.array([0, 1])], "bpr", learning_rate=0.1)
    >>> n, round(mean, 2)
    (2, 0.69)
    """
    if loss not in KINDS:
        raise ValueError(f"loss must be one of {sorted(KINDS)} for the numba engine, got {loss!r}")
    for name, m in (("user_factors", user_factors), ("item_factors", item_factors)):
        if not (isinstance(m, np.ndarray) and m.dtype == np.float32 and m.ndim == 2 and m.flags.c_contiguous
                and m.flags.writeable):
            raise TypeError(f"{name} must be a writeable C-contiguous float32 matrix, got "
                            f"{getattr(m, 'dtype', type(m))} {getattr(m, 'shape', '')}")
    if user_factors.shape[1] != item_factors.shape[1]:
        raise ValueError(f"user_factors and item_factors must have as many columns, got {user_factors.shape[1]} "
                         f"and {item_factors.shape[1]}")
    if not (learning_rate > 0 and math.isfinite(learning_rate)) or not weight_decay >= 0:
        raise ValueError(f"learning_rate must be positive and weight_decay non-negative, got {learning_rate!r}, "
                         f"{weight_decay!r}")
    ptr = np.ascontiguousarray(ptr, dtype=np.int64)
    items = np.ascontiguousarray(items, dtype=np.int64)
    labels = np.ascontiguousarray(labels, dtype=np.float64)
    batches = [np.asarray(b, dtype=np.int64) for b in batches if len(b)]
    rows = np.concatenate(batches) if batches else np.zeros(0, np.int64)
    if len(np.unique(rows)) != len(rows):
        raise ValueError("a list appears twice in the batches of one epoch; each list is used once per epoch")
    bptr = np.concatenate([[0], np.cumsum([len(b) for b in batches])]).astype(np.int64)
    if len(items) and (items.min() < 0 or items.max() >= item_factors.shape[0]):
        raise ValueError(f"items must be item rows 0..{item_factors.shape[0] - 1}")
    if len(rows) and (rows.min() < 0 or rows.max() >= min(user_factors.shape[0], len(ptr) - 1)):
        raise ValueError(f"batches must hold list (user) rows 0..{min(user_factors.shape[0], len(ptr) - 1) - 1}")
    kind = KINDS[loss]
    if pairs not in BPR_PAIRS or (pairs == "drawn" and kind != BPR):
        raise ValueError(f"pairs={pairs!r}: 'all' (both losses) or 'drawn' (BPR only)")
    if pairs == "drawn":
        kind = BPR_DRAWN
    if kind == WARP:
        if generator is None:
            generator = torch.Generator()
            generator.seed()
        uni, uoff = _warp_uniforms(batches, ptr, labels, relevance_threshold, generator, max_pairs)
        harm = harmonic_table(int(np.diff(ptr).max(initial=0)))
    else:
        uni, uoff, harm = np.zeros(1), np.zeros(len(rows), np.int64), np.zeros(1)
    total = _epoch(user_factors, item_factors, (ptr, items, labels), (rows, bptr),
                   (kind, float(relevance_threshold), float(margin), int(max_trials or 0)), (uni, uoff, harm),
                   (float(learning_rate), float(weight_decay)))
    n = len(rows)
    return (total / n if n else float("nan")), n


def applies(module, loss, optimizer: str, device, world_size: int = 1, task=None) -> bool:
    """Whether :func:`sgd_epoch` can replace the torch epoch: a BPR or WARP loss, plain SGD,
    factor matrices on the CPU, one process, and one list per user (the kernel indexes the
    user factors by list row, so ``task.per_list`` lists are the torch epoch's)."""
    return (getattr(loss, "name", None) in KINDS and optimizer == "sgd" and torch.device(device).type == "cpu"
            and world_size == 1 and hasattr(module, "user_factors") and hasattr(module, "item_factors")
            and getattr(task, "per_list", None) is None)


def sgd_epoch(module, task, loss, learning_rate: float, weight_decay: float, generator, rng,
              max_pairs: int = 1 << 22) -> tuple[float, int]:
    """The numba twin of ``_training.train_epoch`` for an ``MFRanker`` task with a BPR or WARP
    loss and SGD on the CPU: same lists, batches and draws (``rng``, ``generator``), same
    loss and update; returns ``(mean loss per list, number of lists)``."""
    ptr, items, labels = task.lists(rng)
    batches = bucket_batches(task.users, np.diff(ptr), task.batch_size, rng)
    with torch.no_grad():
        U = module.user_factors.weight.detach().numpy()
        V = module.item_factors.weight.detach().numpy()
        return epoch_arrays(U, V, ptr, items, labels, batches, loss.name, learning_rate=learning_rate,
                            weight_decay=weight_decay, generator=generator, max_pairs=max_pairs, **loss.options)
