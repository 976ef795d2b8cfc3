"""Benchmarks: train several contenders under one protocol and write one report.

One room per benchmark, and a shared core:

* ``bench/letor/``, ``gbrank bench letor`` (:func:`prepare_letor`, :func:`run_letor`): LETOR
  folds, the libraries' own ranking objectives (every backend record's) against gbrank's
  lambda objectives and their bounded forms.  ``_plan.py`` (contenders, arguments, folds),
  ``_run.py`` (one run), ``_tune.py`` (fair tuning), ``_bench.py`` (the benchmark), and its
  named analyses (``_analyses.py``: ``findings`` in ``_findings.py``, ``paradigm`` in
  ``_paradigm.py``).
* ``bench/mf/``, ``gbrank bench mf`` (:func:`prepare_mf`, :func:`run_mf`): the recommendation
  protocol of Li et al. 2021 with gbrank's MF.  ``_plan.py``, ``_splits.py``, ``_run.py``,
  ``_baselines.py``, ``_select.py``, ``_correction.py``, ``_report.py`` (its summary),
  ``_bench.py``, and its named analysis (``_analyses.py``: ``paper`` in ``_paper.py``).
* The core, shared by both and importing neither: ``_store.py`` (the run store: cache keys,
  versions, atomic writes, one lock per run), ``_pool.py`` (the process pool), ``_report.py``
  (the report every benchmark writes from a tidy per-query table, :func:`write_report`, with
  the plots of ``_plots.py``) and ``_analyses.py`` (named analyses: what a report adds only
  when asked, ``--analyses``; :data:`LETOR_ANALYSES`, :data:`MF_ANALYSES`).

The two rooms do not import each other (``tests/test_layering.py``).  The top layer of gbrank:
it may import every other sub-package.  This ``__init__`` imports nothing heavy; the names
load on first use.  The command line is ``gbrank.cli``.
"""

from importlib import import_module as _import_module

_LAZY = {
    "write_report": "gbrank.bench._report:write_report",
    "environment": "gbrank.bench._report:environment",
    "RunStore": "gbrank.bench._store:RunStore",
    "Analysis": "gbrank.bench._analyses:Analysis",
    "prepare_letor": "gbrank.bench.letor._bench:prepare_letor",
    "run_letor": "gbrank.bench.letor._bench:run_letor",
    "contender_listing": "gbrank.bench.letor._bench:contender_listing",
    "write_findings": "gbrank.bench.letor._findings:write_findings",
    "write_paradigm": "gbrank.bench.letor._paradigm:write_paradigm",
    "LETOR_ANALYSES": "gbrank.bench.letor._analyses:ANALYSES",
    "LETOR_ANALYSES_DEFAULT": "gbrank.bench.letor._analyses:PRESET_TEXT",
    "prepare_mf": "gbrank.bench.mf._bench:prepare_mf",
    "run_mf": "gbrank.bench.mf._bench:run_mf",
    "MF_ANALYSES": "gbrank.bench.mf._analyses:ANALYSES",
    "MF_ANALYSES_DEFAULT": "gbrank.bench.mf._analyses:PRESET_TEXT",
    "analyses_help": "gbrank.bench._analyses:analyses_help",
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
