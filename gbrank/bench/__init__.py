"""Benchmarks: train several contenders under one protocol and write one report.

* ``gbrank bench letor`` (:func:`prepare_letor`, :func:`run_letor`): LETOR folds, the
  libraries' own ranking objectives (every backend record's) against gbrank's lambda
  objectives and their bounded forms.  Parts: ``_letor_plan.py`` (contenders, arguments,
  folds), ``_letor_run.py`` (one run), ``_letor.py`` (the benchmark).
* ``gbrank bench mf`` (:func:`prepare_mf`, :func:`run_mf`): the recommendation protocol of
  Li et al. 2021 with gbrank's MF.  Parts: ``_mf_plan.py``, ``_mf_run.py``, ``_mf.py``,
  ``_mf_report.py`` (its summary and findings), ``_mf_correction.py``.
* Shared by both: ``_store.py`` (the run store: cache keys, versions, atomic writes, one lock
  per run), ``_pool.py`` (the process pool) and ``_report.py`` (the report every benchmark
  writes from a tidy per-query table, :func:`write_report`, with the plots of ``_plots.py``).

The top layer of gbrank: it may import every other sub-package.  This ``__init__`` imports
nothing heavy; the functions load on first use.  The command line is ``gbrank.cli``.
"""

from importlib import import_module as _import_module

_LAZY = {
    "write_report": "gbrank.bench._report:write_report",
    "environment": "gbrank.bench._report:environment",
    "prepare_letor": "gbrank.bench._letor:prepare_letor",
    "run_letor": "gbrank.bench._letor:run_letor",
    "write_findings": "gbrank.bench._letor_findings:write_findings",
    "write_paradigm": "gbrank.bench._letor_paradigm:write_paradigm",
    "contender_listing": "gbrank.bench._letor:contender_listing",
    "prepare_mf": "gbrank.bench._mf:prepare_mf",
    "run_mf": "gbrank.bench._mf:run_mf",
    "RunStore": "gbrank.bench._store:RunStore",
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
