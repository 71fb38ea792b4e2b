"""What ``ERRHINTS=1`` runs at interpreter start-up: ``errhints.install()``, never failing.

The start-up files shipped in the wheel (``errhints-startup.pth`` for Python 3.11 to 3.14,
``errhints-startup.start`` for Python 3.15+, PEP 829) check the variable themselves and
only then reach this module, so a process without ``ERRHINTS=1`` never imports errhints.
"""

from __future__ import annotations

from . import _config

__all__ = ["ENV_VAR", "activate", "activated"]

ENV_VAR = "ERRHINTS"
_activated = False


def activate() -> None:
    """Install every door in this process, as ``ERRHINTS=1`` asks; never raises.

    Children keep ``ERRHINTS=1`` (it is already in the environment), so subprocesses and
    spawned multiprocessing workers activate too.
    """
    global _activated
    try:
        from ._api import install

        install()
        _activated = True
    except Exception as err:
        _config.report("the ERRHINTS=1 start-up hook", err)


def activated() -> bool:
    """Whether this process was activated by the start-up hook (``ERRHINTS=1``)."""
    return _activated
