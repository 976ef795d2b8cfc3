"""Metric specification, list shapes, and the per-shape caches of the bounds.

Everything the bounds know about a list is its *shape*: for AP, RR, nRBP and the nRBP
loss the pair (n, R) of its length and number of relevant items; for nDCG the sorted
multiset of its gains.  Lists of one shape have the same maximum, minimum, expectation
and distribution, so each is computed once and kept in a module-level dict until
``clear_cache()``.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np

import gbrank.bounds._kernels as K  # the module, not the package: no cycle through __init__

from .._validation import check_group_ptr as _check_group_ptr
from .._validation import check_labels as _check_labels
from ..metrics import GAINS, METRICS, MetricSpec, merge_param, parse, with_bounds

#: metric name -> kernel code, for the families whose record says ``bounds=True``
BOUND_METRICS: dict[str, int] = {name: rec.code for name, rec in with_bounds().items()}

DEFAULT_EXACT_LIMIT = 20_000
DEFAULT_N_SAMPLES = 10_000
DEFAULT_GRID = 257
_CHUNK_DRAWS = 1 << 22  # values held in memory at once while computing distributions

_SUMMARY_CACHE: dict = {}
_DISTRIBUTION_CACHE: dict = {}
_TABLE_CACHE: dict = {}


def clear_cache() -> None:
    """Forget every cached shape (summaries, distributions and CDF tables)."""
    _SUMMARY_CACHE.clear()
    _DISTRIBUTION_CACHE.clear()
    _TABLE_CACHE.clear()


def cache_size() -> dict[str, int]:
    """Number of cached entries: ``{"summaries": ., "distributions": ., "tables": .}``."""
    return {"summaries": len(_SUMMARY_CACHE), "distributions": len(_DISTRIBUTION_CACHE),
            "tables": len(_TABLE_CACHE)}


@dataclass(frozen=True)
class Spec:
    """A validated metric: kernel ``code``, persistence ``p`` (0.0 when unused), nDCG
    truncation ``k`` (0 = none), threshold and gain code."""

    name: str
    code: int
    p: float
    k: int
    threshold: float
    gain_code: int

    @property
    def binary(self) -> bool:
        return not METRICS[self.name].graded

    @property
    def higher_is_better(self) -> bool:
        return METRICS[self.name].higher_is_better

    @property
    def result_id(self) -> tuple:
        """What the values depend on besides the shape (threshold and gain are in the shape)."""
        return (self.code, self.p, self.k)

    def label(self) -> str:
        """The metric's name with its parameter, e.g. ``"nrbp@0.95"`` or ``"ndcg@10"``."""
        return MetricSpec(self.name, self.code, k=self.k, p=self.p).metric


def parse_spec(metric, p=None, relevance_threshold=1.0, gain="exp", truncation=None) -> Spec:
    """Validate the metric arguments shared by every public function.

    The name is parsed by ``gbrank.metrics.parse`` over the families with bounds.  A
    truncation cuts a graded metric's ideal (nDCG: whole-list DCG / IDCG@k, the LambdaRank
    objective's convention); for a binary metric it only limits which pairs an objective
    weighs, so the keyword is accepted and ignored, while a cutoff written in the name
    (``"ap@10"``) is refused: the bounds are those of the whole-list metric."""
    spec = parse(metric, families=with_bounds(), role="bounds metric", required=False)
    rec = spec.record
    if spec.k and not rec.graded:
        raise ValueError(f"metric {metric!r}: gbrank.bounds bounds the whole-list {spec.name}; write "
                         f"{spec.name!r} (a truncation only limits which pairs an objective weighs)")
    if rec.param == "":
        p = None  # a family without a parameter (the nRBP loss, Eq 19) accepts a given p and ignores it
    spec = merge_param(spec, p=p, truncation=truncation if rec.graded else None, role="bounds metric")
    if truncation is not None and not rec.graded:
        merge_param(spec, truncation=truncation)  # validated, then ignored
    if gain not in GAINS:
        raise ValueError(f"gain must be one of {sorted(GAINS)}, got {gain!r}")
    try:
        threshold = float(relevance_threshold)
    except (TypeError, ValueError):
        raise ValueError(f"relevance_threshold must be a number, got {relevance_threshold!r}") from None
    if not math.isfinite(threshold) or threshold <= 0:
        raise ValueError(f"relevance_threshold must be positive and finite (label >= threshold is relevant; "
                         f"0 would make every item relevant), got {relevance_threshold!r}")
    return Spec(spec.name, spec.code, float(spec.p), int(spec.k), threshold, GAINS[gain])


