"""Repeated failures: the same error from 8 TP ranks or 200 requests is one finding.

A failure's *signature* is what makes two findings the same for a reader: the best entry that
explains it (or, when none does, its type and its message with numbers, addresses and quoted
values blanked), so that ``The input (9000 tokens) ...`` and ``The input (9100 tokens) ...``
from two requests count as one. :class:`Groups` keeps the first finding of each signature with
a count and the lines it recurs at (at most :data:`MAX_LINES` of them), in bounded memory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .._facts.scanner import Finding
from .match import Match

__all__ = ["MAX_LINES", "Group", "Groups", "signature"]

#: Lines remembered per group (the count goes on).
MAX_LINES = 50

#: Groups kept at once; past this, new signatures are not grouped any more.
MAX_GROUPS = 10_000

_VARIABLE = re.compile(r"0x[0-9a-fA-F]{1,16}|\d{1,40}|'[^'\n]{0,200}'|\"[^\"\n]{0,200}\"")


def signature(finding: Finding, matches: tuple[Match, ...]) -> tuple[str, str]:
    """What two findings share when they are the same failure."""
    facts = finding.facts
    if matches:
        return facts.short_type, matches[0].id
    message = facts.message[:2000]
    return facts.short_type, _VARIABLE.sub("_", message)


@dataclass(slots=True)
class Group:
    """One failure and where it recurs."""

    first: Finding
    matches: tuple[Match, ...]
    count: int = 1
    lines: list[int] = field(default_factory=list)

    def add(self, finding: Finding) -> None:
        self.count += 1
        if len(self.lines) < MAX_LINES:
            self.lines.append(finding.line)


class Groups:
    """Findings grouped by :func:`signature`, in the order their first finding came."""

    def __init__(self) -> None:
        self.by_key: dict[tuple[str, str, str], Group] = {}

    def add(self, source: str, finding: Finding, matches: tuple[Match, ...]) -> Group | None:
        """Record ``finding``; return its new group, or ``None`` when it repeats one."""
        key = (source, *signature(finding, matches))
        group = self.by_key.get(key)
        if group is not None:
            group.add(finding)
            return None
        group = Group(finding, matches, lines=[finding.line])
        if len(self.by_key) < MAX_GROUPS:
            self.by_key[key] = group
        return group

    def repeated(self) -> list[Group]:
        """The groups seen more than once."""
        return [g for g in self.by_key.values() if g.count > 1]
