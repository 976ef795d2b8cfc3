"""``gbrank bench mf``: the recommendation protocol of Li et al. (SIGIR 2021) with gbrank's MF.

For each data set, NSR and seeded random split (:func:`gbrank.torch.split_interactions`:
ratings >= threshold are positives, users with at least 25 positives, 20 % of each user's
positives held out, NSR x as many sampled test negatives), every chosen loss trains an
:class:`gbrank.torch.MFRanker` whose epoch is chosen on a validation split of each user's
*training* positives (never the test set, unless ``--epoch-on test`` asks for the papers'
choice).  Each model is evaluated three ways, one per-user row each, labelled by
``protocol``:

* ``full``: the held-out positives ranked among every catalogue item the user never
  interacted with (the number to trust);
* ``sampled``: the split's sampled test lists (the paper's protocol; optimistic, and it can
  reorder systems, Krichene & Rendle 2020);
* ``corrected``: the full-catalogue metric estimated from the sampled ranks alone
  (:mod:`gbrank.bench._mf_correction`).

The parts: the plan (``_mf_plan.py``), one run (``_mf_run.py``), the run store
(``_store.py``: one file per data x NSR x split x loss x settings in ``OUT/runs``, reused
when the command is run again; locks let two processes share one ``OUT``), the process pool
(``_pool.py``) and the reports (``_mf_report.py``: ``OUT/full``, ``OUT/sampled``,
``OUT/corrected`` through :func:`gbrank.bench._report.write_report`, and ``OUT/summary.md``
with the protocols side by side and the beyond-accuracy metrics of each model's top-10 lists,
:func:`gbrank.beyond_accuracy`, also in ``OUT/beyond_accuracy.csv``).  This module runs the
benchmark.
"""

from __future__ import annotations

import logging
import pathlib
import time

import pandas as pd

from .._progress import progress
from . import _store
from ._mf_plan import MFPlan, prepare_mf
from ._mf_report import write_reports
from ._mf_run import arrays_frame, plan_dict, train_task

__all__ = ["run_mf", "prepare_mf", "cached_run", "run_name", "run_versions"]

log = logging.getLogger("gbrank.bench")


def run_name(plan: MFPlan, nsr: int, seed: int, loss: str) -> str:
    """The run's name in the store: data, NSR, seed, loss and a hash of the training settings."""
    readable = f"{plan.data_name}-nsr{nsr}-seed{seed}-{loss.replace('@', 'at').replace('+', '-')}"
    return f"{_store.slug(readable)}__{_store.key(plan.training_settings(), length=12)}"


def run_versions() -> dict:
    """The versions an MF run's result depends on (saved with it; a cached run made under
    other versions is trained again)."""
    from ._report import environment

    env = environment(("numpy", "torch"))
    return {k: env[k] for k in ("gbrank", "numpy", "torch")}


def _store_of(plan: MFPlan) -> _store.RunStore:
    return _store.RunStore(pathlib.Path(plan.out) / "runs")


def cached_run(plan: MFPlan, nsr: int, seed: int, loss: str):
    """(frame, record) of a finished run with the same settings and versions, or None."""
    state, run = _store_of(plan).state(run_name(plan, nsr, seed, loss), run_versions())
    return (arrays_frame(run.arrays), run.record) if state == "ok" else None


def run_mf(plan: MFPlan, write=None) -> dict:
    """Train and evaluate every (NSR, split, loss) of the plan (reusing cached runs), then write
    the reports; returns ``{"per_query": DataFrame, "meta": [...], "summaries": {...}}``.

    Progress lines go to ``write`` (the CLI prints them), by default to the ``gbrank.bench``
    logger at INFO level."""
    write = write or log.info
    from ._pool import train_missing

    out = pathlib.Path(plan.out)
    out.mkdir(parents=True, exist_ok=True)
    store, versions = _store_of(plan), run_versions()
    todo, frames, metas = [], {}, {}
    counts = {"ok": 0, "missing": 0, "stale": 0, "unreadable": 0}
    for run in plan.runs():
        state, stored = store.state(run_name(plan, *run), versions)
        counts[state] += 1
        if state == "ok":
            frames[run], metas[run] = arrays_frame(stored.arrays), stored.record
        else:
            todo.append(run)
    write(f"gbrank bench mf: {plan.data_name}, NSR {plan.nsr}, seeds {plan.seeds}, {len(plan.losses)} losses: "
          f"{len(plan.runs())} runs, {len(plan.runs()) - len(todo)} cached, {len(todo)} to train "
          f"({plan.jobs} job(s) x {plan.threads} thread(s), device {plan.device})"
          + _store.retrain_notes(counts))
    if plan.report_only:
        # report the (NSR, split) pairs every loss finished; name the rest
        missing = {(n, s) for n, s, _ in todo}
        plan.unfinished = [f"nsr{n}-seed{s}" for n in plan.nsr for s in plan.seeds if (n, s) in missing]
        if len(plan.unfinished) == len(plan.nsr) * len(plan.seeds):
            raise ValueError(f"--report-only: no (NSR, split) of this plan has all its runs finished in {out / 'runs'}; "
                             "run the command without --report-only first")
        if plan.unfinished:
            write(f"--report-only: left out the unfinished splits {', '.join(plan.unfinished)}")
        todo = []
    start = time.perf_counter()
    if todo:
        bar = progress(total=len(todo), desc="runs", unit="run")
        shared = plan_dict(plan)
        tasks = [(shared, *run, str(store.folder), run_name(plan, *run), versions) for run in todo]
        # --jobs 1: in this process (its thread settings; the CLI sets them before torch loads)
        for task, (frame, meta, here) in train_missing(tasks, train_task, jobs=plan.jobs, threads=plan.threads):
            run = task[1:4]
            frames[run], metas[run] = frame, meta
            where = "" if here else " (trained by another process)"
            bar.set_postfix_str(f"{run[2]} nsr{run[0]} seed{run[1]}: best epoch {meta['best_epoch']}{where}")
            bar.update()
        bar.close()
    elapsed = time.perf_counter() - start
    done = [r for r in plan.runs() if r in frames and f"nsr{r[0]}-seed{r[1]}" not in plan.unfinished]
    per_query = pd.concat([frames[r] for r in done], ignore_index=True)
    meta_list = [metas[r] for r in done]
    with store.report_lock():
        summaries = write_reports(plan, per_query, meta_list, elapsed)
    write(f"reports written to {out} ({elapsed:.0f} s of training and evaluation in this call)")
    return {"per_query": per_query, "meta": meta_list, "summaries": summaries}
