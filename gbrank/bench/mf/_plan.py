"""``gbrank bench mf``, its plan: losses, baselines, NSR, splits (random or ready folds),
learning rates and training settings checked, the data loaded and the feasibility of every
(NSR, split, user) checked before any training (:func:`prepare_mf`).  The benchmark itself:
``_bench.py``; one run: ``_run.py``; the splits: ``_splits.py``; the reports:
``_report.py``."""

from __future__ import annotations

import math
import os
import pathlib
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from gbrank._validation import plural

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
    # thesis Ch. 3-4: the listwise nDCG, AP and nRBP losses under every bounding
    "boundings": [f"listwise_{m}+{b}" for m in ("ndcg", "ap", "nrbp")
                  for b in ("minmax", "expectation", "expectation_max", "distribution")],
    "sampled": ["warp", "bpr"],
}
LOSS_GROUPS["default"] = LOSS_GROUPS["listwise"] + LOSS_GROUPS["lambda"] + LOSS_GROUPS["kos"] + LOSS_GROUPS["bounded"]
LOSS_GROUPS["all"] = LOSS_GROUPS["default"] + LOSS_GROUPS["sampled"]
# the paper's objectives in both paradigms (the listwise nRBP loss does not depend on p)
LOSS_GROUPS["paper"] = ["listwise_ap", "listwise_ndcg", "listwise_rr", "listwise_nrbp", "lambda_ap", "lambda_ndcg",
                        "lambda_rr", "lambda_nrbp@0.8", "lambda_nrbp@0.9", "lambda_nrbp@0.95"]
QUICK_LOSSES = ["listwise_nrbp", "listwise_ndcg", "lambda_ndcg", "kos_warp"]
#: epochs of the paper (Sec. 4.2), the default budget: training stops earlier on validation
PAPER_EPOCHS = 3000
#: default --patience: evaluated epochs without a validation improvement before stopping,
#: measured on CiteULike (docs/bench.md, "Epochs and patience"; scripts/patience_study.py)
DEFAULT_PATIENCE = 50

#: thesis Table 5.1 (MovieLens, sampled lists, each loss evaluated with its own metric)
THESIS_TABLE_5_1 = {1: {"listwise_ndcg": 0.9659, "listwise_ap": 0.8960, "listwise_nrbp": 0.9349,
                        "listwise_nrbp+minmax": 0.9473},
                    2: {"listwise_ndcg": 0.9466, "listwise_ap": 0.8448, "listwise_nrbp": 0.9046,
                        "listwise_nrbp+minmax": 0.9158},
                    3: {"listwise_ndcg": 0.9294, "listwise_ap": 0.8051, "listwise_nrbp": 0.8749,
                        "listwise_nrbp+minmax": 0.8848}}
DATASETS = ("movielens", "citeulike")
#: where a user's negatives come from: the items it never rated (gbrank's default), or every
#: item it did not rate as relevant (the thesis: its ratings below the threshold are dropped
#: before splitting, so those items can be drawn as negatives)
NEGATIVES = ("unrated", "non_relevant")
#: the command-line flag of each argument of the library that the bench's messages may name
FLAGS = {"min_positives": "--min-positives", "relevance_threshold": "--relevance-threshold", "nsr": "--nsr",
         "validation_size": "--validation-size", "seed": "--seed"}
