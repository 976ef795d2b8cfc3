"""``gbrank bench mf``: the recommendation protocol of Li et al. (SIGIR 2021) with gbrank's MF.

For each data set, NSR and seeded random split (:func:`gbrank.torch.split_interactions`:
ratings >= threshold are positives, users with at least 25 positives, 20 % of each user's
positives held out, NSR x as many sampled test negatives), every chosen loss trains an
:class:`gbrank.torch.MFRanker` whose epoch is chosen on a validation split of each user's
*training* positives (never the test set).  Each model is evaluated three ways, one
per-user row each, labelled by ``protocol``:

* ``full``: the held-out positives ranked among every catalogue item the user never
  interacted with (the number to trust);
* ``sampled``: the split's sampled test lists (the paper's protocol; optimistic, and it can
  reorder systems, Krichene & Rendle 2020);
* ``corrected``: the full-catalogue metric estimated from the sampled ranks alone
  (:mod:`gbrank.bench._mf_correction`).

Finished runs are cached under ``OUT/runs`` (one file per data x NSR x split x loss, with the
settings that produced it) and reused when the command is run again with the same settings.
The reports (``OUT/full``, ``OUT/sampled``, ``OUT/corrected``) come from
:func:`gbrank.bench._report.write_report`; ``OUT/summary.md`` puts the protocols side by side.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import pathlib
import time
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import pandas as pd

from ._mf_correction import corrected_metrics, sampled_ranks

PROTOCOLS = ("full", "sampled", "corrected")
#: metrics of every protocol; ndcg@1..20 give the nDCG@k curve
METRICS = ["ndcg@10", "ndcg", "ap", "rr", "nrbp@0.95", "nrbp@0.8", "auc"]
CURVE = [f"ndcg@{c}" for c in range(1, 21) if c != 10]
ALL_METRICS = METRICS + CURVE

LOSS_GROUPS = {
    "listwise": ["listwise_ndcg", "listwise_ap", "listwise_rr", "listwise_nrbp"],
    "lambda": ["lambda_ndcg", "lambda_ap", "lambda_rr", "lambda_nrbp@0.95"],
    "kos": ["kos_warp", "kos_auc"],
    "bounded": ["listwise_nrbp+minmax"],
    "sampled": ["warp", "bpr"],
}
LOSS_GROUPS["default"] = LOSS_GROUPS["listwise"] + LOSS_GROUPS["lambda"] + LOSS_GROUPS["kos"] + LOSS_GROUPS["bounded"]
LOSS_GROUPS["all"] = LOSS_GROUPS["default"] + LOSS_GROUPS["sampled"]
QUICK_LOSSES = ["listwise_nrbp", "listwise_ndcg", "lambda_ndcg", "kos_warp"]

#: thesis Table 5.1 (MovieLens, sampled lists, each loss evaluated with its own metric)
THESIS_TABLE_5_1 = {1: {"listwise_ndcg": 0.9659, "listwise_ap": 0.8960, "listwise_nrbp": 0.9349,
                        "listwise_nrbp+minmax": 0.9473},
                    2: {"listwise_ndcg": 0.9466, "listwise_ap": 0.8448, "listwise_nrbp": 0.9046,
                        "listwise_nrbp+minmax": 0.9158},
                    3: {"listwise_ndcg": 0.9294, "listwise_ap": 0.8051, "listwise_nrbp": 0.8749,
                        "listwise_nrbp+minmax": 0.8848}}
DATASETS = ("movielens", "citeulike")


@dataclass
class MFPlan:
    """Everything a ``gbrank bench mf`` run needs, validated (see :func:`prepare_mf`)."""

    data: str
    data_name: str
    relevance_threshold: float
    min_positives: int
    nsr: list
    seeds: list
    losses: list
    metric_of: dict
    baseline: str
    epochs: int
    patience: int
    learning_rate: float
    optimizer: str
    n_factors: int
    batch_size: int
    validation_size: float
    device: str
    jobs: int
    threads: int
    out: str
    quick: bool
    plots: bool = True
    command: str = ""
    report_only: bool = False
    unfinished: list = field(default_factory=list)
    data_summary: dict = field(default_factory=dict)

    def training_settings(self) -> dict:
        """The settings a cached run must share to be reused."""
        keys = ("data", "relevance_threshold", "min_positives", "epochs", "patience", "learning_rate", "optimizer",
                "n_factors", "batch_size", "validation_size")
        return {k: getattr(self, k) for k in keys}

    def runs(self) -> list[tuple[int, int, str]]:
        return [(n, s, loss) for n in self.nsr for s in self.seeds for loss in self.losses]


# ---------------------------------------------------------------------------------------
# inputs


def parse_nsr(text) -> list[int]:
    """``"1,2,5"`` -> [1, 2, 5]; raises ValueError naming the bad part."""
    parts = [t.strip() for t in str(text).split(",") if t.strip()]
    if not parts:
        raise ValueError("--nsr is empty; give negatives-per-positive ratios such as 1,2,5")
    out = []
    for t in parts:
        try:
            v = float(t)
        except ValueError:
            raise ValueError(f"--nsr takes comma-separated positive integers such as 1,2,5; {t!r} is not a number") from None
        if not v.is_integer() or v < 1:
            raise ValueError(f"--nsr takes positive integers (negatives per test positive) such as 1,2,5; got {t!r}")
        if int(v) not in out:
            out.append(int(v))
    return out


def valid_loss_names() -> list[str]:
    from gbrank.torch import LOSSES

    return sorted(n + "@0.95" if LOSSES[n].needs_p else n for n in LOSSES)


def parse_losses(specs) -> list[str]:
    """Loss names and groups (comma-separated, repeatable) -> canonical loss names, in order.

    Every name goes through :func:`gbrank.torch.make_loss` (so ``lambda_nrbp@0.9`` and
    ``listwise_ap+expectation`` work); an unknown one raises ValueError listing the valid
    names and groups."""
    from gbrank.torch import make_loss

    if isinstance(specs, str):
        specs = [specs]
    out = []
    for spec in specs:
        for part in (t.strip() for t in spec.split(",")):
            if not part:
                continue
            names = LOSS_GROUPS.get(part.lower(), [part])
            for name in names:
                try:
                    canonical = make_loss(name).name
                except ValueError as exc:
                    raise ValueError(
                        f"unknown loss {name!r} ({exc}); valid names: {', '.join(valid_loss_names())} (any "
                        f"lambda_nrbp@p, listwise losses may end in +minmax, +expectation, +expectation_max, "
                        f"+distribution); groups: {', '.join(sorted(LOSS_GROUPS))}") from None
                if canonical not in out:
                    out.append(canonical)
    if not out:
        raise ValueError(f"--losses is empty; name losses or groups ({', '.join(sorted(LOSS_GROUPS))})")
    return out


def load_interactions(data: str) -> tuple[pd.DataFrame, str, float]:
    """(table with user, item, rating; a short name; the default relevance threshold).

    ``movielens`` and ``citeulike`` are the data sets under ``$GBRANK_DATA``; anything else
    is a path: a MovieLens ratings file or folder, a CiteULike ``users.dat``, or a CSV/TSV
    file with a header naming ``user`` and ``item`` columns and optionally ``rating``.
    """
    from gbrank.datasets import load_citeulike, load_movielens

    if data == "movielens":
        return load_movielens(), "movielens", 4.0
    if data == "citeulike":
        return load_citeulike(), "citeulike", 1.0
    path = pathlib.Path(data)
    if not path.exists():
        raise FileNotFoundError(
            f"--data {data!r} is neither 'movielens', 'citeulike' nor an existing file or folder; pass one of "
            "those names (with GBRANK_DATA pointing at the data folder) or the path of a ratings file")
    name = path.stem.split(".")[0] if path.is_file() else path.name
    if path.is_dir():
        if (path / "users.dat").exists() or (path / "users.dat.gz").exists():
            return load_citeulike(path), name, 1.0
        return load_movielens(path), name, 4.0
    if path.name.startswith("users.dat"):
        return load_citeulike(path), name, 1.0
    frame = pd.read_csv(path, sep=None, engine="python")
    if "userId" in frame.columns and "movieId" in frame.columns:
        return load_movielens(path), name, 4.0
    cols = {c.lower(): c for c in frame.columns}
    if "user" not in cols or "item" not in cols:
        raise ValueError(f"{path} needs a header with columns 'user' and 'item' (and optionally 'rating'); "
                         f"it has {list(frame.columns)}")
    table = pd.DataFrame({"user": frame[cols["user"]], "item": frame[cols["item"]],
                          "rating": frame[cols["rating"]].astype(float) if "rating" in cols else 1.0})
    return table, name, (4.0 if "rating" in cols else 1.0)


def prepare_mf(*, data="movielens", nsr=None, splits=None, seed=0, losses=None, baseline="listwise_nrbp",
               epochs=None, patience=None, learning_rate=0.01, optimizer="adam", n_factors=32, batch_size=32,
               validation_size=0.1, relevance_threshold=None, min_positives=25, device="auto", jobs=1,
               threads=None, out=None, quick=False, plots=True, command="",
               report_only=False) -> MFPlan:
    """Validate every argument and the data (a split at the largest NSR is drawn) before any
    training; raise ValueError or FileNotFoundError with what is wrong and how to fix it."""
    from gbrank.torch import resolve_device, split_interactions

    nsr_list = parse_nsr(nsr if nsr is not None else ("1" if quick else "1,2,5"))
    splits = splits if splits is not None else (1 if quick else 3)
    if isinstance(splits, bool) or int(splits) != splits or splits < 1:
        raise ValueError(f"--splits must be a positive number of random splits, got {splits!r}")
    loss_list = parse_losses(losses if losses else (QUICK_LOSSES if quick else ["default"]))
    if baseline not in loss_list:
        from gbrank.torch import make_loss
        try:
            baseline = make_loss(baseline).name
        except ValueError as exc:
            raise ValueError(f"--baseline: {exc}") from None
        if baseline not in loss_list:
            loss_list = [baseline] + loss_list
    epochs = epochs if epochs is not None else (3 if quick else 40)
    patience = patience if patience is not None else (2 if quick else 8)
    for flag, v in (("--epochs", epochs), ("--patience", patience), ("--n-factors", n_factors),
                    ("--batch-size", batch_size), ("--jobs", jobs), ("--min-positives", min_positives)):
        if isinstance(v, bool) or int(v) != v or v < 1:
            raise ValueError(f"{flag} must be a positive integer, got {v!r}")
    if not (learning_rate > 0 and math.isfinite(learning_rate)):
        raise ValueError(f"--learning-rate must be a positive number, got {learning_rate!r}")
    if not 0 < validation_size < 1:
        raise ValueError(f"--validation-size must lie strictly between 0 and 1 (epochs are chosen on it, never "
                         f"on the test set), got {validation_size!r}")
    cores = os.cpu_count() or 1
    threads = int(threads) if threads is not None else max(1, cores // int(jobs))
    if threads < 1:
        raise ValueError(f"--threads must be a positive integer, got {threads!r}")
    dev = str(resolve_device(device))
    table, name, default_threshold = load_interactions(data)
    threshold = float(relevance_threshold) if relevance_threshold is not None else default_threshold
    X, y = table[["user", "item"]].to_numpy(), table["rating"].to_numpy()
    try:
        split = split_interactions(X, y, relevance_threshold=threshold, min_positives=int(min_positives),
                                   nsr=max(nsr_list), random_state=int(seed))
    except ValueError as exc:
        raise ValueError(f"the data cannot be split for this protocol: {exc}") from None
    from gbrank.torch import make_loss

    plan = MFPlan(data=str(data), data_name=name, relevance_threshold=threshold, min_positives=int(min_positives),
                  nsr=nsr_list, seeds=[int(seed) + i for i in range(int(splits))], losses=loss_list,
                  metric_of={loss: make_loss(loss).metric for loss in loss_list}, baseline=baseline,
                  epochs=int(epochs), patience=int(patience), learning_rate=float(learning_rate),
                  optimizer=str(optimizer), n_factors=int(n_factors), batch_size=int(batch_size),
                  validation_size=float(validation_size), device=dev, jobs=int(jobs), threads=threads,
                  out=str(out) if out else f"runs/bench-mf-{name}", quick=bool(quick),
                  plots=bool(plots), command=str(command),
                  report_only=bool(report_only))
    s = split.settings
    plan.data_summary = {"interactions": int(len(table)), "users_kept": s["n_users"],
                         "users_dropped": s["n_users_dropped"], "items": s["n_items"],
                         "train_positives": s["n_train_positives"], "test_positives": s["n_test_positives"]}
    return plan


# ---------------------------------------------------------------------------------------
# one run (in a worker process)

_CACHE: dict = {}


def _worker_init(threads: int) -> None:
    """Thread budget of a worker process, set before it imports torch and numba (which read
    these variables when they load)."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ[var] = str(threads)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def _split(plan: MFPlan, nsr: int, seed: int):
    from gbrank.torch import split_interactions

    key = ("split", plan.data, plan.relevance_threshold, plan.min_positives, nsr, seed)
    if key not in _CACHE:
        if ("data", plan.data) not in _CACHE:
            _CACHE[("data", plan.data)] = load_interactions(plan.data)[0]
        table = _CACHE[("data", plan.data)]
        for k in [k for k in _CACHE if k[0] == "split"]:
            del _CACHE[k]  # one split at a time per worker
        X, y = table[["user", "item"]].to_numpy(), table["rating"].to_numpy()
        _CACHE[key] = split_interactions(X, y, relevance_threshold=plan.relevance_threshold,
                                         min_positives=plan.min_positives, nsr=nsr, random_state=seed)
    return _CACHE[key]


