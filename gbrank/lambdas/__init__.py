"""LambdaRank for gradient boosting: metric swap deltas and the gradient kernels.

* :class:`LambdaObjective`: gradients whose pair weights are the swap deltas of any metric
  whose record (``gbrank.metrics.METRICS``) has a ``delta`` form, optionally bounded.
* :class:`ListwiseObjective`: the smoothed listwise losses (Li et al. 2021, Eqs 11-19, bounded or
  not) and ApproxNDCG, softmax / ListNet, ListMLE, NeuralNDCG, with exact gradients (``_listwise.py``).
* :func:`swap_deltas`: the (n, n) matrix of |dM| of one list.
* :class:`UnbiasedLambdaObjective`: LambdaRank on clicks with position propensities learned
  with the trees (Unbiased LambdaMART, Hu et al. WWW 2019; XGBoost's ``lambdarank_unbiased``).
* ``_deltas.py`` (the delta forms, O(1) per pair; twin of ``gbrank/torch/_deltas.py``),
  ``_kernels.py`` (one list, a parallel loop over lists, the vectorised pair loops).

Imports ``gbrank.metrics`` and ``gbrank.bounds`` (bounded objectives) of gbrank; the
backends adapt it to each library.
"""

from ._deltas import DELTA_METRICS
from ._listwise import LISTWISE_FAMILIES, ListwiseObjective, is_listwise_name
from ._objective import LambdaObjective, parse_objective_metric
from ._swap import swap_deltas
from ._unbiased import UnbiasedLambdaObjective

#: the gbrank objectives a boosting library trains through the adapters (``gradients`` and ``__call__``)
GRADIENT_OBJECTIVES = (LambdaObjective, ListwiseObjective)

__all__ = ["LambdaObjective", "ListwiseObjective", "GRADIENT_OBJECTIVES", "LISTWISE_FAMILIES", "is_listwise_name", "UnbiasedLambdaObjective", "swap_deltas", "parse_objective_metric", "DELTA_METRICS"]
