"""The explain pipeline: facts or text in, the matching entries out, embedded errors included.

The one loop from text to findings with their matches (:func:`explain_text`,
:func:`explain_stream`), used by the command line and the logging door, and the one way a
live exception's facts are explained (:func:`explain_facts`): the scanner of
:mod:`errhints._facts.scanner` reads text, the matcher of :mod:`.match` explains each
failure, and the scanner reads the errors a message carries inside it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from .._facts.model import ErrorFacts, Frame
from .._packages import project_of
from . import match, state
from .catalog import Entry, Site
from .lookalikes import python_says, shared_by
from .match import Index, Match
from .releases import ReleaseRange
from .template import MIN_LITERAL_CHARS, TemplateError, parse_template

if TYPE_CHECKING:  # the text scanner loads with the first text to read, not for a live error
    from .._facts.scanner import Finding

__all__ = [
    "Explained",
    "explain_facts",
    "explain_stream",
    "explain_text",
    "facts_in_text",
    "identify_facts",
]


@dataclass(frozen=True, slots=True)
class Explained:
    """One failure found in text and the entries that explain it (best first; may be none)."""

    finding: Finding
    matches: tuple[Match, ...]


def facts_in_text(text: str) -> list[ErrorFacts]:
    """The failures written in ``text`` (tracebacks, error lines, bodies), as facts."""
    from .._facts.scanner import scan_text

    return [finding.facts for finding in scan_text(text)]


def explain_facts(
    facts: ErrorFacts,
    index: Index | None = None,
    *,
    identify: bool = True,
    warnings: bool = False,
    log_context: frozenset[str] = frozenset(),
) -> list[Match]:
    """The entries that explain ``facts``, best first; errors embedded in its messages (a
    wrapped traceback, an HTTP body) are read and matched too.

    When no entry fits and ``identify`` is true, the site index may name where the message
    is raised: one ``identified`` match, which says where and when, never why. Logged
    warnings are identified only with ``warnings``.
    """
    index = index if index is not None else state.get_index()
    matches = match.explain_facts(facts, index, facts_in_text, log_context)
    if matches or not identify:
        return matches
    return identify_facts(facts, warnings=warnings)


def _involves_a_project(frames: tuple[Frame, ...]) -> bool:
    return any(f.package is not None and project_of(f.package) for f in frames)


def identify_facts(facts: ErrorFacts, *, warnings: bool = False) -> list[Match]:
    """The site-index record of where ``facts`` (or a failure of its chain) is raised.

    Like curated entries, it needs evidence of SGLang or LlamaFactory: one of their frames
    on a known stack (and a template of little literal text only when its site is on that
    stack), or, for text without frames, a message that cannot be an accident
    (:func:`_evidence_alone`).
    """
    from . import siteindex

    stack = facts.frames + tuple(f for member in facts.chain for f in member.frames)
    has_stack = facts.has_stack or any(member.has_stack for member in facts.chain)
    if has_stack and not _involves_a_project(stack):
        return []
    for failure in (facts, *facts.chain):
        if not failure.message:
            continue
        found = siteindex.identify(failure.type_name, failure.message, stack, warnings=warnings)
        if not has_stack:
            found = [site for site in found if _evidence_alone(site.template, failure.message)]
        elif (
            found
            and not found[0].on_stack
            and _literal_chars(found[0].template) < MIN_LITERAL_CHARS
        ):
            continue  # the project's frames are there, but this site is not among them
        if not found:
            continue
        return [
            Match(
                entry=_site_entry(found[0]),
                confidence="identified",
                score=0.0,
                via="site index",
                message=failure.message,
                relation=failure.relation,
                identified=tuple(found),
            )
        ]
    return []


#: A placeholder whose name says it holds free text (``{e}``, ``{error_msg}``, ``{reason}``).
_FREE_TEXT = frozenset(
    "e err error errors exc exception msg message messages reason detail details text desc "
    "description info data hint suggestion content output log str repr".split()
)
_NAME_WORD = re.compile(r"[a-z]+")
#: Two or more words of prose: ``Pipeline parallelism``, ``this model.``
_PROSE = re.compile(r"[A-Za-z][a-z]+(?: [a-z]+)+[.!]?")


def _evidence_alone(template: str, message: str) -> bool:
    """Whether a message, with nothing around it to show SGLang or LlamaFactory, is evidence
    of this indexed site: enough literal text, written as the code writes it (not merely the
    same words), words no other project (vLLM) or Python itself writes the same way, and no
    placeholder for a value (``{kv_cache_dtype}``) filled with a sentence.
    """
    try:
        parsed = parse_template(template)
    except TemplateError:
        return False
    if parsed.literal_chars < MIN_LITERAL_CHARS or python_says(parsed) or shared_by(parsed):
        return False
    from .siteindex import MAX_MESSAGE, variants

    for text in variants(message[:MAX_MESSAGE]):  # the message, unquoted, line by line
        values = parsed.fits(text)
        if values is not None:
            return not any(
                _PROSE.fullmatch(value.strip())
                and not any(w in _FREE_TEXT for w in _NAME_WORD.findall(name.lower()))
                for name, value in zip(parsed.names, values, strict=False)
            )
    return False


def _literal_chars(template: str) -> int:
    try:
        return parse_template(template).literal_chars
    except TemplateError:
        return 0


def _site_entry(site: Any) -> Entry:
    """A stand-in entry for an identified site, so every output can show it like a match."""
    ranges = site.ranges
    releases = ReleaseRange(ranges[0].first, ranges[-1].last)
    try:
        template = parse_template(site.template)
    except TemplateError:
        template = parse_template(site.template.replace("{", "{{").replace("}", "}}"))
    return Entry(
        id=f"{site.project}:{site.path}:{site.function}",
        package=site.project,
        title=f"not in the catalog; raised in {site.function}",
        exceptions=(site.exception or "Exception",),
        template=template,
        releases=releases,
        meaning=f"Raised at {site.path}:{site.line} in {site.function} "
        f"({site.project} {', '.join(str(r) for r in ranges)})"
        + (f" when {site.guard}." if site.guard else "."),
        causes=(),
        fixes=(),
        kind=site.kind if site.kind in ("raise", "assert", "log") else "log",
        sites=(Site(path=site.path, function=site.function, releases=releases, line=site.line),),
        source="site index",
    )


def _explain(
    findings: Iterable[Finding], index: Index, warnings: bool = False
) -> Iterator[Explained]:
    for finding in findings:
        matches = explain_facts(
            finding.facts, index, warnings=warnings, log_context=finding.context
        )
        if finding.wrapper:
            matches = _with_wrapper(matches, finding, index)
        if matches or not finding.tentative:
            yield Explained(finding, tuple(matches))


def _with_wrapper(matches: list[Match], finding: Finding, index: Index) -> list[Match]:
    """Add what the words logged before a traceback match: after the traceback's own
    explanation, which names the real error, and first only when that has none."""
    words = ErrorFacts(type_name="", message=finding.wrapper)
    outer = match.explain_facts(words, index, facts_in_text, finding.context)
    known = {m.entry.id for m in matches}
    extra = [m for m in outer if m.entry.id not in known]
    if matches and matches[0].confidence != "identified":
        return [*matches, *extra]
    return [*extra, *matches]


def explain_text(text: str, index: Index | None = None) -> list[Explained]:
    """Every failure in ``text`` with its matches; ``index`` defaults to the shared catalog."""
    from .._facts.scanner import scan_text

    index = index if index is not None else state.get_index()
    return list(_explain(scan_text(text, index.log_needles), index))


def explain_stream(
    stream: IO[bytes], index: Index | None = None, *, warnings: bool = False
) -> Iterator[Explained]:
    """Like :func:`explain_text` for a binary stream, yielding each failure once complete.

    With ``warnings``, logged warnings no entry explains are identified too.
    """
    from .._facts.scanner import scan_stream

    index = index if index is not None else state.get_index()
    return _explain(scan_stream(stream, needles=index.log_needles), index, warnings)