def full_catalogue_ranks(model, split, chunk_entries: int = 1 << 24):
    """For every held-out positive: (user code, K = catalogue negatives of its user scored
    strictly higher), and per user N = its full-catalogue negatives (the catalogue minus
    every item the user interacted with, the same pool the sampled negatives come from)."""
    from gbrank.torch._interactions import csr_from, csr_take

    n_users, n_items = model.n_users_, model.n_items_
    tu = pd.Index(model.users_).get_indexer(split.test_positives[:, 0])
    ti = pd.Index(model.items_).get_indexer(split.test_positives[:, 1])
    if (tu < 0).any() or (ti < 0).any():
        raise ValueError("a held-out positive's user or item is unknown to the model; fit with items=split.items")
    seen_ptr, seen_items = model._seen()
    interacted = csr_from(np.concatenate([np.repeat(np.arange(n_users), np.diff(seen_ptr)), tu]),
                          np.concatenate([seen_items, ti]), n_users)
    N = n_items - np.diff(interacted[0])
    order = np.argsort(tu, kind="stable")
    tu, ti = tu[order], ti[order]
    users = np.unique(tu)
    K = np.empty(len(tu), dtype=np.int64)
    step = max(1, chunk_entries // max(n_items, 1) // 4)
    for a in range(0, len(users), step):
        rows = users[a:a + step]
        scores = model._score_user_rows(rows)
        local, items = csr_take(interacted[0], interacted[1], rows)
        neg = scores.copy()
        neg[local, items] = -np.inf  # positives and interactions are no negatives
        neg.sort(axis=1)
        sel = np.flatnonzero((tu >= rows[0]) & (tu <= rows[-1]))
        row_of = np.searchsorted(rows, tu[sel])
        s = scores[row_of, ti[sel]]
        for r in np.unique(row_of):
            at = row_of == r
            K[sel[at]] = n_items - np.searchsorted(neg[r], s[at], side="right")
    return tu, K, N


def _per_user_frame(values: dict, users: np.ndarray, names, n_items, n_relevant) -> pd.DataFrame:
    frame = pd.DataFrame({"qid": names[users], "n_items": n_items[users], "n_relevant": n_relevant[users]})
    for m in ALL_METRICS:
        frame[m] = values[m][users]
    return frame


def run_one(plan: MFPlan, nsr: int, seed: int, loss: str) -> tuple[pd.DataFrame, dict]:
    """Train one model and evaluate it under the three protocols: (per-user rows, meta)."""
    from gbrank.evaluation import evaluate
    from gbrank.torch import MFRanker

    split = _split(plan, nsr, seed)
    t0 = time.perf_counter()
    model = MFRanker(loss=loss, n_factors=plan.n_factors, nsr=nsr, optimizer=plan.optimizer,
                     learning_rate=plan.learning_rate, epochs=plan.epochs, batch_size=plan.batch_size,
                     early_stopping=plan.patience, validation_size=plan.validation_size,
                     relevance_threshold=plan.relevance_threshold, device=plan.device, random_state=seed, verbose=0)
    model.fit(split.X_train, split.y_train, items=split.items)
    train_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    names = model.users_
    # full catalogue: exact ranks of the held-out positives
    pu, K, N = full_catalogue_ranks(model, split)
    R = np.bincount(pu, minlength=model.n_users_)
    full = corrected_metrics(pu, K, N, N, ALL_METRICS)  # m = N: the exact metrics
    # sampled lists: the split's test lists, through gbrank.evaluate
    su = pd.Index(model.users_).get_indexer(split.X_test[:, 0])
    si = pd.Index(model.items_).get_indexer(split.X_test[:, 1])
    scores = model._score_codes(su, si)
    labels = (split.y_test >= plan.relevance_threshold).astype(np.float64)
    sampled_res = evaluate(labels, scores, su, ALL_METRICS, relevance_threshold=1, empty="zero", ties="average")
    sq = sampled_res.per_query
    sampled = {m: np.zeros(model.n_users_) for m in ALL_METRICS}
    for m in ALL_METRICS:
        sampled[m][sq.index.to_numpy()] = sq[m].to_numpy()
    s_items = np.zeros(model.n_users_, dtype=np.int64)
    s_items[sq.index.to_numpy()] = sq["n_items"].to_numpy()
    # corrected: the sampled ranks k and (N, m) only
    cu, k = sampled_ranks(su, scores, labels > 0, model.n_users_)
    m_neg = s_items - R
    corrected = corrected_metrics(cu, k, N, m_neg, ALL_METRICS)
    users = np.flatnonzero(R > 0)
    frames = []
    for protocol, values, n_items in (("full", full, N + R), ("sampled", sampled, s_items),
                                      ("corrected", corrected, N + R)):
        f = _per_user_frame(values, users, names, n_items, R)
        f.insert(0, "protocol", protocol)
        frames.append(f)
    out = pd.concat(frames, ignore_index=True)
    out.insert(1, "contender", loss)
    out.insert(2, "split", f"nsr{nsr}-seed{seed}")
    out.insert(3, "nsr", nsr)
    out.insert(4, "seed", seed)
    hist = model.history_
    meta = {"loss": loss, "nsr": nsr, "seed": seed, "eval_metric": model.eval_metric_,
            "best_epoch": int(model.best_epoch_), "epochs_run": int(len(hist)),
            "best_validation": None if model.best_score_ is None else float(model.best_score_),
            "train_seconds": round(train_s, 2), "eval_seconds": round(time.perf_counter() - t1, 2),
            "device": model.device_, "users": int(len(users)), "learning_rate": plan.learning_rate,
            "history": {c: [None if (isinstance(v, float) and not math.isfinite(v)) else v for v in hist[c].tolist()]
                        for c in hist.columns}}
    return out, meta


def _run_task(plan_dict: dict, nsr: int, seed: int, loss: str):
    return run_one(MFPlan(**plan_dict), nsr, seed, loss)


# ---------------------------------------------------------------------------------------
# the whole benchmark


def _key(plan: MFPlan, nsr: int, seed: int, loss: str) -> str:
    safe = loss.replace("@", "at").replace("+", "-")
    return f"{plan.data_name}-nsr{nsr}-seed{seed}-{safe}"


def _settings_hash(plan: MFPlan) -> str:
    return hashlib.sha256(json.dumps(plan.training_settings(), sort_keys=True).encode()).hexdigest()[:12]


def run_versions() -> dict:
    """The versions an MF run's result depends on (saved with it; a cached run made under
    other versions is trained again)."""
    from ._report import environment

    env = environment(("numpy", "torch"))
    return {k: env[k] for k in ("gbrank", "numpy", "torch")}


def cached_run(plan: MFPlan, nsr: int, seed: int, loss: str):
    """(frame, meta) of a finished run with the same settings and versions, or None."""
    runs, key = pathlib.Path(plan.out) / "runs", _key(plan, nsr, seed, loss)
    meta_path, frame_path = runs / f"{key}.json", runs / f"{key}.csv.gz"
    if not (meta_path.exists() and frame_path.exists()):
        return None
    meta = json.loads(meta_path.read_text())
    versions = run_versions()
    if meta.get("settings_hash") != _settings_hash(plan) or meta.get("versions", versions) != versions:
        return None
    return pd.read_csv(frame_path), meta


def _store(plan: MFPlan, nsr, seed, loss, frame: pd.DataFrame, meta: dict) -> None:
    runs, key = pathlib.Path(plan.out) / "runs", _key(plan, nsr, seed, loss)
    runs.mkdir(parents=True, exist_ok=True)
    meta = {**meta, "settings_hash": _settings_hash(plan), "settings": plan.training_settings(),
            "versions": run_versions()}
    tmp = runs / f"{key}.tmp.csv.gz"
    frame.to_csv(tmp, index=False, float_format="%.17g")  # round-trips exactly
    os.replace(tmp, runs / f"{key}.csv.gz")
    (runs / f"{key}.json").write_text(json.dumps(meta, indent=1))  # written last: marks the run finished


def run_mf(plan: MFPlan, write=print) -> dict:
    """Train and evaluate every (NSR, split, loss) of the plan (reusing cached runs), then write
    the reports; returns ``{"per_query": DataFrame, "meta": [...], "summaries": {...}}``."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from tqdm.auto import tqdm

    out = pathlib.Path(plan.out)
    out.mkdir(parents=True, exist_ok=True)
    todo, frames, metas = [], {}, {}
    for run in plan.runs():
        hit = cached_run(plan, *run)
        if hit is None:
            todo.append(run)
        else:
            frames[run], metas[run] = hit
    write(f"gbrank bench mf: {plan.data_name}, NSR {plan.nsr}, seeds {plan.seeds}, {len(plan.losses)} losses: "
          f"{len(plan.runs())} runs, {len(plan.runs()) - len(todo)} cached, {len(todo)} to train "
          f"({plan.jobs} job(s) x {plan.threads} thread(s), device {plan.device})")
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
        bar = tqdm(total=len(todo), desc="runs", unit="run")

        def done(run, frame, meta):
            _store(plan, *run, frame, meta)
            frames[run], metas[run] = frame, meta
            bar.set_postfix_str(f"{run[2]} nsr{run[0]} seed{run[1]}: best epoch {meta['best_epoch']}")
            bar.update()

        if plan.jobs == 1:  # in this process (its thread settings; the CLI sets them before torch loads)
            for run in todo:
                done(run, *run_one(plan, *run))
        else:
            plan_dict = asdict(plan)
            with ProcessPoolExecutor(max_workers=plan.jobs, mp_context=mp.get_context("spawn"),
                                     initializer=_worker_init, initargs=(plan.threads,)) as pool:
                futures = {pool.submit(_run_task, plan_dict, *run): run for run in todo}
                for fut in as_completed(futures):
                    done(futures[fut], *fut.result())
        bar.close()
    elapsed = time.perf_counter() - start
    done = [r for r in plan.runs() if r in frames]
    per_query = pd.concat([frames[r] for r in done if f"nsr{r[0]}-seed{r[1]}" not in plan.unfinished],
                          ignore_index=True)
    meta_list = [metas[r] for r in done if f"nsr{r[0]}-seed{r[1]}" not in plan.unfinished]
    summaries = write_reports(plan, per_query, meta_list, elapsed)
    write(f"reports written to {out} ({elapsed:.0f} s of training and evaluation in this call)")
    return {"per_query": per_query, "meta": meta_list, "summaries": summaries}


def _config(plan: MFPlan, meta_list, elapsed) -> dict:
    from ._report import environment

    env = environment(("numpy", "scipy", "pandas", "numba", "torch", "sklearn"))
    return {"benchmark": "gbrank bench mf", "plan": asdict(plan), "environment": env,
            "seeds": {"splits": plan.seeds, "model": "random_state = split seed"},
            "seconds_this_call": round(elapsed, 1),
            "runs": [{k: v for k, v in m.items() if k != "history"} for m in meta_list]}


CONVENTIONS = {
    "full": "held-out positives ranked among every catalogue item the user never interacted with",
    "sampled": "held-out positives ranked among NSR x as many sampled never-interacted items (the paper's lists)",
    "corrected": "full-catalogue metric estimated from the sampled ranks only: posterior mean per relevant item "
                 "under a uniform prior on its full rank (Krichene & Rendle 2020, bias-variance correction, gamma=1)",
}


def write_reports(plan: MFPlan, per_query: pd.DataFrame, meta_list, elapsed) -> dict:
    """One report per protocol (``OUT/<protocol>``) and ``OUT/summary.md`` beside them."""
    from ._report import write_report

    out = pathlib.Path(plan.out)
    config = _config(plan, meta_list, elapsed)
    summaries = {}
    for protocol in PROTOCOLS:
        rows = per_query[per_query["protocol"] == protocol].drop(columns=["protocol", "nsr", "seed"])
        conventions = {"protocol": f"{protocol}: {CONVENTIONS[protocol]}", "relevant": f"rating >= "
                       f"{plan.relevance_threshold:g}", "gain": "binary (2^1 - 1 = 1)", "ap divisor": "R",
                       "ties": "average" if protocol == "sampled" else "strict (a negative ties nowhere)",
                       "empty lists": "none (every user has held-out positives)"}
        notes = [f"Data: {plan.data_name} ({plan.data_summary}). Splits pooled: NSR {plan.nsr} x seeds "
                 f"{plan.seeds}; each user appears once per split. Epoch chosen on a validation split of "
                 f"{plan.validation_size:g} of each user's training positives (never the test set). "
                 f"MF with {plan.n_factors} factors, {plan.optimizer} lr {plan.learning_rate:g}, batches of "
                 f"{plan.batch_size} users, at most {plan.epochs} epochs, early stopping after {plan.patience}."]
        if plan.unfinished:
            notes.append(f"Not finished and left out (--report-only): {', '.join(plan.unfinished)}.")
        summaries[protocol] = write_report(
            rows, out / protocol, baseline=plan.baseline, metrics=METRICS,
            title=f"gbrank bench mf: {plan.data_name}, {protocol} evaluation", config=config,
            conventions=conventions, notes=notes, plots=plan.plots)
    (out / "config.json").write_text(json.dumps(config, indent=1, default=str) + "\n")
    text = overview(plan, per_query, meta_list, summaries)
    table = protocol_table(per_query, plan.metric_of)
    plan_done = replace(plan, nsr=[n for n in plan.nsr if (table["nsr"] == n).any()])
    if plan.plots and protocols_plot(plan_done, table, out / "protocols.png"):
        text += ("\n![sampled and corrected means against full-catalogue means](protocols.png)\n")
    (out / "summary.md").write_text(text)
    return summaries


def protocol_table(per_query: pd.DataFrame, metric_of: dict) -> pd.DataFrame:
    """Mean of each loss's own metric per (loss, NSR, protocol), averaged over users and splits."""
    rows = []
    for (loss, nsr, protocol), g in per_query.groupby(["contender", "nsr", "protocol"], sort=False):
        own = metric_of[loss] if metric_of[loss] in g.columns else "ndcg"
        rows.append({"loss": loss, "nsr": nsr, "protocol": protocol, "metric": own, "own": g[own].mean(),
                     **{m: g[m].mean() for m in METRICS}})
    return pd.DataFrame(rows)


def _kendall(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    n, s, c = len(a), 0, 0
    for i in range(n):
        for j in range(i + 1, n):
            s += np.sign(a[i] - a[j]) * np.sign(b[i] - b[j])
            c += 1
    return float(s / c) if c else float("nan")


FINDING_METRICS = ("ndcg@10", "ap", "rr", "nrbp@0.95")


def paired_difference(per_query: pd.DataFrame, a: str, b: str, metric: str, protocol: str,
                      nsr: int | None = None) -> dict:
    """Mean of loss ``a`` minus loss ``b`` on ``metric`` over the (split, user) pairs both have,
    with the two-sided paired t-test's p-value."""
    from scipy import stats

    rows = per_query[(per_query["protocol"] == protocol) & (per_query["contender"].isin([a, b]))]
    if nsr is not None:
        rows = rows[rows["nsr"] == nsr]
    wide = rows.pivot_table(index=["split", "qid"], columns="contender", values=metric)
    if a not in wide or b not in wide:
        return {"diff": float("nan"), "p": float("nan"), "n": 0}
    wide = wide.dropna()
    d = (wide[a] - wide[b]).to_numpy()
    p = float(stats.ttest_rel(wide[a], wide[b]).pvalue) if len(d) > 1 and d.std() > 0 else float("nan")
    return {"diff": float(d.mean()), "p": p, "n": int(len(d))}


def findings(plan: MFPlan, per_query: pd.DataFrame, table: pd.DataFrame) -> list[str]:
    """The three questions of the benchmark, answered from the per-user numbers: where the RR
    losses rank on RR; nRBP losses against nDCG and AP losses; bounded against unbounded nRBP."""
    from ._report import holm

    lines = ["", "## Findings, measured", ""]
    losses = set(plan.losses)
    # (a) RR losses on RR
    rr_losses = [x for x in ("listwise_rr", "lambda_rr") if x in losses]
    if rr_losses:
        lines += ["### (a) Where do the RR losses rank when evaluated by RR?", "",
                  "Rank of each RR loss among all losses (1 = best) by mean RR, and the best loss by RR.", "",
                  "| NSR | protocol | " + " | ".join(f"rank of {x}" for x in rr_losses) + " | best by RR | of |",
                  "|---:|---|" + "---:|" * len(rr_losses) + "---|---:|"]
        for n in plan.nsr:
            for prot in ("full", "sampled"):
                t = table[(table.nsr == n) & (table.protocol == prot)].set_index("loss")["rr"]
                ranks = t.rank(ascending=False, method="min")
                lines.append(f"| {n} | {prot} | " + " | ".join(f"{int(ranks[x])}" for x in rr_losses)
                             + f" | {t.idxmax()} | {len(t)} |")
    # (b) nRBP against nDCG and AP, (c) bounded against unbounded
    pairs = []
    for fam, nrbp in (("listwise", "listwise_nrbp"), ("lambda", "lambda_nrbp@0.95")):
        for other in (f"{fam}_ndcg", f"{fam}_ap"):
            if nrbp in losses and other in losses:
                pairs.append(("b", nrbp, other))
    for bounded in [x for x in plan.losses if x.startswith("listwise_nrbp+")]:
        if "listwise_nrbp" in losses:
            pairs.append(("c", bounded, "listwise_nrbp"))
    for question, title in (("b", "(b) nRBP losses against the nDCG and AP losses of the same family"),
                            ("c", "(c) Bounded against unbounded listwise nRBP")):
        chosen = [(a, b) for q, a, b in pairs if q == question]
        if not chosen:
            continue
        lines += ["", f"### {title}", "",
                  "Mean paired difference (first loss minus second) over users and splits, all NSR pooled; "
                  "Holm-adjusted p of the paired t-test across the cells of this table in brackets; "
                  "+ means the first loss is better.", ""]
        for prot in ("full", "sampled"):
            cells, ps = [], []
            for a, b in chosen:
                for m in FINDING_METRICS:
                    r = paired_difference(per_query, a, b, m, prot)
                    cells.append((a, b, m, r))
                    ps.append(r["p"])
            adj = holm(ps)
            lines += [f"{prot}:", "", "| first − second | " + " | ".join(FINDING_METRICS) + " |",
                      "|---|" + "---:|" * len(FINDING_METRICS)]
            for i, (a, b) in enumerate(chosen):
                row = cells[i * len(FINDING_METRICS):(i + 1) * len(FINDING_METRICS)]
                pa = adj[i * len(FINDING_METRICS):(i + 1) * len(FINDING_METRICS)]
                lines.append(f"| {a} − {b} | " + " | ".join(
                    f"{r['diff']:+.4f} (p={p:.2g})" for (_, _, _, r), p in zip(row, pa)) + " |")
            lines.append("")
        if question == "c":
            lines += ["Per NSR, sampled lists, nRBP@0.95 (the thesis' Table 5.1 setting):", "",
                      "| bounded − unbounded | " + " | ".join(f"NSR {n}" for n in plan.nsr) + " |",
                      "|---|" + "---:|" * len(plan.nsr)]
            for a, b in chosen:
                cells = []
                for n in plan.nsr:
                    r = paired_difference(per_query, a, b, "nrbp@0.95", "sampled", nsr=n)
                    cells.append(f"{r['diff']:+.4f} (p={r['p']:.2g})")
                lines.append(f"| {a} − {b} | " + " | ".join(cells) + " |")
    return lines


def protocols_plot(plan: MFPlan, table: pd.DataFrame, path: pathlib.Path) -> bool:
    """``protocols.png``: each loss's mean under the sampled (top row) and corrected (bottom
    row) protocol against its full-catalogue mean, one point per (loss, NSR), one column per
    headline metric; Kendall's tau of the two orders of the losses in each panel."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:  # pragma: no cover - matplotlib missing
        return False
    metrics = list(FINDING_METRICS)
    fig = Figure(figsize=(3.2 * len(metrics), 6.4))
    axes = fig.subplots(2, len(metrics), squeeze=False)
    colours = dict(zip(plan.nsr, ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple")))
    for col, metric in enumerate(metrics):
        for row, prot in enumerate(("sampled", "corrected")):
            ax = axes[row][col]
            taus = []
            for n in plan.nsr:
                t = table[table.nsr == n].pivot(index="loss", columns="protocol", values=metric)
                ax.scatter(t["full"], t[prot], s=18, color=colours.get(n, "grey"), label=f"NSR {n}")
                taus.append(_kendall(t[prot], t["full"]))
            ax.set_title(f"{metric}: {prot} vs full (tau {np.nanmean(taus):.2f})", fontsize=8)
            ax.set_xlabel("full-catalogue mean", fontsize=8)
            ax.set_ylabel(f"{prot} mean", fontsize=8)
            ax.tick_params(labelsize=7)
            if row == 0 and col == 0:
                ax.legend(fontsize=7)
    fig.suptitle(f"gbrank bench mf: {plan.data_name}, one point per loss and NSR", fontsize=9)
    fig.tight_layout()
    FigureCanvasAgg(fig)
    fig.savefig(path, dpi=100)
    return True


def overview(plan: MFPlan, per_query: pd.DataFrame, meta_list, summaries) -> str:
    """``summary.md``: per NSR, every loss under the three protocols, and how far the sampled
    and corrected rankings of the losses agree with the full-catalogue ranking."""
    table = protocol_table(per_query, plan.metric_of)
    plan = replace(plan, nsr=[n for n in plan.nsr if (table["nsr"] == n).any()])  # NSRs with finished splits
    lines = [f"# gbrank bench mf: {plan.data_name}", "",
             f"{plan.data_summary}. NSR {plan.nsr}, splits with seeds {plan.seeds} (each cell: the mean over users "
             f"pooled across the splits; every split holds the same users), {len(plan.losses)} losses; epoch chosen on a "
             f"{plan.validation_size:g} validation split of each user's training positives; at most {plan.epochs} "
             f"epochs, early stopping after {plan.patience}. Reports per protocol: `full/`, `sampled/`, "
             "`corrected/` (paired tests against the baseline "
             f"**{plan.baseline}**, Holm-corrected)." + (f" **Not finished and left out:** "
                                                         f"{', '.join(plan.unfinished)}." if plan.unfinished else ""), "",
             "## Each loss evaluated with the metric it optimises", "",
             "full = all never-interacted items ranked; sampled = the NSR test lists; corrected = full-catalogue "
             "estimate from the sampled ranks.", ""]
    head = "| loss (metric) | " + " | ".join(f"NSR {n} full | NSR {n} sampled | NSR {n} corrected"
                                             for n in plan.nsr) + " |"
    lines += [head, "|---|" + "---:|" * (3 * len(plan.nsr))]
    for loss in plan.losses:
        cells = []
        for n in plan.nsr:
            for p in PROTOCOLS:
                v = table[(table.loss == loss) & (table.nsr == n) & (table.protocol == p)]["own"]
                cells.append(f"{v.iloc[0]:.4f}" if len(v) else "-")
        lines.append(f"| {loss} ({plan.metric_of[loss]}) | " + " | ".join(cells) + " |")
    for metric in ("ndcg@10", "ap", "rr", "nrbp@0.95"):
        lines += ["", f"## {metric} of every loss", "", "| loss | " + " | ".join(
            f"NSR {n} full | NSR {n} sampled | NSR {n} corrected" for n in plan.nsr) + " |",
            "|---|" + "---:|" * (3 * len(plan.nsr))]
        for loss in plan.losses:
            cells = []
            for n in plan.nsr:
                for p in PROTOCOLS:
                    v = table[(table.loss == loss) & (table.nsr == n) & (table.protocol == p)][metric]
                    cells.append(f"{v.iloc[0]:.4f}" if len(v) else "-")
            lines.append(f"| {loss} | " + " | ".join(cells) + " |")
    lines += ["", "## Do the protocols agree on the order of the losses?", "",
              "Kendall's tau between the losses' means under the sampled (or corrected) protocol and under "
              "the full catalogue, per NSR and metric (1 = same order).", "",
              "| NSR | metric | sampled vs full | corrected vs full |", "|---:|---|---:|---:|"]
    for n in plan.nsr:
        for metric in METRICS:
            t = table[table.nsr == n].pivot(index="loss", columns="protocol", values=metric)
            lines.append(f"| {n} | {metric} | {_kendall(t['sampled'], t['full']):.2f} | "
                         f"{_kendall(t['corrected'], t['full']):.2f} |")
    if plan.data_name == "movielens" and any(n in THESIS_TABLE_5_1 for n in plan.nsr):
        lines += ["", "## Beside thesis Table 5.1 (MovieLens, sampled lists, own metric)", "",
                  "| loss | NSR | gbrank sampled | thesis |", "|---|---:|---:|---:|"]
        for n in plan.nsr:
            for loss, ref in THESIS_TABLE_5_1.get(n, {}).items():
                v = table[(table.loss == loss) & (table.nsr == n) & (table.protocol == "sampled")]["own"]
                if len(v):
                    lines.append(f"| {loss} | {n} | {v.iloc[0]:.4f} | {ref:.4f} |")
    lines += findings(plan, per_query, table)
    runs = pd.DataFrame([{k: m[k] for k in ("loss", "nsr", "seed", "best_epoch", "epochs_run", "train_seconds",
                                             "eval_seconds")} for m in meta_list])
    agg = runs.groupby("loss", sort=False).agg(best_epoch=("best_epoch", "mean"), epochs_run=("epochs_run", "mean"),
                                               at_budget=("epochs_run", lambda e: int((e >= plan.epochs).sum())),
                                               train_s=("train_seconds", "mean"), eval_s=("eval_seconds", "mean"))
    lines += ["", "## Training", "", f"Per loss over its {len(plan.nsr) * len(plan.seeds)} runs: mean best epoch, "
              f"mean epochs run, runs that used all {plan.epochs} epochs, mean seconds to train and to evaluate.", "",
              "| loss | best epoch | epochs run | at budget | train s | eval s |", "|---|---:|---:|---:|---:|---:|"]
    for loss, r in agg.iterrows():
        lines.append(f"| {loss} | {r.best_epoch:.1f} | {r.epochs_run:.1f} | {r.at_budget} | {r.train_s:.1f} | "
                     f"{r.eval_s:.1f} |")
    return "\n".join(lines) + "\n"
