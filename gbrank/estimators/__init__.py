"""scikit-learn estimators.  ``GBRanker`` imports its boosting library only when it trains."""

from ._gbranker import BUILTIN_OBJECTIVES, DEFAULT_MIN_CHILD_WEIGHT, GBRanker, resolve_objective
from ._scoring import RankingScorer, make_ranking_scorer

__all__ = ["GBRanker", "BUILTIN_OBJECTIVES", "DEFAULT_MIN_CHILD_WEIGHT", "resolve_objective", "make_ranking_scorer",
           "RankingScorer"]
