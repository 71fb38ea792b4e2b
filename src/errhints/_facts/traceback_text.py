"""Traceback text parsing: the inverse of ``traceback.TracebackException.format``.

The lines of one traceback (already stripped of log prefixes) are cut into their chained
sections (cause, context) and exception-group members, and turned into
:class:`~errhints._facts.model.ErrorFacts`: type, message and frames. rich's boxed
tracebacks are read too.
"""

from __future__ import annotations

import re
from collections import deque

from .._config import NOTE_PREFIX
from .lines import is_exception_name, raise_in, split_exception_line
from .model import MAX_CHAIN, MAX_FRAMES, ErrorFacts, Frame
from .paths import split_path

__all__ = [
    "BOX",
    "BOX_TOP",
    "FRAME",
    "HEADER_CORE",
    "SEPARATORS",
    "message_lines",
    "parse_traceback",
]

HEADER_CORE = "Traceback (most recent call last)"

_GROUP_HEADER_CORE = "Exception Group Traceback (most recent call last)"

_CAUSE = "The above exception was the direct cause of the following exception:"

_CONTEXT = "During handling of the above exception, another exception occurred:"

SEPARATORS = {_CAUSE: "cause", _CONTEXT: "context"}


BOX = frozenset("╭│╰┃┏┗║╔╚")

BOX_TOP = frozenset("╭┏╔")

_BOX_SIDE = frozenset("│┃║")

_FRAME = re.compile(r'[ \t]{0,64}File "([^"\n]{1,4096})", line (\d{1,9})(?:, in ?(.{0,2048}))?$')

#: A frame line of a printed traceback (path, line, function).
FRAME = _FRAME


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
        relation = SEPARATORS.get(s.strip()) if len(s) < 200 else None
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
    source = ""  # the innermost frame's source line
    frame_indent = 0
    for index, s in enumerate(lines):
        st = s.strip()
        if not st:
            continue
        c0 = st[0]
        if c0 in BOX:
            if c0 in BOX_TOP and HEADER_CORE in st:
                has_header = True
            if c0 not in _BOX_SIDE:
                width = max(width, len(s.rstrip()))
            rows.append(st)
            continue
        if st.startswith((HEADER_CORE, _GROUP_HEADER_CORE)):
            has_header = True
            continue
        if s[0] in " \t":
            m = _FRAME.match(s)
            if m is not None:
                func = (m.group(3) or "").strip()
                frames.append(_frame(m.group(1), func, int(m.group(2))))
                frame_indent = len(s) - len(s.lstrip())
                source = ""
                continue
            if not (source and len(s) - len(s.lstrip()) <= frame_indent and _is_final(st)):
                if not source and frames:
                    source = st
                continue
            # A paste indented as a whole: the error line sits at the frames' indentation,
            # under the innermost frame's source line.
            lines = [*lines[:index], st, *lines[index + 1 :]]
        final = index
        break
    if rows:
        frames = _rich_frames(rows) + frames
    type_name = message = ""
    if final >= 0:
        split = split_exception_line(lines[final])
        if split is not None:
            type_name = split[0]
            more = message_lines(lines[final + 1 :])
            message = _join_message(lines[final], split[1], more, width)
    cut_in_last = (
        final >= 0 and not message.strip() and not any(x.strip() for x in lines[final + 1 :])
    )
    if source and (final < 0 or cut_in_last):
        # Cut before its last line, or inside it (``RuntimeErro`` at the paste's end): the
        # innermost frame's ``raise X("...")`` says what it was.
        raised = raise_in(source)
        if raised is not None and raised[0].startswith(type_name):
            type_name, message = raised
    if not type_name and not frames:
        return None
    return ErrorFacts(
        type_name=type_name,
        message=message,
        frames=_cap_frames(frames),
        has_stack=has_header or bool(frames),
        headless=bool(frames) and not has_header,
        last_source=source if final < 0 else "",
    )


def _is_final(st: str) -> bool:
    """Whether a stripped line is an exception's final line (``AssertionError``, ``X: y``)."""
    split = split_exception_line(st)
    return split is not None and is_exception_name(split[0])


def message_lines(more: list[str]) -> list[str]:
    """The message's continuation lines: up to an errhints note printed after it (a log of
    a run that already had errhints), without trailing blank lines."""
    for index, s in enumerate(more):
        if s.startswith(NOTE_PREFIX + " "):
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
    if not inner or inner[0].isdigit() or inner[0] in "❱…" or inner[0] in BOX:
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
