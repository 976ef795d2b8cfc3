"""The layering of ../shared/STYLE.md: light top-level import, one-way dependencies."""

import ast
import pathlib
import subprocess
import sys

PKG = pathlib.Path(__file__).resolve().parents[1] / "gbrank"
HEAVY = ("lightgbm", "xgboost", "catboost", "torch", "matplotlib", "dask")


def test_import_gbrank_is_light():
    code = "import sys, gbrank; print(','.join(m for m in %r if m in sys.modules))" % (HEAVY,)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"import gbrank pulled in: {out.stdout.strip()}"


def _gbrank_imports(path: pathlib.Path) -> set[str]:
    """Sub-packages of gbrank that a module imports (absolute or relative)."""
    tree = ast.parse(path.read_text())
    rel_parts = path.relative_to(PKG).parts[:-1]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(rel_parts[: len(rel_parts) - node.level + 1])
                target = base + (node.module.split(".") if node.module else [])
            elif node.module and node.module.startswith("gbrank"):
                target = node.module.split(".")[1:]
            else:
                continue
            if target:
                found.add(target[0])
            else:  # "from .. import x"
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("gbrank."):
                    found.add(alias.name.split(".")[1])
    return found


# sub-package -> the gbrank sub-packages it may import (besides itself and _private modules)
ALLOWED = {
    "metrics": set(),
    "evaluation": {"metrics"},
    "datasets": set(),
    "bounds": {"metrics"},
    "lambdas": {"metrics", "bounds"},
    "backends": {"metrics", "evaluation"},
    "estimators": {"metrics", "evaluation", "lambdas", "backends"},
    "torch": {"metrics", "evaluation", "bounds"},
    "dask": {"metrics", "evaluation", "lambdas", "backends", "estimators"},
    "bench": {"metrics", "evaluation", "datasets", "bounds", "lambdas", "backends", "estimators", "torch"},
}


def test_only_the_backend_module_imports_its_library():
    for path in PKG.rglob("*.py"):
        text = path.read_text()
        rel = str(path.relative_to(PKG))
        for lib, homes in (("lightgbm", ("backends/_lightgbm.py", "dask/_lightgbm.py")),
                           ("xgboost", ("backends/_xgboost.py", "dask/_xgboost.py"))):
            if f"import {lib}" in text or f"from {lib}" in text:
                assert rel in homes, f"{rel} imports {lib}; only {homes} may"
        if "import torch" in text:
            assert rel.startswith("torch/"), f"{rel} imports torch; only gbrank/torch may"


# A bench sub-command's argument declarations (gbrank/bench/_<name>_cli.py, listed in
# gbrank.cli.BENCH_COMMANDS) belong to the command line: they may raise gbrank.cli.CommandError.
CLI_PARTS = {"bench": ("_cli.py",)}


def test_dependencies_flow_one_way():
    for sub, allowed in ALLOWED.items():
        for path in (PKG / sub).rglob("*.py"):
            used = {m for m in _gbrank_imports(path) if m != sub and not m.startswith("_")}
            if path.name.endswith(CLI_PARTS.get(sub, ())):
                used.discard("cli")
            assert used <= allowed, f"{path.relative_to(PKG)} imports {sorted(used - allowed)}"


def test_only_bench_imports_catboost():
    for path in PKG.rglob("*.py"):
        text = path.read_text()
        if "import catboost" in text or "from catboost" in text:
            assert str(path.relative_to(PKG)) == "bench/_catboost.py", f"{path.relative_to(PKG)} imports catboost"