#: how the epoch is chosen: on a validation split of each user's training positives, or on
#: the test lists themselves (the papers' choice; optimistic)
EPOCH_ON = ("validation", "test")


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
    learning_rates: list | None
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
    negatives: str = "unrated"
    epoch_on: str = "validation"
    unfinished: list = field(default_factory=list)
    data_summary: dict = field(default_factory=dict)
    baselines: list = field(default_factory=lambda: ["popularity", "random"])
    seed: int = 0
    ready: str = ""  # the folder of ready folds ("" for seeded random splits)
    fixed_train_negatives: bool = False
    drop_infeasible_users: bool = False
    dropped: dict = field(default_factory=dict)  # "nsr<N>-<split>" -> user ids left out there
    feasibility: list = field(default_factory=list)  # per (NSR, split): users and short users
    lr_grid: dict = field(default_factory=dict)  # loss -> its learning rates
    paper_tables: str = ""  # the folder of the paper's result tables when the data are its splits
    analyses: tuple = ()  # the named analyses the report runs (mf/_analyses.py)

    def training_settings(self) -> dict:
        """The settings a cached run must share to be reused (the learning rate and the users
        left out are added per run, :meth:`run_settings`)."""
        keys = ("data", "relevance_threshold", "min_positives", "epochs", "patience", "optimizer",
                "n_factors", "batch_size", "validation_size")
        settings = {k: getattr(self, k) for k in keys}
        settings["record"] = "paper-metrics-v1"  # per-epoch test and validation metrics, validation carved here
        # the protocol variants enter only when chosen: runs of the default protocol keep their keys
        settings.update({k: getattr(self, k) for k, default in (("negatives", "unrated"), ("epoch_on", "validation"),
                                                                 ("fixed_train_negatives", False))
                         if getattr(self, k) != default})
        if self.ready:
            settings["seed"] = self.seed  # seeds the test negatives of ready folds
        return settings

    def run_settings(self, nsr: int, seed: int, contender: str, lr) -> dict:
        """:meth:`training_settings` plus what only this run has: learning rate, users left out."""
        settings = {**self.training_settings(), "learning_rate": lr}
        dropped = self.dropped.get(f"nsr{nsr}-{self.split_label(seed)}")
        if dropped:
            settings["dropped_users"] = sorted(map(str, dropped))
        return settings

    def split_label(self, seed: int) -> str:
        """``fold<K>`` for ready folds, ``seed<S>`` for random splits."""
        return f"fold{seed}" if self.ready else f"seed{seed}"

    def contenders(self) -> list[str]:
        return list(self.baselines) + list(self.losses)

    def learning_rates_of(self, contender: str) -> list:
        """The learning rates a contender is trained with ([None] for a baseline)."""
        return self.lr_grid.get(contender, [None])

    def runs(self) -> list[tuple[int, int, str, float | None]]:
        return [(n, s, c, lr) for n in self.nsr for s in self.seeds for c in self.contenders()
                for lr in self.learning_rates_of(c)]


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


def rating_pairs(table: pd.DataFrame, negatives: str, threshold: float):
    """(X, y) of the split: user-item pairs and ratings; with ``negatives="non_relevant"``
    the ratings below ``threshold`` are dropped first (so those items can be negatives)."""
    if negatives == "non_relevant":
        table = table[table["rating"] >= threshold]
    return table[["user", "item"]].to_numpy(), table["rating"].to_numpy()


def load_interactions(data: str) -> tuple[pd.DataFrame, str, float]:
    """(table with user, item, rating; a short name; the default relevance threshold).

    ``movielens`` and ``citeulike`` are the data sets under ``$GBRANK_DATA``; anything else
    is a path read by :func:`gbrank.datasets.load_interactions`, which tells the format by
    the content: a MovieLens ratings file (``ratings.csv``, ``ratings.dat``, ``u.data``,
    plain or ``.gz``) or release folder, a CiteULike ``users.dat`` or its folder, or a
    table whose header names ``user`` and ``item`` (or ``user_id`` and ``item_id``)
    columns and optionally ``rating``.  Explicit ratings are binarised at 4 by default,
    implicit data (CiteULike, a table without ratings) at 1.
    """
    from gbrank.datasets import load_citeulike, load_movielens
    from gbrank.datasets import load_interactions as load_file

    if data == "movielens":
        return load_movielens(), "movielens", 4.0
    if data == "citeulike":
        return load_citeulike(), "citeulike", 1.0
    path = pathlib.Path(data).expanduser()
    if not path.exists():
        raise FileNotFoundError(
            f"--data {data!r} is neither 'movielens', 'citeulike' nor an existing file or folder; pass one of "
            "those names (with GBRANK_DATA pointing at the data folder) or the path of an interaction file or "
            "folder (MovieLens ratings.csv, ratings.dat or u.data, CiteULike users.dat, or a table with a header "
            "naming user and item columns)")
    table = load_file(path)
    return table, data_name(path), 1.0 if table.attrs["implicit"] else 4.0


