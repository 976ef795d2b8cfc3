"""``gbrank bench letor``: ranking objectives compared on LETOR folds under one protocol.

Protocol (every contender alike): train on a fold's ``train`` split; after every boosting
round evaluate the ``vali`` split with gbrank's evaluator (the early-stopping metric,
ndcg@10 by default; empty lists 0, ties averaged); stop after ``patience`` rounds without
improvement or at ``rounds``; predict the ``test`` split with the best round.  Same seed,
learning rate and round budget for all; tree sizes: ``num_leaves`` for LightGBM and XGBoost
(XGBoost grows leaf-wise, ``max_leaves``), symmetric trees of ``depth`` for CatBoost.
Everything else is the library's default.  A fold without a ``vali`` split (the bundled
example) gets one: ``vali_fraction`` of its training queries, drawn with the seed.

Each finished (contender, fold) run is cached in ``<out>/runs`` under a hash of everything
that determines it, so an interrupted benchmark resumes where it stopped; a cached run made
under other versions of gbrank, numpy, numba or its library is trained again.  The test
predictions are evaluated per fold and written through ``gbrank.bench._report``.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import json
import os
import pathlib
import re
import time
from typing import Callable, Sequence

import numpy as np

BOUNDINGS = ("minmax", "expectation", "expectation_max", "distribution")
GBRANK_METRICS = ("ndcg", "ap", "rr", "nrbp@0.8", "nrbp@0.9", "nrbp@0.95")
REPORT_METRICS = ["ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "ap", "rr", "rbp@0.8", "rbp@0.9", "rbp@0.95",
                  "nrbp@0.8", "nrbp@0.9", "nrbp@0.95"]
CURVE_METRICS = [f"ndcg@{k}" for k in range(1, 21)]
CATBOOST_LOSSES = ("YetiRank", "YetiRankPairwise", "LambdaMart:metric=NDCG", "LambdaMart:metric=MAP",
                   "LambdaMart:metric=MRR")
QUICK = ("lightgbm:lambdarank", "xgboost:rank:ndcg", "catboost:YetiRank", "gbrank:ndcg", "gbrank:nrbp@0.95",
         "gbrank:nrbp@0.95+minmax")
QUICK_ROUNDS, QUICK_PATIENCE = 20, 5
DEFAULT_ROUNDS, DEFAULT_PATIENCE = 1000, 50
CACHE_VERSION = 1


@dataclasses.dataclass(frozen=True)
class Contender:
    """One way of training a ranker: a library and its objective (or loss)."""

    name: str
    library: str          # "lightgbm", "xgboost" or "catboost"
    objective: str        # GBRanker objective name, or CatBoost loss
    kind: str             # "builtin" or "gbrank"
    bounding: str | None = None
    binary_labels: bool = False  # trained on labels >= 1 (XGBoost's rank:map refuses grades)

    def describe(self) -> str:
        where = {"lightgbm": "LightGBM", "xgboost": "XGBoost", "catboost": "CatBoost"}[self.library]
        if self.kind == "gbrank":
            text = f"gbrank LambdaObjective {self.objective!r} on {where} (GBRanker defaults)"
        else:
            text = f"{where}'s own {self.objective!r}, library defaults"
        return text + ("; trained on binary labels (label >= 1)" if self.binary_labels else "")


def _registry() -> dict[str, Contender]:
    reg = {}
    for name in ("lightgbm:lambdarank", "lightgbm:rank_xendcg"):
        reg[name] = Contender(name, "lightgbm", name, "builtin")
    for name in ("xgboost:rank:ndcg", "xgboost:rank:map", "xgboost:rank:pairwise"):
        reg[name] = Contender(name, "xgboost", name, "builtin", binary_labels=name == "xgboost:rank:map")
    for loss in CATBOOST_LOSSES:
        reg[f"catboost:{loss}"] = Contender(f"catboost:{loss}", "catboost", loss, "builtin")
    for prefix, library in (("gbrank", "lightgbm"), ("gbrank-xgb", "xgboost")):
        for m in GBRANK_METRICS:
            for b in (None, *BOUNDINGS):
                objective = m if b is None else f"{m}+{b}"
                reg[f"{prefix}:{objective}"] = Contender(f"{prefix}:{objective}", library, objective, "gbrank", b)
    return reg


REGISTRY: dict[str, Contender] = _registry()
GROUPS: dict[str, Callable[[Contender], bool]] = {
    "all": lambda c: True,
    "builtin": lambda c: c.kind == "builtin",
    "catboost": lambda c: c.library == "catboost",
    "lightgbm": lambda c: c.library == "lightgbm",
    "xgboost": lambda c: c.library == "xgboost",
    "gbrank": lambda c: c.kind == "gbrank" and c.bounding is None,
    "bounded": lambda c: c.bounding is not None,
    "default": lambda c: c.kind == "builtin" or (c.kind == "gbrank" and c.library == "lightgbm" and c.bounding is None),
    "quick": lambda c: c.name in QUICK,
}
GROUP_HELP = {
    "all": "every contender",
    "builtin": "the libraries' own objectives (LightGBM, XGBoost, CatBoost)",
    "catboost": "CatBoost's YetiRank, YetiRankPairwise, LambdaMart (NDCG, MAP, MRR)",
    "lightgbm": "everything trained with LightGBM",
    "xgboost": "everything trained with XGBoost",
    "gbrank": "gbrank's unbounded objectives on LightGBM (gbrank:) and XGBoost (gbrank-xgb:)",
    "bounded": "gbrank's bounded objectives (+minmax, +expectation, +expectation_max, +distribution)",
    "default": "builtin + gbrank's unbounded objectives on LightGBM",
    "quick": "a handful for smoke runs: " + ", ".join(QUICK),
}


def contender_listing() -> str:
    """The text of ``--list-contenders``."""
    lines = ["groups:"]
    for g in GROUPS:
        n = sum(GROUPS[g](c) for c in REGISTRY.values())
        lines.append(f"  {g:10s} {n:3d}  {GROUP_HELP[g]}")
    lines += ["", "contenders (also usable as globs, e.g. 'gbrank:nrbp*' or '*+minmax'):"]
    lines += [f"  {c.name:44s} {c.describe()}" for c in REGISTRY.values()]
    return "\n".join(lines)


def select_contenders(tokens: Sequence[str] | None, *, quick: bool = False, baseline: str) -> list[Contender]:
    """Contenders named by ``tokens`` (names, groups or globs; comma-separated strings allowed),
    in registry order, with the baseline added.  Raises ``ValueError`` for a token that names
    nothing, listing the valid names."""
    if baseline not in REGISTRY:
        raise ValueError(f"unknown baseline {baseline!r}; choose one of: {', '.join(sorted(REGISTRY))}")
    if tokens is None:
        tokens = ["quick" if quick else "default"]
    words = [w.strip() for t in tokens for w in str(t).split(",")]
    words = [w for w in words if w]
    if not words:
        raise ValueError("--contenders is empty; name contenders or groups, e.g. --contenders default "
                         "(see --list-contenders)")
    chosen: set[str] = {baseline}
    for w in words:
        if w in GROUPS:
            hits = {n for n, c in REGISTRY.items() if GROUPS[w](c)}
        elif w in REGISTRY:
            hits = {w}
        else:
            hits = set(fnmatch.filter(REGISTRY, w))
        if not hits:
            raise ValueError(
                f"unknown contender {w!r}; valid groups: {', '.join(sorted(GROUPS))}; valid names: "
                f"{', '.join(sorted(REGISTRY))} (globs such as 'gbrank:nrbp*' work too)")
        chosen |= hits
    return [c for n, c in REGISTRY.items() if n in chosen]


# ---------------------------------------------------------------------------------------
# the plan: everything checked and loaded before any training


@dataclasses.dataclass
class LetorPlan:
    data: str
    data_label: str
    folds: list               # gbrank.datasets.LetorFold, each with a vali split
    contenders: list[Contender]
    settings: dict            # what determines a run's result (hashed into the cache key)
    out_dir: pathlib.Path
    jobs: int
    threads: int
    notes: list[str]
    baseline: str
    command: str | None = None


def _positive(value, name: str, minimum=1):
    if value is None or value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return value


def _load_folds(data: str, folds, quick: bool):
    from gbrank.datasets import DATASETS, load_example, load_letor_folds, resolve

    if data == "example":
        if folds is not None and list(folds) != [1]:
            raise ValueError("--data example has a single train/test set; leave out --folds "
                             "(or pass a folder with Fold1..FoldK sub-folders)")
        return [load_example()], "example", "LightGBM's lambdarank example data (bundled with gbrank)"
    path = pathlib.Path(data).expanduser()
    if path.exists() or os.sep in data or data.startswith("."):
        if not path.is_dir():
            raise FileNotFoundError(f"--data {data!r}: no such folder; give a folder with Fold1..FoldK "
                                    "sub-folders or train/test files, 'example', or a dataset name")
        folder, label = path, path.name
    elif data in DATASETS:
        folder, label = resolve(data), data
    else:
        raise FileNotFoundError(
            f"--data {data!r} is not 'example', an existing folder, or a known dataset name "
            f"({', '.join(sorted(DATASETS))}); for a folder of your own give its path")
    if not folder.is_dir():
        raise FileNotFoundError(f"--data {data!r}: {folder} does not exist; download the data there or "
                                "point GBRANK_DATA at the folder holding it")
    if folds is not None and not folds:
        raise ValueError("--folds is empty; give fold numbers such as 1,3")
    if quick and folds is None:
        subs = sorted(int(m.group(1)) for p in folder.iterdir() if (m := re.match(r"^Fold(\d+)$", p.name)))
        folds = subs[:1] or None
    return load_letor_folds(folder, folds=folds), label, str(folder)


def _carve_vali(fold, fraction: float, seed: int):
    """A copy of ``fold`` whose training queries lose ``fraction`` of them (drawn with ``seed``)
    to a new vali split; rows keep their order."""
    from gbrank.datasets import LetorFold, LetorSplit

    qids = np.unique(fold.train.qid)
    n_vali = max(1, int(round(fraction * len(qids))))
    if n_vali >= len(qids):
        raise ValueError(f"{fold.name} has {len(qids)} training queries: too few to hold out "
                         f"{fraction:.0%} of them for early stopping")
    held = np.random.default_rng(seed).choice(qids, size=n_vali, replace=False)
    is_vali = np.isin(fold.train.qid, held)
    part = lambda rows: LetorSplit(fold.train.X[rows], fold.train.y[rows], fold.train.qid[rows])  # noqa: E731
    return LetorFold(fold.name, part(~is_vali), part(is_vali), fold.test), n_vali, len(qids)


def _check_libraries(contenders) -> None:
    import importlib.util

    extras = {"lightgbm": "lightgbm", "xgboost": "xgboost", "catboost": "catboost"}
    for lib in sorted({c.library for c in contenders}):
        if importlib.util.find_spec(lib) is None:
            names = [c.name for c in contenders if c.library == lib]
            raise ValueError(f"{lib} is not installed but contenders {names[:3]}{'...' if len(names) > 3 else ''} "
                             f"need it; pip install 'gbrank[{extras[lib]}]' or leave them out")


def prepare_letor(*, data: str = "example", folds=None, contenders=None, quick: bool = False,
                  rounds: int | None = None, patience: int | None = None,
                  early_stopping_metric: str = "ndcg@10", learning_rate: float = 0.05,
                  num_leaves: int = 31, depth: int = 6, seed: int = 0, vali_fraction: float = 0.2,
                  baseline: str = "lightgbm:lambdarank", out_dir=None, jobs: int = 1,
                  threads: int | None = None, command: str | None = None) -> LetorPlan:
    """Check every argument and load the data; raise ``ValueError``/``OSError`` with a message
    that names the problem and the fix.  Nothing is trained here."""
    from gbrank.metrics import parse_metric

    rounds = (QUICK_ROUNDS if quick else DEFAULT_ROUNDS) if rounds is None else rounds
    patience = (QUICK_PATIENCE if quick else DEFAULT_PATIENCE) if patience is None else patience
    _positive(rounds, "--rounds")
    _positive(patience, "--patience")
    _positive(jobs, "--jobs")
    _positive(num_leaves, "--num-leaves", 2)
    if not 1 <= depth <= 16:
        raise ValueError(f"--depth must lie in 1..16 (CatBoost's limit), got {depth}")
    if not learning_rate > 0:
        raise ValueError(f"--learning-rate must be positive, got {learning_rate}")
    if not 0 < vali_fraction < 1:
        raise ValueError(f"--vali-fraction must lie strictly between 0 and 1, got {vali_fraction}")
    cores = os.cpu_count() or 1
    threads = max(1, cores // jobs) if threads is None else _positive(threads, "--threads")
    try:
        metric = str(parse_metric(early_stopping_metric))
    except ValueError as exc:
        raise ValueError(f"--early-stopping-metric: {exc}") from None
    chosen = select_contenders(contenders, quick=quick, baseline=baseline)
    _check_libraries(chosen)
    loaded, label, source = _load_folds(data, folds, quick)
    notes, ready = [], []
    for fold in loaded:
        if fold.vali is None:
            fold, n_vali, n_train = _carve_vali(fold, vali_fraction, seed)
            notes.append(f"{fold.name} has no vali split: {n_vali} of its {n_train} training queries "
                         f"(drawn with seed {seed}) are held out for early stopping.")
        ready.append(fold)
    settings = {"early_stopping_metric": metric, "rounds": rounds, "patience": patience,
                "learning_rate": learning_rate, "num_leaves": num_leaves, "catboost_depth": depth,
                "seed": seed, "vali_fraction": vali_fraction}
    out = pathlib.Path(out_dir) if out_dir else pathlib.Path("runs") / f"bench-letor-{label}"
    return LetorPlan(data, label, ready, chosen, settings, out, jobs, threads, notes, baseline, command)


# ---------------------------------------------------------------------------------------
# one run


def _fingerprint(fold) -> str:
    h = hashlib.sha256()
    for split in (fold.train, fold.vali, fold.test):
        for a in split:
            a = np.ascontiguousarray(a)
            h.update(str((a.shape, a.dtype)).encode())
            h.update(a.tobytes())
    return h.hexdigest()[:16]


def run_key(contender: Contender, fold_name: str, fingerprint: str, settings: dict) -> str:
    """Hash of everything that determines a run's test predictions."""
    doc = {"v": CACHE_VERSION, "contender": dataclasses.asdict(contender), "fold": fold_name,
           "data": fingerprint, "settings": settings}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]


