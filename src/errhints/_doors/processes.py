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

import sys

from .._config import ForkSafeLock, guard, print_unattached

TYPE_CHECKING = False  # typing and collections.abc stay out of install()'s import cost
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from importlib.abc import Loader
    from importlib.machinery import ModuleSpec
    from types import ModuleType
    from typing import Any

__all__ = ["NAME", "install", "state", "uninstall"]

#: The door's one-word name, as ``errhints doctor`` shows it.
NAME = "multiprocessing"
_TARGET = "multiprocessing.process"

_lock = ForkSafeLock()
_patch: dict[str, Any] = {}  # "original": the _bootstrap we wrapped, "wrapper": ours
_active = False  # our _bootstrap wrapper notes exceptions only while this is true


def _noting_run(run: Callable[[], Any], unattached: list[str]) -> Callable[[], Any]:
    """``run`` that adds the note to an exception leaving it, then lets it go on as before.

    A note that cannot be attached (a frozen exception) goes to ``unattached``, to be printed
    after multiprocessing's traceback.
    """

    def run_with_errhints() -> Any:
        try:
            return run()
        except BaseException as exc:
            if _active:
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
        if not _active:
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


def _patch_module(module: ModuleType) -> None:
    """Wrap ``BaseProcess._bootstrap`` of a loaded ``multiprocessing.process``."""
    with _lock:
        if _patch:
            return
        cls = getattr(module, "BaseProcess", None)
        original = getattr(cls, "__dict__", {}).get("_bootstrap")
        if cls is None or original is None:
            return
        wrapper = _make_bootstrap(original)
        cls._bootstrap = wrapper
        _patch.update(original=original, wrapper=wrapper, cls=cls)


class _PatchingLoader:
    """Loads the module with the real loader, then patches it and steps out of the way."""

    def __init__(self, loader: Loader) -> None:
        self.loader = loader

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        create = getattr(self.loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        _remove_finder()
        with guard("patching multiprocessing"):
            if _active:
                _patch_module(module)


class _Finder:
    """Waits for the first import of ``multiprocessing.process``; ignores every other name."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        if fullname != _TARGET:
            return None
        with guard("finding multiprocessing"):
            for finder in list(sys.meta_path):
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                        spec.loader = _PatchingLoader(spec.loader)  # type: ignore[assignment]
                    return spec
        return None


_finder = _Finder()


def _remove_finder() -> None:
    with _lock:
        while _finder in sys.meta_path:
            sys.meta_path.remove(_finder)


def install() -> None:
    """Wrap ``BaseProcess._bootstrap`` now, or as soon as multiprocessing is imported."""
    global _active
    with _lock:
        _active = True
        if _patch:
            cls = _patch["cls"]
            if cls.__dict__.get("_bootstrap") is not _patch["wrapper"]:
                _patch.clear()  # someone replaced it (or the module was reloaded): wrap anew
            else:
                return
        module = sys.modules.get(_TARGET)
        if module is not None:
            _patch_module(module)
        elif _finder not in sys.meta_path:
            sys.meta_path.insert(0, _finder)


def uninstall() -> None:
    """Unwrap ``_bootstrap`` (if still ours) and stop waiting for the import."""
    global _active
    with _lock:
        _active = False
        _remove_finder()
        if _patch:
            cls = _patch["cls"]
            if cls.__dict__.get("_bootstrap") is _patch["wrapper"]:
                cls._bootstrap = _patch["original"]
            _patch.clear()


def state() -> str:
    """``"patched"``, ``"waiting"`` (for multiprocessing to be imported) or ``"off"``."""
    with _lock:
        if not _active:
            return "off"
        if _patch and _patch["cls"].__dict__.get("_bootstrap") is _patch["wrapper"]:
            return "patched"
        return "waiting" if _finder in sys.meta_path else "off"
