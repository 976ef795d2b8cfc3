"""``gbrank bench mf``, one run: one MF model trained for an (NSR, split, loss, learning rate),
or one baseline scored, with the paper's metrics recorded every evaluated epoch on the test
and validation lists, then evaluated under the three protocols, in a worker process or in
this one, and stored in the run store."""

from __future__ import annotations

import io
import math
import pathlib
import time
from dataclasses import asdict, replace

import numpy as np
import pandas as pd

from .._store import RunStore
from ._correction import corrected_metrics, sampled_ranks
from ._plan import ALL_METRICS, MFPlan, load_interactions, rating_pairs

_CACHE: dict = {}  # the data and the current split of this process


def _split(plan: MFPlan, nsr: int, seed: int):
    """The split of (NSR, seed or fold), without the users left out there (cached: one at a
    time per process)."""
    from gbrank.interactions import split_interactions

    from ._splits import read_fold, ready_split

    dropped = plan.dropped.get(f"nsr{nsr}-{plan.split_label(seed)}", [])
    key = ("split", plan.data, plan.relevance_threshold, plan.min_positives, plan.negatives, nsr, seed,
           tuple(map(str, dropped)))
    if key not in _CACHE:
        for k in [k for k in _CACHE if k[0] == "split"]:
            del _CACHE[k]  # one split at a time per worker
        if plan.ready:
            fold = read_fold(pathlib.Path(plan.ready), seed)
            if plan.negatives == "non_relevant":
                t = plan.relevance_threshold
                fold = replace(fold, train=fold.train[fold.train["rating"] >= t], test=fold.test[fold.test["rating"] >= t])
            _CACHE[key] = ready_split(fold, nsr=nsr, seed=plan.seed, threshold=plan.relevance_threshold,
                                      drop_users=dropped)
        else:
            if ("data", plan.data) not in _CACHE:
                _CACHE[("data", plan.data)] = load_interactions(plan.data)[0]
            table = _CACHE[("data", plan.data)]
            X, y = rating_pairs(table, plan.negatives, plan.relevance_threshold)
            if dropped:
                keep = ~pd.Series(X[:, 0]).isin(dropped).to_numpy()
                X, y = X[keep], y[keep]
            _CACHE[key] = split_interactions(X, y, relevance_threshold=plan.relevance_threshold,
                                             min_positives=plan.min_positives, nsr=nsr, random_state=seed)
    return _CACHE[key]


def full_catalogue_ranks(model, split, chunk_entries: int = 1 << 24):
    """For every held-out positive: (user code, K = catalogue negatives of its user scored
    strictly higher), and per user N = its full-catalogue negatives (the catalogue minus
    every item the user interacted with, the same pool the sampled negatives come from)."""
    from gbrank.interactions import csr_from, csr_take

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


#: length of the recommendation lists of the beyond-accuracy metrics
TOP_K = 10


