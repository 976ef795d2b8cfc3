"""Progress bars only where someone watches them; library messages on the "gbrank.*" loggers."""

from __future__ import annotations

import io
import logging

import pytest

import gbrank
from gbrank import _progress
from gbrank._progress import progress


def test_gbrank_logger_has_a_null_handler():
    assert any(isinstance(h, logging.NullHandler) for h in logging.getLogger("gbrank").handlers)


def test_no_bar_when_stderr_is_not_a_tty(capsys):
    # under pytest's capture stderr is not a terminal: even an asked-for bar stays silent
    items = list(progress(range(5), enabled=True, desc="epochs"))
    assert items == [0, 1, 2, 3, 4]
    assert capsys.readouterr().err == ""


def test_bar_on_a_terminal_only_when_enabled(monkeypatch):
    monkeypatch.setattr(_progress, "can_show", lambda: True)
    assert progress(range(2), enabled=False).disable
    assert not progress(range(2), enabled=True, file=io.StringIO()).disable


def test_manual_bar_keeps_tqdm_interface(capsys):
    bar = progress(total=3, desc="runs")
    bar.update()
    bar.set_postfix_str("x")
    bar.close()
    assert capsys.readouterr().err == ""


def test_torch_training_logs_epochs_and_draws_no_bar(caplog, capsys):
    pytest.importorskip("torch")
    import numpy as np

    rng = np.random.default_rng(0)
    cells = rng.choice(30 * 20, size=200, replace=False)
    pairs = np.column_stack([cells // 20, cells % 20])
    with caplog.at_level(logging.DEBUG, logger="gbrank"):
        gbrank.MFRanker(loss="lambda_ndcg", epochs=2, verbose=1, random_state=0).fit(pairs)
    epochs = [r for r in caplog.records if r.name == "gbrank.torch" and r.getMessage().startswith("epoch")]
    assert len(epochs) == 2
    assert "epochs" not in capsys.readouterr().err  # verbose=1, but stderr is not a terminal


def test_bench_progress_lines_go_to_the_bench_logger(caplog):
    import inspect

    import gbrank.bench.letor._bench as _letor
    import gbrank.bench.mf._bench as _mf

    # without a writer (the CLI passes its own print), run_letor and run_mf log at INFO
    for run in (_letor.run_letor, _mf.run_mf):
        assert inspect.signature(run).parameters["write"].default is None
    assert _letor.log is _mf.log is logging.getLogger("gbrank.bench")
    with caplog.at_level(logging.INFO, logger="gbrank"):
        _letor.log.info("gbrank bench letor: 2 runs to train")
    assert [r.getMessage() for r in caplog.records if r.name == "gbrank.bench"] == \
        ["gbrank bench letor: 2 runs to train"]
