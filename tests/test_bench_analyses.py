"""Named analyses (gbrank/bench/_analyses.py): a report runs them only when asked
(``--analyses``) or when its data preset asks; a user's own data gets none; an unknown name is
refused with the valid ones; the names run are recorded in config.json."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from gbrank.bench import LETOR_ANALYSES, MF_ANALYSES, Analysis
from gbrank.bench._analyses import choose_analyses
from gbrank.cli import main

from test_bench_letor import letor_folder  # noqa: F401, E402 (a fixture: two synthetic LETOR folds)


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(argv, out=out)
    return code, out.getvalue(), err.getvalue()


def test_choose_analyses_takes_the_asked_the_preset_or_none():
    registry = {"a": Analysis("a", "first", list), "b": Analysis("b", "second", list)}
    assert choose_analyses("b, a,b", registry) == ("b", "a")
    assert choose_analyses(["a", "b"], registry) == ("a", "b")
    assert choose_analyses(None, registry, ("a",)) == ("a",)
    assert choose_analyses(None, registry) == ()
    assert choose_analyses("none", registry, ("a",)) == ()
    with pytest.raises(ValueError, match=r"unknown analysis 'c'; choose among: a, b"):
        choose_analyses("a,c", registry)


def test_the_registries_name_the_paper_analyses():
    assert sorted(LETOR_ANALYSES) == ["findings", "paradigm"] and sorted(MF_ANALYSES) == ["paper"]
    assert all(a.name == name and a.description for r in (LETOR_ANALYSES, MF_ANALYSES) for name, a in r.items())


@pytest.mark.parametrize("bench, names", [("letor", LETOR_ANALYSES), ("mf", MF_ANALYSES)])
def test_help_lists_the_analyses(bench, names, capsys):
    with pytest.raises(SystemExit):
        main(["bench", bench, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--analyses NAMES" in text and all(f"{name}: " in text for name in names)


@pytest.mark.parametrize("bench, valid", [("letor", "findings, paradigm"), ("mf", "paper")])
def test_an_unknown_analysis_is_refused_with_the_valid_names(bench, valid, tmp_path):
    code, _, err = _run(["bench", bench, "--analyses", "findings,claims", "--out", str(tmp_path / "o")])
    assert code == 2 and f"unknown analysis {'claims' if bench == 'letor' else 'findings'!r}" in err, err
    assert f"choose among: {valid}" in err, err
    assert not (tmp_path / "o").exists()


def test_the_paper_analysis_needs_the_papers_tables(tmp_path):
    from test_bench_mf import _ratings

    data = _ratings(tmp_path / "ratings.csv")
    code, _, err = _run(["bench", "mf", "--data", str(data), "--analyses", "paper", "--out", str(tmp_path / "o")])
    assert code == 2 and "--analyses paper" in err and "paper-results" in err, err


def test_letor_presets_are_the_research_data_sets(tmp_path):
    from gbrank.bench.letor._plan import _is_preset

    assert _is_preset("mq2008") and not _is_preset("example") and not _is_preset(str(tmp_path))


def test_letor_writes_the_findings_only_when_asked(letor_folder, tmp_path):  # noqa: F811
    out = tmp_path / "out"
    argv = ["bench", "letor", "--data", str(letor_folder), "--folds", "1",
            "--contenders", "lightgbm:lambdarank,gbrank:ndcg", "--rounds", "4", "--patience", "2", "--threads", "1",
            "--out", str(out)]
    code, text, err = _run(argv)
    assert code == 0, err
    assert not (out / "findings.md").exists() and not (out / "findings.json").exists()
    assert json.loads((out / "config.json").read_text())["analyses"] == []
    code, text, err = _run([*argv, "--analyses", "findings,paradigm"])  # the runs are cached now
    assert code == 0, err
    assert "0 runs to train, 2 cached" in text
    assert "not every unbounded objective was run; skipped" in (out / "findings.md").read_text()
    assert (out / "findings.json").exists() and "findings.md" in text
    assert not (out / "paradigm.md").exists()  # asked, but no listwise objective ran: nothing to compare
    assert json.loads((out / "config.json").read_text())["analyses"] == ["findings", "paradigm"]
