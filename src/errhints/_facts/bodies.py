"""Error messages embedded in other text: HTTP error bodies in JSON or as a Python dict repr,
and the validators' own messages inside a pydantic ``ValidationError``.

SGLang's server answers a bad request with ``{"object": "error", "message": ..., "code": 400}``;
FastAPI with ``{"detail": ...}``; OpenAI-style servers with ``{"error": {"message": ...}}``.
Clients wrap these in their own messages (openai's ``Error code: 400 - {'object': ...}``,
LlamaFactory's ``SGLang server error: 400, {...}``), so the real diagnosis is inside.

The work is bounded on any input: markers are found with ``str.find``, at most a few
candidates are tried, each body is at most ``MAX_BODY`` characters, and a Python repr is read
with ``ast.literal_eval`` (never ``eval``) on that bounded substring only.
"""

from __future__ import annotations

import ast
import contextlib
import json
import re
from dataclasses import dataclass

__all__ = [
    "Embedded",
    "body_field",
    "embedded_errors",
    "embedded_messages",
    "validation_messages",
]

#: Longest body (characters) that is parsed.
MAX_BODY = 64 * 1024
#: How far before a key marker the opening brace is looked for.
_BACK = 8 * 1024
#: How many marker positions are tried per text, and how many messages are returned.
_MAX_CANDIDATES = 24
_MAX_RESULTS = 8
_MAX_DEPTH = 2
#: Characters of brace matching allowed per call, over all candidates together.
_BUDGET = 96 * 1024

_KEYS = ("message", "detail", "error")
_MARKERS = tuple(q + k + q for k in _KEYS for q in ('"', "'"))
#: Characters that matter to brace matching; everything else is skipped in C.
_SIGNIFICANT = re.compile(r"[{}\[\]\"'\\]")
#: A string field of a body cut off before its end (a truncated log line).
_TRUNCATED_FIELD = re.compile(
    r"[\"'](message|detail|error)[\"']\s{0,8}:\s{0,8}"
    r"(?:\"((?:[^\"\\\n]|\\.){1,4096})(?:\"|\Z)|'((?:[^'\\\n]|\\.){1,4096})(?:'|\Z))"
)
_ERROR_LEVELS = frozenset({"error", "critical", "fatal"})
#: ``1 validation error for CompletionRequest`` / ``2 validation errors for X``: pydantic's
#: ``ValidationError`` as ``str()`` prints it.
_VALIDATION_HEAD = re.compile(r"\d+ validation errors? for \w")
#: One error's line: ``  Value error, max_tokens must be positive [type=value_error, ...``.
#: Only value and assertion errors carry a message the model's own validator wrote.
_VALIDATOR_LINE = re.compile(
    r"^ {2}(?:Value error|Assertion failed), (.{1,4096}?) \[type=(?:value|assertion)_error\b",
    re.MULTILINE,
)
#: What pydantic puts before a validator's message in an error's ``msg`` (HTTP bodies).
_VALIDATOR_PREFIXES = ("Value error, ", "Assertion failed, ")


@dataclass(frozen=True, slots=True)
class Embedded:
    """One embedded error: its message, the body's ``type`` (or ``""``) and whether the body
    says it is an error (``object: error``, an ``error``/``detail`` key, a 4xx/5xx code...)."""

    message: str
    type: str = ""
    is_error: bool = True


def validation_messages(text: str) -> list[str]:
    """The messages a model's validators raised, from a pydantic ``ValidationError`` printed
    as text (``str(exc)``) or from one error's ``msg`` (``Value error, ...``), in order.

    ``1 validation error for CompletionRequest / max_tokens / Value error, max_tokens must be
    positive [type=value_error, ...]`` carries ``max_tokens must be positive``, the words
    SGLang's validator raised; pydantic's own messages (``Field required``) are left out.
    """
    if text.startswith(_VALIDATOR_PREFIXES):
        return [_unprefixed(text)]
    if _VALIDATION_HEAD.match(text) is None:
        return []
    found: list[str] = []
    for m in _VALIDATOR_LINE.finditer(text, 0, MAX_BODY):
        message = m.group(1)  # pydantic's own "Value error, " is outside the group
        if message not in found:
            found.append(message)
        if len(found) >= _MAX_RESULTS:
            break
    return found


