"""Which releases accept a flag or config key, its closest names, and its rename when known.

For the failures that reject a name (``launch_server.py: error: unrecognized arguments:
--x``, LlamaFactory's ``Some keys are not used by the HfArgumentParser: ['x']``) an entry
says ``names = { kind = "flags", placeholder = "args" }``; the note then answers, per name:
in which releases it exists, whether the release installed here has it, the closest names
that release does have, and the replacement when a rename is on record.

The table is ``catalog/index/names.json``, built with the site index from every release
(:mod:`errhints._maintain.index.options`); loaded on first use, data only, no network.
Every function returns an empty result on any internal error instead of raising.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._packages import installed_release, project_named
from . import siteindex
from .catalog import Entry
from .releases import ReleaseRange, version_key

__all__ = [
    "KINDS",
    "NameReport",
    "Rename",
    "describe",
    "names_in",
    "note_lines",
    "rejected",
    "runs_cover",
    "to_json",
]

#: The kinds of names a table holds, and what a note calls one of them.
KINDS = {"flags": "flag", "fields": "ServerArgs field", "keys": "config key"}
#: How many names of one message the note answers for, and closest names per name.
MOST_NAMES = 5
MOST_CLOSE = 3
#: Similarity (0-100, rapidfuzz ``ratio``) a name must reach to be offered as close.
CLOSE_SCORE = 70

_FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z][\w.-]*)")
_QUOTED = re.compile(r"""'([^'\\]{1,200})'|"([^"\\]{1,200})\"""")
_BARE_KEY = re.compile(r"^[A-Za-z_][\w.-]{0,200}$")


@dataclass(frozen=True, slots=True)
class Rename:
    """A name that a release replaced by another one: on record in the table, checked at build."""

    old: str
    new: str
    release: str = ""  # the first release without ``old``
    other: str = ""  # or: the other project whose name ``old`` is (``vLLM``)
    how: str = ""  # how to use the replacement, when more than its name


@dataclass(frozen=True, slots=True)
class NameReport:
    """What the table says of one name: where it exists, and what the release in use has."""

    project: str
    kind: str
    name: str
    ranges: tuple[ReleaseRange, ...]  # releases that have the name, oldest first
    release: str  # the release compared against: the installed one, else the newest known
    installed: bool  # whether ``release`` is the installed one
    present: bool  # whether ``release`` has the name
    external: bool = False  # present as a key of transformers' training arguments
    spelled: str = ""  # the same name with another separator, present in ``release``
    closest: tuple[str, ...] = ()
    rename: Rename | None = None
    newest: str = ""  # the newest release the table knows


class _Table:
    """One loaded ``names.json``, with the project release lists of the site index."""

    def __init__(self, root: str) -> None:
        data = siteindex.read_json(root, "names.json")
        self.projects: dict[str, dict[str, dict[str, list[int]]]] = data.get("projects", {})
        self.renames: dict[str, list[Rename]] = {}
        for item in data.get("renames", []):
            rename = Rename(
                old=str(item["old"]),
                new=str(item["new"]),
                release=str(item.get("release", "")),
                other=str(item.get("other", "")),
                how=str(item.get("how", "")),
            )
            key = f"{item['project']}:{item['kind']}:{rename.old}"
            self.renames.setdefault(key, []).append(rename)
        self.releases = {p: siteindex.release_list(p) for p in self.projects}

    def names_at(self, project: str, kind: str, index: int) -> list[str]:
        """Every name of ``kind`` that release ``index`` of ``project`` has."""
        table = self.projects.get(project, {}).get(kind, {})
        return [name for name, runs in table.items() if runs_cover(runs, index)]


def runs_cover(runs: Sequence[int], index: int) -> bool:
    """Whether release ``index`` lies in ``runs``, flat pairs of first and last release
    indexes (``[0, 4, 9, 12]``: releases 0 to 4 and 9 to 12), the tables' form."""
    return any(runs[i] <= index <= runs[i + 1] for i in range(0, len(runs) - 1, 2))


