"""Interpreter hooks: ``sys.excepthook``, ``threading.excepthook``, ``sys.unraisablehook``, asyncio.

Each hook adds the note, then hands the very same exception to the hook that was there
before. Installing twice is a no-op. Uninstalling restores the previous hook only while ours
is still the one installed; if someone installed a hook after us, ours stays in their chain
but passes everything through untouched.

**A hook installed after errhints** (``rich.traceback.install()``, friendly-traceback,
always the order with ``ERRHINTS=1``) replaces ours, and Python calls it directly. Setting
``sys.excepthook`` raises no event, but *calling* it for an uncaught exception does: the
interpreter raises the audit event ``sys.excepthook`` just before it calls the hook. errhints
adds an audit hook (once per process; audit hooks cannot be removed, so it goes inert after
``uninstall()``) that attaches the note at that moment, so a printer that shows
``__notes__`` (rich, friendly-traceback, Python's own) shows it; a note that cannot be
attached (a frozen exception) is printed as the process ends, after the hook's report.
Limits: the audit event exists for uncaught main-thread exceptions only (threads have
``threading.excepthook``, which rich and friendly-traceback leave alone), and code that
calls ``sys.excepthook(...)`` itself raises no event.
"""

from __future__ import annotations

import sys
import threading

from .._config import ForkSafeLock, guard, print_unattached
from .._core.notes import Outcome, attach, own_notes, traceback_prints_notes

TYPE_CHECKING = False  # typing and collections.abc stay out of install()'s import cost
if TYPE_CHECKING:
    import logging
    from collections.abc import Callable
    from types import TracebackType
    from typing import Any

__all__ = ["NAME", "install", "state", "uninstall"]

#: The door's one-word name, as ``errhints doctor`` shows it.
NAME = "hooks"

_lock = ForkSafeLock()
_hooks: dict[str, Any] = {}


def _print_fallback(outcome: Outcome | None) -> None:
    """When the note could not be attached, show it after the traceback instead."""
    if outcome is not None and not outcome.attached:
        print_unattached(outcome.note)


#: Modules whose excepthooks print ``__notes__`` themselves, on Python 3.10 too.
_NOTE_PRINTERS = ("rich", "friendly_traceback", "exceptiongroup", "IPython")


def _prints_notes_itself(hook: object) -> bool:
    module = getattr(hook, "__module__", None) or getattr(type(hook), "__module__", None)
    return isinstance(module, str) and module.partition(".")[0] in _NOTE_PRINTERS


def _print_notes_if_unseen(exc: object) -> None:
    """Python 3.10: neither the built-in hooks nor ``traceback`` print ``__notes__`` (unless
    the ``exceptiongroup`` backport patched ``traceback``); print ours after the report."""
    if isinstance(exc, BaseException) and not traceback_prints_notes():
        for note in own_notes(exc):
            print_unattached(note)


def _safe_attach(exc: object) -> Outcome | None:
    if not isinstance(exc, BaseException):
        return None
    with guard("a hook"):  # attach never raises; this guards against the impossible
        return attach(exc)
    return None


class _Hook:
    """Base for one installed hook: remembers what it replaced and can be switched off."""

    def __init__(self, previous: Callable[..., Any]) -> None:
        self.previous = previous
        self.active = True


class _ExceptHook(_Hook):
    def __call__(
        self, tp: type[BaseException], value: BaseException, tb: TracebackType | None
    ) -> None:
        outcome = _safe_attach(value) if self.active else None
        self.previous(tp, value, tb)
        _print_fallback(outcome)
        if self.active and sys.version_info < (3, 11) and not _prints_notes_itself(self.previous):
            _print_notes_if_unseen(value)


class _ThreadingHook(_Hook):
    def __call__(self, args: threading.ExceptHookArgs) -> None:
        outcome = _safe_attach(args.exc_value) if self.active else None
        self.previous(args)
        _print_fallback(outcome)
        if self.active and sys.version_info < (3, 11) and not _prints_notes_itself(self.previous):
            _print_notes_if_unseen(args.exc_value)


class _UnraisableHook(_Hook):
    def __call__(self, unraisable: Any) -> None:
        outcome = _safe_attach(getattr(unraisable, "exc_value", None)) if self.active else None
        self.previous(unraisable)
        if outcome is not None and self.previous is sys.__unraisablehook__:
            # The built-in hook (3.10-3.13), called from Python, does not print notes added
            # after the exception was raised; print ours after its report.
            outcome = Outcome(outcome.note, attached=False)
        _print_fallback(outcome)


def _asyncio_filter(record: logging.LogRecord) -> bool:
    """Note the exception of an asyncio error record ("Task exception was never retrieved")."""
    with guard("the asyncio log filter"):
        exc_info = record.exc_info
        if exc_info and isinstance(exc_info, tuple) and len(exc_info) == 3:
            _safe_attach(exc_info[1])
            if sys.version_info < (3, 11) and isinstance(exc_info[1], BaseException):
                from .log_records import show_notes_on_310

                show_notes_on_310(record, exc_info[1])
    return True


_audit = {"added": False}


def _audit_hook(event: str, args: tuple[Any, ...]) -> None:
    """Attach the note just before Python calls a ``sys.excepthook`` that is not ours."""
    if event != "sys.excepthook" or not _hooks:
        return
    with guard("the sys.excepthook audit event"):
        hook, value = args[0], args[2]
        if isinstance(hook, _ExceptHook) and hook.active:
            return  # ours is in front: it notes the exception itself
        outcome = _safe_attach(value)
        if outcome is None:
            return
        notes: list[str] = []
        if not outcome.attached:
            notes = [outcome.note] if outcome.note else []
        elif not traceback_prints_notes() and not _prints_notes_itself(hook):
            notes = own_notes(value)  # Python 3.10: its own printer shows no notes
        if notes:  # the printer will not show them: after its report, as the process ends
            import atexit

            atexit.register(_print_notes, notes)


def _print_notes(notes: list[str]) -> None:
    for note in notes:
        print_unattached(note)


def state() -> str:
    """``"on"`` while our hooks are installed, else ``"off"``."""
    return "on" if _hooks else "off"


def install() -> None:
    """Put our hooks in front of the current ones (no-op when already installed)."""
    with _lock:
        if _hooks:
            return
        excepthook = _ExceptHook(sys.excepthook)
        threading_hook = _ThreadingHook(threading.excepthook)
        unraisable_hook = _UnraisableHook(sys.unraisablehook)
        sys.excepthook = excepthook
        threading.excepthook = threading_hook
        sys.unraisablehook = unraisable_hook
        import logging

        logging.getLogger("asyncio").addFilter(_asyncio_filter)
        _hooks.update(excepthook=excepthook, threading=threading_hook, unraisable=unraisable_hook)
        if not _audit["added"]:
            _audit["added"] = True
            with guard("adding the audit hook"):  # another audit hook may refuse it
                sys.addaudithook(_audit_hook)


def uninstall() -> None:
    """Restore what was there before, without clobbering hooks installed after ours."""
    with _lock:
        if not _hooks:
            return
        for name, owner, attr in (
            ("excepthook", sys, "excepthook"),
            ("threading", threading, "excepthook"),
            ("unraisable", sys, "unraisablehook"),
        ):
            hook = _hooks[name]
            hook.active = False
            if getattr(owner, attr) is hook:
                setattr(owner, attr, hook.previous)
        import logging

        logging.getLogger("asyncio").removeFilter(_asyncio_filter)
        _hooks.clear()
