"""Wrap one method of a class whose module may not be imported yet, and unwrap it again.

What the multiprocessing and Ray doors share: importing ``multiprocessing`` or ``ray`` to
patch them would cost every process that never uses them, so a :class:`MethodPatch` waits
for the module's first import (a meta-path finder that steps aside once it has seen it, like
wrapt's ``when_imported``), wraps the method right after the module ran, and restores it on
:meth:`~MethodPatch.uninstall` while the wrapper is still the one installed.
"""

from __future__ import annotations

import sys

from .._config import ForkSafeLock, guard

TYPE_CHECKING = False  # typing stays out of install()'s import cost
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from importlib.abc import Loader
    from importlib.machinery import ModuleSpec
    from types import ModuleType
    from typing import Any

__all__ = ["MethodPatch"]


class MethodPatch:
    """``module.cls.attr`` wrapped by ``make(original)``, now or when ``module`` is imported."""

    def __init__(self, module: str, cls: str, attr: str, make: Callable[[Any], Any]) -> None:
        self.module, self.cls, self.attr, self.make = module, cls, attr, make
        self._lock = ForkSafeLock()
        self._patch: dict[str, Any] = {}  # "cls", "original", "wrapper"
        self._finder = _Finder(self)
        #: Whether the wrapper acts; off after uninstall() even if someone wrapped ours since.
        self.active = False

    def _ours(self) -> bool:
        return bool(self._patch) and (
            self._patch["cls"].__dict__.get(self.attr) is self._patch["wrapper"]
        )

    def patch(self, module: ModuleType) -> None:
        """Wrap the method of a loaded ``module`` (once)."""
        with self._lock:
            if self._patch:
                return
            cls = getattr(module, self.cls, None)
            original = getattr(cls, "__dict__", {}).get(self.attr)
            if cls is None or original is None:
                return
            wrapper = self.make(original)
            setattr(cls, self.attr, wrapper)
            self._patch.update(cls=cls, original=original, wrapper=wrapper)

    def install(self) -> None:
        """Wrap now if the module is loaded, else wait for its import."""
        with self._lock:
            self.active = True
            if self._patch:
                if self._ours():
                    return
                self._patch.clear()  # replaced by someone else, or the module reloaded: anew
            module = sys.modules.get(self.module)
            if module is not None:
                self.patch(module)
            elif self._finder not in sys.meta_path:
                sys.meta_path.insert(0, self._finder)

    def uninstall(self) -> None:
        """Stop waiting; put the original back while our wrapper is still the one there."""
        with self._lock:
            self.active = False
            self.stop_waiting()
            if self._ours():
                setattr(self._patch["cls"], self.attr, self._patch["original"])
            self._patch.clear()

    def stop_waiting(self) -> None:
        with self._lock:
            while self._finder in sys.meta_path:
                sys.meta_path.remove(self._finder)

    def state(self) -> str:
        """``"patched"``, ``"waiting"`` (for the import) or ``"off"``."""
        with self._lock:
            if not self.active:
                return "off"
            if self._ours():
                return "patched"
            return "waiting" if self._finder in sys.meta_path else "off"


class _PatchingLoader:
    """Loads the module with the real loader, then patches it and steps out of the way."""

    def __init__(self, loader: Loader, owner: MethodPatch) -> None:
        self.loader = loader
        self.owner = owner

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        create = getattr(self.loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        self.owner.stop_waiting()
        with guard(f"patching {self.owner.module}"):
            self.owner.patch(module)


class _Finder:
    """Waits for the first import of one module; ignores every other name."""

    def __init__(self, owner: MethodPatch) -> None:
        self.owner = owner

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        if fullname != self.owner.module:
            return None
        with guard(f"finding {fullname}"):
            for finder in list(sys.meta_path):
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                        spec.loader = _PatchingLoader(spec.loader, self.owner)  # type: ignore[assignment]
                    return spec
        return None
