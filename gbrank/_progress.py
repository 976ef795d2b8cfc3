"""One progress-bar helper for every loop of gbrank that shows one (training epochs, bench runs).

A bar is drawn only when it is asked for (``enabled``) *and* someone can watch it: stderr is a
terminal, or the code runs in a Jupyter kernel. In a log file, a CI job or a pipe a bar would
only flood the output with carriage-return lines, so it is off there whatever ``enabled`` says.
"""

from __future__ import annotations

import sys


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
