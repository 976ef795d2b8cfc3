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
  (:mod:`gbrank.bench.mf._correction`).

The parts: the plan (``_plan.py``), one run (``_run.py``), the run store
(``bench/_store.py``: one file per data x NSR x split x loss x settings in ``OUT/runs``, reused
when the command is run again; locks let two processes share one ``OUT``), the process pool
(``bench/_pool.py``) and the reports (``_report.py``: ``OUT/full``, ``OUT/sampled``,
``OUT/corrected`` through :func:`gbrank.bench._report.write_report`, and ``OUT/summary.md``
with the protocols side by side and the beyond-accuracy metrics of each model's top-10 lists,
:func:`gbrank.beyond_accuracy`, also in ``OUT/beyond_accuracy.csv``).  This module runs the
benchmark.
"""

from __future__ import annotations

import logging
import math
import pathlib
import time

import pandas as pd

from ..._progress import RunProgress
from ..._validation import plural
from .._store import Run, RunStore, SUFFIX, key, retrain_notes, slug
from ._plan import MFPlan, prepare_mf
from ._report import write_reports
from ._run import arrays_frame, plan_dict, train_task

__all__ = ["run_mf", "prepare_mf", "cached_run", "run_name", "run_versions", "chosen_runs"]

log = logging.getLogger("gbrank.bench")


def _readable(plan: MFPlan, nsr: int, seed: int, contender: str, lr=None) -> str:
    rate = "" if lr is None else f"-lr{lr:g}"
    return slug(f"{plan.data_name}-nsr{nsr}-{plan.split_label(seed)}-"
                       f"{contender.replace('@', 'at').replace('+', '-')}{rate}")


def run_name(plan: MFPlan, nsr: int, seed: int, contender: str, lr=None) -> str:
    """The run's name in the store: data, NSR, split, contender, learning rate and a hash of
    the run's settings (:meth:`MFPlan.run_settings`)."""
    settings = plan.run_settings(nsr, seed, contender, lr)
    return f"{_readable(plan, nsr, seed, contender, lr)}__{key(settings, length=12)}"


def same_run_other_ceiling(plan: MFPlan, nsr: int, seed: int, contender: str, lr=None) -> Run | None:
    """A stored run that *is* this run although it was trained under another ``--epochs``.

    Training does not look at the epoch ceiling until it reaches it (validation every epoch,
    the same patience): a run that stopped on patience at epoch E before its own ceiling
    is, epoch for epoch, the run of every ceiling >= E.  A baseline (popularity, random)
    does not train and is the same under any ceiling.  So raising ``--epochs`` retrains only
    the runs that reached the old ceiling.  Returns the first such run in the store whose
    settings equal this run's but for ``epochs``, or None."""
    want = {k: v for k, v in plan.run_settings(nsr, seed, contender, lr).items() if k != "epochs"}
    store = _store_of(plan)
    for path in sorted(store.folder.glob(f"{_readable(plan, nsr, seed, contender, lr)}__*{SUFFIX}")):
        run = store.load(path.name[:-len(SUFFIX)], warn=False)
        if run is None:
            continue
        settings = dict(run.record.get("settings", {}))
        ceiling = settings.pop("epochs", None)
        if settings != want or ceiling is None:
            continue
        epochs_run = int(run.record.get("epochs_run", ceiling))
        if contender in plan.baselines or (epochs_run < int(ceiling) and epochs_run <= plan.epochs):
            return run
    return None


def _lookup(plan: MFPlan, store: RunStore, run: tuple, versions: dict) -> tuple[str, Run | None, str]:
    """(state, stored run, how) of one planned run: the store's state of its own name
    (:meth:`RunStore.state`), else ``"ok"``/``"stale"`` for the same run stored under another
    epoch ceiling (:func:`same_run_other_ceiling`; ``how`` is then ``"other ceiling"``)."""
    state, stored = store.state(run_name(plan, *run), versions)
    if state != "missing":
        return state, stored, ""
    other = same_run_other_ceiling(plan, *run)
    if other is None:
        return "missing", None, ""
    return ("ok" if other.record.get("versions", versions) == versions else "stale"), other, "other ceiling"


