"""LambdaRank for gradient boosting: metric swap deltas and the gradient kernels.

* :class:`LambdaObjective`: gradients whose pair weights are the swap deltas of any metric
  whose record (``gbrank.metrics.METRICS``) has a ``delta`` form, optionally bounded.
* :func:`swap_deltas`: the (n, n) matrix of |dM| of one list.
* ``_deltas.py`` (the delta forms, O(1) per pair; twin of ``gbrank/torch/_deltas.py``),
  ``_kernel.py`` (one list, a parallel loop over lists, the vectorised pair loops).

Imports ``gbrank.metrics`` and ``gbrank.bounds`` (bounded objectives) of gbrank; the
backends adapt it to each library.
"""

from ._deltas import DELTA_METRICS
from ._objective import LambdaObjective, parse_objective_metric
from ._swap import swap_deltas

__all__ = ["LambdaObjective", "swap_deltas", "parse_objective_metric", "DELTA_METRICS"]
