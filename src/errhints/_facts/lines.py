"""Log-line recognition: peel log prefixes off a line and spot an exception line.

Each line's log prefix (``[rank5]: ``, ``(WorkerDict pid=616, ip=...) ``, timestamps, levels,
``[2026-01-01 10:00:00 TP3] ``, glog) is peeled off; what remains of the prefix is the line's
*stream*, so that the tracebacks of several ranks printed at once can be followed side by
side. Every regular expression here is anchored or bounded, so no line can make it slow.
"""

from __future__ import annotations

import re

__all__ = [
    "ANSI",
    "ERROR_LEVEL",
    "KNOWN_EXCEPTIONS",
    "RAY_REPEAT",
    "SEVERE",
    "cited_raise_in",
    "exception_in",
    "glued_error",
    "is_exception_name",
    "peel",
    "raise_in",
    "split_exception_line",
    "starts_exception",
    "unwrap",
    "worth_a_look",
]

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
        "OutOfResources",
        "CancelledError",
    }
)

#: Known exception names without one of the suffixes: lines starting with one are checked.
_OTHER_STARTS = tuple(n for n in KNOWN_EXCEPTIONS if not n.endswith(_SUFFIXES))

ANSI = re.compile(
    r"\x1b(?:\[[0-9;:?<=>]{0,40}[ -/]{0,4}[@-~]|\][^\x07\x1b]{0,512}(?:\x07|\x1b\\)?|[@-Z\\-_])"
)

RAY_REPEAT = re.compile(r"\s\[repeated \d{1,9}x across cluster\]\s{0,4}$")

_TS = (
    r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?"
    r"|\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d{1,9})?"
    r"|\d\d/\d\d/\d{4} \d\d:\d\d:\d\d(?:[.,]\d{1,9})?"
    r"|\d\d:\d\d:\d\d(?:[.,]\d{1,9})?"
)

_TS_IN = re.compile(r"\d{4}[-/]\d\d[-/]\d\d[T _]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?|" + _TS)

#: The level words of a log prefix: those of error level or above, of warning, the rest.
_ERROR_WORDS = r"ERROR|CRITICAL|FATAL"
_SEVERE_WORDS = r"WARNING|WARN|" + _ERROR_WORDS
_LEVELS = r"(?:INFO|" + _SEVERE_WORDS + r"|DEBUG|TRACE|NOTICE|SUCCESS)"

#: A log prefix's level of warning or above: a word (``- WARNING -``, ``ERROR:``) or glog's
#: letter (``W0429 11:19:48.007000 ...]``, torch's C++ ``[W1226 15:44:25.49 socket.cpp:7]``).
SEVERE = re.compile(r"(?<![A-Za-z])(?:" + _SEVERE_WORDS + r")(?![A-Za-z])|(?<![^\s\[])[WEF]\d{4} ")

#: A log prefix's level of error or above, as a word.
ERROR_LEVEL = re.compile(r"(?<![A-Za-z])(?:" + _ERROR_WORDS + r")(?![A-Za-z])")