def run_versions() -> dict:
    """The versions an MF run's result depends on (saved with it; a cached run made under
    other versions is trained again)."""
    from .._report import environment

    env = environment(("numpy", "torch"))
    return {k: env[k] for k in ("gbrank", "numpy", "torch")}


def _store_of(plan: MFPlan) -> RunStore:
    return RunStore(pathlib.Path(plan.out) / "runs")


def cached_run(plan: MFPlan, nsr: int, seed: int, loss: str, lr=None):
    """(frame, record) of a finished run with the same settings and versions, or None; ``lr``
    None: the loss's only learning rate (its default when the plan has no grid)."""
    if lr is None and loss in plan.lr_grid:
        lr = plan.lr_grid[loss][0]
    state, run, _ = _lookup(plan, _store_of(plan), (nsr, seed, loss, lr), run_versions())
    return (arrays_frame(run.arrays), run.record) if state == "ok" else None


def chosen_runs(plan: MFPlan, done: list, metas: dict) -> list:
    """The run of each (NSR, split, contender) that the protocol reports use: of its
    learning rates, the one whose model has the best validation value of the loss's own
    metric (the epoch-selection value, ``best_validation``; the first rate on ties)."""
    best: dict = {}
    for run in done:
        key = run[:3]
        score = metas[run].get("best_validation")
        score = -math.inf if score is None else score
        if key not in best or score > best[key][0]:
            best[key] = (score, run)
    return [run for _, run in best.values()]


def run_line(plan: MFPlan, run: tuple, meta: dict, here: bool = True) -> str:
    """One finished run in words: loss and learning rate, NSR and split, best and last epoch,
    the best validation value, seconds (training, evaluation, and the warm-up apart)."""
    nsr, seed, loss, lr = run
    rate = "" if lr is None else f" lr {lr:g}"
    where = f"{loss}{rate} nsr{nsr}-{plan.split_label(seed)}"
    if not here:
        return f"{where}: trained by another process"
    best = meta.get("best_validation")
    value = "" if best is None else f", best validation {meta.get('eval_metric') or 'value'} {best:.4f}"
    warm = meta.get("compile_seconds") or 0.0
    return (f"{where}: best epoch {meta['best_epoch']} of {meta['epochs_run']}{value}, "
            f"{meta['train_seconds']:.1f} s training, {meta['eval_seconds']:.1f} s evaluation"
            + (f" (+ {warm:.1f} s warm-up)" if warm >= 0.05 else ""))


