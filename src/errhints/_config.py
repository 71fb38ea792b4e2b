"""Quiet internal-failure reporting: silent unless ``ERRHINTS_DEBUG=1``.

errhints must never make a failure worse, so its own errors are swallowed; this is the one
place that says so, to stderr, when asked.
"""

from __future__ import annotations

import os
import sys

__all__ = ["enabled", "report"]


def enabled() -> bool:
    """Whether ``ERRHINTS_DEBUG=1`` asks for internal failures to be shown."""
    return os.environ.get("ERRHINTS_DEBUG", "") == "1"


def report(where: str, error: BaseException) -> None:
    """Tell stderr that errhints failed in ``where`` (only in debug mode); never raises."""
    if not enabled():
        return
    try:
        import traceback

        text = "".join(traceback.format_exception(error))
        sys.stderr.write(f"errhints: internal error in {where}; falling back.\n{text}")
    except BaseException:
        pass