def run_versions(contender: Contender) -> dict:
    """The versions a run's result depends on: gbrank, numpy, numba for gbrank's objectives,
    and the contender's library.  Saved with each run; a cached run made under other
    versions is trained again."""
    from ._report import environment

    names = ("numpy", contender.library) + (("numba",) if contender.kind == "gbrank" else ())
    env = environment(names)
    return {k: env[k] for k in ("gbrank", *names)}


def _reusable(path: pathlib.Path, versions: dict) -> bool:
    """A cached run made under the same versions (or saved before runs recorded them)."""
    return load_cached(path)[1].get("versions", versions) == versions


def cache_path(runs_dir: pathlib.Path, contender: Contender, fold_name: str, key: str) -> pathlib.Path:
    slug = re.sub(r"[^A-Za-z0-9@.+_-]+", "_", contender.name)
    return runs_dir / f"{slug}__{fold_name}__{key}.npz"


def train_one(contender: Contender, fold, settings: dict, threads: int) -> tuple[np.ndarray, dict]:
    """Train one contender on one fold (early-stopped on its vali split); return the test
    scores and a record of the run."""
    metric = settings["early_stopping_metric"]
    y_train = (fold.train.y >= 1).astype(np.float64) if contender.binary_labels else fold.train.y
    t0, c0 = time.perf_counter(), time.process_time()
    if contender.library == "catboost":
        from ._catboost import predict_catboost, train_catboost

        model, best, history = train_catboost(
            contender.objective, fold.train._replace(y=y_train), fold.vali, rounds=settings["rounds"],
            patience=settings["patience"], metric=metric, learning_rate=settings["learning_rate"],
            depth=settings["catboost_depth"], seed=settings["seed"], threads=threads)
        scores = predict_catboost(model, fold.test.X)
    else:
        from gbrank.estimators import GBRanker

        model = GBRanker(contender.objective, backend=contender.library, n_estimators=settings["rounds"],
                         learning_rate=settings["learning_rate"], num_leaves=settings["num_leaves"],
                         eval_metric=metric, early_stopping_rounds=settings["patience"],
                         random_state=settings["seed"], n_jobs=threads)
        model.fit(fold.train.X, y_train, qid=fold.train.qid,
                  eval_set=[(fold.vali.X, fold.vali.y, fold.vali.qid)])
        best = int(model.best_iteration_)
        history = [float(v) for v in model.evals_result_["valid_0"][metric]]
        scores = model.predict(fold.test.X)
    record = {"contender": contender.name, "fold": fold.name, "best_iteration": best,
              "rounds_trained": len(history), "vali_at_best": history[best - 1] if history else None,
              "seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0, "threads": threads,
              "versions": run_versions(contender)}
    return np.asarray(scores, dtype=np.float64), record


