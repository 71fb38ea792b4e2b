"""Identify a failure no curated entry explains: where and when its message is raised.

The site index (``catalog/index/``, built by ``errhints catalog index build`` from the released
sources) holds every raise, assert and logged error of SGLang and LlamaFactory whose message
has literal text, as a template with its path, function, release ranges, guard condition and
the settings it reads. A message is matched to templates by their literal parts in linear
time (:class:`~errhints._core.template.Template`), after loading only the few small shards
its words select. It says where and when, never why.

Loaded lazily on first use (never by ``import errhints`` or ``install()``), thread-safe, no
network, data only (JSON). Every public function returns an empty result on any internal
error instead of raising.
"""

from __future__ import annotations

import json
import os
import re
import threading
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar, cast

from .._config import ENV_SITEINDEX_DIR
from .._facts.model import Frame
from .._packages import PROJECTS, project_named
from .releases import ReleaseRange, version_key
from .template import Template, TemplateError, parse_template

__all__ = [
    "ENV_SITEINDEX_DIR",
    "FORMAT",
    "Identified",
    "function_bucket",
    "function_history",
    "identify",
    "key_bucket",
    "release_list",
    "releases",
    "reset",
    "site_counts",
    "sites_at",
    "template_keywords",
    "variants",
]

#: The data format this reader understands (``manifest.json`` and ``releases.json``).
FORMAT = 1
#: Key words are runs of ASCII letters of at least this length.
MIN_KEY_LEN = 3
#: Messages longer than this are only matched on their first characters' words.
MAX_MESSAGE = 100_000
#: Lines of a multi-line message tried one by one when the whole message fits nothing.
MAX_LINES = 40

_WORD = re.compile(r"[a-z]+")
T = TypeVar("T")
_PROJECTS = {
    **{project.name: project.name for project in PROJECTS},
    **{name: project.name for project in PROJECTS for name in project.import_names},
}
_KIND_RANK = {"raise": 0, "assert": 1, "log": 2, "warning": 3}
_PYDANTIC_PREFIXES = ("Value error, ", "Assertion failed, ")


def template_keywords(template: str) -> list[str]:
    """The whole words of a template's literal text (lower-case letters, 3 or more).

    A word touching a placeholder is left out: the placeholder's value may extend it in the
    message. Shared by the index writer (to choose each template's key word) and the lookup.
    """
    try:
        parsed = parse_template(template)
    except TemplateError:
        return []
    words: list[str] = []
    pieces = parsed.literals
    last = len(pieces) - 1
    for i, piece in enumerate(pieces):
        lower = piece.lower()
        for m in _WORD.finditer(lower):
            if len(m.group()) < MIN_KEY_LEN:
                continue
            if m.start() == 0 and i > 0:
                continue
            if m.end() == len(lower) and i < last:
                continue
            words.append(m.group())
    return words


def key_bucket(word: str, shards: int) -> int:
    """The shard of a key word."""
    return zlib.crc32(word.encode("utf-8")) % shards


def function_bucket(function: str, shards: int) -> int:
    """The shard of a function's path history."""
    return zlib.crc32(function.encode("utf-8")) % shards


