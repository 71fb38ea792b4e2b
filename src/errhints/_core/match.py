"""The matcher: find the catalog entries that explain one failure, and say how sure it is.

Order of trust: ``exact`` (raise site or context frame, and template; a raise site counts at
any path its function had in an older release, from the site index), ``strong`` (a
literal-rich template fits the message; site unknown), ``weak`` (fuzzy agreement of the
template's literal text, for wording that drifted). Candidates always come from an index
(message head, tail, distinctive words, raise site), so the cost stays flat as the catalog
grows; rapidfuzz is imported only when the precise levels found nothing, and the site index
only when the raise site is not a catalogued one. ``identified`` is not an explanation: the
pipeline adds it from the site index when no entry fits (see :mod:`.pipeline`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from .._config import guard
from .._facts.model import ErrorFacts, Frame
from .._packages import canonical_path, installed_release, project_names
from .catalog import Catalog, ContextFrame, Entry, Site, site_dict, split_family
from .lookalikes import shared_by
from .releases import version_key
from .template import (
    ELLIPSES,
    MIN_LITERAL_CHARS,
    PROJECT_SHAPES,
    SHAPES,
    fits_shape,
    prose_lead,
)

__all__ = ["Confidence", "Index", "Match", "build_index", "explain_facts", "known_at"]

Confidence = Literal["exact", "strong", "weak", "identified"]
#: Turns text (a placeholder's value) into the failures it contains.
TextReader = Callable[[str], Iterable[ErrorFacts]]

_RANK = {"exact": 0, "strong": 1, "weak": 2, "identified": 3}

#: Characters of a message's head/tail used as index keys.
KEY_CHARS = 6
#: Fuzzy score (0-100) a weak match must reach.
WEAK_THRESHOLD = 88.0
#: Fuzzy score a third-party message under context frames must reach: only a retyped copy
#: (a typo, a lost word) of another library's words, which read like many others'.
RETYPED_THRESHOLD = 95.0
#: How much of a huge message the word index and fuzzy scorer look at (head and tail).
WINDOW = 4096
#: Most entries the fuzzy scorer looks at, those sharing the most words with the message.
FUZZY_SHORTLIST = 12
#: A word found in more entries than this is too common to shortlist by.
MAX_POSTINGS = 64
#: Shortest literal text of a logged error the scanner looks for in every line.
MIN_NEEDLE_CHARS = 12
#: Nesting depth for errors embedded in other errors' messages.
MAX_EMBED_DEPTH = 2
#: A placeholder value shorter than this is not searched for an embedded error.
MIN_EMBEDDED_CHARS = 12
#: Letters and digits of literal text below which a template is a generic sentence
#: (``top_p must be in (0, 1]``, ``Template {name} does not exist.``): on text that shows
#: no run of the entry's project it is only a ``weak`` match.
GENERIC_CHARS = 36
#: Projects whose failures read like SGLang's or LlamaFactory's (SGLang copied many of
#: vLLM's messages, sglang-jax many of SGLang's; torchrun, DeepSpeed and Megatron print the
#: same lines for any job): when the text shows one of them and not the entry's own project,
#: the entry is only ``weak``.
#: (Names as the scanner's ``EVIDENCE`` and frames' top-level packages spell them.)
LOOKALIKES = frozenset({"vllm", "sgl_jax", "tensorrt_llm", "megatron", "deepspeed-launcher"})

#: The projects the catalog explains: a third-party message on text that shows one of them
#: is that one's, never the other's.
_OWN_PROJECTS = frozenset({"sglang", "llamafactory"})

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{3,40}")
_COMMON_WORDS = frozenset(
    """error failed please check the with that this from have your model true false none
    than must should expected found could does cannot exception runtime value type""".split()
)


@dataclass(frozen=True, slots=True)
class Match:
    """One entry that explains the failure, with how sure errhints is and why."""

    entry: Entry
    confidence: Confidence
    score: float
    via: str  # "site", "moved site", "context", "template", "carried", "fuzzy", ...
    message: str
    site: Site | None = None
    frame: Frame | None = None
    embedded: bool = False
    relation: str = ""
    #: For ``identified``: the site-index records the message fits, best first
    #: (``errhints._core.siteindex.Identified``); empty for an entry of the catalog.
    identified: tuple[Any, ...] = ()

    @property
    def id(self) -> str:
        return self.entry.id

    @property
    def title(self) -> str:
        return self.entry.title

    @property
    def package(self) -> str:
        return self.entry.package

    def sort_key(self) -> tuple[int, int, float]:
        return (int(self.embedded), _RANK[self.confidence], -self.score)

    def to_dict(self) -> dict[str, object]:
        """The JSON shape used by ``errhints explain --json``."""
        from . import known_names

        rejected = known_names.rejected(self.entry, self.message)
        names = known_names.to_json(self.entry.package, *rejected) if rejected else []
        return {
            "id": self.entry.id,
            "title": self.entry.title,
            "package": self.entry.package,
            "confidence": self.confidence,
            "via": self.via,
            "embedded": self.embedded,
            "sites": [site_dict(s) for s in self.entry.sites],
            **({"identified": [i.to_dict() for i in self.identified]} if self.identified else {}),
            **({"names": names} if names else {}),
        }


#: A file name in a message's literal text (``dataset_info.json``): no generic sentence.
_FILE_NAME = re.compile(r"[A-Za-z0-9_]{3,}\.(?:json|jsonl|yaml|yml|py|toml|safetensors|bin)\b")


def _cut_start(entry: Entry, facts: ErrorFacts, message: str) -> bool:
    """A typed message cut short inside the template's first literal (``OutOfResources: out of
    resource: shared me``): the type the entry names and a distinctive start of its words,
    its code spans' backticks kept or, as a rendered page shows them, dropped."""
    first = entry.template.literals[0]
    head = message.rstrip()
    return (
        bool(facts.type_name)
        and facts.type_name.rpartition(".")[2] in entry.exception_short_names
        and sum(c.isalnum() for c in message) >= MIN_LITERAL_CHARS
        and (first.startswith(head) or ("`" in first and first.replace("`", "").startswith(head)))
    )


