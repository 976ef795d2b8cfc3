r"""LambdaRank gradients of a gradient-boosting objective computed with torch, where the
boosting library keeps its predictions (a GPU): the twin of the numba kernel
``gbrank.lambdas._kernels.all_gradients`` for :class:`gbrank.LambdaObjective`'s plain
settings, so that XGBoost with ``device="cuda"`` trains a gbrank objective without copying
its predictions to the host and the gradients back every round
(``gbrank.backends._xgboost.train_xgboost_device``).

The algebra is the numba kernel's (``gbrank/lambdas/_kernels.py``): for a pair of rank
positions i < j with different labels, at least one of them (i) in the current top
``truncation``, d = s_hi - s_lo the score difference of the higher- and lower-labelled
item, rho = 1 / (1 + exp(sigma d)) and |dM| the swap delta (``_deltas``, with nDCG's IDCG
cut at the truncation), optionally divided by eps + |d|::

    g_hi -= sigma |dM| rho       g_lo += sigma |dM| rho
    h_hi, h_lo += sigma^2 |dM| max(rho (1 - rho), 1e-16)    (hessian="lightgbm")
                  2 |dM| max(rho (1 - rho), 1e-16)          (hessian="xgboost")

and list normalisation multiplies a list's g and h by log2(1 + S) / S, S = sum of
2 sigma |dM| rho.  The layout is the torch losses' one: the lists are padded to ``[B, L]``
blocks (lists of similar length together, each block at most ``max_entries`` pair
entries), ranked by a stable descending sort, and a block's pairs are the ``[B, A, L]``
tensor of upper positions i < A (A = the truncation) against every position j.
Everything runs in float64 without autograd; ``tests/test_torch_boosting.py`` checks the
gradients against the numba kernel on random lists, ties and every metric included.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import torch

from ._deltas import delta, delta_form, prepare
from ._device import resolve_device

#: settings of LambdaObjective the torch gradients reproduce, with the value they must have
_PLAIN = {"weighting": "delta", "stochastic": 0, "pair_method": "topk", "bounding": None, "sigmoid_table": False}


def device_objective_problems(objective) -> list[str]:
    """The settings of ``objective`` (a :class:`gbrank.LambdaObjective`) that the torch
    gradients do not reproduce, as ``"name=value"`` strings (empty: all supported)."""
    return [f"{name}={getattr(objective, name)!r}" for name, plain in _PLAIN.items()
            if getattr(objective, name) != plain]


@dataclass
class _Block:
    rows: torch.Tensor  # [B, L] long: flat row of each entry (n_rows on padding)
    mask: torch.Tensor  # [B, L] bool: real entries
    labels: torch.Tensor  # [B, L] float64 (0 on padding)
    queries: torch.Tensor  # [B] long: the lists' query numbers


class PaddedLists:
    """The query lists of a data set (``group_ptr``: list q is rows ``ptr[q]:ptr[q+1]``)
    as padded blocks on ``device``, prepared once and reused every boosting round.

    Lists are sorted by length and cut into blocks whose pair tensor ``[B, A, L]`` holds at
    most ``max_entries`` entries (a single longer list gets a block of its own), so padding
    and memory stay small whatever the spread of list lengths.  One-row lists hold no pair
    and are left out (their gradient is 0).
    """

    def __init__(self, labels, group_ptr, *, truncation=None, device="cpu", max_entries: int | None = None):
        ptr = np.asarray(group_ptr, dtype=np.int64)
        self.device = torch.device(device)
        if max_entries is None:  # a GPU takes the whole data set in one or a few blocks
            max_entries = 1 << (26 if self.device.type == "cuda" else 22)
        self.n_rows = int(ptr[-1])
        self.n_queries = len(ptr) - 1
        # one extra slot after the rows: padded entries read a 0 there and write their (zero)
        # gradients there, so that no step needs a boolean mask (a host synchronisation)
        lab = torch.as_tensor(np.append(np.asarray(labels, dtype=np.float64), 0.0), device=self.device)
        sizes = np.diff(ptr)
        order = np.argsort(sizes, kind="stable")
        order = order[sizes[order] >= 2]
        trunc = int(truncation or 0)
        self.blocks: list[_Block] = []
        start = 0
        while start < len(order):
            stop = start + 1
            while stop < len(order):
                width = int(sizes[order[stop]])  # sorted: the widest list of the block so far
                if (stop + 1 - start) * _upper(trunc, width) * width > max_entries:
                    break
                stop += 1
            queries = order[start:stop]
            width = int(sizes[queries[-1]])
            at = np.arange(width)
            mask = at[None, :] < sizes[queries][:, None]
            rows = np.where(mask, ptr[queries][:, None] + at[None, :], self.n_rows)
            rows_t = torch.as_tensor(rows, device=self.device)
            mask_t = torch.as_tensor(mask, device=self.device)
            self.blocks.append(_Block(rows_t, mask_t, lab[rows_t], torch.as_tensor(queries, device=self.device)))
            start = stop


def _upper(truncation: int, width: int) -> int:
    """How many upper rank positions hold pairs in lists of ``width`` items: the truncation,
    at most width - 1 (every position but the last when there is none)."""
    return min(truncation, width - 1) if truncation > 0 else width - 1


def _pair_sums(form: str, upper: int, s, lab, valid, aux, norm, first, second, sigma: float, eps: float,
               score_norm: bool, hess_scale: float, list_norm: bool):
    """(g, h) ``[B, L]`` by rank position of one block of lists in rank order: the pairs of
    upper positions i < ``upper`` with every position j > i (the module docstring's sums)."""
    B, L = s.shape
    i = torch.arange(upper, device=s.device).view(1, upper, 1).expand(B, upper, 1)
    j = torch.arange(L, device=s.device).view(1, 1, L).expand(B, 1, L)
    dm = delta(form, i, j, aux, norm, first, second)
    li, lj = lab[:, :upper, None], lab[:, None, :]
    pair = (j > i) & valid[:, None, :] & (li != lj)
    up = li > lj
    diff = s[:, :upper, None] - s[:, None, :]
    d = torch.where(up, diff, -diff)  # s_hi - s_lo
    if score_norm:  # unless all the list's scores are tied
        last = s.gather(1, (valid.sum(dim=1) - 1)[:, None])[:, 0]
        dm = torch.where((s[:, 0] != last)[:, None, None], dm / (eps + d.abs()), dm)
    dm = dm * pair
    rho = torch.sigmoid(-sigma * d)
    q = rho * torch.sigmoid(sigma * d)
    lam = sigma * dm * rho
    hh = hess_scale * dm * q.clamp_min(1e-16)
    signed = torch.where(up, lam, -lam)  # added to g_j, taken from g_i
    g = signed.sum(dim=1)
    g[:, :upper] -= signed.sum(dim=2)
    h = hh.sum(dim=1)
    h[:, :upper] += hh.sum(dim=2)
    if list_norm:
        total = 2.0 * lam.sum(dim=(1, 2))
        factor = torch.where(total > 0, torch.log2(1.0 + total) / torch.where(total > 0, total, 1.0), 1.0)
        g = g * factor[:, None]
        h = h * factor[:, None]
    return g, h


_COMPILED: dict = {}


def _run_pair_sums(compiled: bool, *args):
    """:func:`_pair_sums`, through ``torch.compile`` when ``compiled`` (on CUDA: a few fused
    kernels instead of some thirty elementwise passes over the ``[B, A, L]`` pairs; compiled
    once per process and setting, dynamic shapes).  If compilation fails (no Triton, no C
    compiler), a warning says so and the eager function runs from then on."""
    if not compiled:
        return _pair_sums(*args)
    fn = _COMPILED.setdefault("pair_sums", torch.compile(_pair_sums, dynamic=True))
    try:
        return fn(*args)
    except Exception as err:  # noqa: BLE001 - any compilation failure falls back to the same function, eager
        warnings.warn(f"torch.compile of the LambdaRank pair sums failed ({type(err).__name__}: {str(err)[:200]}); "
                      "the gradients are computed eagerly (the same values, slower)", RuntimeWarning, stacklevel=3)
        _COMPILED["pair_sums"] = _pair_sums
        return _pair_sums(*args)


@torch.no_grad()
def lambda_gradients(objective, scores: torch.Tensor, lists: PaddedLists, weights=None, *,
                     parameter: float = 0.0, compiled: bool | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Gradient and hessian of ``objective`` (a :class:`gbrank.LambdaObjective` with the plain
    settings, :func:`device_objective_problems` empty) at ``scores`` (shape ``[n_rows]``, any
    float dtype, on ``lists.device``), as float64 tensors of shape ``[n_rows]``: the values of
    ``objective.gradients`` up to rounding.

    ``weights``: None or one weight per query (a tensor on the device) multiplying the list's g
    and h.  ``parameter``: the kernel parameter, ``objective.kernel_parameter(labels)`` (the
    record's one rule, ``Metric.kernel_parameter``: nRBP's p; ERR's top-grade gain, taken over
    the whole data set), handed to ``prepare`` as the numba kernel is handed it.  ``compiled``:
    the pair sums through ``torch.compile`` (None: on CUDA only, where it pays).
    """
    problems = device_objective_problems(objective)
    if problems:
        raise ValueError(f"the torch LambdaRank gradients cover the plain pair weights only, not {', '.join(problems)}; "
                         "train this objective through the host (xgboost.train(obj=XGBoostObjective(obj)))")
    form = delta_form(objective.metric)
    trunc = int(objective.truncation or 0)
    sigma = float(objective.sigma)
    eps = float(objective.score_normalization_eps)
    hess_scale = sigma * sigma if objective.hessian == "lightgbm" else 2.0
    dev = lists.device
    compiled = dev.type == "cuda" if compiled is None else bool(compiled)
    grad = torch.zeros(lists.n_rows + 1, dtype=torch.float64, device=dev)
    hess = torch.zeros(lists.n_rows + 1, dtype=torch.float64, device=dev)
    flat = torch.cat([scores.reshape(-1).to(torch.float64), torch.zeros(1, dtype=torch.float64, device=dev)])
    for blk in lists.blocks:
        raw = flat[blk.rows]  # 0 on padding
        key = torch.where(blk.mask, -raw, torch.full((), float("inf"), dtype=torch.float64, device=dev))
        order = torch.argsort(key, dim=1, stable=True)
        valid = blk.mask.gather(1, order)
        s = raw.gather(1, order)
        lab = blk.labels.gather(1, order)
        state = prepare(objective.metric, lab, valid, gain=objective.gain,
                        relevance_threshold=float(objective.relevance_threshold),
                        p=parameter, truncation=trunc)
        g, h = _run_pair_sums(compiled, form, _upper(trunc, blk.mask.shape[1]), s, lab, valid, *state, sigma, eps,
                              bool(objective.score_normalization), hess_scale, bool(objective.list_normalization))
        if weights is not None:
            w = weights[blk.queries].to(torch.float64)[:, None]
            g = g * w
            h = h * w
        rows = blk.rows.gather(1, order).reshape(-1)
        grad.scatter_(0, rows, g.reshape(-1))
        hess.scatter_(0, rows, h.reshape(-1))
    grad, hess = grad[:-1], hess[:-1]
    if objective.hessian_floor > 0:
        hess.clamp_(min=float(objective.hessian_floor))
    return grad, hess


class Margins:
    """Scores accumulated on a device, tree by tree: the running margin of each row that a
    boosting library would otherwise hand over on the host.  ``add`` takes what the library
    returns for one tree (a NumPy array, or on a GPU any CUDA array such as CuPy's)."""

    def __init__(self, n_rows: int, device):
        self.device = resolve_device(device)
        self.values = torch.zeros(n_rows, dtype=torch.float32, device=self.device)

    def add(self, tree_output) -> None:
        self.values += torch.as_tensor(tree_output, device=self.device).reshape(-1)

    def numpy(self) -> np.ndarray:
        """The margins as float64 on the host (for evaluation metrics)."""
        return self.values.cpu().numpy().astype(np.float64)


def device_array(a, device):
    """``a`` as float32 rows on ``device``: a CUDA tensor (which the boosting libraries take
    through ``__cuda_array_interface__``), or a NumPy array on the CPU."""
    dev = resolve_device(device)
    arr = np.ascontiguousarray(a, dtype=np.float32)
    return torch.as_tensor(arr, device=dev) if dev.type == "cuda" else arr


class DeviceLambdaGradients:
    """A :class:`gbrank.LambdaObjective`'s gradients at running margins kept on ``device``:
    what ``gbrank.backends``' XGBoost loop needs to train on a GPU without sending the
    predictions to the host each round.

    ``gradients()`` returns (g, h) at the current ``margins`` as float32 arrays of shape
    ``[n_rows, 1]`` on the device (CUDA tensors, or NumPy arrays on the CPU), the values of
    ``objective.gradients`` (float64, rounded to float32 for the library)."""

    def __init__(self, objective, labels, group_ptr, weights=None, device="cpu"):
        self.objective = objective
        self.device = resolve_device(device)
        labels = objective.check_labels(labels)
        self.parameter = objective.kernel_parameter(labels)
        self.lists = PaddedLists(labels, group_ptr, truncation=objective.truncation, device=self.device)
        self.weights = None if weights is None else torch.as_tensor(np.asarray(weights, dtype=np.float64),
                                                                    device=self.device)
        self.margins = Margins(len(labels), self.device)

    def gradients(self):
        g, h = lambda_gradients(self.objective, self.margins.values, self.lists, self.weights,
                                parameter=self.parameter)
        g, h = g.to(torch.float32).reshape(-1, 1), h.to(torch.float32).reshape(-1, 1)
        return (g, h) if self.device.type == "cuda" else (g.numpy(), h.numpy())