#: One token of a log prefix, matched at a position (never searched).
_TOKEN = re.compile(
    r"(?P<ts>(?:" + _TS + r")(?: (?:stdout|stderr) [FP])?)(?=[ \t|\]]|$)"
    r"|(?P<br>\[(?:[^\[\]\n]{0,40}\d\d:\d\d:\d\d[^\[\]\n]{0,120}"
    r"|(?=[^\]\n]{0,160}[A-Za-z])[^\[\]\n]{1,160})\]:?)(?!\()"  # not a Markdown link's text
    r"|(?P<ray>\([\w.:-]{0,80} ?pid=\d{1,10}[^()\n]{0,200}\)"
    r"|\((?:raylet|gcs_server|autoscaler|monitor|log_monitor|dashboard)(?:, ip=[\w.:]{1,64})?\))"
    r"|(?P<lvl>" + _LEVELS + r":[\w.-]{1,120}:|" + _LEVELS + r":?(?=[ \t|]|$))"
    r"|(?P<glog>[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{1,9} {1,8}\d{1,20} [\w./-]{1,300}:\d{1,7}\])"
    r"|(?P<loc>[\w.<>-]{1,200}:[\w.<>-]{1,200}:\d{1,7})(?= - )"
    r"|(?P<name>[\w.-]{1,120})(?= - " + _LEVELS + r" - )"
    r"|(?P<logger>[A-Za-z_]\w{0,60}(?:\.\w{1,60}){1,12})(?= - )"
    # ``%(name)s %(process)d %(levelname)s`` (Xinference: ``xinference.core.worker 17 ERROR``)
    r"|(?P<proc>[A-Za-z_]\w{0,60}(?:\.\w{1,60}){1,12} \d{1,10} {1,8}" + _LEVELS + r")(?= |$)"
    r"|(?P<sep>[-|])(?= )"
    r"|(?P<field>[\w.-]{1,60})(?= \|(?: |$))"
    r"|(?P<compose>[A-Za-z][\w.-]{0,80}[-_]\d{1,3} {1,40}\|)(?= |$)"  # ``sglang-1  |``
    r"|(?P<syslog>(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d\d:\d\d:\d\d"
    r" [\w.-]{1,100} [\w./@-]{1,100}(?:\[\d{1,10}\])?:)(?= |$)"
    r"|(?P<label>\d{1,5}:)(?= )"
    r"|(?P<arrow>[A-Za-z_][\w.]{0,200}:\d{1,7} >>)(?= |$)"
)

#: A bracketed prefix whose ``[`` an excerpt cut off, where a line starts: SGLang's
#: ``2025-02-17 11:56:43 TP0] `` (its time, then its parallel ranks).
_CUT_BRACKET = re.compile(
    r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?: [A-Z]{1,6}\d{1,6}){0,4}\]:?(?= )"
)

#: A line number a viewer or a copy added before each line: ``[80810] `` (a log viewer),
#: ``123\t`` (a copied numbered listing); every such line is one stream.
_LINENO = re.compile(r"\[\d{1,9}\](?: |$)|\d{1,7}\t")

#: First characters that can start a log prefix; other lines skip the prefix regex unless
#: they hold LlamaFactory's ``logger.name:lineno >> `` (``_ARROW``), its record cut above,
#: a docker compose service's ``name  |`` or a logger's ``pkg.module - ``. (``JMAO`` start
#: journald's months.)
_PREFIX_START = frozenset("0123456789[(IWEFDCTNSJMAO-")
_ARROW = " >> "

#: A C++ source location ending a bracketed prefix (``[E1226 15:44:25.49 socket.cpp:1011]``):
#: what follows is the message, brackets included (``[Rank 1] Watchdog caught ...``).
_CPP_LOCATION = re.compile(r"\.(?:cpp|cc|cu|cuh|h|hpp|c):\d{1,7}\]:?$")

_LEVEL_AHEAD = re.compile(r"- " + _LEVELS + r" - ")

_TYPE = re.compile(r"[A-Za-z_][\w.<>]{0,300}(?:\([\w.]{1,200}\))?")


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


def split_exception_line(line: str) -> tuple[str, str] | None:
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