def _distinctive(entry: Entry, message: str) -> bool:
    """Whether the template can be matched on text alone: enough literal text, or a message
    of the entry's shape (a tensor name for ``KeyError: {name}``)."""
    if entry.template.literal_rich:
        return True
    return entry.shape is not None and fits_shape(entry.shape, _unwrapped(message))


def _shape_fits(entry: Entry, message: str) -> bool:
    """Whether the message has the shape the entry's messages must have, if it names one."""
    return entry.shape is None or fits_shape(entry.shape, _unwrapped(message))


def _names_a_file(entry: Entry) -> bool:
    """Whether the template's literal text, or the shape its messages must have, names a
    file: the project's own words, not a sentence any program could print (``Undefined
    dataset {name} in dataset_info.json.``)."""
    if entry.shape in PROJECT_SHAPES:
        return True
    return any(_FILE_NAME.search(piece) for piece in entry.template.literals)


def _release_fit(entry: Entry) -> int:
    """0 when the release installed here is in the entry's range, 1 when unknown, 2 when
    outside: between equally sure entries, the wording of the installed release comes first
    (an entry split at a release, ``x`` and ``x-old``, has the same message on both sides)."""
    here = installed_release(entry.package)  # read once per process
    if here is None:
        return 1
    return 0 if here in entry.releases else 2


def _newer_siblings(matches: list[Match]) -> dict[str, int]:
    """For each match's entry, how many other matched entries are its failure at newer
    releases: the older sides go behind when nothing in the text or the installed packages
    says which side a failure is from, as most users run recent releases.

    One failure is one family: entries of one package that raise the same template, or whose
    ids name one entry split at a release (:func:`~.catalog.split_family`), joined
    transitively.
    """
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    for m in matches:
        entry = m.entry
        split = split_family(entry.id)
        for key in (f"id:{split}", f"template:{entry.package}:{entry.template.source}"):
            parent[root(key)] = root(f"entry:{entry.id}")
    family = {m.entry.id: root(f"entry:{m.entry.id}") for m in matches}
    newer: dict[str, int] = {}
    for m in matches:
        last = version_key(m.entry.releases.last)
        newer[m.entry.id] = sum(
            1
            for other in matches
            if family[other.entry.id] == family[m.entry.id]
            and version_key(other.entry.releases.last) > last
        )
    return newer


def _last(function: str) -> str:
    return function.rpartition(".")[2]


def _words(text: str) -> set[str]:
    if len(text) > 2 * WINDOW:
        text = text[:WINDOW] + " " + text[-WINDOW:]
    return {w.lower() for w in _WORD.findall(text)}


def _whole_words(literals: tuple[str, ...]) -> list[str]:
    """The words of the literal pieces that a placeholder's value cannot extend.

    A word touching a placeholder (``device{rest}``) reads differently in the message
    (``device7``), so it cannot serve as a key.
    """
    words = []
    last = len(literals) - 1
    for i, piece in enumerate(literals):
        for m in _WORD.finditer(piece):
            if (m.start() == 0 and i > 0) or (m.end() == len(piece) and i < last):
                continue
            words.append(m.group().lower())
    return words


def _anchor_word(entry: Entry) -> str | None:
    words = _whole_words(entry.template.literals)
    words = [w for w in words if w not in _COMMON_WORDS] or words
    return max(words, key=len) if words else None


@dataclass(slots=True)
class Index:
    """Lookup tables over one catalog, built once and shared (read-only) between threads."""

    catalog: Catalog
    by_head: dict[str, list[Entry]] = field(default_factory=dict)
    by_tail: dict[str, list[Entry]] = field(default_factory=dict)
    by_word: dict[str, list[Entry]] = field(default_factory=dict)
    by_site: dict[tuple[str, str], list[tuple[Entry, Site]]] = field(default_factory=dict)
    by_context_path: dict[str, list[tuple[Entry, ContextFrame]]] = field(default_factory=dict)
    fuzzy_words: dict[str, list[Entry]] = field(default_factory=dict)
    #: Entries not keyed by their first literal, by its first distinctive words: a message
    #: its writer cut with an ellipsis has lost the tail (and maybe the word) they are keyed by.
    by_early_word: dict[str, list[Entry]] = field(default_factory=dict)
    #: Literal text of logged errors without an exception name, for the text scanner.
    log_needles: tuple[str, ...] = ()

    def text_candidates(self, message: str, heads: tuple[str, ...] = ()) -> list[Entry]:
        """Entries whose template could fit ``message``, or one of its ``heads`` (the message
        without a clause of prose after it), a superset, never a miss."""
        seen: dict[str, Entry] = {}  # by key: an entry and the views of what it carries
        for entry in self.by_head.get(_head_key(message), ()):
            seen[entry.key] = entry
        if message[:1].isspace():  # a triple-quoted message starts with its line break
            for entry in self.by_head.get(_head_key(message.lstrip()), ()):
                seen[entry.key] = entry
        if (start := prose_lead(message)) > 0:  # ``...导致报错ChatGLM model is not supported``
            for entry in self.by_head.get(_head_key(message[start:]), ()):
                seen[entry.key] = entry
        for text in (message, *heads) if message else ():
            for entry in self.by_tail.get(_tail_key(text), ()):
                seen[entry.key] = entry
        if self.by_word:
            for word in _words(message):
                for entry in self.by_word.get(word, ()):
                    seen[entry.key] = entry
            for shape in SHAPES:
                key = _shape_key(shape)
                if key in self.by_word and any(fits_shape(shape, t) for t in (message, *heads)):
                    for entry in self.by_word.get(key, ()):
                        seen[entry.key] = entry
        if message.rstrip().endswith(ELLIPSES):
            for word in _words(message):
                for entry in self.by_early_word.get(word, ()):
                    seen[entry.key] = entry
        return list(seen.values())


