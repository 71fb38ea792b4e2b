"""Check the catalog's facts against the released sources: ``errhints catalog verify``.

For each entry the released source of its package (downloaded once with ``pip download`` into
a cache, or given as a directory) must still raise the template's literal text at each site's
path and function, hold each context frame, and know each flag, key and environment variable
the fixes mention. Sources are only parsed with :mod:`ast`, never imported or run.
"""

from __future__ import annotations

import ast
import difflib
import json
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .._core.catalog import ContextFrame, Entry, mention_range
from .._core.releases import ReleaseRange
from .._core.template import Template
from .names import INDEX_FILE, ReleaseIndex, build_index
from .releases import RELEASE_MARKER, ReleaseKey, release_top, top_level
from .report import Category, CheckResult, EntryReport, Status, VerifyReport
from .source import Collector, Fragment, Module, parse_source

__all__ = [
    "CheckResult",
    "EntryReport",
    "Release",
    "ReleaseIndex",
    "VerifyReport",
    "build_index",
    "needed_releases",
    "verify_catalog",
]

_SEP = "\x01"  # between two separately built strings
_MAX_MATCHES = 64


class Release:
    """One release's source directory: parsed modules on demand and the mention index."""

    def __init__(self, package: str, version: str, root: Path) -> None:
        self.package = package
        self.version = version
        self.root = root
        self.label = f"{package}=={version}"
        self._modules: dict[str, Module | str] = {}
        self._index: ReleaseIndex | None = None
        self._server_flags: frozenset[str] | None = None
        #: The import directory the release really has (``llmtuner`` for early LlamaFactory).
        self.root_package = release_top(package, root) or top_level(package)

    def module(self, path: str) -> Module | str:
        """The parsed file at a package-relative path, or why there is none.

        A catalog path under the project's current name is read under the name this release
        was published with (``llamafactory/x.py`` in an ``llmtuner`` release).
        """
        head, sep, rest = path.partition("/")
        if sep and head != self.root_package and head == top_level(self.package):
            path = f"{self.root_package}/{rest}"
        if path in self._modules:
            return self._modules[path]
        parts = path.split("/")
        result: Module | str
        if any(part in ("", ".", "..") for part in parts) or not path.endswith(".py"):
            result = f"{path} is not a package-relative source path"
        else:
            file = self.root.joinpath(*parts)
            if not file.is_file():
                result = f"{path} does not exist in {self.label}"
            else:
                try:
                    result = Module(self, path, parse_source(file.read_bytes(), str(file)))
                except SyntaxError as err:
                    result = f"{path} cannot be parsed: {err.msg} (line {err.lineno})"
                except (OSError, ValueError, RecursionError) as err:
                    result = f"{path} cannot be read: {err}"
        self._modules[path] = result
        return result

    def module_by_dotted(self, dotted: str) -> Module | None:
        """The parsed module ``a.b.c`` of this release (``a/b/c.py`` or ``a/b/c/__init__.py``)."""
        if not dotted or dotted.split(".")[0] != self.root_package:
            return None
        base = dotted.replace(".", "/")
        for candidate in (f"{base}.py", f"{base}/__init__.py"):
            if self.root.joinpath(*candidate.split("/")).is_file():
                found = self.module(candidate)
                return found if isinstance(found, Module) else None
        return None

    def server_flags(self) -> frozenset[str]:
        """The flags the release's server command accepts (SGLang; empty for other projects)."""
        if self._server_flags is None:
            from .index.options import release_options

            found = release_options(self.package, self.root, self.root_package).get("flags")
            self._server_flags = frozenset(found or ())
        return self._server_flags

    def index(self, progress: Callable[[str], None] | None = None) -> ReleaseIndex:
        """The mention index: read from the release's cache file, else built (and saved)."""
        if self._index is not None:
            return self._index
        cache = self.root / INDEX_FILE
        if cache.is_file():
            try:
                self._index = ReleaseIndex.from_json(json.loads(cache.read_text("utf-8")))
                return self._index
            except (OSError, ValueError, KeyError, TypeError):
                pass
        if progress:
            progress(f"indexing {self.label} (once; cached afterwards)")
        self._index = build_index(self.root)
        if (self.root / RELEASE_MARKER).is_file():  # a directory errhints fetched: keep it
            tmp = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
            try:
                tmp.write_text(json.dumps(self._index.to_json()), encoding="utf-8")
                os.replace(tmp, cache)
            except OSError:
                tmp.unlink(missing_ok=True)
        return self._index


