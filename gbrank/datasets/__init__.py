"""Datasets for learning to rank: LETOR files and folds, interaction tables, synthetic data.

* ``load_letor``, ``load_letor_folds``: SVMlight/LETOR files (MQ2008, MSLR-WEB, ...) as
  ``(X, y, qid)`` with one query id per row.
* ``load_example``: LightGBM's lambdarank example, bundled with gbrank (MIT licence).
* ``load_movielens``, ``load_citeulike``, ``load_interactions``: user-item interactions as
  long tables (MovieLens in each release's format: ``ratings.csv``, ``ratings.dat``,
  ``u.data``; CiteULike ``users.dat``; any table with user and item columns), the format
  told by the file's content (``interaction_format``; ``INTERACTION_FORMATS``).
* ``make_letor``: seeded synthetic LETOR-like data whose labels depend on the features.
* ``simulate_clicks``, ``session_lists``: seeded clicks of the position-based model on the
  lists of a logging ranker (for position-debiased training, ``UnbiasedLambdaObjective``).

Real benchmark data is read from the folder named by the ``GBRANK_DATA`` environment
variable (``data_home``); ``resolve`` maps a dataset name from ``DATASETS`` to its folder.
This package imports nothing else of gbrank but the shared input checks (``gbrank._validation``).
"""

from ._clicks import ClickLog, relevance_probability, session_lists, simulate_clicks
from ._formats import FORMATS as INTERACTION_FORMATS
from ._formats import interaction_format
from ._interactions import MOVIELENS_SCALE, load_citeulike, load_interactions, load_movielens
from ._letor import LetorFold, LetorSplit, load_example, load_letor, load_letor_folds
from ._paths import DATASETS, data_home, resolve
from ._synthetic import RELEVANCE, label_proportions, make_letor

__all__ = [
    "DATASETS", "data_home", "resolve",
    "LetorSplit", "LetorFold", "load_letor", "load_letor_folds", "load_example",
    "load_movielens", "load_citeulike", "load_interactions", "MOVIELENS_SCALE",
    "interaction_format", "INTERACTION_FORMATS",
    "RELEVANCE", "label_proportions", "make_letor",
    "ClickLog", "simulate_clicks", "session_lists", "relevance_probability",
]
