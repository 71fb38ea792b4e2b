"""Turn matches into words: the short note on an exception, the full entry, plain text blocks.

A note's first line always starts with ``errhints:``; that prefix is how every door tells
that an exception already carries an errhints note.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence

from .._config import NOTE_PREFIX, Verbosity
from .._packages import installed_release, project_named
from . import known_names
from .catalog import Entry, Site
from .lookalikes import shared_by
from .match import Match
from .releases import version_key

__all__ = ["render_entry", "render_note", "source_url"]

WIDTH = 88
SHORT_MEANING_LINES = 3
SHORT_FIXES = 2
#: A short note never prints more than this many lines of one fix, nor more characters of
#: a title (a user catalog may hold anything; the note sits under a traceback).
SHORT_FIX_LINES = 3
SHORT_TITLE_CHARS = 200
#: How much of a text is looked at for the short note's few lines.
_SHORT_SCAN_CHARS = 4 * WIDTH * SHORT_MEANING_LINES

#: What a note says when it explains an error linked to the one raised, not that error.
_RELATIONS = {
    "cause": "explains the direct cause of this error (raise ... from)",
    "context": "explains the error that was being handled when this one was raised (its context)",
    "group": "explains an error inside this exception group",
}


def source_url(entry: Entry, site: Site | None = None) -> str | None:
    """The GitHub line of the verified release where the entry's message is raised."""
    site = site or (entry.sites[0] if entry.sites else None)
    project = project_named(entry.package)
    if site is None or project is None:
        return None
    return project.source_url(site.release, site.path, site.line)


def _wrap(text: str, indent: str) -> list[str]:
    paragraph = " ".join(text.split())
    return textwrap.wrap(paragraph, width=WIDTH, initial_indent=indent, subsequent_indent=indent)


def _clip(lines: list[str], most: int) -> list[str]:
    """At most ``most`` lines, the last one ending in an ellipsis when some were cut."""
    if len(lines) <= most:
        return lines
    kept = lines[:most]
    kept[-1] = kept[-1][: WIDTH - 1].rstrip() + "…"
    return kept


def _brief(meaning: str) -> list[str]:
    """The first sentences of ``meaning`` that fit in ``SHORT_MEANING_LINES`` lines."""
    kept: list[str] = []
    text = ""
    head = meaning[:_SHORT_SCAN_CHARS]
    for sentence in re.split(r"(?<=[.!?])\s+", " ".join(head.split())):
        candidate = f"{text} {sentence}".strip()
        wrapped = _wrap(candidate, "  ")
        if kept and len(wrapped) > SHORT_MEANING_LINES:
            break
        kept, text = wrapped, candidate
    return _clip(kept, SHORT_MEANING_LINES)


