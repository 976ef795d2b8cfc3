"""The run store shared by ``gbrank bench letor`` and ``gbrank bench mf``: atomic writes that
leave no temporary file in any failure, files readable as the umask decides, the version check,
unreadable files trained again with one log line that names them, locks, and two processes
sharing one output folder."""

from __future__ import annotations

import json
import logging
import os
import re
import stat
import subprocess
import sys
import warnings

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

from gbrank.bench import RunStore
from gbrank.bench._store import key, read_run, write_atomic
from gbrank.datasets import make_letor

VERSIONS = {"numpy": np.__version__}


def _train(value=1.0):
    calls = []

    def train():
        calls.append(1)
        return {"scores": np.full(4, value)}, {"seed": 0}

    return train, calls


def test_save_is_atomic_and_leaves_no_temporary_file(tmp_path):
    store = RunStore(tmp_path / "runs")
    path = store.save("a__" + key({"x": 1}), {"scores": np.arange(5.0)}, {"versions": VERSIONS})
    assert sorted(p.name for p in store.folder.iterdir()) == [path.name]
    np.testing.assert_array_equal(read_run(path).arrays["scores"], np.arange(5.0))

    def broken(f):
        f.write(b"half a run")
        raise KeyboardInterrupt  # killed while writing

    with pytest.raises(KeyboardInterrupt):
        write_atomic(store.path("b"), broken)
    assert sorted(p.name for p in store.folder.iterdir()) == [path.name]  # no partial run, no temp file


def test_claim_trains_once_and_checks_versions(tmp_path):
    store = RunStore(tmp_path)
    train, calls = _train()
    run, trained = store.claim("r", VERSIONS, train)
    assert trained and run.record == {"seed": 0, "versions": VERSIONS}
    assert store.claim("r", VERSIONS, train)[1] is False and len(calls) == 1
    assert store.state("r", {"numpy": "0.0"})[0] == "stale"
    store.save("r", run.arrays, {"seed": 0})  # saved before runs recorded versions: reused
    assert store.state("r", VERSIONS)[0] == "ok"


def test_a_held_run_is_not_claimed_without_waiting(tmp_path):
    store = RunStore(tmp_path)
    train, calls = _train()
    with store.lock("r"):
        assert store.claim("r", VERSIONS, train, wait=False) is None
        with store.lock("r", wait=False) as held:
            assert not held
    assert store.claim("r", VERSIONS, train, wait=False)[1] and len(calls) == 1


def _store_records(caplog):
    return [r for r in caplog.records if r.name == "gbrank.bench._store"]


@pytest.mark.parametrize("damage", [lambda b: b[:40], lambda b: b"", lambda b: b"not a zip archive at all"],
                         ids=["truncated", "empty", "garbage"])
def test_an_unreadable_run_file_is_one_log_line_and_is_trained_again(tmp_path, caplog, damage):
    store = RunStore(tmp_path)
    train, calls = _train()
    store.claim("r", VERSIONS, train)
    path = store.path("r")
    path.write_bytes(damage(path.read_bytes()))
    with caplog.at_level(logging.WARNING, logger="gbrank.bench._store"), warnings.catch_warnings():
        warnings.simplefilter("error")  # a log line, not a Python warning with a source line
        assert store.state("r", VERSIONS)[0] == "unreadable"
    (record,) = _store_records(caplog)
    assert record.levelno == logging.WARNING
    text = record.getMessage()
    assert text.startswith(f"cached run {path} cannot be read (") and text.endswith("; it will be trained again")
    assert "\n" not in text and ".py:" not in text
    run, trained = store.claim("r", VERSIONS, train)
    assert trained and len(calls) == 2 and store.state("r", VERSIONS)[0] == "ok"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".locks", "r.npz"]  # no temporary file left


def test_no_temporary_file_is_left_by_any_failure(tmp_path):
    store = RunStore(tmp_path)

    def unserialisable(f):
        np.savez_compressed(f, record=json.dumps({"x": object()}))

    def disk_full(f):
        f.write(b"half")
        raise OSError(28, "No space left on device")

    for write in (unserialisable, disk_full):
        with pytest.raises((TypeError, OSError)):
            write_atomic(store.path("a"), write)
    assert list(tmp_path.iterdir()) == []
    # a temporary file of a writer that was killed (SIGKILL: no cleanup runs) goes at the next claim
    killed = tmp_path / ".c.npz.0123456789ab.tmp"
    killed.write_bytes(b"half a run")
    other = tmp_path / ".d.npz.0123456789ab.tmp"  # another run's: not this claim's to remove
    other.write_bytes(b"half")
    train, _ = _train()
    assert store.claim("c", VERSIONS, train)[1]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".d.npz.0123456789ab.tmp", ".locks", "c.npz"]


def test_run_files_are_readable_as_the_umask_decides(tmp_path):
    old = os.umask(0o022)
    try:
        path = RunStore(tmp_path).save("r", {"scores": np.arange(3.0)}, {})
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
        write_atomic(tmp_path / "merged.json", lambda f: f.write(b"{}"))
        assert stat.S_IMODE((tmp_path / "merged.json").stat().st_mode) == 0o644
        os.umask(0o077)
        path = RunStore(tmp_path).save("private", {"scores": np.arange(3.0)}, {})
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    finally:
        os.umask(old)