#: How many of a template's first distinctive words key it for a message cut with an ellipsis.
_EARLY_WORDS = 2


#: What a needle (``Index.log_needles``) is trimmed of at its ends.
_NEEDLE_TRIM = " \t\n:;,.!?'\"()[]{}"


def _printed_bare(entry: Entry) -> bool:
    """Whether the entry's message reaches the user as a line of its own, without an
    exception line: logged, or a ``SystemExit`` (the interpreter prints its message alone:
    argparse's ``error: unrecognized arguments: ...``)."""
    return entry.kind == "log" or "SystemExit" in entry.exception_short_names


def _head_key(text: str) -> str:
    """The ``by_head`` key of a template's first literal or a message: its first characters,
    case-folded, since a retyped message may fit (``Cuda Environment was not detected``)."""
    return text[:KEY_CHARS].casefold()


def _tail_key(text: str) -> str:
    """The ``by_tail`` key: the last characters, case-folded."""
    return text[-KEY_CHARS:].casefold()


def _shape_key(shape: str) -> str:
    """The ``by_word`` key of the entries a message of ``shape`` may match (not a word)."""
    return f"<{shape}>"


def build_index(catalog: Catalog) -> Index:
    """Index every entry by where its template is pinned: head, tail, or a distinctive word."""
    index = Index(catalog=catalog)
    needles: set[str] = set()
    for entry in catalog:
        if _printed_bare(entry) and entry.template.literal_rich:
            # its longest literal, without the punctuation a value or the program's name
            # stood beside (``sglang serve: error: ...`` also as ``error: ...``)
            longest = max((p.strip(_NEEDLE_TRIM) for p in entry.template.literals), key=len)
            if len(longest) >= MIN_NEEDLE_CHARS:
                needles.add(longest)
        _index_text(index, entry)
        for n in range(len(entry.carried)):
            _index_text(index, entry.carried_view(n))
        for site in entry.sites:
            index.by_site.setdefault((site.path, _last(site.function)), []).append((entry, site))
        for ctx in entry.context:
            index.by_context_path.setdefault(ctx.path, []).append((entry, ctx))
        if entry.template.literal_rich:
            for word in {w.lower() for w in _WORD.findall(entry.template.skeleton)} - _COMMON_WORDS:
                index.fuzzy_words.setdefault(word, []).append(entry)
    index.log_needles = tuple(sorted(needles))
    return index


def _index_text(index: Index, entry: Entry) -> None:
    """Index an entry (or a view of its carried message) by its template's head, tail or a
    distinctive word."""
    lits = entry.template.literals
    if len(lits[0]) < KEY_CHARS and entry.template.literal_rich:
        early = [w for w in _whole_words(lits) if w not in _COMMON_WORDS]
        for first in dict.fromkeys(early[:_EARLY_WORDS]):
            index.by_early_word.setdefault(first, []).append(entry)
    if len(lits[0]) >= KEY_CHARS:
        index.by_head.setdefault(_head_key(lits[0]), []).append(entry)
    elif len(lits) > 1 and len(lits[-1]) >= KEY_CHARS:
        index.by_tail.setdefault(_tail_key(lits[-1]), []).append(entry)
    elif len(lits) == 1 and lits[0]:
        index.by_head.setdefault(_head_key(lits[0]), []).append(entry)
    elif entry.shape and not entry.template.literal_rich:
        index.by_word.setdefault(_shape_key(entry.shape), []).append(entry)
    else:
        word = _anchor_word(entry)
        if word:
            index.by_word.setdefault(word, []).append(entry)


def _short_type_names(facts: ErrorFacts) -> frozenset[str] | None:
    """The type's names without modules; ``None`` when unknown (a log line, an HTTP body)."""
    if not facts.type_name:
        return None
    return frozenset(n.rpartition(".")[2] for n in facts.all_type_names())


def _type_ok(entry: Entry, names: frozenset[str] | None) -> bool:
    # a carried message is another library's error, of whatever type it raised
    return (
        names is None
        or entry.carried_index >= 0
        or not entry.exception_short_names.isdisjoint(names)
    )


def _function_ok(frame: Frame, function: str) -> bool:
    if frame.qualified:
        return frame.function == function
    return frame.function == _last(function)


