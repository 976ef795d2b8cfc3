"""``gbrank bench letor``, one run: one contender trained on one fold, stored in the run store.

Every contender trains through :class:`gbrank.estimators.GBRanker`, which reads the
library's :class:`gbrank.backends.Backend` record: the same early stopping (gbrank's metric
on the vali split) for all; tree size from the plan's setting for the library's
``tree_size`` (``num_leaves``, or ``catboost_depth`` for symmetric trees).  A tuned run
(``--tune``) has ``settings["params"]``: one configuration as its library receives it
(:func:`tuned_settings`), which replaces the plan's learning rate and tree size.
"""

from __future__ import annotations

import dataclasses
import hashlib
import pathlib
import time

import numpy as np

from gbrank.backends import BACKENDS

from .._store import RunStore, key, read_run, slug
from ._plan import TREE_SIZE_SETTING, Contender, objective_arguments

CACHE_VERSION = 1


def fingerprint(fold) -> str:
    """Hash of a fold's train, vali and test arrays."""
    h = hashlib.sha256()
    for split in (fold.train, fold.vali, fold.test):
        for a in split:
            a = np.ascontiguousarray(a)
            h.update(str((a.shape, a.dtype)).encode())
            h.update(a.data)  # the buffer itself: no bytes copy of a full-size fold
    return h.hexdigest()[:16]


def run_key(contender: Contender, fold_name: str, fingerprint: str, settings: dict) -> str:
    """Hash of everything that determines a run's test predictions (a contender field added
    later enters only when set, so that the other runs keep their keys)."""
    fields = {k: v for k, v in dataclasses.asdict(contender).items() if k not in ("normalised", "options") or v}
    return key({"v": CACHE_VERSION, "contender": fields, "fold": fold_name, "data": fingerprint,
                       "settings": settings})


def tuned_settings(settings: dict, config: dict, library: str) -> dict:
    """The settings of one tuned run: the plan's protocol (rounds, patience, early-stopping
    metric, seed, vali fraction) and ``params``, the configuration as ``library`` receives
    it (:func:`gbrank.bench.letor._tune.library_settings`); hashed into the run's key, so
    configurations that reach a library alike share one run."""
    from ._tune import library_settings

    kwargs, _ = library_settings(config, library)
    keep = ("early_stopping_metric", "rounds", "patience", "seed", "vali_fraction")
    return {**{k: settings[k] for k in keep}, "params": kwargs}


def run_name(contender: Contender, fold_name: str, fingerprint: str, settings: dict) -> str:
    """The run's name in the store: contender, fold and :func:`run_key`."""
    return f"{slug(contender.name)}__{fold_name}__{run_key(contender, fold_name, fingerprint, settings)}"


def run_versions(contender: Contender) -> dict:
    """The versions a run's result depends on: gbrank, numpy, numba for gbrank's objectives,
    and the contender's library.  Saved with each run; a cached run made under other
    versions is trained again."""
    from .._report import environment

    names = ("numpy", contender.library) + (("numba",) if contender.kind == "gbrank" else ())
    env = environment(names)
    return {k: env[k] for k in ("gbrank", *names)}


def load_cached(path) -> tuple[np.ndarray, dict]:
    """(test scores, record) of the run saved at ``path``."""
    run = read_run(path)
    return run.arrays["scores"], run.record


def _objective(contender: Contender, seed: int):
    """The ``GBRanker`` objective of a contender: its name, or a configured ``LambdaObjective``."""
    from gbrank.lambdas import LambdaObjective

    arguments = objective_arguments(contender, seed)
    return LambdaObjective(contender.objective, **arguments) if arguments else contender.objective


#: (library, objective, its arguments, early-stopping metric) -> seconds: what this process has
#: warmed up already (numba's kernels load or compile once per process)
_WARMED: dict = {}


def warm_up(contender: Contender, settings: dict, threads: int) -> float:
    """Load or compile, once per process, what a contender's first run would otherwise pay
    inside its timed training; return the seconds it took (0 when already done here).

    numba compiles gbrank's kernels (the objective's swap deltas, the evaluator of the
    early-stopping metric) on their first call in a process, or loads them from its cache:
    seconds to tens of seconds, which would be charged to whichever contender a worker
    trains first.  A two-round fit of the same objective, backend and early-stopping metric
    on a tiny synthetic set (12 queries of 8 to 12 documents) calls every one of those kernels
    with the argument types of the real run, so the real run's timing holds training only.
    The seconds are recorded as the run's ``compile_seconds``."""
    from gbrank.datasets import make_letor
    from gbrank.estimators import GBRanker

    metric = settings["early_stopping_metric"]
    arguments = sorted(objective_arguments(contender, settings["seed"]).items())
    key = (contender.library, contender.objective, repr(arguments), contender.binary_labels, metric)
    if key in _WARMED:
        return 0.0
    t0 = time.perf_counter()
    X, y, qid = make_letor(n_queries=12, docs_per_query=(8, 12), n_features=4, max_label=2, random_state=0)
    y_fit = (y >= 1).astype(np.float64) if contender.binary_labels else y
    model = GBRanker(_objective(contender, settings["seed"]), backend=contender.library, n_estimators=2,
                     eval_metric=metric, early_stopping_rounds=1, random_state=0, n_jobs=threads)
    model.fit(X, y_fit, qid=qid, eval_set=[(X, y, qid)])
    model.predict(X)
    _WARMED[key] = time.perf_counter() - t0
    return _WARMED[key]