def _run_task(task) -> dict:
    """Worker entry point (also used in-process): train, then save the cache file atomically."""
    contender, fold, settings, threads, path, set_numba_threads = task
    if set_numba_threads:
        import numba

        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    scores, record = train_one(contender, fold, settings, threads)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, scores=scores, record=json.dumps(record))
    os.replace(tmp, path)
    return record


def load_cached(path: pathlib.Path) -> tuple[np.ndarray, dict]:
    with np.load(path) as f:
        return f["scores"], json.loads(str(f["record"]))


# ---------------------------------------------------------------------------------------
# the benchmark


def run_letor(plan: LetorPlan, write: Callable[[str], None] = print) -> dict:
    """Train what is not cached yet, evaluate every run's test predictions and write the report.
    Returns the report's summary (``write_report``'s return value)."""
    import pandas as pd
    from tqdm.auto import tqdm

    from gbrank.evaluation import evaluate

    from ._report import write_report

    out = plan.out_dir
    runs_dir = out / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    fingerprints = {f.name: _fingerprint(f) for f in plan.folds}
    tasks, cached, stale = [], [], 0
    for c in sorted(plan.contenders, key=_priority):  # a contender's folds together, cheap ones first
        versions = run_versions(c)
        for fold in plan.folds:
            path = cache_path(runs_dir, c, fold.name, run_key(c, fold.name, fingerprints[fold.name], plan.settings))
            if path.exists() and _reusable(path, versions):
                cached.append((c, fold, path))
            else:
                stale += path.exists()
                tasks.append((c, fold, path))
    write(f"gbrank bench letor: {plan.data_label}, {len(plan.folds)} fold(s), {len(plan.contenders)} contenders: "
          f"{len(tasks)} runs to train, {len(cached)} cached in {runs_dir}; {plan.jobs} job(s) x "
          f"{plan.threads} thread(s)"
          + (f"; {stale} cached run(s) were made under other library versions and are trained again" if stale else ""))
    t_start = time.perf_counter()
    bar = tqdm(total=len(tasks), unit="run", desc="training", disable=not tasks)
    if plan.jobs == 1 or len(tasks) <= 1:
        import numba

        saved = numba.get_num_threads()
        try:
            numba.set_num_threads(min(plan.threads, numba.config.NUMBA_NUM_THREADS))
            for c, fold, path in tasks:
                bar.set_postfix_str(f"{fold.name} {c.name}")
                rec = _run_task((c, fold, plan.settings, plan.threads, path, False))
                bar.update(1)
                bar.write(_line(rec))
        finally:
            numba.set_num_threads(saved)
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed

        ctx = multiprocessing.get_context("spawn")  # no fork of a process holding OpenMP/numba threads
        with ProcessPoolExecutor(max_workers=plan.jobs, mp_context=ctx) as pool:
            futures = [pool.submit(_run_task, (c, fold, plan.settings, plan.threads, path, True))
                       for c, fold, path in tasks]
            for fut in as_completed(futures):
                rec = fut.result()
                bar.update(1)
                bar.write(_line(rec))
    bar.close()
    train_seconds = time.perf_counter() - t_start

    # ---- evaluation: every run's test predictions, per fold ----------------------------
    rows, records = [], []
    extra = [m for m in CURVE_METRICS if m not in REPORT_METRICS]
    for c in plan.contenders:
        for fold in plan.folds:
            path = cache_path(runs_dir, c, fold.name, run_key(c, fold.name, fingerprints[fold.name], plan.settings))
            scores, rec = load_cached(path)
            rec["cached"] = any(p == path for _, _, p in cached)
            records.append(rec)
            r = evaluate(fold.test.y, scores, fold.test.qid, REPORT_METRICS + extra)
            pq = r.per_query.reset_index()
            pq.insert(0, "split", fold.name)
            pq.insert(0, "contender", c.name)
            rows.append(pq)
    per_query = pd.concat(rows, ignore_index=True)
    per_query = per_query[["contender", "split", "qid", "n_items", "n_relevant", *REPORT_METRICS, *extra]]
    base_rows = per_query[per_query["contender"] == plan.contenders[0].name]
    n_queries, n_empty = len(base_rows), int((base_rows["n_relevant"] == 0).sum())

    conventions = {
        "empty lists": f"a query without a relevant test document scores 0 on nDCG, AP, RR and nRBP "
                       f"(gbrank.evaluate empty='zero'); {n_empty} of the {n_queries} test queries have none",
        "ties": "tied scores are averaged over all their orders (ties='average'), never input order",
        "gain": "nDCG gain 2^label - 1, IDCG over the query's own test documents",
        "relevance": "AP, RR, RBP and nRBP count label >= 1 as relevant (binary gain)",
        "RBP": "RBP(p) = (1 - p) sum_r rel_r p^(r-1); nRBP(p) = RBP(p) / RBP(p) of the ideal order",
        "pooling": "the test queries of all folds are pooled (each query is in one test fold); paired tests "
                   "pair the contenders' values of the same (fold, query)",
    }
    config = _config(plan, records, fingerprints, train_seconds)
    title = f"gbrank bench letor: {plan.data_label}, {', '.join(f.name for f in plan.folds)}"
    watched = plan.settings["early_stopping_metric"]
    watched = watched if watched in per_query.columns else "ndcg@10"
    best = per_query[per_query["contender"] != plan.baseline].groupby("contender")[watched].mean()
    highlight = [plan.baseline, *best.sort_values(ascending=False, kind="stable").index[:5]]
    summary = write_report(per_query, out, baseline=plan.baseline, metrics=REPORT_METRICS, title=title,
                           config=config, conventions=conventions, notes=_notes(plan, records),
                           highlight=highlight)
    write(f"report written to {out.resolve()}/ (summary.md, summary.json, config.json, per_query.csv.gz, "
          + ", ".join(f for f in summary["files"] if f.endswith(".png")) + ")")
    return summary


