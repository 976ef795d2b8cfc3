"""``swap_deltas``: the full (n, n) matrix of |dM| for one list (teaching and tests)."""

from __future__ import annotations

import numpy as np
from numba import njit

from .._validation import as_1d_float
from ..metrics import GAINS
from ._deltas import N_ROWS, delta, delta_codes, list_value, prepare
from ._kernels import BOUND_DIST, BOUND_LINEAR, distribution_delta, distribution_setup
from ._objective import LambdaObjective
from ._settings import settings


@njit(cache=True)
def _swap_matrix(scores, labels, cfg, scale, cdf, x0, x1):
    """The (n, n) |dM| of one list under the ``_settings.Settings`` ``cfg`` (its metric, form,
    p, truncation, gain, threshold and bounding code), the list's bounding ``scale`` and
    distribution row ``cdf`` over [x0, x1]."""
    metric, form, p, bound_code = cfg.metric, cfg.form, cfg.p, cfg.bound_code
    n = scores.shape[0]
    out = np.zeros((n, n))
    order = np.argsort(-scores, kind="mergesort")
    lab = labels[order]
    aux = np.empty((N_ROWS, n))
    norm, first, second = prepare(metric, lab, cfg.gain_code, cfg.threshold, p, cfg.trunc, aux)
    if bound_code == BOUND_LINEAR:
        norm *= scale
    dist = bound_code == BOUND_DIST and x1 > x0  # a degenerate list has no deltas
    c = u = fm = 0.0
    if dist:
        c, u, fm = distribution_setup(cdf, x0, x1, list_value(metric, aux, norm, p))
    for i in range(n):
        for j in range(i + 1, n):
            d = delta(form, i, j, aux, norm, first, second)
            if bound_code == BOUND_DIST:  # the swap raises M when the higher label sits at j
                d = distribution_delta(d, lab[j] > lab[i], cdf, c, u, fm) if dist else 0.0
            out[order[i], order[j]] = d
            out[order[j], order[i]] = d
    return out


def swap_deltas(metric, scores, labels, *, p=None, truncation=None, relevance_threshold=1, gain="exp",
                bounding=None):
    """|M(after items i and j swap their current ranks) - M(now)| for every pair of one list.

    With ``bounding`` (``"minmax"``, ``"expectation"``, ``"expectation_max"``,
    ``"distribution"``, or a ``"+minmax"``-style suffix on ``metric``) M is the bounded
    metric of ``gbrank.bounds``, as :class:`LambdaObjective` weighs pairs.

    The current ranking is a stable descending sort of ``scores`` (input order breaks
    ties).  Entry ``[i, j]`` refers to rows i and j of the input.  ``truncation`` only
    changes nDCG's normaliser (IDCG@k, as the libraries' lambdarank); the pair selection
    it implies in :class:`LambdaObjective` is not applied here.

    Examples
    --------
    >>> d = swap_deltas("rr", [3.0, 2.0, 1.0], [0, 0, 1])
    >>> round(float(d[0, 2]), 6), round(float(d[1, 2]), 6), float(d[0, 1])   # 1 - 1/3, 1/2 - 1/3
    (0.666667, 0.166667, 0.0)
    """
    obj = LambdaObjective(metric, p=p, truncation=truncation, relevance_threshold=relevance_threshold,
                          gain=gain, bounding=bounding)
    s = as_1d_float(scores, "scores")
    y = as_1d_float(labels, "labels")
    if len(s) != len(y):
        raise ValueError(f"scores and labels must have one entry per item, got {len(s)} and {len(y)}")
    if len(s) == 0:
        raise ValueError("the list is empty")
    obj.check_labels(y)
    code, scale, cdf, x0, x1 = obj._bounding_arrays(y, np.array([0, len(y)]))
    metric_code, form = delta_codes(obj.metric)
    # fixed Python types (relevance_threshold 1 or 1.0 alike): one cached specialisation
    s, y = (np.require(a, requirements=["C", "W"]) for a in (s, y))  # read-only input compiles apart
    cfg = settings(metric_code, form, obj.kernel_parameter(y), 1.0, obj.truncation or 0, False, 0.0, False, 0, False,
                   GAINS[obj.gain], obj.relevance_threshold, code)
    return _swap_matrix(s, y, cfg, float(scale[0]), np.ascontiguousarray(cdf[0], dtype=np.float64), float(x0[0]),
                        float(x1[0]))
