"""Build the site index from a release list: fetch each release, extract, merge, write.

The release list (``catalog/index/releases.json``) names every release per project, oldest
first; a release is fetched with :func:`~errhints._maintain.releases.fetch_release` (cached
download) and extracted once (the result is cached next to the download, keyed by the
extraction format). Building twice from the same list gives the same bytes.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..._core.releases import version_key
from ..._packages import PROJECTS
from ..releases import default_cache_dir, fetch_release, top_level
from .extract import EXTRACT_FORMAT, FileSites, ReleaseSites, extract_release
from .lookalikes import LOOKALIKE_RELEASES, lookalike_keys
from .merge import LineMode, Site, collapse_lines, merge_project
from .options import RENAMES, checked_renames, merge_options, release_options
from .write import data_size, write_index

__all__ = [
    "DEFAULT_OUT",
    "PROJECT_DISTS",
    "ZIP_BUDGET",
    "BuildResult",
    "build_index",
    "default_release_list",
    "load_release_list",
    "project_options",
    "release_sites",
    "sort_releases",
]

#: The shipped index directory of a checkout.
DEFAULT_OUT = Path(__file__).resolve().parents[4] / "catalog" / "index"
#: The distributions each project was published as, oldest name first (``_packages``).
PROJECT_DISTS = {p.name: tuple(reversed(p.distributions)) for p in PROJECTS}
#: Wheel growth allowed for the index (zip-deflated bytes).
ZIP_BUDGET = 4_000_000

ReleaseList = dict[str, list[tuple[str, str]]]
Progress = Callable[[str], None]


@dataclass(slots=True)
class BuildResult:
    """What a build wrote: sizes, counts and the line mode the budget allowed."""

    out: Path
    sites: int
    unkeyed: int
    raw_bytes: int
    zip_bytes: int
    lines: LineMode
    per_project: dict[str, int] = field(default_factory=dict)


def sort_releases(project: str, releases: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Oldest first; at an equal version, the earlier distribution name first."""
    order = PROJECT_DISTS.get(project, ())
    rank = {d: i for i, d in enumerate(order)}
    unique = sorted(set(releases), key=lambda r: (version_key(r[1]), rank.get(r[0], 99), r[0]))
    return unique


def load_release_list(path: Path) -> ReleaseList:
    """Read ``releases.json``: ``{"projects": {project: [[dist, version], ...]}}``."""
    data = json.loads(path.read_text("utf-8"))
    return {
        str(p): sort_releases(str(p), [(str(d), str(v)) for d, v in rs])
        for p, rs in data["projects"].items()
    }


def default_release_list(cache_dir: Path | None = None) -> ReleaseList:
    """The releases already in the download cache, per project (a first build's list)."""
    root = (cache_dir or default_cache_dir() or Path(".")) / "releases"
    found: ReleaseList = {p: [] for p in PROJECT_DISTS}
    if root.is_dir():
        for entry in sorted(root.iterdir()):
            for project, dists in PROJECT_DISTS.items():
                for dist in dists:
                    prefix = f"{dist}-"
                    version = entry.name[len(prefix) :]
                    if entry.name.startswith(prefix) and (entry / top_level(dist)).is_dir():
                        try:
                            version_key(version)
                        except ValueError:
                            continue
                        found[project].append((dist, version))
    return {p: sort_releases(p, rs) for p, rs in found.items()}


def _extract_cache(cache_dir: Path | None) -> Path | None:
    """Where per-release extraction results are cached: keyed by format and Python version.

    ``ast.unparse`` (guards, placeholders) may print differently on another Python, so a
    build reproduces its bytes only with the same minor version (the project uses 3.11).
    """
    root = cache_dir or default_cache_dir()
    if root is None:
        return None
    python = f"py{sys.version_info[0]}.{sys.version_info[1]}"
    return root / "index" / f"extract-v{EXTRACT_FORMAT}-{python}"


def release_sites(
    releases: Sequence[tuple[str, str]],
    *,
    cache_dir: Path | None = None,
    sources: Mapping[tuple[str, str], Path] | None = None,
    progress: Progress | None = None,
) -> Iterator[ReleaseSites]:
    """The extracted sites of each release in order, one in memory at a time.

    ``sources`` gives release directories directly (tests); others are fetched.
    """
    files: dict[tuple[str, str], FileSites] = {}
    extract_cache = _extract_cache(cache_dir) if sources is None else None
    for dist, version in releases:
        root = _release_root(dist, version, cache_dir, sources)
        if progress:
            progress(f"extracting {dist}=={version}")
        yield extract_release(
            dist, version, root, top_level(dist), cache_dir=extract_cache, file_cache=files
        )


