"""The room of ``gbrank bench mf``: the recommendation protocol of Li et al. (SIGIR 2021) with gbrank's MF.

``_plan.py`` (losses, NSR, splits, settings), ``_splits.py`` (random splits and ready folds),
``_run.py`` (one run), ``_baselines.py`` (popularity, random), ``_select.py`` (the two
selections of learning rate and epoch), ``_correction.py`` (the sampled-metric correction),
``_report.py`` (the per-protocol reports and ``summary.md``), ``_bench.py`` (the benchmark),
and the named analysis a report runs only when asked (``_analyses.py``: ``paper``, the
paper's tables beside gbrank's numbers, ``_paper.py``).  It uses the core (``bench/_store.py``,
``_pool.py``, ``_report.py``, ``_plots.py``, ``_analyses.py``) and never ``bench/letor``.  The
public names are :mod:`gbrank.bench`'s; this ``__init__`` imports nothing.
"""
