"""Facts: what a failure says, read from a live exception or from text. Standard library only.

The error model (:mod:`.model`: ``ErrorFacts`` and ``Frame``, frozen of any reference to a
frame or exception) and the readers that produce it: :mod:`.live` from a live exception,
:mod:`.lines` (log-line recognition), :mod:`.traceback_text` (traceback text parsing, the
inverse of ``traceback.TracebackException.format``), :mod:`.scanner` (the streaming state
machine over logs), :mod:`.paths` (a printed path to a package-relative one) and
:mod:`.bodies` (error messages embedded in HTTP bodies). This layer imports nothing of
errhints but the leaves ``_config`` and ``_packages``. The names below load on first use,
so importing one reader does not import the others.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .live import facts_from_exception
    from .model import ErrorFacts, Frame
    from .scanner import Finding, scan_lines, scan_stream, scan_text
    from .traceback_text import parse_traceback

__all__ = [
    "ErrorFacts",
    "Finding",
    "Frame",
    "facts_from_exception",
    "parse_traceback",
    "scan_lines",
    "scan_stream",
    "scan_text",
]

_HOME = {
    "ErrorFacts": "model",
    "Frame": "model",
    "facts_from_exception": "live",
    "Finding": "scanner",
    "scan_lines": "scanner",
    "scan_stream": "scanner",
    "scan_text": "scanner",
    "parse_traceback": "traceback_text",
}


def __getattr__(name: str) -> object:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
