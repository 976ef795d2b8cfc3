"""The README's main job, end to end on the bundled data (few rounds)."""

import json

from gbrank.cli import main


def test_demo_writes_a_report(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path), "--rounds", "5"]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert "lightgbm/lambdarank" in summary["means"] and "lightgbm/gbrank:nrbp@0.95" in summary["means"]
    assert all(0 <= v <= 1 for means in summary["means"].values() for v in means.values())
    assert (tmp_path / "per_query.csv").read_text().count("\n") == 7 * 50 + 1
    assert "report written to" in capsys.readouterr().out


def test_demo_rejects_bad_rounds(capsys):
    assert main(["demo", "--rounds", "0"]) == 2
    assert "--rounds must be at least 1" in capsys.readouterr().err
