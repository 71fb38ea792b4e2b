"""Message templates: parse ``{placeholder}`` text once, then match it in linear time.

A template is the message an f-string produces, with each replacement field kept as
``{expression}``. Matching never uses regular expressions: the literal pieces are looked
up left to right with ``str.find``/``startswith``, which is linear in the message length
and cannot backtrack, even on a 10 MB message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "ELLIPSES",
    "PROJECT_SHAPES",
    "SHAPES",
    "Template",
    "TemplateError",
    "fits_shape",
    "parse_template",
    "prose_lead",
]

#: Alphanumeric characters of literal text a template needs to match on text alone.
MIN_LITERAL_CHARS = 16

#: How a writer marks a message they cut short.
ELLIPSES = ("...", "\u2026")

#: An f-string's ``{expr=}`` (with an optional ``!r`` or ``:spec``), whose output starts with
#: the expression's own text; ``==``, ``!=``, ``<=`` and ``>=`` end no expression.
_SELF_DOCUMENTING = re.compile(r"(?P<expr>.*[^=!<>]=\s*)(?:![rsa])?(?::[^{}]*)?", re.S)
#: How much of the next literal a cut message must show for it to be taken off a value.
_CUT_PROBE = 8


#: Message shapes distinctive enough to match a template with little literal text (``{name}``)
#: on text alone: the catalog's ``shape`` field names one. Bounded, anchored patterns.
SHAPES: dict[str, re.Pattern[str]] = {
    # a checkpoint tensor's dotted name, as KeyError prints it: 'model.layers.3.mlp.up.weight'
    "tensor-name": re.compile(
        r"'?[A-Za-z_]\w{0,80}\.(?:\w{1,80}\.){0,24}"
        r"(?:weight|bias|\w{0,40}_scale(?:_inv)?|scales|qweight|qzeros|g_idx|weight_packed"
        r"|weight_shape|\w{0,40}_proj)'?"
    ),
    # a message that names dataset_info.json, LlamaFactory's list of datasets (``Cannot open
    # {path} due to {err}.``); with the template's words around it, LlamaFactory's own
    "names-dataset-info": re.compile(r"(?s).{0,1000}dataset_info\.json.{0,1000}"),
}

#: Shapes that, in the words of the entry's template, name the entry's own project: such a
#: message shows that project's run by itself.
PROJECT_SHAPES = frozenset({"names-dataset-info"})


def fits_shape(shape: str, message: str) -> bool:
    """Whether ``message`` (stripped) has the named shape; unknown shapes never fit."""
    pattern = SHAPES.get(shape)
    return pattern is not None and len(message) <= 2000 and bool(pattern.fullmatch(message.strip()))


def _cjk(char: str) -> bool:
    """Whether ``char`` is a CJK character (the prose of an issue title in Chinese)."""
    return "\u2e80" <= char <= "\u9fff"


def _glued_prose(message: str) -> int:
    """Where the message's last sentence ends, when prose in another script follows it (a
    full stop or closing bracket, then a CJK character right after it or after spaces), else
    ``-1``. The prose may hold words in ASCII (``...LoRA method.只能使用lora吗``), in fewer
    characters than its CJK ones."""
    cjk = letters = 0
    for at in range(len(message) - 1, 0, -1):
        char = message[at]
        if _cjk(char):
            cjk += 1
            end = at
            while end > 1 and message[end - 1] == " ":
                end -= 1  # ``...LoRA method.  请问...``: spaces before the prose
            if message[end - 1] in ".!)]":
                return end
        elif char.isascii() and not char.isspace():
            letters += 1
            if letters > cjk:
                return -1  # only a tail in another script is looked at
    return -1


#: The last character outside ASCII and the ASCII text after it (linear: each try stops at
#: the next character outside ASCII).
_LAST_NON_ASCII = re.compile(r"[^\x00-\x7f][\x00-\x7f]*\Z")


def prose_lead(message: str) -> int:
    """Where the message starts after an issue title's prose in another script glued before
    it (``模型合并导致报错ChatGLM model is not supported``): after the last character outside
    ASCII, when that is a CJK character or full-width punctuation and a letter follows it;
    else ``-1``."""
    if message.isascii():
        return -1
    found = _LAST_NON_ASCII.search(message)
    at = found.start() + 1 if found is not None else 0
    if at == 0 or not (_cjk(message[at - 1]) or "\uff00" <= message[at - 1] <= "\uffef"):
        return -1  # full-width punctuation (``，``) ends a title's prose too
    while at < len(message) and message[at] == " ":
        at += 1
    return at if at < len(message) and message[at].isalpha() else -1


_LINE_BREAK = re.compile(r"[ \t]*\n[ \t]*")

#: Punctuation a retyped message drops or changes (``ValueError Processor was not found please
#: check ...``); deleted, with case and runs of white space, before a last, loose comparison.
_PUNCTUATION = str.maketrans("", "", ".,;:!?'\"`")

#: Longest message compared loosely (the comparison copies the message).
_LOOSE_CHARS = 4096


def _loose(text: str) -> str:
    return " ".join(text.translate(_PUNCTUATION).split()).lower()


class TemplateError(ValueError):
    """A template string that cannot be parsed (unbalanced braces)."""


@dataclass(frozen=True, slots=True)
class Template:
    """A parsed template: literal pieces with one placeholder between each pair."""

    source: str
    literals: tuple[str, ...]
    names: tuple[str, ...]
    #: How many letters and digits the literal pieces hold.
    literal_chars: int
    #: The literal text with each placeholder folded to one space, for fuzzy scoring.
    skeleton: str

    @property
    def literal_rich(self) -> bool:
        """Whether the literal text alone is distinctive enough to match without a site."""
        return self.literal_chars >= MIN_LITERAL_CHARS

    def match(self, message: str) -> tuple[str, ...] | None:
        """Return the placeholder values if the whole message fits, else ``None``.

        Placeholders take any text (including none); each literal is taken at its leftmost
        place, the last one at the message's end. For patterns whose only wildcards are
        "any text", leftmost-greedy search finds a match whenever one exists.
        If the exact text does not fit, trailing white space is ignored on both sides:
        text read back from a log has lost it, while some messages end with a space. So is
        the template's final full stop when the message has none: an issue title or a
        retyped message drops it, and a release may word it without (LlamaFactory 0.9.0's
        ``... does not match the number of <image> tokens``). Last, runs of spaces count as
        one (``Can't find 'adapter_config.json'  at ...`` copied from a rendered page).
        A one-line template fits a message of several lines joined as one (a terminal wrapped
        it at its width), or by its first line alone: what follows it is not what the code
        wrote (the user's own words under a quoted error). Likewise a message whose last
        sentence runs into words in another script (``...access to localhost.请大佬们执教``).
        A message wrapped where a space was (an editor's soft wrap) fits with the space back.
        So does a message whose line breaks a rendered page dropped (``...batch size.Try to
        allocate ...``), one that starts with the line break of a triple-quoted string, and
        one without the location in parentheses that follows a quoted name at a template's
        end (``cannot import name 'x' from 'trl'``, its `` ({path})`` left out).
        Last of all, for a literal-rich template: a retyped message, the same words in the
        same order with punctuation, case and line breaks aside.
        """
        values = self._fits(message)
        if values is None and self.literal_rich and len(message) <= _LOOSE_CHARS:
            # retyped: the same words in the same order, punctuation, case and wrapping aside;
            # not when a literal between two values is punctuation alone (``{status}, {text}``)
            loose = tuple(_loose(lit) for lit in self.literals)
            if all(loose[1:-1]):
                values = self._match(_loose(message), loose)
        return values

    def fits(self, message: str) -> tuple[str, ...] | None:
        """Like :meth:`match`, without its last resort for a retyped message: the literal
        text must be there as written (case, punctuation and all)."""
        return self._fits(message)

    def _fits(self, message: str) -> tuple[str, ...] | None:
        values = self._match(message, self.literals)
        if values is None:
            stripped = message.rstrip()
            last = self.literals[-1].rstrip()
            if stripped != message or last != self.literals[-1]:
                values = self._match(stripped, (*self.literals[:-1], last))
            if values is None and (end := _glued_prose(stripped)) > 0:
                values = self._fits(stripped[:end])
            if values is None and (start := prose_lead(stripped)) > 0:
                values = self._fits(stripped[start:])
            if values is None and last.endswith(".") and not stripped.endswith("."):
                values = self._match(stripped, (*self.literals[:-1], last[:-1]))
            if values is None and "  " in stripped:
                # a copy from a rendered page or a retyped line doubles a space
                lits = self._literals_with(_SPACES, " ", last)
                values = self._match(_SPACES.sub(" ", stripped), lits)
            if values is None and stripped[:1].isspace() and not self.literals[0][:1].isspace():
                # a message written as a triple-quoted string starts with its line break
                body = stripped.lstrip()
                if "\n" in stripped[: len(stripped) - len(body)]:
                    values = self._fits(body)
            if values is None and "\n" in self.source and "\n" not in stripped:
                # a rendered page dropped the line breaks between the message's lines
                for joint in ("", " "):
                    lits = self._literals_with(_LINE_BREAK, joint, last)
                    values = self._match(stripped, lits)
                    if values is not None:
                        break
            lits = self.literals
            if values is None and len(lits) > 2 and last == ")" and lits[-2].endswith("' ("):
                # Python's ``cannot import name 'x' from 'trl' (/path/__init__.py)`` pasted
                # without the location in parentheses after the module's quoted name
                head = self._match(stripped, (*lits[:-2], lits[-2][:-2]))
                values = None if head is None else (*head, "")
            if values is None and "\n" in stripped and "\n" not in self.source:
                values = self._fits(stripped.replace("\n", ""))
                if values is None:  # wrapped where a space was (an editor's soft wrap)
                    values = self._fits(_LINE_BREAK.sub(" ", stripped))
                first = stripped[: stripped.index("\n")]
                if values is None and first.strip():
                    values = self._fits(first)
        return values

    def _literals_with(self, pattern: re.Pattern[str], repl: str, last: str) -> tuple[str, ...]:
        """The literals, ``last`` standing for the last one (stripped, say), each with
        ``pattern`` replaced by ``repl``."""
        return tuple(pattern.sub(repl, lit) for lit in (*self.literals[:-1], last))

    @staticmethod
    def _match(message: str, lits: tuple[str, ...]) -> tuple[str, ...] | None:
        if len(lits) == 1:
            return () if message == lits[0] else None
        first, last = lits[0], lits[-1]
        if not message.startswith(first):
            return None
        end = len(message) - len(last)
        if end < len(first) or not message.endswith(last):
            return None
        pos = len(first)
        values: list[str] = []
        for piece in lits[1:-1]:
            found = message.find(piece, pos, end) if piece else pos
            if found < 0:
                return None
            values.append(message[pos:found])
            pos = found + len(piece)
        values.append(message[pos:end])
        return tuple(values)

    def match_head(self, message: str) -> tuple[str, ...] | None:
        """Values for a message that is the first lines of a multi-line template's message.

        A paste often keeps only the first lines of a long message (SGLang's ``Capture cuda
        graph failed: {e}`` and the advice lines after it). For a template whose literal
        text spans lines, the message fits when it starts like the template and holds its
        literals in order up to some placeholder, which takes the rest; the literal text
        fitted must be literal-rich on its own. A one-line template fits when only its last
        literal is missing and the last value is visibly cut: it opens a bracket or quote it
        never closes (``... tokens in [{'content': '<image>hi', 'role': 'use``), and does not
        hold the first word of the missing literal (then the message went on in other words).
        """
        lits = self.literals
        elided = self._elided(message)
        if elided is not None:
            return elided
        if len(lits) < 2:
            return self._first_sentences(message)
        if "\n" not in "".join(lits[1:]):
            return self._cut_value(message) or self._first_sentences(message)
        chars = 0
        best: tuple[str, ...] | None = None
        for k in range(1, len(lits)):
            chars += sum(c.isalnum() for c in lits[k - 1])
            values = self._match(message, (*lits[:k], ""))
            if values is None:
                break
            if chars >= MIN_LITERAL_CHARS:
                best = _cut_before(values, lits[k])
        return best or self._first_sentences(message)

    def _elided(self, message: str) -> tuple[str, ...] | None:
        """Values for a message its writer cut with an ellipsis (``Please add
        `--is-embedding`...``): what is left is the template's start, cut inside a literal
        or a value, and holds twice a whole template's distinctive literal text, or all of the
        template's literal text but its punctuation (``cannot import name '{name}' from
        'xgrammar' ({path})`` cut inside the path). An issue title holds a message of several
        lines on one."""
        text = message.rstrip()
        for mark in ELLIPSES:
            if text.endswith(mark):
                text = text[: -len(mark)].rstrip()
                break
        else:
            return None
        # twice a distinctive text, or all the template's literal text but punctuation
        enough = max(MIN_LITERAL_CHARS, min(2 * MIN_LITERAL_CHARS, self.literal_chars))
        lits = self.literals
        if "\n" in self.source and "\n" not in text:  # an issue title: one line
            lits = self._literals_with(_LINE_BREAK, " ", lits[-1])
        if lits[0].startswith(text):  # cut inside the first literal
            return () if sum(c.isalnum() for c in text) >= enough else None
        chars = 0
        best: tuple[str, ...] | None = None
        for k in range(1, len(lits)):
            values = self._match(text, (*lits[:k], ""))  # the last value takes the rest
            if values is None:
                break
            chars += sum(c.isalnum() for c in lits[k - 1])
            cut = _cut_before(values, lits[k])  # cut inside the next literal
            part = values[-1][len(cut[-1]) :]
            if chars + sum(c.isalnum() for c in part) >= enough:
                best = cut
        return best

    def starts(self, message: str) -> bool:
        """Whether ``message`` is this template's start, cut short anywhere (``Processor was
        not found, plea``): it begins with the first literal (or is the first 12 characters of
        it at least) and holds the literals after it in order as far as it goes. Loose: for
        a message whose raise site already fits, never on text alone."""
        text = message.rstrip()
        lits = self.literals
        if len(text) < 12:
            return False
        if lits[0].startswith(text):
            return True
        return len(lits) > 1 and self._match(text, (lits[0], "")) is not None

    def _cut_value(self, message: str) -> tuple[str, ...] | None:
        """All but the last literal, the last value visibly cut (see :meth:`match_head`)."""
        lits = self.literals
        if sum(c.isalnum() for c in "".join(lits[:-1])) < MIN_LITERAL_CHARS:
            return None
        values = self._match(message, (*lits[:-1], ""))
        if values is None or not _visibly_cut(values[-1]):
            return None
        # the message went on past where the last literal starts, in other words
        word = _first_word(lits[-1])
        return None if len(word) >= 3 and word in values[-1] else values

    def _first_sentences(self, message: str) -> tuple[str, ...] | None:
        """Values for a message that is the template's first sentences (a quote or a title
        keeps the headline of a long message): it ends at a full stop of the template's text,
        or with a one-word value right before one; what it holds of the literal text must be
        twice as distinctive as a whole template's. Soft wraps count as spaces."""
        lits = self.literals
        text = message.rstrip()
        if "\n" in text and "\n" not in self.source:
            text = _LINE_BREAK.sub(" ", text)  # an editor's soft wrap
        bare = text[:-1] if text.endswith(".") else text
        stop = lits[0].find(". ")
        while stop >= 0:  # the headline of a message that starts with whole sentences
            head = lits[0][: stop + 1]
            if sum(c.isalnum() for c in head) >= 2 * MIN_LITERAL_CHARS and text in (
                head,
                head[:-1],
            ):
                return ()
            stop = lits[0].find(". ", stop + 1)
        chars = 0
        for k in range(1, len(lits)):
            chars += sum(c.isalnum() for c in lits[k - 1])
            following = lits[k]
            if following.startswith(".") and chars >= 2 * MIN_LITERAL_CHARS:
                values = self._match(bare, (*lits[:k], ""))
                if values is not None and values[-1] and not any(c.isspace() for c in values[-1]):
                    return values
            stop = following.find(". ")
            while stop >= 0:
                head = following[: stop + 1]
                if chars + sum(c.isalnum() for c in head) >= 2 * MIN_LITERAL_CHARS:
                    for end in (head, head[:-1]) if head[:-1].strip() else ():
                        values = self._match(text, (*lits[:k], end))
                        if values is not None:
                            return values
                stop = following.find(". ", stop + 1)
        return None

    def search(self, text: str) -> tuple[int, int, tuple[str, ...]] | None:
        """Find the template inside larger text; return ``(start, end, values)`` or ``None``.

        Used for messages that embed this one. The first and last literals must be
        non-empty for the span to be bounded; otherwise only :meth:`match` applies.
        The last placeholder takes the shortest text that reaches the last literal.
        """
        lits = self.literals
        if not lits[0] or (len(lits) > 1 and not lits[-1]):
            return None
        start = text.find(lits[0])
        if start < 0:
            return None
        pos = start + len(lits[0])
        values: list[str] = []
        for piece in lits[1:]:
            found = text.find(piece, pos) if piece else pos
            if found < 0:
                return None
            values.append(text[pos:found])
            pos = found + len(piece)
        return start, pos, tuple(values)


_CLOSER = {"(": ")", "[": "]", "{": "}"}
_SPACES = re.compile(" {2,}")


def _visibly_cut(value: str) -> bool:
    """Whether ``value`` opens a bracket or a quote it never closes (a message cut short)."""
    stack: list[str] = []
    quote = ""
    for char in value:
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in _CLOSER:
            stack.append(_CLOSER[char])
        elif stack and char == stack[-1]:
            stack.pop()
    return bool(stack or quote)


def _first_word(literal: str) -> str:
    """The first run of letters and digits in ``literal``."""
    word = ""
    for char in literal.lstrip():
        if not char.isalnum():
            break
        word += char
    return word


def _cut_before(values: tuple[str, ...], literal: str) -> tuple[str, ...]:
    """The values without the start of ``literal`` the message ends in, if it ends in one."""
    last = values[-1]
    at = last.find(literal[:_CUT_PROBE]) if len(literal) >= _CUT_PROBE else -1
    while at >= 0:
        if literal.startswith(last[at:]):
            return (*values[:-1], last[:at])
        at = last.find(literal[:_CUT_PROBE], at + 1)
    return values


def parse_template(source: str) -> Template:
    """Split ``source`` into literals and placeholders; ``{{``/``}}`` are literal braces.

    A placeholder runs to its matching ``}``, so expressions such as
    ``{len(data) if isinstance(data, list) else type(data).__name__}`` or ``{d['k']}`` work.
    A self-documenting placeholder, ``{self.soft=}``, is the literal ``self.soft=`` before
    its value, as an f-string prints it.
    """
    literals: list[str] = []
    names: list[str] = []
    buf: list[str] = []
    i, n = 0, len(source)
    while i < n:
        ch = source[i]
        if ch == "{":
            if source.startswith("{{", i):
                buf.append("{")
                i += 2
                continue
            depth, j = 1, i + 1
            while j < n and depth:
                if source[j] == "{":
                    depth += 1
                elif source[j] == "}":
                    depth -= 1
                j += 1
            if depth:
                raise TemplateError(f"unclosed '{{' at offset {i} in template {source!r}")
            body = source[i + 1 : j - 1]
            if (shown := _SELF_DOCUMENTING.fullmatch(body)) is not None:
                buf.append(shown["expr"])  # ``{x=}`` prints ``x=`` and then the value
            literals.append("".join(buf))
            buf = []
            names.append(shown["expr"].rstrip().rstrip("=").strip() if shown else body.strip())
            i = j
        elif ch == "}":
            if source.startswith("}}", i):
                buf.append("}")
                i += 2
                continue
            raise TemplateError(f"single '}}' at offset {i} in template {source!r}")
        else:
            buf.append(ch)
            i += 1
    literals.append("".join(buf))
    return Template(
        source=source,
        literals=tuple(literals),
        names=tuple(names),
        literal_chars=sum(ch.isalnum() for piece in literals for ch in piece),
        skeleton=" ".join(p.strip() for p in literals if p.strip()),
    )