def _priority(c: Contender) -> tuple:
    """Training order: built-ins, then gbrank on LightGBM, then on XGBoost, unbounded before
    bounded; so that an interrupted benchmark has whole contenders (all folds) to report."""
    return (c.kind == "gbrank", c.library == "xgboost", c.bounding is not None)


def _line(rec: dict) -> str:
    return (f"{rec['fold']:>10s} {rec['contender']:40s} best round {rec['best_iteration']:4d} of "
            f"{rec['rounds_trained']:4d}, vali {rec['vali_at_best']:.4f}, {rec['seconds']:6.1f} s")


def _config(plan: LetorPlan, records: list[dict], fingerprints: dict, train_seconds: float) -> dict:
    from ._report import environment

    return {
        "command": plan.command,
        "data": {"data": plan.data, "label": plan.data_label,
                 "folds": {f.name: {"train_queries": int(len(np.unique(f.train.qid))),
                                    "vali_queries": int(len(np.unique(f.vali.qid))),
                                    "test_queries": int(len(np.unique(f.test.qid))),
                                    "features": int(f.n_features), "fingerprint": fingerprints[f.name]}
                           for f in plan.folds}},
        "protocol": {
            **plan.settings,
            "baseline": plan.baseline,
            "early_stopping": "every contender: gbrank.evaluate of the early-stopping metric on the vali split "
                              "after each round (empty lists 0, ties averaged); stop after `patience` rounds "
                              "without improvement; predict with the best round. LightGBM/XGBoost through "
                              "GBRanker (eval_metric, early_stopping_rounds); CatBoost through a custom "
                              "eval_metric computing the same gbrank metric, od_type='Iter', od_wait=patience, "
                              "use_best_model=True",
            "trees": "LightGBM num_leaves; XGBoost hist, grow_policy lossguide, max_leaves = num_leaves, "
                     "max_depth 0; CatBoost symmetric trees of catboost_depth; all else library defaults "
                     "(gbrank objectives: GBRanker's min_child_weight 1e-3), no tuning",
            "xgboost:rank:map": "trained on binary labels (label >= 1): XGBoost refuses graded labels for MAP; "
                                "early stopping still watches the graded metric",
            "jobs": plan.jobs, "threads_per_run": plan.threads,
        },
        "contenders": {c.name: {**dataclasses.asdict(c), "description": c.describe()} for c in plan.contenders},
        "versions": environment(("numpy", "scipy", "pandas", "numba", "sklearn", "lightgbm", "xgboost",
                                 "catboost", "matplotlib")),
        "runs": records,
        "train_seconds_this_invocation": train_seconds,
    }


