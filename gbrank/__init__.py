"""gbrank: choose the metric your ranking model optimises, and measure the effect honestly.

``import gbrank`` is light: the boosting libraries and torch are imported only by the
sub-packages that use them, when those are first touched.
"""

import logging as _logging
from importlib import import_module as _import_module

from ._version import __version__
from .evaluation import EvaluationResult, beyond_accuracy, compare, evaluate, evaluate_run
from .metrics import parse_metric

# Library convention: messages go to the "gbrank" logger tree (one logger per sub-package,
# "gbrank.bench", "gbrank.torch", ...); the application decides whether and where they show.
_logging.getLogger(__name__).addHandler(_logging.NullHandler())

# Heavy or optional parts, imported on first attribute access (PEP 562).
_LAZY = {
    "datasets": "gbrank.datasets",
    "LambdaObjective": "gbrank.lambdas:LambdaObjective",
    "ListwiseObjective": "gbrank.lambdas:ListwiseObjective",
    "swap_deltas": "gbrank.lambdas:swap_deltas",
    "GBRanker": "gbrank.estimators:GBRanker",
    "bounds": "gbrank.bounds",
    "torch": "gbrank.torch",
    "MFRanker": "gbrank.torch:MFRanker",
    "NetRanker": "gbrank.torch:NetRanker",
}


def __getattr__(name):
    if name in _LAZY:
        target = _LAZY[name]
        module, _, attr = target.partition(":")
        value = _import_module(module)
        value = getattr(value, attr) if attr else value
        globals()[name] = value
        return value
    raise AttributeError(f"module 'gbrank' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_LAZY))


__all__ = ["evaluate", "evaluate_run", "compare", "beyond_accuracy", "EvaluationResult", "parse_metric", "__version__",
           *_LAZY]
