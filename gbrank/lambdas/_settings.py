"""The records the LambdaRank kernels take their settings in (numba-typed namedtuples).

A kernel of the gradient family takes the settings of a call as one record and the
bounding arrays as a second, rather than twenty scalars (XGBoost's ``KernelInputs``):

- ``Settings``: the scalars one call fixes for all its lists (metric and form codes, p,
  sigma, truncation, normalisations, hessian mode, sigmoid table, gain, relevance
  threshold, bounding code);
- ``Bounding``: the per-list bounding arrays (``scale``, ``cdf``, ``x0``, ``x1``; one
  entry or table row per list, ignored without bounding);
- ``DistPoint``: a list's point on its distribution map (``_kernels.distribution_setup``),
  ``on`` False when the list has none.  A pair loop compiled without the map is passed
  ``None`` instead, and numba prunes the map's branch before typing;
- ``Weighting``: a pair weighting, noise and pair method (``_pairweights``: weighting
  code, mu, noise samples, pair-method code, partners per item).

numba passes a namedtuple of scalars by value and, once the callee is inlined, its fields
are plain registers: the records cost nothing in the hot loops.  Flags that choose a
compiled specialisation (score normalisation, hessian mode, form in the pair loops) stay
separate literal arguments, as C++ template flags would.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

Settings = namedtuple("Settings", ("metric", "form", "p", "sigma", "trunc", "score_norm", "eps", "list_norm",
                                   "hess_mode", "table", "gain_code", "threshold", "bound_code"))
Bounding = namedtuple("Bounding", ("scale", "cdf", "x0", "x1"))
DistPoint = namedtuple("DistPoint", ("on", "cdf", "c", "u", "fm"))
Weighting = namedtuple("Weighting", ("wcode", "mu", "n_samples", "pair_code", "per_doc"))


def settings(metric, form, p, sigma, trunc, score_norm, eps, list_norm, hess_mode, table, gain_code, threshold,
             bound_code) -> Settings:
    """A ``Settings`` with every field cast to the one type the compiled kernels take (ints,
    floats and bools of Python), so numba's on-disk cache is hit whatever the caller passed."""
    return Settings(int(metric), int(form), float(p), float(sigma), int(trunc), bool(score_norm), float(eps),
                    bool(list_norm), int(hess_mode), bool(table), int(gain_code), float(threshold), int(bound_code))


def bounding(scale, cdf, x0, x1) -> Bounding:
    """A ``Bounding`` of writeable, C-contiguous float64 arrays."""
    return Bounding(*(np.require(a, dtype=np.float64, requirements=["C", "W"]) for a in (scale, cdf, x0, x1)))
