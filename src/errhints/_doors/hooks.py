"""Interpreter hooks: ``sys.excepthook``, ``threading.excepthook``, ``sys.unraisablehook``, asyncio.

Each hook adds the note, then hands the very same exception to the hook that was there
before. Installing twice is a no-op. Uninstalling restores the previous hook only while ours
is still the one installed; if someone installed a hook after us, ours stays in their chain
but passes everything through untouched.
"""

from __future__ import annotations

import sys
import threading

from .._config import ForkSafeLock, guard, print_unattached
from .._core.notes import Outcome, attach

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


class _ThreadingHook(_Hook):
    def __call__(self, args: threading.ExceptHookArgs) -> None:
        outcome = _safe_attach(args.exc_value) if self.active else None
        self.previous(args)
        _print_fallback(outcome)


class _UnraisableHook(_Hook):
    def __call__(self, unraisable: Any) -> None:
        outcome = _safe_attach(getattr(unraisable, "exc_value", None)) if self.active else None
        self.previous(unraisable)
        if outcome is not None and self.previous is sys.__unraisablehook__:
            # The built-in hook (3.11-3.13), called from Python, does not print notes added
            # after the exception was raised; print ours after its report.
            outcome = Outcome(outcome.note, attached=False)
        _print_fallback(outcome)


def _asyncio_filter(record: logging.LogRecord) -> bool:
    """Note the exception of an asyncio error record ("Task exception was never retrieved")."""
    with guard("the asyncio log filter"):
        exc_info = record.exc_info
        if exc_info and isinstance(exc_info, tuple) and len(exc_info) == 3:
            _safe_attach(exc_info[1])
    return True


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
