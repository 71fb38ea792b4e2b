"""``errhints doctor``: what is installed, which doors are open, and what the catalog covers.

Reports the errhints, sglang and llamafactory versions; which integrations are active in
this process (interpreter hooks, logging, multiprocessing, ``ERRHINTS=1`` for children,
IPython) and which are available (the start-up hook files, the pytest plugin); and the
catalog's entries per package with the releases they were verified against, warning when
the installed release differs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._doors.environment import startup_hook
from .._packages import PROJECTS
from .._version import __version__
from .common import Subparsers, add_catalog_option, print_json

__all__ = ["PACKAGES", "add_parser", "collect", "render"]

PACKAGES = tuple(project.name for project in PROJECTS)


def installed_version(distribution: str) -> str | None:
    """The installed version of a distribution, or ``None`` when it is not installed."""
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None
    except Exception:
        return None


def _pytest_plugin_registered() -> bool:
    from importlib import metadata

    try:
        eps = metadata.entry_points(group="pytest11")
    except Exception:
        return False
    return any(ep.value == "errhints._doors.pytest_plugin" for ep in eps)


def doors() -> dict[str, Any]:
    """Each door's state in this process, how it was activated, and the pytest plugin."""
    from .._doors import states
    from .._doors.environment import activated_at_startup

    return {
        **states(),
        "activated_at_startup": activated_at_startup(),
        "pytest_plugin": _pytest_plugin_registered(),
    }


def coverage(catalog_paths: Sequence[str] = ()) -> dict[str, Any]:
    """Entries per package, the releases they were verified against, and what is installed."""
    from .._core.catalog import load_catalog

    catalog = load_catalog(catalog_paths)
    packages: dict[str, Any] = {}
    names = sorted({*PACKAGES, *(entry.package for entry in catalog)})
    for name in names:
        entries = [entry for entry in catalog if entry.package == name]
        releases = sorted({str(entry.releases) for entry in entries})
        installed = installed_version(name)
        if installed is None:
            status = "not installed"
        elif not releases:
            status = "no entries"
        elif any(installed.split("+", 1)[0] in entry.releases for entry in entries):
            status = "verified"
        else:
            status = "differs"
        packages[name] = {
            "installed": installed,
            "entries": len(entries),
            "verified_against": releases,
            "status": status,
            "site_index": _site_index(name, installed),
        }
    return {
        "entries": len(catalog),
        "packages": packages,
        "problems": [str(p) for p in catalog.problems],
    }


def collect(catalog_paths: Sequence[str] = ()) -> dict[str, Any]:
    """The whole report as JSON-ready data."""
    import errhints

    warnings: list[str] = []
    cover = coverage(catalog_paths)
    for name, info in cover["packages"].items():
        if info["status"] == "differs":
            warnings.append(
                f"{name} {info['installed']} is installed, but the catalog was verified against "
                f"{', '.join(info['verified_against'])}: messages or code sites may have moved, "
                "so some failures may go unexplained or be explained with less confidence"
            )
    warnings.extend(f"catalog problem: {problem}" for problem in cover["problems"])
    hook = startup_hook()
    if not hook["installed"]:
        warnings.append(
            f"the ERRHINTS=1 start-up hook ({hook['uses']}) is not in this interpreter's "
            "site-packages, so ERRHINTS=1, `errhints run` and install(children=True) cannot "
            "activate new processes; reinstall errhints (pip install errhints, or pip install -e . "
            "again in a checkout)"
        )
    return {
        "errhints": {
            "version": __version__,
            "location": str(Path(errhints.__file__).resolve().parent),
        },
        "python": {
            "version": ".".join(str(v) for v in sys.version_info[:3]),
            "executable": sys.executable,
        },
        "versions": {
            "errhints": __version__,
            **{name: cover["packages"][name]["installed"] for name in PACKAGES},
        },
        "doors": doors(),
        "startup_hook": hook,
        "catalog": cover,
        "warnings": warnings,
    }


def _version_key(version: str) -> tuple[int, ...]:
    import re

    return tuple(int(n) for n in re.findall(r"\d+", version))