@dataclass(frozen=True, slots=True)
class Identified:
    """One indexed site a message fits: where and when it is raised (never why)."""

    project: str
    exception: str
    template: str
    kind: str  # "raise", "assert", "log" or "warning"
    path: str  # at the newest release it exists in
    function: str
    releases: ReleaseRange | tuple[ReleaseRange, ...]
    line: int  # at the newest release it exists in
    guard: str
    settings: tuple[str, ...]
    url: str
    candidates: int  # how many indexed sites share this template
    on_stack: bool = False
    #: Every path the site had, oldest first (``path`` is the last of them).
    paths: tuple[str, ...] = ()
    #: ``(releases, path, line)`` per run of releases with one path and line, oldest first.
    runs: tuple[tuple[ReleaseRange, str, int], ...] = ()

    @property
    def ranges(self) -> tuple[ReleaseRange, ...]:
        """The release ranges as a tuple, whether one or several."""
        return self.releases if isinstance(self.releases, tuple) else (self.releases,)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view."""
        return {
            "project": self.project,
            "exception": self.exception,
            "template": self.template,
            "kind": self.kind,
            "path": self.path,
            "function": self.function,
            "releases": [r.to_dict() for r in self.ranges],
            "line": self.line,
            "guard": self.guard,
            "settings": list(self.settings),
            "url": self.url,
            "candidates": self.candidates,
            "on_stack": self.on_stack,
            "paths": list(self.paths),
            "runs": [
                {"releases": r.to_dict(), "path": path, "line": line} for r, path, line in self.runs
            ],
        }


@dataclass(slots=True)
class _Row:
    """One site row of a shard, its template parsed once."""

    data: list[Any]
    template: Template
    candidates: int
    base: Identified | None = None
    paths: frozenset[str] = frozenset()
    #: Text the message must start with (a cheap test before :meth:`Template.match`).
    head: str = ""


class _Index:
    """The loaded parts of one index directory; shards are read on first need."""

    def __init__(self, root: str) -> None:
        self.root = root
        manifest = self._json("manifest.json")
        release_data = self._json("releases.json")
        if manifest.get("format") != FORMAT or release_data.get("format") != FORMAT:
            raise ValueError("site index format differs")
        self.site_shards = int(manifest["site_shards"])
        self.function_shards = int(manifest["function_shards"])
        self.keys = frozenset(manifest["keys"])
        self.releases: dict[str, list[tuple[str, str]]] = {
            str(p): [(str(d), str(v)) for d, v in rs] for p, rs in release_data["projects"].items()
        }
        self._shards: dict[int, dict[str, Any]] = {}
        self._groups: dict[str, list[_Row]] = {}
        self._functions: dict[int, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def _json(self, name: str) -> dict[str, Any]:
        with open(os.path.join(self.root, name), encoding="utf-8") as handle:
            data = json.load(handle)
        if not isinstance(data, dict):
            raise ValueError(f"{name} is not an object")
        return data

    def group(self, word: str) -> list[_Row]:
        """The rows keyed by ``word`` (empty when the word is no key); parsed on first use."""
        rows = self._groups.get(word)
        if rows is not None:
            return rows
        if word not in self.keys:
            return []
        with self._lock:
            rows = self._groups.get(word)
            if rows is None:
                shard = self._shard(key_bucket(word, self.site_shards))
                rows = self._rows(shard.get(word, []))
                self._groups[word] = rows
        return rows

    def _shard(self, bucket: int) -> dict[str, Any]:
        """The raw rows of one shard file (call with the lock held)."""
        shard = self._shards.get(bucket)
        if shard is None:
            shard = self._json(f"sites/{bucket:03d}.json")
            self._shards[bucket] = shard
        return shard

    @staticmethod
    def _rows(raw: list[Any]) -> list[_Row]:
        counts: dict[str, int] = {}
        for row in raw:
            counts[row[3]] = counts.get(row[3], 0) + 1
        parsed: list[_Row] = []
        for row in raw:
            try:
                template = parse_template(row[3])
            except TemplateError:
                continue
            paths = frozenset(run[3] for run in row[7])
            lits = template.literals
            head = lits[0].rstrip() if len(lits) == 1 else lits[0]
            parsed.append(_Row(row, template, counts[row[3]], paths=paths, head=head))
        return parsed

    def shard_groups(self, bucket: int) -> list[str]:
        """The key words of one shard (for :func:`sites_at`)."""
        with self._lock:
            return sorted(self._shard(bucket))

    def functions(self, function: str) -> dict[str, Any]:
        """``{project: {function: [path history, shards]}}`` of the function's shard."""
        bucket = function_bucket(function, self.function_shards)
        data = self._functions.get(bucket)
        if data is None:
            with self._lock:
                data = self._functions.get(bucket)
                if data is None:
                    data = self._json(f"functions/{bucket:02d}.json")
                    self._functions[bucket] = data
        return data

    def identified(self, row: _Row) -> Identified:
        """The row as an :class:`Identified` (built once per row)."""
        if row.base is not None:
            return row.base
        project, kind, exception, template, function, guard, settings, runs = row.data
        versions = self.releases[project]
        spans: list[list[int]] = []
        for first, last, _line, _path in sorted(runs, key=lambda r: (r[0], r[1])):
            if spans and first <= spans[-1][1] + 1:
                spans[-1][1] = max(spans[-1][1], last)
            else:
                spans.append([first, last])
        ranges = tuple(ReleaseRange(versions[a][1], versions[b][1]) for a, b in spans)
        newest = max(runs, key=lambda r: r[1])
        paths: list[str] = []
        history: list[tuple[ReleaseRange, str, int]] = []
        for run in sorted(runs, key=lambda r: (r[0], r[1])):
            if run[3] not in paths:
                paths.append(run[3])
            span = ReleaseRange(versions[run[0]][1], versions[run[1]][1])
            history.append((span, str(run[3]), int(run[2])))
        _dist, version = versions[newest[1]]
        known = project_named(project)
        url = known.source_url(version, newest[3], int(newest[2])) if known else ""
        row.base = Identified(
            project=project,
            exception=exception,
            template=template,
            kind=kind,
            path=newest[3],
            function=function,
            releases=ranges[0] if len(ranges) == 1 else ranges,
            line=int(newest[2]),
            guard=guard,
            settings=tuple(settings),
            url=url,
            candidates=row.candidates,
            paths=tuple(paths),
            runs=tuple(history),
        )
        return row.base


