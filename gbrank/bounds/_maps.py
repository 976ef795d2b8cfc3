"""The four bounding maps of the thesis (Ch. 3) applied to per-list metric values.

With M the list's metric value and M_min, M_max, E[M], F~ from ``prepare``::

    "minmax"           (M - M_min) / (M_max - M_min)        Eq 3.1
    "expectation"      M / E[M]                              Eq 3.6
    "expectation_max"  (M - E[M]) / (M_max - E[M])           Eq 3.11
    "distribution"     F~(M)                                 Eq 3.12 with Algorithm 2

Each is increasing in M, so a bounded value keeps the metric's orientation: for the
nRBP loss (lower is better; M_max = R (n - R) is the worst order) the bounded loss is
lower-is-better too, and "expectation_max" then runs from -1 (ideal) to 1 (worst).
A degenerate list maps to 0.0 and has inverse scale 0.0: zero weight.
"""

from __future__ import annotations

import numpy as np

from ..metrics import BOUNDINGS, check_bounding
from ._api import ListBounds


def _check(method, values, bounds: ListBounds) -> np.ndarray:
    check_bounding(method)
    if not isinstance(bounds, ListBounds):
        raise TypeError(f"bounds must be the ListBounds that gbrank.bounds.prepare returns, got "
                        f"{type(bounds).__name__}")
    try:
        x = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"values must be numbers, one metric value per list, got {values!r:.60}") from None
    if x.shape != (len(bounds),):
        raise ValueError(f"values must hold one metric value per list ({len(bounds)}), got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError(f"values must be finite metric values, found {x[~np.isfinite(x)][0]} at list "
                         f"{int(np.flatnonzero(~np.isfinite(x))[0])}")
    return x


def inverse_scale(method: str, bounds: ListBounds) -> np.ndarray:
    """1 / scale of each list for the three linear maps; 0.0 for degenerate lists.

    A LambdaRank pair weight under a linear map is ``|dM| * inverse_scale``:
    1 / (M_max - M_min) ("minmax"), 1 / E[M] ("expectation"), 1 / (M_max - E[M])
    ("expectation_max").  The distribution map is not linear: its pair weight is
    ``|F~(M + dM) - F~(M)|`` (``ListBounds.smoothed_cdf``).

    Examples
    --------
    >>> from gbrank.bounds import prepare
    >>> lb = prepare("nrbp_loss", [1, 0, 0, 1, 0, 1, 1], [0, 5, 7])
    >>> inverse_scale("minmax", lb).tolist(), inverse_scale("expectation", lb).tolist()
    ([0.16666666666666666, 0.0], [0.3333333333333333, 0.0])
    """
    check_bounding(method)
    if not isinstance(bounds, ListBounds):
        raise TypeError(f"bounds must be the ListBounds that gbrank.bounds.prepare returns, got "
                        f"{type(bounds).__name__}")
    if method == "distribution":
        raise ValueError("the distribution map is not linear: weigh a pair by |F~(M + dM) - F~(M)| "
                         "with ListBounds.smoothed_cdf")
    if method == "minmax":
        scale = bounds.maximum - bounds.minimum
    elif method == "expectation":
        scale = bounds.expectation
    else:
        scale = bounds.maximum - bounds.expectation
    ok = ~bounds.degenerate & (scale > 0.0)
    out = np.zeros(len(bounds))
    out[ok] = 1.0 / scale[ok]
    return out


def bounded(method: str, values, bounds: ListBounds) -> np.ndarray:
    """The bounded value of each list's metric value ``values[i]`` (module docstring).

    Degenerate lists get 0.0.  "distribution" needs ``prepare(..., distribution=True)``.

    Examples
    --------
    >>> from gbrank.bounds import prepare
    >>> lb = prepare("ap", [1, 0, 0, 1, 0], [0, 5], distribution=True)
    >>> [round(float(bounded(m, [0.75], lb)[0]), 4) for m in BOUNDINGS]
    [0.6296, 1.2658, 0.3865, 0.7301]
    """
    x = _check(method, values, bounds)
    if method == "distribution":
        out = bounds.smoothed_cdf(x)
    elif method == "expectation":
        out = x * inverse_scale(method, bounds)
    else:
        shift = bounds.minimum if method == "minmax" else bounds.expectation
        out = (x - shift) * inverse_scale(method, bounds)
    return np.where(bounds.degenerate, 0.0, out)
