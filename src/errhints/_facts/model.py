"""The error model: ``ErrorFacts`` and ``Frame``, plain records of one failure.

Every door turns its input (a live exception, traceback text, a log line) into these records;
the matcher reads nothing else. They hold no reference to a frame, traceback or exception.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

__all__ = ["MAX_CHAIN", "MAX_FRAMES", "ErrorFacts", "Frame", "module_to_path", "safe_str"]

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
    #: Frames read from text that start mid-stack (no ``Traceback`` header): the outer
    #: frames, where SGLang or LlamaFactory may have called in, are not shown.
    headless: bool = False
    #: For a traceback cut before its error line: the innermost frame's source line as
    #: shown (``check_version("transformers>=4.45.0")``), or "" when not shown.
    last_source: str = ""

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
