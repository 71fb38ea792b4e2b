"""The ``errhints`` command: explain logs, browse the catalog, verify it, run commands with hints.

Exit status: 0 when something was explained (or the command succeeded), 1 when nothing was,
2 on a usage error. ``python -m errhints`` is the same program.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import IO, Any

from .._version import __version__

__all__ = ["main"]


def _use_colour(stream: IO[str]) -> bool:
    return "NO_COLOR" not in os.environ and hasattr(stream, "isatty") and stream.isatty()


def _bold(text: str, colour: bool) -> str:
    return f"\x1b[1m{text}\x1b[0m" if colour else text


def _catalog(paths: Sequence[str]) -> Any:
    from .._core.state import get_index

    return get_index(tuple(paths)).catalog


def cmd_list(args: argparse.Namespace) -> int:
    entries = [e for e in _catalog(args.catalog) if args.package in (None, e.package)]
    entries.sort(key=lambda e: e.id)
    if args.json:
        json.dump([e.to_dict() for e in entries], sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    width = max((len(e.id) for e in entries), default=0)
    for entry in entries:
        print(f"{entry.id:<{width}}  {entry.title}")
    print(f"{len(entries)} entries", file=sys.stderr)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from .._core.render import render_entry

    catalog = _catalog(args.catalog)
    entry = catalog.get(args.id)
    if entry is None:
        close = [e.id for e in catalog if args.id in e.id][:5]
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        print(f"errhints: no entry {args.id!r}.{hint}", file=sys.stderr)
        return 1
    if args.json:
        json.dump(entry.to_dict(), sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print(render_entry(entry))
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    from rapidfuzz import fuzz, process, utils

    entries = list(_catalog(args.catalog))
    texts = [
        " ".join([e.id.replace("-", " "), e.title, e.template.skeleton, e.meaning, e.origin or ""])
        for e in entries
    ]
    query = " ".join(args.words)
    results = process.extract(
        query,
        texts,
        scorer=fuzz.token_set_ratio,
        processor=utils.default_process,
        limit=args.limit,
        score_cutoff=60,
    )
    if not results:
        print(f"errhints: no entry matches {query!r}", file=sys.stderr)
        return 1
    for _text, score, i in results:
        print(f"{entries[i].id}  {entries[i].title}  ({score:.0f})")
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    from .explain import explain_files

    return explain_files(
        args.files or ["-"],
        as_json=args.json,
        verbosity=args.verbosity,
        catalog_paths=tuple(args.catalog),
        colour=_use_colour(sys.stdout),
    )


def cmd_catalog(args: argparse.Namespace) -> int:
    from .._maintain.verify import main as verify_main

    return verify_main(args.rest)


def cmd_run(args: argparse.Namespace) -> int:
    from .run import run_command

    return run_command(args.cmd, verbosity=args.verbosity, catalog_dirs=args.catalog)


def cmd_doctor(args: argparse.Namespace) -> int:
    from .doctor import main as doctor_main

    return doctor_main(as_json=args.json, catalog_paths=tuple(args.catalog))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="errhints",
        description="Explain SGLang and LlamaFactory failures.",
    )
    parser.add_argument("--version", action="version", version=f"errhints {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    def add(name: str, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument(
            "--catalog",
            action="append",
            default=[],
            metavar="DIR",
            help="an extra catalog directory (repeatable; also ERRHINTS_CATALOG_PATH)",
        )
        return p

    p = add("explain", "explain the errors in logs, tracebacks or error bodies")
    p.add_argument("files", nargs="*", metavar="FILE", help="files to read; '-' or none: stdin")
    p.add_argument("--json", action="store_true", help="print findings as JSON")
    p.add_argument("--verbosity", choices=("short", "full"), default="short")
    p.set_defaults(func=cmd_explain)

    p = add("list", "list the catalog's entries")
    p.add_argument("--package", help="only entries of this package (sglang, llamafactory)")
    p.add_argument("--json", action="store_true", help="print entries as JSON")
    p.set_defaults(func=cmd_list)

    p = add("show", "print one entry in full")
    p.add_argument("id", help="an entry id, e.g. sglang.prefill-out-of-memory")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_show)

    p = add("search", "find entries by words")
    p.add_argument("words", nargs="+")
    p.add_argument("--limit", type=int, default=10)
    p.set_defaults(func=cmd_search)

    p = sub.add_parser(
        "catalog", help="check or verify the catalog (see 'errhints catalog -h')", add_help=False
    )
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(func=cmd_catalog)

    p = add("run", "run a command with errhints active in every Python process it starts")
    p.add_argument(
        "--verbosity",
        choices=("short", "full"),
        default=None,
        help="set ERRHINTS_VERBOSITY for the command",
    )
    p.add_argument(
        "cmd",
        nargs=argparse.REMAINDER,
        metavar="-- CMD [ARGS...]",
        help="the command; its exit status is errhints' (killed by signal N: 128+N)",
    )
    p.set_defaults(func=cmd_run)

    p = add("doctor", "show versions, active integrations and the catalog's coverage")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_doctor)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        result: int = args.func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    return result


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
