"""``errhints catalog index build|update|stats``: build and inspect the shipped site index.

``build`` rebuilds ``catalog/index/`` from its release list (downloads cached); ``update``
adds releases newer than the list's newest (``pip index versions``), rebuilds and prints the
drift since the previous release; ``stats`` prints sites per project and release and the size.
Maintainers only: the network is reached through pip, nothing here runs at failure time.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_arguments", "run"]


def add_arguments(subparsers: Any) -> None:
    """Add ``build``, ``update`` and ``stats`` to an ``index`` subparser group."""
    for name, text in (
        ("build", "rebuild catalog/index from its release list"),
        ("update", "add newer releases, rebuild, report drift"),
        ("stats", "sites per project and release, and the data size"),
    ):
        cmd = subparsers.add_parser(name, help=text, description=text)
        cmd.set_defaults(index_command=name, func=run)
        cmd.add_argument(
            "--out", metavar="DIR", help="the index directory (default: catalog/index)"
        )
        if name != "stats":
            cmd.add_argument(
                "--cache-dir", metavar="DIR", help="download cache (default: ERRHINTS_CACHE_DIR)"
            )
            cmd.add_argument(
                "--lines",
                choices=("auto", "all", "last"),
                default="auto",
                help="a line per run of equal lines, or only at each range's last release",
            )
            cmd.add_argument(
                "--without-lookalikes",
                action="store_true",
                help="record no look-alike project's messages (no vLLM download)",
            )
            cmd.add_argument(
                "--renames",
                metavar="FILE",
                help="the curated renames to check and ship (default: the build's renames.toml)",
            )
        if name == "build":
            cmd.add_argument(
                "--from-cache",
                action="store_true",
                help="take the release list from the download cache instead of releases.json",
            )
        if name == "stats":
            cmd.add_argument("--json", action="store_true", help="print JSON")


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _out(args: argparse.Namespace) -> Path:
    from .._maintain.index import DEFAULT_OUT

    return Path(args.out) if args.out else DEFAULT_OUT


def _build(args: argparse.Namespace, release_list: dict[str, list[tuple[str, str]]]) -> int:
    from .._maintain.index import build_index
    from .._maintain.index.lookalikes import LOOKALIKE_RELEASES
    from .._maintain.index.options import RENAMES, RenameError
    from .._maintain.releases import ReleaseUnavailable

    cache = Path(args.cache_dir) if args.cache_dir else None
    lines = None if args.lines == "auto" else args.lines
    try:
        result = build_index(
            release_list,
            _out(args),
            cache_dir=cache,
            lines=lines,
            progress=_progress,
            renames=Path(args.renames) if args.renames else RENAMES,
            lookalikes={} if args.without_lookalikes else LOOKALIKE_RELEASES,
        )
    except ReleaseUnavailable as err:
        print(f"errhints catalog index: error: {err.reason}", file=sys.stderr)
        return 3
    except RenameError as err:
        print(f"errhints catalog index: error: {err}", file=sys.stderr)
        return 1
    projects = ", ".join(f"{p}: {n}" for p, n in sorted(result.per_project.items()))
    print(
        f"wrote {result.out}: {result.sites} sites ({projects}; {result.unkeyed} without a key "
        f"word), {result.raw_bytes} bytes, {result.zip_bytes} zip-compressed, lines={result.lines}"
    )
    return 0


def _cmd_build(args: argparse.Namespace) -> int:
    from .._maintain.index import default_release_list, load_release_list

    path = _out(args) / "releases.json"
    cache = Path(args.cache_dir) if args.cache_dir else None
    if args.from_cache or not path.is_file():
        release_list = default_release_list(cache)
    else:
        release_list = load_release_list(path)
    return _build(args, release_list)


def _cmd_update(args: argparse.Namespace) -> int:
    from .._core.catalog import load_catalog
    from .._maintain.index import load_release_list
    from .._maintain.index.build import release_sites
    from .._maintain.index.update import drift, newer_releases, touched_entries

    path = _out(args) / "releases.json"
    if not path.is_file():
        print(f"errhints catalog index: error: no {path}; run 'build' first", file=sys.stderr)
        return 2
    release_list = load_release_list(path)
    cache = Path(args.cache_dir) if args.cache_dir else None
    added: dict[str, list[tuple[str, str]]] = {}
    for project, dist in (("sglang", "sglang"), ("llamafactory", "llamafactory")):
        try:
            found = newer_releases(dist, release_list.get(project, []))
        except (RuntimeError, OSError) as err:
            print(f"errhints catalog index: error: {err}", file=sys.stderr)
            return 3
        if found:
            added[project] = found
            release_list.setdefault(project, []).extend(found)
    if not added:
        print("no newer releases; nothing to do")
        return 0
    for project, found in added.items():
        print(f"{project}: adding {', '.join(v for _, v in found)}")
    status = _build(args, release_list)
    if status:
        return status
    entries = list(load_catalog())
    for project, found in added.items():
        known = release_list[project]
        start = known.index(found[0]) - 1
        pair_list = known[max(start, 0) :]
        previous = None
        for rel in release_sites(pair_list, cache_dir=cache):
            if previous is not None:
                result = drift(project, previous, rel)
                touched_entries(result, entries)
                print("\n".join(result.lines()))
            previous = rel
    return 0


def _cmd_stats(args: argparse.Namespace) -> int:
    from .._maintain.index.write import data_size

    out = _out(args)
    try:
        manifest = json.loads((out / "stats.json").read_text("utf-8"))
    except (OSError, ValueError) as err:
        print(f"errhints catalog index: error: cannot read {out}: {err}", file=sys.stderr)
        return 2
    raw, packed = data_size(out)
    if args.json:
        data = {"sites": manifest["sites"], "counts": manifest["counts"], "raw_bytes": raw,
                "zip_bytes": packed}  # fmt: skip
        print(json.dumps(data, indent=2, sort_keys=True))
        return 0
    for project, count in sorted(manifest["sites"].items()):
        print(f"{project}: {count} site identities")
        for release, tally in manifest["counts"].get(project, {}).items():
            shown = " ".join(f"{k}={v}" for k, v in sorted(tally.items()))
            print(f"  {release}: {shown}")
    print(f"data: {raw} bytes, {packed} bytes zip-compressed")
    return 0


def run(args: argparse.Namespace) -> int:
    """Run the chosen ``index`` command; returns the exit status."""
    command = getattr(args, "index_command", None)
    if command == "build":
        return _cmd_build(args)
    if command == "update":
        return _cmd_update(args)
    if command == "stats":
        return _cmd_stats(args)
    print("errhints catalog index: error: choose build, update or stats", file=sys.stderr)
    return 2