def _unprefixed(message: str) -> str:
    """Without the ``Value error, `` pydantic put before the validator's message (once: a
    validator may write those words itself, ``Value error, parameter top_n ...``)."""
    return message.split(", ", 1)[1] if message.startswith(_VALIDATOR_PREFIXES) else message


def body_field(line: str) -> str | None:
    """The text of a line that is one field of a body printed over several lines
    (``  "message": "...",``, as ``jq`` or ``json.dumps(indent=2)`` print it), else ``None``."""
    line = line.strip()
    if not line.startswith(_MARKERS):
        return None
    field = _TRUNCATED_FIELD.match(line)
    if field is None or field.end() < len(line.rstrip(",")):
        return None  # ``"error": {`` opens an object, or more follows the string
    raw, quote = (field.group(2), '"') if field.group(2) is not None else (field.group(3), "'")
    value = _unquote(raw, quote)
    return value if value and value.strip() else None


def embedded_messages(text: str) -> list[str]:
    """The error messages embedded in ``text``, outermost first, without duplicates."""
    return [e.message for e in embedded_errors(text)]


def embedded_errors(text: str) -> list[Embedded]:
    """Like :func:`embedded_messages`, with each body's ``type`` and error-ness."""
    out: list[Embedded] = []
    with contextlib.suppress(Exception):  # never let a strange body break the caller
        _scan(text, out, 0, [_BUDGET])
    seen: set[str] = set()
    unique: list[Embedded] = []
    for item in out:
        if item.message not in seen:
            seen.add(item.message)
            unique.append(item)
    return unique[:_MAX_RESULTS]


def _scan(text: str, out: list[Embedded], depth: int, budget: list[int]) -> None:
    if "{" not in text:
        return
    positions: list[int] = []
    for marker in _MARKERS:
        start = 0
        for _ in range(_MAX_CANDIDATES):
            found = text.find(marker, start)
            if found < 0:
                break
            positions.append(found)
            start = found + len(marker)
    if not positions:
        return
    positions.sort()
    done: list[tuple[int, int]] = []  # spans already read
    tried: set[int] = set()
    for pos in positions[:_MAX_CANDIDATES]:
        if any(a <= pos < b for a, b in done):
            continue
        span = _enclosing_body(text, pos, tried, budget)
        body = None
        if span is not None:
            body = _parse(text[span[0] : span[1]])
        if body is None:
            # Cut off, or not quite JSON nor Python (a shell-quoted ``\'`` in a JSON string):
            # the field itself still reads.
            field = _TRUNCATED_FIELD.match(text, pos)
            if field is not None:
                value = _unquote(field.group(2), '"') if field.group(2) else None
                if value is None and field.group(3):
                    value = _unquote(field.group(3), "'")
                if value and value.strip():
                    out.append(Embedded(value, "", True))
                    done.append((pos, field.end()))
            continue
        assert span is not None
        done.append(span)
        before = len(out)
        _extract(body, out, 0, under_error=False)
        if depth < _MAX_DEPTH:
            for item in out[before:]:
                _scan(item.message, out, depth + 1, budget)
        if len(out) >= _MAX_RESULTS:
            return


def _enclosing_body(
    text: str, pos: int, tried: set[int], budget: list[int]
) -> tuple[int, int] | None:
    """The span of the ``{...}`` holding the key at ``pos``: the nearest brace before it
    whose match closes after it, trying a few braces outward."""
    low = max(0, pos - _BACK)
    right = pos
    for _ in range(4):
        start = text.rfind("{", low, right)
        if start < 0:
            return None
        if start in tried:
            return None
        end = _json_end(text, start)
        if end is None:
            end = _match_brace(text, start, budget)
        if end is not None and end > pos:
            tried.add(start)
            return start, end
        right = start
    return None


