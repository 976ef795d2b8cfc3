"""scikit-learn estimators.  ``GBRanker`` imports its boosting library only when it trains."""

from ._gbranker import BUILTIN_OBJECTIVES, GBRanker

__all__ = ["GBRanker", "BUILTIN_OBJECTIVES"]