def test_retrain_notes_count_in_words():
    from gbrank.bench._store import retrain_notes

    assert retrain_notes({}) == ""
    assert retrain_notes({"stale": 1}) == ("; 1 cached run was made under other library versions and is trained "
                                           "again")
    assert retrain_notes({"stale": 2, "unreadable": 1}) == (
        "; 2 cached runs were made under other library versions and are trained again; 1 cached run file could "
        "not be read and is trained again")


# ---------------------------------------------------------------------------------------
# the commands


@pytest.fixture(scope="module")
def letor_folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("letor")
    (root / "Fold1").mkdir()
    offset = 0
    for i, (split, n) in enumerate({"train": 30, "vali": 10, "test": 12}.items()):
        X, y, qid = make_letor(n_queries=n, n_features=6, random_state=i)
        dump_svmlight_file(X, y, str(root / "Fold1" / f"{split}.txt"), query_id=qid + offset, zero_based=False)
        offset += n
    return root


LETOR = ["bench", "letor", "--contenders", "lightgbm:lambdarank,xgboost:rank:ndcg,gbrank:ndcg,gbrank:ap,gbrank:rr",
         "--rounds", "4", "--patience", "2", "--threads", "1"]


def _cli(args, **kw):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OMP_WAIT_POLICY": "PASSIVE"}
    return subprocess.Popen([sys.executable, "-m", "gbrank.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, **kw)


def test_a_truncated_cached_letor_run_is_trained_again(letor_folder, tmp_path, caplog):
    from gbrank.cli import main

    out = tmp_path / "out"
    argv = [*LETOR, "--data", str(letor_folder), "--out", str(out)]
    assert main(argv, out=open(os.devnull, "w")) == 0
    (path,) = (out / "runs").glob("gbrank_ndcg__*.npz")
    scores = read_run(path).arrays["scores"]
    path.write_bytes(path.read_bytes()[:100])
    with open(tmp_path / "log.txt", "w") as log, caplog.at_level(logging.WARNING, logger="gbrank.bench._store"):
        assert main(argv, out=log) == 0
    (record,) = _store_records(caplog)
    assert record.getMessage().startswith(f"cached run {path} cannot be read")
    text = (tmp_path / "log.txt").read_text()
    assert re.search(r"1 runs? to train, 4 cached", text) and "1 cached run file could not be read" in text
    np.testing.assert_array_equal(read_run(path).arrays["scores"], scores)
    assert not [p.name for p in (out / "runs").iterdir() if p.name.endswith(".tmp")]


def test_two_letor_processes_on_one_out_folder_share_the_runs(letor_folder, tmp_path):
    out = tmp_path / "shared"
    procs = [_cli([*LETOR, "--data", str(letor_folder), "--out", str(out)]) for _ in range(2)]
    logs = [p.communicate(timeout=600) for p in procs]
    for p, (stdout, stderr) in zip(procs, logs):
        assert p.returncode == 0, stderr
        assert "report written to" in stdout
    trained = sum((stdout + stderr).count("best round") for stdout, stderr in logs)  # per-run lines: either stream
    assert trained == 5  # every run trained once, by one of the two processes
    assert len(list((out / "runs").glob("*.npz"))) == 5 and not list((out / "runs").glob(".*.tmp"))
    summary = json.loads((out / "summary.json").read_text())
    alone = tmp_path / "alone"
    proc = _cli([*LETOR, "--data", str(letor_folder), "--out", str(alone)])
    assert proc.communicate(timeout=600) and proc.returncode == 0
    assert json.loads((alone / "summary.json").read_text())["contenders"] == summary["contenders"]


def test_two_mf_processes_on_one_out_folder_share_the_runs(tmp_path):
    from test_bench_mf import _ratings

    data = _ratings(tmp_path / "ratings.csv", n_users=30)
    args = ["bench", "mf", "--data", str(data), "--nsr", "1,2", "--splits", "1", "--seed", "3", "--losses",
            "listwise_nrbp,lambda_ndcg", "--epochs", "2", "--patience", "1", "--threads", "1", "--no-plots"]
    procs = [_cli([*args, "--out", str(tmp_path / "shared")]) for _ in range(2)]
    for p in procs:
        stdout, stderr = p.communicate(timeout=600)
        assert p.returncode == 0, stderr
        assert "reports written to" in stdout
    # 2 NSR x (2 losses + the popularity and random baselines), each stored once
    assert len(list((tmp_path / "shared" / "runs").glob("*.npz"))) == 8
    proc = _cli([*args, "--out", str(tmp_path / "alone")])
    assert proc.communicate(timeout=600) and proc.returncode == 0
    for protocol in ("full", "sampled", "corrected"):
        a = json.loads((tmp_path / "shared" / protocol / "summary.json").read_text())["contenders"]
        b = json.loads((tmp_path / "alone" / protocol / "summary.json").read_text())["contenders"]
        assert a == b, protocol