def check_labels(labels, spec: Spec | None = None, what="labels") -> np.ndarray:
    """Labels as a 1-D float64 array: gbrank's label contract (``_validation.check_labels``),
    with the graded-gain rules only for a graded metric."""
    graded = spec is None or not spec.binary
    gain = "linear" if spec is not None and spec.gain_code == GAINS["linear"] else "exp"
    return _check_labels(labels, gain, graded=graded, name=what)


def check_group_ptr(group_ptr, n_rows: int) -> np.ndarray:
    """List boundaries 0 = ptr[0] <= ptr[1] <= ... <= ptr[-1] = n_rows (empty lists allowed)."""
    return _check_group_ptr(group_ptr, n_rows, allow_empty=True)


def gains_of(labels: np.ndarray, gain_code: int) -> np.ndarray:
    """gain(l) = 2**l - 1 or l, the convention of ``gbrank.metrics``."""
    return np.exp2(labels) - 1.0 if gain_code == 0 else labels.copy()


def shape_of(spec: Spec, labels: np.ndarray):
    """Hashable shape key of one list: (n, R) or the descending gains as bytes."""
    if spec.binary:
        return (int(labels.shape[0]), int((labels >= spec.threshold).sum()))
    return np.sort(gains_of(labels, spec.gain_code))[::-1].tobytes()


def shape_values(spec: Spec, key) -> np.ndarray:
    """The descending per-item values (relevance or gains) that a shape key stands for."""
    if spec.binary:
        n, r = key
        out = np.zeros(n)
        out[:r] = 1.0
        return out
    return np.frombuffer(key, dtype=np.float64).copy()


def arrangements(spec: Spec, vals: np.ndarray, limit: int) -> int:
    """Number of distinct orders of the multiset ``vals``, or ``limit + 1`` when larger."""
    _, counts = np.unique(vals, return_counts=True)
    n = int(vals.shape[0])
    log_count = math.lgamma(n + 1) - sum(math.lgamma(c + 1) for c in counts)
    if log_count > math.log(max(limit, 1)) + 1.0:
        return limit + 1
    total, left = 1, n
    for c in counts:
        total *= math.comb(left, int(c))
        left -= int(c)
    return total if total <= limit else limit + 1


def shape_seed(seed: int, key) -> np.uint64:
    """A 64-bit seed of (seed, shape): a shape's random orders do not depend on which other
    shapes are prepared with it, nor in what order."""
    digest = hashlib.blake2b(repr((int(seed), key)).encode(), digest_size=8).digest()
    return np.uint64(int.from_bytes(digest, "little"))


# ----------------------------------------------------------------------------------------
# cached records


@dataclass(frozen=True, eq=False)
class ShapeBounds:
    """Maximum, minimum and expectation of one list shape (cached; compare with ``is``).

    Attributes
    ----------
    minimum, maximum : float
        The smallest and largest value over all orders of the list.  For the nRBP loss
        (lower is better) the ideal order gives ``minimum`` = 0.
    expectation : float
        The exact mean over the n! orders (closed forms, docs/bounds.md).
    degenerate : bool
        True when the list cannot be bounded: no relevant item (the metric is undefined;
        all three values are 0.0), ``maximum == minimum`` (every order scores the same:
        all items relevant, one item, all gains equal; all three values are then that one
        value, e.g. 1.0), or ``expectation <= 0``.
    n_items, n_relevant : int
        n, and R (for nDCG: the items with a positive gain).
    """

    minimum: float
    maximum: float
    expectation: float
    degenerate: bool
    n_items: int
    n_relevant: int


def _is_degenerate(lo, hi, mean, n_rel, n) -> bool:
    return bool(n == 0 or n_rel == 0 or hi - lo <= 1e-12 * max(1.0, abs(hi)) or mean <= 0.0)


