"""What the commands share: the ``--catalog`` option, usage errors, colour, JSON output."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]
else:
    Subparsers = Any

__all__ = [
    "Subparsers",
    "add_catalog_option",
    "bold",
    "print_json",
    "usage_error",
    "use_colour",
]


def add_catalog_option(parser: argparse.ArgumentParser) -> None:
    """``--catalog DIR``: an extra catalog directory (repeatable)."""
    parser.add_argument(
        "--catalog",
        action="append",
        default=[],
        metavar="DIR",
        help="an extra catalog directory (repeatable; also ERRHINTS_CATALOG_PATH)",
    )


def usage_error(parser: argparse.ArgumentParser, message: str) -> int:
    """Print the usage line and ``message`` like argparse does; return exit status 2."""
    parser.print_usage(sys.stderr)
    print(f"{parser.prog}: error: {message}", file=sys.stderr)
    return 2


def use_colour(stream: IO[str]) -> bool:
    """Whether to colour ``stream``: a terminal, and ``NO_COLOR`` unset."""
    return "NO_COLOR" not in os.environ and hasattr(stream, "isatty") and stream.isatty()


def bold(text: str, colour: bool) -> str:
    """``text`` in bold when ``colour``."""
    return f"\x1b[1m{text}\x1b[0m" if colour else text


def print_json(data: Any) -> None:
    """``data`` as indented JSON on stdout, non-ASCII kept."""
    json.dump(data, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
