"""Attach the explanation to an exception as one PEP 678 note, and only ever one.

Nothing else about the exception changes: message, args, type, traceback and other notes
stay as they were. When ``add_note`` itself fails (a frozen dataclass exception, a
``__notes__`` that is not a list), the caller gets the text to print instead.
"""

from __future__ import annotations

import os

from .. import _config as _debug

TYPE_CHECKING = False  # typing and dataclasses stay out of install()'s import cost
if TYPE_CHECKING:
    from .match import Match
    from .render import Verbosity

__all__ = ["Outcome", "attach", "explain_exception", "has_note", "set_default_verbosity"]

NOTE_PREFIX = "errhints:"  # same as _render.NOTE_PREFIX, kept here so checking stays import-free
_default_verbosity: Verbosity = (
    "full" if os.environ.get("ERRHINTS_VERBOSITY") == "full" else "short"
)


def set_default_verbosity(verbosity: Verbosity) -> None:
    """The verbosity used when a door is not given one."""
    global _default_verbosity
    if verbosity not in ("short", "full"):
        raise ValueError(f"verbosity must be 'short' or 'full', not {verbosity!r}")
    _default_verbosity = verbosity


def default_verbosity() -> Verbosity:
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
    from .match import explain_facts
    from .state import get_index

    return explain_facts(facts_from_exception(exc), get_index(extra_dirs))


def attach(exc: BaseException, verbosity: Verbosity | None = None) -> Outcome:
    """Explain ``exc`` and add the note; never raises, never adds a second errhints note."""
    try:
        if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
            return Outcome(None, False)
        if has_note(exc):
            return Outcome(None, True)
        matches = explain_exception(exc)
        if not matches:
            return Outcome(None, False)
        from .render import render_note

        note = render_note(matches, verbosity or _default_verbosity)
    except Exception as err:
        _debug.report("explaining an exception", err)
        return Outcome(None, False)
    try:
        exc.add_note(note)
    except Exception as err:
        _debug.report("adding a note", err)
        return Outcome(note, False)
    return Outcome(note, True)
