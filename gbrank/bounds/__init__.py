"""Per-list bounds of ranking metrics, for bounded (per-list normalised) objectives.

For one list's labels (order irrelevant) and a metric whose record in
``gbrank.metrics.METRICS`` says ``bounds=True`` ("ndcg", "ap", "rr", "nrbp",
"nrbp_loss"): the maximum, minimum and exact expectation over all orders
(``list_bounds``, ``maximum``, ``minimum``, ``expectation``), the distribution of the
metric under random orders with its smoothed CDF (``distribution``; thesis Algorithm 2,
Eq 3.13), and whether the list can be bounded at all (``is_degenerate``).  ``prepare``
does all of it for every list of a data set at once, cached per list shape, and
``bounded`` / ``inverse_scale`` apply the four maps of the thesis (min-max,
expectation, expectation-max, distribution).  ``cdf_lookup`` is the numba kernel an
objective calls to read a CDF table in O(1) (``grid_interp`` the interpolation it uses).

Every metric value comes from the kernels of ``gbrank.metrics``; this package imports
nothing else of gbrank (but the shared input checks).  Formulas, conventions and checks: docs/bounds.md.
"""

from ._api import (
    ListBounds,
    distribution,
    expectation,
    is_degenerate,
    list_bounds,
    maximum,
    minimum,
    prepare,
)
from ._kernels import cdf_lookup, grid_interp
from ._maps import BOUNDINGS, bounded, inverse_scale
from ._shapes import BOUND_METRICS, Distribution, ShapeBounds, cache_size, clear_cache

__all__ = [
    "BOUND_METRICS", "BOUNDINGS",
    "list_bounds", "maximum", "minimum", "expectation", "is_degenerate", "distribution",
    "prepare", "ListBounds", "ShapeBounds", "Distribution",
    "bounded", "inverse_scale", "cdf_lookup", "grid_interp", "clear_cache", "cache_size",
]
