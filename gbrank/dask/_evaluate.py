"""``gbrank.dask.evaluate``: the evaluator over Dask collections, one partition at a time."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..evaluation import DEFAULT_METRICS, EvaluationResult
from ..evaluation import evaluate as evaluate_local
from ._queries import _as_array, make_queries_whole


def evaluate(y_true, y_score, qid, metrics=DEFAULT_METRICS, *, client=None, **conventions) -> EvaluationResult:
    """:func:`gbrank.evaluate` on Dask arrays or Series: each partition's queries are
    evaluated where they lie and the per-query tables gathered.

    The result equals ``gbrank.evaluate`` on the same rows computed in memory: the same
    per-query table (indexed by sorted query id), ``n_empty``, ``skipped_qids`` and
    settings.  Each query's rows must be adjacent (see :func:`make_queries_whole`, which
    this calls); only the per-query table travels to the client, not the rows.

    Parameters
    ----------
    y_true, y_score, qid : dask Array or Series, one entry per row
    metrics : str or sequence of str
    client : distributed.Client, optional
    **conventions
        ``relevance_threshold``, ``gain``, ``empty``, ``ties``, ``ap_divisor`` as in
        :func:`gbrank.evaluate`.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> part = lambda a: da.from_array(np.asarray(a), chunks=2)
    >>> r = evaluate(part([2, 0, 1, 0]), part([0.9, 0.8, 0.1, 0.4]), part([7, 7, 7, 7]), ["ndcg@2"])
    >>> round(float(r.per_query.loc[7, "ndcg@2"]), 4)
    0.8262
    """
    import dask

    # Fail fast on bad names or conventions, before touching the cluster.
    probe = evaluate_local([1.0], [0.0], [0], metrics, **conventions)
    scores = _as_array(y_score, "y_score")
    scores = scores[:, None] if scores.ndim == 1 else scores
    whole = make_queries_whole(scores, y_true, qid=qid, client=client)
    blocks = zip(whole.y.to_delayed().ravel(), whole.X.to_delayed().ravel(), whole.qid.to_delayed().ravel())
    tasks = [dask.delayed(_evaluate_block)(y, s, q, probe.metrics, conventions) for y, s, q in blocks]
    parts = client.gather(client.compute(tasks)) if client is not None else dask.compute(*tasks)
    per_query = pd.concat([p.per_query for p in parts]).sort_index(kind="stable")
    skipped = np.concatenate([p.skipped_qids for p in parts])
    return EvaluationResult(
        per_query=per_query, metrics=probe.metrics, settings=probe.settings,
        n_empty=int(sum(p.n_empty for p in parts)), skipped_qids=np.sort(skipped, kind="stable"),
    )


def _evaluate_block(y, s, q, metrics, conventions):
    return evaluate_local(y, np.asarray(s).reshape(-1), q, metrics, **conventions)
