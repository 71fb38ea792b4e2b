"""Check each entry against every release of its range, through the site index.

``errhints catalog verify`` parses the newest release an entry names (and, with
``--release``, any other one); checking ~90 SGLang releases the same way would take the better
part of an hour. The site index already holds every raise site of every release, with its
template and the releases and paths it had, so here each catalogued site is looked up there:
for every indexed release in the site's range, a site of the same function (at any path the
function had) must raise the entry's template. A release where the function raises another
wording is reported as reworded, with that wording; a release where it raises nothing that
fits, as missing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .._core.catalog import Entry, Site, split_family
from .._core.releases import version_key
from .._core.siteindex import Identified, function_history, releases, sites_at
from .._core.template import Template, TemplateError, parse_template

__all__ = ["RangeReport", "check_ranges"]

#: The value placeholders are filled with when two templates are compared.
_SAMPLE = "7"


@dataclass(slots=True)
class RangeReport:
    """One entry's sites against every indexed release of their ranges."""

    id: str
    checked: int = 0  # (site, release) pairs looked up
    skipped: str = ""  # why the entry's sites are not in the site index
    missing: list[str] = field(default_factory=list)  # "path:function at 0.5.2"
    reworded: list[str] = field(default_factory=list)  # "0.4.0..0.4.5: 'old wording'"
    #: outside the range (and its split sibling's), where the same function raises the same
    #: wording: a range that could be wider ("path:function in 0.7.1 to 0.9.4"); a hint for
    #: maintainers, not a failure
    wider: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.skipped and not self.missing and not self.reworded

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "checked": self.checked,
            "ok": self.ok,
            "skipped": self.skipped,
            "missing": self.missing,
            "reworded": self.reworded,
            "wider": self.wider,
        }


def _agree(entry: Template, raised: str) -> bool:
    """Whether the entry's template and a raised template say the same thing."""
    try:
        other = parse_template(raised)
    except TemplateError:
        return False
    return (
        entry.match(_SAMPLE.join(other.literals)) is not None
        or other.match(_SAMPLE.join(entry.literals)) is not None
    )


def _same_failure(entry: Entry, found: Identified) -> bool:
    """Whether ``found`` fails the way the entry says: raised (not logged) or logged, and with
    one of its exception types when the index knows the type (the same words as a warning,
    or as an ``assert`` where the entry has a ``ValueError``, are another failure)."""
    raised = found.kind in ("raise", "assert")
    if raised != (entry.kind == "raise"):
        return False
    short = found.exception.rpartition(".")[2]
    return not short or short in entry.exception_short_names


def _covered(site: Identified, versions: Sequence[str]) -> set[str]:
    """The releases of ``versions`` in which ``site`` exists."""
    return {v for run, _path, _line in site.runs for v in run.select(list(versions))}


def _spans(missing: list[str], versions: list[str]) -> list[tuple[str, str]]:
    """Consecutive runs of ``missing`` within ``versions``, as (first, last)."""
    order = {v: i for i, v in enumerate(versions)}
    spans: list[tuple[str, str]] = []
    previous = -2
    for version in sorted(missing, key=order.__getitem__):
        if order[version] == previous + 1:
            spans[-1] = (spans[-1][0], version)
        else:
            spans.append((version, version))
        previous = order[version]
    return spans


def _site(
    entry: Entry, site: Site, versions: list[str], report: RangeReport, outside: list[str]
) -> None:
    wanted = site.releases.select(versions)
    paths = {site.path} | {path for path, _r in function_history(entry.package, site.function)}
    known: list[Identified] = []
    for path in sorted(paths):
        known.extend(s for s in sites_at(entry.package, path, site.function) if s not in known)
    fitting: set[str] = set()
    beyond: set[str] = set()
    for found in known:
        if _agree(entry.template, found.template):
            fitting |= _covered(found, wanted)
            if _same_failure(entry, found):
                beyond |= _covered(found, outside)
    report.checked += len(wanted)
    for first, last in _spans(list(beyond), versions):
        span = first if first == last else f"{first} to {last}"
        report.wider.append(f"{site.path}:{site.function} in {span}")
    missing = [v for v in wanted if v not in fitting]
    for first, last in _spans(missing, versions):
        span = first if first == last else f"{first} to {last}"
        other = sorted(
            {
                f.template
                for f in known
                if f.kind in ("raise", "assert") and (_covered(f, [first]) or _covered(f, [last]))
            }
        )
        if other:
            report.reworded.append(f"{site.function} in {span}: {other[0]!r}")
        else:
            report.missing.append(f"{site.path}:{site.function} in {span}")


def check_ranges(entries: Iterable[Entry]) -> list[RangeReport]:
    """Each in-package entry with sites, checked at every indexed release of its range."""
    entries = list(entries)
    reports = []
    cache: dict[str, list[str]] = {}
    families: dict[str, list[Entry]] = {}
    for entry in entries:
        families.setdefault(split_family(entry.id), []).append(entry)
    for entry in entries:
        if not entry.sites:
            continue
        if entry.package not in cache:
            cache[entry.package] = sorted(set(releases(entry.package)), key=version_key)
        versions = cache[entry.package]
        if not versions:
            continue
        report = RangeReport(entry.id)
        if entry.kind == "http":
            report.skipped = "an HTTP error response, not a raise site: the index has none"
        elif all(site.function == "<module>" for site in entry.sites):
            report.skipped = "a message table at module level, not a raise site"
        else:
            # outside the range: not a release of the entry (whichever of its sites covers
            # it) nor of the other side of a split entry
            outside = [
                v
                for v in versions
                if not any(v in e.releases for e in families[split_family(entry.id)])
            ]
            for site in entry.sites:
                _site(entry, site, versions, report, outside)
        reports.append(report)
    return reports
