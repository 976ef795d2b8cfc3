"""Every compiled kernel of gbrank has the fast-math flags it declares, so that its values do
not depend on what a process (or numba's on-disk cache) compiled first.

numba compiles a callee with its caller's ``fastmath`` and ``error_model`` unless the callee
sets them, once per signature and process: a helper shared by a fast-math loop and a strict
one would otherwise take the flags of whichever compiled it first (``gbrank._jit.STRICT``).
The flags a kernel was compiled with are in its symbol's ABI tag (numba's ``Flags``).  The
checks run in a fresh process with an empty numba cache: a kernel loaded from the cache
brings its callees compiled inside it, so their own dispatchers would show nothing.
"""

from __future__ import annotations

import gc
import json
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

from gbrank.lambdas import LISTWISE_FAMILIES, LambdaObjective, ListwiseObjective, UnbiasedLambdaObjective

numba = pytest.importorskip("numba")
from numba.core.compiler import Flags  # noqa: E402
from numba.core.registry import CPUDispatcher  # noqa: E402


def _lists(n_lists=24, seed=0):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 30, n_lists)
    ptr = np.concatenate(([0], np.cumsum(sizes)))
    scores = rng.normal(size=ptr[-1])
    labels = rng.integers(0, 4, ptr[-1]).astype(float)
    for q in range(0, n_lists, 5):  # lists whose scores span > 700: the exp-per-pair loops
        scores[ptr[q]:ptr[q + 1]] *= 400.0
    positions = np.concatenate([np.arange(1, s + 1) for s in sizes])
    return scores, labels, ptr, positions


def _run_every_family():
    """Call every kind of kernel: the gradient variants and the general kernel (each form,
    bounding, the sigmoid table), the pair weightings and methods, unbiased, listwise."""
    scores, labels, ptr, positions = _lists()
    for metric in ("ndcg", "ap", "rr", "nrbp@0.9", "err"):
        settings = [{}, {"sigmoid_table": True}, {"score_normalization": True}, {"hessian": "xgboost", "sigma": 2.0}]
        if metric != "err":
            settings += [{"bounding": "minmax"}, {"bounding": "distribution"}]
        for kw in settings:
            LambdaObjective(metric, **kw).gradients(scores, labels, ptr)
    for kw in ({"weighting": "ndcg_loss2"}, {"weighting": "ndcg_loss2++"}, {"stochastic": 1},
               {"pair_method": "mean", "pairs_per_doc": 3}):
        LambdaObjective("ndcg", random_state=0, **kw).gradients(scores, labels, ptr)
    UnbiasedLambdaObjective("ndcg", positions=positions).gradients(scores, labels, ptr)
    for family in LISTWISE_FAMILIES:
        ListwiseObjective(family).gradients(scores, labels, ptr)


def _fast(cres) -> bool:
    """Whether the compiled kernel ``cres`` was compiled with any fast-math flag."""
    tags = [t for t in cres.fndesc.abi_tags if t]
    return any(re.search(r"fastmath=FastMathOptions\(\{.+\}\)", Flags.demangle(t)) for t in tags)


def _mismatches() -> tuple[int, list[str]]:
    """(overloads checked, those compiled with other fast-math flags than their kernel
    declares) of every numba kernel of gbrank compiled or loaded in this process."""
    checked, wrong = 0, []
    for d in gc.get_objects():
        if not isinstance(d, CPUDispatcher) or not (getattr(d.py_func, "__module__", "") or "").startswith("gbrank"):
            continue
        declared = bool(d.targetoptions.get("fastmath", False))
        for sig, cres in list(d.overloads.items()):
            checked += 1
            if _fast(cres) != declared:
                wrong.append(f"{d.py_func.__qualname__}{sig}: compiled {'with' if not declared else 'without'} "
                             f"fast math, declares {'it' if declared else 'none'}")
    return checked, sorted(wrong)


def _in_fresh_process(code: str, cache_dir) -> str:
    """Run ``code`` (with this module importable) in a new process whose numba cache is
    ``cache_dir``: empty, so every kernel compiles there and none is loaded (a kernel loaded
    from the cache brings its callees compiled inside it, and their own dispatchers stay
    empty)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir),
               PYTHONPATH=os.pathsep.join([str(pathlib.Path(__file__).parent), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=1500)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


@pytest.mark.slow
def test_every_compiled_kernel_has_the_fast_math_flags_it_declares(tmp_path):
    out = _in_fresh_process("import json, test_kernel_flags as t\n"
                            "t._run_every_family()\n"
                            "print(json.dumps(t._mismatches()))", tmp_path)
    checked, wrong = json.loads(out.strip().splitlines()[-1])
    assert checked > 50  # the workload compiled the kernels it meant to
    assert not wrong, "kernels whose flags were inherited from their first caller (set fastmath and " \
        "error_model on them: gbrank._jit.STRICT / FAST):\n" + "\n".join(wrong)


SHARED_HELPERS = """
import json
import numpy as np
from numba import njit
from gbrank.bounds import grid_interp
from gbrank.lambdas import _deltas, _kernels

@njit(fastmath=True)
def first_caller(d, table, aux, row):
    # compiles each shared helper first from a fast-math kernel, with the signatures the
    # gradient kernels call them with
    t = 0.0
    for x in d:
        rho, q = _kernels._rho(x, 1.0, table)
        t += rho + q
        t += _kernels.distribution_delta(abs(x), x > 0.0, row, 1.0, 0.5, 0.2)
        t += grid_interp(row, abs(x))
        t += _deltas.linear_delta(aux, 0, 1, 1.0, True) + _deltas.linear_delta(aux, 0, 1, 1.0, False)
    return t

first_caller(np.linspace(-3.0, 3.0, 7), False, np.ones((5, 2)), np.linspace(0.0, 1.0, 9))
import test_kernel_flags as t
print(json.dumps(t._mismatches()))
"""


def test_shared_helpers_keep_their_own_flags_under_a_fast_math_caller(tmp_path):
    """The helpers the fast-math loops and the strict ones share, compiled first from a
    fast-math kernel in a fresh process: each keeps the flags it declares."""
    checked, wrong = json.loads(_in_fresh_process(SHARED_HELPERS, tmp_path).strip().splitlines()[-1])
    assert checked >= 6  # _rho, distribution_delta, grid_interp and grid_cell, linear_delta twice
    assert not wrong, "\n".join(wrong)


def test_the_flag_check_sees_an_inherited_flag():
    """The check itself: a helper without flags, first compiled from a fast-math caller,
    carries that caller's fast math in its ABI tag."""
    from numba import njit

    @njit
    def helper(x, y):
        return x * y + 1.0

    @njit(fastmath=True)
    def caller(x):
        return helper(x, 2.0)

    caller(1.5)
    (cres,) = helper.overloads.values()
    assert _fast(cres) and not helper.targetoptions.get("fastmath", False)
    (own,) = caller.overloads.values()
    assert _fast(own)
