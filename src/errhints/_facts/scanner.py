"""The streaming scanner: find failures in logs line by line, keeping only open tracebacks.

A log is read line by line and only what it needs is kept: the lines of the tracebacks that
are still open. Ordinary lines cost one search for a few marker words (done in C over whole
blocks by :func:`scan_text` and :func:`scan_stream`); only lines near a marker are looked at
closely (:mod:`.lines`), and a complete traceback is parsed by :mod:`.traceback_text`.
Bare error lines and HTTP error bodies (:mod:`.bodies`) are findings too.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, AnyStr, Literal, overload

from .bodies import body_field, embedded_errors
from .lines import (
    ANSI,
    ERROR_LEVEL,
    RAY_REPEAT,
    SAID_ERROR,
    SAID_ERROR_SPAN,
    SEVERE,
    cited_raise_in,
    exception_in,
    glued_error,
    is_exception_name,
    peel,
    raise_in,
    split_exception_line,
    starts_exception,
    unwrap,
    worth_a_look,
)
from .model import ErrorFacts
from .traceback_text import (
    BOX,
    BOX_TOP,
    FRAME,
    HEADER_CORE,
    SEPARATORS,
    message_lines,
    parse_traceback,
)

__all__ = ["MAX_LINE", "Finding", "scan_lines", "scan_stream", "scan_text"]

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

#: Narrowest terminal whose fixed width is taken back: a line this long or longer may have
#: been cut there (a frame line ``..., in run_`` whose name goes on at the next line's start;
#: any line as wide as the widest, ``_Scanner._slow``).
_WRAP_WIDTH = 60

_NAME_PART = re.compile(r"[\w.<>]{1,200}")

#: Tracebacks followed at once (one per stream); the stalest is closed beyond this.
_MAX_OPEN = 64

#: Lines of other streams after which an open traceback is closed: long while its frames
#: are still coming, short once its message is complete.
_IDLE_FRAMES = 2000

_IDLE_MESSAGE = 64

_SWEEP_EVERY = 256

_HEADER = "Traceback (most recent call last):"
#: The prefix torch's C++ logger gives an error (``[E1226 T socket.cpp:1011]`` once peeled:
#: ``lines.peel`` folds the time to ``T``), and the component tag that may follow it.
_CPP_ERROR = re.compile(r"\[[EF]\d{3,4} T [\w./-]+:\d+\]$")
_CPP_TAG = re.compile(r"^\[[a-z0-9_]{1,20}\] ")

#: Substrings of any line worth a closer look: exception names, traceback headers, bodies,
#: stack frames (a paste that starts mid-stack). (``KeyboardInterrupt``/``SystemExit`` are
#: found inside tracebacks, not as lone lines.)
_MARKERS = (
    "rror",
    "xception",
    "Traceback",
    "Warning",
    "detail",
    '  "message": "',  # a body printed over several lines, indented (``jq``, ``indent=2``)
    'File "',
    "File \u201c",  # a paste through a word processor or chat app: curly quotes
    "Assertion `",
    "Check failed",
    "[E",  # torch's C++ logger at error (or fatal) level: ``[E1226 15:44:25.4 socket.cpp:1]``
    "[F",
    "\u9519",  # 错, as in Chinese prose's 报错：<message> ("reported the error:")
)

_MARKERS_B = tuple(m.encode() for m in _MARKERS)

_TB, _MSG, _BLANK, _SEP = 1, 2, 3, 4

#: Curly quotes a word processor or chat app put in place of Python's straight ones
#: (``File “/opt/.../runpy.py”``, ``cannot import name ‘x’``); no template has
#: curly quotes, so lines are read with straight ones.
#: What a word processor or a web page put in place of plain quotes and spaces: curly
#: quotes, and the no-break spaces a copy of a rendered page indents with.
_CURLY = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " "})

#: The HTML entities a copy of a page's source leaves in a log (``File &quot;x.py&quot;``).
_ENTITY = re.compile(r"&(?:quot|lt|gt|amp|apos|#39|#x27|#34);")
_ENTITIES = {
    "&quot;": '"',
    "&lt;": "<",
    "&gt;": ">",
    "&amp;": "&",
    "&apos;": "'",
    "&#39;": "'",
    "&#x27;": "'",
    "&#34;": '"',
}
_ENTITY_B = re.compile(_ENTITY.pattern.encode())
_ENTITIES_B = {k.encode(): v.encode() for k, v in _ENTITIES.items()}


@overload
def _unescaped(text: str) -> str: ...
@overload
def _unescaped(text: bytes) -> bytes: ...
@overload
def _unescaped(text: str | bytes) -> str | bytes: ...
def _unescaped(text: str | bytes) -> str | bytes:
    """``text`` with the HTML entities of ``_ENTITIES`` turned back into their characters
    (once: ``&amp;quot;`` becomes ``&quot;``)."""
    if isinstance(text, bytes):
        if b"&" in text and _ENTITY_B.search(text) is not None:
            return _ENTITY_B.sub(lambda m: _ENTITIES_B[m.group()], text)
    elif "&" in text and _ENTITY.search(text) is not None:
        return _ENTITY.sub(lambda m: _ENTITIES[m.group()], text)
    return text


#: A paste this short (characters, non-blank lines) that shows no error form at all is read
#: as one bare message per line.
_OPENING_CHARS = 4096

_OPENING_LINES = 3


def _logged_severe(line: str, content: str, level: re.Pattern[str] = SEVERE) -> bool:
    """Whether the log prefix peeled off ``line`` (all before ``content``) says warning or
    above (or the ``level`` given: ``ERROR_LEVEL``)."""
    return level.search(line, 0, len(line) - len(content)) is not None


#: The spaces a terminal padded a line with, up to its width: a record glued after them is
#: a line of its own (``... in _run_code      2024-06-02 00:26:10 | ERROR | ...``).
_PADDING = " " * 8
_GLUED_RECORD = re.compile(r"(?<=\S) {8,}(?=\S)")

#: Where a log record starts inside a line whose line breaks were lost (a log copied into one
#: paragraph, or a title that runs on into the log), by kind: a rank's prefix, a glog header,
#: a timestamp that opens a record (after a level, or in SGLang's brackets), a Ray worker's
#: prefix, LlamaFactory's ``[INFO|``, vLLM's ``INFO 03-06 10:05:08``, a C++ backtrace's
#: ``frame #3:``, a traceback's header or chain separator, and tqdm's bar. Only starts at the
#: line's start, after a space or after a closing bracket count.
_RUN_ON = re.compile(
    r"(?:^|(?<=[\s\])]))(?:"
    r"(?P<rank>\[rank\d{1,6}\]:)"
    r"|(?P<glog>\[?[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{1,9} )"
    r"|(?P<time>(?:(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL) )?"
    r"\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d"
    r"|\[\d\d-\d\d \d\d:\d\d:\d\d)"
    r"|(?P<frame>frame #\d{1,4}: )"
    r"|(?P<tb>Traceback \(most recent call last\):|During handling of the above exception"
    r"|The above exception was the direct cause)"
    r"|(?P<ray>\([\w.:-]{0,80} ?pid=\d{1,10})"
    r"|(?P<lf>\[(?:INFO|WARNING|ERROR|DEBUG|CRITICAL)\|)"
    r"|(?P<vllm>(?:INFO|WARNING|ERROR|DEBUG) \d\d-\d\d \d\d:\d\d:\d\d )"
    r"|(?P<bar>\d{1,3}%\|)"
    r")"
)

#: Lines shorter than this are never read as records run together, unless a bar is in them.
_RUN_ON_CHARS = 160

#: A traceback's header followed, on the same line, by a frame: a traceback reflowed.
_HEADER_THEN_FRAME = re.compile(r"\):? {0,4}`{0,3} {0,4}File \"")

#: Longer than any stack of log prefixes that ``peel`` takes off.
_PREFIX_SPAN = 2048

#: A progress bar's label alone (``Running tokenizer on dataset: ``).
_BAR_LABEL = re.compile(r"\s{0,8}[\w .:/-]{0,80}: {0,2}")


def _run_together(raw: str) -> list[str] | None:
    """The records of a line whose line breaks were lost, or ``None`` if it is one record.

    The line is cut before each record start; a piece that holds nothing but log prefixes, or
    a bar's label, stays with the next one, so a stack of prefixes (Ray's ``(SGLangEngine
    pid=...)`` before SGLang's ``[... TP7]``) opens one piece. The line is records run
    together when a piece opens with the prefix the line opens with (two ranks' lines), or
    three pieces with one prefix (a copied log's times); when a traceback's header runs on
    into its frames; or when a progress bar follows words. A message that quotes a time or
    two (``... not valid before 2025-03-07 00:00:00``) stays whole."""
    pieces: list[tuple[str, str]] = []  # (the prefix that opens it, or its kind; its text)
    begin, opener = 0, ""
    for m in _RUN_ON.finditer(raw):
        at = m.start()
        if at == 0:
            opener = _opener(m, raw)
            continue
        if at - begin < _PREFIX_SPAN:  # longer is never a prefix or a label alone
            piece = raw[begin:at]
            if not peel(piece)[1].strip() or (
                _BAR_LABEL.fullmatch(piece) is not None and _PROGRESS.match(raw, at) is not None
            ):
                continue  # a prefix alone, or a bar's label: it opens the next piece
        pieces.append((opener, raw[begin:at].rstrip()))
        begin, opener = at, _opener(m, raw)
    if not pieces:
        return None
    pieces.append((opener, raw[begin:]))
    first = pieces[0][0]
    seen: dict[str, int] = {}
    for opener, text in pieces:
        if opener:
            seen[opener] = seen.get(opener, 0) + 1
        if (
            opener == "bar"
            or (opener == "tb" and _HEADER_THEN_FRAME.match(text, len(_HEADER) - 2) is not None)
            or (opener and (seen[opener] >= 3 or (opener == first and seen[opener] >= 2)))
        ):
            return [text for _, text in pieces]
    return None


def _opener(found: re.Match[str], raw: str) -> str:
    """What opens a piece: a bar, a traceback's header or separator, a C++ frame by kind;
    a log record by its prefix's stream key without digits (``[rank]:``, ``ERRORT``)."""
    kind = found.lastgroup or ""
    if kind in ("bar", "tb", "frame"):
        return kind
    key = peel(raw[found.start() : found.start() + _PREFIX_SPAN])[0]
    return key.translate(_NO_DIGITS) or kind  # every rank's, pid's and source line's alike


_NO_DIGITS = str.maketrans("", "", "0123456789")


#: A Markdown heading's marks (an issue's title as a page shows it: ``# ...``).
_MARKDOWN_HEADING = re.compile(r"^#{1,6}[ \t]+")

#: A progress bar (tqdm) or the shell's ``Killed``: never part of an error message.
_PROGRESS = re.compile(r"\s{0,8}(?:[\w .:/-]{0,80}: {0,2})?\d{1,3}%\|")

#: A whole tqdm bar, up to its closing ``[elapsed<left, rate]``, that the next line was glued
#: to (tqdm redraws with ``\r`` and never ends its line): ``100%|####| 10/10 [00:01<00:00]``.
_GLUED_BAR = re.compile(
    r"\s{0,8}(?:[^|\n]{0,80}: {0,2})?\d{1,3}%\|[^|\n]{0,200}\|[^\[\n]{0,60}\[[^\]\n]{0,80}\]"
)

#: What the text says about the run it comes from: literal spellings of each project in
#: paths, module names, commands and logger names, and log lines only that project prints
#: (SGLang's start-up: its CUDA-graph progress bar, weight loading, KV pool, ready line; its
#: scheduler's event loops; its native API's responses; none in vLLM's sources), searched in
#: C over whole blocks.
EVIDENCE: dict[str, tuple[str, ...]] = {
    "sglang": (
        "sglang",
        "sgl_kernel",
        "sgl-kernel",
        "launch_server",
        "Capturing batches (",
        "Load weight begin. avail mem=",
        "KV Cache is allocated",
        "Init torch distributed begin",
        "The server is fired up and ready to roll",
        "scheduler.event_loop_overlap",
        "scheduler.event_loop_normal",
        '"meta_info":{"id":',  # the native /generate response, compact and spaced
        '"meta_info": {"id":',
    ),
    "llamafactory": (
        "llamafactory",
        "llmtuner",
        "lama_factory",
        "lama-factory",
        "LaMA-Factory",
        "LaMA_Factory",
        "lamaFactory",
    ),
    "vllm": ("vllm",),
    # SGLang's JAX port: it prints SGLang's log lines, so with it in view only SGLang's own
    # package names show SGLang (``_evidence``).
    "sgl_jax": ("sgl_jax", "sglang-jax", "sglang_jax"),
    "tensorrt_llm": ("tensorrt_llm",),
    "megatron": ("megatron",),
    "deepspeed-launcher": ("deepspeed/launcher", "deepspeed.launcher"),
}

#: Characters at the start of the input searched whole for ``EVIDENCE``.
_EVIDENCE_HEAD = 1 << 20

#: SGLang's own log-line prefix: ``[2025-06-11 09:30:02 TP0]``, ``[... DP1 TP3 EP3]``, and
#: with its time the ranks without a TP one (``[2026-06-30 05:18:57 DP1]``: data parallel
#: alone), in the order its scheduler writes them (``DP PP ATTN_CP MOE_DP TP EP``).
_SGLANG_PREFIX = re.compile(
    r"[\[ ](?:[PD]P\d{1,4} )?TP\d{1,4}(?: (?:EP|PP)\d{1,4})*\]"
    r"|\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{3})?(?: (?:DP|PP|ATTN_CP|MOE_DP|TP|EP)\d{1,4})+\]"
)

_SGLANG_PREFIX_B = re.compile(_SGLANG_PREFIX.pattern.encode())

_EVIDENCE_B = {name: tuple(n.encode() for n in needles) for name, needles in EVIDENCE.items()}


#: What names SGLang itself, once sglang-jax's own spellings are taken out of a text.
_SGLANG_ITSELF = ("sglang", "sgl_kernel", "sgl-kernel")


def _names_sglang_itself(text: str | bytes) -> bool:
    """Whether ``text`` names SGLang's package, not only sglang-jax (``sgl-project/sglang-jax``)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    for spelling in ("sglang-jax", "sglang_jax"):
        text = text.replace(spelling, "")
    return any(name in text for name in _SGLANG_ITSELF)


@dataclass(slots=True)
class Finding:
    """One failure found in text: where it is (1-based lines) and what it says."""

    line: int
    end_line: int
    kind: Literal["traceback", "line", "body"]
    facts: ErrorFacts
    #: Projects the text read so far shows (``EVIDENCE``): the run's context, from the log
    #: (up to the end of the block being read, so not part of a finding's identity).
    context: frozenset[str] = field(default=frozenset(), compare=False)
    #: A logged failure's own words before the traceback (``Scheduler hit an exception:
    #: Traceback (most recent call last):``), when the catalog knows them.
    wrapper: str = ""
    #: A guess that this line is the error (the first line of a longer paste that shows no
    #: error form: an issue's title): worth reporting only when something matches it.
    tentative: bool = field(default=False, compare=False)


class _Record:
    """The lines of one traceback (or error line) still being read, and where it stands."""

    __slots__ = (
        "after_frame",
        "blanks",
        "chained",
        "chars",
        "confirmed",
        "end",
        "first_message",
        "flat",
        "group",
        "head",
        "indent",
        "ipython",
        "key",
        "kind",
        "last_seen",
        "lead",
        "logged",
        "lone",
        "msg_chars",
        "msg_lines",
        "pending",
        "start",
        "state",
        "tail",
        "type_name",
        "wrapper",
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
        self.lone = False  # an error line outside a traceback (its message is read as is)
        self.flat = False  # frames printed without their indentation (a reflowed paste)
        self.after_frame = False  # the last line taken was a frame line
        #: A logged failure's own words before its traceback (``Scheduler hit an exception:
        #: Traceback ...``), when the catalog knows them (``Finding.wrapper``).
        self.wrapper = ""
        #: The error line printed just above this traceback (``(key, finding)``), when any.
        self.lead: Finding | None = None
        #: The message of the record logged at error level just above this traceback's bare
        #: header (``logger.exception(msg)``): what may say the failure when the paste stops
        #: before the traceback's own error line.
        self.logged = ""
        #: Printed by IPython (a notebook, Colab): its lines are read as Python's (``_ipython``).
        self.ipython = False
        #: An IPython 7 frame (path, function) waiting for its line number (``---> 50``).
        self.pending: tuple[str, str] | None = None

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

    def drop_last(self) -> None:
        """Take back the last line added (it belonged to what follows), as ``add`` counted it."""
        lines = self.tail if self.tail else self.head
        if lines:
            dropped = lines.pop()
            if self.state == _MSG:
                self.msg_lines -= 1
                self.msg_chars -= len(dropped) + 1

    def awaits_message(self, lineno: int) -> bool:
        """Whether the line before ``lineno`` was this record's error line, ending in ``:``
        with its message still to come (``ImportError:`` and the message on the next lines)."""
        if self.state != _MSG or self.msg_lines != 1 or self.end != lineno - 1:
            return False
        lines = self.tail if self.tail else self.head
        return bool(lines) and lines[-1].rstrip().endswith(":")

    def wrapped_function(self, st: str) -> bool:
        """A frame line wrapped after ``, in`` (a narrow terminal or a quoted paste), or
        inside the function's name by a terminal's fixed width (``in run_`` / ``sft``): the
        rest of the name on the next line is put back on it."""
        lines = self.tail if self.tail else self.head
        if not lines or not st.replace(".", "_").replace("<", "_").replace(">", "_").isidentifier():
            return False
        last = lines[-1]
        if last.rstrip().endswith(", in"):
            lines[-1] = f"{last.rstrip()} {st}"
            return True
        at = last.rfind(", in ")
        if len(last) < _WRAP_WIDTH or at < 0 or not _NAME_PART.fullmatch(last, at + 5):
            return False
        lines[-1] = last + st  # cut at the terminal's width, inside the name
        return True

    def lines(self) -> list[str]:
        return self.head + list(self.tail) if self.tail else self.head


def _unbarred(raw: str) -> str:
    """The line a finished progress bar was glued before, without the bar."""
    bar = _GLUED_BAR.match(raw) if "%|" in raw else None
    return raw[bar.end() :] if bar is not None and raw[bar.end() :].strip() else raw


#: Last characters of a line drawn to the terminal's width, not cut by it (rich's panels).
_NOT_CUT = frozenset(BOX) | frozenset("╮╯┓┛╗╝─━═")

#: First characters of a line that starts something of its own (a body, a prefix, a box),
#: and last characters of one that ended (a sentence, a body, a quote): never a cut's sides.
#: Repeated lines of one length (200 identical error bodies) are not a wrapped line.
_OPENS = frozenset(BOX) | frozenset("{[(<")

_ENDS = frozenset(".!?}])\"'")


def _line_ending_at(text: AnyStr, newline: AnyStr, pos: int, end: int) -> AnyStr:
    """The line of ``text[pos:end]`` that ends at ``end`` (its first ``MAX_LINE``)."""
    return text[max(text.rfind(newline, pos, end) + 1, pos) : end][:MAX_LINE]


def _wide_line(text: AnyStr, newline: AnyStr, pos: int, end: int) -> AnyStr | None:
    """The line of ``text[pos:end]`` that ends at ``end``, when it is wide enough for a
    terminal to have cut it, else ``None``."""
    line = _line_ending_at(text, newline, pos, end)
    return line if len(line) >= _WRAP_WIDTH else None


def _ends_mid_word(line: str) -> bool:
    """Whether ``line`` may stop where a terminal's width cut it: not at a sentence's or a
    bracket's end, a box's edge, padding (tmux fills a line with spaces to the width), or a
    rule of one character (``=====``)."""
    return (
        line[-1] not in _NOT_CUT
        and line[-1] not in _ENDS
        and not line.endswith(("  ", "\t"))
        and line.strip(line[-1]) != ""
    )


def _padded_to(line: str, width: int) -> bool:
    """Whether ``line`` is filled with spaces to ``width`` or wider, as tmux or screen copy a
    line shorter than the terminal: then a line above it without the padding filled the
    width (a path redacted by hand may have made it shorter since: ``/home/xxx/``)."""
    return len(line) >= width and line.endswith("  ")


def _goes_on(line: str) -> bool:
    """Whether ``line`` can be the rest of the line above it, cut by a terminal's width:
    not blank, and not the start of something of its own (an indented source or frame line,
    a log record's prefix, a traceback header, an exception line)."""
    if not line.strip() or line.startswith(("  ", "\t", _HEADER, *SEPARATORS)):
        return False
    if line[0] in _OPENS:
        return False
    rest = line[1:] if line[0] == " " else line
    return not (peel(rest)[0] or rest.startswith('File "') or starts_exception(rest))


def _unwrapped_lines(
    kept: list[tuple[int, str]], widths: list[int], records: set[int]
) -> Iterator[tuple[int, int, str]]:
    """The lines of a short paste as messages: a line as wide as the widest of the paste
    (``widths``, by line number from 1; 60 characters or more) that ends mid-sentence goes
    on at the next line, cut there by a terminal, unless that line starts a record of its
    own (``records``: a log prefix, the shell's ``Killed``); the message keeps the break,
    which a template fits by joining (``Template.match``)."""
    widest = max(widths, default=0)
    i = 0
    while i < len(kept):
        first, message = kept[i]
        last = first
        while (
            i + 1 < len(kept)
            and widths[kept[i][0] - 1] == widest >= _WRAP_WIDTH
            and kept[i + 1][0] == kept[i][0] + 1
            and kept[i + 1][0] not in records
            and not kept[i][1].endswith((".", "!", "?"))
        ):
            i += 1
            last, more = kept[i]
            message += "\n" + more
        yield first, last, message
        i += 1


def _span_closed(message: str) -> str:
    """The message without the backticks that close a code span opened before it."""
    if message.endswith("`"):
        bare = message.rstrip("`")
        if bare.count("`") % 2 == 0:
            return bare
    return message


def _paste_indent(first: str) -> str:
    """The indentation of a paste indented as a whole (a Markdown code block: four spaces or
    a tab before every line), judged by the first line read closely: it must open something
    a log line starts with (a prefix, a quote, a fence, a header or an error line); ``""``
    when it does not (an excerpt's indented source line keeps its indentation)."""
    rest = first.lstrip(" \t")
    indent = first[: len(first) - len(rest)]
    if len(indent) < 4 and "\t" not in indent:
        return ""
    if (
        rest.startswith(("[", ">", "```", _HEADER))
        or rest[:1].isdigit()
        or starts_exception(rest)
        or _IPY_HEADER.match(rest) is not None
    ):
        return indent
    return ""


#: A library's tag in a line's peeled prefix: brackets around a name, no digits.
_TAG = re.compile(r"\[[A-Za-z_][A-Za-z_.-]{0,40}\]")


def _tag_only(raw: str, content: str) -> bool:
    """Whether the prefix peeled off ``raw`` starts with a library's tag (``_TAG``) and has
    no number (``[sgl_kernel] CRITICAL: ``), which a log record's prefix always has (its
    time, rank or pid)."""
    prefix = raw[: len(raw) - len(content)]
    return _TAG.match(prefix) is not None and not any(c.isdigit() for c in prefix)


def _ends_message(s: str, st: str) -> bool:
    """A line that is never part of an error message: a code fence, a progress bar, the
    shell's ``Killed``, a stack frame, a C++ stack (``Exception raised from``/``frame #3:``),
    a torchrun banner, a Python warning."""
    return (
        st.startswith(("```", "Killed", "Exception raised from ", "frame #", "*****"))
        or st.startswith('File "')
        or (s[:1] not in " \t" and FRAME.match("  " + s) is not None)
        or _PROGRESS.match(s) is not None
        or "Warning: " in s[:200]
    )


def _starts_group(content: str) -> bool:
    """``  | ExceptionGroup: eg (2 sub-exceptions)``: a group printed without a stack."""
    rest = content.lstrip(" ")
    return (
        content[:1] == " "
        and rest.startswith("| ")
        and "sub-exception" in rest
        and is_exception_name(rest[2:].partition(":")[0])
    )


#: IPython's traceback (ultratb): the header (``ValueError   Traceback (most recent call
#: last)``), a cell (``Cell In[3], line 7``), a file frame (IPython 8: ``File /x/y.py:50, in
#: f(a, b)``; 7: ``/x/y.py in f(a, b)``), the current line (``---> 50     raise ...``), the
#: lines around it (``     48     ...``) and the rule above each section.
_IPY_HEADER = re.compile(r"([A-Za-z_][\w.]{0,200}) {2,}Traceback \(most recent call last\)\s*$")
_IPY_CELL = re.compile(r"Cell (In\s?\[\d{1,9}\]), line (\d{1,9})(?:, in ([\w.<>]{1,200}))?")
_IPY_FILE = re.compile(r"File (.{1,1000}?):(\d{1,9})(?:, in ([\w.<>]{1,200}))?")
_IPY_OLD_FILE = re.compile(
    r"((?:/|[A-Za-z]:\\|~|<ipython-input-)\S{0,1000}) in (<[^<>]{1,80}>|[\w.]{1,200})(?:\(.*)?$"
)
#: Colab's copy of a frame's path: a Markdown link (``[/x/y.py](https://localhost:8080/#)``),
#: and its note of the frames it folded (``2 frames``).
_IPY_LINK = re.compile(r"\[([^\[\]]{1,1000})\]\(https?://[^()\s]{0,200}\)")
_IPY_FOLDED = re.compile(r"\d{1,6} frames?$")
_IPY_ARROW = re.compile(r"-{1,4}> ?(\d{1,9})(?: (.*))?$")
_IPY_CONTEXT = re.compile(r"\s+\d{1,9}(?: |$)")


def _ipython(record: _Record, s: str) -> list[str] | None:
    """An IPython traceback's line as Python prints it (frames and source lines), ``[]`` for
    a line Python has no counterpart for, ``None`` for a line to read as it is."""
    st = s.strip()
    if not st:
        return None
    if st.startswith("-----") and not st.strip("-"):
        return []
    if _IPY_HEADER.match(st) is not None:
        return [_HEADER]
    if record.state != _TB:
        return None
    if st[:1] == "[" and "](" in st:
        st = _IPY_LINK.sub(r"\1", st, count=1)
    if _IPY_FOLDED.match(st) is not None:
        return []
    found = _IPY_CELL.match(st)
    if found is not None:
        record.pending = None
        function = found.group(3) or "<module>"
        return [f'  File "<{found.group(1)}>", line {found.group(2)}, in {function}']
    found = _IPY_FILE.match(st)
    if found is not None:
        record.pending = None
        # IPython 8 names the function by its qualified name, Python by its own name
        function = (found.group(3) or "<module>").rpartition(".")[2]
        return [f'  File "{found.group(1)}", line {found.group(2)}, in {function}']
    found = _IPY_ARROW.match(st)
    if found is not None:
        lines = []
        if record.pending is not None:
            path, function = record.pending
            lines.append(f'  File "{path}", line {found.group(1)}, in {function}')
            record.pending = None
        code = (found.group(2) or "").strip()
        if code:
            lines.append("    " + code)
        return lines
    if s[:1] in " \t" and _IPY_CONTEXT.match(s) is not None:
        return []  # a line around the current one
    if st.startswith("[... skipping"):
        return []
    found = _IPY_OLD_FILE.match(st)
    if found is not None and not st.startswith("File "):
        record.pending = (found.group(1), found.group(2))
        return []
    return None


#: Where a traceback whose line breaks were lost (a paste reflowed into one paragraph)
#: breaks again: before its header, each frame and each chain separator.
_FOLD_BREAK = re.compile(
    r"(?=Traceback \(most recent call last\):|File \"[^\"\n]{1,1000}\", line \d"
    + "".join(f"|{re.escape(sep)}" for sep in SEPARATORS)
    + ")"
)
_FOLDED_FRAME = re.compile(
    r'File "([^"\n]{1,1000})", line (\d{1,9}), in (<[^<>\n]{1,200}>|\S{1,300})\s*(.*)'
)
#: A name followed by ``:`` (or ending the text) after the last frame's source line, in a
#: reflowed traceback: the error line starts at the first one that names an exception.
_FOLDED_NAME = re.compile(r"(?:^|(?<=\s))([A-Za-z_][\w.]{0,200})(?=:\s|:?$)")


def _folded_error(rest: str) -> re.Match[str] | None:
    """Where the error line starts in what follows the last frame of a reflowed traceback:
    its source line comes first, and may hold ``Error:`` in a string; a bare ``Exception``
    (``raise Exception(...)`` prints ``Exception: ...``) counts here, as nowhere else."""
    for found in _FOLDED_NAME.finditer(rest):
        name = found.group(1)
        if name == "Exception" or is_exception_name(name):
            return found
    return None


_CARETS = re.compile(r"(?:^|\s)[~^]{2,}(?=\s|$)")


def _folded(content: str) -> bool:
    """Whether a line holds a traceback reflowed into it: its header and a frame, or a frame
    and words after the function's name (a frame line never goes on); after other words, a
    frame with an error line after it (``... Full traceback points to: File "...", line 476,
    in forward ... RuntimeError: ...``)."""
    at = content.find(HEADER_CORE)
    if at >= 0:
        return content.find('File "', at) > 0
    at = content.find('File "')
    if at < 0 or (at > 0 and content[at - 1] not in " \t`"):
        return False
    frame = _FOLDED_FRAME.match(content, at)
    if frame is None:
        return False
    if not content[:at].strip(" \t`"):  # the line opens with it (a code fence's marks aside)
        return bool(frame.group(4))
    return _folded_error(frame.group(4)) is not None


def _fold_start(content: str) -> int:
    """Where a reflowed traceback starts in a line: its header, or its first frame when the
    paste begins mid-stack."""
    found = _FOLD_BREAK.search(content)
    return found.start() if found is not None else 0


def _unfolded(text: str) -> list[str]:
    """A traceback reflowed into one line, as the lines Python printed: the header, each
    frame and its source line, the separators, and the error line after the last frame."""
    pieces = [piece for piece in _FOLD_BREAK.split(text) if piece.strip()]
    lines: list[str] = []
    for i, piece in enumerate(pieces):
        piece = piece.strip()
        frame = _FOLDED_FRAME.match(piece)
        if frame is None:
            for head in (_HEADER, *SEPARATORS):
                if piece.startswith(head):
                    lines.append(head)
                    piece = piece[len(head) :].strip()
                    break
            if piece:
                lines.append(piece)
            continue
        path, number, function, rest = frame.groups()
        lines.append(f'  File "{path}", line {number}, in {function}')
        rest = _CARETS.sub("", rest).strip()
        last = i + 1 == len(pieces) or _FOLDED_FRAME.match(pieces[i + 1].strip()) is None
        error = _folded_error(rest) if last else None
        source = rest[: error.start()].strip() if error is not None else rest
        if source:
            lines.append("    " + source)
        if error is not None:
            lines.append(rest[error.start() :])
    return lines


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
        self.context: frozenset[str] = frozenset()
        self.emitted = 0
        self.opened = 0  # records opened: some error form was seen
        # The head of the input is searched whole for the projects it names (a run's
        # command line and start-up logs); after it, only the lines looked at closely.
        self._evidence_left = _EVIDENCE_HEAD
        self._opening: list[str] | None = []  # the text so far, while it is a short paste
        #: The indentation of a paste indented as a whole (``None`` until a line says).
        self._indent: str | None = None
        # An error line just closed, held for the rest of its line's handling: a traceback
        # that starts right below it (a paste with the error first) takes it as its own.
        self._held: tuple[str, Finding] | None = None
        self._opening_chars = 0
        # A terminal's hard wrap: the widest line length seen (lines read closely) and how
        # often; a line that wide, once seen twice, was cut there and goes on at the next line.
        self._widest = 0
        self._at_widest = 0
        #: A line held back, as cut by a terminal's width: (line number, text, sure). Unsure
        #: (the widest line seen once) it is joined only to a next line that pads itself
        #: with spaces to that width or wider: a copy from tmux or screen shows the width so.
        self._cut: tuple[int, str, bool] | None = None
        self._skipped: str | None = None  # the line just skipped by ``feed_line``
        #: The line read or skipped last, with its number: a bare traceback header takes the
        #: message of an error record right above it (``_logged_above``).
        self._above: tuple[int, str] | None = None
        #: Lines read as tentative findings only for an ``error:`` in them (``_start``).
        self._said_lines: set[int] = set()

    def _emit(self, finding: Finding) -> None:
        finding.context = self.context
        self.emitted += 1
        self.out.append(finding)

    def _awaits_message(self, key: str, lineno: int, line: str, content: str) -> bool:
        """Whether ``line``'s peeled prefix is only a library's tag (``[sgl_kernel]``) and the
        open record of stream ``key`` waits for the message its error line left empty."""
        waiting = self.records.get(key) if self.records else None
        return waiting is not None and waiting.awaits_message(lineno) and _tag_only(line, content)

    def _tag_after_prefix(self, key: str, lineno: int, raw: str, content: str) -> tuple[str, str]:
        """``[rank0]: [sgl_kernel] CRITICAL: ...``: a library's tag after the stream's own
        prefix, on the line after an error line that left its message empty, is the
        message's start, not more prefix (as ``_awaits_message`` for a line without one)."""
        for stream, waiting in self.records.items():
            if not stream or not key.startswith(stream) or not waiting.awaits_message(lineno):
                continue
            tag = _TAG.match(key, len(stream))
            at = raw.find(tag.group(), 0, len(raw) - len(content)) if tag is not None else -1
            if at >= 0:
                return stream, raw[at:]
        return key, content

    def _needle_in(self, text: str) -> bool:
        return any(needle in text for needle in self.needles)

    # entry points

    def feed_line(self, raw: str) -> None:
        """One line without its newline; the fast path is a few ``in`` checks."""
        self.lineno += 1
        if "&" in raw:
            raw = _unescaped(raw)  # as ``feed_block`` does for a block
        if (
            not self.records
            and self._cut is None
            and (
                "rror" not in raw
                and "xception" not in raw
                and "Traceback" not in raw
                and "Warning" not in raw
                and "detail" not in raw
                and 'File "' not in raw
                and "File \u201c" not in raw
                and "Assertion `" not in raw
                and "Check failed" not in raw
                and "[E" not in raw
                and "[F" not in raw
                and "\u9519" not in raw
                and not self._needle_in(raw)
            )
        ):
            if self._opening is not None:
                self._remember(raw + "\n")
            if self._evidence_left > 0:
                self._evidence_left -= len(raw)
                self._evidence(raw)
            self._skipped = raw if len(raw) >= _WRAP_WIDTH else None
            self._above = (self.lineno, raw)
            return
        if self._opening is not None:
            self._remember(raw + "\n")
        before, self._skipped = self._skipped, None
        self._slow(raw[:MAX_LINE], self.lineno, before)

    def feed_block(self, text: str | bytes) -> None:
        """Complete lines separated by ``\\n``; ordinary lines are skipped in C.

        Bytes are searched as bytes and only the lines looked at are decoded (UTF-8,
        invalid sequences replaced): a newline byte never occurs inside a UTF-8 sequence.
        A block copied from a page's source has its quotes back (``File &quot;x.py&quot;``).
        """
        text = _unescaped(text)
        if self._opening is not None:
            self._remember(text.decode("utf-8", "replace") if isinstance(text, bytes) else text)
        if self._evidence_left > 0:
            self._evidence(text[: self._evidence_left])
            self._evidence_left -= len(text)
        if isinstance(text, bytes):
            self._feed(text, b"\n", self._markers_b)
        else:
            self._feed(text, "\n", self._markers)

    def _evidence(self, text: str | bytes) -> None:
        """Note the projects ``text`` names (a few searches in C per block)."""
        if len(self.context) == len(EVIDENCE):
            return
        found = set()
        if isinstance(text, bytes):
            for name, needles_b in _EVIDENCE_B.items():
                if name not in self.context and any(n in text for n in needles_b):
                    found.add(name)
        else:
            for name, needles in EVIDENCE.items():
                if name not in self.context and any(n in text for n in needles):
                    found.add(name)
        if "sgl_jax" in found or "sgl_jax" in self.context:
            if "sglang" in found and not _names_sglang_itself(text):
                found.discard("sglang")  # sglang-jax's name, or the log lines it copied
        elif "sglang" not in self.context and "sglang" not in found:
            # SGLang's log-line prefix shows the run even where no line names the package.
            if isinstance(text, bytes):
                if b"P" in text and _SGLANG_PREFIX_B.search(text) is not None:
                    found.add("sglang")
            elif "P" in text and _SGLANG_PREFIX.search(text) is not None:
                found.add("sglang")
        if found:
            self.context = self.context | found

    def _remember(self, text: str) -> None:
        """Keep the start of the input while it could be a short paste of a bare message."""
        assert self._opening is not None
        self._opening_chars += len(text)
        if self._opening_chars > _OPENING_CHARS:
            self._opening = None
        else:
            self._opening.append(text)

    def _feed(self, text: AnyStr, newline: AnyStr, markers: tuple[AnyStr, ...]) -> None:
        pos = 0
        size = len(text)
        found = [-2] * len(markers)
        before: AnyStr | str | None = None
        while pos < size:
            if not self.records and self._cut is None:
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
                    self._skip_last(text, newline, pos)
                    return
                begin = text.rfind(newline, pos, nearest) + 1
                if begin > pos:
                    self.lineno += text.count(newline, pos, begin)
                    # the line skipped right above, which a terminal may have cut
                    before = _wide_line(text, newline, pos, begin - 1)
                    pos = begin
                elif pos == 0 and self._skipped is not None:
                    before = self._skipped  # the last line of the block before, skipped
                    self._skipped = None
            end = text.find(newline, pos)
            if end < 0:
                end = size
            self.lineno += 1
            self._skipped = None
            line = text[pos : min(end, pos + MAX_LINE)]
            if pos > 0 and (b"Traceback" if isinstance(line, bytes) else "Traceback") in line:
                # a traceback's header may take the line above it (``_logged_above``)
                above = _line_ending_at(text, newline, 0, pos - 1)
                if isinstance(above, bytes):
                    self._above = (self.lineno - 1, above.decode("utf-8", "replace"))
                else:
                    self._above = (self.lineno - 1, above)
            if isinstance(line, bytes):
                prev = before.decode("utf-8", "replace") if isinstance(before, bytes) else before
                self._slow(line.decode("utf-8", "replace"), self.lineno, prev)
            else:
                self._slow(line, self.lineno, before if isinstance(before, str) else None)
            before = None
            pos = end + 1

    def _skip_last(self, text: AnyStr, newline: AnyStr, pos: int) -> None:
        """Keep the block's last line, skipped, for the line the next block starts with."""
        end = len(text) - 1 if text.endswith(newline) else len(text)
        if end <= pos:
            self._skipped = None
            return
        last = _line_ending_at(text, newline, pos, end)
        line = last.decode("utf-8", "replace") if isinstance(last, bytes) else last
        self._skipped = line if len(last) >= _WRAP_WIDTH else None
        self._above = (self.lineno, line)  # for a traceback header that starts the next block

    def finish(self) -> None:
        """Close every open record (end of input).

        A short paste that showed no error form at all (``Please merge adapters before
        quantizing the model.``) is read as bare messages, one per non-blank line; or, when
        the reporter's own words around a code block make it longer, the block's lines. When
        that is still more than a few lines, only the first is read, and the lines logged at
        warning level or above, as tentative findings.
        """
        if self._cut is not None:
            self._read(self._cut[1], self._cut[0])
            self._cut = None
        for record in sorted(self.records.values(), key=lambda r: r.start):
            self._close(record)
            if self._held is not None:
                self._emit(self._held[1])
                self._held = None
        if self._opening is not None and self.emitted == len(self._said_lines) and not self.opened:
            lines = "".join(self._opening).split("\n")
            kept: list[tuple[int, str]] = []
            fenced: list[tuple[int, str]] = []
            widths = [len(line) for line in lines]
            records: set[int] = set()  # lines a log prefix or the shell's ``Killed`` starts
            severe: set[int] = set()  # lines logged at warning level or above
            inside = False
            for lineno, raw in enumerate(lines, 1):
                raw = _unbarred(ANSI.sub("", raw)).translate(_CURLY).lstrip("\ufeff")
                line = _MARKDOWN_HEADING.sub("", raw.strip(), count=1)
                key, content = peel(line)
                if key and _logged_severe(line, content):
                    severe.add(lineno)
                if content[:1] == ">":  # a ``> `` quote of a log record: its prefix inside
                    quoted = unwrap(content)
                    more, content = peel(quoted)
                    key += more
                    if more and _logged_severe(quoted, content):
                        severe.add(lineno)
                content = unwrap(content).strip()
                if key or content.partition(" ")[0] == "Killed":
                    records.add(lineno)
                if content.startswith("```"):
                    inside = not inside
                elif content and not _PROGRESS.match(content):
                    kept.append((lineno, content))
                    if inside:
                        fenced.append((lineno, content))
            if len(kept) > _OPENING_LINES and fenced:
                kept = fenced
            tentative = len(kept) > _OPENING_LINES
            if tentative:
                # Longer, and still no error form: its first line may be the error all the
                # same (an issue's title, a message's first line above its details), and so
                # may a line logged as a warning or an error (``... - WARNING - name - ...``).
                kept = kept[:1] + [k for k in kept[1:] if k[0] in severe]
            kept = [(lineno, line) for lineno, line in kept if lineno not in self._said_lines]
            for first, last, message in _unwrapped_lines(kept, widths, records):
                facts = ErrorFacts(type_name="", message=message)
                self._emit(Finding(first, last, "line", facts, tentative=tentative))

    # the slow path

    def _width(self, line: str) -> int:
        """Count ``line`` towards the widest length seen; its length."""
        width = len(line)
        if width >= self._widest:
            if width > self._widest:
                self._widest, self._at_widest = width, 0
            self._at_widest += 1
        return width

    def _is_cut(self, line: str, width: int) -> bool:
        """Whether a terminal cut ``line`` at its width (the widest length, seen twice)."""
        return (
            width == self._widest >= _WRAP_WIDTH and self._at_widest >= 2 and _ends_mid_word(line)
        )

    def _slow(self, raw: str, lineno: int, before: str | None = None) -> None:
        """Read one line closely (``before``: the line above it, when it was skipped)."""
        if raw.endswith("\r"):
            raw = raw.rstrip("\r")  # a CRLF file: its widths and padding are the line's own
        if before is not None and before.endswith("\r"):
            before = before.rstrip("\r")
        if before is not None and self._cut is None and self._is_cut(before, self._width(before)):
            self._cut = (lineno - 1, before, True)
        width = self._width(raw)
        if self._cut is not None:
            start, head, sure = self._cut
            self._cut = None
            # a paste indented as a whole indents the rest of a wrapped line too
            indent = self._indent if self._indent is not None else _paste_indent(head)
            body = raw[len(indent) :] if indent and raw.startswith(indent) else raw
            if _goes_on(body) and (sure or _padded_to(raw, len(head))):
                raw, lineno = head + body, start  # one line, wrapped by the terminal
            else:
                self._read(head, start)
        if width == self._widest >= _WRAP_WIDTH and _ends_mid_word(raw):
            # cut there if that width was seen before; else the next line may say so
            self._cut = (lineno, raw, self._at_widest >= 2)
            return
        self._read(raw, lineno)
        self._above = (lineno, raw)

    def _read(self, raw: str, lineno: int) -> None:
        self._line(raw, lineno)
        if self._held is not None:
            self._emit(self._held[1])
            self._held = None

    def _line(self, raw: str, lineno: int, whole: bool = True) -> None:
        if not self.records and not worth_a_look(raw) and not self._needle_in(raw):
            return  # e.g. a lowercase "error" in an ordinary line: nothing can start here
        if raw[:1] == "\ufeff":
            raw = raw[1:]  # a byte-order mark: a file saved on Windows
        if "\r" in raw:
            raw = next((p for p in reversed(raw.split("\r")) if p.strip()), "")
        if "\x1b" in raw:
            raw = ANSI.sub("", raw)
        if "%|" in raw:
            raw = _unbarred(raw)
        if "\u2019" in raw or "\u201c" in raw or "\u00a0" in raw:
            raw = raw.translate(_CURLY)
        if self._indent is None and raw.strip():
            self._indent = _paste_indent(raw)
        if self._indent and raw.startswith(self._indent):
            raw = raw[len(self._indent) :]
        if whole and (len(raw) >= _RUN_ON_CHARS or "%|" in raw):
            pieces = _run_together(raw)
            if pieces is not None:
                for piece in pieces:
                    self._line(piece, lineno, whole=False)  # a log copied into one paragraph
                return
        self._evidence(raw)
        if raw[:1] == "#":
            raw = _MARKDOWN_HEADING.sub("", raw, count=1)  # an issue's title, as a page shows it
        key, content = peel(raw)
        if "T" in key and _PADDING in content:
            glued = _GLUED_RECORD.search(content)
            if glued is not None and peel(content[glued.end() :])[0] == key:
                # a terminal padded a record to its width and the next one follows on the
                # same line (a copy that lost the line break): two lines
                cut = len(raw) - len(content)
                self._line(raw[: cut + glued.start()], lineno)
                self._line(raw[cut + glued.end() :], lineno)
                return
        if _folded(content):
            at = _fold_start(content)
            if content[:at].strip():
                self._line(content[:at].rstrip(), lineno, whole=False)  # what came before it
            for line in _unfolded(content[at:]):
                self._line(line, lineno, whole=False)  # a traceback reflowed into one line
            return
        if key[:1] == "[" and self._awaits_message("", lineno, raw, content):
            key, content = "", raw  # ``[sgl_kernel] CRITICAL: ...`` under ``ImportError:``
        elif self.records and "[" in key[1:]:
            key, content = self._tag_after_prefix(key, lineno, raw, content)
        if (
            "P" in key
            and "sglang" not in self.context
            and "sgl_jax" not in self.context
            and _SGLANG_PREFIX.search(key)
        ):
            self.context = self.context | {"sglang"}
        if content[:1] in ">`":
            quoted = content[:1] == ">"
            content = unwrap(content)
            if quoted:
                unquoted = content
                more, content = peel(content)
                if more[:1] == "[" and self._awaits_message(key, lineno, unquoted, content):
                    more, content = "", unquoted  # the same tag, in a ``> `` quote
                key += more
        if content.endswith("cluster]"):
            content = RAY_REPEAT.sub("", content)
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
            if record.ipython:
                lines = _ipython(record, content)
                if lines is not None:
                    for line in lines:
                        if not self._advance(record, line, lineno):
                            self._close(record)
                            return False
                    return True
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
            if record.after_frame and record.wrapped_function(st):
                return True
            if s[0] in " \t" or s[0] in BOX:
                record.after_frame = s[0] != "\t" and FRAME.match(s) is not None
                record.add(s, lineno)
                return True
            if s.startswith('File "') and FRAME.match(s) is not None:
                # A paste whose indentation was lost: frames and source lines at column 0.
                record.flat = record.after_frame = True
                record.add("  " + s, lineno)
                return True
            if record.flat and (
                (record.after_frame and not starts_exception(s)) or not st.strip("^~ ")
            ):
                record.after_frame = False
                record.add("    " + s, lineno)
                return True
            if st in SEPARATORS:
                record.add(s, lineno)
                record.state = _SEP
                record.chained = True
                return True
            if (
                record.group
                or HEADER_CORE in s
                or st.partition(" ")[0] == "Killed"  # the shell, below a cut traceback
                or split_exception_line(s) is None
            ):
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
            if st in SEPARATORS:
                record.state = _SEP
                record.chained = True
                record.add(s, lineno)
                return True
            if HEADER_CORE in s or _ends_message(s, st):
                if record.msg_lines > 1 and st.startswith('File "'):
                    # A frame right under a message: a log printed newest first (Cloud
                    # Logging), where each frame's source line comes before its frame line.
                    record.drop_last()
                return False
            if s[0] not in " \t" and starts_exception(s):
                return False
            if record.msg_lines >= _MAX_MSG_LINES or record.msg_chars + len(s) > _MAX_MSG_CHARS:
                return False
            record.add(s, lineno)
            return True
        if state == _BLANK:
            if not st:
                record.blanks += 1
                return record.blanks <= 3
            if st in SEPARATORS:
                record.state = _SEP
                record.chained = True
                record.add(s, lineno)
                return True
            return False
        # _SEP: after a chain separator comes the next section
        if not st:
            return True
        rest = s.lstrip()
        if s.startswith(_HEADER) or (rest[:1] in BOX_TOP and HEADER_CORE in s):
            record.state, record.group = _TB, False
        elif s[:1] == " " and (rest.startswith("+ Exception Group Traceback") or _starts_group(s)):
            record.state, record.group = _TB, True
        elif s[0] not in " \t" and split_exception_line(s) is not None:
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
        index = content.find(HEADER_CORE)
        first: str | None = None
        group = False
        wrapper = ""
        ipython = False
        if index >= 0:
            before = content[:index]
            rest = content.lstrip()
            if before.endswith("+ Exception Group "):
                plus = before.rfind("+ Exception Group ")
                first = content if not before[:plus].strip() else "  " + content[plus:]
                group = True
            elif rest[:1] in BOX_TOP:
                first = rest
            elif content.startswith(_HEADER, index):
                first = _HEADER
                lead = before.strip()
                if lead and self.needles and self._needle_in(lead):
                    wrapper = f"{lead} {_HEADER}"
            elif _IPY_HEADER.match(content.strip()) is not None:
                first = _HEADER
                ipython = True
        elif _starts_group(content):
            first = content
            group = True
        elif 'File "' in content and FRAME.match(content) is not None:
            first = content  # a paste that starts mid-stack, without its header
        if first is not None:
            for other in list(self.records.values()):
                if key.startswith(other.key):
                    self._close(other)
            record = _Record(key, lineno, "traceback", _TB, group)
            if first[:1] in BOX_TOP:
                record.indent = len(content) - len(first)
            elif first is _HEADER and index > 0 and content[:index].isspace():
                record.indent = index  # a paste indented as a whole (a Markdown code block)
            elif first.startswith('File "'):
                record.flat = True
                first = "  " + first
            record.after_frame = first is content or first.startswith("  File")
            record.wrapper = wrapper
            record.ipython = ipython
            held = self._held
            if held is not None and key == held[0] and lineno - held[1].end_line <= 2:
                record.lead, self._held = held[1], None
            elif first is _HEADER and not content[:index].strip():
                record.logged = self._logged_above(lineno)
            record.add(first, lineno)
            self._open(record)
            return
        raised = raise_in(content) if "raise " in content[:80] else None
        if raised is None and "`" in content and exception_in(content) is None:
            raised = cited_raise_in(content)  # prose citing ```ValueError("...")```
        if raised is not None:
            # A source line alone (``raise ValueError(f"...")``): what the code raises.
            facts = ErrorFacts(type_name=raised[0], message=raised[1])
            self._emit(Finding(lineno, lineno, "line", facts))
            return
        what = content.lstrip()
        if what.startswith("what():"):
            # C++'s ``terminate called after throwing an instance of 'c10::Error'`` and then
            # ``  what():  CUDA error: ...``: the message of an exception torch raised in C++.
            record = _Record(key, lineno, "line", _MSG, False)
            record.lone = True
            record.first_message = what[len("what():") :].strip()
            record.add(content, lineno)
            self._open(record)
            return
        indented = len(content) - len(content.lstrip()) if content[:1] in " \t" else 0
        hit = exception_in(content[indented:])
        if hit is not None and indented:
            if hit[0] == 0:
                content = content[indented:]  # an indented paste's error line
            else:
                hit = (hit[0] + indented, hit[1], hit[2])  # inside the line, where it was
        glued = glued_error(content) if hit is not None else -1
        if hit is not None and glued > hit[0]:
            # A second error on the same line, behind a rank's prefix: each is a finding.
            self._start(key, content[:glued], lineno)
            self._start(*peel(content[glued:].lstrip()), lineno)
            return
        if hit is not None:
            begin, type_name, message = hit
            if begin == 0:
                record = _Record(key, lineno, "line", _MSG, False)
                record.indent = indented
                record.lone = True
                record.type_name, record.first_message = type_name, message
                record.add(content, lineno)
                self._open(record)
            else:
                facts = ErrorFacts(type_name=type_name, message=message.rstrip())
                # a logged message the catalog knows, which quotes the error it met
                # (``Corrupted safetensors file detected: x - SafetensorError: ...``)
                said = self.needles and self._needle_in(content[:begin])
                self._emit(
                    Finding(lineno, lineno, "line", facts, wrapper=content.strip() if said else "")
                )
            return
        if ("Assertion `" in content and "failed" in content) or "Check failed" in content:
            # A CUDA kernel's device-side assertion (``IndexKernel.cu:92: ... Assertion
            # `idx < size` failed.``) or glog's ``Check failed: ...``: C++ stopping the run.
            start = content.find("Check failed")
            message = content[start:] if start >= 0 else content
            facts = ErrorFacts(type_name="", message=message.strip())
            self._emit(Finding(lineno, lineno, "line", facts))
            return
        if "]" in key and _CPP_ERROR.search(key) is not None:
            # torch's C++ logger at error level (``[E1226 15:44:25.49 socket.cpp:1011]
            # [c10d] The client socket has timed out ...``): the rest of the line is the error.
            message = _CPP_TAG.sub("", content.strip(), count=1)
            if message:
                self._emit(Finding(lineno, lineno, "line", ErrorFacts("", message)))
                return
        found = len(self.out)
        if "{" in content:
            for item in embedded_errors(content):
                if item.is_error:
                    # A body's ``type`` names the HTTP error class (``BadRequestError``), not
                    # the exception the server raised: the message alone is matched.
                    facts = ErrorFacts(type_name="", message=item.message)
                    self._emit(Finding(lineno, lineno, "body", facts))
        elif content[:1] in " \t\"'" and (value := body_field(content)) is not None:
            # one field of a body printed over several lines (``jq``, ``indent=2``): its
            # message, a finding only where the catalog knows it (no brace shows the body)
            facts = ErrorFacts(type_name="", message=value)
            self._emit(Finding(lineno, lineno, "body", facts, tentative=True))
        if len(self.out) != found:
            return
        said = self.needles and self._needle_in(content)
        if said or (
            ("rror" in content or "ailed" in content or "\u9519" in content)
            and SAID_ERROR.search(content, 0, SAID_ERROR_SPAN)
        ):
            message = content.strip()
            if content[:1] in " \t":  # an indented line: its prefix is after the indentation
                message = peel(message)[1].strip()
            facts = ErrorFacts(type_name="", message=message)
            if said:
                self._emit(Finding(lineno, lineno, "line", facts))
            else:
                # ``OpenAI completion error: 500 ...: <msg>``: the words after an ``error:``
                # may be a known error's; worth a finding only when they are.
                self._said_lines.add(lineno)
                self._emit(Finding(lineno, lineno, "line", facts, tentative=True))

    def _logged_above(self, lineno: int) -> str:
        """The message of the line right above ``lineno`` when a log prefix says it was
        logged at error level or above and it is no error form of its own (``... xinference.
        api.restful_api 1 ERROR    [address=..., pid=578] '<class ...>' is already used by
        a Transformers model.``, then ``Traceback (most recent call last):``)."""
        above = self._above
        if (
            above is None
            or above[0] != lineno - 1
            or (self.out and self.out[-1].end_line >= above[0])
        ):
            return ""
        line = above[1][:MAX_LINE]
        line = ANSI.sub("", line).strip() if "\x1b" in line else line.strip()
        key, content = peel(line)
        content = content.strip()
        if not key or not content or not _logged_severe(line, content, ERROR_LEVEL):
            return ""
        if HEADER_CORE in content or exception_in(content) is not None:
            return ""
        return content

    def _open(self, record: _Record) -> None:
        self.opened += 1
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
        if record.lone and not record.chained:
            more = message_lines(lines[1:])
            message = _span_closed("\n".join([record.first_message, *more]))
            line_facts = ErrorFacts(type_name=record.type_name, message=message)
            if record.type_name and record.kind == "line":
                if self._held is not None:
                    self._emit(self._held[1])
                self._held = (record.key, Finding(record.start, record.end, "line", line_facts))
                return
            facts: ErrorFacts | None = line_facts
        else:
            facts = parse_traceback(lines)
            if facts is not None and facts.message.endswith("`"):
                facts.message = _span_closed(facts.message)  # `Traceback ... Error: ...`
        if record.logged and (facts is None or not (facts.type_name or facts.message)):
            # cut before its own error line: the words logged with it may say the failure,
            # a finding only where the catalog knows them (the cut stack stays one of its own)
            words = ErrorFacts(type_name="", message=record.logged)
            self._emit(Finding(record.start - 1, record.start - 1, "line", words, tentative=True))
        lead = record.lead
        if lead is not None:
            if facts is not None and not facts.type_name and not facts.message:
                # The error line above a traceback cut before its own: one failure.
                facts.type_name, facts.message = lead.facts.type_name, lead.facts.message
                self._emit(Finding(lead.line, record.end, "traceback", facts))
                return
            self._emit(lead)
        if facts is None:
            if record.wrapper:  # the words alone, when what followed them was no traceback
                wrapped = ErrorFacts(type_name="", message=record.wrapper)
                self._emit(Finding(record.start, record.start, "line", wrapped))
            return
        kind: Literal["traceback", "line"] = "traceback"
        if record.kind == "line" and not facts.has_stack:
            kind = "line" if not any(f.has_stack for f in facts.chain) else "traceback"
        self._emit(Finding(record.start, record.end, kind, facts, wrapper=record.wrapper))


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
        # one block, so that the projects it names are known before its first line is read
        # (copied once: a chunk is large)
        view = memoryview(chunk)
        if overlong:  # the rest of the line that passed MAX_LINE is dropped
            scanner.feed_block(b"".join((partial, view[chunk.find(b"\n") : newline + 1])))
        elif partial:
            scanner.feed_block(b"".join((partial, view[: newline + 1])))
        else:
            scanner.feed_block(chunk if newline + 1 == len(chunk) else chunk[: newline + 1])
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