def _context_frame(entry: Entry, frames: tuple[Frame, ...]) -> tuple[int, Frame] | None:
    """The innermost stack frame that satisfies one of the entry's context frames.

    A frame of the context's function at another path counts when that function had the
    context's path in another release (the site index knows every path it had).
    """
    for depth, frame in enumerate(reversed(frames)):
        if any(_ctx_fits(ctx, frame) for ctx in entry.context):
            return depth, frame
    return None


def _ctx_fits(ctx: ContextFrame, frame: Frame) -> bool:
    """Whether a stack frame is the context frame ``ctx`` (at its path, or the function's
    path in another release)."""
    if frame.path is None or (ctx.function is not None and not _function_ok(frame, ctx.function)):
        return False
    return canonical_path(frame.path) == ctx.path or (
        ctx.function is not None and _had_path(frame, ctx.path)
    )


def _drop_other_eras(found: dict[str, Match], stack: tuple[Frame, ...]) -> None:
    """Drop context matches of an entry for releases the stack cannot come from.

    An entry split at a release (``x`` and ``x-legacy``) has the same message on both sides;
    its frames say which side a stack is from. Each stack frame that is some matched entry's
    context frame can come from the releases of those context frames together (a frame's own
    range, else its entry's); the stack's releases are what all such frames share. A context
    match whose entry shares none of them is dropped. Nothing is dropped when the frames
    disagree (they share no release) or the releases are not known.
    """
    by_package: dict[str, list[Match]] = {}
    for m in found.values():
        if m.via == "context" and not m.embedded:
            by_package.setdefault(m.entry.package, []).append(m)
    for package, matches in by_package.items():
        if len(matches) < 2:
            continue
        from .siteindex import releases

        versions = releases(package)
        if not versions:
            continue
        era: set[str] | None = None
        for frame in stack:
            could: set[str] = set()
            for m in matches:
                for ctx in m.entry.context:
                    if _ctx_fits(ctx, frame):
                        could.update((ctx.releases or m.entry.releases).select(versions))
            if could:
                era = could if era is None else era & could
        if not era:
            continue
        for m in matches:
            own = set(m.entry.releases.select(versions))
            if own and not era & own:  # (a range the index does not list says nothing)
                del found[m.entry.id]


def _other_paths(frame: Frame) -> set[str]:
    """The other paths the frame's function had in some release, when the site index knows
    the function at the frame's own path (else none)."""
    if not frame.qualified or frame.package is None or frame.path is None:
        return set()
    from .siteindex import function_history

    paths = {canonical_path(p) for p, _r in function_history(frame.package, frame.function)}
    here = canonical_path(frame.path)
    return paths - {here} if here in paths else set()


def _had_path(frame: Frame, path: str) -> bool:
    """Whether the frame's function was at ``path`` in another release."""
    return path in _other_paths(frame)