def data_name(path: pathlib.Path) -> str:
    """The short name of ``--data PATH`` (run names, the default ``--out``): a folder's name;
    for a file named after its format (``u.data``, ``ratings.csv.gz``...), its folder's name
    (``ml-100k``); else the file's name without its suffixes."""
    from gbrank.datasets import INTERACTION_FORMATS

    if path.is_dir():
        return path.resolve().name
    released = path.name[:-3] if path.name.endswith(".gz") else path.name
    if released in INTERACTION_FORMATS and path.resolve().parent.name:
        return path.resolve().parent.name
    return path.name.split(".")[0]


#: the SIGIR'21 authors' SGD grid (their result tables, ``paper-results/``): listwise MF 0.001-10,
#: LambdaRank-MF 0.001 and 0.01; ``--learning-rates paper``
PAPER_GRID = {"listwise": [0.001, 0.01, 0.1, 1.0, 3.0, 10.0], "lambda": [0.001, 0.01]}


def _rate_list(text: str, where: str) -> list[float]:
    out = []
    for part in (t.strip() for t in text.split(",") if t.strip()):
        try:
            v = float(part)
        except ValueError:
            raise ValueError(f"--learning-rates takes comma-separated positive numbers such as 0.01,0.1; "
                             f"{part!r}{where} is not a number") from None
        if not (v > 0 and math.isfinite(v)):
            raise ValueError(f"--learning-rates takes positive numbers; got {part!r}{where}")
        if v not in out:
            out.append(v)
    if not out:
        raise ValueError(f"--learning-rates is empty{where}; give rates such as 0.01,0.1 or leave it out (each "
                         "loss's default rate)")
    return out


def parse_learning_rates(text) -> list[float] | dict[str, list[float]] | None:
    """The learning-rate grid: None (each loss's default rate); ``"0.01,0.1"`` -> [0.01, 0.1]
    for every loss; ``"listwise=1,10;lambda=0.001,0.01"`` -> a grid per family or loss
    (``listwise``, ``lambda``, ``kos``, or a loss name such as ``lambda_nrbp``; the longest
    key that a loss name starts with applies, and a loss that no key names keeps its default
    rate); ``"paper"`` -> :data:`PAPER_GRID`."""
    if text is None:
        return None
    if isinstance(text, dict):
        return {str(k): _rate_list(",".join(map(str, v)), f" (for {k})") for k, v in text.items()}
    if isinstance(text, (int, float)):
        text = str(text)
    text = str(text).strip()
    if text.lower() == "paper":
        return {k: list(v) for k, v in PAPER_GRID.items()}
    if "=" not in text:
        return _rate_list(text, "")
    grid = {}
    for entry in (e.strip() for e in text.split(";") if e.strip()):
        key, sep, rates = entry.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"--learning-rates: {entry!r} is not FAMILY=RATES; write e.g. "
                             "'listwise=1,10;lambda=0.001,0.01' (families: listwise, lambda, kos, or a loss name)")
        if key in grid:
            raise ValueError(f"--learning-rates names {key!r} twice; give each family once")
        grid[key] = _rate_list(rates, f" (for {key})")
    return grid


def rates_for_loss(grid, loss: str) -> list[float] | None:
    """The rates of ``loss`` in a parsed grid (None: its default rate)."""
    if grid is None or isinstance(grid, list):
        return grid
    keys = [k for k in grid if loss == k or loss.startswith(k + "_") or loss.startswith(k + "@")
            or loss.startswith(k + "+")]
    return grid[max(keys, key=len)] if keys else None


def parse_baselines(text) -> list[str]:
    """``"popularity,random"`` -> the baselines; ``"none"`` -> []."""
    from ._baselines import BASELINES

    if text is None:
        return list(BASELINES)
    parts = [t.strip().lower() for t in (text if isinstance(text, (list, tuple)) else str(text).split(","))
             if t.strip()]
    if parts == ["none"]:
        return []
    bad = [t for t in parts if t not in BASELINES]
    if bad or not parts:
        raise ValueError(f"--baselines takes {', '.join(BASELINES)} (comma-separated) or none; got {text!r}")
    return [b for b in BASELINES if b in parts]


