"""The catalog: load and validate TOML entries, from the wheel and from user directories.

Entries are data: read with ``tomllib`` (no object construction, no eval), checked field by
field, and turned into frozen :class:`Entry` records. A bad file is reported as
``file: field: problem`` and skipped; the rest of the catalog keeps working.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .._config import ENV_CATALOG_PATH
from .releases import ReleaseRange, parse_range, version_key
from .template import SHAPES, Template, TemplateError, parse_template

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "Catalog",
    "CatalogProblem",
    "ContextFrame",
    "Entry",
    "Evidence",
    "Fix",
    "Site",
    "builtin_catalog_dir",
    "load_catalog",
    "mention_range",
    "packaged_catalog_path",
    "split_family",
    "user_catalog_dirs",
]

KINDS = ("raise", "assert", "log", "http")
_ID_RE = re.compile(r"^[a-z][a-z0-9_]*\.[a-z0-9]+(?:-[a-z0-9]+)*$")
_REQUIRED = (
    "id",
    "package",
    "title",
    "exception",
    "template",
    "release",
    "meaning",
    "causes",
    "fixes",
)
_OPTIONAL = (
    "carried",
    "kind",
    "origin",
    "related",
    "example",
    "evidence",
    "references",
    "sites",
    "context",
    "mentions",
    "names",
    "shape",
    "shared_with",
    "fixed",
)
FIELDS = frozenset(_REQUIRED + _OPTIONAL)
MENTION_KINDS = ("flags", "keys", "env", "external")
#: What a rejected name can be (``names.kind``): SGLang flags or ``ServerArgs`` arguments,
#: LlamaFactory config keys; the table of ``errhints._core.known_names`` holds each.
NAME_KINDS = ("flags", "fields", "keys")
#: How an evidence message was obtained: a public report, the released code run, a filled template.
EVIDENCE_SOURCES = ("https://", "cpu: ", "filled: ")
_EXTERNAL_RE = re.compile(r"^[A-Za-z0-9_.-]+:\S+$")


@dataclass(frozen=True, slots=True)
class Site:
    """Where the entry's message is raised: package-relative path and qualname, and when.

    ``releases`` is the entry's range unless the site names a narrower one (a message that
    moved to another function between releases has one site per place). ``line`` is a hint
    for the last release of that range, never the key.
    """

    path: str
    function: str
    releases: ReleaseRange
    line: int | None = None

    @property
    def release(self) -> str:
        """The newest release at which this site was verified (the one ``line`` is for)."""
        return self.releases.last


@dataclass(frozen=True, slots=True)
class ContextFrame:
    """A frame that makes a context-conditioned entry apply (function ``None``: any).

    ``releases`` is the entry's range unless the frame names a narrower one: a function that
    was renamed or moved has one frame per name, each verified at the releases it names.
    """

    path: str
    function: str | None = None
    releases: ReleaseRange | None = None


@dataclass(frozen=True, slots=True)
class Fix:
    """A bug behind the message that a later release fixed: from which release, and how.

    ``release`` is the first release of ``package`` with the fix; ``what`` says which cause
    the fix removes; ``reference`` is the public pull request or issue that shows it.
    """

    release: str
    what: str
    reference: str


@dataclass(frozen=True, slots=True)
class Evidence:
    """A real message this entry explains, verbatim, and where it was seen.

    ``source`` is the public report's URL; ``cpu: <package> <release>`` when the message was
    produced by running the released code; ``filled: <package> <release>`` when it was built
    by filling the template with values the code path can produce (the weakest proof).
    """

    message: str
    source: str


@dataclass(frozen=True, slots=True)
class Entry:
    """One catalog entry, validated."""

    id: str
    package: str
    title: str
    exceptions: tuple[str, ...]
    template: Template
    releases: ReleaseRange
    meaning: str
    causes: tuple[str, ...]
    fixes: tuple[str, ...]
    kind: str = "raise"
    origin: str | None = None
    related: tuple[str, ...] = ()
    example: str | None = None
    evidence: tuple[Evidence, ...] = ()
    references: tuple[str, ...] = ()
    sites: tuple[Site, ...] = ()
    context: tuple[ContextFrame, ...] = ()
    mentions: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: For a message that rejects names (unknown flags or keys): ``(kind, placeholder)``.
    names: tuple[str, str] | None = None
    #: The message's shape (``template.SHAPES``), which lets a template with little literal
    #: text (``{name}``) match on text alone: ``"tensor-name"``, ``"names-dataset-info"``.
    shape: str | None = None
    #: Other projects whose own code raises the same words (``transformers``: LlamaFactory
    #: copied HfArgumentParser's message): without the entry's project in view, only ``weak``.
    shared_with: tuple[str, ...] = ()
    #: Bugs behind the message that later releases fixed, oldest fix first.
    fixed: tuple[Fix, ...] = ()
    #: Messages of the error this one wraps (``Cannot access gated repo for url ...`` under
    #: transformers' ``You are trying to access a gated repo.``), matched on text alone.
    carried: tuple[Template, ...] = ()
    #: For the view of one carried message (:meth:`carried_view`), its position, else ``-1``.
    carried_index: int = -1
    source: str = ""
    #: Last dotted part of each exception name, the key the matcher compares.
    exception_short_names: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if not self.exception_short_names:
            short = frozenset(name.rpartition(".")[2] for name in self.exceptions)
            object.__setattr__(self, "exception_short_names", short)

    @property
    def release(self) -> str:
        """The newest release the entry was verified against."""
        return self.releases.last

    @property
    def key(self) -> str:
        """The entry's key in the matcher's tables: its id, or ``id#n`` for a carried view."""
        return self.id if self.carried_index < 0 else f"{self.id}#{self.carried_index}"

    def carried_view(self, n: int) -> Entry:
        """The entry as the matcher sees it through its ``n``-th carried message: the same
        failure and advice, that message for its template, no sites and any exception type."""
        return replace(
            self,
            template=self.carried[n],
            sites=(),
            carried=(),
            carried_index=n,
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view, the shape of ``errhints list --json``."""
        data: dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "package": self.package,
            "exception": list(self.exceptions) if len(self.exceptions) > 1 else self.exceptions[0],
            "template": self.template.source,
            "kind": self.kind,
            "release": self.release,
            "releases": self.releases.to_dict(),
            "sites": [site_dict(s) for s in self.sites],
            "meaning": self.meaning,
            "causes": list(self.causes),
            "fixes": list(self.fixes),
            "related": list(self.related),
            "references": list(self.references),
        }
        if self.origin:
            data["origin"] = self.origin
        if self.context:
            data["context"] = {"frames": [_frame_dict(c, self.releases) for c in self.context]}
        if self.mentions:
            data["mentions"] = {k: list(v) for k, v in self.mentions.items()}
        if self.names:
            data["names"] = {"kind": self.names[0], "placeholder": self.names[1]}
        if self.shape:
            data["shape"] = self.shape
        if self.shared_with:
            data["shared_with"] = list(self.shared_with)
        if self.fixed:
            data["fixed"] = [
                {"release": f.release, "what": f.what, "reference": f.reference} for f in self.fixed
            ]
        if self.example:
            data["example"] = self.example
        if self.evidence:
            data["evidence"] = [{"message": e.message, "source": e.source} for e in self.evidence]
        if self.carried:
            data["carried"] = [t.source for t in self.carried]
        return data


def site_dict(site: Site) -> dict[str, Any]:
    """A site as JSON: path, function, its newest release, line and release range."""
    return {
        "path": site.path,
        "function": site.function,
        "release": site.release,
        "line": site.line,
        "releases": site.releases.to_dict(),
    }


@dataclass(frozen=True, slots=True)
class CatalogProblem:
    """A file that could not be loaded: where, which field, and what is wrong."""

    file: str
    field: str
    problem: str
    #: Whether the file is the user's (``ERRHINTS_CATALOG_PATH``, ``--catalog``), not packaged.
    user: bool = False

    def __str__(self) -> str:
        return f"{self.file}: {self.field}: {self.problem}"


class _Invalid(Exception):
    def __init__(self, field: str, problem: str) -> None:
        super().__init__(field, problem)
        self.field = field
        self.problem = problem


def _str(data: Mapping[str, Any], key: str, *, required: bool = True) -> str | None:
    value = data.get(key)
    if value is None:
        if required:
            raise _Invalid(key, "is required")
        return None
    if not isinstance(value, str) or not value.strip():
        raise _Invalid(key, f"must be a non-empty string, got {type(value).__name__}")
    return value


def _str_list(data: Mapping[str, Any], key: str, *, required: bool = False) -> tuple[str, ...]:
    value = data.get(key)
    if value is None:
        if required:
            raise _Invalid(key, "is required")
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise _Invalid(key, "must be a list of non-empty strings")
    if required and not value:
        raise _Invalid(key, "must not be empty")
    return tuple(value)


def _range(value: object, where: str) -> ReleaseRange:
    try:
        return parse_range(value)
    except ValueError as err:
        raise _Invalid(where, str(err)) from None


def _sites(data: Mapping[str, Any], releases: ReleaseRange) -> tuple[Site, ...]:
    raw = data.get("sites", [])
    if not isinstance(raw, list):
        raise _Invalid("sites", "must be a list of tables")
    sites = []
    for i, item in enumerate(raw):
        where = f"sites[{i}]"
        if not isinstance(item, dict):
            raise _Invalid(where, "must be a table")
        unknown = set(item) - {"path", "function", "release", "line"}
        if unknown:
            raise _Invalid(where, f"unknown keys {sorted(unknown)}")
        path, function = item.get("path"), item.get("function")
        for name, value in (("path", path), ("function", function)):
            if not isinstance(value, str) or not value:
                raise _Invalid(f"{where}.{name}", "must be a non-empty string")
        assert isinstance(path, str) and isinstance(function, str)
        own = item.get("release")
        site_range = releases if own is None else _range(own, f"{where}.release")
        if path.startswith("/") or not path.endswith(".py"):
            raise _Invalid(f"{where}.path", f"must be package-relative and end in .py: {path!r}")
        line = item.get("line")
        if line is not None and (not isinstance(line, int) or isinstance(line, bool) or line < 1):
            raise _Invalid(f"{where}.line", "must be a positive integer")
        sites.append(Site(path=path, function=function, releases=site_range, line=line))
    return tuple(sites)


def _evidence(data: Mapping[str, Any]) -> tuple[Evidence, ...]:
    raw = data.get("evidence", [])
    if not isinstance(raw, list):
        raise _Invalid("evidence", "must be a list of tables {message, source}")
    out = []
    for i, item in enumerate(raw):
        where = f"evidence[{i}]"
        if not isinstance(item, dict) or set(item) != {"message", "source"}:
            raise _Invalid(where, "must be a table with 'message' and 'source'")
        message, source = item["message"], item["source"]
        if not isinstance(message, str) or not message.strip():
            raise _Invalid(f"{where}.message", "must be a non-empty string")
        if not isinstance(source, str) or not source.startswith(EVIDENCE_SOURCES):
            raise _Invalid(
                f"{where}.source",
                "must be an https URL, 'cpu: <package> <release>' or 'filled: <package> <release>'",
            )
        out.append(Evidence(message=message, source=source))
    return tuple(out)


def _fixed(data: Mapping[str, Any], releases: ReleaseRange) -> tuple[Fix, ...]:
    raw = data.get("fixed", [])
    if not isinstance(raw, list):
        raise _Invalid("fixed", "must be a list of tables {release, what, reference}")
    out = []
    for i, item in enumerate(raw):
        where = f"fixed[{i}]"
        if not isinstance(item, dict) or set(item) != {"release", "what", "reference"}:
            raise _Invalid(where, "must be a table with 'release', 'what' and 'reference'")
        release, what, reference = item["release"], item["what"], item["reference"]
        if not isinstance(release, str):
            raise _Invalid(f"{where}.release", "must be a release string")
        try:
            after = version_key(release) > version_key(releases.first)
        except ValueError:
            raise _Invalid(f"{where}.release", f"{release!r} is not a release number") from None
        if not after:
            raise _Invalid(f"{where}.release", "must be newer than the entry's first release")
        if not isinstance(what, str) or not what.strip():
            raise _Invalid(f"{where}.what", "must be a non-empty string")
        if not isinstance(reference, str) or not reference.startswith("https://"):
            raise _Invalid(f"{where}.reference", "must be an https URL")
        out.append(Fix(release=release, what=" ".join(what.split()), reference=reference))
    return tuple(sorted(out, key=lambda f: version_key(f.release)))


def _frame_dict(frame: ContextFrame, releases: ReleaseRange) -> dict[str, Any]:
    out: dict[str, Any] = {"path": frame.path, "function": frame.function}
    if frame.releases is not None and frame.releases != releases:
        out["release"] = frame.releases.to_dict()
    return out


def _context(data: Mapping[str, Any], releases: ReleaseRange) -> tuple[ContextFrame, ...]:
    raw = data.get("context")
    if raw is None:
        return ()
    if not isinstance(raw, dict) or set(raw) - {"frames"}:
        raise _Invalid("context", "must be a table with only 'frames'")
    frames = raw.get("frames", [])
    if not isinstance(frames, list) or not frames:
        raise _Invalid("context.frames", "must be a non-empty list of tables")
    out = []
    for i, item in enumerate(frames):
        where = f"context.frames[{i}]"
        if not isinstance(item, dict) or set(item) - {"path", "function", "release"}:
            raise _Invalid(
                where, "must be a table with 'path' and optional 'function' and 'release'"
            )
        path, function = item.get("path"), item.get("function")
        if not isinstance(path, str) or not path.endswith(".py") or path.startswith("/"):
            raise _Invalid(f"{where}.path", "must be a package-relative path ending in .py")
        if function is not None and (not isinstance(function, str) or not function):
            raise _Invalid(f"{where}.function", "must be a non-empty string")
        own = item.get("release")
        frame_range = releases if own is None else _range(own, f"{where}.release")
        if own is not None and not _within(frame_range, releases):
            raise _Invalid(f"{where}.release", f"must lie within the entry's release {releases}")
        out.append(ContextFrame(path=path, function=function, releases=frame_range))
    return tuple(out)


def _carried(data: Mapping[str, Any]) -> tuple[Template, ...]:
    found: list[Template] = []
    for raw in _str_list(data, "carried"):
        try:
            template = parse_template(raw)
        except TemplateError as err:
            raise _Invalid("carried", str(err)) from None
        if not template.literal_rich:
            raise _Invalid("carried", f"{raw!r} has too little literal text to match on its own")
        found.append(template)
    return tuple(found)


def _within(inner: ReleaseRange, outer: ReleaseRange) -> bool:
    return inner.first in outer and inner.last in outer


def _names(data: Mapping[str, Any], template: Template) -> tuple[str, str] | None:
    raw = data.get("names")
    if raw is None:
        return None
    if not isinstance(raw, dict) or set(raw) != {"kind", "placeholder"}:
        raise _Invalid("names", "must be a table with exactly 'kind' and 'placeholder'")
    kind, placeholder = raw["kind"], raw["placeholder"]
    if kind not in NAME_KINDS:
        raise _Invalid("names.kind", f"must be one of {list(NAME_KINDS)}, got {kind!r}")
    if placeholder not in template.names:
        raise _Invalid("names.placeholder", f"{placeholder!r} is not a placeholder of template")
    return str(kind), str(placeholder)


def _shape(data: Mapping[str, Any]) -> str | None:
    shape = _str(data, "shape", required=False)
    if shape is not None and shape not in SHAPES:
        raise _Invalid("shape", f"must be one of {sorted(SHAPES)}, got {shape!r}")
    return shape


def _mentions(data: Mapping[str, Any], releases: ReleaseRange) -> dict[str, tuple[str, ...]]:
    raw = data.get("mentions")
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise _Invalid("mentions", "must be a table")
    unknown = set(raw) - set(MENTION_KINDS)
    if unknown:
        raise _Invalid("mentions", f"unknown keys {sorted(unknown)}; use {list(MENTION_KINDS)}")
    mentions = {kind: _str_list(raw, kind) for kind in MENTION_KINDS if kind in raw}
    for name in mentions.get("external", ()):
        if not _EXTERNAL_RE.match(name):
            raise _Invalid("mentions.external", f"{name!r} must look like 'project:name'")
    for kind in ("flags", "keys", "env"):
        for name in mentions.get(kind, ()):
            try:
                _, own = mention_range(name, releases)
            except ValueError as err:
                raise _Invalid(f"mentions.{kind}", f"{name!r}: {err}") from None
            if own.last not in releases and own.first not in releases:
                raise _Invalid(f"mentions.{kind}", f"{name!r}: outside the entry's {releases}")
    return mentions


#: The suffix of an older side of an entry split at a release (``x`` and ``x-old``,
#: ``x-legacy``, ``x-old-wording``, ``x-until-0-5-13-post1``, ``x-0-9-0``): one failure, several
#: ranges of releases, each side with the causes and fixes that hold there. A name's own
#: words are not a side: ``package-version-too-old`` is one entry, ``...-too-old-old`` its side.
_SPLIT_SUFFIX = re.compile(
    r"(?:(?<!-too)-old|-(?:legacy|old-wording|until-[\d-]+(?:post\d+)?|\d+(?:-\d+){2,}))$"
)


def split_family(entry_id: str) -> str:
    """The id every side of an entry split at a release shares (``x`` for ``x-legacy``)."""
    return _SPLIT_SUFFIX.sub("", entry_id, count=1)


def mention_range(mention: str, releases: ReleaseRange) -> tuple[str, ReleaseRange]:
    """A mention and the releases it holds for: ``"--cuda-graph-max-bs @ ..0.5.19"`` is a flag
    up to 0.5.19 (``FIRST..``, ``..LAST`` or ``FIRST..LAST``; the entry's range when bare),
    for a fix that names the flag each part of the range has. Raises ``ValueError``."""
    name, at, span = mention.partition("@")
    if not at:
        return mention, releases
    first, dots, last = span.strip().partition("..")
    if not dots:
        raise ValueError("a release qualifier looks like 'FIRST..', '..LAST' or 'FIRST..LAST'")
    own = parse_range({"first": first or releases.first, "last": last or releases.last})
    return name.strip(), own


def entry_from_mapping(
    data: Mapping[str, Any], *, source: str = "", slug: str | None = None
) -> Entry:
    """Validate one parsed entry; raises ``_Invalid`` naming the field at fault."""
    unknown = set(data) - FIELDS
    if unknown:
        raise _Invalid(sorted(unknown)[0], f"unknown field (known: {', '.join(sorted(FIELDS))})")
    entry_id = _str(data, "id")
    assert entry_id is not None
    if not _ID_RE.match(entry_id):
        raise _Invalid("id", f"must look like 'package.some-slug', got {entry_id!r}")
    package = _str(data, "package")
    assert package is not None
    if entry_id.partition(".")[0] != package:
        raise _Invalid("id", f"must start with the package name {package!r}")
    if slug is not None and entry_id.partition(".")[2] != slug:
        raise _Invalid("id", f"must match the file name: expected '{package}.{slug}'")
    title = _str(data, "title")
    assert title is not None
    if len(title) > 90 or "\n" in title:
        raise _Invalid("title", "must be one line of at most 90 characters")
    exc = data.get("exception")
    if isinstance(exc, str) and exc.strip():
        exceptions: tuple[str, ...] = (exc,)
    else:
        exceptions = _str_list(data, "exception", required=True)
    raw_template = _str(data, "template")
    assert raw_template is not None
    try:
        template = parse_template(raw_template)
    except TemplateError as err:
        raise _Invalid("template", str(err)) from None
    kind = _str(data, "kind", required=False) or "raise"
    if kind not in KINDS:
        raise _Invalid("kind", f"must be one of {list(KINDS)}, got {kind!r}")
    related = _str_list(data, "related")
    for rel in related:
        if not _ID_RE.match(rel):
            raise _Invalid("related", f"{rel!r} is not an entry id")
    references = _str_list(data, "references")
    for ref in references:
        if not ref.startswith("https://"):
            raise _Invalid("references", f"{ref!r} must be an https URL")
    if "release" not in data:
        raise _Invalid("release", "is required")
    releases = _range(data["release"], "release")
    sites = _sites(data, releases)
    context = _context(data, releases)
    if not sites and not context and not template.literal_rich:
        raise _Invalid("template", "has too little literal text to match without a site or context")
    carried = _carried(data)
    return Entry(
        id=entry_id,
        package=package,
        title=title,
        exceptions=exceptions,
        template=template,
        releases=releases,
        meaning=_str(data, "meaning") or "",
        causes=_str_list(data, "causes", required=True),
        fixes=_str_list(data, "fixes", required=True),
        kind=kind,
        origin=_str(data, "origin", required=False),
        related=related,
        example=_str(data, "example", required=False),
        evidence=_evidence(data),
        references=references,
        sites=sites,
        context=context,
        mentions=_mentions(data, releases),
        names=_names(data, template),
        shape=_shape(data),
        shared_with=_str_list(data, "shared_with"),
        fixed=_fixed(data, releases),
        carried=carried,
        source=source,
    )


#: The wheel's pre-parsed catalog (written by hatch_build.py): {"pkg/slug.toml": entry table}.
BUNDLE_NAME = "_bundle.json"


def _load_bundle(
    root: Any, label: str, entries: dict[str, Entry], problems: list[CatalogProblem]
) -> bool:
    """Load a wheel's bundled catalog; ``False`` when there is none (a source checkout)."""
    bundle = root.joinpath(BUNDLE_NAME)
    if not bundle.is_file():
        return False
    import json

    try:
        tables = json.loads(bundle.read_bytes())
    except (OSError, ValueError) as err:
        problems.append(CatalogProblem(f"{label}/{BUNDLE_NAME}", "(file)", f"unreadable: {err}"))
        return False
    for relative, data in tables.items():
        display = f"{label}/{relative}"
        try:
            slug = relative.rpartition("/")[2].removesuffix(".toml")
            entry = entry_from_mapping(data, source=display, slug=slug)
        except _Invalid as err:
            problems.append(CatalogProblem(display, err.field, err.problem))
            continue
        entries[entry.id] = entry
    return True


def _toml_module() -> Any:
    """``tomllib`` (3.11+), or its ``tomli`` backport on 3.10 (a dependency there)."""
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    return tomllib


#: The most of one catalog file that is read: an entry is a few KiB, and a user catalog
#: holding something else must not stall or flood a crashing process.
MAX_FILE_BYTES = 1 << 20


def _read_bounded(path: Path | Any) -> bytes:
    """The file's bytes, refusing anything but a regular file of at most ``MAX_FILE_BYTES``."""
    from pathlib import Path

    if isinstance(path, Path):
        import stat

        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise _Invalid("(file)", "is not a regular file")
        with path.open("rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    else:  # an importlib resource of the installed package
        raw = path.read_bytes()
    if len(raw) > MAX_FILE_BYTES:
        raise _Invalid("(file)", f"is larger than {MAX_FILE_BYTES >> 20} MiB")
    return bytes(raw)


def load_entry_file(path: Path | Any, *, display: str) -> Entry:
    """Read and validate one TOML file (a ``Path`` or an importlib resource)."""
    try:
        raw = _read_bounded(path)
    except OSError as err:
        raise _Invalid("(file)", f"cannot be read: {err}") from None
    toml = _toml_module()  # only for TOML files: an installed wheel reads its JSON bundle

    try:
        data = toml.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise _Invalid("(file)", f"is not UTF-8: {err}") from None
    except toml.TOMLDecodeError as err:
        raise _Invalid("(file)", f"is not valid TOML: {err}") from None
    slug = str(path.name)[: -len(".toml")]
    return entry_from_mapping(data, source=display, slug=slug)


@dataclass(slots=True)
class Catalog:
    """Loaded entries by id, with the problems met while loading."""

    entries: dict[str, Entry]
    problems: list[CatalogProblem]

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries.values())

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, entry_id: str) -> Entry | None:
        return self.entries.get(entry_id)


def builtin_catalog_dir() -> Any:
    """The packaged catalog: inside the wheel, or ``catalog/`` of a source checkout.

    An installed package is a plain directory almost always: its ``catalog`` folder is then
    read with ``pathlib``, without importing ``importlib_resources`` (which pulls in
    ``tempfile``, ``shutil``, ``zipfile`` and more: a fifth of the first explanation's cost).
    A package imported from a zip file is read through ``importlib_resources``.
    """
    from pathlib import Path

    packaged = packaged_catalog_path()
    if packaged is not None:
        return Path(packaged)
    if Path(__file__).resolve().parents[1].is_dir():
        return Path(__file__).resolve().parents[3] / "catalog"  # a source checkout
    import importlib_resources

    return importlib_resources.files("errhints").joinpath("catalog")


def packaged_catalog_path() -> str | None:
    """The installed wheel's catalog folder as a plain path, or ``None`` (a source checkout,
    a zip import). Found without ``pathlib``, which a bare interpreter pays 7 ms to import,
    since the first failure of a process reads the prebuilt index from there."""
    packaged = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "catalog")
    return packaged if os.path.isdir(packaged) else None