def top_k_lists(model, users: np.ndarray, k: int = TOP_K, chunk_entries: int = 1 << 24) -> np.ndarray:
    """Item codes of each user's top ``k`` over the full catalogue, best first, the user's
    training items left out (ties by item code): ``model.recommend`` on codes, in chunks."""
    from gbrank.interactions import csr_take, top_k

    seen_ptr, seen_items = model._seen()
    out = np.empty((len(users), k), dtype=np.int64)
    step = max(1, chunk_entries // max(model.n_items_, 1) // 4)
    for a in range(0, len(users), step):
        rows = users[a:a + step]
        scores = model._score_user_rows(rows)
        local, items = csr_take(seen_ptr, seen_items, rows)
        scores[local, items] = -np.inf
        out[a:a + len(rows)] = top_k(scores, k)
    return out


def beyond_metrics(model, split, users: np.ndarray, k: int = TOP_K) -> dict:
    """:func:`gbrank.beyond_accuracy` of the users' top-k lists (:func:`top_k_lists`): the
    held-out positives are the relevant items, the training interactions give popularity
    and the primitive (popularity) lists, and intra-list diversity is 1 - cosine of the
    items' binary columns of the user-item training matrix (the same for every loss).
    Returns the aggregates as a dict."""
    from scipy import sparse

    from gbrank.evaluation import beyond_accuracy
    from gbrank.interactions import csr_rows

    seen_ptr, seen_items = model._seen()
    seen_users = csr_rows(seen_ptr)
    tu = pd.Index(model.users_).get_indexer(split.test_positives[:, 0])
    ti = pd.Index(model.items_).get_indexer(split.test_positives[:, 1])
    vectors = sparse.csr_matrix((np.ones(len(seen_items)), (seen_items, seen_users)),
                                shape=(model.n_items_, model.n_users_))
    recs = top_k_lists(model, users, k)
    lists = pd.DataFrame({"user": np.repeat(users, k), "item": recs.ravel(), "rank": np.tile(np.arange(k), len(users))})
    res = beyond_accuracy(lists, np.column_stack([tu, ti]), np.column_stack([seen_users, seen_items]),
                          model.n_items_, item_vectors=vectors)
    return {"k": int(k), **{m: float(v) for m, v in res.aggregate.items()}}


def _per_user_frame(values: dict, users: np.ndarray, names, n_items, n_relevant) -> pd.DataFrame:
    frame = pd.DataFrame({"qid": names[users], "n_items": n_items[users], "n_relevant": n_relevant[users]})
    for m in ALL_METRICS:
        frame[m] = values[m][users]
    return frame


def _fit_contender(plan: MFPlan, split, nsr: int, seed: int, contender: str, lr):
    """The fitted model (or baseline scorer) and its history with the monitored columns."""
    from ._baselines import BASELINES, BaselineScorer
    from ._select import PAPER_METRICS, ListsMonitor
    from ._splits import carve_validation

    t = plan.relevance_threshold
    y_fit, X_val, y_val = carve_validation(split.X_train, split.y_train, threshold=t,
                                           validation_size=plan.validation_size, nsr=nsr, items=split.items,
                                           seed=seed)
    monitor = ListsMonitor({"test": (split.X_test, split.y_test, t), "validation": (X_val, y_val, t)}, PAPER_METRICS)
    if contender in BASELINES:
        model = BaselineScorer(contender, split.X_train, split.y_train, split.items, t, seed)
        hist = pd.DataFrame([{"epoch": 0, **monitor(model, 0)}])
        return model, hist, None
    from gbrank.torch import MFRanker

    model = MFRanker(loss=contender, n_factors=plan.n_factors, nsr=nsr, optimizer=plan.optimizer,
                     learning_rate=lr, epochs=plan.epochs, batch_size=plan.batch_size,
                     early_stopping=plan.patience, validation_size=0,
                     resample_negatives=not plan.fixed_train_negatives,
                     positives_per_list=None,  # the paper's lists: one per user, every loss
                     relevance_threshold=t, device=plan.device, random_state=seed, verbose=0)
    eval_set = (split.X_test, split.y_test) if plan.epoch_on == "test" else (X_val, y_val)
    model.fit(split.X_train, y_fit, items=split.items, eval_set=eval_set, monitor=monitor)
    return model, model.history_.copy(), model.best_score_


#: (loss or baseline, NSR, device, optimizer) -> seconds: what this process has warmed up
_WARMED: dict = {}


def _tiny_split(nsr: int):
    """A small synthetic split (12 users, 10 positives each, 150 items) for :func:`warm_up`."""
    from gbrank.interactions import split_interactions

    rng = np.random.default_rng(0)
    n_users, n_items = 12, 150
    X = np.array([(u, i) for u in range(n_users) for i in rng.choice(n_items, 12, replace=False)], dtype=np.int64)
    y = np.tile(np.r_[np.full(10, 5.0), np.full(2, 1.0)], n_users)
    return split_interactions(X, y, relevance_threshold=4.0, min_positives=5, nsr=nsr, random_state=0)


def warm_up(plan: MFPlan, nsr: int, contender: str, lr=None) -> float:
    """Pay, once per process, what a loss's first run would otherwise pay inside its timed
    training: numba loading or compiling gbrank's evaluator (called after every epoch by
    the monitor, and by the three protocols), torch's first use of the loss and optimizer.
    A one-epoch run of the same loss (or baseline), NSR, optimizer and device on a tiny
    synthetic split (:func:`_tiny_split`), evaluated as :func:`run_one` evaluates.  Returns
    the seconds it took (0 when done already in this process): the run's ``compile_seconds``."""
    key = (contender, int(nsr), plan.device, plan.optimizer)
    if key in _WARMED:
        return 0.0
    t0 = time.perf_counter()
    tiny = replace(plan, epochs=1, patience=1, n_factors=4, batch_size=8, relevance_threshold=4.0,
                   min_positives=5, validation_size=0.2, dropped={}, epoch_on="validation")
    run_one(tiny, nsr, 0, contender, lr, split=_tiny_split(nsr), warm=False)
    _WARMED[key] = time.perf_counter() - t0
    return _WARMED[key]


def run_one(plan: MFPlan, nsr: int, seed: int, contender: str, lr=None, *, split=None,
            warm: bool = True) -> tuple[pd.DataFrame, dict]:
    """Train one model (or score one baseline) and evaluate it under the three protocols:
    (per-user rows, meta with the per-epoch history).

    ``split``: the split to use (default: the plan's for ``nsr`` and ``seed``).  ``warm``:
    first :func:`warm_up` this process for the loss, so that ``train_seconds`` and
    ``eval_seconds`` hold training and evaluation only; the warm-up's seconds are the meta's
    ``compile_seconds``."""
    from gbrank.evaluation import evaluate

    split = _split(plan, nsr, seed) if split is None else split
    compile_seconds = warm_up(plan, nsr, contender, lr) if warm else 0.0
    t0 = time.perf_counter()
    model, hist, best_score = _fit_contender(plan, split, nsr, seed, contender, lr)
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
    beyond = beyond_metrics(model, split, users)
    label = f"nsr{nsr}-{plan.split_label(seed)}"
    frames = []
    for protocol, values, n_items in (("full", full, N + R), ("sampled", sampled, s_items),
                                      ("corrected", corrected, N + R)):
        f = _per_user_frame(values, users, names, n_items, R)
        f.insert(0, "protocol", protocol)
        frames.append(f)
    out = pd.concat(frames, ignore_index=True)
    out.insert(1, "contender", contender)
    out.insert(2, "split", label)
    out.insert(3, "nsr", nsr)
    out.insert(4, "seed", seed)
    meta = {"loss": contender, "nsr": nsr, "seed": seed, "split": label, "learning_rate": lr,
            "eval_metric": getattr(model, "eval_metric_", None),
            "best_epoch": int(model.best_epoch_), "epochs_run": int(hist["epoch"].max()),
            "best_validation": None if best_score is None else float(best_score),
            "train_seconds": round(train_s, 2), "eval_seconds": round(time.perf_counter() - t1, 2),
            "compile_seconds": round(compile_seconds, 2),
            "device": getattr(model, "device_", "cpu"), "users": int(len(users)),
            "users_left_out": len(plan.dropped.get(label, [])), "beyond": beyond,
            "history": {c: [None if (isinstance(v, float) and not math.isfinite(v)) else v for v in hist[c].tolist()]
                        for c in hist.columns}}
    return out, meta


def frame_arrays(frame: pd.DataFrame) -> dict:
    """A per-user table as the store's arrays: its CSV text, which round-trips exactly."""
    text = frame.to_csv(index=False, float_format="%.17g").encode()
    return {"frame": np.frombuffer(text, dtype=np.uint8)}


def arrays_frame(arrays: dict) -> pd.DataFrame:
    """The per-user table of :func:`frame_arrays`."""
    return pd.read_csv(io.BytesIO(arrays["frame"].tobytes()))


def train_task(task, wait: bool):
    """Worker entry point (also used in-process): claim the run from the store and train it
    unless another process did.  Returns ``(per-user frame, record, trained here)``, or None
    when ``wait`` is False and another process holds the run."""
    plan_dict, nsr, seed, contender, lr, folder, name, versions = task
    plan = MFPlan(**plan_dict)

    def train():
        frame, meta = run_one(plan, nsr, seed, contender, lr)
        return frame_arrays(frame), {**meta, "settings": plan.run_settings(nsr, seed, contender, lr)}

    got = RunStore(pathlib.Path(folder)).claim(name, versions, train, wait=wait)
    if got is None:
        return None
    run, trained = got
    return arrays_frame(run.arrays), run.record, trained


def plan_dict(plan: MFPlan) -> dict:
    """The plan as the keyword arguments of ``MFPlan`` (what a worker process receives)."""
    return asdict(plan)
