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

from .._config import NOTE_PREFIX, guard
from .patching import MethodPatch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["NAME", "install", "state", "uninstall"]

#: The door's one-word name, as ``errhints doctor`` shows it.
NAME = "ray"


def _with_note(traceback_str: object, cause: object) -> object:
    """Note ``cause``; return ``traceback_str`` ending with errhints' notes on it."""
    if not (_PATCH.active and isinstance(cause, BaseException) and isinstance(traceback_str, str)):
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


_PATCH = MethodPatch("ray.exceptions", "RayTaskError", "__init__", _make_init)

install = _PATCH.install
uninstall = _PATCH.uninstall
state = _PATCH.state