_DECODER = json.JSONDecoder()


def _json_end(text: str, start: int) -> int | None:
    """End (exclusive) of a JSON object opening at ``start``, parsed in C: the common case
    (an HTTP error body) without walking it character by character."""
    try:
        _value, end = _DECODER.raw_decode(text[start : start + MAX_BODY])
    except (ValueError, RecursionError):
        return None
    return start + end


def _match_brace(text: str, start: int, budget: list[int]) -> int | None:
    """End (exclusive) of the bracketed value opening at ``start``, honouring JSON and
    Python string quoting; ``None`` if it does not close within ``MAX_BODY`` characters
    or the shared ``budget`` (significant characters visited) runs out."""
    limit = min(len(text), start + MAX_BODY)
    depth = 0
    quote = ""
    pos = start
    while True:
        m = _SIGNIFICANT.search(text, pos, limit)
        if m is None:
            return None
        budget[0] -= 1
        if budget[0] < 0:
            return None
        ch = m.group()
        pos = m.end()
        if quote:
            if ch == "\\":
                pos += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return pos
            if depth < 0:
                return None


def _parse(body: str) -> object | None:
    """JSON first; then a Python literal (openai's dict repr). Never ``eval``."""
    value: object
    try:
        value = json.loads(body)
        return value
    except (ValueError, RecursionError):
        pass
    try:
        value = ast.literal_eval(body)
        return value
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _unquote(raw: str, quote: str) -> str | None:
    if quote == '"' and "\\'" in raw:
        raw = raw.replace("\\'", "'")
    try:
        value = json.loads('"' + raw + '"') if quote == '"' else ast.literal_eval("'" + raw + "'")
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return raw
    return value if isinstance(value, str) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _looks_error(obj: dict[object, object], under_error: bool) -> bool:
    if under_error or obj.get("object") == "error" or obj.get("error") or obj.get("detail"):
        return True
    code = obj.get("code", obj.get("status_code", obj.get("status")))
    if isinstance(code, int) and not isinstance(code, bool) and code >= 400:
        return True
    level = obj.get("level", obj.get("levelname"))
    if isinstance(level, str) and level.lower() in _ERROR_LEVELS:
        return True
    kind = obj.get("type")
    return isinstance(kind, str) and kind.endswith(("Error", "Exception", "_error"))


def _extract(obj: object, out: list[Embedded], depth: int, *, under_error: bool) -> None:
    """Collect messages from a parsed body: ``message``, ``error`` (text or nested), ``detail``
    (text, nested, or FastAPI's list of ``{"msg": ...}``)."""
    if depth > 4 or len(out) >= _MAX_RESULTS:
        return
    if isinstance(obj, list):
        for item in obj[:8]:
            _extract(item, out, depth + 1, under_error=under_error)
        return
    if not isinstance(obj, dict):
        return
    kind = _text(obj.get("type")) or ""
    is_error = _looks_error(obj, under_error)
    message = obj.get("message")
    if _text(message):
        out.append(Embedded(str(message), kind, is_error))
    elif isinstance(message, dict | list):
        _extract(message, out, depth + 1, under_error=True)
    error = obj.get("error")
    if _text(error):
        out.append(Embedded(str(error), kind, True))
    elif isinstance(error, dict | list):
        _extract(error, out, depth + 1, under_error=True)
    detail = obj.get("detail")
    if _text(detail):
        out.append(Embedded(str(detail), kind, True))
    elif isinstance(detail, dict | list):
        _extract(detail, out, depth + 1, under_error=True)
    msg = obj.get("msg")
    if _text(msg) and message is None and error is None and detail is None:
        out.append(Embedded(str(msg), kind, is_error))
