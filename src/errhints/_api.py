"""The public functions. Cheap to import: everything heavy is imported on first use."""

from __future__ import annotations

import os

# ``typing``, ``contextlib`` and ``collections.abc`` would triple the cost of ``import
# errhints`` in a fresh interpreter, so they are only imported for the type checker.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from types import TracebackType
    from typing import Any, TypeVar, overload

    from ._config import Verbosity
    from ._core.match import Match

    F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["annotate", "annotating", "explain", "install", "uninstall"]


def explain(
    exc: BaseException, *, catalog_paths: Iterable[str | os.PathLike[str]] = ()
) -> list[Match]:
    """The catalog entries that explain ``exc`` (and its chain), best first; ``[]`` if none.

    Each match has ``id``, ``title``, ``package``, ``confidence`` (``"exact"``, ``"strong"``
    or ``"weak"``) and ``entry``. ``catalog_paths`` adds user catalog directories to the
    packaged catalog and ``ERRHINTS_CATALOG_PATH``.
    """
    if not isinstance(exc, BaseException):
        raise TypeError(f"explain() takes an exception, not {type(exc).__name__}")
    from ._core.notes import explain_exception

    return explain_exception(exc, tuple(os.fspath(p) for p in catalog_paths))


def install(
    *, verbosity: Verbosity | None = None, logging: bool = True, children: bool = True
) -> None:
    """Explain uncaught exceptions everywhere in this process; idempotent.

    Hooks ``sys.excepthook``, ``threading.excepthook``, ``sys.unraisablehook`` and asyncio's
    unretrieved-task errors; with ``logging`` also error records that carry a traceback.
    Failures of multiprocessing children are explained too. With ``children`` (the default),
    ``ERRHINTS=1`` is set in ``os.environ`` so Python processes started afterwards activate
    errhints themselves (through the start-up hook of the installed wheel).
    """
    from ._config import check_verbosity

    check_verbosity(verbosity)
    from ._core.notes import set_default_verbosity
    from ._doors import install_process_doors

    if verbosity is not None:
        set_default_verbosity(verbosity)
    install_process_doors(logging=logging, children=children)


def uninstall() -> None:
    """Undo ``install()``: restore the hooks that were there before (when still ours)."""
    from ._doors import uninstall_process_doors

    uninstall_process_doors()


if TYPE_CHECKING:

    @overload
    def annotate(func: F, /) -> F: ...
    @overload
    def annotate(*, verbosity: Verbosity | None = None) -> Callable[[F], F]: ...


def annotate(func: Any = None, /, *, verbosity: Verbosity | None = None) -> Any:
    """Decorate a function, method, coroutine or generator so its failures carry a note.

    Use bare (``@errhints.annotate``) or with options (``@errhints.annotate(verbosity="full")``).
    The exception that leaves the call is the very same object, with one note added.
    """
    from ._config import check_verbosity

    check_verbosity(verbosity)
    from ._doors.annotate import make_decorator

    decorator = make_decorator(verbosity)
    if func is None:
        return decorator
    return decorator(func)


class annotating:
    """``with errhints.annotating():`` notes an exception leaving the block, then re-raises it."""

    def __init__(self, *, verbosity: Verbosity | None = None) -> None:
        from ._config import check_verbosity

        check_verbosity(verbosity)
        self.verbosity: Verbosity | None = verbosity

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        tp: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is not None:
            from ._core.notes import attach

            attach(exc, self.verbosity)  # leaves control flow (SystemExit, ...) alone
        # Returning None never swallows: the same exception propagates.
