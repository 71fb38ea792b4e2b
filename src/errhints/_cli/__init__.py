"""The ``errhints`` command: parse the command line and hand it to one command family.

Each family is a module of this package with ``add_parser(subparsers)``: :mod:`.explain`
(logs and pastes), :mod:`.browse` (``list``, ``show``, ``search``), :mod:`.run`,
:mod:`.doctor` and :mod:`.catalog` (``check``, ``verify``, ``index``; maintainers). Commands
never import each other; what they share lives in :mod:`.common` or below this layer.
Exit status: 0 when something was explained (or the command succeeded), 1 when nothing was,
2 on a usage error. ``python -m errhints`` is the same program.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .._version import __version__
from . import browse, catalog, doctor, explain, run

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="errhints",
        description="Explain SGLang and LlamaFactory failures.",
    )
    parser.add_argument("--version", action="version", version=f"errhints {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    explain.add_parser(sub)
    browse.add_parser(sub)
    catalog.add_parser(sub)
    run.add_parser(sub)
    doctor.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = _parser()
    # Not ``parse_args`` with a required COMMAND: argparse would then answer an unknown flag
    # (``errhints --frobnicate``) with "COMMAND required" instead of naming the flag.
    args, extra = parser.parse_known_args(argv)
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if getattr(args, "func", None) is None:
        parser.error("a COMMAND is required (explain, list, show, search, run, doctor, catalog)")
    try:
        result: int = args.func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    return result


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