def _table() -> _Table | None:
    return siteindex.loaded("names", _Table)


def names_in(text: str, kind: str) -> list[str]:
    """The names a rejected-names message lists: ``--flags``, or the strings of a list repr.

    ``--flag=value`` gives ``--flag``; for config keys a listed ``--key`` gives ``key``.
    """
    found: list[str] = []
    quoted = [a or b for a, b in _QUOTED.findall(text)]
    if kind == "flags":
        for item in quoted or [text]:
            found.extend(m.split("=", 1)[0] for m in _FLAG.findall(item))
    else:
        items = quoted or [text.strip()]
        if any(item.startswith("-") for item in items):  # command-line words: values follow
            items = [item for item in items if item.startswith("-")]
        for item in items:
            name = item.split("=", 1)[0].strip().lstrip("-").replace("-", "_")
            if _BARE_KEY.match(name):
                found.append(name)
    unique: list[str] = []
    for name in found:
        if name not in unique:
            unique.append(name)
    return unique


def _index_of(releases: Sequence[tuple[str, str]], version: str) -> int:
    """The newest index of ``version`` (a version published under two names counts once)."""
    for index in range(len(releases) - 1, -1, -1):
        if releases[index][1] == version:
            return index
    return -1


def _external_keys() -> frozenset[str]:
    """transformers' training argument names, when transformers is already imported here."""
    module = sys.modules.get("transformers")
    if module is None:
        return frozenset()
    try:
        import dataclasses

        cls = getattr(module, "Seq2SeqTrainingArguments", None)
        return frozenset(f.name for f in dataclasses.fields(cls)) if cls else frozenset()
    except Exception:
        return frozenset()


def _closest(name: str, candidates: Sequence[str], kind: str) -> tuple[str, ...]:
    from rapidfuzz import fuzz, process

    key = name.lstrip("-").replace("_", "-").lower() if kind == "flags" else name.lower()
    table = {(c.lstrip("-").lower() if kind == "flags" else c.lower()): c for c in candidates if c}
    picked = process.extract(
        key, list(table), scorer=fuzz.ratio, limit=MOST_CLOSE, score_cutoff=CLOSE_SCORE
    )
    return tuple(table[choice] for choice, _score, _ in picked)


def _respelled(name: str, kind: str) -> list[str]:
    if kind == "flags":
        body = name.lstrip("-")
        return [f"--{body.replace('_', '-')}", f"--{body.replace('-', '_')}", f"-{body}"]
    return [name.replace("-", "_"), name.lower()]


def describe(project: str, kind: str, name: str) -> NameReport | None:
    """What the table says of ``name`` (a flag, argument or key of ``project``); ``None`` if
    the table is missing or does not hold that kind."""
    try:
        return _describe(project, kind, name)
    except Exception:
        return None


def _describe(project: str, kind: str, name: str) -> NameReport | None:
    table = _table()
    if table is None or kind not in table.projects.get(project, {}):
        return None
    listed = table.releases.get(project, [])
    if not listed:
        return None
    versions = [version for _dist, version in listed]
    runs = table.projects[project][kind].get(name, [])
    ranges = tuple(
        ReleaseRange(versions[runs[i]], versions[runs[i + 1]]) for i in range(0, len(runs) - 1, 2)
    )
    here = installed_release(project)
    index = _index_of(listed, here) if here else -1
    installed = index >= 0
    if not installed:
        index = len(versions) - 1
    release = versions[index]
    present = runs_cover(runs, index)
    external = not present and kind == "keys" and name in _external_keys()
    present = present or external
    spelled = ""
    closest: tuple[str, ...] = ()
    if not present:
        known = table.names_at(project, kind, index)
        spelled = next((s for s in _respelled(name, kind) if s != name and s in known), "")
        if not spelled:
            closest = _closest(name, known, kind)
    renames = table.renames.get(f"{project}:{kind}:{name}", [])
    rename = renames[-1] if renames else None
    return NameReport(
        project=project,
        kind=kind,
        name=name,
        ranges=ranges,
        release=release,
        installed=installed,
        present=present,
        external=external,
        spelled=spelled,
        closest=closest,
        rename=rename,
        newest=versions[-1],
    )