# --------------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Found:
    """Where a template's pieces were found: first line, accepted line range, description."""

    line: int
    span: tuple[int, int]
    where: str


def _stream(fragments: Sequence[Fragment]) -> tuple[str, list[int]]:
    """Join fragments into one searchable text; return it with each fragment's offset."""
    offsets: list[int] = []
    pos = 0
    for frag in fragments:
        offsets.append(pos)
        pos += len(frag.text) + 1
    return _SEP.join(f.text for f in fragments), offsets


def _fragment_at(offsets: list[int], pos: int) -> int:
    """Index of the fragment holding stream offset ``pos``."""
    lo, hi = 0, len(offsets) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if offsets[mid] <= pos:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _find_pieces(
    fragments: Sequence[Fragment], pieces: Sequence[str]
) -> tuple[list[tuple[int, int]], str]:
    """Every place the pieces occur in order: (first, last) fragment indexes; or the miss."""
    text, offsets = _stream(fragments)
    matches: list[tuple[int, int]] = []
    start = text.find(pieces[0])
    if start < 0:
        return [], f"{pieces[0]!r} is not built there"
    while start >= 0 and len(matches) < _MAX_MATCHES:
        pos = start + len(pieces[0])
        last = start
        for i, piece in enumerate(pieces[1:], 1):
            found = text.find(piece, pos)
            if found < 0:
                if matches:
                    return matches, ""
                where = f"(piece {i + 1} of {len(pieces)}) is not built after {pieces[i - 1]!r}"
                return [], f"{piece!r} {where}"
            last = found
            pos = found + len(piece)
        matches.append((_fragment_at(offsets, start), _fragment_at(offsets, last)))
        start = text.find(pieces[0], start + 1)
    return matches, ""


def _span(collector: Collector, fragments: Sequence[Fragment], first: int, last: int) -> _Found:
    """The lines a match covers, extended to the raise of a message kept in a variable."""
    lo, hi = fragments[first].start, fragments[last].end
    if fragments[last].stored:
        later = [span for span in collector.raises if span[0] >= fragments[last].start]
        if later:
            hi = max(hi, min(later)[1])
    return _Found(line=lo, span=(lo, hi), where="")


def _locate(
    module: Module, function: str, template: Template, hint: int | None
) -> tuple[_Found | None, str]:
    """Find the template's literal pieces in the strings ``function`` builds, in order."""
    scopes = module.scope_nodes(function)
    if not scopes:
        return None, _missing_function(module, function)
    pieces = [p for p in template.literals if p]
    if not pieces:
        first = scopes[0]
        line = getattr(first, "lineno", 1)
        return _Found(line, (line, getattr(first, "end_lineno", None) or line), ""), ""
    miss = ""
    candidates: list[_Found] = []
    for scope in scopes:
        collector = module.fragments(scope)
        fragments = collector.fragments
        matches, miss_here = _find_pieces(fragments, pieces)
        miss = miss or miss_here
        candidates.extend(_span(collector, fragments, a, b) for a, b in matches)
        if not matches:
            extra = _class_fragments(module, collector)
            if extra:
                combined = list(fragments) + [frag for frag, _ in extra]
                matches, _ = _find_pieces(combined, pieces)
                for a, b in matches:
                    found = _span(collector, combined, a, b)
                    names = {extra[i - len(fragments)][1] for i in (a, b) if i >= len(fragments)}
                    where = ", ".join(sorted(names))
                    candidates.append(_Found(found.line, found.span, where))
    if not candidates:
        return None, f"template text not found in {function}: {miss}{_elsewhere(module, pieces)}"
    for found in candidates:
        if hint is not None and found.span[0] <= hint <= found.span[1]:
            return found, ""
    return candidates[0], ""


def _class_fragments(module: Module, collector: Collector) -> list[tuple[Fragment, str]]:
    """Strings built by the exception classes the function raises (``__init__``/``__str__``)."""
    out: list[tuple[Fragment, str]] = []
    seen: set[int] = set()
    for name, (start, end) in collector.raised:
        resolved = module.resolve_class(name)
        depth = 0
        while resolved is not None and depth < 4 and id(resolved[1]) not in seen:
            owner, cls = resolved
            seen.add(id(cls))
            for method in ("__init__", "__str__", "__repr__", "__new__"):
                for scope in owner.defs.get(f"{cls.name}.{method}", []):
                    for frag in owner.fragments(scope).fragments:
                        moved = Fragment(frag.text, start, end)
                        out.append((moved, f"{cls.name}.{method}"))
            base = cls.bases[0] if cls.bases else None
            resolved = owner.resolve_class(base.id) if isinstance(base, ast.Name) else None
            depth += 1
    return out


