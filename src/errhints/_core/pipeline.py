"""The text pipeline: the one loop from text to findings, each with the entries that match it.

The command line (``errhints explain``) and the logging door both read text through here:
the scanner of :mod:`errhints._facts.scanner` finds failures, the matcher explains each.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO

from .._facts.scanner import Finding, scan_stream, scan_text
from .match import Index, Match, explain_facts
from . import state

__all__ = ["Explained", "explain_stream", "explain_text"]


@dataclass(frozen=True, slots=True)
class Explained:
    """One failure found in text and the entries that explain it (best first; may be none)."""

    finding: Finding
    matches: tuple[Match, ...]


def _explain(findings: Iterable[Finding], index: Index) -> Iterator[Explained]:
    for finding in findings:
        yield Explained(finding, tuple(explain_facts(finding.facts, index)))


def explain_text(text: str, index: Index | None = None) -> list[Explained]:
    """Every failure in ``text`` with its matches; ``index`` defaults to the shared catalog."""
    index = index if index is not None else state.get_index()
    return list(_explain(scan_text(text, index.log_needles), index))


def explain_stream(stream: IO[bytes], index: Index | None = None) -> Iterator[Explained]:
    """Like :func:`explain_text` for a binary stream, yielding each failure once complete."""
    index = index if index is not None else state.get_index()
    return _explain(scan_stream(stream, needles=index.log_needles), index)
