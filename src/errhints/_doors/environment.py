"""The environment door: ``ERRHINTS=1`` for the Python processes this one starts later.

With the variable set, every Python process started afterwards (subprocesses, spawn and
forkserver multiprocessing workers, torchrun ranks) activates errhints itself through the
start-up hook shipped in the wheel. ``uninstall()`` puts the variable back as it was.
"""

from __future__ import annotations

import os
import sys

from .._config import ENV_ENABLE, ForkSafeLock, env_flag

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

__all__ = [
    "NAME",
    "STARTUP_FILES",
    "activated_at_startup",
    "install",
    "mark_activated_at_startup",
    "startup_hook",
    "state",
    "uninstall",
]

#: The start-up hook files the wheel puts at the root of site-packages.
STARTUP_FILES = ("errhints-startup.pth", "errhints-startup.start", "_errhints_startup.py")
#: First Python that runs ``.start`` entry points instead of ``.pth`` import lines (PEP 829).
START_FILES_SINCE = (3, 15)

#: The door's one-word name, as ``errhints doctor`` shows it.
NAME = "environment"
_UNSET = object()
_lock = ForkSafeLock()
_previous: object = _UNSET  # what ERRHINTS was before we set it (None: absent)
_activated_at_startup = False


def mark_activated_at_startup() -> None:
    """Called by the start-up hook once ``ERRHINTS=1`` installed errhints in this process."""
    global _activated_at_startup
    _activated_at_startup = True


def activated_at_startup() -> bool:
    """Whether ``ERRHINTS=1`` (the start-up hook) installed errhints in this process."""
    return _activated_at_startup


def install() -> None:
    """Set ``ERRHINTS=1`` in ``os.environ``, remembering what was there."""
    global _previous
    with _lock:
        current = os.environ.get(ENV_ENABLE)
        if env_flag(ENV_ENABLE):
            return
        if _previous is _UNSET:
            _previous = current
        os.environ[ENV_ENABLE] = "1"


def uninstall() -> None:
    """Put ``ERRHINTS`` back as it was before :func:`install` (only if still ours)."""
    global _previous
    with _lock:
        if _previous is _UNSET:
            return
        if os.environ.get(ENV_ENABLE) == "1":
            if _previous is None:
                del os.environ[ENV_ENABLE]
            else:
                os.environ[ENV_ENABLE] = str(_previous)
        _previous = _UNSET


def state() -> str:
    """``"on"`` when errhints set ``ERRHINTS=1`` here, ``"inherited"`` when it came from the
    parent process, else ``"off"``."""
    if not env_flag(ENV_ENABLE):
        return "off"
    return "inherited" if _previous is _UNSET else "on"


def _site_dirs() -> list[str]:
    """Every site-packages directory this interpreter processes ``.pth`` files in."""
    dirs: list[str] = []
    import site

    try:
        dirs.extend(site.getsitepackages())
        if site.ENABLE_USER_SITE:
            dirs.append(site.getusersitepackages())
    except Exception:  # a broken or embedded interpreter
        pass
    seen: set[str] = set()
    unique = []
    for d in dirs:
        key = os.path.normcase(os.path.abspath(d))
        if key not in seen:
            seen.add(key)
            unique.append(d)
    return unique


def startup_hook(site_dirs: Iterable[str] | None = None) -> dict[str, Any]:
    """Where the start-up hook files are, and which of them this Python uses."""
    found: dict[str, list[str]] = {name: [] for name in STARTUP_FILES}
    for directory in _site_dirs() if site_dirs is None else site_dirs:
        for name in STARTUP_FILES:
            path = os.path.join(directory, name)
            if os.path.isfile(path):
                found[name].append(path)
    uses = ".start" if sys.version_info >= START_FILES_SINCE else ".pth"
    used_file = "errhints-startup.start" if uses == ".start" else "errhints-startup.pth"
    installed = bool(found[used_file]) and bool(found["_errhints_startup.py"])
    return {
        "installed": installed,
        "uses": used_file,
        "site_dirs": list(_site_dirs() if site_dirs is None else site_dirs),
        "files": found,
    }
