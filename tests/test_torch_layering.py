"""Only gbrank.torch imports torch, and it depends on nothing of gbrank but the metrics,
the evaluator and the shared input checks."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

PKG = pathlib.Path(__file__).resolve().parents[1] / "gbrank"


def _imports(path: pathlib.Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_only_the_torch_subpackage_imports_torch():
    outside = [p.relative_to(PKG) for p in PKG.rglob("*.py")
               if "torch" in _imports(p) and p.relative_to(PKG).parts[0] != "torch"]
    assert outside == []


def test_torch_subpackage_depends_on_metrics_evaluation_and_bounds_only():
    allowed = {"metrics", "evaluation", "bounds", "_validation"}
    for path in (PKG / "torch").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 2:  # from ..x import y
                assert node.module.split(".")[0] in allowed, f"{path.name} imports gbrank.{node.module}"
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.startswith("gbrank"):
                assert node.module.split(".")[1] in allowed, f"{path.name} imports {node.module}"


def test_importing_gbrank_torch_is_enough_to_use_it_and_gbrank_stays_light():
    code = ("import sys, gbrank; assert 'torch' not in sys.modules; "
            "import gbrank.torch as gt; assert 'torch' in sys.modules; print(sorted(gt.__all__)[:3])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
