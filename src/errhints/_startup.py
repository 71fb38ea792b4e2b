"""What ``ERRHINTS=1`` runs at interpreter start-up: ``errhints.install()``, never failing.

The start-up files shipped in the wheel (``errhints-startup.pth`` for Python 3.10 to 3.14,
``errhints-startup.start`` for Python 3.15+, PEP 829) check the variable themselves and
only then reach this module, so a process without ``ERRHINTS=1`` never imports errhints.
"""

from __future__ import annotations

from ._config import guard

__all__ = ["activate"]


def activate() -> None:
    """Open every process-wide door, as ``ERRHINTS=1`` asks; never raises.

    Children keep ``ERRHINTS=1`` (it is already in the environment), so subprocesses and
    spawned multiprocessing workers activate too.
    """
    with guard("the ERRHINTS=1 start-up hook"):
        from ._doors import install_process_doors
        from ._doors.environment import mark_activated_at_startup

        install_process_doors()
        mark_activated_at_startup()
