"""The logging door: explain failures that reach the logs, error records with a traceback.

SGLang's scheduler logs ``logger.error(f"Scheduler hit an exception: {traceback.format_exc()}")``:
the traceback is only text inside the message. errhints wraps the log record factory, so it
sees every record at creation, whatever handlers and formatters are configured now or later
(``basicConfig``, ``dictConfig``):

* a record at ERROR or above whose message holds a traceback gets a record class whose
  ``getMessage()`` appends the explanation (once, computed lazily, cached per record);
* a record at ERROR or above with ``exc_info`` gets the PEP 678 note on the exception
  itself, so ``formatException`` prints it under the traceback.

Ordinary records cost one level comparison. Nothing here ever raises into logging: any
internal error leaves the plain message.
"""

from __future__ import annotations

import copyreg
import logging
import sys
import threading
import weakref

from .._config import ForkSafeLock, guard

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["NAME", "install", "state", "uninstall"]

#: The door's one-word name, as ``errhints doctor`` shows it.
NAME = "logging"

_MARK = "Traceback (most recent call last)"
_ERROR = logging.ERROR


class _Installed:
    """Our factory, the one it wraps, and its on/off switch (off = passes records through)."""

    __slots__ = ("enabled", "factory", "previous")

    def __init__(self, previous: Callable[..., logging.LogRecord]) -> None:
        self.previous = previous
        self.enabled = True
        self.factory = _make_factory(self)


_lock = ForkSafeLock(reentrant=False)
_current: _Installed | None = None

_local = threading.local()  # .busy: this thread is explaining (our own logging stays plain)
#: Per-record cache of (message, explanation), outside the record's ``__dict__`` so that
#: formatters which dump every record attribute (JSON loggers) see nothing new.
_hints: weakref.WeakKeyDictionary[logging.LogRecord, tuple[str, str]] = weakref.WeakKeyDictionary()
_classes: dict[type, type] = {}


def _make_factory(state: _Installed) -> Callable[..., logging.LogRecord]:
    previous = state.previous

    def errhints_record_factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        if record.levelno >= _ERROR and state.enabled:
            _prepare(record)
        return record

    return errhints_record_factory


def install() -> None:
    """Wrap the current log record factory; idempotent.

    Installing again after someone wrapped ours switches the buried copy off and wraps
    anew, so a record is never handled twice.
    """
    global _current
    with _lock:
        current = logging.getLogRecordFactory()
        if _current is not None:
            if current is _current.factory and _current.enabled:
                return
            _current.enabled = False
        _current = _Installed(current)
        logging.setLogRecordFactory(_current.factory)


def uninstall() -> None:
    """Restore the previous factory if ours is still the installed one; otherwise switch
    ours off in place (someone wrapped it, and unwrapping would drop their factory)."""
    global _current
    with _lock:
        if _current is None:
            return
        _current.enabled = False
        if logging.getLogRecordFactory() is _current.factory:
            logging.setLogRecordFactory(_current.previous)
        _current = None


def _on() -> bool:
    return _current is not None and _current.enabled


def state() -> str:
    """``"on"`` while our record factory is installed and enabled, else ``"off"``."""
    return "on" if _on() else "off"


def _prepare(record: logging.LogRecord) -> None:
    """An error record: note its exception, or mark it for an explained message."""
    if getattr(_local, "busy", False):
        return
    with guard("preparing a log record"):
        exc_info = record.exc_info
        if exc_info:
            exc = exc_info[1] if isinstance(exc_info, tuple) and len(exc_info) == 3 else None
            if isinstance(exc, BaseException):
                _local.busy = True
                try:
                    from .._core.notes import attach

                    attach(exc)
                    if sys.version_info < (3, 11):
                        show_notes_on_310(record, exc)
                finally:
                    _local.busy = False
                return
        if _carries_traceback(record):
            record.__class__ = _hinted_class(type(record))


_noted_classes: dict[type, type] = {}


