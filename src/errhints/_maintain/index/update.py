"""Add newer releases to the release list and report the drift between consecutive releases.

Newer releases are discovered with ``pip index versions`` (the only network use, through pip).
The drift report lists the sites added, removed or reworded (same path, function and kind,
another template) from one release to the next, and the curated catalog entries whose sites
(path and function) those changes touch.
"""

from __future__ import annotations

import difflib
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..._core.releases import version_key
from ..._core.template import TemplateError, parse_template
from .extract import RawSite, ReleaseSites

__all__ = ["Drift", "available_versions", "drift", "newer_releases", "touched_entries"]

#: How similar two templates of one function must be to count as one reworded site.
REWORD_RATIO = 0.6
_PRE_RE = re.compile(r"(a|b|rc|dev)\d*", re.IGNORECASE)

SiteKey = tuple[str, str, str, str]  # path, function, kind, template


@dataclass(slots=True)
class Drift:
    """Changes of one project's sites from release ``old`` to release ``new``."""

    project: str
    old: str
    new: str
    added: list[SiteKey] = field(default_factory=list)
    removed: list[SiteKey] = field(default_factory=list)
    reworded: list[tuple[SiteKey, SiteKey]] = field(default_factory=list)
    touched: dict[str, list[str]] = field(default_factory=dict)  # entry id -> changes

    def lines(self, limit: int = 20) -> list[str]:
        """A human report, at most ``limit`` lines per kind of change."""
        out = [
            f"{self.project} {self.old} -> {self.new}: {len(self.added)} added, "
            f"{len(self.removed)} removed, {len(self.reworded)} reworded"
        ]
        for label, keys in (("+", self.added), ("-", self.removed)):
            for path, function, kind, template in keys[:limit]:
                out.append(f"  {label} {kind} {path}:{function}: {template[:100]!r}")
            if len(keys) > limit:
                out.append(f"  {label} ... {len(keys) - limit} more")
        for old, new in self.reworded[:limit]:
            out.append(f"  ~ {old[2]} {old[0]}:{old[1]}: {old[3][:80]!r} -> {new[3][:80]!r}")
        if len(self.reworded) > limit:
            out.append(f"  ~ ... {len(self.reworded) - limit} more")
        for entry, changes in sorted(self.touched.items()):
            out.append(f"  curated entry {entry}: {'; '.join(changes[:3])}")
        return out


def _keys(sites: Iterable[RawSite]) -> dict[SiteKey, int]:
    counts: dict[SiteKey, int] = {}
    for s in sites:
        key = (s.path, s.function, s.kind, s.template)
        counts[key] = counts.get(key, 0) + 1
    return counts


def drift(project: str, old: ReleaseSites, new: ReleaseSites) -> Drift:
    """Sites added, removed and reworded from ``old`` to ``new`` (path/function moves aside)."""
    before, after = _keys(old.sites), _keys(new.sites)
    removed = sorted(k for k, n in before.items() if after.get(k, 0) < n)
    added = sorted(k for k, n in after.items() if before.get(k, 0) < n)
    # a site that only moved (same function and template, another path) is neither
    moved_from = {(k[1], k[2], k[3]) for k in added}
    moved_to = {(k[1], k[2], k[3]) for k in removed}
    removed = [k for k in removed if (k[1], k[2], k[3]) not in moved_from]
    added = [k for k in added if (k[1], k[2], k[3]) not in moved_to]
    result = Drift(project, f"{old.dist}=={old.version}", f"{new.dist}=={new.version}")
    by_place: dict[tuple[str, str, str], list[SiteKey]] = {}
    for key in added:
        by_place.setdefault((key[0], key[1], key[2]), []).append(key)
    # a reworded site: removed and added at one path, function and kind, with similar text
    pairs: list[tuple[float, SiteKey, SiteKey]] = []
    for key in removed:
        for other in by_place.get((key[0], key[1], key[2]), []):
            ratio = difflib.SequenceMatcher(None, key[3], other[3]).ratio()
            if ratio >= REWORD_RATIO:
                pairs.append((ratio, key, other))
    paired: set[SiteKey] = set()
    for _ratio, key, other in sorted(pairs, key=lambda p: (-p[0], p[1], p[2])):
        if key not in paired and other not in paired:
            paired.update((key, other))
            result.reworded.append((key, other))
    result.reworded.sort()
    result.removed = [k for k in removed if k not in paired]
    result.added = [k for k in added if k not in paired]
    return result


def _skeleton(template: str) -> str:
    try:
        return parse_template(template).skeleton
    except TemplateError:
        return template


def touched_entries(result: Drift, entries: Sequence[object]) -> None:
    """Fill ``result.touched`` with the curated entries whose sites (path, function) changed.

    An entry whose own message was removed or reworded says so first; otherwise the number of
    other changes in its function is given.
    """
    changed: dict[tuple[str, str], list[tuple[str, str]]] = {}  # place -> (what, old template)
    for key in result.added:
        changed.setdefault((key[0], key[1]), []).append(("added", ""))
    for key in result.removed:
        changed.setdefault((key[0], key[1]), []).append((f"removed {key[3][:70]!r}", key[3]))
    for old, new in result.reworded:
        text = f"reworded {old[3][:60]!r} -> {new[3][:60]!r}"
        changed.setdefault((old[0], old[1]), []).append((text, old[3]))
    for entry in entries:
        if getattr(entry, "package", "") != result.project:  # entries name the project
            continue
        template = getattr(entry, "template", None)
        own = _skeleton(str(getattr(template, "source", template or "")))
        notes: list[str] = []
        others = 0
        for site in getattr(entry, "sites", ()):
            place = (getattr(site, "path", ""), getattr(site, "function", ""))
            for what, old_template in changed.get(place, []):
                if old_template and _skeleton(old_template) == own:
                    notes.insert(0, f"ITS MESSAGE: {what}")
                else:
                    others += 1
        if others:
            notes.append(f"{others} other change(s) in its function")
        if notes:
            result.touched[str(getattr(entry, "id", "?"))] = notes


def available_versions(dist: str) -> list[str]:
    """Final releases of ``dist`` on the package index, oldest first (``pip index versions``)."""
    cmd = [sys.executable, "-m", "pip", "index", "versions", dist, "--disable-pip-version-check"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"pip index versions {dist} failed: {proc.stderr.strip()[-200:]}")
    for line in proc.stdout.splitlines():
        if line.strip().startswith("Available versions:"):
            versions = [v.strip() for v in line.split(":", 1)[1].split(",") if v.strip()]
            finals = []
            for version in versions:
                try:
                    version_key(version)
                except ValueError:
                    continue
                if not _PRE_RE.search(version.replace("post", "")):
                    finals.append(version)
            return sorted(finals, key=version_key)
    return []


def newer_releases(dist: str, known: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Releases of ``dist`` on the index newer than every known release of the project."""
    if not known:
        return []
    newest = max((version_key(v) for _, v in known), default=None)
    return [
        (dist, v) for v in available_versions(dist) if newest is None or version_key(v) > newest
    ]
