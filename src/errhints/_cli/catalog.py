"""``errhints catalog check|verify|index``: validate the catalog and check it against releases.

Exit codes: 0 all verified, 1 an entry failed (or a file is invalid), 2 usage error,
3 a release could not be fetched (unless ``--offline-ok``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from .._core.catalog import Entry, load_catalog
from .._maintain.ranges import RangeReport, check_ranges
from .._maintain.releases import check_release_name, default_cache_dir, fetch_releases
from .._maintain.verify import VerifyReport, needed_releases, verify_catalog
from .common import Subparsers, add_catalog_option, usage_error

__all__ = ["add_parser"]


def add_parser(sub: Subparsers) -> None:
    """``errhints catalog check|verify|index``."""
    parser = sub.add_parser(
        "catalog",
        help="check or verify the catalog, or build its site index",
        description="Validate the catalog, verify it against the released sources, or build "
        "and update the site index (maintainer commands; verify and index download releases).",
    )
    parser.set_defaults(func=lambda args: usage_error(parser, "choose a catalog command"))
    commands = parser.add_subparsers(dest="catalog_command", metavar="{check,verify,index}")
    check = commands.add_parser("check", help="validate the catalog files (no download)")
    check.set_defaults(func=_cmd_check)
    verify = commands.add_parser("verify", help="check entries against the released sources")
    verify.set_defaults(func=_cmd_verify)
    for command in (check, verify):
        add_catalog_option(command)
        command.add_argument(
            "--no-builtin",
            action="store_true",
            help="leave out the packaged catalog: only --catalog and ERRHINTS_CATALOG_PATH",
        )
    verify.add_argument(
        "--release",
        action="append",
        metavar="PKG==VERSION",
        default=[],
        help="verify PKG's entries against this release instead of their pinned one (repeatable)",
    )
    verify.add_argument(
        "--id",
        action="append",
        metavar="PATTERN",
        default=[],
        help="only the entries whose id matches this shell pattern (repeatable)",
    )
    verify.add_argument(
        "--ranges",
        action="store_true",
        help="also check every site at every release of its range, through the site index",
    )
    verify.add_argument("--json", action="store_true", help="print the report as JSON")
    verify.add_argument(
        "--offline-ok",
        action="store_true",
        help="when a release cannot be downloaded, skip its entries instead of exiting 3",
    )
    import importlib

    try:  # the site index commands (errhints catalog index build|update|stats)
        index = importlib.import_module(f"{__package__}.index")
    except ImportError:
        return
    group = commands.add_parser(
        "index",
        help="build, update or inspect the site index",
        description="Build, update or inspect the shipped site index (catalog/index/).",
    )
    group.set_defaults(func=lambda args: usage_error(group, "choose an index command"))
    index.add_arguments(group.add_subparsers(dest="index_command", metavar="{build,update,stats}"))


def _load(args: argparse.Namespace) -> tuple[list[Entry], list[str]]:
    """Entries and load problems of the catalog the options name (``--id`` narrows them)."""
    import fnmatch

    catalog = load_catalog(args.catalog, builtin=not args.no_builtin)
    patterns = getattr(args, "id", None) or ["*"]
    entries = [e for e in catalog if any(fnmatch.fnmatchcase(e.id, p) for p in patterns)]
    return entries, [str(p) for p in catalog.problems]


def _parse_targets(specs: Sequence[str]) -> dict[str, str]:
    """``["sglang==0.5.24"]`` -> ``{"sglang": "0.5.24"}``; ``ValueError`` when malformed."""
    targets: dict[str, str] = {}
    for spec in specs:
        package, sep, version = spec.partition("==")
        package, version = package.strip(), version.strip()
        if not sep or not package or not version:
            raise ValueError(f"--release wants PKG==VERSION, got {spec!r}")
        check_release_name(package, version)
        if package in targets and targets[package] != version:
            raise ValueError(f"--release names {package} twice")
        targets[package] = version
    return targets


def _cmd_check(args: argparse.Namespace) -> int:
    """``errhints catalog check``: load every file, print each problem."""
    entries, problems = _load(args)
    for problem in problems:
        print(problem)
    print(f"{len(entries)} entries loaded, {len(problems)} problem(s)")
    return 1 if problems else 0


def _print_report(report: VerifyReport) -> None:
    """Human output: failures, warnings, skips grouped by reason, then the summary."""
    for entry in report.failed:
        print(f"FAIL {entry.id}: {'; '.join(entry.failures)}")
    for entry in report.entries:
        if entry.warnings:
            print(f"warn {entry.id}: {'; '.join(entry.warnings)}")
    by_reason: dict[str, list[str]] = {}
    for entry in report.skipped:
        by_reason.setdefault(entry.reason, []).append(entry.id)
    for reason, ids in by_reason.items():
        shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
        print(f"skip {len(ids)} entr{'y' if len(ids) == 1 else 'ies'} ({shown}): {reason}")
    print(report.summary())


def _cmd_verify(args: argparse.Namespace) -> int:
    """``errhints catalog verify``: fetch the releases, check every entry, report."""
    try:
        target = _parse_targets(args.release)
    except ValueError as err:
        print(f"errhints catalog verify: error: {err}", file=sys.stderr)
        return 2
    entries, problems = _load(args)

    def progress(message: str) -> None:
        """Say on stderr what takes a while (a download, indexing a release)."""
        print(message, file=sys.stderr, flush=True)

    needed = needed_releases(entries, target)
    cache = default_cache_dir()
    with tempfile.TemporaryDirectory(prefix="errhints-releases-") as scratch:
        paths, reasons = fetch_releases(needed, cache or Path(scratch), progress=progress)
        for (package, version), reason in reasons.items():
            print(f"cannot fetch {package}=={version}: {reason}", file=sys.stderr)
        report = verify_catalog(
            entries, releases=paths, target=target, reasons=reasons, progress=progress
        )
    ranges = check_ranges(entries) if args.ranges else []
    range_failures = [r for r in ranges if not r.ok and not r.skipped]
    if args.json:
        data = report.to_dict()
        data["problems"] = problems
        if args.ranges:
            data["ranges"] = [r.to_dict() for r in ranges]
        print(json.dumps(data, indent=2))
    else:
        for problem in problems:
            print(f"FAIL {problem}")
        _print_report(report)
        if args.ranges:
            _print_ranges(ranges)
    if reasons and not args.offline_ok:
        return 3
    return 1 if report.failed or problems or range_failures else 0


def _print_ranges(ranges: Sequence[RangeReport]) -> None:
    """Entries whose sites do not hold at every release of their range, then the summary."""
    checked = [r for r in ranges if not r.skipped]
    for r in checked:
        for where in r.missing:
            print(f"RANGE {r.id}: not raised at {where}")
        for where in r.reworded:
            print(f"RANGE {r.id}: reworded in {where}")
        for where in r.wider:
            print(f"WIDER {r.id}: the same wording is raised outside the range, at {where}")
    ok = sum(r.ok for r in checked)
    pairs = sum(r.checked for r in checked)
    share = f"{100 * ok / len(checked):.1f}%" if checked else "-"
    print(
        f"ranges: {ok} of {len(checked)} entries hold at every indexed release of their range "
        f"({pairs} site-release pairs looked up): {share}; "
        f"{len(ranges) - len(checked)} not in the site index (HTTP responses, message tables)"
    )
    wider = sum(bool(r.wider) for r in checked)
    if wider:
        print(f"{wider} entries could name a wider range (WIDER: check causes and fixes there)")