class _Matcher:
    """One explain call: facts in, matches out (no shared mutable state)."""

    def __init__(
        self,
        index: Index,
        read_text: TextReader | None,
        log_context: frozenset[str] = frozenset(),
    ) -> None:
        self.index = index
        self.read_text = read_text
        self.found: dict[str, Match] = {}
        #: Projects the surrounding text shows (paths, commands, log formats), for text.
        self.log_context = log_context
        #: Whether the failure's stack is shown from its outermost frame (set by ``run``).
        self.outer_shown = False
        #: Projects whose own message (an in-package entry, matched surely) carries the
        #: messages read inside it: ``Capture cuda graph failed: <a CUDA error>`` is SGLang's.
        self.carriers: frozenset[str] = frozenset()

    def add(self, match: Match) -> None:
        old = self.found.get(match.entry.id)
        if (
            old is None
            or match.sort_key() < old.sort_key()
            or (old.confidence == "weak" and match.confidence != "weak")
            # a template that fits, and the rule that makes it weak, over a likeness
            or (old.via == "fuzzy" and match.via != "fuzzy" and old.confidence == match.confidence)
        ):
            self.found[match.entry.id] = match
        if match.confidence != "weak" and not match.entry.context and not match.embedded:
            self.carriers |= {match.entry.package}

    def run(self, facts: ErrorFacts) -> list[Match]:
        stack: tuple[Frame, ...] = facts.frames
        for member in facts.chain:
            stack = stack + member.frames
        has_stack = facts.has_stack or any(m.has_stack for m in facts.chain)
        # A stack shown from its start (a ``Traceback`` header) down to its error line without
        # the project's frames says the project did not call in; an excerpt that starts
        # mid-stack or is cut before its error line says nothing. In a chain the outermost
        # error's stack counts: an inner one's starts where it was caught, below the callers.
        self.outer_shown = (
            facts.has_stack and not facts.headless and bool(facts.type_name or facts.message)
        )
        packages = project_names(frozenset(f.package for f in stack if f.package))
        self.one(facts, stack, packages, has_stack, embedded=False, depth=0)
        for member in facts.chain:
            self.one(member, stack, packages, has_stack, embedded=False, depth=0)
        if not facts.type_name and not has_stack and not self._any_sure():
            # ``train_lora -> model error: Template x does not exist.``
            for said in _said_errors(facts.message):
                self.one(said, (), packages, False, embedded=False, depth=0)
                if self._any_sure():
                    break
            if not self._any_sure():
                # a sentence of prose that quotes the error: ``I met a new error that
                # "Undefined dataset x in dataset_info.json". Can you ...``
                for part in _quoted_in_prose(facts.message):
                    self.one(part, (), packages, False, embedded=False, depth=0)
        if len(self.found) < 2:
            return list(self.found.values())
        _drop_other_eras(self.found, stack)

        newer = _newer_siblings(list(self.found.values()))

        def key(match: Match) -> tuple[int, int, int, float, bool, int, int]:
            embedded, rank, score = match.sort_key()
            # Equally sure: the error shown last before the ones it was raised from, then the
            # template with more literal text, the more specific one (``KeyError: 'user'`` at
            # a converter's site: the entry for that key before the one for any key); but of
            # an entry split at a release, the side with the newer releases first.
            specific = -match.entry.template.literal_chars
            return (
                embedded,
                rank,
                _release_fit(match.entry),
                score,
                bool(match.relation),
                newer[match.entry.id],
                specific,
            )

        return sorted(self.found.values(), key=key)

    def one(
        self,
        facts: ErrorFacts,
        stack: tuple[Frame, ...],
        packages: frozenset[str],
        has_stack: bool,
        *,
        embedded: bool,
        depth: int,
    ) -> None:
        message = _unwrapped(facts.message)
        type_names = _short_type_names(facts)
        precise = False
        # 1. The raise site: the innermost frame is one of an entry's sites.
        if facts.frames:
            inner = facts.frames[-1]
            if inner.path:
                key = (canonical_path(inner.path), _last(inner.function))
                for entry, site in self.index.by_site.get(key, ()):
                    if not _function_ok(inner, site.function) or not _type_ok(entry, type_names):
                        continue
                    values = entry.template.match(message)
                    if values is None:
                        if facts.type_name and entry.template.starts(message):
                            # its raise site and type, the message cut short in the paste
                            self.add(
                                self._make(
                                    entry, "strong", 95.0, "cut site", facts, embedded, site, inner
                                )
                            )
                            precise = True
                        continue
                    self.add(
                        self._make(entry, "exact", 100.0, "site", facts, embedded, site, inner)
                    )
                    precise = True
                    self.embedded_in(entry, values, stack, packages, has_stack, depth)
        # 2. The template, on text alone (and context entries, with their frames).
        # an issue's title or a sentence goes on after the error: ``KeyError: 'x' when ...``,
        # or starts it in lower case: ``template qwen9 does not exist``
        heads: tuple[str, ...] = ()
        if not facts.has_stack:
            heads = _before_a_clause(message)
            if message[:1].islower():
                upper = message[:1].upper() + message[1:]
                heads = (upper, *_before_a_clause(upper), *heads)
        for entry in self.index.text_candidates(message, heads):
            if not _type_ok(entry, type_names) or self._sure_of(entry):
                continue
            if not self._in_scope(entry, packages, has_stack, embedded):
                continue
            fitted = facts
            values = entry.template.match(message)
            if values is None:
                values = entry.template.match_head(message)  # a paste cut mid-message
            if heads and (values is None or not _shape_fits(entry, message)):
                for head in heads:
                    found = entry.template.match(head)
                    if found is None:
                        found = entry.template.match_head(head)  # its first sentences
                    if found is not None and _shape_fits(entry, head):
                        values, fitted = found, replace(facts, message=head)
                        break
            cut = values is None and _cut_start(entry, facts, message)
            if values is None and not cut:
                continue
            made = self._on_text(entry, fitted, stack, packages, has_stack, embedded)
            if made is None:
                continue
            if cut and made.confidence == "exact":
                made = self._make(
                    entry, "strong", 95.0, "cut message", facts, embedded, None, made.frame
                )
            self.add(made)
            precise = precise or made.confidence != "weak"
            if values is not None:  # a message cut short carries nothing to read further
                self.embedded_in(entry, values, stack, packages, has_stack, depth)
        # 1b. A raise site that moved: the innermost function is an entry's site at another
        # path in this release (the site index knows every path a function had).
        if not precise and facts.frames and facts.frames[-1].path and facts.frames[-1].package:
            precise = self.moved_site(facts, type_names, stack, packages, has_stack, embedded)
        # 3. Fuzzy, only when nothing precise fits.
        if not precise and not embedded:
            self.fuzzy(facts, type_names, stack, packages, has_stack)
        # Messages that carry another system's error (JSON bodies, wrapped reprs).
        if depth < MAX_EMBED_DEPTH:
            for inner_message in _embedded_messages(message):
                if inner_message != message:
                    body = ErrorFacts(type_name="", message=inner_message)
                    self.one(body, stack, packages, has_stack, embedded=True, depth=depth + 1)

    def _any_sure(self) -> bool:
        """Whether some entry already has a match better than ``weak``."""
        return any(m.confidence != "weak" for m in self.found.values())

    def _sure_of(self, entry: Entry) -> bool:
        """Whether ``entry`` already has a match better than ``weak`` (a fuzzy guess at the
        outer message must not keep the precise match of the message it carries)."""
        found = self.found.get(entry.id)
        return found is not None and found.confidence != "weak"

    def moved_site(
        self,
        facts: ErrorFacts,
        type_names: frozenset[str] | None,
        stack: tuple[Frame, ...],
        packages: frozenset[str],
        has_stack: bool,
        embedded: bool,
    ) -> bool:
        """Match the innermost frame against entries' sites at the other paths of its function."""
        inner = facts.frames[-1]
        found = False
        for path in sorted(_other_paths(inner)):
            for entry, site in self.index.by_site.get((path, _last(inner.function)), ()):
                if site.function != inner.function or not _type_ok(entry, type_names):
                    continue
                values = entry.template.match(facts.message)
                if values is None:
                    continue
                self.add(
                    self._make(entry, "exact", 99.0, "moved site", facts, embedded, site, inner)
                )
                self.embedded_in(entry, values, stack, packages, has_stack, 0)
                found = True
        return found

    def _on_text(
        self,
        entry: Entry,
        facts: ErrorFacts,
        stack: tuple[Frame, ...],
        packages: frozenset[str],
        has_stack: bool,
        embedded: bool,
    ) -> Match | None:
        """How sure a template that fits the message is, from what shows where it ran.

        A context frame on the stack: ``exact``. Otherwise the evidence is the text's: the
        entry's project among the frames or in the log around (its paths, commands, log
        formats: ``log context``) makes it ``strong``; a look-alike project (vLLM, torchrun
        of another job...) without the entry's own, or no evidence at all for an entry that
        needs its project's frames or for a generic sentence, makes it ``weak``.
        """
        if entry.context:
            hit = _context_frame(entry, stack)
            if hit is not None:
                depth_from_raise, frame = hit
                score = 100.0 - min(depth_from_raise, 50)
                return self._make(entry, "exact", score, "context", facts, embedded, None, frame)
            if not _distinctive(entry, facts.message):
                return None
            if self.outer_shown and {c.path.partition("/")[0] for c in entry.context} & {
                f.path.partition("/")[0] for f in stack if f.path
            }:
                return None  # its project's frames are there, but not where this happens
            shown_here = packages | self.log_context
            if entry.package not in shown_here:
                if self.outer_shown:
                    return None  # a whole stack without its frames, and nothing shows its project
                if shown_here & _OWN_PROJECTS:
                    return None  # the text shows the other project's run (SGLang, not LlamaFactory)
        elif not _distinctive(entry, facts.message):
            return None
        if self._lookalike(entry, packages):
            return self._make(entry, "weak", 70.0, "look-alike", facts, embedded)
        shown = entry.package in packages or entry.package in self.log_context
        if entry.context:
            # Its project's frames under a former name (``llmtuner``), which its context
            # frames cannot name; or the project only in the log around the failure.
            if entry.package in packages:
                return self._make(entry, "strong", 80.0, "project frames", facts, embedded)
            if shown:
                return self._make(entry, "strong", 85.0, "log context", facts, embedded)
            if embedded and entry.package in self.carriers:
                return self._make(entry, "strong", 80.0, "carried", facts, embedded)
            if embedded and self.carriers:
                return None  # carried inside the other project's own message
            return self._make(entry, "weak", 75.0, "no context", facts, embedded)
        if not shown and entry.template.literal_chars < GENERIC_CHARS and not _names_a_file(entry):
            return self._make(entry, "weak", 75.0, "no context", facts, embedded)
        if not shown and (entry.shared_with or shared_by(entry.template)):
            # vLLM raises these very words: without SGLang in view, the text may be vLLM's.
            return self._make(entry, "weak", 72.0, "shared", facts, embedded)
        if has_stack and not embedded and entry.package not in packages:
            return self._make(entry, "strong", 85.0, "log context", facts, embedded)
        return self._make(entry, "strong", 90.0, "template", facts, embedded)

    def _lookalike(self, entry: Entry, packages: frozenset[str]) -> bool:
        """The text shows a look-alike project and nothing of the entry's own."""
        if not (packages | self.log_context) & LOOKALIKES:
            return False
        return entry.package not in packages and entry.package not in self.log_context

    def _in_scope(
        self, entry: Entry, packages: frozenset[str], has_stack: bool, embedded: bool
    ) -> bool:
        if entry.context:
            return True  # decided by its frames, or by the text around (``_on_text``)
        if not has_stack or embedded:
            return True  # text without frames, or another process's error carried in a message
        # Frames read from text may be an excerpt (a console script, third-party frames only):
        # the log around it can still show the entry's project ran.
        return entry.package in packages or entry.package in self.log_context

    def embedded_in(
        self,
        entry: Entry,
        values: tuple[str, ...],
        stack: tuple[Frame, ...],
        packages: frozenset[str],
        has_stack: bool,
        depth: int,
    ) -> None:
        """Match the placeholder values of a wrapper message again (``Capture failed: {e}``)."""
        if depth >= MAX_EMBED_DEPTH:
            return
        for value in values:
            value = value.strip()
            if len(value) < MIN_EMBEDDED_CHARS:
                continue
            for inner in self._facts_in_text(value):
                inner_stack = stack + inner.frames if inner.frames else stack
                inner_packages = packages | project_names(inner.packages)
                self.one(
                    inner, inner_stack, inner_packages, has_stack, embedded=True, depth=depth + 1
                )

    def _facts_in_text(self, value: str) -> Iterable[ErrorFacts]:
        """A placeholder value as facts: tracebacks it contains, else the value as a message."""
        if self.read_text is not None and (
            "Traceback (most recent call last)" in value or "Error: " in value
        ):
            found: list[ErrorFacts] = []
            with guard("reading an embedded traceback"):
                found = list(self.read_text(value))
            if found:
                return found
        return [ErrorFacts(type_name="", message=value)]

    def fuzzy(
        self,
        facts: ErrorFacts,
        type_names: frozenset[str] | None,
        stack: tuple[Frame, ...],
        packages: frozenset[str],
        has_stack: bool,
    ) -> None:
        """Score the few entries sharing the most distinctive words with the message."""
        counts: dict[str, int] = {}
        entries: dict[str, Entry] = {}
        message_words = _words(facts.message)
        for word in message_words:
            postings = self.index.fuzzy_words.get(word, ())
            if len(postings) > MAX_POSTINGS:
                continue  # a word this common says nothing about which entry it is
            for entry in postings:
                counts[entry.id] = counts.get(entry.id, 0) + 1
                entries[entry.id] = entry
        ranked = sorted((n, i) for i, n in counts.items() if n >= 2)
        shortlisted = [entries[i] for _n, i in ranked[-FUZZY_SHORTLIST:]]
        if not shortlisted:
            return
        from rapidfuzz import fuzz
        from rapidfuzz.utils import default_process

        message = _unwrapped(facts.message)
        if len(message) > 2 * WINDOW:
            message = message[:WINDOW] + " " + message[-WINDOW:]
        for entry in shortlisted:
            if entry.id in self.found:
                continue  # matched on its template already, with the reason it is weak
            if not _type_ok(entry, type_names):
                continue
            if not self._in_scope(entry, packages, has_stack, embedded=False):
                continue
            skeleton = entry.template.skeleton
            if entry.context:
                # Another library's words: only the whole message retyped by hand (case,
                # punctuation or an underscore lost, a letter wrong), never a part of it, and
                # not where it was raised rules them out.
                score = fuzz.ratio(skeleton, message, processor=default_process)
                if score < RETYPED_THRESHOLD:
                    continue
                if self._on_text(entry, facts, stack, packages, has_stack, False) is None:
                    continue
            elif self._rarest_word(entry) not in message_words:
                continue  # ``libnuma.so.1: cannot open ...`` is not libcuda's failure reworded
            else:
                score = min(
                    fuzz.token_set_ratio(skeleton, message),
                    fuzz.partial_ratio(skeleton, message) if len(skeleton) <= len(message) else 0,
                )
                if score < WEAK_THRESHOLD:
                    continue
            self.add(self._make(entry, "weak", float(score), "fuzzy", facts, False))

    def _rarest_word(self, entry: Entry) -> str:
        """The word of the entry's literal text that the fewest entries share (the first
        such, as a message names its subject first): what a reworded message must still
        say to be this failure."""
        words = [w.lower() for w in _WORD.findall(entry.template.skeleton)]
        postings = self.index.fuzzy_words
        ranked = [(len(postings.get(w, ())), i, w) for i, w in enumerate(words)]
        return min((r for r in ranked if r[2] not in _COMMON_WORDS), default=(0, 0, ""))[2]

    @staticmethod
    def _make(
        entry: Entry,
        confidence: Confidence,
        score: float,
        via: str,
        facts: ErrorFacts,
        embedded: bool,
        site: Site | None = None,
        frame: Frame | None = None,
    ) -> Match:
        return Match(
            entry=entry,
            confidence=confidence,
            score=score,
            via=via,
            message=_unwrapped(facts.message),
            site=site,
            frame=frame,
            embedded=embedded,
            relation=facts.relation,
        )