def exception_in(content: str) -> tuple[int, str, str] | None:
    """Find an exception name followed by ``:`` in a line: ``(start, type, message)``.

    At the line's start any exception-like name counts; inside the line (``... failed:
    ValueError: bad``, the warnings module's ``path.py:12: UserWarning: ...``) the earliest
    one that ends in a known suffix does. ``Name(args): text`` counts too: Ray's
    ``RayTaskError(ValueError): ...`` names a type, while SGLang's
    ``KVTransferError(bootstrap_room=7): reason`` is a message that starts with its type's
    name (its ``__str__``), so the message keeps it. Linear: ``str.find`` and bounded walks.
    """
    suffixes = [suffix for suffix in _SUFFIXES if suffix in content]
    if not suffixes and not any(name in content[:500] for name in _OTHER_STARTS):
        return None
    split = split_exception_line(content) if content[:1].isalpha() or content[:1] == "_" else None
    if split is not None and (
        is_exception_name(split[0]) or (split[0] == "Exception" and split[1].strip())
    ):
        # A bare ``Exception: message`` at the line's start is what ``raise Exception(...)``
        # prints; inside a line the word is too common in prose to count.
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
    while (
        begin > floor
        and content[begin - 1].isascii()
        and (content[begin - 1].isalnum() or content[begin - 1] in "._")
    ):
        begin -= 1
    name = content[begin:end]
    # A name glued to text in another script (an issue title pasted before the error line,
    # ``部署失败Exception: ...``) is not a word of prose, even the bare ``Exception``.
    glued = begin > 0 and not content[begin - 1].isascii() and not content[begin - 1].isspace()
    # Nor is one that prose cites in quotes (``I get `Exception: ...` when ...``), but not
    # code's own string (``print("Exception: ", e)``).
    bare = glued or _opens_citation(content, begin)
    if not name[:1].isalpha() or not (is_exception_name(name) or (bare and name == "Exception")):
        return None
    if not paren:
        if end + 1 < len(content) and content[end + 1] != " ":
            return None
        message = _unquoted(content[end + 2 :], content[begin - 1 : begin])
        if begin > 0 and name.endswith("KeyError"):
            message = _quoted_head(message)
        return begin, name, message
    close = content.find(")", end, end + 300)
    if close < 0 or content[close + 1 : close + 2] != ":":
        return None
    if close + 2 < len(content) and content[close + 2] != " ":
        return None
    inner = content[end + 1 : close]
    if _TYPE.fullmatch(inner) and is_exception_name(inner):
        return begin, f"{name}({inner})", content[close + 3 :]
    return begin, name, content[begin:]


#: Quotes prose puts around an error line it cites: `ValueError: ...`, "ValueError: ..."
#: and “ValueError: ...” (which the scanner reads with straight quotes).
_CLOSING_QUOTE = {"`": "`", "\u201c": "\u201d", '"': '"'}


#: What may follow a quote that closes a citation: a space, the end, or punctuation.
_AFTER_CLOSING = frozenset(" \t.,;:!?)]}\"'")


def _opens_citation(content: str, begin: int) -> bool:
    """Whether a quote right before ``content[begin:]`` opens prose's citation of an error:
    a backtick, or a double quote (straight or curly) at the line's start or after
    a space or a colon, never after code's ``(``, ``=`` or ``,``."""
    quote = content[begin - 1 : begin]
    if quote not in _CLOSING_QUOTE:
        return False
    return quote == "`" or begin == 1 or content[begin - 2] in " \t:\uff1a"


def _unquoted(message: str, before: str) -> str:
    """The message without the closing quote of the one before the exception's name (prose
    citing the error in backticks or double quotes), and what follows it; as is when it has
    none.

    Quotes inside the message open and close code of its own (``... Please pass
    `--trust-remote-code` to load this model.```): the citation closes at the first quote
    met when every inner one is closed and a space, the end or punctuation follows it, since
    the prose after it may cite more code (``... `KeyError: 'x'`. Even with `"format"```);
    else at the last quote."""
    closing = _CLOSING_QUOTE.get(before)
    if closing is None:
        return message
    inner = 0
    at = message.find(closing)
    while at >= 0:
        following = message[at + 1 : at + 2]
        if not inner % 2 and at > 0 and (not following or following in _AFTER_CLOSING):
            return message[:at]
        inner += 1
        at = message.find(closing, at + 1)
    if closing == '"' and message.count('"') % 2 == 0:
        return message  # no quote closes the citation (``Unknown split "test". Should ...``)
    at = message.rfind(closing)  # none fits (``...' `Has anyone``): the last one
    return message[:at] if at > 0 else message


def _quoted_head(message: str) -> str:
    """A ``KeyError``'s message (its key's repr) cited inside prose, without the prose after
    its closing quote (``... fails to load: KeyError: 'x' on v0.5.13``). Only a KeyError's
    message is the quoted value alone: ``'X' object has no attribute 'y'`` goes on."""
    quote = message[:1]
    if quote not in ("'", '"'):
        return message
    close = message.find(quote, 1)
    if (
        close > 1
        and message[close + 1 : close + 2] == " "
        and message[close + 2 : close + 3].isalpha()
    ):
        return message[: close + 1]
    return message


#: A rank's prefix inside a line, before an error: ``... it shows: [rank4]: ValueError: ...``.
_GLUED_RANK = re.compile(r"\s\[rank\d{1,6}\]: ?(?=[A-Za-z_][\w.]{0,200}(?:Error|Exception): )")


