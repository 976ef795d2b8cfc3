"""``gbrank bench``: progress in logs, compile time apart from training time, and reports a
reader trusts (tiny ``bench letor --quick`` and ``bench mf --quick`` runs with stderr piped)."""

import contextlib
import io
import json
import logging
import re
import threading
import time

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import dump_svmlight_file

from gbrank import _progress
from gbrank._progress import RunProgress
from gbrank.bench._pool import map_unordered
from gbrank.cli import main
from gbrank.datasets import make_letor

pytest.importorskip("lightgbm")
pytest.importorskip("matplotlib")

#: a Python object's repr in a report: a dict, a list of numbers or strings, a numpy scalar
RAW = re.compile(r"\{'|\['|\[\d|np\.(float|int)|numpy\.|array\(")
#: a count of one with a plural noun ("1 gains", "1 losses", "1 runs"...)
PLURAL_SLIP = re.compile(r"(?<![\d.,@])\b1 (gains|losses|wins|comparisons|queries|users|items|documents|runs|"
                         r"pairs|cells|folds|splits|configurations|contenders|losses)\b")


def _run(argv, heartbeat=0.005):
    """``main(argv)`` with stdout and stderr captured as a pipe would (no terminal) and the
    heartbeat every ``heartbeat`` seconds; returns (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stderr(err):
        mp.setattr(_progress, "HEARTBEAT_SECONDS", heartbeat)
        code = main(argv, out=out)
    return code, out.getvalue(), err.getvalue()


# ---------------------------------------------------------------------------------------
# the heartbeat


def _slow(seconds):
    time.sleep(seconds)
    return seconds


def test_heartbeat_speaks_while_a_slow_job_runs(caplog):
    with caplog.at_level(logging.INFO, logger="gbrank"):
        with RunProgress(3, label="test", heartbeat=0.05) as shown:
            for job, took in map_unordered(_slow, [0.35, 0.01, 0.01], jobs=1):
                shown.finished(f"job {job}: {took:.2f} s")
    lines = [r.getMessage() for r in caplog.records if r.name == "gbrank.bench"]
    beats = [x for x in lines if "runs done" in x]
    # the first job sleeps 0.35 s: the timer speaks several times before it finishes
    assert sum(x.startswith("test: 0 of 3 runs done, 3 to go") for x in beats) >= 3, lines
    assert "no run finished yet" in beats[0]
    assert [x for x in lines if "job" in x] == ["test: run 1 of 3: job 0.35: 0.35 s",
                                               "test: run 2 of 3: job 0.01: 0.01 s",
                                               "test: run 3 of 3: job 0.01: 0.01 s"]
    assert not any(t.name == "gbrank-heartbeat" for t in threading.enumerate())  # stopped on exit


def test_heartbeat_estimates_the_time_left():
    shown = RunProgress(4, label="x", heartbeat=0)
    shown.start -= 30.0  # 30 s ago
    shown.finished("a")
    text = shown.status()
    shown.close()
    assert text.startswith("x: 1 of 4 runs done, 3 to go, 30 s elapsed, about 1 min 30 s left"), text


def test_default_interval_is_the_module_constant(monkeypatch):
    monkeypatch.setattr(_progress, "HEARTBEAT_SECONDS", 7.5)
    shown = RunProgress(1)
    assert shown.interval == 7.5 and shown._thread is not None
    shown.close()
    assert _progress.HEARTBEAT_SECONDS == 7.5 and RunProgress(0).interval == 7.5  # nothing to do: no thread
    with pytest.raises(ValueError, match="total must be a count of runs"):
        RunProgress(-1)


def test_on_a_terminal_the_bar_shows_and_no_log_line(monkeypatch, caplog, capsys):
    monkeypatch.setattr(_progress, "can_show", lambda: True)
    with caplog.at_level(logging.INFO, logger="gbrank"):
        with RunProgress(1, label="t", heartbeat=0.01) as shown:
            assert not shown.bar.disable and shown._thread is None  # the bar tells the time left itself
            shown.finished("one")
    assert not [r for r in caplog.records if r.name == "gbrank.bench"]
    assert "t: run 1 of 1: one" in capsys.readouterr().err


def test_the_cli_handler_is_removed_after_the_command():
    before = list(logging.getLogger("gbrank").handlers), logging.getLogger("gbrank").level
    with _progress.log_to_stderr() as handler:
        assert handler in logging.getLogger("gbrank").handlers
        assert logging.getLogger("gbrank").getEffectiveLevel() <= logging.INFO
    assert (list(logging.getLogger("gbrank").handlers), logging.getLogger("gbrank").level) == before


# ---------------------------------------------------------------------------------------
# bench letor


@pytest.fixture(scope="module")
def letor_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("letor")
    (root / "Fold1").mkdir()
    for i, (split, n) in enumerate({"train": 30, "vali": 10, "test": 12}.items()):
        X, y, qid = make_letor(n_queries=n, n_features=8, random_state=i)
        dump_svmlight_file(X, y, str(root / "Fold1" / f"{split}.txt"), query_id=qid + 100 * i, zero_based=False)
    out = tmp_path_factory.mktemp("letor_out")
    code, text, err = _run(["bench", "letor", "--quick", "--data", str(root), "--out", str(out), "--threads", "1",
                            "--contenders", "lightgbm:lambdarank,gbrank:ndcg,gbrank:nrbp@0.95+minmax",
                            "--rounds", "5", "--patience", "2", "--analyses", "findings"])
    assert code == 0, err
    return out, text, err


def test_bench_letor_logs_every_run_and_a_heartbeat_when_piped(letor_run):
    out, text, err = letor_run
    runs = re.findall(r"gbrank bench letor: run (\d) of 3: Fold1 (\S+): best round \d+ of \d+, vali \d\.\d{4}, "
                      r"\d+\.\d s training", err)
    assert sorted(int(k) for k, _ in runs) == [1, 2, 3], err
    assert {c for _, c in runs} == {"lightgbm:lambdarank", "gbrank:ndcg", "gbrank:nrbp@0.95+minmax"}
    assert re.search(r"gbrank bench letor: \d of 3 runs done, \d to go, .* elapsed", err), err
    assert "\r" not in err  # no bar in a pipe
    assert "3 runs to train" in text and "report written to" in text  # first and last lines: the command's output


def test_bench_letor_keeps_warm_up_apart_from_training(letor_run):
    out, _, _ = letor_run
    runs = json.loads((out / "config.json").read_text())["runs"]
    assert all(r["compile_seconds"] >= 0 and r["seconds"] > 0 for r in runs)
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["seconds"]) == {r["contender"] for r in runs}
    for r in runs:
        assert summary["seconds"][r["contender"]] == {"training": pytest.approx(r["seconds"]),
                                                      "compile": pytest.approx(r["compile_seconds"])}
    md = (out / "summary.md").read_text()
    assert ("| contender | training | best round per fold | training seconds (sum) | "
            "compile/warm-up seconds (sum) |") in md
    assert "| contender | training seconds | compile/warm-up seconds |" in md


def test_warm_up_is_timed_apart_and_once_per_process(monkeypatch):
    import gbrank.bench.letor._run as _letor_run
    from gbrank.bench.letor._plan import REGISTRY, prepare_letor

    plan = prepare_letor(data="example", quick=True, contenders=["gbrank:ap"], threads=1, out_dir=None)
    fold = plan.folds[0]
    real = _letor_run.warm_up

    def slow_first_use(contender, settings, threads):  # a cold numba cache: the first use is slow
        first = (contender.library, contender.objective) not in {k[:2] for k in _letor_run._WARMED}
        if first:
            time.sleep(1.0)
        return real(contender, settings, threads) + (1.0 if first else 0.0)

    monkeypatch.setattr(_letor_run, "_WARMED", {})
    monkeypatch.setattr(_letor_run, "warm_up", slow_first_use)
    _, first = _letor_run.train_one(REGISTRY["gbrank:ap"], fold, plan.settings, 1)
    _, second = _letor_run.train_one(REGISTRY["gbrank:ap"], fold, plan.settings, 1)
    assert first["compile_seconds"] >= 1.0 and second["compile_seconds"] == 0.0
    assert first["seconds"] < 1.0 + second["seconds"]  # the second spent in the warm-up is not training
    assert len(_letor_run._WARMED) == 1


def test_letor_findings_have_a_title_and_no_rows_that_did_not_run(letor_run):
    out, _, _ = letor_run
    md = (out / "findings.md").read_text()
    assert md.startswith("# Findings") and "not run" not in md


def test_letor_findings_leave_out_what_did_not_run_and_count_right(tmp_path):
    from gbrank.bench.letor._findings import EVAL, write_findings

    rng = np.random.default_rng(0)
    names = [f"gbrank:{m}" for m in ("ndcg", "ap", "rr", "nrbp@0.8", "nrbp@0.9", "nrbp@0.95")]
    names.append("gbrank:nrbp@0.95+minmax")
    base = rng.uniform(0.2, 0.6, size=(80, len(EVAL)))
    rows = []
    for i, name in enumerate(names):
        values = base + rng.normal(scale=0.01, size=base.shape) + (0.1 if name.endswith("+minmax") else 0.0)
        frame = pd.DataFrame(values, columns=EVAL)
        frame.insert(0, "qid", np.arange(80))
        frame.insert(0, "split", "Fold1")
        frame.insert(0, "contender", name)
        frame["n_items"], frame["n_relevant"] = 10, 2
        rows.append(frame)
    write_findings(tmp_path, pd.concat(rows, ignore_index=True))
    md = (tmp_path / "findings.md").read_text()
    assert md.startswith("# Findings: three claims tested on this benchmark\n")
    assert "not run" not in md and "gbrank:nrbp@0.8+minmax" not in md
    assert sum(line.startswith("| gbrank:nrbp@0.95+minmax |") for line in md.splitlines()) == 1
    # one bounded objective: one comparison on its own nRBP@p, a significant gain
    assert "on the optimised nRBP@p, 1 significant gain and 0 losses of 1 comparison;" in md
    assert not PLURAL_SLIP.search(md), PLURAL_SLIP.search(md)
    assert "XGBoost: not every unbounded objective was run; skipped" in md


# ---------------------------------------------------------------------------------------
# bench mf


def _ratings(path, n_users=30, n_items=110, seed=0):
    """Low-rank synthetic ratings: each user's 32 best items rated 5, 8 others rated 2; one
    more user, ``heavy``, rates 60 items 5: enough negatives left at NSR 1, not at NSR 2."""
    rng = np.random.default_rng(seed)
    U, V = rng.normal(size=(n_users, 3)), rng.normal(size=(n_items, 3))
    rows = []
    for u in range(n_users):
        order = np.argsort(-(U[u] @ V.T + 0.5 * rng.normal(size=n_items)))
        rows += [(f"u{u}", 1000 + i, 5.0) for i in order[:32]]
        rows += [(f"u{u}", 1000 + i, 2.0) for i in rng.choice(order[32:], 8, replace=False)]
    rows += [("heavy", 1000 + i, 5.0) for i in rng.choice(n_items, 60, replace=False)]
    path.write_text("user,item,rating\n" + "".join(f"{u},{i},{r}\n" for u, i, r in rows))
    return path


@pytest.fixture(scope="module")
def mf_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("mf")
    data = _ratings(base / "ratings.csv")
    out = base / "out"
    code, text, err = _run(["bench", "mf", "--quick", "--data", str(data), "--out", str(out), "--nsr", "1,2",
                            "--losses", "listwise_ndcg", "--baseline", "listwise_ndcg", "--baselines", "popularity",
                            "--epochs", "2", "--threads", "1", "--drop-infeasible-users"])
    assert code == 0, err
    return out, text, err


def test_bench_mf_logs_every_run_and_a_heartbeat_when_piped(mf_run):
    _, text, err = mf_run
    runs = re.findall(r"gbrank bench mf: run (\d) of 4: (\S+)(?: lr [\d.]+)? nsr(\d)-seed0: best epoch \d+ of \d+.*?, "
                      r"\d+\.\d s training, \d+\.\d s evaluation", err)
    assert sorted(int(k) for k, _, _ in runs) == [1, 2, 3, 4], err
    assert {(loss, nsr) for _, loss, nsr in runs} == {("listwise_ndcg", "1"), ("listwise_ndcg", "2"),
                                                     ("popularity", "1"), ("popularity", "2")}
    assert "best validation ndcg" in err
    assert re.search(r"gbrank bench mf: \d of 4 runs done, \d to go, .* elapsed", err), err
    assert "\r" not in err
    assert "4 runs, 0 cached, 4 to train" in text and "reports written to" in text


def test_bench_mf_records_warm_up_apart(mf_run):
    out, _, _ = mf_run
    runs = json.loads((out / "config.json").read_text())["runs"]
    assert all("compile_seconds" in r and r["compile_seconds"] >= 0 for r in runs)
    summary = json.loads((out / "full" / "summary.json").read_text())
    assert summary["unit"] == "user"
    assert summary["seconds"]["listwise_ndcg"]["training"] == pytest.approx(
        sum(r["train_seconds"] for r in runs if r["loss"] == "listwise_ndcg"))
    md = (out / "summary.md").read_text()
    assert "| loss | best epoch | epochs run | at budget | train s | eval s | compile/warm-up s |" in md


def test_mf_header_counts_are_the_table_counts(mf_run):
    out, _, _ = mf_run
    md = (out / "summary.md").read_text()
    head = md.split("## Each loss")[0]
    # "heavy" is short of negatives at NSR 2 only: 31 users at NSR 1, 30 at NSR 2
    assert "- users: 31 with at least 25 positives (rating >= 4) kept, 0 with fewer left out" in head
    assert "- users left out where they are short of negatives (--drop-infeasible-users): nsr2-seed0: 1" in head
    counts = dict(re.findall(r"(nsr\d-seed0): (\d+)", head.split("per (NSR, split): ")[1]))
    pq = pd.read_csv(out / "full" / "per_query.csv.gz")
    table = pq[pq["contender"] == "listwise_ndcg"].groupby("split")["qid"].nunique().to_dict()
    assert {k: int(v) for k, v in counts.items()} == table == {"nsr1-seed0": 31, "nsr2-seed0": 30}
    full = (out / "full" / "summary.md").read_text()
    users_column = re.search(r"\| listwise_ndcg \(baseline\) \| (\d+) \|", full).group(1)
    assert int(users_column) == sum(table.values())


def test_mf_reports_hold_no_raw_python_objects_and_speak_of_users(mf_run):
    out, _, _ = mf_run
    for path in [out / "summary.md", *(out / p / "summary.md" for p in ("full", "sampled", "corrected"))]:
        text = path.read_text()
        assert not RAW.search(text), (path, RAW.search(text))
        assert "quer" not in text.lower().replace("per_query", ""), path
        assert "docum" not in text.lower(), path
        assert not PLURAL_SLIP.search(text), (path, PLURAL_SLIP.search(text))
    assert "| contender | users |" in (out / "full" / "summary.md").read_text()
    md = (out / "summary.md").read_text()
    assert "\n## Data and settings\n" in md and "- NSR (sampled negatives per positive): 1, 2" in md


def test_letor_reports_hold_no_raw_python_objects(letor_run):
    out, _, _ = letor_run
    for name in ("summary.md", "findings.md", "effects.md"):
        text = (out / name).read_text()
        assert not RAW.search(text), (name, RAW.search(text))
        assert not PLURAL_SLIP.search(text), (name, PLURAL_SLIP.search(text))


# ---------------------------------------------------------------------------------------
# plots


def _texts(fig):
    from matplotlib.text import Text

    fig.canvas.draw()
    return [t for t in fig.findobj(Text) if t.get_text().strip() and t.get_visible()]


def _overlap(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_protocols_plot_names_every_loss_and_nsr(mf_run, tmp_path):
    from gbrank.bench.mf._report import protocols_plot
    from gbrank.bench.mf._plan import METRICS, prepare_mf

    out, _, _ = mf_run
    plan = prepare_mf(data=str(out.parent / "ratings.csv"), nsr="1,2", losses=["listwise_ndcg,lambda_ndcg"],
                      baseline="listwise_ndcg", baselines="popularity", out=str(tmp_path), quick=True,
                      drop_infeasible_users=True)
    rng = np.random.default_rng(0)
    table = pd.DataFrame([{"loss": loss, "nsr": n, "protocol": p, **{m: rng.uniform() for m in METRICS}}
                          for loss in plan.contenders() for n in plan.nsr for p in ("full", "sampled", "corrected")])
    fig = protocols_plot(plan, table, tmp_path / "protocols.png")
    (legend,) = fig.legends
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels == [*plan.contenders(), "NSR 1", "NSR 2"]
    assert "loss" in legend.get_title().get_text() and "NSR" in legend.get_title().get_text()
    assert all(t.get_fontsize() >= 7 for t in _texts(fig))
    boxes = [ax.get_window_extent() for ax in fig.axes]
    assert not any(_overlap(legend.get_window_extent(), b) for b in boxes)
    assert (tmp_path / "protocols.png").stat().st_size > 1000


def test_report_plots_say_what_each_mark_is_and_use_the_unit(tmp_path):
    from gbrank.bench import _plots
    from gbrank.bench._report import UNITS, summarise

    rng = np.random.default_rng(1)
    names = ["a-rather-long-loss-name", "b", "c"]
    rows = [{"contender": c, "split": "s", "qid": q, "n_items": 20, "n_relevant": 1 + q % 7,
             **{m: rng.uniform() for m in ("ndcg@10", "ap", "rr", "nrbp@0.95", "ndcg@1", "ndcg@2")}}
            for c in names for q in range(40)]
    pq = pd.DataFrame(rows)
    summary = summarise(pq, baseline="b", metrics=["ndcg@10", "ap", "rr", "nrbp@0.95"], conventions={})
    means = _plots.metric_means(summary, tmp_path / "m.png", "t")
    labels = [t.get_text() for t in means.legends[0].get_texts()]
    assert "mean of a contender" in labels and "mean of the baseline b" in labels
    assert any("confidence interval" in x for x in labels)
    ticks = [t for t in means.axes[0].get_yticklabels() if t.get_text()]
    assert all(t.get_fontsize() >= 7 for t in _texts(means))
    extents = [t.get_window_extent() for t in ticks]
    assert not any(_overlap(a, b) for i, a in enumerate(extents) for b in extents[i + 1:])
    user = UNITS["user"]
    diff = _plots.diff_vs_relevant(pq, summary, tmp_path / "d.png", names, "t", user)
    assert "relevant items of the user" in diff.axes[0].get_xlabel()
    assert "users" in diff.get_suptitle() and "quer" not in diff.get_suptitle()
    assert [t.get_text() for t in diff.legends[0].get_texts()] == ["a-rather-long-loss-name", "c"]
    cdf = _plots.cdfs(pq, summary, tmp_path / "c.png", names, "t", user)
    assert cdf.axes[0].get_ylabel() == "fraction of users ≤ x" and "per-user" in cdf.axes[0].get_xlabel()
    assert all(t.get_fontsize() >= 7 for t in _texts(diff) + _texts(cdf))
    assert _plots.cdfs(pq, summary, tmp_path / "q.png", names, "t").axes[0].get_ylabel() == "fraction of queries ≤ x"
