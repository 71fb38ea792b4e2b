"""IPython and Jupyter: ``%load_ext errhints`` explains the errors of cells.

IPython catches a cell's exception itself and never calls ``sys.excepthook``. The
extension wraps the shell's ``showtraceback`` (the one place every traceback display goes
through: plain cells, ``%run``, ipykernel, and custom exception handlers that delegate to
it) so the note is on the exception before it is formatted. It does not claim
``set_custom_exc``, which holds a single handler: whatever handler another extension has
set, before or after, keeps working. A handler that prints its own output instead of
calling ``showtraceback`` still gets the explanation, printed after the cell by a
``post_run_cell`` callback. Loading also runs ``errhints.install()`` (threads, logging,
subprocesses of the kernel) unless it was already on; unloading undoes exactly what
loading did. IPython itself is never imported here.
"""

from __future__ import annotations

import sys

# Imported by ``import errhints``: nothing here may cost import time (no typing, no IPython).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["load_ipython_extension", "loaded", "unload_ipython_extension"]

_loaded: dict[int, _Extension] = {}  # by id(shell); IPython loads extensions on its main thread


class _Extension:
    """The state of the extension in one shell: what it wrapped, so unloading can restore it."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.active = True
        own = vars(shell)
        self.had_own = "showtraceback" in own
        self.own_previous = own.get("showtraceback")
        self.previous = shell.showtraceback
        self.last: BaseException | None = None
        self.installed_errhints = False

        def showtraceback(exc_tuple: Any = None, *args: Any, **kwargs: Any) -> Any:
            outcome = self._note(exc_tuple) if self.active else None
            result = self.previous(exc_tuple, *args, **kwargs)
            if outcome is not None and outcome.note is not None and not outcome.attached:
                self._print(outcome.note)
            return result

        self.showtraceback = showtraceback
        self.post_run_cell = self._post_run_cell

    def _note(self, exc_tuple: Any) -> Any:
        """Attach the note to the exception about to be shown; never raises."""
        try:
            if exc_tuple is not None:
                exc = exc_tuple[1]
            else:
                exc = sys.exc_info()[1]
                if exc is None:
                    exc = getattr(sys, "last_value", None)
            if not isinstance(exc, BaseException):
                return None
            self.last = exc
            from .._core.notes import attach

            return attach(exc)
        except Exception as err:
            from .. import _config as _debug

            _debug.report("the IPython extension", err)
            return None

    def _post_run_cell(self, result: Any) -> None:
        """A cell error no traceback display saw (a custom handler printed its own): explain it."""
        if not self.active:
            return
        try:
            exc = getattr(result, "error_in_exec", None)
            if not isinstance(exc, BaseException) or exc is self.last:
                return
            self.last = exc
            from .._core.notes import attach, has_note

            if has_note(exc):
                return
            outcome = attach(exc)
            if outcome.note is not None:
                self._print(outcome.note)
        except Exception as err:
            from .. import _config as _debug

            _debug.report("the IPython extension", err)

    @staticmethod
    def _print(note: str) -> None:
        try:  # noqa: SIM105 - contextlib would cost import time
            print(note, file=sys.stderr)
        except Exception:
            pass

    def load(self) -> None:
        from .. import _api
        from . import hooks as _hooks

        self.shell.showtraceback = self.showtraceback
        self.shell.events.register("post_run_cell", self.post_run_cell)
        if not _hooks.installed():
            _api.install()
            self.installed_errhints = True

    def unload(self) -> None:
        self.active = False
        shell = self.shell
        own = vars(shell)
        if own.get("showtraceback") is self.showtraceback:
            if self.had_own:
                shell.showtraceback = self.own_previous
            else:
                del own["showtraceback"]
        try:  # noqa: SIM105
            shell.events.unregister("post_run_cell", self.post_run_cell)
        except ValueError:
            pass
        if self.installed_errhints:
            from .. import _api

            _api.uninstall()


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext errhints``: explain cell errors in this shell (and ``install()``); idempotent."""
    if id(ipython) in _loaded:
        return
    extension = _Extension(ipython)
    extension.load()
    _loaded[id(ipython)] = extension


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext errhints``: restore the shell as it was before loading."""
    extension = _loaded.pop(id(ipython), None)
    if extension is not None:
        extension.unload()


def loaded() -> bool:
    """Whether the extension is loaded in some shell of this process."""
    return bool(_loaded)
