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
    "attach",
    "default_verbosity",
    "explain_exception",
    "has_note",
    "note_text",
    "set_default_verbosity",
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
    """What ``attach`` did: the note text (if any match) and whether it is on the exception."""

    __slots__ = ("attached", "note")

    def __init__(self, note: str | None, attached: bool) -> None:
        self.note = note
        self.attached = attached

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
    """Facts from the live exception, matched against the (lazily loaded) catalog."""
    from .._facts.live import facts_from_exception
    from .pipeline import explain_facts
    from .state import get_index

    return explain_facts(facts_from_exception(exc), get_index(extra_dirs))


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
    if note is None:
        return Outcome(None, False)
    try:
        exc.add_note(note)
    except Exception:  # it refuses notes (frozen, a hostile __notes__): the door prints it
        return Outcome(note, False)
    return Outcome(note, True)