def _missing_function(module: Module, function: str) -> str:
    """Why a qualname is not in a file, with the qualnames that share its last part."""
    last = function.rpartition(".")[2]
    similar = sorted(q for q in module.defs if q.rpartition(".")[2] == last)
    if not similar:
        similar = difflib.get_close_matches(function, list(module.defs), n=3)
    hint = f" (there: {', '.join(similar[:5])})" if similar else ""
    return f"function {function} not found in {module.path}{hint}"


def _elsewhere(module: Module, pieces: Sequence[str]) -> str:
    """Where else in the file the text is built, to help whoever fixes the site."""
    owners = []
    for qualname, nodes in module.defs.items():
        for node in nodes:
            if isinstance(node, ast.ClassDef):
                continue
            fragments = module.fragments(node).fragments
            if fragments and _find_pieces(fragments, pieces)[0]:
                owners.append(f"{qualname} (line {node.lineno})")
    return f"; it is built in {', '.join(owners[:3])}" if owners else ""


def _check_site(
    release: Release, path: str, function: str, template: Template, hint: int | None
) -> CheckResult:
    """Check that a release builds the template's literal text in ``path``:``function``."""
    subject = f"{path}:{function}"
    module = release.module(path)
    if isinstance(module, str):
        return CheckResult("site", subject, release.label, "failed", module)
    try:
        found, why = _locate(module, function, template, hint)
    except RecursionError:
        return CheckResult("site", subject, release.label, "failed", "source nests too deeply")
    if found is None:
        return CheckResult("site", subject, release.label, "failed", why)
    if any(template.literals):
        detail = f"found at line {found.line}"
        detail += f" (built in {found.where})" if found.where else ""
    else:
        detail = f"function at line {found.line} (the template has no literal text)"
    warning = None
    if hint is not None and not found.span[0] <= hint <= found.span[1]:
        warning = f"line moved: found at line {found.line}, the entry says {hint}"
    return CheckResult("site", subject, release.label, "ok", detail, found.line, warning)


def _check_context(release: Release, path: str, function: str | None) -> CheckResult:
    """Check that a context frame's file (and function, if given) exists in the release."""
    subject = f"{path}:{function}" if function else path
    module = release.module(path)
    if isinstance(module, str):
        return CheckResult("context", subject, release.label, "failed", module)
    if function is not None and not module.scope_nodes(function):
        why = _missing_function(module, function)
        return CheckResult("context", subject, release.label, "failed", why)
    return CheckResult("context", subject, release.label, "ok", "exists")


def _check_mention(
    release: Release, kind: str, name: str, progress: Callable[[str], None] | None
) -> CheckResult:
    """Check that a mentioned flag, key or environment variable exists in the release."""
    index = release.index(progress)
    check = {"flags": "flag", "keys": "key", "env": "env"}[kind]
    found: str | None = None
    pool: Iterable[str] = ()
    if kind == "flags":
        flag = name.split("=", 1)[0].strip()
        server = release.server_flags()
        if flag in server:
            found = "a flag of the server"
        elif flag in index.strings:
            found = "an option string"
        elif flag in index.flags and not server:
            found = "a command-line flag"
        elif flag in index.flags:
            why = "only inside message text, not as an option the release defines"
            return CheckResult(check, name, release.label, "failed", f"found {why}")
        pool = server | index.flags
    elif kind == "keys":
        parts = [p for p in re.split(r"[.\[\]]+", name) if p]
        if name in index.fields or all(p in index.fields for p in parts):
            found = "a config field"
        elif name in index.strings or all(p in index.fields or p in index.strings for p in parts):
            found = "a string key"
        elif name in index.key_words:
            found = "a key the code reads (args.<key> or dict(<key>=...))"
        pool = index.fields
    else:
        if name in index.names:
            found = "an identifier"
        elif name in index.strings:
            found = "a string literal"
        elif name in index.env_words:
            found = "a word in a string"
        pool = index.names | index.env_words
    if found:
        return CheckResult(check, name, release.label, "ok", f"found as {found}")
    similar = [p for p in pool if p[:2] == name[:2]]  # keeps difflib fast on large releases
    close = difflib.get_close_matches(name, similar, n=3, cutoff=0.75)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return CheckResult(check, name, release.label, "failed", f"not found in {release.label}{hint}")