def _notes(plan: LetorPlan, records: list[dict]) -> list[str]:
    s = plan.settings
    notes = [
        f"Data: {plan.data_label} ({len(plan.folds)} fold(s)). Protocol: train on each fold's train split, "
        f"early-stop every contender on its vali split by gbrank's {s['early_stopping_metric']} (patience "
        f"{s['patience']}, at most {s['rounds']} rounds), predict its test split. Learning rate "
        f"{s['learning_rate']}, {s['num_leaves']} leaves (LightGBM, XGBoost), depth {s['catboost_depth']} "
        f"(CatBoost), seed {s['seed']}; library defaults otherwise, no tuning. CatBoost stops by the same "
        "gbrank metric through a custom eval_metric and its overfitting detector (od_type Iter, od_wait = "
        "patience). XGBoost's rank:map is trained on binary labels (label >= 1): it refuses graded ones.",
        *plan.notes,
    ]
    by = {}
    for r in records:
        by.setdefault(r["contender"], []).append(r)
    lines = ["| contender | training | best round per fold | seconds (sum) |", "|---|---|---|---:|"]
    for c in plan.contenders:
        rs = by.get(c.name, [])
        lines.append(f"| {c.name} | {c.describe()} | {[r['best_iteration'] for r in rs]} | "
                     f"{sum(r['seconds'] for r in rs):.1f} |")
    notes.append("\n".join(lines))
    return notes