def user_catalog_dirs(extra: Iterable[str | os.PathLike[str]] = ()) -> list[Path]:
    """Directories from ``ERRHINTS_CATALOG_PATH`` (os.pathsep-separated), then ``extra``."""
    from pathlib import Path

    dirs = [Path(p) for p in os.environ.get(ENV_CATALOG_PATH, "").split(os.pathsep) if p.strip()]
    dirs.extend(Path(p) for p in extra)
    return dirs


def _toml_files(root: Any) -> list[tuple[Any, str]]:
    """``root/*.toml`` and ``root/<package>/*.toml`` with their names relative to ``root``."""
    found: list[tuple[Any, str]] = []
    try:
        children = sorted(root.iterdir(), key=lambda p: p.name)
    except OSError:
        return []
    for child in children:
        if child.is_file() and child.name.endswith(".toml"):
            found.append((child, child.name))
        elif child.is_dir() and not child.name.startswith((".", "_")):
            try:
                inner = sorted(
                    (p for p in child.iterdir() if p.name.endswith(".toml") and p.is_file()),
                    key=lambda p: p.name,
                )
            except OSError:
                continue
            found.extend((p, f"{child.name}/{p.name}") for p in inner)
    return found


def load_catalog(
    extra_dirs: Iterable[str | os.PathLike[str]] = (), *, builtin: bool = True
) -> Catalog:
    """Load the packaged catalog, then user directories (a user entry replaces a packaged one)."""
    entries: dict[str, Entry] = {}
    problems: list[CatalogProblem] = []
    roots: list[tuple[Any, str, bool]] = []
    if builtin:
        packaged = builtin_catalog_dir()
        if not _load_bundle(packaged, "catalog", entries, problems):
            roots.append((packaged, "catalog", False))
    for directory in user_catalog_dirs(extra_dirs):
        try:
            usable = directory.is_dir()
        except OSError:
            usable = False
        if not usable:
            problems.append(
                CatalogProblem(
                    str(directory), "(directory)", "does not exist or is not a directory", True
                )
            )
            continue
        roots.append((directory, str(directory), True))
    user_sources: set[str] = set()
    for root, label, user in roots:
        for file, relative in _toml_files(root):
            display = f"{label}/{relative}"
            try:
                entry = load_entry_file(file, display=display)
            except _Invalid as err:
                problems.append(CatalogProblem(display, err.field, err.problem, user))
                continue
            except Exception as err:  # an unreadable file of any kind: a problem, not a crash
                problems.append(CatalogProblem(display, "(file)", f"cannot be read: {err}", user))
                continue
            entries[entry.id] = entry
            if user:
                user_sources.add(entry.source)
    for entry in entries.values():
        missing = [rel for rel in entry.related if rel not in entries]
        if missing:
            problems.append(
                CatalogProblem(
                    entry.source,
                    "related",
                    f"unknown ids {missing}",
                    entry.source in user_sources,
                )
            )
    return Catalog(entries=entries, problems=problems)
