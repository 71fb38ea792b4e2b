"""Settings said once: environment variables, note prefix, verbosity, and the shared guards.

A leaf of the package: it imports only ``os`` and ``sys`` (``threading`` when a lock is
made), so every layer and the start-up hook may use it without cost. What lives here:

- the names of errhints' environment variables and how their values are read;
- the prefix every note starts with, and the verbosity values;
- the exceptions that are control flow, never failures, and always pass through untouched;
- :class:`ForkSafeLock`, a lock that a forked child gets fresh;
- :class:`guard` and :func:`report`: errhints' own failures are swallowed and reported only in
  debug mode (and counted, so tests can fail on them);
- :func:`print_unattached`: the one way to show a note that could not be attached.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing stays out of the import cost of errhints
if TYPE_CHECKING:
    from types import TracebackType
    from typing import Literal

    Verbosity = Literal["short", "full"]
else:
    Verbosity = str  # the runtime stand-in; the type checker sees the Literal

__all__ = [
    "ENV_CACHE_DIR",
    "ENV_CATALOG_PATH",
    "ENV_DEBUG",
    "ENV_ENABLE",
    "ENV_SITEINDEX_DIR",
    "ENV_VERBOSITY",
    "FALSE_VALUES",
    "NOTE_PREFIX",
    "PASS_THROUGH",
    "TRUE_VALUES",
    "VERBOSITIES",
    "ForkSafeLock",
    "check_verbosity",
    "debug_enabled",
    "env_flag",
    "guard",
    "internal_errors",
    "print_unattached",
    "report",
    "verbosity_from_env",
]

#: ``ERRHINTS=1`` turns errhints on in every Python process that sees it (the start-up hook).
ENV_ENABLE = "ERRHINTS"
#: ``ERRHINTS_DEBUG=1`` shows errhints' own internal failures on stderr.
ENV_DEBUG = "ERRHINTS_DEBUG"
#: ``ERRHINTS_VERBOSITY=short|full``: the default form of notes.
ENV_VERBOSITY = "ERRHINTS_VERBOSITY"
#: Extra catalog directories, separated by ``os.pathsep``.
ENV_CATALOG_PATH = "ERRHINTS_CATALOG_PATH"
#: Where maintainer commands cache downloaded releases (``off``: a temporary directory).
ENV_CACHE_DIR = "ERRHINTS_CACHE_DIR"
#: Another site index directory than the packaged one (tests, a freshly built index).
ENV_SITEINDEX_DIR = "ERRHINTS_SITEINDEX_DIR"

#: Every note's first line starts with this; it is how each door recognises its own notes.
NOTE_PREFIX = "errhints:"
VERBOSITIES = ("short", "full")

#: Control flow, not failures: errhints never adds a note to these.
PASS_THROUGH: tuple[type[BaseException], ...] = (
    KeyboardInterrupt,
    SystemExit,
    GeneratorExit,
    StopIteration,
    StopAsyncIteration,
)

#: The spellings of on and off that every errhints variable accepts (any case). The start-up
#: files spell them out too (they import nothing); tests/doors/test_startup.py checks both.
TRUE_VALUES = ("1", "true", "yes", "on", "y", "t")
FALSE_VALUES = ("", "0", "false", "no", "off", "n", "f")
_TRUE = frozenset(TRUE_VALUES)
_FALSE = frozenset(FALSE_VALUES)
_warned: set[str] = set()


def _warn_once(name: str, message: str) -> None:
    if name in _warned:
        return
    startup = sys.modules.get("_errhints_startup")  # the start-up hook warns about ERRHINTS
    if name == ENV_ENABLE and getattr(startup, "_warned", None):
        return
    _warned.add(name)
    try:  # noqa: SIM105 - contextlib would cost import time
        sys.stderr.write(f"{NOTE_PREFIX} {message}\n")
    except Exception:
        pass


def env_flag(name: str) -> bool:
    """Whether the environment variable ``name`` is on: ``1``, ``true``, ``yes``, ``on`` (any case).

    An unknown value counts as off and is reported once on stderr.
    """
    value = os.environ.get(name, "").strip().lower()
    if value in _TRUE:
        return True
    if value not in _FALSE:
        _warn_once(name, f"ignoring {name}={os.environ.get(name)!r}: use 1/true/yes/on or 0/false")
    return False


def check_verbosity(verbosity: object) -> None:
    """Raise ``ValueError`` unless ``verbosity`` is ``None``, ``"short"`` or ``"full"``."""
    if verbosity is not None and verbosity not in VERBOSITIES:
        raise ValueError(f"verbosity must be 'short' or 'full', not {verbosity!r}")


def verbosity_from_env() -> Verbosity:
    """``ERRHINTS_VERBOSITY``, or ``"short"``; an unknown value is reported once."""
    value = os.environ.get(ENV_VERBOSITY, "").strip().lower()
    if value == "full":
        return "full"
    if value not in ("", "short"):
        _warn_once(ENV_VERBOSITY, f"ignoring {ENV_VERBOSITY}={value!r}: use 'short' or 'full'")
    return "short"


class ForkSafeLock:
    """A lock (re-entrant by default) that a forked child gets fresh and unheld.

    A child forked while another thread held the lock would otherwise inherit it held
    forever. Use it as a context manager.
    """

    __slots__ = ("_factory", "_lock")

    def __init__(self, *, reentrant: bool = True) -> None:
        import threading  # not at module level: ``import errhints`` must stay cheap

        self._factory = threading.RLock if reentrant else threading.Lock
        self._lock = self._factory()
        if hasattr(os, "register_at_fork"):  # not on Windows
            os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._lock = self._factory()

    def __enter__(self) -> bool:
        return self._lock.__enter__()

    def __exit__(
        self,
        tp: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._lock.__exit__(tp, exc, tb)


#: errhints' own failures seen in this process: (where, error); bounded, newest last.
internal_errors: list[tuple[str, BaseException]] = []
_MAX_KEPT = 32


def debug_enabled() -> bool:
    """Whether ``ERRHINTS_DEBUG=1`` asks for internal failures to be shown."""
    return env_flag(ENV_DEBUG)


def report(where: str, error: BaseException) -> None:
    """Record that errhints failed in ``where``; tell stderr only in debug mode. Never raises."""
    try:
        if len(internal_errors) >= _MAX_KEPT:
            del internal_errors[0]
        internal_errors.append((where, error))
        if not debug_enabled():
            return
        import traceback

        text = "".join(traceback.format_exception(error))
        sys.stderr.write(f"{NOTE_PREFIX} internal error in {where}; falling back.\n{text}")
    except BaseException:
        pass


class guard:
    """``with guard("where"):`` swallows a failure of errhints' own code and reports it.

    The one place that decides what an internal failure does: nothing the user sees,
    unless ``ERRHINTS_DEBUG=1``. ``KeyboardInterrupt`` and ``SystemExit`` are the user's,
    not failures of errhints, and pass through.
    """

    __slots__ = ("where",)

    def __init__(self, where: str) -> None:
        self.where = where

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        tp: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        if exc is None or not isinstance(exc, Exception):
            return False
        report(self.where, exc)
        return True


def print_unattached(note: str | None) -> None:
    """Show a note that could not be attached (a frozen exception) on stderr; never raises."""
    if not note:
        return
    with guard("printing a note"):
        sys.stderr.write(note + "\n")
        sys.stderr.flush()
