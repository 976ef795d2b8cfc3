"""A seeded generator of LETOR-like data whose graded labels depend on the features."""

from __future__ import annotations

from typing import Callable

import numpy as np

from .._validation import is_positive_int

QUERY_SHIFT = 0.5  # std of the query-level shift shared by a query's documents
LABEL_NOISE = 0.5  # std of the noise added to the standardised hidden score
NONLINEAR_SHARE = 0.5  # weight of the standardised non-linear part against the linear one


def _standardise(values: np.ndarray) -> np.ndarray:
    std = values.std()
    return (values - values.mean()) / (std if std > 0 else 1.0)


def _weights(n_features: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Half of the features (at least one) are informative, with N(0, 1) weights."""
    informative = np.sort(rng.choice(n_features, size=max(1, n_features // 2), replace=False))
    w = np.zeros(n_features)
    w[informative] = rng.standard_normal(informative.size)
    return informative, w


def linear_relevance(X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Hidden score ``X @ w``: N(0, 1) weights on half of the features, 0 on the rest."""
    _, w = _weights(X.shape[1], rng)
    return X @ w


def nonlinear_relevance(X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Hidden score: a linear part plus hinges and pairwise products of informative features.

    ``z(X @ w) + 0.5 * z(sum_j c_j max(x_j - t_j, 0) + sum_r d_r x_a x_b)`` with ``z`` the
    standardisation, ``j`` over the informative features (``t_j ~ U(-1, 1)``), and up to five
    products of informative pairs; all coefficients N(0, 1).
    """
    informative, w = _weights(X.shape[1], rng)
    k = informative.size
    extra = np.zeros(X.shape[0])
    thresholds = rng.uniform(-1.0, 1.0, size=k)
    hinge_coef = rng.standard_normal(k)
    for j, t, c in zip(informative, thresholds, hinge_coef):
        extra += c * np.maximum(X[:, j] - t, 0.0)
    pair_coef = rng.standard_normal(min(k, 5))
    for r, d in enumerate(pair_coef):
        a, b = informative[r], informative[(r + 1) % k]
        extra += d * X[:, a] * X[:, b]
    return _standardise(X @ w) + NONLINEAR_SHARE * _standardise(extra)


# name -> relevance(X, rng) -> one hidden score per row
RELEVANCE = {"linear": linear_relevance, "nonlinear": nonlinear_relevance}


def label_proportions(max_label: int) -> np.ndarray:
    """Share of each grade 0..max_label: proportional to ``exp(-g**1.5 / 2)``.

    For ``max_label=4`` that is 51.5 %, 31.2 %, 12.5 %, 3.8 % and 0.9 %, close to
    MSLR-WEB10K's 51 %, 33 %, 13 %, 2 % and 1 %.
    """
    grades = np.arange(max_label + 1, dtype=np.float64)
    weights = np.exp(-(grades**1.5) / 2.0)
    return weights / weights.sum()


def _positive_int(value, name: str) -> int:
    if not is_positive_int(value):
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _doc_range(docs_per_query) -> tuple[int, int]:
    if isinstance(docs_per_query, (int, np.integer)) and not isinstance(docs_per_query, bool):
        n = _positive_int(docs_per_query, "docs_per_query")
        return n, n
    try:
        low, high = docs_per_query
    except (TypeError, ValueError):
        raise ValueError(
            "docs_per_query must be a positive integer or an inclusive (min, max) pair, got "
            f"{docs_per_query!r}"
        ) from None
    low = _positive_int(low, "docs_per_query's min")
    high = _positive_int(high, "docs_per_query's max")
    if low > high:
        raise ValueError(f"docs_per_query=(min, max) needs min <= max, got {docs_per_query!r}")
    return low, high


def _rng(random_state) -> np.random.Generator:
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or (
        isinstance(random_state, (int, np.integer))
        and not isinstance(random_state, bool)
        and random_state >= 0
    ):
        return np.random.default_rng(random_state)
    raise ValueError(
        "random_state must be None, a non-negative integer seed or a numpy.random.Generator, "
        f"got {random_state!r}"
    )


def make_letor(
    n_queries: int = 100,
    docs_per_query: int | tuple[int, int] = (5, 50),
    n_features: int = 20,
    max_label: int = 4,
    relevance: str | Callable[[np.ndarray, np.random.Generator], np.ndarray] = "nonlinear",
    random_state: int | np.random.Generator | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Synthetic LETOR-like ranking data with graded labels that depend on the features.

    The model, drawn afresh from ``random_state`` on each call:

    1. Query ``q`` gets ``n_q`` documents, uniform in ``docs_per_query``.
    2. Features ``x = m_q + e``: a query-level shift ``m_q ~ N(0, 0.5**2 I)`` shared by the
       query's documents plus ``e ~ N(0, I)`` per document, like query-dependent LETOR
       features.  So some queries have many relevant documents and some none.
    3. A hidden score ``s = relevance(X, rng)`` (see ``RELEVANCE``): by default a linear
       part on half of the features plus hinges and pairwise products of them.
    4. Labels quantise ``z(s) + N(0, 0.5**2)`` (``z`` standardises) at global quantiles so
       that grade ``g`` has a share proportional to ``exp(-g**1.5 / 2)``: for
       ``max_label=4`` about 51 %, 31 %, 12 %, 4 % and 1 %, falling off like MSLR-WEB.

    Parameters
    ----------
    n_queries : int, default 100
    docs_per_query : int or (int, int), default (5, 50)
        Documents per query, fixed or an inclusive ``(min, max)`` range.
    n_features : int, default 20
    max_label : int, default 4
        Labels are ``0, 1, ..., max_label``.
    relevance : {"nonlinear", "linear"} or callable, default "nonlinear"
        The hidden score: a name from ``RELEVANCE``, or a function
        ``relevance(X, rng) -> scores`` returning one finite score per row.
    random_state : int, numpy.random.Generator or None
        Seed; the same seed gives the same data.

    Returns
    -------
    X : ndarray of float64, shape (n_rows, n_features)
    y : ndarray of float64, shape (n_rows,)
        Integer grades in ``0..max_label``.
    qid : ndarray of int64, shape (n_rows,)
        ``0, 0, ..., 1, 1, ...``: sorted, each query's rows contiguous.

    Raises
    ------
    ValueError
        For a non-positive or non-integer size, a ``docs_per_query`` range with
        ``min > max``, an unknown ``relevance`` name, a relevance function that returns the
        wrong shape or non-finite scores, or an invalid ``random_state``.

    Examples
    --------
    >>> X, y, qid = make_letor(n_queries=3, docs_per_query=4, n_features=5, random_state=0)
    >>> X.shape, qid.tolist()
    ((12, 5), [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2])
    >>> X, y, qid = make_letor(4800, (60, 180), 136, random_state=0)   # MSLR-sized, ~2 s
    """
    n_queries = _positive_int(n_queries, "n_queries")
    low, high = _doc_range(docs_per_query)
    n_features = _positive_int(n_features, "n_features")
    max_label = _positive_int(max_label, "max_label")
    if callable(relevance):
        score_fn = relevance
    elif isinstance(relevance, str) and relevance in RELEVANCE:
        score_fn = RELEVANCE[relevance]
    else:
        raise ValueError(
            f"relevance must be one of {sorted(RELEVANCE)} or a function relevance(X, rng) -> "
            f"one score per row, got {relevance!r}"
        )
    rng = _rng(random_state)

    sizes = rng.integers(low, high + 1, size=n_queries)
    ends = np.cumsum(sizes)
    n_rows = int(ends[-1])
    X = rng.standard_normal((n_rows, n_features))
    shifts = QUERY_SHIFT * rng.standard_normal((n_queries, n_features))
    for start, end, shift in zip(ends - sizes, ends, shifts):
        X[start:end] += shift  # in place: no second copy of an MSLR-sized X

    scores = np.asarray(score_fn(X, rng), dtype=np.float64)
    if scores.shape != (n_rows,):
        raise ValueError(
            f"relevance must return one score per row, shape ({n_rows},), got {scores.shape}"
        )
    if not np.isfinite(scores).all():
        raise ValueError("relevance returned NaN or infinite scores; it must return finite ones")
    noisy = _standardise(scores) + LABEL_NOISE * rng.standard_normal(n_rows)
    cuts = np.quantile(noisy, np.minimum(np.cumsum(label_proportions(max_label))[:-1], 1.0))  # rounding
    y = np.searchsorted(cuts, noisy, side="right").astype(np.float64)
    qid = np.repeat(np.arange(n_queries, dtype=np.int64), sizes)
    return X, y, qid
