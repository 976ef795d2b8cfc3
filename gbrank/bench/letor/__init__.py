"""The room of ``gbrank bench letor``: ranking objectives compared on LETOR folds.

``_plan.py`` (contenders, arguments, folds), ``_run.py`` (one run), ``_tune.py`` (fair
tuning), ``_bench.py`` (the benchmark: train what is missing, evaluate, write the report
through the core's ``bench/_report.py``), and the named analyses a report runs only when
asked (``_analyses.py``: ``findings``, ``paradigm``).  It uses the core (``bench/_store.py``,
``_pool.py``, ``_report.py``, ``_plots.py``, ``_analyses.py``) and never ``bench/mf``.  The
public names are :mod:`gbrank.bench`'s; this ``__init__`` imports nothing.
"""