def default_learning_rate(loss: str, optimizer: str) -> float:
    """The rate ``MFRanker`` uses for ``loss`` and ``optimizer`` when given none."""
    from gbrank.torch import make_loss

    return float(make_loss(loss, training_defaults=True).default_learning_rate(optimizer))


def _check_feasible(plan: MFPlan, table, fold_of) -> None:
    """The pre-check: per (NSR, split) count the users short of training, validation or test
    negatives; raise :class:`InfeasibleSplits` with the counts and the fix, or (with
    ``drop_infeasible_users``) record them in ``plan.dropped`` and leave them out."""
    from ._splits import InfeasibleSplits, first_short, infeasible_message, shortages, user_counts

    rows = []
    for n in plan.nsr:
        for s in plan.seeds:
            label = plan.split_label(s)
            if plan.ready:
                fold = fold_of(s)
                counts = user_counts(fold.train, fold.test, plan.relevance_threshold)
                counts = counts[(counts["train_positives"] > 0) & (counts["test_positives"] > 0)]
                n_items = len(np.union1d(fold.train["item"].unique(), fold.test["item"].unique()))
                short = shortages(counts, n_items, n, plan.validation_size)
                dropped = list(short.index[short["short"]])
            else:
                # random splits: the counts depend on the users' sizes only, not on the seed; dropping a user
                # may shrink the catalogue (the items of the kept users), so repeat until none is short
                kept, dropped, short = table, [], None
                while True:
                    counts = user_counts(kept, None, plan.relevance_threshold)
                    counts = counts[counts["train_positives"] + counts["test_positives"] >= plan.min_positives]
                    n_items = kept[kept["user"].isin(counts.index)]["item"].nunique()
                    now = shortages(counts, n_items, n, plan.validation_size)
                    short = now if short is None else short
                    if not now["short"].any():
                        break
                    dropped += list(now.index[now["short"]])
                    if not plan.drop_infeasible_users:
                        break
                    kept = kept[~kept["user"].isin(dropped)]
            first = first_short(short) if short["short"].any() else ""
            rows.append({"nsr": n, "split": label, "users": int(len(short)), "short": len(dropped), "first": first,
                         **{f"short_{p}": int(short[f"short_{p}"].sum()) for p in ("train", "validation", "test")}})
            if dropped:
                plan.dropped[f"nsr{n}-{label}"] = [v.item() if hasattr(v, "item") else v for v in dropped]
    plan.feasibility = rows
    if any(r["short"] for r in rows) and not plan.drop_infeasible_users:
        raise InfeasibleSplits(infeasible_message(rows, plan.nsr))