# --------------------------------------------------------------------------------------------
# Verifying a catalog
# --------------------------------------------------------------------------------------------


def _site_package(path: str) -> str:
    """The top-level package a package-relative path lies in."""
    return path.split("/", 1)[0]


def needed_releases(
    entries: Iterable[Entry], target: Mapping[str, str] | None = None
) -> list[ReleaseKey]:
    """The ``(package, version)`` releases verifying these entries reads, sorted."""
    target = target or {}
    keys: set[ReleaseKey] = set()
    for entry in entries:
        if entry.package in target:
            keys.add((entry.package, target[entry.package]))
            continue
        keys.add((entry.package, entry.release))
        for site in entry.sites:
            if _site_package(site.path) == top_level(entry.package):
                keys.add((entry.package, site.release))
        for frame in entry.context:
            if _site_package(frame.path) == top_level(entry.package):
                keys.update((entry.package, v) for v in _frame_releases(entry, frame, target))
        for kind in ("flags", "keys", "env"):
            for mention in entry.mentions.get(kind, ()):
                at = _mention_release(entry, mention_range(mention, entry.releases)[1], target)
                if at is not None:
                    keys.add((entry.package, at))
    return sorted(keys)


def _mention_release(entry: Entry, own: ReleaseRange, target: Mapping[str, str]) -> str | None:
    """Where a mention is checked: the chosen release when the mention holds there, else the
    newest release of its own range (the entry's newest for a bare mention)."""
    if entry.package in target:
        chosen = target[entry.package]
        return chosen if own == entry.releases or chosen in own else None
    return own.last if own.last in entry.releases else entry.release


def _frame_releases(
    entry: Entry, frame: ContextFrame, target: Mapping[str, str]
) -> tuple[str, ...]:
    """Where a context frame is checked: the chosen release, else both ends of its range
    (a frame of a renamed function names the releases it had that name)."""
    if entry.package in target:
        return (target[entry.package],)
    if frame.releases is None or frame.releases == entry.releases:
        return (entry.release,)
    return tuple(dict.fromkeys((frame.releases.first, frame.releases.last)))