#: The actor address Xinference's actor framework (xoscar) puts before the message of an
#: error raised in an actor: ``[address=0.0.0.0:45906, pid=1699] cannot import name ...``.
_ACTOR_ADDRESS = re.compile(r"\[address=[^\]\s,]{1,200}, pid=\d{1,10}\] ")


#: The HTTP status an API client puts before a server's error message (``Bad Request:
#: Requested token count exceeds ...``, ``400 Bad Request: ...``).
_HTTP_REASON = re.compile(
    r"(?:\d{3} )?(?:Bad Request|Unprocessable Entity|Internal Server Error|Not Found"
    r"|Service Unavailable|Too Many Requests|Payload Too Large): "
)


def _unwrapped(message: str) -> str:
    """The message as the raising code wrote it, without a runner's or a client's prefix
    (the exception itself is never changed; this is only what templates are matched against)."""
    found = _ACTOR_ADDRESS.match(message) if message.startswith("[address=") else None
    if found is None and message[:1] in "1234BUINSTP":
        found = _HTTP_REASON.match(message)
    return message[found.end() :] if found else message


#: How many of a line's ``SAID_ERROR`` places are tried (``CUDA error: out of memory`` is
#: tried whole first, and these only when nothing fits the whole line).
_SAID_ERROR_TRIES = 4


