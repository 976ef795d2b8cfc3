"""``make_ranking_scorer``: any gbrank metric as a scikit-learn scorer that takes ``qid``."""

from __future__ import annotations

import numpy as np
from sklearn.utils.metadata_routing import MetadataRequest

from ..evaluation import evaluate
from ..metrics import parse_metric
from ._gbranker import ROUTING_HELP


class RankingScorer:
    """A scikit-learn scorer ``scorer(estimator, X, y, qid=...)``: the mean over queries
    of one gbrank metric of ``estimator.predict(X)``, negated when lower is better (a
    scorer is always maximised).  Built by :func:`make_ranking_scorer`; it requests
    ``qid`` from scikit-learn's metadata routing."""

    def __init__(self, metric, evaluate_options: dict):
        self.spec = parse_metric(metric)
        # unknown options and bad conventions are refused now, not in the first fold
        evaluate([1.0], [0.0], [0], [self.spec], **evaluate_options)
        self.evaluate_options = dict(evaluate_options)
        self.sign = 1.0 if self.spec.higher_is_better else -1.0

    def __call__(self, estimator, X, y, qid=None, **kwargs):
        if kwargs:
            raise TypeError(f"a ranking scorer takes qid only, got {sorted(kwargs)}")
        if qid is None:
            raise ValueError(f"the ranking scorer for {self.spec} got no qid; " + ROUTING_HELP)
        res = evaluate(y, np.asarray(estimator.predict(X), dtype=np.float64), qid, [self.spec],
                       **self.evaluate_options)
        return self.sign * float(res.mean().iloc[0])

    def get_metadata_routing(self) -> MetadataRequest:
        request = MetadataRequest(owner=type(self).__name__)
        request.score.add_request(param="qid", alias=True)
        return request

    def __repr__(self) -> str:
        options = "".join(f", {k}={v!r}" for k, v in self.evaluate_options.items())
        return f"make_ranking_scorer({str(self.spec)!r}{options})"


def make_ranking_scorer(metric: str, **evaluate_options) -> RankingScorer:
    """A scikit-learn scorer for any gbrank evaluator metric, fed ``qid`` by metadata routing.

    Parameters
    ----------
    metric : str
        An evaluator metric name (``"ndcg@10"``, ``"nrbp@0.95"``, ``"ap"``, ``"mean_rank"``, ...).
    **evaluate_options
        Conventions passed to :func:`gbrank.evaluate` (``empty``, ``ties``, ``gain``, ...).

    Returns
    -------
    scorer : callable ``scorer(estimator, X, y, qid=...)``
        The mean of the metric over the queries of ``X``; negated for a metric where
        lower is better (``mean_rank``), as scikit-learn maximises scores.  It requests
        ``qid`` for scoring, so it needs ``sklearn.set_config(enable_metadata_routing=True)``.

    Examples
    --------
    >>> import sklearn
    >>> from sklearn.model_selection import GridSearchCV, GroupKFold
    >>> from gbrank.datasets import make_letor
    >>> from gbrank.estimators import GBRanker, make_ranking_scorer
    >>> X, y, qid = make_letor(n_queries=30, random_state=0)
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     search = GridSearchCV(GBRanker(n_estimators=5), {"objective": ["ndcg", "ap"]},
    ...                           scoring=make_ranking_scorer("nrbp@0.9"), cv=GroupKFold(3))
    ...     _ = search.fit(X, y, qid=qid, groups=qid)
    >>> bool(0 < search.best_score_ <= 1)
    True
    """
    return RankingScorer(metric, evaluate_options)
