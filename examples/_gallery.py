"""What every script of the examples gallery shares: where its figures go, how one is
saved, and its command line (``--quick`` for a run of a few seconds, ``--out`` for the
folder of the figures).  Run a script from anywhere: ``python examples/quick_start.py``
puts this folder on ``sys.path``, so ``from _gallery import ...`` finds this module."""

from __future__ import annotations

import argparse
import pathlib
from typing import Callable, Mapping

#: where docs/gallery.md shows the figures
GALLERY = pathlib.Path(__file__).resolve().parents[1] / "docs" / "gallery"
QUICK_HELP = "run in a few seconds (smaller settings)"


def save_figure(fig, out: pathlib.Path, name: str, dpi: int = 100) -> None:
    """Write ``fig`` to ``out / name``, close it, and say where it went."""
    import matplotlib.pyplot as plt

    fig.savefig(out / name, dpi=dpi)
    plt.close(fig)
    print(f"\nwrote {out / name}")


def run(main: Callable, doc: str, *, out: pathlib.Path = GALLERY, quick_help: str = QUICK_HELP,
        flags: Mapping[str, str] | None = None, argv=None) -> None:
    """The script's command line: ``main(quick=..., out=..., **flags)``; ``flags`` are extra
    on/off options (name -> help), passed to ``main`` as keywords."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=quick_help)
    for flag, text in (flags or {}).items():
        parser.add_argument(f"--{flag}", action="store_true", help=text)
    parser.add_argument("--out", type=pathlib.Path, default=out, help="folder of the figures")
    args = parser.parse_args(argv)
    main(quick=args.quick, out=args.out, **{flag: getattr(args, flag) for flag in (flags or {})})