#: A retyped error line without its colon: ``ValueError Processor was not found ...``.
_NAME_NO_COLON = re.compile(r"([A-Z][\w.]{0,80}(?:Error|Exception)) +(?=[A-Za-z'\"`])")


def _said_errors(message: str) -> list[ErrorFacts]:
    """The errors a bare line may state after words that are not their own, outermost first
    (``OpenAI completion error: 500 Internal server error: Unsupported ...``: the text after
    each ``error:``), or behind an exception name without its colon."""
    from .._facts.lines import SAID_ERROR, SAID_ERROR_SPAN

    said = [
        ErrorFacts(type_name="", message=message[found.end() :])
        for found in itertools.islice(
            SAID_ERROR.finditer(message, 0, SAID_ERROR_SPAN), _SAID_ERROR_TRIES
        )
    ]
    if not said and (found := _NAME_NO_COLON.match(message)) is not None:
        said.append(ErrorFacts(type_name=found.group(1), message=message[found.end() :]))
    return said


#: Where a title or a sentence goes on after the error's own words: a clause (``when ...``,
#: ``while ...``, ``after ...``), a dash, a comma or a parenthesis.
_CLAUSE = re.compile(
    r"\s(?=(?:when|while|during|after|before|on|in|with|using|for|at|if|because|since|upon"
    r"|from|via|whenever|and|but)\s)|\s(?=[-\u2013\u2014]\s)|(?<=\S)(?=[,;]\s)|\s(?=\()",
    re.IGNORECASE,
)
#: How many of a message's clauses are taken off, the last first.
_CLAUSE_TRIES = 3


