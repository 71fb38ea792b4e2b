"""``errhints doctor``: what is installed, which doors are open, and what the catalog covers.

Reports the errhints, sglang and llamafactory versions; which integrations are active in
this process (interpreter hooks, logging, multiprocessing, ``ERRHINTS=1`` for children,
IPython) and which are available (the start-up hook files, the pytest plugin); and the
catalog's entries per package with the releases they were verified against, warning when
the installed release differs.
"""

from __future__ import annotations

import contextlib
import json
import os
import site
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .._version import __version__

__all__ = ["PACKAGES", "STARTUP_FILES", "collect", "main", "render"]

PACKAGES = ("sglang", "llamafactory")
#: The start-up hook files the wheel puts at the root of site-packages.
STARTUP_FILES = ("errhints-startup.pth", "errhints-startup.start", "_errhints_startup.py")
#: First Python that runs ``.start`` entry points instead of ``.pth`` import lines (PEP 829).
START_FILES_SINCE = (3, 15)


def installed_version(distribution: str) -> str | None:
    """The installed version of a distribution, or ``None`` when it is not installed."""
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None
    except Exception:
        return None


def _site_dirs() -> list[str]:
    """Every site-packages directory this interpreter processes ``.pth`` files in."""
    dirs: list[str] = []
    with contextlib.suppress(Exception):
        dirs.extend(site.getsitepackages())
    with contextlib.suppress(Exception):
        if site.ENABLE_USER_SITE:
            dirs.append(site.getusersitepackages())
    seen: set[str] = set()
    unique = []
    for d in dirs:
        key = os.path.normcase(os.path.abspath(d))
        if key not in seen:
            seen.add(key)
            unique.append(d)
    return unique


def startup_hook(site_dirs: Iterable[str] | None = None) -> dict[str, Any]:
    """Where the start-up hook files are, and which of them this Python uses."""
    found: dict[str, list[str]] = {name: [] for name in STARTUP_FILES}
    for directory in _site_dirs() if site_dirs is None else site_dirs:
        for name in STARTUP_FILES:
            path = Path(directory) / name
            if path.is_file():
                found[name].append(str(path))
    uses = ".start" if sys.version_info >= START_FILES_SINCE else ".pth"
    used_file = "errhints-startup.start" if uses == ".start" else "errhints-startup.pth"
    installed = bool(found[used_file]) and bool(found["_errhints_startup.py"])
    return {
        "installed": installed,
        "uses": used_file,
        "site_dirs": list(_site_dirs() if site_dirs is None else site_dirs),
        "files": found,
    }


def _pytest_plugin_registered() -> bool:
    from importlib import metadata

    try:
        eps = metadata.entry_points(group="pytest11")
    except Exception:
        return False
    return any(ep.value == "errhints._doors.pytest_plugin" for ep in eps)


def doors() -> dict[str, Any]:
    """The integrations active in this process (and the environment children inherit)."""
    from .._doors import children as _children
    from .._doors import hooks as _hooks
    from .. import _startup

    logging_on = False
    if "errhints._doors.log_records" in sys.modules:
        try:
            from .._doors.log_records import installed as logging_installed

            logging_on = bool(logging_installed())
        except Exception:
            logging_on = False
    ipython_on = False
    if "errhints._doors.ipython" in sys.modules:
        from .._doors.ipython import loaded

        ipython_on = loaded()
    return {
        "hooks": _hooks.installed(),
        "logging": logging_on,
        "multiprocessing": _children.multiprocessing_state(),
        "children": os.environ.get("ERRHINTS") == "1",
        "activated_at_startup": _startup.activated(),
        "ipython": ipython_on,
        "pytest_plugin": _pytest_plugin_registered(),
    }


def _same_release(installed: str, release: str) -> bool:
    """Whether an installed version is the catalogued release (a local ``+label`` aside)."""
    return installed.split("+", 1)[0] == release


def coverage(catalog_paths: Sequence[str] = ()) -> dict[str, Any]:
    """Entries per package, the releases they were verified against, and what is installed."""
    from .._core.catalog import load_catalog

    catalog = load_catalog(catalog_paths)
    packages: dict[str, Any] = {}
    names = sorted({*PACKAGES, *(entry.package for entry in catalog)})
    for name in names:
        entries = [entry for entry in catalog if entry.package == name]
        releases = sorted({entry.release for entry in entries if entry.release})
        installed = installed_version(name)
        if installed is None:
            status = "not installed"
        elif not releases:
            status = "no entries"
        elif any(_same_release(installed, r) for r in releases):
            status = "verified"
        else:
            status = "differs"
        packages[name] = {
            "installed": installed,
            "entries": len(entries),
            "verified_against": releases,
            "status": status,
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


def _on(value: bool) -> str:
    return "on" if value else "off"


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
        releases = ", ".join(info["verified_against"]) or "-"
        lines.append(
            f"  {name:<13} {installed:<14} {info['entries']:>3} entries, "
            f"verified against {releases:<8} [{info['status']}]"
        )
    lines.append("")
    d = report["doors"]
    hook = report["startup_hook"]
    lines.append("Doors in this process")
    rows = [
        ("interpreter hooks", _on(d["hooks"]), "errhints.install()"),
        ("logging", _on(d["logging"]), "error records carrying a traceback"),
        ("multiprocessing", d["multiprocessing"], "exceptions escaping Process.run"),
        ("children", _on(d["children"]), "ERRHINTS=1 in the environment of new processes"),
        ("IPython", _on(d["ipython"]), "%load_ext errhints"),
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
    for name in ("errhints-startup.pth", "errhints-startup.start"):
        for path in hook["files"].get(name, []):
            lines.append(f"  {'':<18} {'':<11} {path}")
    if report["warnings"]:
        lines.append("")
        lines.append("Warnings")
        lines.extend(f"  - {w}" for w in report["warnings"])
    return "\n".join(lines)


def main(*, as_json: bool = False, catalog_paths: Sequence[str] = ()) -> int:
    """Print the report (text or JSON); always 0: warnings are advice, not failures."""
    report = collect(catalog_paths)
    if as_json:
        json.dump(report, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print(render(report))
    return 0
