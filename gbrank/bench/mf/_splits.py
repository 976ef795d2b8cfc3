"""``gbrank bench mf``, the splits: ready train/test folds (``--data FOLDER`` with
``fold_K/{train,test}.csv[.gz]``, or ``citeulike-paper``), the seeded random splits, the
validation split carved from each user's training positives, and the feasibility pre-check
(every NSR, split and user has enough training, validation and test negatives) made before
any training.

Who draws what, for one (NSR, split):

* **test negatives**: NSR x the user's test positives, drawn once, without replacement,
  from the split's catalogue minus every item the user interacted with (train or test);
  seeded by (``--seed``, fold) for ready folds, by the split's seed for random splits;
* **validation**: ``round(validation_size x n)`` of the user's n training positives (half
  up) become validation positives; NSR x as many validation negatives are drawn from the
  catalogue minus the user's training interactions.  The validation positives stay in the
  model's training data as interactions below the relevance threshold (never positives, never
  drawn as training negatives, never recommended);
* **training negatives**: NSR x the user's remaining training positives, from the catalogue
  minus the user's training interactions, drawn by ``MFRanker`` every epoch (or once with
  ``--fixed-train-negatives``).
"""

from __future__ import annotations

import pathlib
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gbrank._validation import plural

#: the name of the SIGIR'21 authors' CiteULike-a splits under $GBRANK_DATA
PAPER_SPLITS = {"citeulike-paper": "citeulike-a-paper-splits"}
_FOLD = re.compile(r"^fold_(\d+)$")
_SUFFIXES = (".csv.gz", ".csv")


# ---------------------------------------------------------------------------------------
# ready folds


def ready_folder(data: str) -> pathlib.Path | None:
    """The folder of ready train/test folds that ``--data`` names, or None when it names
    something else (a data set name, a ratings file, a folder without ``fold_K``)."""
    if data in PAPER_SPLITS:
        from gbrank.datasets import data_home

        folder = data_home() / PAPER_SPLITS[data]
        if not folder.is_dir():
            raise FileNotFoundError(f"--data {data}: {folder} does not exist; it holds the paper's CiteULike-a "
                                    "splits (fold_0..2/{train,test}.csv.gz), see the data README")
        return folder
    path = pathlib.Path(data)
    if path.is_dir() and any(_FOLD.match(p.name) and p.is_dir() for p in path.iterdir()):
        return path
    return None


def _fold_file(folder: pathlib.Path, part: str) -> pathlib.Path:
    for suffix in _SUFFIXES:
        if (folder / f"{part}{suffix}").is_file():
            return folder / f"{part}{suffix}"
    raise FileNotFoundError(f"{folder} has no {part}.csv or {part}.csv.gz; every fold_K folder of ready splits "
                            "needs both train and test")


def fold_numbers(folder: pathlib.Path) -> list[int]:
    """The K of every ``fold_K`` sub-folder, ascending."""
    return sorted(int(_FOLD.match(p.name).group(1)) for p in folder.iterdir() if p.is_dir() and _FOLD.match(p.name))


def read_part(path: pathlib.Path) -> tuple[pd.DataFrame, str]:
    """(table with user, item, rating; the columns used) of one train or test file, read by
    :func:`gbrank.datasets.load_interactions` as a table.

    ``user`` and ``item`` columns are used when present, else ``user_id`` and ``item_id``;
    ``rating`` when present, else every row is a positive (rating 1).  Empty ids and a
    (user, item) pair given twice are refused, naming the rows."""
    from gbrank.datasets import load_interactions

    table = load_interactions(path)
    if table.attrs["format"] != "table":
        raise ValueError(f"{path} holds {table.attrs['format']} data; a ready fold's train and test files are tables "
                         "with a header naming user,item (or user_id,item_id) and optionally rating")
    return table[["user", "item", "rating"]], table.attrs["columns"]


@dataclass
class Fold:
    """One ready fold: its train and test tables and the columns read."""

    number: int
    train: pd.DataFrame
    test: pd.DataFrame
    columns: str


_FOLDS: dict = {}


def read_fold(folder: pathlib.Path, number: int) -> Fold:
    """``fold_<number>`` of ``folder`` (cached in this process)."""
    key = (str(folder), number)
    if key not in _FOLDS:
        sub = folder / f"fold_{number}"
        if not sub.is_dir():
            raise FileNotFoundError(f"{sub} does not exist; the folds of {folder} are "
                                    f"{', '.join(f'fold_{k}' for k in fold_numbers(folder))}")
        train, cols = read_part(_fold_file(sub, "train"))
        test, _ = read_part(_fold_file(sub, "test"))
        both = train.merge(test, on=["user", "item"])
        if len(both):
            raise ValueError(f"{sub}: {plural(len(both), 'user-item pair')} {'is' if len(both) == 1 else 'are'} in "
                             f"both train and test (first: user "
                             f"{both.user.iloc[0]}, item {both.item.iloc[0]}); a test pair must not be trained on")
        _FOLDS.clear()  # one fold at a time per process
        _FOLDS[key] = Fold(number, train, test, cols)
    return _FOLDS[key]


