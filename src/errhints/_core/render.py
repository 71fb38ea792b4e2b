"""Turn matches into words: the short note on an exception, the full entry, plain text blocks.

A note's first line always starts with ``errhints:``; that prefix is how every door tells
that an exception already carries an errhints note.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence

from .._config import NOTE_PREFIX, Verbosity
from .._packages import project_named
from .catalog import Entry, Site
from .match import Match

__all__ = ["render_entry", "render_note", "source_url"]

WIDTH = 88
SHORT_MEANING_LINES = 3
SHORT_FIXES = 2


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


def _brief(meaning: str) -> list[str]:
    """The first sentences of ``meaning`` that fit in ``SHORT_MEANING_LINES`` lines."""
    kept: list[str] = []
    text = ""
    for sentence in re.split(r"(?<=[.!?])\s+", " ".join(meaning.split())):
        candidate = f"{text} {sentence}".strip()
        wrapped = _wrap(candidate, "  ")
        if kept and len(wrapped) > SHORT_MEANING_LINES:
            break
        kept, text = wrapped, candidate
    return kept


def _numbered(items: Sequence[str], indent: str) -> list[str]:
    lines: list[str] = []
    for i, item in enumerate(items, 1):
        head = f"{indent}{i}. "
        wrapped = textwrap.wrap(
            " ".join(item.split()),
            width=WIDTH,
            initial_indent=head,
            subsequent_indent=" " * len(head),
        )
        lines.extend(wrapped)
    return lines


def _headline(match: Match) -> str:
    hedge = "possibly " if match.confidence == "weak" else ""
    return f"{hedge}{match.entry.id}: {match.entry.title} [{match.confidence}]"


def render_note(matches: Sequence[Match], verbosity: Verbosity = "short") -> str:
    """One note for one exception: the best match in a few lines, then the others by name."""
    best = matches[0]
    entry = best.entry
    lines = [f"{NOTE_PREFIX} {_headline(best)}"]
    lines.extend(_wrap(entry.meaning, "  ") if verbosity == "full" else _brief(entry.meaning))
    if verbosity == "full":
        lines.append("  Likely causes:")
        lines.extend(_numbered(entry.causes, "    "))
    lines.append("  Try:")
    fixes = entry.fixes if verbosity == "full" else entry.fixes[:SHORT_FIXES]
    lines.extend(_numbered(fixes, "    "))
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
    lines.append(f"  message:   {entry.template.source}")
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
    if entry.related:
        lines.append("")
        lines.append("Related: " + ", ".join(entry.related))
    if entry.references:
        lines.append("")
        lines.append("Reported in:")
        lines.extend(f"  {ref}" for ref in entry.references)
    return "\n".join(lines)