def glued_error(message: str) -> int:
    """Where a second error starts inside a message, after a rank's prefix (two errors
    quoted on one line of prose, or two ranks' lines glued together), else ``-1``."""
    if "[rank" not in message:
        return -1
    found = _GLUED_RANK.search(message)
    return found.start() if found is not None else -1


#: Where a line says what failed before the error's own words: ``<task> error: <msg>``,
#: ``ERROR: <msg>``, a client's ``... request: Error: <msg>``, ``Tool parsing failed: <msg>``,
#: and the same in Chinese prose (``终端报错：<msg>``, ``错误信息如下: <msg>``).
SAID_ERROR = re.compile(
    r"(?:^|(?<=[\s>\])-]))(?:error|Error|ERROR|failed|Failed|FAILED)\s?: +(?=\S)"
    r"|(?:报错|错误|出错)(?:信息)?(?:如下)?\s?[:：]\s{0,4}(?=\S)"
)

#: How far into a line ``SAID_ERROR`` is looked for.
SAID_ERROR_SPAN = 400


def worth_a_look(raw: str) -> bool:
    """Whether a line outside any traceback could start one, or be a finding itself."""
    return (
        "Traceback" in raw
        or "{" in raw
        or '  "message": "' in raw  # a field of a body printed over several lines
        or "Error" in raw
        or "Exception" in raw
        or "error:" in raw
        or "failed:" in raw
        or "\u9519" in raw  # 错, as in 报错：<message> (``SAID_ERROR``)
        or "Warning" in raw
        or "Exit" in raw
        or "Interrupt" in raw
        or "Stop" in raw
        or 'File "' in raw
        or "File \u201c" in raw
        or "what():" in raw
        or "Assertion `" in raw
        or "Check failed" in raw
        or "OutOfResources" in raw
        or "[E" in raw
        or "[F" in raw
    )


def starts_exception(line: str) -> bool:
    """Whether a line begins with an exception name and ``:`` (a new error, not more text)."""
    hit = exception_in(line)
    return hit is not None and hit[0] == 0


def peel(line: str) -> tuple[str, str]:
    """Split a line into (stream key, content): the key is the line's log prefix with its
    timestamps folded to ``T``, so that every line of one stream has the same key."""
    if not line or (
        line[0] not in _PREFIX_START
        and line.find(_ARROW, 0, 260) < 0
        and line.find(" |", 0, 122) < 0  # docker compose's ``sglang-1  | ``
        and line.find(" - ", 0, 200) < 0  # a logger's ``pkg.module - ``
    ):
        return "", line
    pos = 0
    keys: list[str] = []
    size = len(line)
    numbered = _LINENO.match(line)
    if numbered is not None:
        keys.append("N")
        pos = numbered.end()
    cut = _CUT_BRACKET.match(line, pos) if line[pos : pos + 1].isdigit() else None
    if cut is not None:
        keys.append("[" + _TS_IN.sub("T", cut.group()))  # the stream of its whole lines
        pos = cut.end() + 1
    for _ in range(10):
        m = _TOKEN.match(line, pos)
        if m is None:
            break
        kind = m.lastgroup
        token = m.group()
        if kind in ("compose", "syslog", "label") and keys:
            break  # a service's name, journald's record, srun's task only at the start
        if kind == "sep" and not keys and _LEVEL_AHEAD.match(line, pos) is None:
            break  # ``- WARNING - name - message``: the head of a cut-off line is peeled
        if kind == "logger" and (keys[-1] != "-" if keys else token.count(".") < 2):
            # a logger's name only after ``LEVEL - ``, or first with three parts at least
            # (``%(name)s - %(message)s``: a message's ``torch.cuda - not available`` is not one)
            break
        if kind == "field" and (not keys or keys[-1] != "|"):
            break  # a column between bars only after one (``T | ERROR | stderr | ``)
        if kind == "sep" and keys and keys[-1] == "-":
            break
        if kind in ("ts", "glog"):
            keys.append("T")
        elif kind == "arrow":
            keys.append(">>")  # every logger of one LlamaFactory run writes one stream
        elif kind == "br":
            keys.append(_TS_IN.sub("T", token))
        elif kind == "syslog":
            keys.append("T" + token[15:])  # ``Jun 11 09:30:02``: every day one stream
        else:
            keys.append(token)
        pos = m.end()
        if pos < size and line[pos] in " \t":
            pos += 1
            if kind in ("lvl", "sep", "name", "loc", "logger", "proc"):
                while pos < size and line[pos] == " " and pos < m.end() + 16:
                    pos += 1
        if kind in ("glog", "arrow") or (kind == "br" and _CPP_LOCATION.search(token) is not None):
            break  # C++ logging, LlamaFactory's ``name:lineno >>``: the rest is the message
    if not keys:
        return "", line
    return "".join(keys), line[pos:]


