"""A seeded click simulator: the position-based model on the lists of a logging ranker.

The logging ranker's scores order each list (a stable descending sort: tied scores keep
their input order), which gives every row its displayed position k = 1, 2, ... (1 is the
top).  In every session each row is clicked independently with probability

    P(click | position k, label l) = theta_k * P(rel | l)

(the position-based model, Richardson et al. 2007; the simulation protocol of Joachims,
Swaminathan and Schnabel, WSDM 2017 and of the unbiased learning-to-rank literature):

- examination theta_k = (1 / k)**eta by default (eta = 1 in Joachims et al.), or an array
  given by the caller; theta_k = 0 below ``max_position`` (those rows are not shown);
- relevance P(rel | l) = eps_minus + (eps_plus - eps_minus) * (2**l - 1) / (2**l_max - 1)
  from graded labels (Ai et al. SIGIR 2018, Hu et al. WWW 2019 with eps_minus = 0.1,
  eps_plus = 1), or a table of one probability per label.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from .._validation import as_1d_float, check_group_ptr, check_labels, contiguous_groups
from ._synthetic import _positive_int, _rng

DEFAULT_CLICK_NOISE = (0.1, 1.0)  # (eps_minus, eps_plus): P(rel) of label 0 and of the top label


class ClickLog(NamedTuple):
    """What :func:`simulate_clicks` returns.

    Attributes
    ----------
    clicks : numpy.ndarray of int64, shape (n_rows,)
        Clicks of each row summed over the sessions.
    positions : numpy.ndarray of int64, shape (n_rows,)
        Displayed position of each row in its list, 1-based (1 is the top), from the
        logging ranker's order; rows beyond ``max_position`` keep their rank but were not
        examined (theta = 0).
    theta : numpy.ndarray of float64, shape (n_positions,)
        The examination probabilities used: ``theta[k - 1]`` for position k.
    p_relevant : numpy.ndarray of float64, shape (n_rows,)
        P(rel | label) of each row.
    session_clicks : numpy.ndarray of bool, shape (sessions, n_rows)
        The click of each row in each session (``clicks`` is its column sum).
    group_ptr : numpy.ndarray of int64, shape (n_queries + 1,)
        Query boundaries of the rows: list q is rows ``group_ptr[q]:group_ptr[q + 1]``.
    """

    clicks: np.ndarray
    positions: np.ndarray
    theta: np.ndarray
    p_relevant: np.ndarray
    session_clicks: np.ndarray
    group_ptr: np.ndarray


def relevance_probability(labels, click_noise=DEFAULT_CLICK_NOISE, max_label=None) -> np.ndarray:
    """P(rel | label) of each row, the relevance part of the position-based model.

    Parameters
    ----------
    labels : array-like of shape (n_rows,)
        Graded labels: non-negative integers.
    click_noise : (eps_minus, eps_plus) or mapping label -> probability
        A pair gives ``eps_minus + (eps_plus - eps_minus) * (2**l - 1) / (2**l_max - 1)``
        with 0 <= eps_minus <= eps_plus <= 1: label 0 is clicked with probability
        eps_minus when examined, the top label with eps_plus.  A mapping gives the
        probability of each label (every label present must be a key).
    max_label : int, optional
        l_max, the top grade of the scale (LETOR: 2, MSLR: 4); default the largest label.

    Examples
    --------
    >>> relevance_probability([0, 1, 2], (0.1, 1.0), max_label=2).round(3).tolist()
    [0.1, 0.4, 1.0]
    """
    if isinstance(click_noise, Mapping):
        y = check_labels(labels, "linear")
        table = {}
        for key, value in click_noise.items():
            v = float(value)
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"click_noise[{key!r}] = {value!r} is not a probability; give values in [0, 1]")
            table[float(key)] = v
        missing = sorted(set(np.unique(y).tolist()) - set(table))
        if missing:
            raise ValueError(f"click_noise has no probability for the label{'s' if len(missing) > 1 else ''} "
                             f"{missing[:5]}; a mapping must give P(rel | label) for every label present, e.g. "
                             "{0: 0.1, 1: 0.5, 2: 1.0}")
        return np.array([table[v] for v in y.tolist()], dtype=np.float64)
    y = check_labels(labels, "exp")
    try:
        eps_minus, eps_plus = (float(v) for v in click_noise)
    except (TypeError, ValueError):
        raise ValueError(f"click_noise must be a pair (eps_minus, eps_plus) or a mapping label -> probability, "
                         f"got {click_noise!r}") from None
    if not 0.0 <= eps_minus <= eps_plus <= 1.0:
        raise ValueError(f"click_noise=(eps_minus, eps_plus) needs 0 <= eps_minus <= eps_plus <= 1, got "
                         f"{click_noise!r}")
    top = float(y.max()) if len(y) else 0.0
    if max_label is not None:
        if isinstance(max_label, bool) or not np.isfinite(max_label) or max_label < top:
            raise ValueError(f"max_label must be at least the largest label ({top:g}), got {max_label!r}")
        top = float(max_label)
    if top == 0.0:  # nothing is relevant on this scale
        return np.full(len(y), eps_minus)
    return eps_minus + (eps_plus - eps_minus) * (2.0**y - 1.0) / (2.0**top - 1.0)


def _theta(propensity, eta, n_positions: int, max_position) -> np.ndarray:
    if propensity is None:
        eta = float(eta)
        if isinstance(eta, bool) or not np.isfinite(eta) or eta < 0:
            raise ValueError(f"eta must be a finite number >= 0 (theta_k = (1/k)**eta), got {eta!r}")
        theta = (1.0 / np.arange(1, n_positions + 1)) ** eta
    else:
        theta = as_1d_float(propensity, "propensity")
        if ((theta < 0) | (theta > 1)).any():
            raise ValueError("propensity must hold examination probabilities in [0, 1], one per position "
                             f"(position 1 first); got values from {theta.min():g} to {theta.max():g}")
        shown = n_positions if max_position is None else min(n_positions, max_position)
        if len(theta) < shown:
            raise ValueError(f"propensity has {len(theta)} positions but lists show up to {shown} rows; give one "
                             "examination probability per position, or set max_position to the length given")
        theta = np.concatenate((theta[:n_positions], np.zeros(max(0, n_positions - len(theta)))))
    if max_position is not None:
        theta[max_position:] = 0.0
    return theta


def simulate_clicks(labels, scores, qid=None, *, group_ptr=None, propensity=None, eta: float = 1.0,
                    max_position: int | None = None, click_noise=DEFAULT_CLICK_NOISE, max_label=None,
                    sessions: int = 1, random_state=0) -> ClickLog:
    """Simulate clicks of the position-based model on the lists ordered by a logging ranker.

    The logging ranker's ``scores`` order each list (stable descending sort: ties keep
    their input order) and give each row its displayed position k (1 is the top).  In each
    of ``sessions`` sessions every row is clicked independently with probability
    ``theta_k * P(rel | label)``::

        theta_k = (1 / k)**eta             (or ``propensity[k - 1]``; 0 for k > max_position)
        P(rel | l) = eps_minus + (eps_plus - eps_minus) * (2**l - 1) / (2**l_max - 1)

    (Joachims et al. WSDM 2017: eta = 1; the noise of Ai et al. SIGIR 2018 and Hu et al.
    WWW 2019: eps_minus = 0.1, eps_plus = 1.)  The same seed gives the same clicks.

    Parameters
    ----------
    labels : array-like of shape (n_rows,)
        True graded labels (non-negative integers; any non-negative number with a
        ``click_noise`` mapping).
    scores : array-like of shape (n_rows,)
        Scores of the logging ranker; they define the displayed order.
    qid : array-like of shape (n_rows,), optional
        One query id per row, each query's rows contiguous.  Give ``qid`` or ``group_ptr``.
    group_ptr : array-like of shape (n_queries + 1,), optional
        Query boundaries instead: list q is rows ``group_ptr[q]:group_ptr[q + 1]``.
    propensity : array-like, optional
        Examination probability of each position, position 1 first (values in [0, 1]);
        default ``(1 / k)**eta``.
    eta : float, default 1.0
        Severity of the position bias when ``propensity`` is not given (0: no bias).
    max_position : int, optional
        Rows below this position are not shown (theta = 0).  Default: all are shown.
    click_noise : (eps_minus, eps_plus) or mapping, default (0.1, 1.0)
        P(rel | label), see :func:`relevance_probability`.
    max_label : int, optional
        Top grade l_max of the scale for the pair form (LETOR: 2); default the largest label.
    sessions : int, default 1
        Independent sessions per list (each shows the same order).
    random_state : int, numpy.random.Generator or None, default 0

    Returns
    -------
    ClickLog
        ``clicks`` (counts over sessions), ``positions`` (1-based), ``theta`` (the true
        examination probabilities, ``theta[k - 1]`` for position k), ``p_relevant``,
        ``session_clicks`` (sessions x rows) and ``group_ptr``.

    Examples
    --------
    >>> log = simulate_clicks([2, 0, 1], [0.1, 0.9, 0.5], group_ptr=[0, 3], sessions=1000)
    >>> log.positions.tolist(), log.theta.round(3).tolist()
    ([3, 1, 2], [1.0, 0.5, 0.333])
    >>> bool(abs(log.clicks[0] / 1000 - 1 / 3) < 0.05)  # theta_3 * P(rel | 2) = 1/3 * 1.0
    True
    """
    s = as_1d_float(scores, "scores")
    prel = relevance_probability(labels, click_noise, max_label)
    if len(s) != len(prel):
        raise ValueError(f"labels and scores must have one entry per row, got {len(prel)} and {len(s)}")
    if len(s) == 0:
        raise ValueError("no rows were given: labels and scores are empty")
    if (qid is None) == (group_ptr is None):
        raise ValueError("give exactly one of qid (one query id per row) and group_ptr (query boundaries)")
    if qid is not None:
        q = np.asarray(qid)
        if q.ndim != 1 or len(q) != len(s):
            raise ValueError(f"qid must have one query id per row ({len(s)}), got shape {q.shape}")
        ptr, _ = contiguous_groups(q)
    else:
        ptr = check_group_ptr(group_ptr, len(s))
    if max_position is not None:
        max_position = _positive_int(max_position, "max_position")
    sessions = _positive_int(sessions, "sessions")
    rng = _rng(random_state)

    positions = np.empty(len(s), dtype=np.int64)
    for a, b in zip(ptr[:-1], ptr[1:]):
        order = np.argsort(-s[a:b], kind="stable")
        positions[a + order] = np.arange(1, b - a + 1)
    theta = _theta(propensity, eta, int(np.diff(ptr).max()), max_position)
    prob = theta[positions - 1] * prel
    session_clicks = rng.random((sessions, len(s))) < prob
    return ClickLog(session_clicks.sum(axis=0).astype(np.int64), positions, theta, prel, session_clicks, ptr)


def session_lists(log: ClickLog, *, keep_empty: bool = False):
    """One list per (query, session), with the session's clicks as binary labels: the
    training data of a click model such as Unbiased LambdaMART (pairs of a clicked and an
    unclicked row of the same session).

    Parameters
    ----------
    log : ClickLog
        From :func:`simulate_clicks`.
    keep_empty : bool, default False
        Keep sessions without a click (they hold no pair).

    Returns
    -------
    rows : numpy.ndarray of int64
        Row of the original data for each expanded row (features are ``X[rows]``).
    clicks : numpy.ndarray of float64
        1.0 for a click in that session, else 0.0.
    positions : numpy.ndarray of int64
        Displayed position (1-based) of each expanded row.
    group_ptr : numpy.ndarray of int64
        Boundaries of the (query, session) lists, queries in order, then sessions.

    Examples
    --------
    >>> log = simulate_clicks([1, 0], [1.0, 0.0], group_ptr=[0, 2], sessions=3, propensity=[1.0, 1.0],
    ...                       click_noise={0: 0.0, 1: 1.0})
    >>> rows, clicks, positions, ptr = session_lists(log)
    >>> rows.tolist(), clicks.tolist(), ptr.tolist()
    ([0, 1, 0, 1, 0, 1], [1.0, 0.0, 1.0, 0.0, 1.0, 0.0], [0, 2, 4, 6])
    """
    if not isinstance(log, ClickLog):
        raise TypeError(f"log must be the ClickLog that simulate_clicks returns, got {type(log).__name__}")
    ptr = log.group_ptr
    sizes = np.diff(ptr)
    n_q, n_s = len(sizes), log.session_clicks.shape[0]
    # per (query, session): any click?
    qs_clicks = np.add.reduceat(log.session_clicks, ptr[:-1], axis=1)  # (sessions, queries)
    keep = np.ones((n_q, n_s), dtype=bool) if keep_empty else (qs_clicks.T > 0)
    q_idx, s_idx = np.nonzero(keep)  # queries in order, then sessions
    lengths = sizes[q_idx]
    starts = ptr[q_idx]
    offsets = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    rows = np.repeat(starts, lengths) + offsets
    sess = np.repeat(s_idx, lengths)
    clicks = log.session_clicks[sess, rows].astype(np.float64)
    group_ptr = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    return rows.astype(np.int64), clicks, log.positions[rows], group_ptr
