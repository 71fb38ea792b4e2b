"""The IPython door: ``%load_ext errhints`` explains the errors of cells (IPython, Jupyter).

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

from .._config import guard, print_unattached

# Imported by ``import errhints``: nothing here may cost import time (no typing, no IPython).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "NAME",
    "install",
    "load_ipython_extension",
    "state",
    "uninstall",
    "unload_ipython_extension",
]

#: The door's one-word name, as ``errhints doctor`` shows it.
NAME = "ipython"

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
            if outcome is not None and not outcome.attached:
                print_unattached(outcome.note)
            return result

        self.showtraceback = showtraceback
        self.post_run_cell = self._post_run_cell

    def _note(self, exc_tuple: Any) -> Any:
        """Attach the note to the exception about to be shown; never raises."""
        with guard("the IPython extension"):
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
        return None

    def _post_run_cell(self, result: Any) -> None:
        """A cell error no traceback display saw (a custom handler printed its own): explain it."""
        if not self.active:
            return
        with guard("the IPython extension"):
            exc = getattr(result, "error_in_exec", None)
            if not isinstance(exc, BaseException) or exc is self.last:
                return
            self.last = exc
            from .._core.notes import attach, has_note

            if has_note(exc):
                return
            outcome = attach(exc)
            print_unattached(outcome.note)

    def load(self) -> None:
        from . import door, install_process_doors

        self.shell.showtraceback = self.showtraceback
        self.shell.events.register("post_run_cell", self.post_run_cell)
        if door("hooks").state() != "on":
            install_process_doors()
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
            from . import uninstall_process_doors

            uninstall_process_doors()


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


def state() -> str:
    """``"on"`` while the extension is loaded in some shell of this process, else ``"off"``."""
    return "on" if _loaded else "off"


def install() -> None:
    """Load the extension into the running IPython shell, if there is one."""
    shell = _running_shell()
    if shell is not None:
        load_ipython_extension(shell)


def uninstall() -> None:
    """Unload the extension from every shell it was loaded into."""
    for extension in list(_loaded.values()):
        unload_ipython_extension(extension.shell)


def _running_shell() -> Any:
    """The running IPython shell, found without importing IPython; ``None`` outside one."""
    module = sys.modules.get("IPython")
    get = getattr(module, "get_ipython", None) if module is not None else None
    return get() if get is not None else None
