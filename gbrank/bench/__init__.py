"""Benchmarks: train several contenders under one protocol and write one report.

* ``gbrank bench letor`` (``_letor.py``): LETOR folds, the libraries' own ranking objectives
  (LightGBM, XGBoost, CatBoost) against gbrank's lambda objectives and their bounded forms.
* ``_report.py``: the report every benchmark writes from a tidy per-query table
  (``write_report``): summary tables with confidence intervals, paired tests against a
  baseline with Holm's correction, and the plots (``_plots.py``).

The top layer of gbrank: it may import every other sub-package.  This ``__init__`` imports
nothing heavy; the functions load on first use.
"""

from importlib import import_module as _import_module

_LAZY = {
    "write_report": "gbrank.bench._report:write_report",
    "holm": "gbrank.bench._report:holm",
}


def __getattr__(name):
    if name in _LAZY:
        module, _, attr = _LAZY[name].partition(":")
        value = getattr(_import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'gbrank.bench' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_LAZY))


__all__ = list(_LAZY)
