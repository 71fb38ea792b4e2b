"""``errhints explain``: find errors in logs and pasted text, and explain each one.

Files are read as bytes and streamed through the scanner, so memory is bounded by the longest
traceback, not by the file. On a terminal, a progress line shows for big files.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator, Sequence
from typing import IO, Any, BinaryIO

from .._core.render import Verbosity

__all__ = ["explain_files"]

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


def _findings(names: Sequence[str], needles: tuple[str, ...]) -> Iterator[tuple[str, Any]]:
    from .._facts.scan import scan_stream

    for name in names:
        raw, size = _open(name)
        try:
            reader: Any = raw
            if size >= PROGRESS_MIN_BYTES and sys.stderr.isatty():
                reader = _Progress(raw, size, name, sys.stderr)
            for finding in scan_stream(reader, needles=needles):
                yield name, finding
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
) -> int:
    """Scan ``names`` ('-' is stdin) and print each error found with its explanation."""
    from .._core.match import explain_facts
    from .._core.render import render_note
    from .._core.state import get_index

    for name in names:
        if name != "-" and not os.path.isfile(name):
            print(f"errhints explain: {name}: no such file", file=sys.stderr)
            return 2
    index = get_index(catalog_paths)
    explained = 0
    records: list[dict[str, Any]] = []
    for name, finding in _findings(names, index.log_needles):
        matches = explain_facts(finding.facts, index)
        if matches:
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
        json.dump({"findings": records}, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    elif not explained:
        print("errhints: nothing explained", file=sys.stderr)
    return 0 if explained else 1
