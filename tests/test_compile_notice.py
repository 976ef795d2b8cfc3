"""The first call of an objective whose kernels numba's on-disk cache does not hold says so in
one log line (it compiles for seconds); a cached or already compiled one says nothing."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

SCRIPT = """
import logging
import numpy as np
from gbrank.lambdas import LambdaObjective

logging.basicConfig(level=logging.INFO, format="LOG %(name)s %(levelname)s %(message)s")
y = np.array([1.0, 0.0, 0.0, 0.0, 1.0, 0.0])
s = np.array([0.1, 0.4, 0.3, 0.2, 0.0, 0.5])
for _ in range(2):  # the second call: compiled in this process, nothing to say
    LambdaObjective("rr").gradients(s, y, [0, 4, 6])
for _ in range(2):  # a list spanning > 700: its own kernel, announced when first met
    LambdaObjective("rr").gradients(1e4 * s, y, [0, 4, 6])
"""


def _run(cache_dir) -> list[str]:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir))
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [line for line in (proc.stdout + proc.stderr).splitlines() if line.startswith("LOG gbrank")]


@pytest.mark.slow
def test_first_compilation_is_announced_once_and_a_cached_one_not_at_all(tmp_path):
    first = _run(tmp_path)  # an empty cache: the RR kernels compile
    assert len(first) == 2, first
    assert first[0].startswith("LOG gbrank INFO gbrank: compiling the RR LambdaRank kernels (first use; cached for "
                               "later runs, ~")
    assert first[1].startswith("LOG gbrank INFO gbrank: compiling the RR LambdaRank kernels, with an exp per pair, "
                               "for the sigmoid table or lists whose scores span >= 700 / sigma (first use; ")
    assert _run(tmp_path) == []  # the same cache, now holding them: loaded, no word


def test_notice_is_said_only_for_an_uncached_variant(caplog):
    import logging

    import numpy as np

    from gbrank.lambdas import LambdaObjective
    from gbrank.lambdas import _kernels
    from gbrank import _jit

    y = np.array([1.0, 0.0, 2.0])
    LambdaObjective("ndcg").gradients([0.3, 0.2, 0.1], y, [0, 3])  # compiled (or loaded) now
    kernel = next(iter(_kernels.gradient_kernel.variants.values()))
    family = "a test family"
    with caplog.at_level(logging.INFO, logger="gbrank"):
        said = _jit.compile_notice(kernel, family, (), 4.0)  # compiled in this process: nothing to say
    assert not said and not caplog.records


def test_notice_for_a_kernel_the_cache_lacks_is_said_once_per_family(caplog):
    import logging
    import random

    from numba import njit

    from gbrank import _jit

    def make(v):
        def shifted(x):
            return x + shift

        shift = v
        return shifted

    kernel = njit(cache=True)(make(random.random()))  # a cell value no cache holds; never called, never compiled
    with caplog.at_level(logging.INFO, logger="gbrank"):
        assert _jit.compile_notice(kernel, "the test kernels", (1.0,), 2.0)
        assert not _jit.compile_notice(kernel, "the test kernels", (1.0,), 2.0)  # said once per family
    assert caplog.messages == ["gbrank: compiling the test kernels (first use; cached for later runs, ~2 s)"]
    assert not kernel.overloads