#: ``raise ValueError(f"...`` (a traceback's source line): the type and the string's opening.
_RAISE = re.compile(r"raise ([A-Za-z_][\w.]{0,200})\((?:[rRbB]?[fF]|[fF]?[rR])?(\"\"\"|'''|\"|')")


def raise_in(content: str) -> tuple[str, str] | None:
    """``raise ValueError(f"Template {name} does not exist.")`` -> ``("ValueError", "Template
    {name} does not exist.")``: the exception and the first string literal of a raise statement,
    as a source line shows it (an f-string's fields kept as written, so a catalog template,
    itself copied from that f-string, fits it). ``None`` for anything else."""
    s = content.strip()
    if not s.startswith("raise "):
        return None
    m = _RAISE.match(s)
    if m is None or not is_exception_name(m.group(1)):
        return None
    quote = m.group(2)
    pos = m.end()
    limit = min(len(s), pos + 4096)
    parts: list[str] = []
    while pos < limit:
        end = s.find(quote, pos, limit)
        slash = s.find("\\", pos, end if end >= 0 else limit)
        if slash >= 0:
            parts.append(s[pos:slash])
            nxt = s[slash + 1 : slash + 2]
            parts.append({"n": "\n", "t": "\t"}.get(nxt, nxt))
            pos = slash + 2
            continue
        if end < 0:
            return None
        parts.append(s[pos:end])
        literal = "".join(parts)
        return (m.group(1), literal) if literal.strip() else None
    return None


#: A raise statement or an exception's construction cited between backticks in prose.
_CITED_CALL = re.compile(
    r"`(?:raise )?([A-Za-z_][\w.]{0,200})\((?=(?:[rRbB]?[fF]|[fF]?[rR])?[\"'])"
)


def cited_raise_in(content: str) -> tuple[str, str] | None:
    """``... SGLang only shows `ValueError("type fp8e4nv not supported ...")`.`` -> the
    exception and its message, as :func:`raise_in` reads a raise statement; ``None`` when no
    backticks in the line hold one."""
    if "`" not in content:
        return None
    for found in _CITED_CALL.finditer(content):
        raised = raise_in("raise " + content[found.start(1) :])
        if raised is not None:
            return raised
    return None


def unwrap(content: str) -> str:
    """A line without the Markdown around it: ``> `` quote markers (nested too), inline code
    backticks around an error line (```RuntimeError: ...```), and the prose after them when
    the span closes mid-line, and a fence glued to it (````````ValueError: ...``); a fence
    line itself stays as it is. A line that is one double-quoted string (a cited message:
    ``> "This model does not appear to be ..."``) loses its quotes."""
    for _ in range(4):
        if content[:1] != ">":
            break
        content = content[2:] if content[1:2] == " " else content[1:]
    if len(content) > 2 and content[0] == '"' and content.rstrip()[-1:] == '"':
        quoted = content.rstrip()[1:-1]
        if '"' not in quoted:
            content = quoted
    if content[:1] == "`":
        rest = content.lstrip("`")
        if content.startswith("```") and " " not in rest:
            return content  # a fence line (```python)
        ticks = len(content) - len(rest)
        content = rest
        if content.endswith("`"):
            bare = content.rstrip("`")
            if bare.count("`") % 2 == 0:  # the run closes no code span inside the line
                content = bare
        elif ticks < 3 and (close := content.find("`" * ticks)) > 0:
            after = content[close + ticks :]
            if after[:1] in (" ", ",", ".", ":", ";") and "`" not in after:
                content = content[:close]  # ```ZMQError: ...` when serving models``
    return content