#: Said once under config keys when transformers is not imported here to check its own keys.
_KEYS_CAVEAT = (
    "(Keys of transformers' TrainingArguments, which LlamaFactory also accepts, are not in"
    " this table: they are checked only in the process that raised the error.)"
)


def _line(report: NameReport) -> str:
    """One sentence per name: where it exists and what to use in the release in use."""
    what = KINDS.get(report.kind, report.kind)
    known = project_named(report.project)
    shown = known.display if known is not None else report.project
    where = f"{report.release}{' (installed here)' if report.installed else ''}"
    name = report.name
    if report.present and report.kind == "keys":
        owner = "transformers' training arguments" if report.external else f"{shown} {where}"
        return (
            f"{name}: a {what} of {owner}, yet the command that ran did not read it: each"
            " llamafactory-cli command reads only some argument groups (chat, api and export"
            " read no training arguments), and after a YAML file overrides are key=value."
        )
    if report.present:
        return f"{name}: a {what} of {shown} {where}; check the words around it."
    if not report.ranges:
        head = f"{name}: not a {what} of any {shown} release up to {report.newest}."
    else:
        spans = ", ".join(str(r) for r in report.ranges)
        first, last = report.ranges[0].first, report.ranges[-1].last
        now = version_key(report.release)
        if now < version_key(first):
            head = f"{name}: a {what} of {shown} {spans}; {where} is older: upgrade to {first}+."
        elif now > version_key(last):
            head = f"{name}: a {what} of {shown} {spans}; gone after {last}, so not in {where}."
        else:
            head = f"{name}: a {what} of {shown} {spans}, but not of {where}."
    tail = ""
    rename = report.rename
    if rename is not None and rename.other:
        how = f" ({rename.how})" if rename.how else ""
        return f"{name}: {rename.other}'s name; {shown}'s {what} is {rename.new}{how}."
    if rename is not None:
        how = f" ({rename.how})" if rename.how else ""
        tail = f" Replaced by {rename.new}{how} in {rename.release}."
    elif report.spelled:
        tail = f" Spelled {report.spelled}, it is one."
    elif report.closest:
        tail = f" Closest in {report.release}: {', '.join(report.closest)}."
    return head + tail


def rejected(entry: Entry, message: str) -> tuple[str, str] | None:
    """``(kind, text)``: the rejected names' text in ``message``, for an entry with ``names``."""
    if entry.names is None:
        return None
    kind, placeholder = entry.names
    try:
        values = entry.template.match(message)
    except Exception:
        return None
    if values is None:
        return None
    for name, value in zip(entry.template.names, values, strict=False):
        if name == placeholder:
            return kind, value
    return None


def note_lines(project: str, kind: str, text: str) -> list[str]:
    """Lines for a note, one per rejected name found in ``text`` (at most ``MOST_NAMES``)."""
    try:
        lines: list[str] = []
        unknown = False
        for name in names_in(text, kind)[:MOST_NAMES]:
            report = describe(project, kind, name)
            if report is not None:
                lines.append(_line(report))
                unknown = unknown or not report.present
        if kind == "keys" and unknown and not _external_keys():
            lines.append(_KEYS_CAVEAT)
        return lines
    except Exception:
        return []


def to_json(project: str, kind: str, text: str) -> list[dict[str, Any]]:
    """The reports of :func:`note_lines` as JSON-ready dicts (``errhints explain --json``)."""
    out: list[dict[str, Any]] = []
    for name in names_in(text, kind)[:MOST_NAMES]:
        report = describe(project, kind, name)
        if report is None:
            continue
        out.append(
            {
                "name": report.name,
                "kind": report.kind,
                "releases": [r.to_dict() for r in report.ranges],
                "compared_with": report.release,
                "installed": report.installed,
                "present": report.present,
                "spelled": report.spelled or None,
                "closest": list(report.closest),
                "replaced_by": report.rename.new if report.rename else None,
            }
        )
    return out
