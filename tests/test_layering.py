"""The layering of ../shared/STYLE.md, in one test file with one allow-list.

Every import statement of every module of gbrank counts, including those inside
functions (a lazy import is still a dependency):

- sub-package A imports sub-package B only if ``ALLOWED[A]`` lists B;
- no module imports a private module (``_x``) of another sub-package: across packages only
  public names, re-exported by the package's ``__init__``;
- the graph of imports between gbrank modules has no cycle, also when a package counts as
  its ``__init__`` (a submodule takes ``x`` from the sibling module that defines it, not
  from its own package by ``from . import x`` or ``from gbrank.pkg import x``);
- each heavy library is imported only by its home modules, and ``import gbrank`` loads none
  of them.
"""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import pytest

PKG = pathlib.Path(__file__).resolve().parents[1] / "gbrank"

# sub-package (or top-level module) -> the gbrank sub-packages it may import.  Top-level
# private modules (``gbrank/_validation.py``: the input contract shared by every entry
# point) may be imported by all, and import nothing of gbrank themselves.
ALLOWED = {
    "metrics": set(),
    "evaluation": {"metrics"},
    "datasets": set(),
    "interactions": set(),
    "bounds": {"metrics"},
    "lambdas": {"metrics", "bounds"},
    "backends": {"metrics", "evaluation", "lambdas", "torch"},
    "estimators": {"metrics", "evaluation", "lambdas", "backends"},
    "torch": {"metrics", "evaluation", "bounds", "interactions"},
    "dask": {"metrics", "evaluation", "lambdas", "backends", "estimators"},
    "bench": {"metrics", "evaluation", "datasets", "interactions", "bounds", "lambdas", "backends",
              "estimators", "torch"},
    "cli": {"metrics", "evaluation", "datasets", "bench"},
    "__init__": {"metrics", "evaluation"},
}

# heavy library -> the modules (paths under gbrank/, a trailing "/" for a whole folder) that may import it
LIBRARY_HOMES = {
    "lightgbm": ("backends/_lightgbm.py", "dask/_lightgbm.py"),
    "xgboost": ("backends/_xgboost.py", "dask/_xgboost.py"),
    "catboost": ("backends/_catboost.py",),
    "torch": ("torch/",),
    "matplotlib": ("bench/",),
    "dask": ("dask/",),
    "distributed": ("dask/",),
}