class _Verifier:
    """Holds the releases (parsed lazily) while a catalog is verified."""

    def __init__(
        self,
        releases: Mapping[ReleaseKey, Path | None],
        reasons: Mapping[ReleaseKey, str],
        target: Mapping[str, str],
        progress: Callable[[str], None] | None,
    ) -> None:
        self.paths = releases
        self.reasons = reasons
        self.target = target
        self.progress = progress
        self.loaded: dict[ReleaseKey, Release] = {}

    def release(self, package: str, version: str) -> Release | str:
        """The release to check against, or why it is not available."""
        key = (package, version)
        if key in self.loaded:
            return self.loaded[key]
        label = f"{package}=={version}"
        if key not in self.paths:
            return f"no source of {label} was given"
        path = self.paths[key]
        if path is None:
            reason = self.reasons.get(key)
            return f"{label} is not available" + (f": {reason}" if reason else "")
        if release_top(package, path) is None:
            return f"{label} at {path} has no {top_level(package)}/ directory"
        self.loaded[key] = Release(package, version, path)
        return self.loaded[key]

    def entry(self, entry: Entry) -> EntryReport:
        """Verify one entry: its sites, context frames and mentions."""
        checks: list[CheckResult] = []
        version = self.target.get(entry.package, entry.release)
        checks.extend(self._sites(entry, version))
        for frame in entry.context:
            subject = f"{frame.path}:{frame.function}" if frame.function else frame.path
            frame_pkg = _site_package(frame.path)
            if frame_pkg != top_level(entry.package):
                why = f"frame is in {frame_pkg}, not in {entry.package}: not checked"
                checks.append(CheckResult("context", subject, "", "skipped", why))
                continue
            for at in _frame_releases(entry, frame, self.target):
                own = frame.releases
                if own is not None and own != entry.releases and at not in own:
                    why = f"{entry.package}=={at} is outside this frame's releases"
                    checks.append(CheckResult("context", subject, "", "skipped", why))
                    continue
                rel = self.release(entry.package, at)
                if isinstance(rel, str):
                    checks.append(CheckResult("context", subject, "", "skipped", rel))
                else:
                    checks.append(_check_context(rel, frame.path, frame.function))
        for kind in ("flags", "keys", "env"):
            check = {"flags": "flag", "keys": "key", "env": "env"}[kind]
            for mention in entry.mentions.get(kind, ()):
                name, own = mention_range(mention, entry.releases)
                where = _mention_release(entry, own, self.target)
                rel = (
                    self.release(entry.package, where)
                    if where is not None
                    else f"{entry.package}=={version} is outside the releases of this mention"
                )
                if isinstance(rel, str):
                    checks.append(CheckResult(check, name, "", "skipped", rel))
                else:
                    checks.append(_check_mention(rel, kind, name, self.progress))
        for name in entry.mentions.get("external", ()):
            project = name.partition(":")[0]
            why = f"belongs to {project}, not checked against {entry.package}=={version}"
            checks.append(CheckResult("external", name, "", "skipped", why))
        category: Category = (
            "in-package" if entry.sites else ("context" if entry.context else "other")
        )
        # An in-package entry counts as verified only when one of its sites was found.
        deciding = [c for c in checks if c.check == "site"] if entry.sites else checks
        status: Status
        reason = ""
        if any(c.status == "failed" for c in checks):
            status = "failed"
        elif any(c.status == "ok" for c in deciding):
            status = "ok"
        else:
            status = "skipped"
            skipped = [c.detail for c in deciding if c.status == "skipped"]
            reason = skipped[0] if skipped else "nothing to verify (no sites, context or mentions)"
        return EntryReport(entry.id, entry.source, category, status, tuple(checks), reason)

    def _sites(self, entry: Entry, version: str) -> list[CheckResult]:
        """Site checks: each at its own release, or all against a chosen release."""
        top = top_level(entry.package)
        out: list[CheckResult] = []
        if entry.package not in self.target:
            for site in entry.sites:
                subject = f"{site.path}:{site.function}"
                if _site_package(site.path) != top:
                    why = f"site is outside {entry.package}: not checked"
                    out.append(CheckResult("site", subject, "", "skipped", why))
                    continue
                rel = self.release(entry.package, site.release)
                if isinstance(rel, str):
                    out.append(CheckResult("site", subject, "", "skipped", rel))
                else:
                    check = _check_site(rel, site.path, site.function, entry.template, site.line)
                    out.append(check)
            return out
        # A chosen release: each distinct (path, function) once; one found is enough.
        rel = self.release(entry.package, version)
        hints: dict[tuple[str, str], int | None] = {}
        for site in entry.sites:
            key = (site.path, site.function)
            if site.release == version or key not in hints:
                hints[key] = site.line if site.release == version else None
        for (path, function), hint in hints.items():
            subject = f"{path}:{function}"
            if _site_package(path) != top:
                why = f"site is outside {entry.package}: not checked"
                out.append(CheckResult("site", subject, "", "skipped", why))
            elif isinstance(rel, str):
                out.append(CheckResult("site", subject, "", "skipped", rel))
            else:
                out.append(_check_site(rel, path, function, entry.template, hint))
        if any(c.status == "ok" for c in out):
            out = [
                CheckResult(
                    c.check, c.subject, c.release, "skipped", c.detail, None, f"gone: {c.detail}"
                )
                if c.status == "failed"
                else c
                for c in out
            ]
        return out


def verify_catalog(
    entries: Iterable[Entry],
    *,
    releases: Mapping[ReleaseKey, Path | None],
    target: Mapping[str, str] | None = None,
    reasons: Mapping[ReleaseKey, str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> VerifyReport:
    """Check entries against released sources; never downloads anything.

    ``releases`` maps ``(package, version)`` to the directory holding that release's
    ``<package>/`` source tree (``None``: unavailable, ``reasons`` may say why). Entries are
    checked against their pinned releases (each site against its own ``release``), or, for a
    package in ``target`` (``{"sglang": "0.5.24"}``), against that release: then each
    distinct site is looked up there and one found is enough. Entries whose release is
    missing are skipped with the reason.
    """
    started = time.perf_counter()
    verifier = _Verifier(releases, reasons or {}, target or {}, progress)
    reports = tuple(verifier.entry(entry) for entry in entries)
    labels: dict[str, str] = {}
    for (package, version), path in sorted(releases.items()):
        why = (reasons or {}).get((package, version), "not available")
        labels[f"{package}=={version}"] = str(path) if path is not None else f"unavailable: {why}"
    return VerifyReport(reports, labels, time.perf_counter() - started)
