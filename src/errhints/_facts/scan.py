"""Find failures in text: Python tracebacks, bare error lines and HTTP error bodies in logs.

A log is read line by line and only what it needs is kept: the lines of the tracebacks that
are still open. Ordinary lines cost one search for a few marker words (done in C over whole
blocks by :func:`scan_text` and :func:`scan_stream`); only lines near a marker are looked at
closely. Every regular expression here is anchored or bounded, so no line can make it slow.

Each line's log prefix (``[rank5]: ``, ``(WorkerDict pid=616, ip=...) ``, timestamps, levels,
``[2026-01-01 10:00:00 TP3] ``) is peeled off; what remains of the prefix is the line's
*stream*, so the tracebacks of several ranks printed at once are followed side by side.
A traceback's text is then cut into its chained sections and exception-group members and
turned into :class:`~errhints._facts.ErrorFacts`.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, AnyStr, Literal

from .bodies import embedded_errors
from .model import MAX_CHAIN, MAX_FRAMES, ErrorFacts, Frame
from .paths import split_path

__all__ = [
    "MAX_LINE",
    "Finding",
    "is_exception_name",
    "parse_traceback",
    "scan_lines",
    "scan_stream",
    "scan_text",
]

#: Longest part of one line that is analysed; the rest of a longer line is skipped.
MAX_LINE = 64 * 1024
#: Longest stored line of a traceback's frames and source (messages have their own cap).
_STORED_LINE = 8 * 1024
#: Lines of one traceback kept: the first ``_HEAD_LINES`` (and ``_HEAD_CHARS``), then the last
#: ``_TAIL_LINES``; a longer traceback loses its middle.
_HEAD_LINES = 2000
_HEAD_CHARS = 1024 * 1024
_TAIL_LINES = 1000
#: Continuation lines and characters of one message.
_MAX_MSG_LINES = 200
_MAX_MSG_CHARS = 64 * 1024
#: Tracebacks followed at once (one per stream); the stalest is closed beyond this.
_MAX_OPEN = 64
#: Lines of other streams after which an open traceback is closed: long while its frames
#: are still coming, short once its message is complete.
_IDLE_FRAMES = 2000
_IDLE_MESSAGE = 64
_SWEEP_EVERY = 256

_HEADER = "Traceback (most recent call last):"
_HEADER_CORE = "Traceback (most recent call last)"
_GROUP_HEADER_CORE = "Exception Group Traceback (most recent call last)"
_CAUSE = "The above exception was the direct cause of the following exception:"
_CONTEXT = "During handling of the above exception, another exception occurred:"
_SEPARATORS = {_CAUSE: "cause", _CONTEXT: "context"}
_NOTE_PREFIX = "errhints: "
_BOX = frozenset("╭│╰┃┏┗║╔╚")
_BOX_TOP = frozenset("╭┏╔")
_BOX_SIDE = frozenset("│┃║")

#: Substrings of any line worth a closer look: exception names, traceback headers, bodies.
#: (``KeyboardInterrupt``/``SystemExit`` are found inside tracebacks, not as lone lines.)
_MARKERS = ("rror", "xception", "Traceback", "Warning", "detail")
_MARKERS_B = tuple(m.encode() for m in _MARKERS)
_SUFFIXES = ("Error", "Exception", "Warning", "Exit", "Interrupt")
#: Exception names recognised on a lone line besides ``<Name><suffix>``: those without one of
#: ``_SUFFIXES`` and, to say so explicitly, some that SGLang and torch users meet often.
KNOWN_EXCEPTIONS = frozenset(
    {
        "KeyboardInterrupt",
        "SystemExit",
        "StopIteration",
        "StopAsyncIteration",
        "GeneratorExit",
        "ExceptionGroup",
        "BaseExceptionGroup",
        "KVTransferError",
        "OutOfMemoryError",
        "CancelledError",
    }
)

#: Known exception names without one of the suffixes: lines starting with one are checked.
_OTHER_STARTS = tuple(n for n in KNOWN_EXCEPTIONS if not n.endswith(_SUFFIXES))

_TB, _MSG, _BLANK, _SEP = 1, 2, 3, 4

_ANSI = re.compile(
    r"\x1b(?:\[[0-9;:?<=>]{0,40}[ -/]{0,4}[@-~]|\][^\x07\x1b]{0,512}(?:\x07|\x1b\\)?|[@-Z\\-_])"
)
_RAY_REPEAT = re.compile(r"\s\[repeated \d{1,9}x across cluster\]\s{0,4}$")
_TS = (
    r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?"
    r"|\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d{1,9})?"
    r"|\d\d:\d\d:\d\d(?:[.,]\d{1,9})?"
)
_TS_IN = re.compile(r"\d{4}[-/]\d\d[-/]\d\d[T _]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?|" + _TS)
_LEVELS = r"(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL|TRACE|NOTICE|SUCCESS)"
#: One token of a log prefix, matched at a position (never searched).
_TOKEN = re.compile(
    r"(?P<ts>(?:" + _TS + r")(?: (?:stdout|stderr) [FP])?)(?=[ \t|\]]|$)"
    r"|(?P<br>\[(?:[^\[\]\n]{0,40}\d\d:\d\d:\d\d[^\[\]\n]{0,120}"
    r"|(?=[^\]\n]{0,160}[A-Za-z])[^\[\]\n]{1,160})\]:?)"
    r"|(?P<ray>\([\w.:-]{0,80} ?pid=\d{1,10}[^()\n]{0,200}\)"
    r"|\((?:raylet|gcs_server|autoscaler|monitor|log_monitor|dashboard)(?:, ip=[\w.:]{1,64})?\))"
    r"|(?P<lvl>" + _LEVELS + r":[\w.-]{1,120}:|" + _LEVELS + r":?(?=[ \t|]|$))"
    r"|(?P<glog>[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{1,9} {1,8}\d{1,10} [\w./-]{1,300}:\d{1,7}\])"
    r"|(?P<loc>[\w.<>-]{1,200}:[\w.<>-]{1,200}:\d{1,7})(?= - )"
    r"|(?P<name>[\w.-]{1,120})(?= - " + _LEVELS + r" - )"
    r"|(?P<sep>[-|])(?= )"
)
#: First characters that can start a log prefix; other lines skip the prefix regex.
_PREFIX_START = frozenset("0123456789[(IWEFDCTNS")
_FRAME = re.compile(r'[ \t]{0,64}File "([^"\n]{1,4096})", line (\d{1,9})(?:, in (.{1,2048}))?$')
_TYPE = re.compile(r"[A-Za-z_][\w.<>]{0,300}(?:\([\w.]{1,200}\))?")


@dataclass(slots=True)
class Finding:
    """One failure found in text: where it is (1-based lines) and what it says."""

    line: int
    end_line: int
    kind: Literal["traceback", "line", "body"]
    facts: ErrorFacts


def is_exception_name(name: str) -> bool:
    """Whether ``name`` (``ValueError``, ``torch.OutOfMemoryError``) names an exception.

    Used where nothing else says so (a lone line, a body's ``type``): the last dotted part
    must be capitalised and end in Error/Exception/Warning/Exit/Interrupt, or be a known
    name; the bare words ``Error`` and ``Exception`` are too common in prose to count.
    """
    base = name.partition("(")[0]
    if not base or _TYPE.fullmatch(name) is None:
        return False
    last = base.rpartition(".")[2]
    if last in KNOWN_EXCEPTIONS:
        return True
    if not last[:1].isupper():
        return False
    return any(last.endswith(s) and len(last) > len(s) for s in _SUFFIXES)


def _split_exc_line(line: str) -> tuple[str, str] | None:
    """``"KeyError: 'x'"`` -> ``("KeyError", "'x'")``; a bare ``"KeyboardInterrupt"`` too."""
    head, sep, message = line.partition(": ")
    if not sep:
        head = line.rstrip()
        if head.endswith(":"):
            head = head[:-1]
        message = ""
    if len(head) > 500 or _TYPE.fullmatch(head) is None:
        return None
    return head, message


def _exception_in(content: str) -> tuple[int, str, str] | None:
    """Find an exception name followed by ``:`` in a line: ``(start, type, message)``.

    At the line's start any exception-like name counts; inside the line (``... failed:
    ValueError: bad``, the warnings module's ``path.py:12: UserWarning: ...``) the earliest
    one that ends in a known suffix does. ``Name(args): text`` counts too: Ray's
    ``RayTaskError(ValueError): ...`` names a type, while SGLang's
    ``KVTransferError(bootstrap_room=7): reason`` is a message that starts with its type's
    name (its ``__str__``), so the message keeps it. Linear: ``str.find`` and bounded walks.
    """
    suffixes = [suffix for suffix in _SUFFIXES if suffix in content]
    if not suffixes and not content.startswith(_OTHER_STARTS):
        return None
    split = _split_exc_line(content) if content[:1].isalpha() or content[:1] == "_" else None
    if split is not None and is_exception_name(split[0]):
        return 0, split[0], split[1]
    best: tuple[int, str, str] | None = None
    for suffix in suffixes:
        for needle in (suffix + ":", suffix + "("):
            start = 0
            for _ in range(4):
                found = content.find(needle, start)
                if found < 0:
                    break
                start = found + 1
                hit = _exception_at(content, found, suffix, needle[-1] == "(")
                if hit is not None:
                    if best is None or hit[0] < best[0]:
                        best = hit
                    break
    return best


def _exception_at(
    content: str, found: int, suffix: str, paren: bool
) -> tuple[int, str, str] | None:
    """The exception whose name ends with ``suffix`` at ``found``, if it is one."""
    end = found + len(suffix)
    begin = found
    floor = max(0, found - 200)
    while begin > floor and (content[begin - 1].isalnum() or content[begin - 1] in "._"):
        begin -= 1
    name = content[begin:end]
    if not name[:1].isalpha() or not is_exception_name(name):
        return None
    if not paren:
        if end + 1 < len(content) and content[end + 1] != " ":
            return None
        return begin, name, content[end + 2 :]
    close = content.find(")", end, end + 300)
    if close < 0 or content[close + 1 : close + 2] != ":":
        return None
    if close + 2 < len(content) and content[close + 2] != " ":
        return None
    inner = content[end + 1 : close]
    if _TYPE.fullmatch(inner) and is_exception_name(inner):
        return begin, f"{name}({inner})", content[close + 3 :]
    return begin, name, content[begin:]


def _worth_a_look(raw: str) -> bool:
    """Whether a line outside any traceback could start one, or be a finding itself."""
    return (
        "Traceback" in raw
        or "{" in raw
        or "Error" in raw
        or "Exception" in raw
        or "Warning" in raw
        or "Exit" in raw
        or "Interrupt" in raw
        or "Stop" in raw
    )


def _starts_exception(line: str) -> bool:
    """Whether a line begins with an exception name and ``:`` (a new error, not more text)."""
    hit = _exception_in(line)
    return hit is not None and hit[0] == 0


def _peel(line: str) -> tuple[str, str]:
    """Split a line into (stream key, content): the key is the line's log prefix with its
    timestamps folded to ``T``, so that every line of one stream has the same key."""
    if not line or line[0] not in _PREFIX_START:
        return "", line
    pos = 0
    keys: list[str] = []
    size = len(line)
    for _ in range(10):
        m = _TOKEN.match(line, pos)
        if m is None:
            break
        kind = m.lastgroup
        token = m.group()
        if kind == "sep" and not keys:
            break
        if kind in ("ts", "glog"):
            keys.append("T")
        elif kind == "br":
            keys.append(_TS_IN.sub("T", token))
        else:
            keys.append(token)
        pos = m.end()
        if pos < size and line[pos] in " \t":
            pos += 1
            if kind in ("lvl", "sep", "name", "loc"):
                while pos < size and line[pos] == " " and pos < m.end() + 16:
                    pos += 1
    if not keys:
        return "", line
    return "".join(keys), line[pos:]


def _frame(filename: str, function: str, line: int | None) -> Frame:
    path, package = split_path(filename)
    return Frame(filename, function, line, path, package, qualified=False)


def _cap_frames(frames: list[Frame]) -> tuple[Frame, ...]:
    if len(frames) > MAX_FRAMES:
        half = MAX_FRAMES // 2
        frames = frames[:half] + frames[-half:]
    return tuple(frames)


# -- parsing one traceback's text -----------------------------------------------------------


def parse_traceback(text: str | list[str]) -> ErrorFacts | None:
    """Read one traceback (with its chain and exception groups) already cut out of a log.

    The returned facts are the last exception; every other one is in its ``chain``, nearest
    first, with ``relation`` "cause", "context" or "group". ``None`` if nothing was found.
    """
    lines = text.splitlines() if isinstance(text, str) else text
    root = _parse_text(lines)
    if root is None:
        return None
    root.relation = ""
    flat: list[ErrorFacts] = []
    queue = deque(root.chain)
    root.chain = []
    while queue:
        facts = queue.popleft()
        queue.extend(facts.chain)
        facts.chain = []
        if len(flat) < MAX_CHAIN - 1:
            flat.append(facts)
    root.chain = flat
    return root


def _parse_text(lines: list[str]) -> ErrorFacts | None:
    """Sections split at the chain separators; each is the cause/context of the next."""
    sections: list[tuple[list[str], str]] = []
    current: list[str] = []
    for s in lines:
        relation = _SEPARATORS.get(s.strip()) if len(s) < 200 else None
        if relation is None:
            current.append(s)
        else:
            sections.append((current, relation))
            current = []
    sections.append((current, ""))
    previous: ErrorFacts | None = None
    for section, relation in sections:
        facts = _parse_section(section)
        if facts is None:
            continue
        if previous is not None:
            facts.chain.insert(0, previous)
        facts.relation = relation
        previous = facts
    return previous


def _parse_section(lines: list[str]) -> ErrorFacts | None:
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    if start == len(lines):
        return None
    first = lines[start]
    rest = first.lstrip()
    if first[:1] in " \t" and (rest.startswith("+ Exception Group") or rest.startswith("| ")):
        return _parse_group(lines[start:])
    return _parse_plain(lines[start:])


def _parse_plain(lines: list[str]) -> ErrorFacts | None:
    """One exception's traceback: header, frames (plain or rich), the final line, more lines."""
    frames: list[Frame] = []
    rows: list[str] = []
    has_header = False
    width = 0
    final = -1
    for index, s in enumerate(lines):
        st = s.strip()
        if not st:
            continue
        c0 = st[0]
        if c0 in _BOX:
            if c0 in _BOX_TOP and _HEADER_CORE in st:
                has_header = True
            if c0 not in _BOX_SIDE:
                width = max(width, len(s.rstrip()))
            rows.append(st)
            continue
        if st.startswith((_HEADER_CORE, _GROUP_HEADER_CORE)):
            has_header = True
            continue
        if s[0] in " \t":
            m = _FRAME.match(s)
            if m is not None:
                func = (m.group(3) or "").strip()
                frames.append(_frame(m.group(1), func, int(m.group(2))))
            continue
        final = index
        break
    if rows:
        frames = _rich_frames(rows) + frames
    type_name = message = ""
    if final >= 0:
        split = _split_exc_line(lines[final])
        if split is not None:
            type_name = split[0]
            more = _message_lines(lines[final + 1 :])
            message = _join_message(lines[final], split[1], more, width)
    if not type_name and not frames:
        return None
    return ErrorFacts(
        type_name=type_name,
        message=message,
        frames=_cap_frames(frames),
        has_stack=has_header or bool(frames),
    )


def _message_lines(more: list[str]) -> list[str]:
    """The message's continuation lines: up to an errhints note printed after it (a log of
    a run that already had errhints), without trailing blank lines."""
    for index, s in enumerate(more):
        if s.startswith(_NOTE_PREFIX):
            more = more[:index]
            break
    while more and not more[-1].strip():
        more = more[:-1]
    return more


def _join_message(first_line: str, first: str, more: list[str], width: int) -> str:
    """The message's lines as printed (trailing spaces kept: ``str(exc)`` may have them);
    lines that rich wrapped at the box width are joined back.

    Rich wraps where the next word would pass ``width`` and pads lines with spaces; a line
    after which the next line's first word would still have fitted ended with a newline.
    A line filling the whole width was folded inside a word.
    """
    if not width:
        return "\n".join([first, *more])
    parts = [first.rstrip()]
    previous = first_line.rstrip()
    for s in more:
        s = s.rstrip()
        word = s.split(" ", 1)[0]
        if len(previous) >= width:
            parts.append(s)
        elif len(previous) + 1 + len(word) > width:
            parts.append(" " + s)
        else:
            parts.append("\n" + s)
        previous = s
    return "".join(parts)


def _rich_header(inner: str) -> tuple[str, int, str | None] | None:
    """A rich frame header ``/path/file.py:123 in func`` (``func`` None when wrapped)."""
    if not inner or inner[0].isdigit() or inner[0] in "❱…" or inner[0] in _BOX:
        return None
    head, sep, func = inner.rpartition(" in ")
    if not sep:
        if not inner.endswith(" in"):
            return None
        head, func = inner[:-3], ""
    path, colon, number = head.rpartition(":")
    if not colon or not number.isdigit() or not path or len(number) > 9:
        return None
    if not (path.endswith(".py") or "/" in path or "\\" in path or path.startswith("<")):
        return None
    name = func.strip()
    if " " in name:
        return None
    return path, int(number), name or None


def _rich_frames(rows: list[str]) -> list[Frame]:
    """Frames from the rows of rich's traceback box, long headers re-joined across rows."""
    inner: list[str] = []
    for st in rows:
        if st[0] not in _BOX_SIDE:
            inner.append("")
            continue
        text = st[1:]
        if text and text[-1] in _BOX_SIDE:
            text = text[:-1]
        inner.append(text.strip())
    frames: list[Frame] = []
    i = 0
    while i < len(inner):
        text = inner[i]
        header = _rich_header(text)
        used = 1
        if header is None and (text[:1] in "/~\\<" or text[1:3] == ":\\"):
            joined = text
            for extra in range(1, 3):
                if i + extra >= len(inner) or not inner[i + extra]:
                    break
                joined += inner[i + extra]
                header = _rich_header(joined)
                if header is not None:
                    used = extra + 1
                    break
        if header is None:
            i += 1
            continue
        path, number, func = header
        if func is None and i + used < len(inner) and inner[i + used]:
            func = inner[i + used].split()[0]
            used += 1
        frames.append(_frame(path, func or "", number))
        i += used
    return frames


def _parse_group(lines: list[str]) -> ErrorFacts | None:
    """An exception group in its ``+``/``|`` margin form; members join the chain as "group"."""
    first = lines[0]
    col = len(first) - len(first.lstrip())
    own: list[str] = []
    members: list[list[str]] = []
    current: list[str] | None = None
    closed = False
    for s in lines:
        if not s.strip() or s[:col].strip():
            continue
        rel = s[col:]
        if not members:
            if rel.startswith("+-+"):
                current = []
                members.append(current)
            elif rel.startswith(("| ", "+ ")):
                own.append(rel[2:])
            elif rel.rstrip() in ("|", "+"):
                own.append("")
            continue
        if closed:
            continue
        body = rel[2:] if rel.startswith("  ") else None
        if body is None:
            continue
        if body.startswith("+" + "-" * 16):
            if body.rstrip() == "+" + "-" * 36:
                closed = True
                current = None
            else:
                current = []
                members.append(current)
            continue
        if current is not None:
            current.append(body)
    facts = _parse_text(own)
    parsed = [f for f in (_parse_member(m) for m in members) if f is not None]
    if facts is None:
        if not parsed:
            return None
        facts = ErrorFacts(type_name="", message="")
    for member in parsed:
        member.relation = "group"
        facts.chain.append(member)
    return facts


def _parse_member(lines: list[str]) -> ErrorFacts | None:
    if any(s.startswith("+-+") for s in lines):
        return _parse_group(lines)
    plain = [s[2:] if s.startswith("| ") else ("" if s.rstrip() == "|" else s) for s in lines]
    return _parse_text(plain)


# -- following tracebacks through a log -----------------------------------------------------


class _Record:
    """The lines of one traceback (or error line) still being read, and where it stands."""

    __slots__ = (
        "blanks",
        "chained",
        "chars",
        "confirmed",
        "end",
        "first_message",
        "group",
        "head",
        "indent",
        "key",
        "kind",
        "last_seen",
        "msg_chars",
        "msg_lines",
        "start",
        "state",
        "tail",
        "type_name",
    )

    def __init__(self, key: str, lineno: int, kind: str, state: int, group: bool) -> None:
        self.key = key
        self.start = self.end = self.last_seen = lineno
        self.kind = kind
        self.state = state
        self.group = group
        self.confirmed = not key
        self.head: list[str] = []
        self.tail: deque[str] | None = None
        self.chars = 0
        self.blanks = 0
        self.msg_lines = 0
        self.msg_chars = 0
        self.chained = False  # a chain separator was seen
        self.type_name = ""  # for a lone error line: its type and first message line
        self.first_message = ""
        self.indent = 0  # columns before a rich box drawn by a log handler

    def add(self, s: str, lineno: int) -> None:
        if self.state == _MSG:
            s = s[: max(0, _MAX_MSG_CHARS - self.msg_chars)]
            self.msg_lines += 1
            self.msg_chars += len(s) + 1
        elif len(s) > _STORED_LINE:
            s = s[:_STORED_LINE]
        self.end = lineno
        if self.tail is None and len(self.head) < _HEAD_LINES and self.chars < _HEAD_CHARS:
            self.head.append(s)
            self.chars += len(s)
            return
        if self.tail is None:
            self.tail = deque(maxlen=_TAIL_LINES)
        self.tail.append(s)

    def lines(self) -> list[str]:
        return self.head + list(self.tail) if self.tail else self.head


def _starts_group(content: str) -> bool:
    """``  | ExceptionGroup: eg (2 sub-exceptions)``: a group printed without a stack."""
    rest = content.lstrip(" ")
    return (
        content[:1] == " "
        and rest.startswith("| ")
        and "sub-exception" in rest
        and is_exception_name(rest[2:].partition(":")[0])
    )


class _Scanner:
    """The state machine: feed it lines (or blocks of lines), collect :class:`Finding`."""

    def __init__(self, needles: tuple[str, ...] = ()) -> None:
        self.records: dict[str, _Record] = {}
        self.out: list[Finding] = []
        self.lineno = 0
        self._swept = 0
        # Literal text of logged errors that carry no exception name (NCCL's watchdog,
        # torchrun's "failed (exitcode: -9)"): lines holding one are findings too.
        self.needles = needles
        self._markers = _MARKERS + needles
        self._markers_b = _MARKERS_B + tuple(n.encode() for n in needles)

    def _needle_in(self, text: str) -> bool:
        return any(needle in text for needle in self.needles)

    # entry points

    def feed_line(self, raw: str) -> None:
        """One line without its newline; the fast path is a few ``in`` checks."""
        self.lineno += 1
        if not self.records and (
            "rror" not in raw
            and "xception" not in raw
            and "Traceback" not in raw
            and "Warning" not in raw
            and "detail" not in raw
            and not self._needle_in(raw)
        ):
            return
        self._slow(raw[:MAX_LINE], self.lineno)

    def feed_block(self, text: str | bytes) -> None:
        """Complete lines separated by ``\\n``; ordinary lines are skipped in C.

        Bytes are searched as bytes and only the lines looked at are decoded (UTF-8,
        invalid sequences replaced): a newline byte never occurs inside a UTF-8 sequence.
        """
        if isinstance(text, bytes):
            self._feed(text, b"\n", self._markers_b)
        else:
            self._feed(text, "\n", self._markers)

    def _feed(self, text: AnyStr, newline: AnyStr, markers: tuple[AnyStr, ...]) -> None:
        pos = 0
        size = len(text)
        found = [-2] * len(markers)
        while pos < size:
            if not self.records:
                nearest = -1
                for i, marker in enumerate(markers):
                    at = found[i]
                    if at != -1 and at < pos:
                        at = found[i] = text.find(marker, pos)
                    if at >= 0 and (nearest < 0 or at < nearest):
                        nearest = at
                if nearest < 0:
                    tail = text.count(newline, pos)
                    self.lineno += tail + (0 if text.endswith(newline) else 1)
                    return
                begin = text.rfind(newline, pos, nearest) + 1
                if begin > pos:
                    self.lineno += text.count(newline, pos, begin)
                    pos = begin
            end = text.find(newline, pos)
            if end < 0:
                end = size
            self.lineno += 1
            line = text[pos : min(end, pos + MAX_LINE)]
            if isinstance(line, bytes):
                self._slow(line.decode("utf-8", "replace"), self.lineno)
            else:
                self._slow(line, self.lineno)
            pos = end + 1

    def finish(self) -> None:
        """Close every open record (end of input)."""
        for record in sorted(self.records.values(), key=lambda r: r.start):
            self._close(record)

    # the slow path

    def _slow(self, raw: str, lineno: int) -> None:
        if not self.records and not _worth_a_look(raw) and not self._needle_in(raw):
            return  # e.g. a lowercase "error" in an ordinary line: nothing can start here
        if raw.endswith("\r"):
            raw = raw.rstrip("\r")
        if "\r" in raw:
            raw = next((p for p in reversed(raw.split("\r")) if p.strip()), "")
        if "\x1b" in raw:
            raw = _ANSI.sub("", raw)
        key, content = _peel(raw)
        if content.endswith("cluster]"):
            content = _RAY_REPEAT.sub("", content)
        if self.records:
            if lineno - self._swept >= _SWEEP_EVERY:
                self._sweep(lineno)
            if self._route(key, content, lineno):
                return
        self._start(key, content, lineno)

    def _route(self, key: str, content: str, lineno: int) -> bool:
        """Give the line to the open record of its stream; ``True`` if it was taken."""
        record = self.records.get(key)
        if record is None:
            for other in self.records.values():
                # A record opened on a prefixed line whose next lines carry a shorter prefix
                # (or none): the logger prefixed only the first line of its message.
                if not other.confirmed and other.key.startswith(key) and content.strip():
                    del self.records[other.key]
                    other.key = key
                    self.records[key] = other
                    record = other
                    break
        if record is not None:
            record.confirmed = True
            record.last_seen = lineno
            indent = record.indent
            if indent and content.strip():
                # rich's log handler draws the box (and the message under it) indented
                # below its time and level columns; a line further left is a new record.
                if not content[:indent].isspace():
                    self._close(record)
                    return False
                content = content[indent:]
            if self._advance(record, content, lineno):
                return True
            self._close(record)
            return False
        if content.strip():
            # A new record in the stream of an open one ends that one's message.
            for other in list(self.records.values()):
                if other.state != _TB and key.startswith(other.key):
                    self._close(other)
        return False

    def _advance(self, record: _Record, s: str, lineno: int) -> bool:
        """Advance one record by one of its lines; ``False`` means the record has ended."""
        st = s.strip()
        state = record.state
        if state == _TB:
            if not st:
                record.blanks += 1
                if record.group:
                    record.state = _BLANK
                    return True
                return record.blanks <= 2
            record.blanks = 0
            if s[0] in " \t" or s[0] in _BOX:
                record.add(s, lineno)
                return True
            if st in _SEPARATORS:
                record.add(s, lineno)
                record.state = _SEP
                record.chained = True
                return True
            if record.group or _HEADER_CORE in s or _split_exc_line(s) is None:
                return False
            record.state = _MSG
            record.msg_lines = record.msg_chars = 0
            record.add(s, lineno)
            return True
        if state == _MSG:
            if not st:
                record.state = _BLANK
                record.blanks = 1
                return True
            if st in _SEPARATORS:
                record.state = _SEP
                record.chained = True
                record.add(s, lineno)
                return True
            if _HEADER_CORE in s:
                return False
            if s[0] not in " \t" and _starts_exception(s):
                return False
            if record.msg_lines >= _MAX_MSG_LINES or record.msg_chars + len(s) > _MAX_MSG_CHARS:
                return False
            record.add(s, lineno)
            return True
        if state == _BLANK:
            if not st:
                record.blanks += 1
                return record.blanks <= 3
            if st in _SEPARATORS:
                record.state = _SEP
                record.chained = True
                record.add(s, lineno)
                return True
            return False
        # _SEP: after a chain separator comes the next section
        if not st:
            return True
        rest = s.lstrip()
        if s.startswith(_HEADER) or (rest[:1] in _BOX_TOP and _HEADER_CORE in s):
            record.state, record.group = _TB, False
        elif s[:1] == " " and (rest.startswith("+ Exception Group Traceback") or _starts_group(s)):
            record.state, record.group = _TB, True
        elif s[0] not in " \t" and _split_exc_line(s) is not None:
            record.state, record.group = _MSG, False
            record.msg_lines = record.msg_chars = 0
        else:
            return False
        record.blanks = 0
        record.add(s, lineno)
        return True

    def _start(self, key: str, content: str, lineno: int) -> None:
        """A line outside any record: does it open one, or is it a finding by itself?"""
        if not content or not content.strip():
            return
        index = content.find(_HEADER_CORE)
        first: str | None = None
        group = False
        if index >= 0:
            before = content[:index]
            rest = content.lstrip()
            if before.endswith("+ Exception Group "):
                plus = before.rfind("+ Exception Group ")
                first = content if not before[:plus].strip() else "  " + content[plus:]
                group = True
            elif rest[:1] in _BOX_TOP:
                first = rest
            elif content.startswith(_HEADER, index):
                first = _HEADER
        elif _starts_group(content):
            first = content
            group = True
        if first is not None:
            for other in list(self.records.values()):
                if key.startswith(other.key):
                    self._close(other)
            record = _Record(key, lineno, "traceback", _TB, group)
            if first[:1] in _BOX_TOP:
                record.indent = len(content) - len(first)
            record.add(first, lineno)
            self._open(record)
            return
        hit = _exception_in(content)
        if hit is not None:
            begin, type_name, message = hit
            if begin == 0:
                record = _Record(key, lineno, "line", _MSG, False)
                record.type_name, record.first_message = type_name, message
                record.add(content, lineno)
                self._open(record)
            else:
                facts = ErrorFacts(type_name=type_name, message=message.rstrip())
                self.out.append(Finding(lineno, lineno, "line", facts))
            return
        found = len(self.out)
        if "{" in content:
            for item in embedded_errors(content):
                if item.is_error:
                    type_name = item.type if is_exception_name(item.type) else ""
                    facts = ErrorFacts(type_name=type_name, message=item.message)
                    self.out.append(Finding(lineno, lineno, "body", facts))
        if self.needles and len(self.out) == found and self._needle_in(content):
            facts = ErrorFacts(type_name="", message=content.strip())
            self.out.append(Finding(lineno, lineno, "line", facts))

    def _open(self, record: _Record) -> None:
        old = self.records.get(record.key)
        if old is not None:
            self._close(old)
        if len(self.records) >= _MAX_OPEN:
            self._close(min(self.records.values(), key=lambda r: r.last_seen))
        self.records[record.key] = record

    def _sweep(self, lineno: int) -> None:
        self._swept = lineno
        for record in list(self.records.values()):
            limit = _IDLE_FRAMES if record.state == _TB and record.confirmed else _IDLE_MESSAGE
            if lineno - record.last_seen > limit:
                self._close(record)

    def _close(self, record: _Record) -> None:
        if self.records.get(record.key) is record:
            del self.records[record.key]
        lines = record.lines()
        if record.type_name and not record.chained:
            more = _message_lines(lines[1:])
            message = "\n".join([record.first_message, *more])
            facts: ErrorFacts | None = ErrorFacts(type_name=record.type_name, message=message)
        else:
            facts = parse_traceback(lines)
        if facts is None:
            return
        kind: Literal["traceback", "line"] = "traceback"
        if record.kind == "line" and not facts.has_stack:
            kind = "line" if not any(f.has_stack for f in facts.chain) else "traceback"
        self.out.append(Finding(record.start, record.end, kind, facts))


# -- public entry points --------------------------------------------------------------------


def scan_text(text: str, needles: tuple[str, ...] = ()) -> list[Finding]:
    """Every finding in ``text``, in the order they start.

    ``needles``: literal text whose lines are findings even without an exception name.
    """
    scanner = _Scanner(needles)
    scanner.feed_block(text)
    scanner.finish()
    return sorted(scanner.out, key=lambda f: (f.line, f.end_line))


def scan_lines(lines: Iterable[str], needles: tuple[str, ...] = ()) -> Iterator[Finding]:
    """Findings from lines (with or without their newlines), yielded as each one ends.

    Tracebacks of different streams can end out of order; sort by ``line`` if that matters.
    """
    scanner = _Scanner(needles)
    for item in lines:
        if item.endswith("\n"):
            item = item[:-1]
        if "\n" in item:
            for part in item.split("\n"):
                scanner.feed_line(part)
        else:
            scanner.feed_line(item)
        if scanner.out:
            done, scanner.out = scanner.out, []
            yield from done
    scanner.finish()
    yield from scanner.out


def scan_stream(
    file: IO[bytes] | IO[str], chunk_size: int = 1 << 20, needles: tuple[str, ...] = ()
) -> Iterator[Finding]:
    """Findings from a binary (or text) file read in chunks, in bounded memory.

    Bytes are decoded as UTF-8 with invalid sequences replaced, and only for the lines
    that are looked at. A line longer than :data:`MAX_LINE` is analysed on its first
    ``MAX_LINE`` characters; the rest is read and dropped, so memory depends on the longest
    traceback and ``chunk_size``, not on the file or its lines. Findings are yielded as each
    one ends (tracebacks of different streams can end out of order).
    """
    scanner = _Scanner(needles)
    partial = b""  # the current line's start, while it has no newline yet
    overlong = False  # the current line passed MAX_LINE: drop the rest of it
    while True:
        raw = file.read(chunk_size)
        if not raw:
            break
        chunk = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else bytes(raw)
        newline = chunk.rfind(b"\n")
        if newline < 0:
            if not overlong:
                partial += chunk
                if len(partial) > MAX_LINE:
                    partial = partial[:MAX_LINE]
                    overlong = True
            continue
        first_end = chunk.find(b"\n")
        head = partial + (b"\n" if overlong else chunk[: first_end + 1])
        scanner.feed_block(head)
        scanner.feed_block(chunk[first_end + 1 : newline + 1])
        rest = chunk[newline + 1 :]
        overlong = len(rest) > MAX_LINE
        partial = rest[:MAX_LINE]
        if scanner.out:
            done, scanner.out = scanner.out, []
            yield from done
    if partial:
        scanner.feed_block(partial)
    scanner.finish()
    yield from scanner.out