def parse_folds(splits, available: list[int]) -> list[int]:
    """``--splits`` for ready folds: a count N (the first N folds) or fold names
    ``fold_0,fold_2``; raises ValueError naming the folds there are."""
    names = ", ".join(f"fold_{k}" for k in available)
    if splits is None:
        return list(available)
    text = str(splits).strip()
    if text.isdigit():
        n = int(text)
        if not 1 <= n <= len(available):
            raise ValueError(f"--splits {text}: the data has {plural(len(available), 'fold')} ({names}); give a count "
                             f"from 1 to {len(available)} or fold names such as fold_{available[0]}")
        return list(available[:n])
    out = []
    for part in (t.strip() for t in text.split(",") if t.strip()):
        m = _FOLD.match(part)
        if not m or int(m.group(1)) not in available:
            raise ValueError(f"--splits: {part!r} is not a fold of the data; its folds are {names} (or give a count)")
        if int(m.group(1)) not in out:
            out.append(int(m.group(1)))
    if not out:
        raise ValueError(f"--splits is empty; give a count or fold names ({names})")
    return out


# ---------------------------------------------------------------------------------------
# the splits of one (NSR, split)


def _codes(values, known):
    return pd.Index(known).get_indexer(values)


def ready_split(fold: Fold, *, nsr: int, seed: int, threshold: float, drop_users=()):
    """The :class:`gbrank.interactions.InteractionSplit` of a ready fold at one NSR: its
    training rows, its test positives (rating >= threshold) with NSR x as many test
    negatives per user drawn once from the fold's catalogue (every item of train and test)
    minus the user's interactions, seeded by ``(seed, fold, nsr)``.  Users without a test
    or a training positive, and ``drop_users``, are left out (their items stay in the
    catalogue)."""
    from gbrank.interactions import InteractionSplit, csr_from, csr_rows, sample_negatives

    train, test = fold.train, fold.test
    catalogue = np.unique(np.concatenate([train["item"].to_numpy(), test["item"].to_numpy()]))
    pos_train = train[train["rating"] >= threshold]
    pos_test = test[test["rating"] >= threshold]
    users = np.intersect1d(pos_train["user"].unique(), pos_test["user"].unique())
    if len(drop_users):
        users = np.setdiff1d(users, np.asarray(list(drop_users), dtype=users.dtype))
    train = train[train["user"].isin(users)]
    test = test[test["user"].isin(users)]
    pos_test = pos_test[pos_test["user"].isin(users)]
    both = pd.concat([train, test])
    u, i = _codes(both["user"], users), _codes(both["item"], catalogue)
    exclude = csr_from(u, i, len(users))
    need = nsr * np.bincount(_codes(pos_test["user"], users), minlength=len(users))
    rng = np.random.default_rng([int(seed), int(fold.number), int(nsr)])
    ptr, neg = sample_negatives(need, exclude, len(catalogue), rng, what="test negatives", names=users)
    X_pos = pos_test[["user", "item"]].to_numpy()
    X_neg = np.column_stack([users[csr_rows(ptr)], catalogue[neg]]).astype(X_pos.dtype)
    X_test = np.concatenate([X_pos, X_neg])
    y_test = np.concatenate([pos_test["rating"].to_numpy(dtype=float), np.zeros(len(neg))])
    order = np.argsort(_codes(X_test[:, 0], users), kind="stable")
    return InteractionSplit(
        X_train=train[["user", "item"]].to_numpy(), y_train=train["rating"].to_numpy(dtype=float),
        X_test=X_test[order], y_test=y_test[order], test_positives=X_pos, items=catalogue,
        settings={"relevance_threshold": float(threshold), "nsr": int(nsr), "fold": int(fold.number),
                  "n_users": int(len(users)), "n_items": int(len(catalogue)),
                  "n_train_positives": int((train["rating"] >= threshold).sum()),
                  "n_test_positives": int(len(pos_test))})


def carve_validation(X_train, y_train, *, threshold: float, validation_size: float, nsr: int, items, seed: int):
    """The honest validation split of one split's training data: ``(y_fit, X_val, y_val)``.

    ``round(validation_size x n)`` (half up) of each user's n training positives become
    validation positives (seeded by ``seed``); each gets NSR negatives drawn from ``items``
    minus the user's training interactions.  ``y_fit`` is ``y_train`` with the validation
    positives' ratings set to 0: the model keeps them as interactions (never positives, never
    drawn as training negatives, never recommended)."""
    from gbrank.interactions import csr_from, csr_rows, holdout, sample_negatives

    users, ucode = np.unique(X_train[:, 0], return_inverse=True)
    icode = _codes(X_train[:, 1], items)
    pos = np.flatnonzero(y_train >= threshold)
    pos = pos[np.argsort(ucode[pos], kind="stable")]
    ptr = np.concatenate([[0], np.cumsum(np.bincount(ucode[pos], minlength=len(users)))])
    rng = np.random.default_rng([int(seed), 7])
    held = pos[holdout(ptr, float(validation_size), rng)]
    y_fit = np.asarray(y_train, dtype=float).copy()
    y_fit[held] = 0.0
    seen = csr_from(ucode, icode, len(users))
    need = nsr * np.bincount(ucode[held], minlength=len(users))
    nptr, neg = sample_negatives(need, seen, len(items), rng, what="validation negatives", names=users)
    X_neg = np.column_stack([users[csr_rows(nptr)], np.asarray(items)[neg]]).astype(X_train.dtype)
    X_val = np.concatenate([X_train[held], X_neg])
    y_val = np.concatenate([np.asarray(y_train, dtype=float)[held], np.zeros(len(neg))])
    order = np.argsort(np.concatenate([ucode[held], csr_rows(nptr)]), kind="stable")
    return y_fit, X_val[order], y_val[order]


