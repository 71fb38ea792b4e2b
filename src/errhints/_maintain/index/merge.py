"""Merge the sites of a project's releases into site identities with ranges and path history.

A site keeps one identity across releases while its kind, function, template and ordinal (the
how-many-th site of that template in that function) stay the same; its path may change (a
moved file, LlamaFactory's ``llmtuner`` to ``llamafactory`` rename). Each identity holds runs:
consecutive releases with the same path and line (or, in ``lines="last"`` mode, the same path,
with the line at the run's last release).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from .extract import RawSite, ReleaseSites
from .settings import map_settings

__all__ = ["LineMode", "Run", "Site", "collapse_lines", "merge_project"]

LineMode = Literal["all", "last"]


@dataclass(slots=True)
class Run:
    """Consecutive releases (indexes into the project's release list) with one path and line."""

    first: int
    last: int
    line: int
    path: str

    def to_json(self) -> list[object]:
        """``[first, last, line, path]``."""
        return [self.first, self.last, self.line, self.path]


@dataclass(slots=True)
class Site:
    """One site identity of a project, across every release it exists in."""

    project: str
    kind: str
    function: str
    template: str
    ordinal: int
    exception: str = ""
    guard: str = ""
    settings: tuple[str, ...] = ()
    runs: list[Run] = field(default_factory=list)

    @property
    def path(self) -> str:
        """The path at the newest release it exists in."""
        return self.runs[-1].path

    @property
    def last(self) -> int:
        """The newest release index it exists in."""
        return self.runs[-1].last

    def sort_key(self) -> tuple[str, str, str, str, int, str]:
        """A total, deterministic order."""
        return (self.project, self.path, self.function, self.template, self.ordinal, self.kind)


def _ordinals(sites: Sequence[RawSite]) -> list[tuple[RawSite, int]]:
    """Each site with its ordinal among same (path, kind, function, template), by line."""
    seen: dict[tuple[str, str, str, str], int] = {}
    out: list[tuple[RawSite, int]] = []
    for site in sorted(sites, key=lambda s: (s.path, s.line, s.kind, s.function, s.template)):
        key = (site.path, site.kind, site.function, site.template)
        n = seen.get(key, 0)
        seen[key] = n + 1
        out.append((site, n))
    return out


def merge_project(
    project: str, releases: Iterable[ReleaseSites], *, lines: LineMode = "all"
) -> list[Site]:
    """Site identities of one project from its releases (oldest first), sorted.

    ``releases`` is read once, in order, so it may be a generator (one release in memory).
    """
    sites: list[Site] = []
    by_place: dict[tuple[str, str, str, str, int], Site] = {}
    by_move: dict[tuple[str, str, str, int], list[Site]] = {}
    for index, release in enumerate(releases):
        current = _ordinals(release.sites)
        matched: list[tuple[RawSite, Site]] = []
        pending: list[tuple[RawSite, int]] = []
        for raw, ordinal in current:
            found = by_place.get((raw.path, raw.kind, raw.function, raw.template, ordinal))
            if found is not None and found.last < index:
                matched.append((raw, found))
                found.runs.append(Run(index, index, raw.line, raw.path))  # merged below
            else:
                pending.append((raw, ordinal))
        for raw, ordinal in pending:
            move_key = (raw.kind, raw.function, raw.template, ordinal)
            candidates = [s for s in by_move.get(move_key, []) if s.last < index]
            if candidates:
                found = max(candidates, key=lambda s: (s.last, s.path))
            else:
                found = Site(project, raw.kind, raw.function, raw.template, ordinal)
                sites.append(found)
                by_move.setdefault(move_key, []).append(found)
            found.runs.append(Run(index, index, raw.line, raw.path))
            by_place[(raw.path, raw.kind, raw.function, raw.template, ordinal)] = found
            matched.append((raw, found))
        for raw, site in matched:
            site.exception = raw.exception
            site.guard = raw.guard
            site.settings = map_settings(
                raw.refs,
                project=project,
                path=raw.path,
                function=raw.function,
                flags=release.flags,
                fields=release.fields,
            )
            runs = site.runs
            if len(runs) >= 2:
                prev, new = runs[-2], runs[-1]
                same_line = prev.line == new.line or lines == "last"
                if prev.last == index - 1 and prev.path == new.path and same_line:
                    prev.last = index
                    prev.line = new.line
                    runs.pop()
    sites.sort(key=Site.sort_key)
    return sites


def collapse_lines(sites: Iterable[Site]) -> None:
    """Join runs that differ only by line, keeping the line at each joined run's last release."""
    for site in sites:
        joined: list[Run] = []
        for run in site.runs:
            prev = joined[-1] if joined else None
            if prev is not None and prev.last == run.first - 1 and prev.path == run.path:
                prev.last = run.last
                prev.line = run.line
            else:
                joined.append(Run(run.first, run.last, run.line, run.path))
        site.runs = joined
