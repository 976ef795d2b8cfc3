"""Public functions of ``gbrank.bounds``: one list, many lists (``prepare``), the four maps."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._kernels import cdf_lookup_lists
from ._shapes import (
    DEFAULT_EXACT_LIMIT,
    DEFAULT_GRID,
    DEFAULT_N_SAMPLES,
    Distribution,
    ShapeBounds,
    check_grid,
    check_group_ptr,
    check_labels,
    check_sampling,
    distributions_many,
    gains_of,
    parse_spec,
    shape_bounds_many,
    shape_of,
    tables_many,
)

_METRIC_DOC = """metric : {"ndcg", "ap", "rr", "nrbp", "nrbp_loss"}
        ``"nrbp@0.95"`` gives p, ``"ndcg@10"`` the truncation.  nDCG uses graded gains;
        AP, RR, nRBP and the nRBP loss (Li et al. 2021, Eq 19; lower is better) binarise
        at ``relevance_threshold``.
    labels : array-like of float
        Relevance labels of one list (>= 0); their order does not matter.
    p : float, optional
        Persistence of nRBP, in (0, 1).  Accepted and ignored by ``"nrbp_loss"``.
    relevance_threshold : float, default 1
        ``label >= relevance_threshold`` is relevant (binary metrics).
    gain : {"exp", "linear"}, default "exp"
        nDCG gain 2**l - 1 or l.
    truncation : int, optional
        For nDCG, IDCG is cut at k, the metric being whole-list DCG / IDCG@k (the
        LambdaRank objective's convention).  Maximum, minimum, expectation and
        distribution then follow that definition (the maximum is IDCG / IDCG@k >= 1).
        The other metrics accept and ignore it: in the objective it limits which pairs
        count, not the metric."""


def _one(metric, labels, p, relevance_threshold, gain, truncation):
    spec = parse_spec(metric, p, relevance_threshold, gain, truncation)
    key = shape_of(spec, check_labels(labels, spec))
    return spec, key


def list_bounds(metric: str, labels, *, p: float | None = None, relevance_threshold: float = 1.0,
                gain: str = "exp", truncation: int | None = None) -> ShapeBounds:
    """Maximum, minimum, expectation and degeneracy of one list, cached per shape.

    Parameters
    ----------
    {metric_doc}

    Returns
    -------
    ShapeBounds
        The cached record of the list's shape: two lists of one shape (the same (n, R),
        or for nDCG the same multiset of gains) get the *identical* object.

    Notes
    -----
    Maximum = the metric of the ideal order, minimum = that of the worst order (all
    relevant items at the bottom; for graded nDCG the ascending-gain order).  For the nRBP
    loss the ideal order is the minimum, 0, and the maximum is R (n - R).  The
    expectation is over the n! orders, equally likely (closed forms in docs/bounds.md).
    A list without relevant items gets 0.0 for all three and ``degenerate=True``; so does an
    empty list (``labels=[]``), a documented result rather than an error.

    Examples
    --------
    >>> b = list_bounds("ap", [1, 0, 0, 1, 0])
    >>> b.minimum, b.maximum, round(b.expectation, 4)   # (1/4 + 2/5) / 2, 1, E[AP]
    (0.325, 1.0, 0.5925)
    >>> list_bounds("ap", [0, 1, 1, 0, 0]) is b
    True
    """
    spec, key = _one(metric, labels, p, relevance_threshold, gain, truncation)
    return shape_bounds_many(spec, [key])[0]


def maximum(metric: str, labels, **options) -> float:
    """Largest value of the metric over all orders of ``labels`` (see ``list_bounds``).

    For nDCG, AP, RR and nRBP the ideal order's value, 1.0 (IDCG / IDCG@k for nDCG with a
    truncation); for the nRBP loss the worst order's, R (n - R).  0.0 without relevant items.

    Examples
    --------
    >>> maximum("nrbp_loss", [1, 0, 0, 1, 0])
    6.0
    """
    return list_bounds(metric, labels, **options).maximum


def minimum(metric: str, labels, **options) -> float:
    """Smallest value of the metric over all orders of ``labels`` (see ``list_bounds``).

    nDCG: DCG of the ascending-gain order / IDCG@k (binary: sum_{r=n-R+1..n} 1/log2(r+1)
    / IDCG); AP: (1/R) sum_{i=1..R} i / (n - R + i); RR: 1 / (n - R + 1); nRBP: p^(n - R);
    nRBP loss: 0 (the ideal order).  0.0 without relevant items.

    Examples
    --------
    >>> minimum("rr", [1, 0, 0, 1, 0]), minimum("nrbp", [1, 0, 0, 1, 0], p=0.5)
    (0.25, 0.125)
    """
    return list_bounds(metric, labels, **options).minimum


def expectation(metric: str, labels, **options) -> float:
    """Exact mean of the metric over the n! orders of ``labels``, all equally likely.

    Closed forms (R relevant among n, g the gains, H_n the harmonic number)::

        E[nDCG]      = mean(g) * sum_{r=1..n} 1/log2(r+1) / IDCG@k
        E[AP]        = (R-1)/(n-1) + (n-R) H_n / (n (n-1))       (1 for n = 1)
        E[RR]        = sum_{r=1..n-R+1} C(n-r, R-1) / C(n, R) / r
        E[nRBP]      = (R/n) (1 - p^n) / (1 - p^R)
        E[nRBP loss] = R (n - R) / 2

    0.0 without relevant items.

    Examples
    --------
    >>> round(expectation("rr", [1, 0, 0, 1, 0]), 4), expectation("nrbp_loss", [1, 0, 0, 1, 0])
    (0.6417, 3.0)
    """
    return list_bounds(metric, labels, **options).expectation


def is_degenerate(metric: str, labels, **options) -> bool:
    """True when the list cannot be bounded, so a bounded objective gives it zero weight.

    That is: no relevant item (for nDCG: no positive gain), or every order scores the
    same (all items relevant, a single item, all gains equal), or E[M] = 0.

    Examples
    --------
    >>> is_degenerate("ap", [0, 0, 0]), is_degenerate("ap", [2, 1]), is_degenerate("ndcg", [2, 1])
    (True, True, False)
    """
    return list_bounds(metric, labels, **options).degenerate


def distribution(metric: str, labels, *, p: float | None = None, relevance_threshold: float = 1.0,
                 gain: str = "exp", truncation: int | None = None, exact_limit: int = DEFAULT_EXACT_LIMIT,
                 n_samples: int = DEFAULT_N_SAMPLES, seed: int = 0) -> Distribution:
    """Distribution of the metric over the orders of one list, exact or Monte Carlo (cached).

    Exact when the list has at most ``exact_limit`` distinct arrangements (binary
    metrics: C(n, R) placements of the relevant items; graded nDCG: the multinomial
    n! / prod_g c_g! over the gain multiplicities c_g): each arrangement is enumerated
    once and, standing for the same number of the n! orders, weighs equally.  Otherwise
    ``n_samples`` uniformly random orders are drawn (Fisher-Yates, seeded from ``seed``
    and the shape, so the result is the same whatever else is prepared); the standard
    error of the CDF is then sqrt(F (1 - F) / n_samples) <= 0.5 / sqrt(n_samples).

    Parameters
    ----------
    {metric_doc}
    exact_limit : int, default 20,000
        The most arrangements enumerated exactly.
    n_samples : int, default 10,000
        Random orders drawn otherwise (the thesis drew 300,000).
    seed : int, default 0

    Returns
    -------
    Distribution
        Sorted distinct values with their probabilities, the sigmoid gain of Eq 3.13 and
        the methods ``cdf``, ``smoothed_cdf`` and ``table``.  A degenerate list has one
        value with probability 1 (its smoothed CDF is the step at that value).

    Examples
    --------
    >>> d = distribution("rr", [1, 0, 0, 1, 0])
    >>> d.values.tolist(), d.probabilities.tolist()
    ([0.25, 0.3333333333333333, 0.5, 1.0], [0.1, 0.2, 0.3, 0.4])
    >>> d.exact, d.gain   # 4 distinct values over a range of 0.75
    (True, 5.333333333333333)
    """
    spec, key = _one(metric, labels, p, relevance_threshold, gain, truncation)
    return distributions_many(spec, [key], *check_sampling(exact_limit, n_samples, seed))[0]


@dataclass(frozen=True, eq=False)
class ListBounds:
    """Per-list bounds of many lists, as ``prepare`` returns them.

    Attributes
    ----------
    metric : str
        Canonical name, e.g. ``"nrbp@0.95"``, ``"ndcg@30"`` (truncated IDCG).
    higher_is_better : bool
        False for ``"nrbp_loss"``.
    minimum, maximum, expectation : ndarray of float, shape (n_lists,)
    degenerate : ndarray of bool, shape (n_lists,)
        Lists that cannot be bounded (see ``is_degenerate``); their values are finite and
        every map gives them 0.0 (weight 0).
    shape_index : ndarray of int, shape (n_lists,)
        Which distinct shape each list has (``n_shapes`` of them).
    n_shapes : int
    cdf : ndarray of float, shape (n_lists, grid), or None
        The smoothed CDF F~ of each list on ``grid`` equally spaced points from
        ``cdf_x0`` to ``cdf_x1`` (the list's minimum and maximum); None unless
        ``prepare(..., distribution=True)``.  Rows of lists of one shape are equal.
        Degenerate lists: x0 = x1 and a row of ones (the step function).
    cdf_x0, cdf_x1 : ndarray of float, shape (n_lists,), or None
    exact : ndarray of bool, shape (n_lists,), or None
        Whether each list's distribution was enumerated exactly (else Monte Carlo).
    """

    metric: str
    higher_is_better: bool
    minimum: np.ndarray
    maximum: np.ndarray
    expectation: np.ndarray
    degenerate: np.ndarray
    shape_index: np.ndarray
    n_shapes: int
    cdf: np.ndarray | None = None
    cdf_x0: np.ndarray | None = None
    cdf_x1: np.ndarray | None = None
    exact: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.minimum.shape[0])

    def smoothed_cdf(self, x, lists=None) -> np.ndarray:
        """F~ of value ``x[q]`` in list ``lists[q]`` (default: list q), by O(1) interpolation
        in the grid table (``cdf_lookup``)."""
        if self.cdf is None:
            raise ValueError("no CDF table: call prepare(..., distribution=True)")
        x = np.asarray(x, dtype=np.float64).ravel()
        idx = np.arange(len(self), dtype=np.int64) if lists is None else np.asarray(lists, dtype=np.int64).ravel()
        if idx.shape != x.shape:
            raise ValueError(f"x and lists must have the same length, got {x.shape[0]} and {idx.shape[0]}")
        if idx.size and (idx.min() < 0 or idx.max() >= len(self)):
            raise ValueError(f"list indices must lie in [0, {len(self)})")
        return cdf_lookup_lists(self.cdf, self.cdf_x0, self.cdf_x1, idx, x)


def prepare(metric: str, labels, group_ptr, *, p: float | None = None, relevance_threshold: float = 1.0,
            gain: str = "exp", truncation: int | None = None, distribution: bool = False,
            grid: int = DEFAULT_GRID, exact_limit: int = DEFAULT_EXACT_LIMIT,
            n_samples: int = DEFAULT_N_SAMPLES, seed: int = 0) -> ListBounds:
    """Bounds of every list of a data set, for a bounded objective.

    List i holds ``labels[group_ptr[i]:group_ptr[i+1]]``.  Lists are grouped by shape
    ((n, R) for the binary metrics, the sorted gains for nDCG); each distinct shape is
    computed once, in parallel over shapes, and kept in a module-level dict, so a data
    set is prepared once and repeated shapes (later folds, later calls) cost a lookup.
    ``clear_cache()`` empties it.

    Parameters
    ----------
    {metric_doc}
    group_ptr : array-like of int
        List boundaries 0 = ptr[0] <= ... <= ptr[-1] = len(labels) (XGBoost's
        ``group_ptr``); an empty list is degenerate.
    distribution : bool, default False
        Also compute each list's distribution (see ``distribution``) and its smoothed CDF
        table.
    grid : int, default 257
        Points of the CDF table, equally spaced over [minimum, maximum].
    exact_limit, n_samples, seed
        As in ``distribution``.

    Returns
    -------
    ListBounds

    Examples
    --------
    >>> labels = [1, 0, 0, 1, 0] + [0, 0] + [0, 1, 0, 0, 1]
    >>> lb = prepare("ap", labels, [0, 5, 7, 12], distribution=True, grid=5)
    >>> lb.minimum.tolist(), lb.degenerate.tolist(), lb.n_shapes
    ([0.325, 0.0, 0.325], [False, True, False], 2)
    >>> lb.cdf[0].round(3).tolist()   # F~ at 0.325, 0.494, 0.663, 0.831, 1.0
    [0.129, 0.397, 0.626, 0.817, 0.938]
    """
    spec = parse_spec(metric, p, relevance_threshold, gain, truncation)
    labels = check_labels(labels, spec)
    ptr = check_group_ptr(group_ptr, labels.shape[0])
    n_lists = ptr.shape[0] - 1
    keys = _shape_keys(spec, labels, ptr)
    index: dict = {}
    shape_index = np.fromiter((index.setdefault(key, len(index)) for key in keys), dtype=np.int64, count=n_lists)
    shapes = list(index)
    records = shape_bounds_many(spec, shapes)
    per_shape = np.array([(r.minimum, r.maximum, r.expectation) for r in records]).reshape(-1, 3)
    degenerate = np.array([r.degenerate for r in records], dtype=np.bool_)
    fields = dict(
        metric=spec.label(), higher_is_better=spec.higher_is_better,
        minimum=per_shape[shape_index, 0], maximum=per_shape[shape_index, 1],
        expectation=per_shape[shape_index, 2], degenerate=degenerate[shape_index],
        shape_index=shape_index, n_shapes=len(shapes),
    )
    if distribution:
        sampling = check_sampling(exact_limit, n_samples, seed)
        grid = check_grid(grid)
        dists = distributions_many(spec, shapes, *sampling)
        rows = tables_many(spec, shapes, dists, grid, sampling)
        table = np.array(rows).reshape(len(shapes), grid)
        fields.update(
            cdf=table[shape_index], cdf_x0=np.array([d.lower for d in dists])[shape_index].reshape(n_lists),
            cdf_x1=np.array([d.upper for d in dists])[shape_index].reshape(n_lists),
            exact=np.array([d.exact for d in dists], dtype=np.bool_)[shape_index].reshape(n_lists),
        )
    return ListBounds(**fields)


def _shape_keys(spec, labels: np.ndarray, ptr: np.ndarray) -> list:
    """Shape key of every list, computed with whole-array operations where possible."""
    n = np.diff(ptr)
    if spec.binary:
        cum = np.concatenate([[0], np.cumsum(labels >= spec.threshold)])
        r = cum[ptr[1:]] - cum[ptr[:-1]]
        return list(zip(n.tolist(), r.tolist()))
    group = np.repeat(np.arange(n.shape[0]), n)
    gains = gains_of(labels, spec.gain_code)
    ordered = gains[np.lexsort((-gains, group))]
    return [ordered[a:b].tobytes() for a, b in zip(ptr[:-1].tolist(), ptr[1:].tolist())]


for _f in (list_bounds, distribution, prepare):
    _f.__doc__ = _f.__doc__.replace("{metric_doc}", _METRIC_DOC)

