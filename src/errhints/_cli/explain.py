"""``errhints explain``: find errors in logs and pasted text, and explain each one.

Files are read as bytes and streamed through the scanner, so memory is bounded by the longest
traceback, not by the file. On a terminal, a progress line shows for big files.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
import time
from collections.abc import Iterator, Sequence
from typing import IO, TYPE_CHECKING, Any, BinaryIO

from .._config import VERBOSITIES
from .common import Subparsers, add_catalog_option, print_json, use_colour

if TYPE_CHECKING:
    from .._config import Verbosity
    from .._core.pipeline import Explained
    from .._facts.model import ErrorFacts

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


class _Unreadable(Exception):
    """A file argument that cannot be read; the message names it."""


def _open(name: str) -> tuple[BinaryIO, int]:
    """The named input as bytes (``-`` is stdin); FIFOs, ``/dev/stdin`` and process
    substitutions are read as streams."""
    if name == "-":
        return sys.stdin.buffer, 0
    if os.path.isdir(name):
        raise _Unreadable(f"{name}: is a directory (give the log files in it)")
    try:
        handle = open(name, "rb")  # noqa: SIM115 - closed by the caller
    except FileNotFoundError:
        raise _Unreadable(f"{name}: no such file") from None
    except OSError as exc:
        raise _Unreadable(f"{name}: cannot read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(handle.fileno())
    except OSError:
        return handle, 0
    return handle, info.st_size if stat.S_ISREG(info.st_mode) else 0


class _Peeked:
    """A binary reader whose first bytes were already read (to sniff the encoding). Reads
    return what is there (``read1``), so a pipe's lines are scanned as they arrive
    (``tail -f server.log | errhints explain -``)."""

    def __init__(self, head: bytes, raw: Any) -> None:
        self.head, self.raw = head, raw
        self._read = getattr(raw, "read1", raw.read)

    def read(self, size: int = -1) -> bytes:
        if self.head:
            cut = len(self.head) if size is None or size < 0 else size
            head, self.head = self.head[:cut], self.head[cut:]
            return head
        data: bytes = self._read(size)
        return data


class _Utf16:
    """UTF-16 bytes (a PowerShell redirect) as text, decoded chunk by chunk."""

    def __init__(self, raw: _Peeked) -> None:
        import codecs

        self.raw = raw
        self.decoder = codecs.getincrementaldecoder("utf-16")(errors="replace")

    def read(self, size: int = -1) -> str:
        while True:
            data = self.raw.read(size)
            text: str = self.decoder.decode(data, final=not data)
            if text or not data:
                return text


def _decoded(raw: Any) -> Any:
    """The stream to scan: gzip is unpacked, UTF-16 (with its byte-order mark) decoded;
    anything else is read as UTF-8 bytes by the scanner."""
    head = raw.read(4) if not hasattr(raw, "read1") else raw.read1(4)
    while head and len(head) < 2:
        more = raw.read(1)
        if not more:
            break
        head += more
    reader = _Peeked(head, raw)
    if head[:2] == b"\x1f\x8b":
        import gzip

        return gzip.GzipFile(mode="rb", fileobj=reader)  # type: ignore[call-overload]
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return _Utf16(reader)
    return reader


def _explained(
    names: Sequence[str], index: Any, failed: list[str], warnings: bool = False
) -> Iterator[tuple[str, Explained]]:
    from .._core.pipeline import explain_stream

    for name in names:
        try:
            raw, size = _open(name)
        except _Unreadable as exc:
            print(f"errhints explain: {exc}", file=sys.stderr)
            failed.append(name)
            continue
        try:
            reader: Any = raw
            if size >= PROGRESS_MIN_BYTES and sys.stderr.isatty():
                reader = _Progress(raw, size, name, sys.stderr)
            for explained in explain_stream(_decoded(reader), index, warnings=warnings):
                yield name, explained
        except (OSError, EOFError) as exc:  # a gzip cut short, a device that fails mid-way
            print(f"errhints explain: {name}: cannot read: {exc}", file=sys.stderr)
            failed.append(name)
        finally:
            if raw is not sys.stdin.buffer:
                raw.close()


def _cut(facts: ErrorFacts) -> bool:
    """A traceback whose frames were pasted but not the line that says what was raised."""
    return bool(facts.frames) and not facts.type_name and not facts.message


def _lines_text(lines: list[int], count: int) -> str:
    shown = ", ".join(str(n) for n in lines)
    return shown + (", ..." if count > len(lines) else "")


def explain_files(
    names: Sequence[str],
    *,
    as_json: bool,
    verbosity: Verbosity,
    catalog_paths: tuple[str, ...] = (),
    colour: bool = False,
    warnings: bool = False,
    every: bool = False,
) -> int:
    """Scan ``names`` ('-' is stdin) and print each error found with its explanation.

    The same failure seen again (another rank, another request) is printed once, with a
    count and its lines at the end; ``every`` prints each one.
    """
    from .._core.group import Groups
    from .._core.match import known_at
    from .._core.render import render_note
    from .._core.state import get_index

    index = get_index(catalog_paths)
    explained = 0
    failed: list[str] = []
    groups = Groups()
    records: list[dict[str, Any]] = []
    by_group: dict[int, dict[str, Any]] = {}
    for name, result in _explained(names, index, failed, warnings):
        finding, matches = result.finding, result.matches
        group = None if every else groups.add(name, finding, matches)
        if group is None and not every:
            continue  # a repeat: counted in its group
        if matches:
            explained += 1
        facts = finding.facts
        cut = _cut(facts)
        known = []
        if cut and not matches:
            known = [e.id for e in known_at(index, facts.frames[-1], facts.last_source)]
        if as_json:
            record = {
                "file": name,
                "line": finding.line,
                "end_line": finding.end_line,
                "kind": finding.kind,
                "exception": {"type": facts.type_name, "message": facts.message},
                "matches": [m.to_dict() for m in matches],
            }
            if cut:
                record["cut"] = True
            if known:
                record["known_here"] = known
            if group is not None:
                by_group[id(group)] = record
            records.append(record)
            continue
        where = f"{name}:{finding.line}" if name != "-" else f"line {finding.line}"
        first_line = facts.message.splitlines()[0] if facts.message else ""
        headline = f"{facts.type_name}: {first_line}" if facts.type_name else first_line
        if cut:
            last = facts.frames[-1]
            shown = last.path or last.filename
            headline = f"a traceback cut before its error line (last frame: {shown}, line "
            headline += f"{last.line}, in {last.function})"
        if len(headline) > 160:
            headline = headline[:157] + "..."
        if colour:
            where = f"\x1b[1m{where}\x1b[0m"
        print(f"{where}: {headline}")
        if matches:
            print(render_note(matches, verbosity))
        elif cut:
            print("  (nothing to match: paste the lines after the last frame, down to the error")
            print("   line that ends the traceback)")
            if known:
                print(f"  failures the catalog knows in {facts.frames[-1].function}:")
                for entry_id in known:
                    print(f"    {entry_id} (errhints show {entry_id})")
        else:
            print("  (not in the catalog)")
        print(flush=True)
    repeated = groups.repeated()
    if as_json:
        for group in repeated:
            first = by_group.get(id(group))
            if first is not None:
                first["count"] = group.count
                first["lines"] = list(group.lines)
        print_json({"findings": records})
    else:
        for group in repeated:
            facts = group.first.facts
            what = group.matches[0].id if group.matches else (facts.type_name or "the failure")
            print(
                f"{what}: seen {group.count} times, at lines "
                f"{_lines_text(group.lines, group.count)} (--all prints each)",
                flush=True,
            )
        if not explained and not failed:
            print("errhints: nothing explained", file=sys.stderr)
    if failed:
        return 2
    return 0 if explained else 1


def _cmd_explain(args: argparse.Namespace) -> int:
    if not args.files and sys.stdin.isatty():
        print(
            "errhints explain: reading standard input (paste a log, then Ctrl-D; "
            "or give files: errhints explain server.log)",
            file=sys.stderr,
        )
    return explain_files(
        args.files or ["-"],
        as_json=args.json,
        verbosity=args.verbosity,
        catalog_paths=tuple(args.catalog),
        colour=use_colour(sys.stdout),
        warnings=args.warnings,
        every=args.all,
    )


def add_parser(sub: Subparsers) -> None:
    """``errhints explain [FILE...] [--json] [--verbosity short|full]``."""
    p = sub.add_parser("explain", help="explain the errors in logs, tracebacks or error bodies")
    add_catalog_option(p)
    p.add_argument("files", nargs="*", metavar="FILE", help="files to read; '-' or none: stdin")
    p.add_argument("--json", action="store_true", help="print findings as JSON")
    p.add_argument("--all", action="store_true", help="print every repeat of the same failure too")
    p.add_argument("--verbosity", choices=VERBOSITIES, default="short")
    p.add_argument(
        "--warnings",
        action="store_true",
        help="also identify logged warnings that no entry explains (off by default)",
    )
    p.set_defaults(func=_cmd_explain)