def prepare_mf(*, data="movielens", nsr=None, splits=None, seed=0, losses=None, baseline="listwise_nrbp",
               epochs=None, patience=None, learning_rates=None, optimizer="adam", n_factors=32, batch_size=32,
               validation_size=0.1, relevance_threshold=None, min_positives=25, device="auto", jobs=1,
               threads=None, out=None, quick=False, plots=True, command="",
               report_only=False, negatives="unrated", epoch_on="validation", baselines=None,
               fixed_train_negatives=False, drop_infeasible_users=False, analyses=None) -> MFPlan:
    """Validate every argument and the data, and check that every (NSR, split, user) has
    enough training, validation and test negatives, before any training; raise ValueError
    (:class:`gbrank.bench.mf._splits.InfeasibleSplits` for the pre-check) or
    FileNotFoundError with what is wrong and how to fix it.

    ``data`` is a data set name (``movielens``, ``citeulike``), ``citeulike-paper`` (the
    paper's own CiteULike-a folds under ``$GBRANK_DATA``), a folder of ready folds
    (``fold_K/train.csv[.gz]`` and ``fold_K/test.csv[.gz]``) or a ratings file.  For ready
    folds ``splits`` selects folds (a count, or names ``fold_0,fold_2``); otherwise it is
    the number of seeded random splits.  ``analyses``: the named analyses of
    ``mf/_analyses.py`` the report runs (comma-separated names, a list, or ``"none"``); None:
    the data preset's (``paper`` on the paper's own folds, which hold its tables; none
    otherwise)."""
    from gbrank.torch import make_loss, resolve_device

    from .._analyses import choose_analyses
    from ._analyses import ANALYSES
    from ._splits import fold_numbers, parse_folds, read_fold, ready_folder

    choose_analyses(analyses, ANALYSES)  # a bad name is reported before the data is read
    nsr_list = parse_nsr(nsr if nsr is not None else ("1" if quick else "1,2,5"))
    folder = ready_folder(str(data))
    if folder is None:
        splits = splits if splits is not None else (1 if quick else 3)
        try:
            splits = int(str(splits))
        except ValueError:
            raise ValueError(f"--splits must be a positive number of random splits (fold names are for ready "
                             f"folds), got {splits!r}") from None
        if splits < 1:
            raise ValueError(f"--splits must be a positive number of random splits, got {splits!r}")
        seeds = [int(seed) + i for i in range(splits)]
    else:
        available = fold_numbers(folder)
        if not available:
            raise FileNotFoundError(f"{folder} holds no fold_K folder")
        seeds = parse_folds(splits if splits is not None else (1 if quick else None), available)
    loss_list = parse_losses(losses if losses else (QUICK_LOSSES if quick else ["default"]))
    if baseline not in loss_list:
        try:
            baseline = make_loss(baseline).name
        except ValueError as exc:
            raise ValueError(f"--baseline: {exc}") from None
        if baseline not in loss_list:
            loss_list = [baseline] + loss_list
    baseline_list = parse_baselines(baselines)
    epochs = epochs if epochs is not None else (3 if quick else PAPER_EPOCHS)
    patience = patience if patience is not None else (2 if quick else DEFAULT_PATIENCE)
    for flag, v in (("--epochs", epochs), ("--patience", patience), ("--n-factors", n_factors),
                    ("--batch-size", batch_size), ("--jobs", jobs), ("--min-positives", min_positives)):
        if isinstance(v, bool) or int(v) != v or v < 1:
            raise ValueError(f"{flag} must be a positive integer, got {v!r}")
    rates = parse_learning_rates(learning_rates)
    if optimizer not in ("adam", "sgd"):
        raise ValueError(f"--optimizer must be adam or sgd, got {optimizer!r}")
    if not 0 < validation_size < 1:
        raise ValueError(f"--validation-size must lie strictly between 0 and 1 (epochs are chosen on it, never "
                         f"on the test set), got {validation_size!r}")
    for flag, v, choices in (("--negatives", negatives, NEGATIVES), ("--epoch-on", epoch_on, EPOCH_ON)):
        if v not in choices:
            raise ValueError(f"{flag} must be one of {list(choices)}, got {v!r}")
    cores = os.cpu_count() or 1
    threads = int(threads) if threads is not None else max(1, cores // int(jobs))
    if threads < 1:
        raise ValueError(f"--threads must be a positive integer, got {threads!r}")
    dev = str(resolve_device(device))
    if folder is None:
        table, name, default_threshold = load_interactions(data)
    else:
        table, name, default_threshold = None, (str(data) if str(data) in ("citeulike-paper",) else folder.name), 1.0
    threshold = float(relevance_threshold) if relevance_threshold is not None else default_threshold
    plan = MFPlan(data=str(data), data_name=name, relevance_threshold=threshold, min_positives=int(min_positives),
                  nsr=nsr_list, seeds=seeds, losses=loss_list,
                  metric_of={loss: make_loss(loss).metric for loss in loss_list}, baseline=baseline,
                  epochs=int(epochs), patience=int(patience), learning_rates=rates,
                  optimizer=str(optimizer), n_factors=int(n_factors), batch_size=int(batch_size),
                  validation_size=float(validation_size), device=dev, jobs=int(jobs), threads=threads,
                  out=str(out) if out else f"runs/bench-mf-{name}", quick=bool(quick),
                  plots=bool(plots), command=str(command),
                  report_only=bool(report_only), negatives=negatives, epoch_on=epoch_on,
                  baselines=baseline_list, seed=int(seed), ready=str(folder) if folder is not None else "",
                  fixed_train_negatives=bool(fixed_train_negatives),
                  drop_infeasible_users=bool(drop_infeasible_users))
    plan.metric_of.update({b: "ndcg" for b in baseline_list})
    if isinstance(rates, dict):
        unknown = [k for k in rates if not any(rates_for_loss({k: [1.0]}, loss) for loss in valid_loss_names())]
        if unknown:
            raise ValueError(f"--learning-rates names {unknown}, which match no loss; use listwise, lambda, kos, or "
                             f"a loss name ({', '.join(valid_loss_names())})")
    plan.lr_grid = {loss: list(rates_for_loss(rates, loss) or [default_learning_rate(loss, plan.optimizer)])
                    for loss in loss_list}
    if folder is not None and (folder / "paper-results").is_dir():
        plan.paper_tables = str(folder / "paper-results")
    plan.analyses = choose_analyses(analyses, ANALYSES, ("paper",) if plan.paper_tables else ())
    if "paper" in plan.analyses and not plan.paper_tables:
        raise ValueError("--analyses paper compares with the paper's result tables, found only beside its own folds "
                         f"(paper-results/ in a folder of ready folds, e.g. --data citeulike-paper); {data!r} has none")
    if folder is not None:

        def fold_of(k):
            fold = read_fold(folder, k)
            if negatives == "non_relevant":  # lower ratings dropped: those items can be negatives
                fold = replace(fold, train=fold.train[fold.train["rating"] >= threshold],
                               test=fold.test[fold.test["rating"] >= threshold])
            return fold

        first = fold_of(seeds[0])
        _check_feasible(plan, None, fold_of)
        pos_tr, pos_te = (first.train["rating"] >= threshold), (first.test["rating"] >= threshold)
        plan.data_summary = {"folds": [f"fold_{k}" for k in seeds], "columns": first.columns,
                             "users": int(first.train[pos_tr]["user"].nunique()),
                             "items": int(len(np.union1d(first.train["item"].unique(), first.test["item"].unique()))),
                             "train_positives": int(pos_tr.sum()), "test_positives": int(pos_te.sum()),
                             "users_left_out": {k: len(v) for k, v in plan.dropped.items()}}
        return plan
    X, y = rating_pairs(table, negatives, threshold)
    pairs = pd.DataFrame({"user": X[:, 0], "item": X[:, 1], "rating": y.astype(float)})
    n_pos = pairs[pairs["rating"] >= threshold].groupby("user").size()
    if not (n_pos >= min_positives).any():
        raise ValueError(f"the data cannot be split for this protocol: no user has at least "
                         f"{plural(min_positives, 'positive interaction')} (rating >= {threshold:g}); the most any "
                         f"user has is {int(n_pos.max()) if len(n_pos) else 0}. Lower --min-positives or "
                         "--relevance-threshold")
    _check_feasible(plan, pairs, None)
    from gbrank.interactions import ArgumentError, split_interactions

    # a split at the largest NSR, of the users kept there, as the last check of the data
    kept = pairs[~pairs["user"].isin(plan.dropped.get(f"nsr{max(nsr_list)}-{plan.split_label(seeds[0])}", []))]
    try:
        split = split_interactions(kept[["user", "item"]].to_numpy(), kept["rating"].to_numpy(),
                                   relevance_threshold=threshold, min_positives=int(min_positives),
                                   nsr=max(nsr_list), random_state=int(seed))
    except ArgumentError as exc:  # restated in the command's flags
        raise ValueError(f"the data cannot be split for this protocol: {exc.restated(FLAGS)}") from None
    except ValueError as exc:
        raise ValueError(f"the data cannot be split for this protocol: {exc}") from None
    s = split.settings
    plan.data_summary = {"interactions": int(len(table)), "users_kept": s["n_users"],
                         "users_dropped": s["n_users_dropped"], "items": s["n_items"],
                         "train_positives": s["n_train_positives"], "test_positives": s["n_test_positives"],
                         "users_left_out": {k: len(v) for k, v in plan.dropped.items()}}
    return plan