def _short(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


def _numbered(items: Sequence[str], indent: str, most_lines: int | None = None) -> list[str]:
    lines: list[str] = []
    for i, item in enumerate(items, 1):
        head = f"{indent}{i}. "
        if most_lines is not None:
            item = item[: most_lines * WIDTH * 2]
        wrapped = textwrap.wrap(
            " ".join(item.split()),
            width=WIDTH,
            initial_indent=head,
            subsequent_indent=" " * len(head),
        )
        lines.extend(wrapped if most_lines is None else _clip(wrapped, most_lines))
    return lines


#: Why a match from text is no surer, by the ``via`` the matcher gives.
_VIA_LABELS = {
    "log context": "strong: the run's context is from the log, not the stack",
    "project frames": "strong: its project's frames, not the ones it is known for",
    "carried": "strong: carried inside the project's own error message",
    "cut site": "strong: its raise site, the message cut short",
    "cut message": "strong: its type and frames, the message cut short",
    "no context": "weak: nothing in the text shows an SGLang or LlamaFactory run",
    "look-alike": "weak: the text shows another project",
}

#: How the projects an entry shares its words with are named in a label.
_SHARED_NAMES = {"vllm": "vLLM"}


def _shared_label(entry: Entry) -> str:
    """``weak: vLLM raises the same words, and nothing here shows SGLang``."""
    others = entry.shared_with or shared_by(entry.template) or ("another project",)
    who = " and ".join(_SHARED_NAMES.get(name, name) for name in others)
    project = project_named(entry.package)
    shown = project.display if project is not None else entry.package
    verb = "raises" if len(others) == 1 else "raise"
    return f"weak: {who} {verb} the same words, and nothing here shows {shown}"


def _headline(match: Match) -> str:
    hedge = "possibly " if match.confidence == "weak" else ""
    title = _short(match.entry.title, SHORT_TITLE_CHARS)
    if match.via == "shared":
        label = _shared_label(match.entry)
    else:
        label = _VIA_LABELS.get(match.via, match.confidence)
    return f"{hedge}{match.entry.id}: {title} [{label}]"


#: Candidate sites an ``identified`` note lists before it gives only their count.
SHORT_CANDIDATES = 3


def _identified_note(match: Match, verbosity: Verbosity) -> str:
    """Where and when a message no entry explains is raised, from the site index; never why."""
    sites = match.identified
    best = sites[0]
    ranges = ", ".join(str(r) for r in best.ranges)
    lines = [
        f"{NOTE_PREFIX} not in the catalog; raised at {best.path}:{best.line} in "
        f"{best.function} ({best.project} {ranges}) [identified]"
    ]
    relation = _RELATIONS.get(match.relation)
    if relation:
        lines.append(f"  ({relation})")
    if best.guard:
        lines.extend(_wrap(f"Raised when: {best.guard}", "  "))
    if best.settings:
        lines.extend(_wrap("Settings involved: " + ", ".join(best.settings), "  "))
    if best.url:
        lines.append(f"  Source: {best.url}")
    shown = len(sites) if verbosity == "full" else min(len(sites), SHORT_CANDIDATES)
    for other in sites[1:shown]:
        other_ranges = ", ".join(str(r) for r in other.ranges)
        lines.append(
            f"  or: {other.path}:{other.line} in {other.function} ({other.project} {other_ranges})"
        )
    more = best.candidates - shown
    if more > 0:
        lines.append(f"  {more} more place(s) raise the same message (errhints explain --json)")
    return "\n".join(lines)


def _fixed_lines(entry: Entry, verbosity: Verbosity) -> list[str]:
    """The bugs behind the message that later releases fixed; in a short note only those the
    release installed here still has (all of them when it is unknown)."""
    if not entry.fixed:
        return []
    project = project_named(entry.package)
    shown = project.display if project is not None else entry.package
    here = installed_release(entry.package) if verbosity != "full" else None
    lines: list[str] = []
    for fix in entry.fixed:
        if here is not None and _has_fix(here, fix.release):
            continue  # installed here already has the fix
        lines.extend(_wrap(f"Fixed in {shown} {fix.release}: {fix.what}", "  "))
        lines.append(f"    {fix.reference}")
    return lines


def _has_fix(installed: str, fixed_in: str) -> bool:
    """Whether the installed release is the fixing one or later (an unreadable version,
    ``unknown`` from a broken install, is taken as not fixed)."""
    try:
        return version_key(installed) >= version_key(fixed_in)
    except ValueError:
        return False


def _rejected_names(match: Match) -> list[str]:
    """For a message that rejects flags or keys: each name's releases and closest names."""
    found = known_names.rejected(match.entry, match.message)
    if found is None:
        return []
    lines: list[str] = []
    for line in known_names.note_lines(match.entry.package, found[0], found[1]):
        lines.extend(textwrap.wrap(line, WIDTH, initial_indent="    ", subsequent_indent="      "))
    return ["  Names:", *lines] if lines else []


def render_note(matches: Sequence[Match], verbosity: Verbosity = "short") -> str:
    """One note for one exception: the best match in a few lines, then the others by name."""
    best = matches[0]
    if best.confidence == "identified":
        return _identified_note(best, verbosity)
    entry = best.entry
    lines = [f"{NOTE_PREFIX} {_headline(best)}"]
    relation = _RELATIONS.get(best.relation)
    if relation and not best.embedded:
        lines.append(f"  ({relation})")
    lines.extend(_wrap(entry.meaning, "  ") if verbosity == "full" else _brief(entry.meaning))
    lines.extend(_rejected_names(best))
    if verbosity == "full":
        lines.append("  Likely causes:")
        lines.extend(_numbered(entry.causes, "    "))
    lines.append("  Try:")
    fixes = entry.fixes if verbosity == "full" else entry.fixes[:SHORT_FIXES]
    lines.extend(_numbered(fixes, "    ", None if verbosity == "full" else SHORT_FIX_LINES))
    lines.extend(_fixed_lines(entry, verbosity))
    if verbosity == "full" and entry.example:
        lines.append("  Example:")
        lines.extend("    " + line for line in entry.example.strip().splitlines())
    more = [f"errhints show {entry.id}"]
    url = source_url(entry, best.site)
    if url:
        more.append(url)
    lines.append("  More: " + " | ".join(more))
    for other in matches[1:4]:
        label = "inner error" if other.embedded and not best.embedded else "also"
        lines.append(f"  {label}: {_headline(other)} (errhints show {other.entry.id})")
    return "\n".join(lines)


def render_entry(entry: Entry) -> str:
    """The whole entry, as ``errhints show ID`` prints it."""
    lines = [f"{entry.id}: {entry.title}", ""]
    exc = ", ".join(entry.exceptions)
    lines.append(
        f"  package:   {entry.package}" + (f" (raised by {entry.origin})" if entry.origin else "")
    )
    verified = f"{entry.package} {entry.releases}"
    lines.append(f"  exception: {exc}   kind: {entry.kind}   holds for: {verified}")
    message = entry.template.source.splitlines() or [""]
    lines.append(f"  message:   {message[0]}")
    lines.extend(f"             {line}" for line in message[1:])
    if entry.shape:
        lines.append(f"             (matched on text when the message has the shape {entry.shape})")
    if entry.shared_with:
        who = ", ".join(_SHARED_NAMES.get(name, name) for name in entry.shared_with)
        lines.append(f"             (the same words are raised by {who})")
    for carried in entry.carried:
        wrapped = carried.source.splitlines() or [""]
        lines.append(f"  wraps:     {wrapped[0]}")
        lines.extend(f"             {line}" for line in wrapped[1:])
    for site in entry.sites:
        line = f":{site.line}" if site.line else ""
        lines.append(
            f"  raised at: {site.path}{line} in {site.function} ({entry.package} {site.releases})"
        )
        url = source_url(entry, site)
        if url:
            lines.append(f"             {url}")
    for ctx in entry.context:
        where = f"{ctx.path} in {ctx.function}" if ctx.function else ctx.path
        if ctx.releases is not None and ctx.releases != entry.releases:
            where += f" ({entry.package} {ctx.releases})"
        lines.append(f"  applies when on the stack: {where}")
    lines.append("")
    lines.append("What it means:")
    lines.extend(_wrap(entry.meaning, "  "))
    lines.append("")
    lines.append("Likely causes:")
    lines.extend(_numbered(entry.causes, "  "))
    lines.append("")
    lines.append("Fixes:")
    lines.extend(_numbered(entry.fixes, "  "))
    if entry.example:
        lines.append("")
        lines.append("Example:")
        lines.extend("  " + line for line in entry.example.strip().splitlines())
    if entry.evidence:
        lines.append("")
        lines.append("Seen as:")
        for evidence in entry.evidence:
            lines.extend(_wrap(evidence.message, "  "))
            lines.append(f"    ({evidence.source})")
    if entry.fixed:
        lines.append("")
        lines.append("Fixed in later releases:")
        for fix in entry.fixed:
            lines.extend(_wrap(f"{entry.package} {fix.release}: {fix.what}", "  "))
            lines.append(f"    {fix.reference}")
    if entry.related:
        lines.append("")
        lines.append("Related: " + ", ".join(entry.related))
    if entry.references:
        lines.append("")
        lines.append("Reported in:")
        lines.extend(f"  {ref}" for ref in entry.references)
    return "\n".join(lines)