_lock = threading.RLock()  # a table may read another one while it loads
_state: dict[tuple[str, str], Any] = {}


_default_dir: list[str] = []


def _data_dir() -> str:
    """The index directory: ``ERRHINTS_SITEINDEX_DIR``, the wheel's, else the checkout's."""
    override = os.environ.get(ENV_SITEINDEX_DIR, "")
    if override.strip():
        return override.strip()
    if not _default_dir:
        package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
        packaged = os.path.join(package, "catalog", "index")
        if not os.path.isdir(packaged):  # a checkout: <root>/src/errhints
            packaged = os.path.join(os.path.dirname(os.path.dirname(package)), "catalog", "index")
        _default_dir.append(packaged)
    return _default_dir[0]


def loaded(name: str, load: Callable[[str], T]) -> T | None:
    """``load(index directory)``, run once per directory and ``name`` under a lock and kept;
    ``None`` (kept too) when it raises. How every table of the index directory is read."""
    key = (_data_dir(), name)
    if key in _state:
        return cast("T | None", _state[key])
    with _lock:
        if key not in _state:
            try:
                _state[key] = load(key[0])
            except Exception:
                _state[key] = None
        return cast("T | None", _state[key])


def read_json(root: str, name: str) -> dict[str, Any]:
    """A JSON object of the index directory, checked for this reader's format."""
    with open(os.path.join(root, name), encoding="utf-8") as handle:
        data = json.load(handle)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{name}: not a format {FORMAT} object")
    return data


def _index() -> _Index | None:
    return loaded("sites", _Index)


def reset() -> None:
    """Forget everything loaded from the index directory (tests, or after rebuilding it)."""
    with _lock:
        _state.clear()


def variants(message: str) -> list[str]:
    """Texts a raised message may have been wrapped into, the message itself first."""
    out = [message]
    if len(message) >= 2 and message[0] == message[-1] and message[0] in "'\"":
        out.append(message[1:-1])  # KeyError's repr
    if "\n" in message:
        for line in message.splitlines()[:MAX_LINES]:
            line = line.strip()
            for prefix in _PYDANTIC_PREFIXES:
                if line.startswith(prefix):
                    line = line[len(prefix) :]
                    cut = line.rfind(" [type=")
                    if cut > 0:
                        line = line[:cut]
            if line and line not in out:
                out.append(line)
    return out


def _on_stack(row: _Row, frames: Sequence[Frame]) -> bool:
    function = row.data[4]
    short = function.rpartition(".")[2]
    for frame in frames:
        if frame.path is None or frame.path not in row.paths:
            continue
        if frame.function == function:
            return True
        if not frame.qualified and frame.function.rpartition(".")[2] == short:
            return True
    return False


def _short(name: str) -> str:
    return name.rpartition(".")[2]


def identify(
    type_name: str,
    message: str,
    frames: Sequence[Frame] = (),
    *,
    warnings: bool = False,
    limit: int = 5,
) -> list[Identified]:
    """The indexed sites ``message`` fits, best first (at most ``limit``).

    A site whose path and function are on ``frames`` ranks first, then sites whose exception
    type agrees with ``type_name``, then raises before asserts before logged errors, then the
    template with more literal text. Warnings are included only with ``warnings=True``.
    """
    try:
        return _identify(type_name, message, frames, warnings, limit)
    except Exception:
        return []