def _release_root(
    dist: str,
    version: str,
    cache_dir: Path | None,
    sources: Mapping[tuple[str, str], Path] | None,
) -> Path:
    if sources is not None:
        return sources[dist, version]
    return fetch_release(dist, version, cache_dir)


def project_options(
    project: str,
    releases: Sequence[tuple[str, str]],
    *,
    cache_dir: Path | None = None,
    sources: Mapping[tuple[str, str], Path] | None = None,
) -> dict[str, dict[str, list[int]]]:
    """The options table of one project (``names.json``), from its releases in order."""
    per_release = [
        release_options(project, _release_root(dist, version, cache_dir, sources), top_level(dist))
        for dist, version in releases
    ]
    return merge_options(per_release)


def _counted(
    stream: Iterator[ReleaseSites], into: dict[str, dict[str, int]]
) -> Iterator[ReleaseSites]:
    """Pass releases through, recording each one's site and non-site counts in ``into``."""
    for rel in stream:
        tally = dict(rel.counts)
        for site in rel.sites:
            tally[site.kind] = tally.get(site.kind, 0) + 1
        into[f"{rel.dist}=={rel.version}"] = dict(sorted(tally.items()))
        yield rel


def build_index(
    release_list: Mapping[str, Sequence[tuple[str, str]]],
    out: Path = DEFAULT_OUT,
    *,
    cache_dir: Path | None = None,
    sources: Mapping[tuple[str, str], Path] | None = None,
    lines: LineMode | None = None,
    budget: int = ZIP_BUDGET,
    progress: Progress | None = None,
    renames: Path | None = RENAMES,
    lookalikes: Mapping[str, Sequence[str]] = LOOKALIKE_RELEASES,
) -> BuildResult:
    """Build and write the index of ``release_list`` into ``out``.

    ``renames`` is the curated rename list (``None``: none), checked against the releases' options
    (:class:`~errhints._maintain.index.options.RenameError` when one contradicts them).
    ``lookalikes`` names the releases of look-alike projects whose messages are recorded
    (``lookalikes.json``; ``{}`` for none).
    ``lines=None`` keeps a line per run of releases with the same line when that fits
    ``budget`` (zip-deflated bytes), else only each run's line at its last release.
    """
    sites: list[Site] = []
    counts: dict[str, dict[str, dict[str, int]]] = {}
    options: dict[str, dict[str, dict[str, list[int]]]] = {}
    lists = {p: sort_releases(p, rs) for p, rs in sorted(release_list.items())}
    for project, releases in lists.items():
        per_release: dict[str, dict[str, int]] = {}
        stream = release_sites(releases, cache_dir=cache_dir, sources=sources, progress=progress)
        sites.extend(merge_project(project, _counted(stream, per_release)))
        counts[project] = per_release
        options[project] = project_options(project, releases, cache_dir=cache_dir, sources=sources)
    names = {
        "projects": options,
        "renames": checked_renames(
            options, {p: [v for _, v in rs] for p, rs in lists.items()}, renames
        )
        if renames is not None
        else [],
    }
    shared = {
        "projects": lookalike_keys(lookalikes, cache_dir=cache_dir, sources=sources, within=sites)
        if lookalikes
        else {},
    }
    mode: LineMode = lines or "all"
    if mode == "last":
        collapse_lines(sites)
    stats = write_index(out, sites, lists, counts, names, shared)
    raw, packed = data_size(out)
    if lines is None and packed > budget:
        if progress:
            progress(f"{packed} bytes compressed exceed {budget}: keeping one line per range")
        collapse_lines(sites)
        mode = "last"
        stats = write_index(out, sites, lists, counts, names, shared)
        raw, packed = data_size(out)
    per_project: dict[str, int] = {}
    for site in sites:
        per_project[site.project] = per_project.get(site.project, 0) + 1
    return BuildResult(out, stats["sites"], stats["unkeyed"], raw, packed, mode, per_project)
