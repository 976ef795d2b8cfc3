"""The shape of gbrank's numba kernels (issue 27): settings travel as records.

A kernel takes at most ``MAX_ARGS`` positional arguments: the scalars one call fixes
travel as one or two records (``gbrank.lambdas._settings``: ``Settings``, ``Bounding``;
tuples of arrays for a prepared list), as XGBoost passes one ``KernelInputs`` struct.
Flags that choose a compiled specialisation may stay separate literal arguments.

A kernel is a function decorated with ``@njit`` / ``@jit`` (with or without options), or a
function defined inside a ``*_template`` function: the templates' products are compiled
with ``njit(...)(template(...))`` or ``_jit.jit_variant``.
"""

from __future__ import annotations

import ast
import pathlib

PKG = pathlib.Path(__file__).resolve().parents[1] / "gbrank"
MAX_ARGS = 12


def _is_jit(decorator: ast.expr) -> bool:
    node = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
    return name in ("njit", "jit")


def _kernels(tree: ast.Module):
    """(name, line, number of positional parameters) of every kernel of a module."""
    def visit(node, in_template):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if in_template or any(_is_jit(d) for d in child.decorator_list):
                    a = child.args
                    yield child.name, child.lineno, len(a.posonlyargs) + len(a.args) + (1 if a.vararg else 0)
                yield from visit(child, child.name.endswith("_template"))
            else:
                yield from visit(child, in_template)
    yield from visit(tree, False)


def kernel_arity() -> dict:
    """``"path:line name" -> positional parameters`` of every kernel in gbrank."""
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for name, line, n in _kernels(tree):
            out[f"{path.relative_to(PKG.parent)}:{line} {name}"] = n
    return out


def test_the_scan_finds_the_kernels():
    arity = kernel_arity()
    names = {k.split()[1] for k in arity}
    # decorated kernels and the products of templates alike
    assert {"list_gradients", "_pairs_linear", "_linear_loop", "list_metrics", "_epoch"} <= names
    assert len(arity) > 100


def test_no_kernel_takes_more_than_twelve_positional_arguments():
    wide = {k: n for k, n in kernel_arity().items() if n > MAX_ARGS}
    assert not wide, (f"kernels with more than {MAX_ARGS} positional arguments (pass settings as a record, "
                      f"gbrank/lambdas/_settings.py): {wide}")
