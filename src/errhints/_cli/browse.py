"""``errhints list``, ``show`` and ``search``: browse the catalog."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from .common import Subparsers, add_catalog_option, print_json, usage_error

__all__ = ["add_parser"]


def _catalog(paths: Sequence[str]) -> Any:
    from .._core.state import get_index

    return get_index(tuple(paths)).catalog


def cmd_list(args: argparse.Namespace) -> int:
    """``errhints list``: one line per entry (or JSON)."""
    catalog = _catalog(args.catalog)
    package = args.package.strip().lower() if args.package is not None else None
    if package is not None:
        from .._packages import PROJECTS

        known = {p.name for p in PROJECTS} | {e.package for e in catalog}
        if package not in known:
            return usage_error(
                args.parser,
                f"argument --package: unknown package {args.package!r}"
                f" (choose from {', '.join(sorted(known))})",
            )
    entries = [e for e in catalog if package in (None, e.package)]
    entries.sort(key=lambda e: e.id)
    if args.json:
        print_json([e.to_dict() for e in entries])
        return 0
    width = max((len(e.id) for e in entries), default=0)
    for entry in entries:
        print(f"{entry.id:<{width}}  {entry.title}")
    print(f"{len(entries)} entries", file=sys.stderr)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    """``errhints show ID``: one entry in full."""
    from .._core.render import render_entry

    catalog = _catalog(args.catalog)
    entry = catalog.get(args.id)
    if entry is None and (":" in args.id or " " in args.id):
        from .sites import find_sites, render_sites, sites_json

        sites = find_sites(args.id)
        if sites:
            if args.json:
                print_json(sites_json(sites))
            else:
                print(render_sites(sites))
            return 0
    if entry is None:
        close = [e.id for e in catalog if args.id in e.id][:5]
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        print(f"errhints: no entry {args.id!r}.{hint}", file=sys.stderr)
        return 1
    if args.json:
        print_json(entry.to_dict())
    else:
        print(render_entry(entry))
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    """``errhints search WORDS``: entries ranked by fuzzy agreement with the words."""
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
        limit=None,
        score_cutoff=60,
    )
    if not results:
        print(f"errhints: no entry matches {query!r}", file=sys.stderr)
        return 1
    # token_set_ratio gives 100 to every text holding all the words: break such ties by how
    # closely the title and the message alone read like the words, then by id.
    processed = utils.default_process(query)
    scored = []
    for _text, score, i in results:
        entry = entries[i]
        focus = f"{entry.title} {entry.template.skeleton}"
        closeness = fuzz.token_sort_ratio(processed, utils.default_process(focus))
        partial = fuzz.partial_ratio(processed, utils.default_process(entry.title))
        scored.append((-round(score), -round(max(closeness, partial)), entry.id, entry, score))
    scored.sort(key=lambda item: item[:3])
    print(
        "score: how many of the words an entry's id, title, message and meaning hold"
        " (100: all of them); ties ranked by how closely the title reads like the words",
        file=sys.stderr,
    )
    for *_, entry, score in scored[: args.limit]:
        print(f"{entry.id}  {entry.title}  ({score:.0f})")
    return 0


def _positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def add_parser(sub: Subparsers) -> None:
    """``list``, ``show`` and ``search``."""
    p = sub.add_parser("list", help="list the catalog's entries")
    add_catalog_option(p)
    p.add_argument(
        "--package", help="only entries of this package (sglang, llamafactory; any case)"
    )
    p.add_argument("--json", action="store_true", help="print entries as JSON")
    p.set_defaults(func=cmd_list, parser=p)

    p = sub.add_parser("show", help="print one entry in full")
    add_catalog_option(p)
    p.add_argument(
        "id",
        help="an entry id (sglang.prefill-out-of-memory), a raise site "
        "(sglang/srt/server_args.py:ServerArgs.check_server_args) or a pasted message",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("search", help="find entries by words")
    add_catalog_option(p)
    p.add_argument("words", nargs="+")
    p.add_argument(
        "--limit", type=_positive_int, default=10, help="show at most N entries (default 10)"
    )
    p.set_defaults(func=cmd_search)
