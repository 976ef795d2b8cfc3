"""docs/results.md is generated: it equals what ``scripts/results_page.py`` makes from its
template and the committed result sets, every table on it is a generated block, and
``--check`` names what differs when the page is edited by hand or a report changes."""

from __future__ import annotations

import importlib.util
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def page_script():
    spec = importlib.util.spec_from_file_location("results_page", ROOT / "scripts" / "results_page.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generated(page_script):
    return page_script.render()


def test_the_committed_page_is_the_generated_one(page_script, generated):
    committed = (ROOT / "docs" / "results.md").read_text()
    assert committed == generated, (
        "docs/results.md differs from scripts/results_page.py's output in: "
        f"{'; '.join(page_script.differences(committed))}; run `python scripts/results_page.py --write`")


def test_every_table_on_the_page_is_generated(page_script, generated):
    outside = page_script.BLOCK.sub("", generated)
    typed = [line for line in outside.splitlines() if line.lstrip().startswith("|")]
    assert not typed, f"table rows typed outside a generated block: {typed[:3]}"
    names = [m.group(1) for m in page_script.BLOCK.finditer(generated)]
    assert len(names) == len(set(names)), "a table name is used twice"
    assert set(names) == set(page_script.TABLES), "a table of TABLES is not on the page (or the reverse)"


def test_no_field_is_left_unfilled(generated):
    assert "{{" not in generated and "}}" not in generated


def test_check_names_the_table_and_the_prose_line_that_differ(page_script, generated):
    assert page_script.differences(generated) == []
    name = "letor-mq2008-tuned"
    block = next(m for m in page_script.BLOCK.finditer(generated) if m.group(1) == name)
    row = block.group(2).splitlines()[2]
    edited = generated.replace(row, re.sub(r"0\.\d{4}", "0.9999", row, count=1), 1)
    assert page_script.differences(edited) == [f"table {name}"]
    edited = generated.replace("One section per question", "A section per question", 1)
    found = page_script.differences(edited)
    assert len(found) == 1 and found[0].startswith("prose: 'A section per question")


def test_the_numbers_come_from_the_reports(page_script, generated):
    """Two figures of the page against the reports they come from, read here independently."""
    import json

    summary = json.loads((ROOT / "docs/results/bench-letor-mq2008-tuned/summary.json").read_text())
    mean = summary["contenders"]["lightgbm:lambdarank"]["ndcg@10"]["mean"]
    assert f"| lightgbm:lambdarank (reference) | {mean:.4f} |" in generated
    cells = json.loads((ROOT / "docs/results/bench-mf-citeulike-paper-3folds-3000ep/paper_comparison.json")
                       .read_text())["cells"]
    within = sum(c["status"] == "ok" for c in cells)
    assert f"**{within} of the {len(cells)} cells are within" in generated


def test_a_missing_report_is_named(page_script, monkeypatch, tmp_path):
    monkeypatch.setattr(page_script, "RESULTS", tmp_path)
    page_script.load.cache_clear()
    try:
        with pytest.raises(FileNotFoundError, match="unbiased.json is missing"):
            page_script.load("unbiased.json")
    finally:
        page_script.load.cache_clear()
