"""The process pool of every ``gbrank bench`` command: runs in this process or in spawned
workers, each run claimed through the run store so that processes sharing an output folder
share the work."""

from __future__ import annotations

import functools
import os
from typing import Callable, Iterable, Iterator, Sequence


def thread_budget(threads: int) -> None:
    """Give this process ``threads`` threads; idle OpenMP threads sleep instead of spinning.

    torch and OpenMP read ``OMP_NUM_THREADS`` when they load, so it is set while they are not
    loaded (else ``torch.set_num_threads``).  numba is limited with ``numba.set_num_threads``
    once it is loaded, and its ``NUMBA_NUM_THREADS`` is never changed then: numba re-reads the
    environment at every compilation and refuses a value other than the size of a thread pool
    it has launched (seen on a 16-core machine: a worker whose pool held 1 thread failed its
    next compilation with "Cannot set NUMBA_NUM_THREADS to a different value")."""
    import sys

    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    else:
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(threads)
    if "numba" in sys.modules:
        import numba

        numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
    else:
        os.environ["NUMBA_NUM_THREADS"] = str(threads)


def map_unordered(fn: Callable, items: Sequence, *, jobs: int, threads: int | None = None) -> Iterator[tuple]:
    """Yield ``(item, fn(item))`` as each finishes: in this process when ``jobs`` is 1, else in
    ``jobs`` spawned worker processes (spawn: no fork of a process holding OpenMP or numba
    threads), each given ``threads`` threads (:func:`thread_budget`) when not None."""
    if jobs == 1 or not items:
        for item in items:
            yield item, fn(item)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    init = (thread_budget, (threads,)) if threads is not None else (None, ())
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                             initializer=init[0], initargs=init[1]) as pool:
        futures = {pool.submit(fn, item): item for item in items}
        for fut in as_completed(futures):
            yield futures[fut], fut.result()


def train_missing(tasks: Iterable, work: Callable, *, jobs: int, threads: int | None = None) -> Iterator[tuple]:
    """Run ``work(task, wait)`` for every task and yield ``(task, result)`` as each finishes.

    ``work`` claims its run from the run store (:meth:`RunStore.claim`) and returns None when
    ``wait`` is False and another process holds the run.  The first pass takes every run no
    other process holds; the second waits for the others (finished by then, or trained here
    when their process stopped), so two processes on one output folder split the runs."""
    held = []
    for task, result in map_unordered(functools.partial(work, wait=False), list(tasks), jobs=jobs, threads=threads):
        if result is None:
            held.append(task)
        else:
            yield task, result
    yield from map_unordered(functools.partial(work, wait=True), held, jobs=jobs, threads=threads)