def train_one(contender: Contender, fold, settings: dict, threads: int, scope=None) -> tuple[np.ndarray, dict]:
    """Train one contender on one fold (early-stopped on its vali split); return the test
    scores and a record of the run.

    The record's ``seconds`` (and ``cpu_seconds``) time the training and prediction only;
    the once-per-process warm-up before it (:func:`warm_up`) is its ``compile_seconds``.
    With a ``scope`` (the fold's name and fingerprint) the library's training and validation
    sets are shared with the other runs of the fold (``gbrank.backends.shared_datasets``):
    the first run of a library on the fold pays their construction in its ``seconds``."""
    import contextlib

    from gbrank.backends import shared_datasets
    from gbrank.estimators import GBRanker

    metric = settings["early_stopping_metric"]
    y_train = (fold.train.y >= 1).astype(np.float64) if contender.binary_labels else fold.train.y
    size = BACKENDS[contender.library].tree_size
    objective = _objective(contender, settings["seed"])
    if "params" in settings:  # a tuned run: one configuration, as the library receives it
        params = {k: (dict(v) if isinstance(v, dict) else v) for k, v in settings["params"].items()}
    else:
        params = {"learning_rate": settings["learning_rate"], size: settings[TREE_SIZE_SETTING[size]]}
    compile_seconds = warm_up(contender, settings, threads)
    t0, c0 = time.perf_counter(), time.process_time()
    model = GBRanker(objective, backend=contender.library, n_estimators=settings["rounds"], eval_metric=metric,
                     early_stopping_rounds=settings["patience"], random_state=settings["seed"], n_jobs=threads,
                     **params)
    with shared_datasets(scope) if scope is not None else contextlib.nullcontext():
        model.fit(fold.train.X, y_train, qid=fold.train.qid, eval_set=[(fold.vali.X, fold.vali.y, fold.vali.qid)])
    best = int(model.best_iteration_)
    history = [float(v) for v in model.evals_result_["valid_0"][metric]]
    scores = model.predict(fold.test.X)
    record = {"contender": contender.name, "fold": fold.name, "best_iteration": best,
              "rounds_trained": len(history), "vali_at_best": history[best - 1] if history else None,
              "seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0, "threads": threads,
              "compile_seconds": compile_seconds}
    if "params" in settings:
        record["params"] = settings["params"]
    return np.asarray(scores, dtype=np.float64), record


#: this process's fold (fingerprint -> fold): a worker given the fold again (a new copy with
#: each task) trains on the one it holds, whose library data sets it has built already
_HELD_FOLD: dict = {}


def held_fold(fold, scope: str):
    """The fold this process holds for ``scope`` (a fold's name and fingerprint), or
    ``fold``, now held; holding another fold's releases the previous one."""
    held = _HELD_FOLD.get(scope)
    if held is not None:
        return held
    _HELD_FOLD.clear()
    _HELD_FOLD[scope] = fold
    return fold


def release_folds() -> None:
    """Drop the held fold and the library data sets built from it."""
    from gbrank.backends import free_shared_datasets

    _HELD_FOLD.clear()
    free_shared_datasets()


def train_task(task, wait: bool):
    """Worker entry point (also used in-process): claim the run from the store and train it
    unless another process did.  Returns ``(record, trained here)``, or None when ``wait``
    is False and another process holds the run.

    The runs of one fold share each library's training and validation sets
    (``gbrank.backends.shared_datasets``, scoped by the fold's fingerprint, ``task[8]``): the
    features are binned once per fold and library in each process, and released when the
    process trains another fold."""
    contender, fold, settings, threads, folder, name, set_numba_threads = task[:7]
    scope = f"{fold.name}:{task[8]}"
    fold = held_fold(fold, scope)
    if set_numba_threads:
        import numba

        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))

    def train():
        scores, record = train_one(contender, fold, settings, threads, scope=scope)
        return {"scores": scores}, record

    got = RunStore(pathlib.Path(folder)).claim(name, run_versions(contender), train, wait=wait)
    return None if got is None else (got[0].record, got[1])