def shape_bounds_many(spec: Spec, keys: list) -> list[ShapeBounds]:
    """Cached ``ShapeBounds`` of every key; the missing ones are computed in one parallel call."""
    rid = spec.result_id
    missing = [key for key in dict.fromkeys(keys) if (rid, key) not in _SUMMARY_CACHE]
    if missing:
        parts = [shape_values(spec, key) for key in missing]
        ptr = np.zeros(len(parts) + 1, dtype=np.int64)
        ptr[1:] = np.cumsum([len(v) for v in parts])
        flat = np.concatenate(parts) if parts else np.zeros(0)
        out = K.summaries(spec.code, not spec.binary, spec.higher_is_better, flat, ptr, spec.k, spec.p)
        for key, (lo, hi, mean, n_rel), vals in zip(missing, out, parts):
            n = int(vals.shape[0])
            degenerate = _is_degenerate(lo, hi, mean, n_rel, n)
            if degenerate:  # every order scores the same: one value, not three roundings of it
                hi = mean = lo
            _SUMMARY_CACHE[(rid, key)] = ShapeBounds(float(lo), float(hi), float(mean), degenerate, n, int(n_rel))
    return [_SUMMARY_CACHE[(rid, key)] for key in keys]


@dataclass(frozen=True, eq=False)
class Distribution:
    """The distribution D of a metric over the orders of one list (cached per shape).

    Attributes
    ----------
    values : ndarray
        The distinct values d_j, ascending.
    probabilities : ndarray
        P(M = d_j) under a uniformly random order (exact), or the sampled frequency.
    exact : bool
        True when every distinct arrangement was enumerated; False for Monte Carlo.
    n_draws : int
        Arrangements enumerated (each weighted by its multiplicity, i.e. equally), or
        random orders drawn.
    gain : float
        The sigmoid gain of Eq 3.13, a = len(D) / (max(D) - min(D)), len(D) = number of
        distinct values; 0.0 for a single value (the smoothed CDF is then the step).
    lower, upper : float
        The metric's minimum and maximum over all orders (exact even for Monte Carlo):
        the range of the CDF grid table.
    """

    values: np.ndarray
    probabilities: np.ndarray
    exact: bool
    n_draws: int
    gain: float
    lower: float
    upper: float

    def mean(self) -> float:
        """Mean of D (the exact expectation when ``exact``)."""
        return float(np.dot(self.values, self.probabilities))

    def cdf(self, x) -> np.ndarray:
        """F(x) = P(M <= x), thesis Algorithm 1 (a step function)."""
        cum = np.concatenate([[0.0], np.cumsum(self.probabilities)])
        idx = np.searchsorted(self.values, np.asarray(x, dtype=np.float64), side="right")
        return np.minimum(cum[idx], 1.0)

    def smoothed_cdf(self, x) -> np.ndarray:
        """F~(x) = sum_j P(d_j) sigmoid(a (x - d_j)), thesis Algorithm 2 with Eq 3.13."""
        cum = np.concatenate([[0.0], np.cumsum(self.probabilities)])
        xs = np.asarray(x, dtype=np.float64)
        out = K.smooth_cdf_many(self.values, cum, self.gain, xs.ravel())
        return out.reshape(xs.shape) if xs.ndim else float(out[0])

    def standard_error_of_mean(self) -> float:
        """Standard error of ``mean()``: 0 when exact, else sd(D) / sqrt(n_draws)."""
        if self.exact:
            return 0.0
        var = float(np.dot((self.values - self.mean()) ** 2, self.probabilities))
        return math.sqrt(var / self.n_draws)

    def standard_error_of_cdf(self, x) -> np.ndarray:
        """Standard error of ``cdf(x)``: 0 when exact, else sqrt(F (1 - F) / n_draws)
        (at most 0.5 / sqrt(n_draws): 0.005 for the default 10,000 draws)."""
        f = self.cdf(x)
        if self.exact:
            return np.zeros_like(f)
        return np.sqrt(f * (1.0 - f) / self.n_draws)

    def table(self, grid: int = DEFAULT_GRID) -> np.ndarray:
        """F~ on ``grid`` equally spaced points from ``lower`` to ``upper`` (see ``cdf_lookup``)."""
        grid = check_grid(grid)
        row = np.empty(grid)
        K.fill_table(self.values, self.probabilities, self.gain, self.lower, self.upper, row)
        return row


def check_grid(grid) -> int:
    if isinstance(grid, bool) or not float(grid).is_integer() or int(grid) < 2:
        raise ValueError(f"grid must be an integer >= 2 (points of the CDF table), got {grid!r}")
    return int(grid)


def check_sampling(exact_limit, n_samples, seed) -> tuple[int, int, int]:
    for name, value, low in (("exact_limit", exact_limit, 0), ("n_samples", n_samples, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                or not float(value).is_integer() or int(value) < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, float, np.integer, np.floating)) \
            or not float(seed).is_integer():
        raise ValueError(f"seed must be an integer, got {seed!r}")
    return int(exact_limit), int(n_samples), int(seed)