def _identify(
    type_name: str, message: str, frames: Sequence[Frame], warnings: bool, limit: int
) -> list[Identified]:
    if limit <= 0 or not isinstance(message, str) or not message:
        return []
    index = _index()
    if index is None:
        return []
    wanted = _short(type_name or "")
    hits: dict[int, tuple[tuple[int, int, int, int, int], _Row]] = {}
    for text in variants(message[:MAX_MESSAGE] if len(message) > MAX_MESSAGE else message):
        words = set(_WORD.findall(text.lower())) & index.keys
        for word in sorted(words):
            for row in index.group(word):
                if not text.startswith(row.head) or id(row) in hits:
                    continue
                kind = row.data[1]
                if kind == "warning" and not warnings:
                    continue
                if row.template.match(text) is None:
                    continue
                exception = _short(row.data[2])
                agrees = (exception == wanted) if exception else not wanted
                stack = bool(frames) and _on_stack(row, frames)
                newest = max(run[1] for run in row.data[7])
                rank = (
                    int(not stack),
                    int(not agrees),
                    _KIND_RANK.get(kind, 4),
                    -row.template.literal_chars,
                    -int(newest),
                )
                hits[id(row)] = (rank, row)
        if hits:
            break
    ordered = sorted(hits.values(), key=lambda h: (h[0], h[1].data[3], h[1].data[4]))
    out: list[Identified] = []
    for rank, row in ordered[:limit]:
        found = index.identified(row)
        out.append(replace(found, on_stack=True) if rank[0] == 0 else found)
    return out


def _function_record(package: str, function: str) -> tuple[_Index, str, list[Any]] | None:
    """The loaded index, the project, and the function's record (paths, shard buckets)."""
    index = _index()
    project = _PROJECTS.get(package)
    if index is None or project is None:
        return None
    record = index.functions(function).get(project, {}).get(function)
    return (index, project, record) if record else None


def function_history(package: str, function: str) -> list[tuple[str, ReleaseRange]]:
    """The paths ``function`` (a qualname) had across the indexed releases, oldest first."""
    try:
        found = _function_record(package, function)
        if found is None:
            return []
        index, project, record = found
        versions = index.releases[project]
        return [
            (str(path), ReleaseRange(versions[first][1], versions[last][1]))
            for path, first, last in record[0]
        ]
    except Exception:
        return []


def sites_at(package: str, path: str, function: str) -> list[Identified]:
    """The indexed sites of ``function`` at ``path`` (in any release), in source order."""
    try:
        known = _function_record(package, function)
        if known is None:
            return []
        index, project, record = known
        found: list[_Row] = []
        for bucket in record[1]:
            for word in index.shard_groups(int(bucket)):
                rows = index.group(word)
                found.extend(
                    r for r in rows if r.data[0] == project and r.data[4] == function
                    and path in r.paths
                )  # fmt: skip
        items = [index.identified(r) for r in found]
        return sorted(items, key=lambda i: (i.line, i.kind, i.template))
    except Exception:
        return []


def site_counts() -> dict[str, int]:
    """Site identities per project (``stats.json`` of the index); ``{}`` if unavailable."""
    try:
        with open(os.path.join(_data_dir(), "stats.json"), encoding="utf-8") as handle:
            sites = json.load(handle).get("sites", {})
        return {str(k): int(v) for k, v in sites.items()}
    except Exception:
        return {}


def release_list(project: str) -> list[tuple[str, str]]:
    """``[(distribution, version), ...]`` of ``project`` exactly as the index lists them: the
    list that the index's release numbers (and ``names.json``'s) count in."""
    try:
        index = _index()
        return list(index.releases.get(project, [])) if index is not None else []
    except Exception:
        return []


def releases(package: str) -> list[str]:
    """The releases the index was built from, oldest first (``llmtuner``: its own only)."""
    try:
        index = _index()
        project = _PROJECTS.get(package)
        if index is None or project is None:
            return []
        chosen = [
            v for d, v in index.releases.get(project, []) if package != "llmtuner" or d == package
        ]
        out: list[str] = []
        for version in chosen:
            if version not in out:
                out.append(version)
        return sorted(out, key=version_key)
    except Exception:
        return []