def _span(ranges: list[str]) -> str:
    """``0.4.0 to 0.5.23`` for many release ranges (the JSON report lists each one)."""
    if not ranges:
        return "-"
    if len(ranges) <= 2:
        return ", ".join(ranges)
    ends = [end for r in ranges for end in r.split(" to ")]
    low, high = min(ends, key=_version_key), max(ends, key=_version_key)
    return f"releases {low} to {high} ({len(ranges)} ranges; --json lists them)"


def _site_index(project: str, installed: str | None) -> dict[str, Any]:
    """What the site index holds for ``project``: sites, releases, and the installed one.

    Kept apart from the catalog: the index only identifies where a message is raised.
    """
    from .._core.siteindex import releases, site_counts

    versions = releases(project)
    return {
        "sites": site_counts().get(project, 0),
        "releases": f"{versions[0]} to {versions[-1]}" if versions else None,
        "covers_installed": installed is not None and installed.split("+", 1)[0] in versions,
    }


def render(report: dict[str, Any]) -> str:
    """The report as text for a terminal."""
    lines: list[str] = []
    eh, py = report["errhints"], report["python"]
    lines.append(f"errhints {eh['version']} ({eh['location']})")
    lines.append(f"Python {py['version']} ({py['executable']})")
    lines.append("")
    lines.append("Installed packages and catalog coverage")
    for name, info in report["catalog"]["packages"].items():
        installed = info["installed"] or "not installed"
        releases = _span(info["verified_against"])
        status = "" if info["status"] == "not installed" else f" [{info['status']}]"
        lines.append(
            f"  {name:<13} {installed:<14} {info['entries']:>3} entries, "
            f"verified against {releases}{status}"
        )
        index = info.get("site_index") or {}
        if index.get("sites"):
            covered = " (your release included)" if index.get("covers_installed") else ""
            lines.append(
                f"  {'':<13} {'':<14} site index: {index['sites']} raise sites of releases "
                f"{index['releases']}{covered}; identifies, never explains"
            )
    lines.append("")
    d = report["doors"]
    hook = report["startup_hook"]
    lines.append("Doors in this process")
    rows = [
        ("interpreter hooks", d["hooks"], "errhints.install()"),
        ("logging", d["logging"], "error records carrying a traceback"),
        ("multiprocessing", d["multiprocessing"], "exceptions escaping Process.run"),
        ("Ray", d.get("ray", "off"), "RayTaskError of failed Ray tasks and actors"),
        ("environment", d["environment"], "ERRHINTS=1 in the environment of new processes"),
        ("annotate", d["annotate"], "@errhints.annotate"),
        ("IPython", d["ipython"], "%load_ext errhints"),
        (
            "start-up hook",
            "installed" if hook["installed"] else "missing",
            f"{hook['uses']} in site-packages"
            + ("; activated this process" if d["activated_at_startup"] else ""),
        ),
        (
            "pytest plugin",
            "registered" if d["pytest_plugin"] else "missing",
            "-p no:errhints to turn off",
        ),
    ]
    for name, state, what in rows:
        lines.append(f"  {name:<18} {state:<11} {what}")
        if name == "start-up hook":  # its files, under its own row
            for file in ("errhints-startup.pth", "errhints-startup.start"):
                for path in hook["files"].get(file, []):
                    lines.append(f"  {'':<18} {'':<11} {path}")
    if report["warnings"]:
        lines.append("")
        lines.append("Warnings")
        lines.extend(f"  - {w}" for w in report["warnings"])
    return "\n".join(lines)


def _cmd_doctor(args: argparse.Namespace) -> int:
    """Print the report (text or JSON); always 0: warnings are advice, not failures."""
    report = collect(tuple(args.catalog))
    if args.json:
        print_json(report)
    else:
        print(render(report))
    return 0


def add_parser(sub: Subparsers) -> None:
    """``errhints doctor [--json]``."""
    p = sub.add_parser(
        "doctor", help="show versions, active integrations and the catalog's coverage"
    )
    add_catalog_option(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=_cmd_doctor)