def _point_mass(value: float) -> Distribution:
    d, w = np.array([value]), np.array([1.0])
    d.flags.writeable = False
    w.flags.writeable = False
    return Distribution(d, w, True, 1, 0.0, value, value)


def distributions_many(spec: Spec, keys: list, exact_limit: int, n_samples: int, seed: int) -> list[Distribution]:
    """Cached ``Distribution`` of every key; the missing ones in parallel chunks."""
    rid = (spec.result_id, exact_limit, n_samples, seed)
    unique = list(dict.fromkeys(keys))
    summaries = dict(zip(unique, shape_bounds_many(spec, unique)))
    todo = []
    for key in unique:
        if (rid, key) in _DISTRIBUTION_CACHE:
            continue
        sb = summaries[key]
        if sb.degenerate:
            _DISTRIBUTION_CACHE[(rid, key)] = _point_mass(sb.minimum)
            continue
        vals = shape_values(spec, key)
        count = arrangements(spec, vals, exact_limit)
        exact = count <= exact_limit
        todo.append((key, vals, exact, count if exact else n_samples))
    # cost ~ draws * n; largest first, alternately to the front and back half, so that the
    # parallel loop's contiguous blocks of shapes get similar work
    todo.sort(key=lambda t: -t[3] * len(t[1]))
    todo = todo[0::2] + todo[1::2][::-1]
    start = 0
    while start < len(todo):
        stop, held = start, 0
        while stop < len(todo) and (stop == start or held + todo[stop][3] <= _CHUNK_DRAWS):
            held += todo[stop][3]
            stop += 1
        _compute_distributions(spec, rid, todo[start:stop], summaries, seed)
        start = stop
    return [_DISTRIBUTION_CACHE[(rid, key)] for key in keys]


def _compute_distributions(spec, rid, chunk, summaries, seed) -> None:
    ptr = np.zeros(len(chunk) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(c[1]) for c in chunk])
    flat = np.concatenate([c[1] for c in chunk])
    exact = np.array([c[2] for c in chunk], dtype=np.bool_)
    draws = np.array([c[3] for c in chunk], dtype=np.int64)
    seeds = np.array([shape_seed(seed, c[0]) for c in chunk], dtype=np.uint64)
    out_ptr = np.zeros(len(chunk) + 1, dtype=np.int64)
    out_ptr[1:] = np.cumsum(draws)
    values = np.empty(out_ptr[-1])
    counts = np.zeros(out_ptr[-1])
    n_unique = K.distributions(spec.code, not spec.binary, flat, ptr, spec.k, spec.p, exact, draws, seeds, out_ptr,
                               values, counts)
    for s, (key, _, is_exact, n_draws) in enumerate(chunk):
        a, u = out_ptr[s], n_unique[s]
        d = values[a:a + u].copy()
        w = counts[a:a + u] / n_draws
        d.flags.writeable = False
        w.flags.writeable = False
        gain = u / (d[-1] - d[0]) if u > 1 else 0.0
        sb = summaries[key]
        _DISTRIBUTION_CACHE[(rid, key)] = Distribution(d, w, bool(is_exact), int(n_draws), float(gain),
                                                       sb.minimum, sb.maximum)


def tables_many(spec: Spec, keys: list, dists: list[Distribution], grid: int, dist_id: tuple) -> np.ndarray:
    """Cached CDF table rows [len(keys), grid]; the missing ones in one parallel call."""
    rid = (spec.result_id,) + dist_id + (grid,)
    unique = dict(zip(keys, dists))
    missing = [key for key in unique if (rid, key) not in _TABLE_CACHE]
    if missing:
        ds = [unique[key] for key in missing]
        uptr = np.zeros(len(ds) + 1, dtype=np.int64)
        uptr[1:] = np.cumsum([len(d.values) for d in ds])
        rows = K.tables(np.concatenate([d.values for d in ds]), np.concatenate([d.probabilities for d in ds]),
                        uptr, np.array([d.gain for d in ds]), np.array([d.lower for d in ds]),
                        np.array([d.upper for d in ds]), grid)
        for key, row in zip(missing, rows):
            row = row.copy()
            row.flags.writeable = False
            _TABLE_CACHE[(rid, key)] = row
    return [_TABLE_CACHE[(rid, key)] for key in keys]