def show_notes_on_310(record: logging.LogRecord, exc: BaseException) -> None:
    """Python 3.10's ``traceback`` prints no ``__notes__`` (unless the ``exceptiongroup``
    backport patched it): give the record a class whose ``exc_text``, once a formatter sets
    it to the formatted traceback, ends with errhints' notes."""
    from .._core.notes import own_notes, traceback_prints_notes

    if traceback_prints_notes() or not own_notes(exc):
        return
    base = type(record)
    cls = _noted_classes.get(base)
    if cls is None:

        def get(self: logging.LogRecord) -> Any:
            return self.__dict__.get("exc_text")

        def set_(self: logging.LogRecord, value: Any) -> None:
            if isinstance(value, str) and value:
                info = self.__dict__.get("exc_info")
                exc = info[1] if isinstance(info, tuple) and len(info) == 3 else None
                if isinstance(exc, BaseException):
                    with guard("adding notes to a log record"):
                        extra = [n for n in own_notes(exc) if n not in value]
                        if extra:
                            value = value.rstrip("\n") + "\n" + "\n".join(extra)
            self.__dict__["exc_text"] = value

        def __reduce_ex__(self: logging.LogRecord, protocol: Any) -> tuple[Any, ...]:
            return (copyreg._reconstructor, (base, object, None), dict(self.__dict__))  # type: ignore[attr-defined]

        cls = type(
            base.__name__,
            (base,),
            {
                "exc_text": property(get, set_),
                "__reduce_ex__": __reduce_ex__,
                "__module__": base.__module__,
                "__qualname__": base.__qualname__,
                "__doc__": base.__doc__,
            },
        )
        _noted_classes[base] = cls
    record.__class__ = cls


def _carries_traceback(record: logging.LogRecord) -> bool:
    """Whether the message or one of its %-args holds traceback text (no formatting done)."""
    msg = record.msg
    if isinstance(msg, str) and _MARK in msg:
        return True
    args = record.args
    if not args:
        return False
    values = args.values() if isinstance(args, dict) else args
    return any(isinstance(v, str) and _MARK in v for v in values)


def _hinted_class(base: type[logging.LogRecord]) -> type[logging.LogRecord]:
    """A subclass of the record's own class whose ``getMessage`` adds the explanation.

    Copies and pickles of its records are plain records of ``base`` (``QueueHandler``
    copies a record after formatting it into ``msg``, so the explanation is not repeated).
    """
    cls = _classes.get(base)
    if cls is not None:
        return cls
    base_get_message = base.getMessage

    def getMessage(self: logging.LogRecord) -> str:
        return _with_hint(self, base_get_message(self))

    def __reduce_ex__(self: logging.LogRecord, protocol: Any) -> tuple[Any, ...]:
        return (copyreg._reconstructor, (base, object, None), dict(self.__dict__))  # type: ignore[attr-defined]

    cls = type(
        base.__name__,
        (base,),
        {
            "getMessage": getMessage,
            "__reduce_ex__": __reduce_ex__,
            "__module__": base.__module__,
            "__qualname__": base.__qualname__,
            "__doc__": base.__doc__,
        },
    )
    _classes[base] = cls
    return cls


def _with_hint(record: logging.LogRecord, message: str) -> str:
    """``message`` plus the explanation of the tracebacks in it, when the catalog knows one."""
    if getattr(_local, "busy", False) or not _on():
        return message
    with guard("explaining a log message"):
        cached = _hints.get(record)
        if cached is not None and (cached[0] is message or cached[0] == message):
            hint = cached[1]
        else:
            hint = _explain_text(message) if _MARK in message else ""
            _hints[record] = (message, hint)
        if hint and hint not in message:
            return message + ("" if message.endswith("\n") else "\n") + hint
    return message


def _explain_text(message: str) -> str:
    """Scan the message for failures and render a note for each one the catalog explains."""
    _local.busy = True
    try:
        from .._core.notes import note_text
        from .._core.pipeline import explain_text

        notes: list[str] = []
        for explained in explain_text(message):
            if explained.matches:
                note = note_text(explained.matches)
                if note not in notes:
                    notes.append(note)
        return "\n".join(notes)
    finally:
        _local.busy = False