# ---------------------------------------------------------------------------------------
# feasibility


class InfeasibleSplits(ValueError):
    """Some users of some (NSR, split) have too few items left for their negatives."""


def _round_half_up(fraction, n):
    return np.floor(fraction * n + 0.5).astype(np.int64)


def user_counts(train: pd.DataFrame, test: pd.DataFrame | None, threshold: float, test_size: float = 0.2):
    """Per user: training interactions, training positives, test positives, all interactions.

    With ``test`` None (random splits) the test positives are ``round(test_size x positives)``
    of the user's positives (what :func:`gbrank.interactions.split_interactions` holds out)."""
    if test is None:
        g = train.groupby("user", sort=True)
        n_all = g.size()
        n_pos = g["rating"].apply(lambda r: int((r >= threshold).sum()))
        n_test = pd.Series(_round_half_up(test_size, n_pos.to_numpy()), index=n_pos.index)
        return pd.DataFrame({"train_interactions": n_all - n_test, "train_positives": n_pos - n_test,
                             "test_positives": n_test, "interactions": n_all})
    tr, te = train.groupby("user", sort=True), test.groupby("user", sort=True)
    frame = pd.DataFrame({"train_interactions": tr.size(),
                          "train_positives": tr["rating"].apply(lambda r: int((r >= threshold).sum())),
                          "test_positives": te["rating"].apply(lambda r: int((r >= threshold).sum())),
                          "test_interactions": te.size()}).fillna(0).astype(np.int64)
    frame["interactions"] = frame["train_interactions"] + frame["test_interactions"]
    return frame.drop(columns="test_interactions")


def shortages(counts: pd.DataFrame, n_items: int, nsr: int, validation_size: float) -> pd.DataFrame:
    """Per user: need and available training, validation and test negatives at ``nsr``, and
    whether the user is short of each (``short_train``, ``short_validation``, ``short_test``)."""
    n_val = _round_half_up(validation_size, counts["train_positives"].to_numpy())
    out = pd.DataFrame(index=counts.index)
    out["need_train"] = nsr * (counts["train_positives"].to_numpy() - n_val)
    out["need_validation"] = nsr * n_val
    out["need_test"] = nsr * counts["test_positives"].to_numpy()
    out["available_train"] = out["available_validation"] = n_items - counts["train_interactions"].to_numpy()
    out["available_test"] = n_items - counts["interactions"].to_numpy()
    for part in ("train", "validation", "test"):
        out[f"short_{part}"] = out[f"need_{part}"] > out[f"available_{part}"]
    out["short"] = out["short_train"] | out["short_validation"] | out["short_test"]
    return out


def infeasible_message(rows: list[dict], nsr_list, drop_flag: str = "--drop-infeasible-users") -> str:
    """The error of the pre-check: per (NSR, split) the users short of each kind of negative,
    the first such user, and the fixes."""
    lines = ["not every user has enough items left for its negatives (checked before any training):"]
    for r in rows:
        if r["short"]:
            lines.append(f"  NSR {r['nsr']}, {r['split']}: {r['short']} of {r['users']} users short (training "
                         f"negatives {r['short_train']}, validation {r['short_validation']}, test {r['short_test']}); "
                         f"first: {r['first']}")
    ok = [n for n in nsr_list if not any(r["short"] for r in rows if r["nsr"] == n)]
    lines.append(f"Fix: pass {drop_flag} to leave those users out of the NSR and split where they are short "
                 "(counted in the reports), or lower --nsr" + (f" (feasible here: {','.join(map(str, ok))})" if ok
                                                                else "") +
                 ", or keep fewer heavy users (raise --relevance-threshold, use a larger catalogue)")
    return "\n".join(lines)


def first_short(short: pd.DataFrame) -> str:
    """``user U needs a <kind> negatives, b available`` for the first short user."""
    row = short[short["short"]].iloc[0]
    for part in ("train", "validation", "test"):
        if row[f"short_{part}"]:
            return (f"user {short[short['short']].index[0]} needs {plural(row[f'need_{part}'], f'{part} negative')}, "
                    f"{int(row[f'available_{part}'])} available")
    return ""  # pragma: no cover
