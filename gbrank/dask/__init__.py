"""gbrank on Dask clusters: gbrank objectives through LightGBM's and XGBoost's distributed
training, with every query kept whole in one partition.

* :class:`DaskGBRanker`: the scikit-learn-like estimator (``fit`` / ``predict`` / ``score``).
* :func:`make_queries_whole`: move partition boundaries to query boundaries.
* :func:`evaluate`: :func:`gbrank.evaluate` over Dask collections, partition by partition.

Importing ``gbrank`` does not import this package; this package imports dask when it
first works on data, and a boosting library only when a model trains.
"""

from ._estimator import DaskGBRanker, DaskTrainingError
from ._evaluate import evaluate
from ._queries import WholeQueries, make_queries_whole

__all__ = ["DaskGBRanker", "DaskTrainingError", "evaluate", "make_queries_whole", "WholeQueries"]
