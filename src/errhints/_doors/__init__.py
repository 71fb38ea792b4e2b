"""Doors: the ways a failure reaches errhints, one module each, all with one contract.

Every door module has ``NAME`` (one word, what ``errhints doctor`` shows), ``install()``,
``uninstall()`` and ``state()`` (a word: ``"on"``, ``"off"``, or a door's own such as
``"waiting"``). A door notes exceptions through :func:`errhints._core.notes.attach` or
explains text through :mod:`errhints._core.pipeline`, and never calls back into the public
API. Door modules are imported only when used: :func:`states` reports an unimported door as
``"off"`` without importing it.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType

__all__ = ["DOORS", "door", "install_process_doors", "states", "uninstall_process_doors"]

#: Door name -> module below this package, in the order ``errhints doctor`` lists them.
DOORS = {
    "hooks": "hooks",  # sys.excepthook, threading, unraisable, asyncio
    "logging": "log_records",
    "multiprocessing": "processes",
    "ray": "ray_tasks",  # RayTaskError built in a Ray worker
    "environment": "environment",  # ERRHINTS=1 for child processes
    "annotate": "annotate",
    "ipython": "ipython",
    "pytest": "pytest_plugin",
}


def door(name: str) -> ModuleType:
    """The door module called ``name`` (imported now if it was not yet)."""
    import importlib

    return importlib.import_module(f"{__name__}.{DOORS[name]}")


def states() -> dict[str, str]:
    """Each door's state in this process; a door never imported is ``"off"``."""
    out = {}
    for name, module in DOORS.items():
        loaded = sys.modules.get(f"{__name__}.{module}")
        try:
            out[name] = loaded.state() if loaded is not None else "off"
        except Exception:
            out[name] = "unknown"
    return out


def install_process_doors(*, logging: bool = True, children: bool = True) -> None:
    """Open the doors that cover a whole process: what ``errhints.install()`` does."""
    door("hooks").install()
    door("multiprocessing").install()
    door("ray").install()
    environment = door("environment")
    if children:
        environment.install()
    else:
        environment.uninstall()
    if logging:
        door("logging").install()


def uninstall_process_doors() -> None:
    """Close what :func:`install_process_doors` opened, restoring what was there before."""
    for name in ("hooks", "multiprocessing", "ray", "environment", "logging"):
        module = sys.modules.get(f"{__name__}.{DOORS[name]}")
        if module is not None:
            module.uninstall()