def _modules() -> dict[str, pathlib.Path]:
    """Dotted module name -> file, for every module of gbrank."""
    out = {}
    for path in PKG.rglob("*.py"):
        parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: pathlib.Path, *, through_init: bool = False) -> set[str]:
    """The gbrank modules that module ``name`` imports anywhere in its file (a name imported
    from a package counts as its submodule when one has that name; with ``through_init``, as
    the package's ``__init__`` too, which ``from package import x`` depends on)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
            found.update(t for t in targets if t == "gbrank" or t.startswith("gbrank."))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            elif node.module and (node.module == "gbrank" or node.module.startswith("gbrank.")):
                module = node.module
            else:
                continue
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                found.add(sub if sub in MODULES else module)
                if through_init:
                    found.add(module)
    found.discard(name)  # ``from . import _x`` in an __init__ names the package itself
    return {m for m in found if m in MODULES}


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}
# the same graph where ``from package import x`` is an edge to the package's ``__init__``
INIT_GRAPH = {name: _imports(name, path, through_init=True) for name, path in MODULES.items()}

# The one documented exception (docs/objectives.md, "Adapters"): a gbrank objective passed
# straight to lightgbm.train / LGBMRanker / xgboost.train delegates its ``__call__`` (and
# CatBoost's ``calc_ders_range``) to gbrank.backends, the home of the calling conventions, by
# an import inside those two methods; it runs at call time, when both packages are loaded.
LAZY_EXCEPTIONS = {("gbrank.lambdas._objective", "gbrank.backends")}
for _graph in (GRAPH, INIT_GRAPH):
    for _module, _target in LAZY_EXCEPTIONS:
        _graph[_module].discard(_target)


def test_each_lazy_exception_is_still_needed():
    for module, target in LAZY_EXCEPTIONS:
        assert target in _imports(module, MODULES[module]), f"{module} no longer imports {target}: drop the exception"


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_dependencies_flow_one_way():
    problems = []
    for module, targets in GRAPH.items():
        layer = _layer(module)
        for target in targets:
            other = _layer(target)
            if other == layer or (other.startswith("_") and other != "__init__"):
                continue
            if other not in ALLOWED.get(layer, set()):
                problems.append(f"{module} imports {target}")
    assert problems == [], "imports against the layering:\n" + "\n".join(sorted(problems))


def test_every_subpackage_is_in_the_allow_list():
    layers = {_layer(m) for m in MODULES}
    missing = {x for x in layers if not x.startswith("_") or x == "__init__"} - set(ALLOWED)
    assert not missing, f"add {sorted(missing)} to ALLOWED with what they may import"


def test_shared_private_modules_import_nothing_of_gbrank():
    for module, targets in GRAPH.items():
        if _layer(module).startswith("_") and _layer(module) != "__init__":
            assert not targets, f"{module} imports {sorted(targets)}; it is shared by every layer"


def test_no_private_module_of_another_subpackage_is_imported():
    problems = []
    for module, targets in GRAPH.items():
        for target in targets:
            parts = target.split(".")
            if _layer(target) != _layer(module) and any(p.startswith("_") for p in parts[2:]):
                problems.append(f"{module} imports {target}")
    assert problems == [], "import the public name from the package instead:\n" + "\n".join(sorted(problems))


def _cycles(graph: dict[str, set[str]]) -> list[str]:
    """One ``a -> b -> a`` line per back edge of a depth-first walk of ``graph``."""
    state: dict[str, int] = {}
    cycles = []

    def visit(node, stack):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return cycles


def test_no_import_cycle():
    # a package importing its own submodules is the normal re-export, not a cycle, unless the
    # submodule imports the package back
    cycles = _cycles(GRAPH)
    assert cycles == [], "import cycles:\n" + "\n".join(cycles)


def test_no_import_cycle_through_a_package_init():
    # ``from . import x`` or ``from gbrank.pkg import x`` in a submodule of ``gbrank.pkg`` runs
    # (or finds half-run) the ``__init__`` that imports the submodule: import ``x`` from the
    # sibling that defines it (``from ._x import name``; a module as a namespace:
    # ``import gbrank.pkg._x as x``)
    cycles = _cycles(INIT_GRAPH)
    assert cycles == [], "import cycles through a package __init__:\n" + "\n".join(cycles)


def _library_imports(path: pathlib.Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("library", sorted(LIBRARY_HOMES))
def test_each_heavy_library_is_imported_only_by_its_homes(library):
    homes = LIBRARY_HOMES[library]
    for path in PKG.rglob("*.py"):
        rel = str(path.relative_to(PKG))
        if library in _library_imports(path):
            assert any(rel == h or (h.endswith("/") and rel.startswith(h)) for h in homes), \
                f"{rel} imports {library}; only {homes} may"


def test_import_gbrank_is_light():
    code = "import sys, gbrank; print(','.join(m for m in %r if m in sys.modules))" % (tuple(LIBRARY_HOMES),)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"import gbrank pulled in: {out.stdout.strip()}"


def test_importing_gbrank_torch_is_enough_to_use_it_and_gbrank_stays_light():
    pytest.importorskip("torch")
    code = ("import sys, gbrank; assert 'torch' not in sys.modules; "
            "import gbrank.torch as gt; assert 'torch' in sys.modules; print(sorted(gt.__all__)[:3])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


# the rooms of gbrank.bench: one folder per benchmark beside a shared core (../shared/STYLE.md,
# "Rooms that show the jobs").  A room may use the core; the core uses no room; no room uses
# another.  The package ``gbrank.bench`` itself is the facade that names the rooms' public
# functions (lazily, by strings), so it is neither core nor room here.
BENCH_ROOMS = ("letor", "mf")
BENCH_MOST_MODULES = 8  # modules directly in gbrank/bench/, __init__.py counted


def _bench_room(module: str) -> str | None:
    """``letor``/``mf`` for a module of a room, ``core`` for the rest of gbrank.bench, else None."""
    parts = module.split(".")
    if parts[:2] != ["gbrank", "bench"] or len(parts) == 2:
        return None
    return parts[2] if parts[2] in BENCH_ROOMS else "core"


def _room_problems(graph: dict[str, set[str]]) -> list[str]:
    problems = []
    for module, targets in graph.items():
        room = _bench_room(module)
        for target in targets:
            other = _bench_room(target)
            if room is None or other is None or other == room or other == "core":
                continue
            problems.append(f"{module} ({room}) imports {target} ({other})")
    return sorted(problems)


def test_bench_rooms_do_not_import_each_other_and_the_core_imports_no_room():
    problems = _room_problems(GRAPH)
    assert problems == [], "gbrank.bench rooms mixed:\n" + "\n".join(problems)


def test_the_room_check_catches_a_crossing():
    # the check itself, on a graph with one bad edge of each kind
    graph = {name: set(targets) for name, targets in GRAPH.items()}
    graph["gbrank.bench.letor._bench"].add("gbrank.bench.mf._plan")
    graph["gbrank.bench._report"].add("gbrank.bench.letor._plan")
    assert _room_problems(graph) == ["gbrank.bench._report (core) imports gbrank.bench.letor._plan (letor)",
                                     "gbrank.bench.letor._bench (letor) imports gbrank.bench.mf._plan (mf)"]


def test_bench_has_its_rooms_and_a_small_core():
    for room in BENCH_ROOMS:
        assert (PKG / "bench" / room / "__init__.py").is_file(), f"gbrank/bench/{room}/ is not a package"
    flat = sorted(p.name for p in (PKG / "bench").glob("*.py"))
    assert len(flat) <= BENCH_MOST_MODULES, (f"{len(flat)} modules directly in gbrank/bench/ ({', '.join(flat)}); "
                                             "put a benchmark's modules in its room")
