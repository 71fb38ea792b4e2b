"""``errhints explain``: find errors in logs and pasted text, and explain each one.

Files are read as bytes and streamed through the scanner, so memory is bounded by the longest
traceback, not by the file. On a terminal, a progress line shows for big files.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterator, Sequence
from typing import IO, TYPE_CHECKING, Any, BinaryIO

from .._config import VERBOSITIES
from .common import Subparsers, add_catalog_option, print_json, use_colour

if TYPE_CHECKING:
    from .._config import Verbosity
    from .._core.pipeline import Explained

__all__ = ["add_parser", "explain_files"]

#: Files larger than this get a progress line on a terminal.
PROGRESS_MIN_BYTES = 32 * 1024 * 1024


class _Progress:
    """A byte-counting reader that redraws one stderr line at most a few times a second."""

    def __init__(self, raw: BinaryIO, total: int, label: str, stream: IO[str]) -> None:
        self.raw, self.total, self.label, self.stream = raw, total, label, stream
        self.done = 0
        self.last = 0.0

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        self.done += len(data)
        now = time.monotonic()
        if now - self.last > 0.2 or not data:
            self.last = now
            pct = 100 * self.done / self.total if self.total else 100
            self.stream.write(
                f"\r{self.label}: {self.done >> 20} / {self.total >> 20} MiB ({pct:.0f}%)"
            )
            if not data:
                self.stream.write("\r" + " " * 60 + "\r")
            self.stream.flush()
        return data


def _open(name: str) -> tuple[BinaryIO, int]:
    if name == "-":
        return sys.stdin.buffer, 0
    handle = open(name, "rb")  # noqa: SIM115 - closed by the caller
    return handle, os.fstat(handle.fileno()).st_size


def _explained(
    names: Sequence[str], index: Any, warnings: bool = False
) -> Iterator[tuple[str, Explained]]:
    from .._core.pipeline import explain_stream

    for name in names:
        raw, size = _open(name)
        try:
            reader: Any = raw
            if size >= PROGRESS_MIN_BYTES and sys.stderr.isatty():
                reader = _Progress(raw, size, name, sys.stderr)
            for explained in explain_stream(reader, index, warnings=warnings):
                yield name, explained
        finally:
            if raw is not sys.stdin.buffer:
                raw.close()


def explain_files(
    names: Sequence[str],
    *,
    as_json: bool,
    verbosity: Verbosity,
    catalog_paths: tuple[str, ...] = (),
    colour: bool = False,
    warnings: bool = False,
) -> int:
    """Scan ``names`` ('-' is stdin) and print each error found with its explanation.

    A failure no entry explains may still be identified by the site index (where and when
    it is raised); those are counted apart. ``warnings`` identifies logged warnings too.
    """
    from .._core.render import render_note
    from .._core.state import get_index

    for name in names:
        if name != "-" and not os.path.isfile(name):
            print(f"errhints explain: {name}: no such file", file=sys.stderr)
            return 2
    index = get_index(catalog_paths)
    explained = identified = 0
    records: list[dict[str, Any]] = []
    for name, result in _explained(names, index, warnings):
        finding, matches = result.finding, result.matches
        if matches and matches[0].confidence == "identified":
            identified += 1
        elif matches:
            explained += 1
        facts = finding.facts
        if as_json:
            records.append(
                {
                    "file": name,
                    "line": finding.line,
                    "end_line": finding.end_line,
                    "kind": finding.kind,
                    "exception": {"type": facts.type_name, "message": facts.message},
                    "matches": [m.to_dict() for m in matches],
                }
            )
            continue
        where = f"{name}:{finding.line}" if name != "-" else f"line {finding.line}"
        first_line = facts.message.splitlines()[0] if facts.message else ""
        headline = f"{facts.type_name}: {first_line}" if facts.type_name else first_line
        if len(headline) > 160:
            headline = headline[:157] + "..."
        if colour:
            where = f"\x1b[1m{where}\x1b[0m"
        print(f"{where}: {headline}")
        if matches:
            print(render_note(matches, verbosity))
        else:
            print("  (not in the catalog)")
        print()
    if as_json:
        print_json({"findings": records})
    elif identified:
        print(f"errhints: explained {explained}, identified {identified}", file=sys.stderr)
    elif not explained:
        print("errhints: nothing explained", file=sys.stderr)
    return 0 if explained or identified else 1


def _cmd_explain(args: argparse.Namespace) -> int:
    return explain_files(
        args.files or ["-"],
        as_json=args.json,
        verbosity=args.verbosity,
        catalog_paths=tuple(args.catalog),
        colour=use_colour(sys.stdout),
        warnings=args.warnings,
    )


def add_parser(sub: Subparsers) -> None:
    """``errhints explain [FILE...] [--json] [--verbosity short|full]``."""
    p = sub.add_parser("explain", help="explain the errors in logs, tracebacks or error bodies")
    add_catalog_option(p)
    p.add_argument("files", nargs="*", metavar="FILE", help="files to read; '-' or none: stdin")
    p.add_argument("--json", action="store_true", help="print findings as JSON")
    p.add_argument("--verbosity", choices=VERBOSITIES, default="short")
    p.add_argument(
        "--warnings",
        action="store_true",
        help="also identify logged warnings that no entry explains (off by default)",
    )
    p.set_defaults(func=_cmd_explain)
