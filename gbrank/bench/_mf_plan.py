"""``gbrank bench mf``, its plan: losses, NSR, splits and training settings checked, the data
loaded and a split drawn before any training (:func:`prepare_mf`).  The benchmark itself:
``_mf.py``; one run: ``_mf_run.py``; the reports: ``_mf_report.py``."""

from __future__ import annotations

import math
import os
import pathlib
from dataclasses import dataclass, field

import pandas as pd

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
QUICK_LOSSES = ["listwise_nrbp", "listwise_ndcg", "lambda_ndcg", "kos_warp"]

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
    negatives: str = "unrated"
    epoch_on: str = "validation"
    unfinished: list = field(default_factory=list)
    data_summary: dict = field(default_factory=dict)

    def training_settings(self) -> dict:
        """The settings a cached run must share to be reused."""
        keys = ("data", "relevance_threshold", "min_positives", "epochs", "patience", "learning_rate", "optimizer",
                "n_factors", "batch_size", "validation_size")
        settings = {k: getattr(self, k) for k in keys}
        # the protocol variants enter only when chosen: runs of the default protocol keep their keys
        settings.update({k: getattr(self, k) for k, default in (("negatives", "unrated"), ("epoch_on", "validation"))
                         if getattr(self, k) != default})
        return settings

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


def rating_pairs(table: pd.DataFrame, negatives: str, threshold: float):
    """(X, y) of the split: user-item pairs and ratings; with ``negatives="non_relevant"``
    the ratings below ``threshold`` are dropped first (so those items can be negatives)."""
    if negatives == "non_relevant":
        table = table[table["rating"] >= threshold]
    return table[["user", "item"]].to_numpy(), table["rating"].to_numpy()


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
               report_only=False, negatives="unrated", epoch_on="validation") -> MFPlan:
    """Validate every argument and the data (a split at the largest NSR is drawn) before any
    training; raise ValueError or FileNotFoundError with what is wrong and how to fix it."""
    from gbrank.interactions import split_interactions
    from gbrank.torch import resolve_device

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
    for flag, v, choices in (("--negatives", negatives, NEGATIVES), ("--epoch-on", epoch_on, EPOCH_ON)):
        if v not in choices:
            raise ValueError(f"{flag} must be one of {list(choices)}, got {v!r}")
    cores = os.cpu_count() or 1
    threads = int(threads) if threads is not None else max(1, cores // int(jobs))
    if threads < 1:
        raise ValueError(f"--threads must be a positive integer, got {threads!r}")
    dev = str(resolve_device(device))
    table, name, default_threshold = load_interactions(data)
    threshold = float(relevance_threshold) if relevance_threshold is not None else default_threshold
    X, y = rating_pairs(table, negatives, threshold)
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
                  report_only=bool(report_only), negatives=negatives, epoch_on=epoch_on)
    s = split.settings
    plan.data_summary = {"interactions": int(len(table)), "users_kept": s["n_users"],
                         "users_dropped": s["n_users_dropped"], "items": s["n_items"],
                         "train_positives": s["n_train_positives"], "test_positives": s["n_test_positives"]}
    return plan
