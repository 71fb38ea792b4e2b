"""``errhints list``, ``show`` and ``search``: browse the catalog."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from .common import Subparsers, add_catalog_option, print_json

__all__ = ["add_parser"]


def _catalog(paths: Sequence[str]) -> Any:
    from .._core.state import get_index

    return get_index(tuple(paths)).catalog


def cmd_list(args: argparse.Namespace) -> int:
    """``errhints list``: one line per entry (or JSON)."""
    entries = [e for e in _catalog(args.catalog) if args.package in (None, e.package)]
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
        limit=args.limit,
        score_cutoff=60,
    )
    if not results:
        print(f"errhints: no entry matches {query!r}", file=sys.stderr)
        return 1
    for _text, score, i in results:
        print(f"{entries[i].id}  {entries[i].title}  ({score:.0f})")
    return 0


def add_parser(sub: Subparsers) -> None:
    """``list``, ``show`` and ``search``."""
    p = sub.add_parser("list", help="list the catalog's entries")
    add_catalog_option(p)
    p.add_argument("--package", help="only entries of this package (sglang, llamafactory)")
    p.add_argument("--json", action="store_true", help="print entries as JSON")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("show", help="print one entry in full")
    add_catalog_option(p)
    p.add_argument("id", help="an entry id, e.g. sglang.prefill-out-of-memory")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("search", help="find entries by words")
    add_catalog_option(p)
    p.add_argument("words", nargs="+")
    p.add_argument("--limit", type=int, default=10)
    p.set_defaults(func=cmd_search)
