"""The Ray door: a task or actor failure reaches the driver as ``RayTaskError`` with the note.

A Ray worker catches the exception of a task itself, formats its traceback into text and
wraps both in ``ray.exceptions.RayTaskError``; no hook of the worker ever sees the
exception. errhints wraps ``RayTaskError.__init__`` so the cause gets its note and the
traceback text (what the driver prints) ends with it. ``ray`` is never imported here: until
something imports ``ray.exceptions``, a meta-path finder waits for it. With ``ERRHINTS=1``
in a job's ``runtime_env`` or in the driver's environment before ``ray.init`` (what
``errhints.install()`` sets), every worker opens this door through the start-up hook.

A worker without errhints is covered on the driver's side: a ``RayTaskError`` whose own
stack explains nothing is explained from the remote traceback in its message
(:func:`errhints._core.notes.explain_exception`).
"""

from __future__ import annotations

import sys

from .._config import NOTE_PREFIX, ForkSafeLock, guard

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from importlib.abc import Loader
    from importlib.machinery import ModuleSpec
    from types import ModuleType
    from typing import Any

__all__ = ["NAME", "install", "state", "uninstall"]

#: The door's one-word name, as ``errhints doctor`` shows it.
NAME = "ray"
_TARGET = "ray.exceptions"

_lock = ForkSafeLock()
_patch: dict[str, Any] = {}  # "original": RayTaskError.__init__, "wrapper": ours, "cls"
_active = False


def _with_note(traceback_str: object, cause: object) -> object:
    """Note ``cause``; return ``traceback_str`` ending with errhints' notes on it."""
    if not (_active and isinstance(cause, BaseException) and isinstance(traceback_str, str)):
        return traceback_str
    with guard("a Ray task error"):
        from .._core.notes import attach, own_notes

        outcome = attach(cause)
        notes = own_notes(cause) if outcome.attached else []
        if outcome.note is not None and not outcome.attached:
            notes = [outcome.note]
        extra = [n for n in notes if n.partition("\n")[0] not in traceback_str]
        if extra:
            return traceback_str.rstrip("\n") + "\n" + "\n".join(extra) + "\n"
    return traceback_str


def _make_init(original: Callable[..., Any]) -> Callable[..., Any]:
    def __init__(
        self: Any, function_name: Any, traceback_str: Any, cause: Any, *args: Any, **kw: Any
    ) -> None:
        if NOTE_PREFIX not in str(traceback_str)[-100_000:]:
            traceback_str = _with_note(traceback_str, cause)
        original(self, function_name, traceback_str, cause, *args, **kw)

    __init__.__wrapped__ = original  # type: ignore[attr-defined]
    return __init__


def _patch_module(module: ModuleType) -> None:
    with _lock:
        if _patch:
            return
        cls = getattr(module, "RayTaskError", None)
        original = getattr(cls, "__dict__", {}).get("__init__")
        if cls is None or original is None:
            return
        wrapper = _make_init(original)
        cls.__init__ = wrapper
        _patch.update(original=original, wrapper=wrapper, cls=cls)


class _RayPatchingLoader:
    """Loads ``ray.exceptions`` with the real loader, then patches it and steps aside."""

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
        with guard("patching ray"):
            if _active:
                _patch_module(module)


class _RayFinder:
    """Waits for the first import of ``ray.exceptions``; ignores every other name."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != _TARGET:
            return None
        with guard("finding ray"):
            for finder in list(sys.meta_path):
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                        spec.loader = _RayPatchingLoader(spec.loader)  # type: ignore[assignment]
                    return spec
        return None


_finder = _RayFinder()


def _remove_finder() -> None:
    with _lock:
        while _finder in sys.meta_path:
            sys.meta_path.remove(_finder)


def install() -> None:
    """Wrap ``RayTaskError.__init__`` now, or as soon as ``ray.exceptions`` is imported."""
    global _active
    with _lock:
        _active = True
        if _patch:
            if _patch["cls"].__dict__.get("__init__") is _patch["wrapper"]:
                return
            _patch.clear()
        module = sys.modules.get(_TARGET)
        if module is not None:
            _patch_module(module)
        elif _finder not in sys.meta_path:
            sys.meta_path.insert(0, _finder)


def uninstall() -> None:
    """Unwrap (if still ours) and stop waiting for the import."""
    global _active
    with _lock:
        _active = False
        _remove_finder()
        if _patch:
            cls = _patch["cls"]
            if cls.__dict__.get("__init__") is _patch["wrapper"]:
                cls.__init__ = _patch["original"]
            _patch.clear()


def state() -> str:
    """``"patched"``, ``"waiting"`` (for ray to be imported) or ``"off"``."""
    with _lock:
        if not _active:
            return "off"
        if _patch and _patch["cls"].__dict__.get("__init__") is _patch["wrapper"]:
            return "patched"
        return "waiting" if _finder in sys.meta_path else "off"
