"""The multiprocessing door: explain exceptions that escape a multiprocessing ``Process``.

An exception escaping ``Process.run`` never reaches ``sys.excepthook``: multiprocessing's
``BaseProcess._bootstrap`` catches it and calls ``traceback.print_exc()``. errhints wraps
``_bootstrap`` so the process's ``run`` (a subclass's override too) adds the note before
that print. ``multiprocessing`` is never imported here (it costs ~20 ms): when it is not
imported yet, a meta-path finder waits for ``multiprocessing.process`` and patches it
right after it loads. Fork children inherit the patch; spawn and forkserver children are
fresh interpreters that install errhints themselves through ``ERRHINTS=1`` (the
environment door).
"""

from __future__ import annotations

from .._config import guard, print_unattached
from .patching import MethodPatch

TYPE_CHECKING = False  # typing and collections.abc stay out of install()'s import cost
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["NAME", "install", "state", "uninstall"]

#: The door's one-word name, as ``errhints doctor`` shows it.
NAME = "multiprocessing"


def _noting_run(run: Callable[[], Any], unattached: list[str]) -> Callable[[], Any]:
    """``run`` that adds the note to an exception leaving it, then lets it go on as before.

    A note that cannot be attached (a frozen exception) goes to ``unattached``, to be printed
    after multiprocessing's traceback.
    """

    def run_with_errhints() -> Any:
        try:
            return run()
        except BaseException as exc:
            if _PATCH.active:
                with guard("a multiprocessing child"):
                    from .._core.notes import attach, own_notes, traceback_prints_notes

                    outcome = attach(exc)
                    if outcome.note is not None and not outcome.attached:
                        unattached.append(outcome.note)
                    elif not traceback_prints_notes():  # Python 3.10: print_exc omits notes
                        unattached.extend(own_notes(exc))
            raise

    return run_with_errhints


def _make_bootstrap(original: Callable[..., Any]) -> Callable[..., Any]:
    def _bootstrap(self: Any, *args: Any, **kwargs: Any) -> Any:
        """Run the process with its ``run`` noting escaping exceptions (see the module doc)."""
        if not _PATCH.active:
            return original(self, *args, **kwargs)
        own = self.__dict__
        had_own = "run" in own
        previous = own.get("run")
        unattached: list[str] = []
        wrapper = _noting_run(self.run, unattached)
        own["run"] = wrapper
        try:
            return original(self, *args, **kwargs)
        finally:
            if own.get("run") is wrapper:
                if had_own:
                    own["run"] = previous
                else:
                    del own["run"]
            for note in unattached:
                print_unattached(note)

    _bootstrap.__wrapped__ = original  # type: ignore[attr-defined]
    return _bootstrap


_PATCH = MethodPatch("multiprocessing.process", "BaseProcess", "_bootstrap", _make_bootstrap)

install = _PATCH.install
uninstall = _PATCH.uninstall
state = _PATCH.state
