"""Progress of gbrank's long loops (training epochs, bench runs): bars where someone watches, log lines elsewhere.

A bar is drawn only when it is asked for (``enabled``) *and* someone can watch it: stderr is a
terminal, or the code runs in a Jupyter kernel. In a log file, a CI job or a pipe a bar would
only flood the output with carriage-return lines, so it is off there whatever ``enabled`` says;
:class:`RunProgress` logs a line per finished run and a time-driven heartbeat there instead.
"""

from __future__ import annotations

import logging
import sys
import threading
import time


def _in_notebook() -> bool:
    """True inside a Jupyter (IPython kernel) session, where tqdm draws a widget."""
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        ip = shell.get_ipython()
    except AttributeError:
        return False
    return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"


def can_show() -> bool:
    """Whether a progress bar can be seen: stderr is a terminal, or a Jupyter notebook."""
    stream = sys.stderr
    try:
        tty = stream is not None and stream.isatty()
    except (AttributeError, ValueError):  # closed or replaced stream
        tty = False
    return tty or _in_notebook()


def progress(iterable=None, enabled: bool = True, **kwargs):
    """A ``tqdm`` bar over ``iterable`` (or a manual one with ``total=``), disabled unless
    ``enabled`` and a terminal or notebook can show it.

    A disabled bar costs nothing and keeps tqdm's interface (``update``, ``set_postfix``,
    ``close``), so callers never branch on it. Extra keyword arguments go to ``tqdm``.

    Examples
    --------
    >>> bar = progress(range(3), enabled=True, desc="epochs")  # under pytest: not a TTY
    >>> bar.disable, list(bar)
    (True, [0, 1, 2])
    """
    from tqdm.auto import tqdm

    return tqdm(iterable, disable=not (enabled and can_show()), **kwargs)


#: seconds between two heartbeat lines of :class:`RunProgress` when no bar is drawn (a test
#: lowers it, or passes ``heartbeat=``)
HEARTBEAT_SECONDS = 60.0


def _duration(seconds: float) -> str:
    """``"45 s"``, ``"12 min 5 s"``, ``"3 h 4 min"``."""
    seconds = max(0.0, float(seconds))
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, sec = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes} min {sec} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


class RunProgress:
    """Progress of a batch of runs, wherever the command's output goes.

    On a terminal (or in a notebook) a tqdm bar (:func:`progress`) with each finished run's
    line written above it.  Elsewhere (a log file, a pipe, CI), where no bar can be seen:
    one INFO line per finished run on ``logger``, and a heartbeat line with the runs done,
    the runs left and an estimate of the time remaining every ``heartbeat`` seconds, from a
    background thread, so that a log never stays silent longer than that even while one
    long run trains.  Both ``gbrank bench letor`` and ``gbrank bench mf`` report through it.

    Parameters
    ----------
    total : int
        Runs to do.
    label : str
        Start of every line, e.g. ``"gbrank bench mf"``.
    logger : logging.Logger, optional
        Where the lines go without a bar; default the ``gbrank.bench`` logger.
    heartbeat : float, optional
        Seconds between heartbeat lines; default :data:`HEARTBEAT_SECONDS` (60).  0: none.
    enabled : bool, default True
        Draw a bar when one can be seen (False: always log lines).

    Examples
    --------
    >>> import logging
    >>> with RunProgress(2, label="demo", heartbeat=0) as runs:  # under pytest: no terminal
    ...     runs.finished("first run: 3 epochs, 1.0 s")
    ...     runs.finished("second run: 2 epochs, 0.5 s")
    >>> runs.done, runs.bar.disable
    (2, True)
    """

    def __init__(self, total: int, *, label: str = "gbrank", logger: logging.Logger | None = None,
                 heartbeat: float | None = None, enabled: bool = True):
        if total < 0:
            raise ValueError(f"total must be a count of runs >= 0, got {total}")
        self.total, self.label, self.done = int(total), label, 0
        self.log = logger if logger is not None else logging.getLogger("gbrank.bench")
        self.interval = HEARTBEAT_SECONDS if heartbeat is None else float(heartbeat)
        self.bar = progress(total=self.total, enabled=enabled and self.total > 0, unit="run", desc="runs")
        self.start = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None
        if self.bar.disable and self.total > 0 and self.interval > 0:
            self._thread = threading.Thread(target=self._beat, name="gbrank-heartbeat", daemon=True)
            self._thread.start()

    def finished(self, line: str, n: int = 1) -> None:
        """Count ``n`` finished runs and report ``line`` (prefixed with ``run k of N:``)."""
        with self._lock:
            self.done += n
            text = f"{self.label}: run {self.done} of {self.total}: {line}"
        if self.bar.disable:
            self.log.info(text)
        else:
            self.bar.write(text, file=sys.stderr)
        self.bar.update(n)

    def status(self) -> str:
        """The heartbeat line: runs done and left, time elapsed, an estimate of the time left
        (the mean time per finished run so far, times the runs left)."""
        with self._lock:
            done = self.done
        elapsed = time.monotonic() - self.start
        left = self.total - done
        eta = (f"about {_duration(elapsed / done * left)} left" if done and left else
               "no run finished yet, no estimate of the time left" if left else "all done")
        return (f"{self.label}: {done} of {self.total} runs done, {left} to go, {_duration(elapsed)} elapsed, "
                f"{eta}")

    def _beat(self) -> None:
        while not self._stop.wait(self.interval):
            self.log.info(self.status())

    def close(self) -> None:
        """Stop the heartbeat and close the bar."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self.bar.close()

    def __enter__(self) -> "RunProgress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class log_to_stderr:
    """Context manager: INFO lines of the ``gbrank`` loggers printed to standard error.

    What the ``gbrank`` command sets up for its own run: a handler on the ``gbrank`` logger
    writing ``HH:MM:SS message`` lines to ``sys.stderr`` (as it is on entry) and the logger's
    level at ``level``; both undone on exit, so that calling ``gbrank.cli.main`` from Python
    leaves the caller's logging as it was.  The library itself only logs (its logger has a
    ``NullHandler``); an application configures logging its own way.
    """

    def __init__(self, level: int = logging.INFO):
        self.level = level
        self.handler = None
        self._saved = None

    def __enter__(self) -> logging.Handler:
        logger = logging.getLogger("gbrank")
        self.handler = logging.StreamHandler(sys.stderr)
        self.handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", datefmt="%H:%M:%S"))
        self.handler.setLevel(self.level)
        self._saved = logger.level
        if logger.getEffectiveLevel() > self.level:
            logger.setLevel(self.level)
        logger.addHandler(self.handler)
        return self.handler

    def __exit__(self, *exc) -> None:
        logger = logging.getLogger("gbrank")
        logger.removeHandler(self.handler)
        logger.setLevel(self._saved)
