"""``errhints show`` for a raise site: by ``path:function`` or by a pasted message.

The site index says where and when a message is raised; when the installed release of the
project has that site, the surrounding source is read from the user's own installed copy
(errhints ships no source code).
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

from .._core.siteindex import Identified, identify, sites_at
from .._packages import installed_release, project_named, project_of

__all__ = ["find_sites", "render_sites"]

#: Lines of source shown before and after the raising line.
CONTEXT_LINES = 3


def find_sites(query: str) -> list[Identified]:
    """Sites named by ``path.py:function`` (any project), else the sites a message fits."""
    path, sep, function = query.partition(":")
    if sep and path.endswith(".py") and function:
        known = project_of(path.split("/", 1)[0])
        return sites_at(known.name, path, function) if known is not None else []
    type_name, sep, message = query.partition(": ")
    if not sep or " " in type_name:
        type_name, message = "", query
    return identify(type_name, message, limit=10)


def _installed(project: str) -> tuple[str, str] | None:
    """The installed version of ``project`` and the directory holding its import package."""
    known = project_named(project)
    version = installed_release(project)
    if known is None or version is None:
        return None
    for name in known.import_names:
        try:
            spec = importlib.util.find_spec(name)
        except Exception:  # a broken install
            continue
        locations = getattr(spec, "submodule_search_locations", None) if spec else None
        if locations:
            return version, os.path.dirname(next(iter(locations)))
    return None


def _source(site: Identified) -> list[str]:
    """The raising line and its neighbours from the installed copy, if it has this site."""
    found = _installed(site.project)
    if found is None:
        return [f"  ({site.project} is not installed here: no source to show)"]
    version, root = found
    for run, path, line in site.runs:
        if version.split("+", 1)[0] in run:
            file = os.path.join(root, *path.split("/"))
            try:
                with open(file, encoding="utf-8", errors="replace") as handle:
                    lines = handle.read().splitlines()
            except OSError as err:
                return [f"  (cannot read {file}: {err.strerror})"]
            first = max(line - 1 - CONTEXT_LINES, 0)
            shown = lines[first : line + CONTEXT_LINES]
            out = [f"  Source in your installed {site.project} {version} ({file}):"]
            for number, text in enumerate(shown, first + 1):
                mark = ">" if number == line else " "
                out.append(f"  {mark}{number:>6} | {text}")
            return out
    return [f"  (your installed {site.project} {version} does not raise it here)"]


def render_sites(sites: list[Identified]) -> str:
    """Each site: where and when, the guard and settings, the link and the installed source."""
    lines: list[str] = []
    for site in sites:
        ranges = ", ".join(str(r) for r in site.ranges)
        lines.append(f"{site.path}:{site.line} in {site.function} ({site.project} {ranges})")
        lines.append(f"  {site.kind}: {site.exception or '-'}: {site.template}")
        if site.guard:
            lines.append(f"  when: {site.guard}")
        if site.settings:
            lines.append(f"  settings: {', '.join(site.settings)}")
        if len(site.paths) > 1:
            lines.append(f"  earlier paths: {', '.join(site.paths[:-1])}")
        if site.url:
            lines.append(f"  {site.url}")
        lines.extend(_source(site))
        lines.append("")
    shared = max((s.candidates for s in sites), default=0)
    if shared > len(sites):
        lines.append(f"{shared} places raise this message; {len(sites)} shown.")
    return "\n".join(lines).rstrip()


def sites_json(sites: list[Identified]) -> list[dict[str, Any]]:
    """The sites as JSON."""
    return [site.to_dict() for site in sites]