def _before_a_clause(message: str) -> tuple[str, ...]:
    """The message without the words a title or a sentence goes on with after it, cut at
    each of its last clauses (a cut that leaves fewer than 12 characters is not tried)."""
    if len(message) > 512 or "\n" in message:
        return ()
    cuts = [found.start() for found in _CLAUSE.finditer(message)]
    return tuple(message[:cut] for cut in reversed(cuts[-_CLAUSE_TRIES:]) if cut >= 12)


#: A span of prose quoted in a bare line: double, single (after a space), curly or backticks.
_QUOTED = re.compile(
    r"\"([^\"\n]{16,2000})\"|(?:^|(?<=\s))'([^'\n]{16,2000})'(?=[\s.,;:!?)]|$)"
    r"|\u201c([^\u201d\n]{16,2000})\u201d|`([^`\n]{16,2000})`"
)

#: Where a run of text outside ASCII (CJK prose) stops or starts inside a line.
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")

#: A sentence's end inside a line: a full stop and a space before a capital letter.
_SENTENCE_END = re.compile(r"(?<=[.!?]) +(?=[A-Z])")


def _quoted_in_prose(message: str) -> list[ErrorFacts]:
    """The parts of a bare line of prose that may be the error it quotes: quoted spans, the
    stretches between runs of CJK prose (a log record among the reporter's words, its
    prefix peeled), and its sentences; each at least 16 characters, at most 8 of them."""
    if len(message) > 4096 or "\n" in message:
        return []
    from .._facts.lines import peel

    parts: list[str] = []
    for found in _QUOTED.finditer(message):
        parts.append(next(group for group in found.groups() if group is not None))
    if not message.isascii():
        for piece in _NON_ASCII_RUN.split(message):
            piece = piece.strip(" ,;:")
            parts.append(peel(piece)[1].strip() if piece else piece)
    if _SENTENCE_END.search(message):  # also when a sign like ``H200(×8)`` is not ASCII
        parts.extend(_SENTENCE_END.split(message))
    seen = {message}
    facts: list[ErrorFacts] = []
    for part in parts:
        if len(part) >= 16 and part not in seen and len(facts) < 8:
            seen.add(part)
            facts.append(ErrorFacts(type_name="", message=part))
    return facts


def _embedded_messages(message: str) -> list[str]:
    """Error messages carried inside this one (JSON bodies, client reprs, the validators'
    messages of a pydantic ``ValidationError``); cheap when none."""
    if (
        "{" not in message
        and "alidation error" not in message
        and "failed, " not in message
        and "error, " not in message
    ):
        return []
    with guard("reading an embedded error body"):  # a broken body must not cost the match
        from .._facts.bodies import embedded_messages, validation_messages

        found = validation_messages(message)
        if "{" in message:
            found += [m for m in embedded_messages(message) if m not in found]
        return found
    return []


def explain_facts(
    facts: ErrorFacts,
    index: Index,
    read_text: TextReader | None = None,
    log_context: frozenset[str] = frozenset(),
) -> list[Match]:
    """All entries that explain ``facts`` (and its chain), best first, one per entry.

    ``read_text`` turns a placeholder's value into the failures it contains (tracebacks in
    a wrapper message); without it a value is matched as a bare message. ``log_context``:
    the projects the text around a failure read from a log shows (``Finding.context``).
    """
    return _Matcher(index, read_text, log_context).run(facts)


#: At most this many entries may be named for the frame a cut traceback stops in: a frame
#: that many failures pass through (``run_exp``) says nothing about which one it was.
MAX_KNOWN_AT = 3


def known_at(index: Index, frame: Frame, source: str = "") -> list[Entry]:
    """The entries raised in ``frame`` itself (a site) or right under it (a context frame
    naming its function), when few enough to say something: for a traceback cut before its
    error line, where the catalog knows failures to come from. Never why; not a match.

    ``source``, the frame's source line when shown: a line that is no ``raise`` or
    ``assert`` (a call) says the failure came from below, not from this frame's own raises.
    """
    if frame.path is None:
        return []
    path, function = canonical_path(frame.path), _last(frame.function)
    found: dict[str, Entry] = {}
    raises_here = not source or source.lstrip().startswith(("raise", "assert"))
    for entry, site in index.by_site.get((path, function), ()) if raises_here else ():
        if _function_ok(frame, site.function):
            found[entry.id] = entry
    for entry, ctx in index.by_context_path.get(path, ()):
        if ctx.function is not None and _ctx_fits(ctx, frame):
            found[entry.id] = entry
    return list(found.values()) if len(found) <= MAX_KNOWN_AT else []