def run_mf(plan: MFPlan, write=None) -> dict:
    """Train and evaluate every (NSR, split, loss) of the plan (reusing cached runs), then write
    the reports; returns ``{"per_query": DataFrame, "meta": [...], "summaries": {...}}``.

    Progress lines go to ``write`` (the CLI prints them), by default to the ``gbrank.bench``
    logger at INFO level."""
    write = write or log.info
    from .._pool import train_missing

    out = pathlib.Path(plan.out)
    out.mkdir(parents=True, exist_ok=True)
    store, versions = _store_of(plan), run_versions()
    todo, frames, metas = [], {}, {}
    counts = {"ok": 0, "missing": 0, "stale": 0, "unreadable": 0}
    reported_stale, other_ceiling = [], 0
    for run in plan.runs():
        state, stored, how = _lookup(plan, store, run, versions)
        if state == "stale" and plan.report_only:
            # --report-only trains nothing: a run made under other versions (another machine's
            # torch, say) is reported as it is, and the log names the versions
            stored = stored if how else store.load(run_name(plan, *run))
            state = "ok"
            other = {k: v for k, v in stored.record.get("versions", {}).items() if versions.get(k) != v}
            reported_stale.append(f"{run_name(plan, *run)} ({', '.join(f'{k} {v}' for k, v in sorted(other.items()))})")
        counts[state] += 1
        other_ceiling += bool(how) and state == "ok"
        if state == "ok":
            frames[run], metas[run] = arrays_frame(stored.arrays), stored.record
        else:
            todo.append(run)
    splits = [plan.split_label(x) for x in plan.seeds]
    grid = sorted({lr for c in plan.losses for lr in plan.learning_rates_of(c)})
    write(f"gbrank bench mf: {plan.data_name}, NSR {', '.join(map(str, plan.nsr))}, splits {', '.join(splits)}, "
          f"{len(plan.losses)} losses "
          f"x learning rates {', '.join(f'{x:g}' for x in grid)} ({plan.optimizer}) + baselines "
          f"{', '.join(plan.baselines) or 'none'}: "
          f"{plural(len(plan.runs()), 'run')}, {len(plan.runs()) - len(todo)} cached, {len(todo)} to train "
          f"({plural(plan.jobs, 'job')} x {plural(plan.threads, 'thread')}, device {plan.device})"
          + (f"; {other_ceiling} of the cached runs stopped on patience under another --epochs ceiling "
             "(or are baselines) and are the same runs under this one" if other_ceiling else "")
          + retrain_notes(counts))
    if reported_stale:
        write(f"--report-only: {plural(len(reported_stale), 'stored run')} made under other versions than this "
              f"installation's ({', '.join(f'{k} {v}' for k, v in sorted(versions.items()))}) are reported as they "
              f"are, e.g. {reported_stale[0]}")
    if plan.report_only:
        # report the (NSR, split) pairs every loss finished; name the rest
        missing = {(n, s) for n, s, _, _ in todo}
        plan.unfinished = [f"nsr{n}-{plan.split_label(s)}" for n in plan.nsr for s in plan.seeds if (n, s) in missing]
        if len(plan.unfinished) == len(plan.nsr) * len(plan.seeds):
            raise ValueError(f"--report-only: no (NSR, split) of this plan has all its runs finished in {out / 'runs'}; "
                             "run the command without --report-only first")
        if plan.unfinished:
            write(f"--report-only: left out the unfinished splits {', '.join(plan.unfinished)}")
        todo = []
    start = time.perf_counter()
    if todo:
        if plan.jobs == 1:  # the runs happen in this process: its thread budget (workers set their own)
            from .._pool import thread_budget

            thread_budget(plan.threads)
        shared = plan_dict(plan)
        tasks = [(shared, *run, str(store.folder), run_name(plan, *run), versions) for run in todo]
        # a bar on a terminal; elsewhere a log line per run and a heartbeat (gbrank._progress)
        with RunProgress(len(tasks), label="gbrank bench mf", logger=log) as runs:
            # --jobs 1: in this process (its thread settings; the CLI sets them before torch loads)
            for task, (frame, meta, here) in train_missing(tasks, train_task, jobs=plan.jobs, threads=plan.threads):
                run = task[1:5]
                frames[run], metas[run] = frame, meta
                runs.finished(run_line(plan, run, meta, here))
    elapsed = time.perf_counter() - start
    done = [r for r in plan.runs() if r in frames and f"nsr{r[0]}-{plan.split_label(r[1])}" not in plan.unfinished]
    chosen = chosen_runs(plan, done, metas)
    per_query = pd.concat([frames[r] for r in chosen], ignore_index=True)
    meta_list = [metas[r] for r in chosen]
    with store.report_lock():
        summaries = write_reports(plan, per_query, meta_list, elapsed, all_meta=[metas[r] for r in done])
    write(f"reports written to {out} ({elapsed:.0f} s of training and evaluation in this call)")
    return {"per_query": per_query, "meta": meta_list, "summaries": summaries}
