"""The explain pipeline: facts or text in, the matching entries out, embedded errors included.

The one loop from text to findings with their matches (:func:`explain_text`,
:func:`explain_stream`), used by the command line and the logging door, and the one way a
live exception's facts are explained (:func:`explain_facts`): the scanner of
:mod:`errhints._facts.scanner` reads text, the matcher of :mod:`.match` explains each
failure, and the scanner reads the errors a message carries inside it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO

from .._facts.model import ErrorFacts
from .._facts.scanner import Finding, scan_stream, scan_text
from . import match, state
from .match import Index, Match

__all__ = ["Explained", "explain_facts", "explain_stream", "explain_text", "facts_in_text"]


@dataclass(frozen=True, slots=True)
class Explained:
    """One failure found in text and the entries that explain it (best first; may be none)."""

    finding: Finding
    matches: tuple[Match, ...]


def facts_in_text(text: str) -> list[ErrorFacts]:
    """The failures written in ``text`` (tracebacks, error lines, bodies), as facts."""
    return [finding.facts for finding in scan_text(text)]


def explain_facts(facts: ErrorFacts, index: Index | None = None) -> list[Match]:
    """The entries that explain ``facts``, best first; errors embedded in its messages (a
    wrapped traceback, an HTTP body) are read and matched too."""
    index = index if index is not None else state.get_index()
    return match.explain_facts(facts, index, facts_in_text)


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
