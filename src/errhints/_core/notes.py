"""Attach the explanation to an exception as one PEP 678 note, and only ever one.

Nothing else about the exception changes: message, args, type, traceback and other notes
stay as they were. When ``add_note`` itself fails (a frozen dataclass exception, a
``__notes__`` that is not a list), the caller gets the text to print instead.
"""

from __future__ import annotations

from .._config import NOTE_PREFIX, PASS_THROUGH, check_verbosity, guard, verbosity_from_env

TYPE_CHECKING = False  # typing and dataclasses stay out of install()'s import cost
if TYPE_CHECKING:
    from collections.abc import Sequence

    from .._config import Verbosity
    from .match import Match

__all__ = [
    "Outcome",
    "add_note",
    "attach",
    "default_verbosity",
    "explain_exception",
    "has_note",
    "note_text",
    "own_notes",
    "set_default_verbosity",
    "traceback_prints_notes",
]

_default_verbosity: Verbosity | None = None  # None: ERRHINTS_VERBOSITY, read on first use


def set_default_verbosity(verbosity: Verbosity) -> None:
    """The verbosity used when a door is not given one."""
    global _default_verbosity
    check_verbosity(verbosity)
    _default_verbosity = verbosity


def default_verbosity() -> Verbosity:
    """What :func:`set_default_verbosity` set, else ``ERRHINTS_VERBOSITY``, else short."""
    global _default_verbosity
    if _default_verbosity is None:
        _default_verbosity = verbosity_from_env()
    return _default_verbosity


class Outcome:
    """What ``attach`` did: the note text (if any match), whether it is on the exception, and
    whether it only identifies where the message is raised (no entry explains it)."""

    __slots__ = ("attached", "identified", "note")

    def __init__(self, note: str | None, attached: bool, identified: bool = False) -> None:
        self.note = note
        self.attached = attached
        self.identified = identified

    def __repr__(self) -> str:
        return f"Outcome(note={self.note!r}, attached={self.attached!r})"


def has_note(exc: BaseException) -> bool:
    """Whether the exception already carries an errhints note."""
    try:
        notes = getattr(exc, "__notes__", None)
    except Exception:  # a hostile __getattr__
        return False
    if not isinstance(notes, list):
        return False
    return any(isinstance(n, str) and n.startswith(NOTE_PREFIX) for n in notes)


def explain_exception(exc: BaseException, extra_dirs: tuple[str, ...] = ()) -> list[Match]:
    """Facts from the live exception, matched against the (lazily loaded) catalog.

    An exception that carries another process's failure as text (Ray's ``RayTaskError``,
    whose message is the worker's traceback; torch elastic's ``ChildFailedError``, whose
    root cause holds the failed rank's traceback) is explained from that text when its own
    stack explains nothing: the worker may have had no errhints.
    """
    from .._facts.live import facts_from_exception
    from .pipeline import explain_facts
    from .state import get_index

    index = get_index(extra_dirs)
    facts = facts_from_exception(exc)
    matches = explain_facts(facts, index)
    if matches:
        return matches
    text = _remote_traceback_text(exc, facts.all_type_names())
    if not text:
        return matches
    from .pipeline import explain_text

    found: dict[str, Match] = {}
    for explained in explain_text(text, index):
        for m in explained.matches:
            if f"{NOTE_PREFIX} {m.id}:" not in text:  # the worker's errhints explained it
                found.setdefault(m.id, m)
    return sorted(found.values(), key=lambda m: m.sort_key())


#: Exceptions whose message (or error files) carry the traceback of a failure elsewhere.
_REMOTE_TYPES = frozenset({"RayTaskError", "RayActorError", "ChildFailedError"})
_MAX_REMOTE_CHARS = 1 << 20


def _remote_traceback_text(exc: BaseException, type_names: frozenset[str]) -> str:
    """The text of the failure ``exc`` reports from another process, or ``""``."""
    if not (type_names & _REMOTE_TYPES):
        return ""
    from .._facts.model import safe_str

    parts = [safe_str(exc, _MAX_REMOTE_CHARS)]
    failures = getattr(exc, "failures", None)  # ChildFailedError: {rank: ProcessFailure}
    if isinstance(failures, dict):
        for failure in list(failures.values())[:8]:
            parts.append(_error_file_callstack(getattr(failure, "error_file", None)))
    return "\n".join(p for p in parts if p)


def _error_file_callstack(path: object) -> str:
    """The ``py_callstack`` a worker's ``@record`` wrote to its torch elastic error file."""
    if not isinstance(path, str) or not path:
        return ""
    import json

    try:
        with open(path, "rb") as handle:
            data = json.loads(handle.read(_MAX_REMOTE_CHARS))
        message = data.get("message", {})
        extra = message.get("extraInfo", {}) if isinstance(message, dict) else {}
        stack = extra.get("py_callstack", "") if isinstance(extra, dict) else ""
    except (OSError, ValueError, AttributeError):
        return ""
    return stack if isinstance(stack, str) else ""


def note_text(matches: Sequence[Match], verbosity: Verbosity | None = None) -> str:
    """The note for ``matches`` (best first), in ``verbosity`` or the default one."""
    from .render import render_note

    return render_note(matches, verbosity or default_verbosity())


def attach(exc: BaseException, verbosity: Verbosity | None = None) -> Outcome:
    """Explain ``exc`` and add the note; never raises, never adds a second errhints note.

    Control flow (``KeyboardInterrupt``, ``SystemExit``, ``StopIteration``, ...) passes
    through untouched.
    """
    note = None
    with guard("explaining an exception"):
        if isinstance(exc, PASS_THROUGH):
            return Outcome(None, False)
        if has_note(exc):
            return Outcome(None, True)
        matches = explain_exception(exc)
        if not matches:
            return Outcome(None, False)
        note = note_text(matches, verbosity)
        identified = matches[0].confidence == "identified"
    if note is None:
        return Outcome(None, False)
    try:
        add_note(exc, note)
    except Exception:  # it refuses notes (frozen, a hostile __notes__): the door prints it
        return Outcome(note, False, identified)
    return Outcome(note, True, identified)


def add_note(exc: BaseException, note: str) -> None:
    """``exc.add_note(note)``; on Python 3.10, which has no ``add_note``, the same
    ``__notes__`` list that 3.11 keeps (and the ``exceptiongroup`` backport prints)."""
    method = getattr(exc, "add_note", None)
    if method is not None:
        method(note)
        return
    notes = getattr(exc, "__notes__", None)
    if notes is None:
        exc.__notes__ = [note]  # type: ignore[attr-defined]
    elif isinstance(notes, list):
        notes.append(note)
    else:
        raise TypeError("__notes__ is not a list")


def traceback_prints_notes() -> bool:
    """Whether the ``traceback`` module prints ``__notes__``: always from 3.11; on 3.10 only
    once the ``exceptiongroup`` backport patched it (pytest imports it, for one)."""
    import sys

    if sys.version_info >= (3, 11):
        return True
    import traceback

    module = getattr(traceback.TracebackException.format, "__module__", "") or ""
    return module.startswith("exceptiongroup")


def own_notes(exc: BaseException) -> list[str]:
    """The errhints notes on ``exc`` (to print where the printer does not show notes)."""
    try:
        notes = getattr(exc, "__notes__", None)
    except Exception:
        return []
    if not isinstance(notes, list):
        return []
    return [n for n in notes if isinstance(n, str) and n.startswith(NOTE_PREFIX)]
