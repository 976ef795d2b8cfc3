"""``benchmarks/bench_scale.py`` at its tiny size: every task in fresh processes, one saved record
per (task, size, contender), the data written once (text and Parquet holding the same values)
and reused, and failed children reported rather than raised.

The run of the script (14 child processes, each importing the libraries) made this file take
41-78 s on a shared 2-core machine (six runs, half of them at 60 s or more), so the tests that
use it are marked slow (``pytest -m slow``); the data generator and the failure reporting are
tested without it (about 10 s)."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

from gbrank.datasets import load_letor  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPT = "benchmarks/bench_scale.py"
BACKENDS = [b for b in ("lightgbm", "xgboost") if importlib.util.find_spec(b) is not None]
# the bench task runs gbrank bench letor, whose baseline is LightGBM's lambdarank
TASKS = ["load", "fit", "predict", "evaluate"] + (["bench"] if "lightgbm" in BACKENDS else [])


@pytest.fixture(scope="module")
def scale(repo_module):
    return repo_module(SCRIPT)


def _run(args, timeout=900):
    proc = subprocess.run([sys.executable, SCRIPT, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    if not BACKENDS:
        pytest.skip("neither lightgbm nor xgboost is installed")
    data = tmp_path_factory.mktemp("scale-data")
    saved = data / "scale.json"
    # the bench task with two contenders (its default set takes about a minute even at this size)
    stdout = _run(["--sizes", "tiny", "--data-dir", str(data), "--rounds", "2", "--tasks", *TASKS,
                   "--backends", *BACKENDS, "--bench-contenders", "lightgbm:lambdarank,gbrank:ndcg",
                   "--bench-rounds", "2", "--save", str(saved)])
    return data, json.loads(saved.read_text()), stdout


@pytest.mark.slow
def test_one_record_per_task_size_and_contender(tiny_run, scale):
    _, result, stdout = tiny_run
    records = result["records"]
    keys = [(r["task"], r["size"], r["contender"]) for r in records]
    expected = [(t, "tiny", c.name) for t in scale.TASKS if t in TASKS for c in scale.contenders(t, BACKENDS)]
    assert sorted(keys) == sorted(expected) and len(set(keys)) == len(keys)
    for r in records:
        assert r["status"] == "ok", r
        assert r["wall_s"] > 0 and r["peak_rss_mb"] > 0, r
        assert len(r["runs"]) == 1 and r["runs"][0]["returncode"] == 0
        if r["task"] in ("fit", "predict", "evaluate"):
            assert 0 < r["rss_after_load_mb"] <= r["peak_rss_mb"] * 1.01, r
        # the child's own peak (VmHWM), not its parent's carried over by exec
        hwm = r["runs"][0]["vm_hwm_mb"]
        if hwm is not None:
            assert r["peak_rss_mb"] == pytest.approx(hwm, rel=0.02), r
    # each measurement ran in a process of its own
    assert len({r["runs"][0]["pid"] for r in records}) == len(records)
    # ratios against the reference of the same task, size and library
    fit = {r["contender"]: r for r in records if r["task"] == "fit"}
    for b in BACKENDS:
        assert fit[f"{b}.train"]["wall_ratio"] == 1.0
        ours = fit[f"GBRanker[{b}]"]
        assert ours["reference"] == f"{b}.train"
        assert ours["wall_ratio"] == pytest.approx(ours["wall_s"] / fit[f"{b}.train"]["wall_s"])
        assert ours["runs"][0]["X_dtype"] == "float32"
    # progress lines, then the table with every contender
    assert stdout.count(" ...\n") == len(records)
    for r in records:
        assert r["contender"] in stdout.split("measurements in")[-1]


@pytest.mark.slow
def test_the_models_learn_from_the_features(tiny_run):
    _, result, _ = tiny_run
    for r in result["records"]:
        if r["task"] == "predict":
            run = r["runs"][0]
            assert run["test_ndcg@10"] > run["random_ndcg@10"] + 0.05, run


@pytest.mark.slow
def test_text_and_parquet_hold_the_same_values(tiny_run, scale):
    data, result, _ = tiny_run
    folder = data / "tiny"
    manifest = result["data"]["tiny"]
    size = scale.SIZES["tiny"]
    seen_qids = []
    for split in scale.SPLITS:
        X_txt, y_txt, q_txt = load_letor(folder / f"{split}.txt")
        frame = pd.read_parquet(folder / f"{split}.parquet")
        features = [f"f{j}" for j in range(size.n_features)]
        assert list(frame.columns) == features + ["label", "qid"]
        assert all(frame[c].dtype == np.float32 for c in features)
        X_pq = frame[features].to_numpy()
        assert X_txt.shape == X_pq.shape == (manifest["splits"][split]["rows"], size.n_features)
        # 6 significant digits in the text: the float32 values agree to them (exactly, on this grid)
        np.testing.assert_allclose(X_txt.astype(np.float32), X_pq, rtol=5e-6, atol=0)
        assert np.array_equal(X_txt.astype(np.float32), X_pq)
        np.testing.assert_array_equal(y_txt, frame["label"].to_numpy())
        np.testing.assert_array_equal(q_txt, frame["qid"].to_numpy())
        assert len(np.unique(q_txt)) == manifest["splits"][split]["lists"]
        seen_qids.append(np.unique(q_txt))
        assert set(np.unique(y_txt)) <= {0, 1, 2, 3, 4}
        # and the arrays the fit and predict children use
        X, y, q = scale.read_parquet_arrays(folder / f"{split}.parquet")
        assert X.dtype == np.float32 and X.flags.c_contiguous and np.array_equal(X, X_pq)
    with open(folder / "train.txt") as fh:
        line = fh.readline().split()
    assert re.fullmatch(r"\d", line[0]) and line[1].startswith("qid:")
    assert [t.split(":")[0] for t in line[2:]] == [str(j) for j in range(1, size.n_features + 1)]
    assert all(len(re.sub(r"[^0-9]", "", t.split(":")[1]).lstrip("0")) <= 6 for t in line[2:])
    # the splits share no list, and hold them all
    everything = np.concatenate(seen_qids)
    assert len(everything) == len(set(everything.tolist())) == size.n_lists
    assert sum(s["rows"] for s in manifest["splits"].values()) == manifest["rows"]


@pytest.mark.slow
def test_data_are_reused_while_the_manifest_matches(tiny_run):
    data, result, _ = tiny_run
    written = result["data"]["tiny"]["written"]
    stdout = _run(["--sizes", "tiny", "--data-dir", str(data), "--tasks", "evaluate", "--backends", *BACKENDS])
    assert "data tiny: reusing" in stdout
    manifest = json.loads((data / "tiny" / "manifest.json").read_text())
    assert manifest["written"] == written


def test_blocks_are_float32_and_deterministic(scale):
    size = scale.SIZES["tiny"]
    design = scale._design(size, 3)
    first = scale._block(size, design, 3, 0)
    again = scale._block(size, scale._design(size, 3), 3, 0)
    K, X, y, qid, split = first
    assert X.dtype == np.float32 and K.dtype == np.int32
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(X, K.astype(np.float32) / np.float32(scale.GRID))
    assert np.abs(X).max() < 100
    other = scale._block(size, scale._design(size, 4), 4, 0)
    assert not np.array_equal(other[1][:5], X[:5])


def test_a_failed_child_is_reported_not_raised(scale, tmp_path):
    log = tmp_path / "child.log"
    log.write_text("Traceback ...\nValueError: something broke\n")
    assert scale._reason(-9, None, log, None).startswith("killed by SIGKILL, returncode -9")
    assert scale._reason(1, {"error": "MemoryError: Unable to allocate 8 GiB"}, log, None) == \
        "MemoryError: Unable to allocate 8 GiB"
    assert scale._reason(1, None, log, None) == "exit status 1: ValueError: something broke"
    assert scale._reason(None, None, log, 30.0) == "timed out after 30 s (killed)"
    plan = [("web30k", c) for c in scale.contenders("fit", ["lightgbm"])]
    runs = {("web30k", "fit", "lightgbm.train"): [{"wall_s": 2.0, "peak_rss_mb": 100.0, "rss_after_load_mb": 50.0}],
            ("web30k", "fit", "GBRanker[lightgbm]"): [{"failed": "killed by SIGKILL, returncode -9"}]}
    records = scale.summarise(plan, runs)
    assert [r["status"] for r in records] == ["ok", "failed"]
    assert records[1]["wall_ratio"] is None and records[1]["reason"].startswith("killed")
    text = scale.table(records, markdown=True)
    assert "| fit | web30k | GBRanker[lightgbm] | failed: killed by SIGKILL, returncode -9 |" in text
    assert "lightgbm.train (ref) | 2.00 |" in text
    # a child whose data are missing: one RESULT line with the error, exit status 1
    proc = subprocess.run([sys.executable, SCRIPT, "--one", "evaluate", "--contender", "gbrank.evaluate",
                           "--size-name", "tiny", "--data-dir", str(tmp_path)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 1
    result = json.loads(proc.stdout.strip().splitlines()[-1][len("RESULT "):])
    assert result["error"].startswith(("FileNotFoundError", "OSError", "ArrowInvalid"))
