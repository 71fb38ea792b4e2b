"""ErrorFacts: what any source (a live exception, traceback text, a log line) tells about a failure.

Every door turns its input into these plain records; the matcher reads nothing else.
Extraction from a live exception never calls the exception's own code except ``str()``,
and survives when that raises.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import CodeType, TracebackType
from typing import NamedTuple

__all__ = ["ErrorFacts", "Frame", "facts_from_exception", "module_to_path", "safe_str"]

#: How many exceptions of one chain (causes, contexts, group members) are read at most.
MAX_CHAIN = 64
#: How many frames of one traceback are kept: the outermost and innermost halves.
MAX_FRAMES = 400


class Frame(NamedTuple):
    """One stack frame: ``path`` is package-relative (``sglang/srt/x.py``) or ``None``.

    ``function`` is the qualified name (``Scheduler.run_batch``) for a live frame; from
    traceback text it is what the traceback printed, often the bare name, so
    ``qualified`` is then ``False`` and the matcher compares the last dotted part.
    A named tuple, because deep tracebacks create many of them on the hot path.
    """

    filename: str
    function: str
    line: int | None
    path: str | None = None
    package: str | None = None
    qualified: bool = True


@dataclass(slots=True)
class ErrorFacts:
    """One failure: its type, message and frames (innermost last), and what it chains to."""

    type_name: str
    message: str
    frames: tuple[Frame, ...] = ()
    type_names: frozenset[str] = frozenset()
    chain: list[ErrorFacts] = field(default_factory=list)
    relation: str = ""  # "cause", "context" or "group" for facts inside another's chain
    has_stack: bool = False  # whether frames were known at all (a bare log line has none)

    @property
    def short_type(self) -> str:
        """The type's name without its module (``OutOfMemoryError``)."""
        return self.type_name.rpartition(".")[2]

    @property
    def packages(self) -> frozenset[str]:
        """Top-level packages that have a frame in this traceback."""
        return frozenset(f.package for f in self.frames if f.package)

    def all_type_names(self) -> frozenset[str]:
        """Every name the type answers to: qualified, short and (live only) its bases."""
        return self.type_names | {self.type_name, self.short_type}


def module_to_path(module: str, filename: str) -> str:
    """``sglang.srt.managers.scheduler`` -> ``sglang/srt/managers/scheduler.py``."""
    base = module.replace(".", "/")
    if filename.endswith(("__init__.py", "__init__.pyc")):
        return base + "/__init__.py"
    return base + ".py"


def safe_str(value: object, limit: int | None = None) -> str:
    """``str(value)`` that never raises and keeps lone surrogates representable."""
    try:
        text = str(value)
    except Exception:
        try:
            text = f"<unprintable {type(value).__name__} object>"
        except Exception:
            text = "<unprintable object>"
    if not isinstance(text, str):  # a str subclass is fine; anything else is not
        text = "<unprintable object>"
    if limit is not None and len(text) > limit:
        text = text[:limit]
    return text


# Read through the built-in descriptors, so that an exception class overriding these
# attributes (properties that raise, a hostile metaclass) cannot break or fool errhints.
_TYPE_ATTR = {name: type.__dict__[name] for name in ("__mro__", "__qualname__", "__module__")}
_EXC_ATTR = {
    name: BaseException.__dict__[name]
    for name in ("__cause__", "__context__", "__suppress_context__", "__traceback__")
}
_GROUP_MEMBERS = BaseExceptionGroup.__dict__["exceptions"]


def _type_name(tp: type) -> str:
    try:
        module = _TYPE_ATTR["__module__"].__get__(tp)
        qualname = _TYPE_ATTR["__qualname__"].__get__(tp)
    except Exception:
        return "<unknown type>"
    if not isinstance(module, str) or module in ("builtins", "__main__", ""):
        return str(qualname)
    return f"{module}.{qualname}"


#: code object -> (file name, qualname, package-relative path, package); bounded. A frame's
#: module name comes from its globals, which belong to its code's module, so the code
#: object decides all four; only the line differs between frames of the same code.
_code_info: dict[object, tuple[str, str, str | None, str | None]] = {}


def _info(code: CodeType, module: object) -> tuple[str, str, str | None, str | None]:
    path = package = None
    if isinstance(module, str) and module and module != "__main__":
        path, package = module_to_path(module, code.co_filename), module.partition(".")[0]
    return code.co_filename, code.co_qualname, path, package


def _frames(tb: TracebackType | None) -> tuple[Frame, ...]:
    frames: list[Frame] = []
    append = frames.append
    cache = _code_info
    while tb is not None and len(frames) < 100_000:
        frame = tb.tb_frame
        code = frame.f_code
        info = cache.get(code)
        if info is None:
            info = _info(code, frame.f_globals.get("__name__"))
            if len(cache) < 8192:
                cache[code] = info
        append(Frame(info[0], info[1], tb.tb_lineno, info[2], info[3]))
        tb = tb.tb_next
    if len(frames) > MAX_FRAMES:
        half = MAX_FRAMES // 2
        frames = frames[:half] + frames[-half:]
    return tuple(frames)


def _one(exc: BaseException, relation: str) -> ErrorFacts:
    tp = type(exc)
    names: set[str] = set()
    for base in _TYPE_ATTR["__mro__"].__get__(tp):
        if base is not object:
            name = _type_name(base)
            names.add(name)
            names.add(name.rpartition(".")[2])
    return ErrorFacts(
        type_name=_type_name(tp),
        message=safe_str(exc),
        frames=_frames(_EXC_ATTR["__traceback__"].__get__(exc)),
        type_names=frozenset(names),
        relation=relation,
        has_stack=True,
    )


def _linked(exc: BaseException) -> list[tuple[BaseException, str]]:
    """The exceptions ``exc`` points to: its cause, its context, its group members."""
    linked: list[tuple[BaseException, str]] = []
    cause = _EXC_ATTR["__cause__"].__get__(exc)
    if isinstance(cause, BaseException):
        linked.append((cause, "cause"))
    context = _EXC_ATTR["__context__"].__get__(exc)
    if isinstance(context, BaseException) and not _EXC_ATTR["__suppress_context__"].__get__(exc):
        linked.append((context, "context"))
    if issubclass(type(exc), BaseExceptionGroup):
        members = _GROUP_MEMBERS.__get__(exc)
        if isinstance(members, tuple):
            linked.extend((m, "group") for m in members if isinstance(m, BaseException))
    return linked


def facts_from_exception(exc: BaseException) -> ErrorFacts:
    """Read a live exception and its chain (causes, contexts, group members), cycles cut."""
    root = _one(exc, "")
    seen = {id(exc)}
    queue: list[BaseException] = [exc]
    while queue and len(seen) < MAX_CHAIN:
        for other, relation in _linked(queue.pop(0)):
            if id(other) in seen or len(seen) >= MAX_CHAIN:
                continue
            seen.add(id(other))
            root.chain.append(_one(other, relation))
            queue.append(other)
    return root
