"""Kernel variants and the first-use compile notice, shared by every numba kernel family of
gbrank (the evaluator's, the swap deltas', the bounds', the LambdaRank gradients').

A numba function compiles every branch it holds, and with them every kernel those
branches call: a first call that needs one metric would otherwise compile all of them.
A *variant* is a copy of a kernel whose flags (closure constants) switch the branches it
does not need off; numba prunes a branch on a constant before typing, so its callees are
never compiled.  Its callees are bound as globals of the copy (``jit_variant``), so a
variant calls variants.  numba's on-disk cache keys a function by its bytecode and the
values of its closure cells: the outermost kernel of each variant (the one cached) holds
its flags in cells, its callees (compiled into it) are not cached on their own.
"""

from __future__ import annotations

import functools
import logging
import types as _pytypes
from collections import Counter, namedtuple

from numba import njit

_log = logging.getLogger("gbrank")

#: the fast-math flags of the vectorised loops: sums may be reordered, no inf/NaN assumptions
FAST_MATH = {"reassoc", "contract", "nsz", "arcp"}
#: numba options of a helper that a fast-math loop and a strict one both call.  numba
#: compiles a callee with its caller's ``fastmath`` and ``error_model`` unless the callee
#: sets them itself, and compiles each signature once per process (and keeps it in its
#: on-disk cache): a helper that leaves them unset takes the flags of whichever kernel
#: compiled it first, and its values (fast math reorders and fuses) then depend on what
#: the process ran before.  Each such helper sets them: ``STRICT``, or ``FAST`` for the
#: copy a fast-math loop calls (``tests/test_kernel_flags.py`` checks every compiled kernel)
STRICT = {"fastmath": False, "error_model": "numpy"}
FAST = {"fastmath": FAST_MATH, "error_model": "numpy"}
_CompileStats = namedtuple("_CompileStats", ("cache_path", "cache_hits", "cache_misses"))


def jit_variant(template, tag: str, options: dict, **callees):
    """``numba.njit(**options)`` of a copy of the plain function ``template`` whose globals
    ``callees`` (names of the kernels it calls) are replaced by the given kernel variants,
    named ``<qualname>__<tag>``.

    ``tag`` must name the variant's code uniquely (its key): compiled code names a function
    by its qualified name and a per-process counter, and a process that loads two cached
    kernels compiled elsewhere would mix up two variants of one name and counter.  Only a
    variant whose flags are closure cells of ``template`` may be cached: numba's cache key
    tells functions of one source line apart by their cell values only."""
    glb = dict(template.__globals__)
    glb.update(callees)
    fn = _pytypes.FunctionType(template.__code__, glb, template.__name__, template.__defaults__,
                               template.__closure__)
    fn.__qualname__ = f"{template.__qualname__}__{tag}"
    fn.__module__ = template.__module__
    fn.__doc__ = template.__doc__
    fn.__kwdefaults__ = template.__kwdefaults__
    return njit(**options)(fn)


class kernel_variants:
    """Decorator: ``build(key)`` called once per key and process, its kernels remembered;
    ``stats`` and ``signatures`` gather those of every variant built (numba's own
    ``Dispatcher.stats`` and ``.signatures``)."""

    def __init__(self, build):
        self._build = build
        self.variants = {}
        functools.update_wrapper(self, build)

    def __call__(self, *key):
        kernel = self.variants.get(key)
        if kernel is None:
            kernel = self.variants[key] = self._build(*key)
        return kernel

    @property
    def signatures(self) -> list:
        return [sig for k in self.variants.values() for sig in k.signatures]

    @property
    def stats(self):
        hits, misses = Counter(), Counter()
        path = None
        for k in self.variants.values():
            hits.update(k.stats.cache_hits)
            misses.update(k.stats.cache_misses)
            path = path or k.stats.cache_path
        return _CompileStats(path, hits, misses)


class KernelFamily:
    """A Python entry point ``call`` over the variants of ``variants`` (a
    ``kernel_variants``), with their gathered ``stats`` and ``signatures`` as a numba
    dispatcher has them."""

    def __init__(self, call, variants):
        self._call = call
        self.variants = variants
        functools.update_wrapper(self, call)

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    @property
    def signatures(self) -> list:
        return self.variants.signatures

    @property
    def stats(self):
        return self.variants.stats


_NOTICED = set()


def compile_notice(kernel, family: str, args: tuple, seconds: float | None = None) -> bool:
    """Log one INFO line (logger ``"gbrank"``) when ``kernel`` is about to compile for
    ``args``: neither compiled in this process nor in numba's on-disk cache.  Said once
    per process and kernel ``family`` (e.g. "the nDCG LambdaRank kernels"), with the
    compile time ``seconds`` measured for it; returns whether it was said.  Cheap: one
    look at the cache's index file, and only before a variant's first call."""
    if family in _NOTICED or kernel.overloads:
        return False
    try:
        sig = tuple(kernel.typeof_pyval(a) for a in args)
        cache = kernel._cache
        cached = cache._index_key(sig, kernel.targetctx.codegen()) in cache._cache_file._load_index()
    except Exception:  # a numba without these internals: say nothing rather than guess
        return False
    if cached:
        return False
    _NOTICED.add(family)
    _log.info("gbrank: compiling %s (first use; cached for later runs%s)", family,
              f", ~{seconds:.0f} s" if seconds else "")
    return True
