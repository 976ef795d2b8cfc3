"""LambdaRank for gradient boosting: metric swap deltas and the gradient kernels.

* :class:`LambdaObjective`: gradients whose pair weights are the swap deltas of any metric
  whose record (``gbrank.metrics.METRICS``) has a ``delta`` form, optionally bounded.
* :func:`swap_deltas`: the (n, n) matrix of |dM| of one list.
* :class:`UnbiasedLambdaObjective`: LambdaRank on clicks with position propensities learned
  with the trees (Unbiased LambdaMART, Hu et al. WWW 2019; XGBoost's ``lambdarank_unbiased``).
* ``_deltas.py`` (the delta forms, O(1) per pair; twin of ``gbrank/torch/_deltas.py``),
  ``_kernel.py`` (one list, a parallel loop over lists, the vectorised pair loops).

Imports ``gbrank.metrics`` and ``gbrank.bounds`` (bounded objectives) of gbrank; the
backends adapt it to each library.
"""

from ._deltas import DELTA_METRICS
from ._objective import LambdaObjective, parse_objective_metric
from ._swap import swap_deltas
from ._unbiased import UnbiasedLambdaObjective

__all__ = ["LambdaObjective", "UnbiasedLambdaObjective", "swap_deltas", "parse_objective_metric", "DELTA_METRICS"]
