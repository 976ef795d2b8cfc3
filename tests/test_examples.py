"""Every script of the examples gallery runs with ``--quick`` and writes the figures it names.

Each example in ``examples/`` has ``main(quick: bool)``, a ``--quick`` flag, ``--out`` for
its figure folder and a module-level ``FIGURES`` list (read here without importing the
script).  A new example is picked up by the glob; one whose optional library is missing is
skipped, naming it.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

EXAMPLES = sorted(p for p in (pathlib.Path(__file__).resolve().parents[1] / "examples").glob("*.py")
                  if not p.name.startswith("_"))
# what an import (or a use) in an example needs installed
NEEDS = {"gbrank.torch": "torch", "torch": "torch", "gbrank.dask": "dask", "dask": "dask",
         "distributed": "distributed", "lightgbm": "lightgbm", "xgboost": "xgboost", "matplotlib": "matplotlib",
         "GBRanker": "lightgbm"}


def _module_facts(path: pathlib.Path) -> tuple[list[str], set[str]]:
    """The example's FIGURES and the libraries it needs."""
    source = path.read_text()
    tree = ast.parse(source)
    figures = None
    imported = set()
    for node in tree.body:
        targets = [node.target] if isinstance(node, ast.AnnAssign) else getattr(node, "targets", [])
        if any(isinstance(t, ast.Name) and t.id == "FIGURES" for t in targets):
            figures = ast.literal_eval(node.value)
        if isinstance(node, ast.Import):
            imported |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
    if figures is None:
        raise AssertionError(f"{path.name} has no module-level FIGURES list (use [] when it draws nothing)")
    needs = {lib for name, lib in NEEDS.items()
             if any(m == name or m.startswith(name + ".") for m in imported) or name in source}
    return figures, needs


def test_the_gallery_has_one_example_per_job():
    assert len(EXAMPLES) >= 12, [p.name for p in EXAMPLES]
    gallery = (EXAMPLES[0].parents[1] / "docs" / "gallery.md").read_text()
    missing = [p.name for p in EXAMPLES if p.name not in gallery]
    assert not missing, f"docs/gallery.md does not list {missing}"


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs_quick_and_writes_its_figures(path, tmp_path):
    figures, needs = _module_facts(path)
    absent = sorted(lib for lib in needs if importlib.util.find_spec(lib) is None)
    if absent:
        pytest.skip(f"{path.name} needs {', '.join(absent)}, not installed")
    source = path.read_text()
    assert ast.get_docstring(ast.parse(source)), f"{path.name} needs a module docstring saying what job it does"
    assert "def main(quick" in source, f"{path.name} needs main(quick: bool)"
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONWARNINGS": "ignore"}
    done = subprocess.run([sys.executable, str(path), "--quick", "--out", str(tmp_path)], cwd=path.parents[1],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{path.name} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert done.stdout.strip(), f"{path.name} printed nothing for the user to look at"
    for name in figures:
        figure = tmp_path / name
        assert figure.is_file() and figure.stat().st_size > 1000, f"{path.name} did not write {name}"
