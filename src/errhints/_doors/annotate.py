"""The decorator door: ``@annotate`` (built on wrapt) notes exceptions as they leave a call.

The wrapper re-raises the very same exception object; it only adds the note. Generators and
async generators are wrapped so that exceptions raised while iterating are noted too, with
``send``/``throw``/``close`` passed through. The door is on from the first decorated
callable; ``uninstall()`` makes every wrapper pass exceptions through unnoted until
``install()``. ``errhints.install()``/``uninstall()`` leave it alone: a decorator is the
user's explicit choice for that callable.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, Callable, Generator
from typing import Any

import wrapt

from .._core.notes import attach

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .._config import Verbosity

__all__ = ["NAME", "install", "make_decorator", "state", "uninstall"]

#: The door's one-word name, as ``errhints doctor`` shows it.
NAME = "annotate"
_enabled = True
_decorated = 0  # callables decorated in this process


def install() -> None:
    """Let every ``@annotate`` wrapper note exceptions again (the default)."""
    global _enabled
    _enabled = True


def uninstall() -> None:
    """Make every ``@annotate`` wrapper pass exceptions through without a note."""
    global _enabled
    _enabled = False


def state() -> str:
    """``"on"`` once a callable is decorated (while enabled), else ``"off"``."""
    return "on" if _enabled and _decorated else "off"


def _note(exc: BaseException, verbosity: Verbosity | None) -> None:
    if _enabled:
        attach(exc, verbosity)  # leaves control flow (StopIteration, ...) alone


def _wrap_generator(
    gen: Generator[Any, Any, Any], verbosity: Verbosity | None
) -> Generator[Any, Any, Any]:
    try:
        return (yield from gen)
    except BaseException as exc:
        _note(exc, verbosity)
        raise


async def _wrap_async_generator(
    agen: AsyncGenerator[Any, Any], verbosity: Verbosity | None
) -> AsyncGenerator[Any, Any]:
    try:
        item = await agen.__anext__()
    except StopAsyncIteration:
        return
    except BaseException as exc:
        _note(exc, verbosity)
        raise
    while True:
        try:
            sent = yield item
        except GeneratorExit:
            await agen.aclose()
            raise
        except BaseException as thrown:
            try:
                item = await agen.athrow(thrown)
            except StopAsyncIteration:
                return
            except BaseException as exc:
                if exc is not thrown:
                    _note(exc, verbosity)
                raise
            continue
        try:
            item = await agen.asend(sent)
        except StopAsyncIteration:
            return
        except BaseException as exc:
            _note(exc, verbosity)
            raise


class _Annotated(wrapt.FunctionWrapper):  # type: ignore[type-arg]
    """The wrapper object: a transparent proxy that also pickles like the function it wraps.

    Pickle stores a module-level function by its qualified name; returning that name here
    keeps a decorated function usable as a multiprocessing or ProcessPool target.
    """

    def __reduce_ex__(self, protocol: object) -> str:
        return str(self.__wrapped__.__qualname__)


def make_decorator(verbosity: Verbosity | None = None) -> Callable[[Any], Any]:
    """A decorator that notes exceptions escaping the wrapped callable."""

    def sync_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        try:
            return wrapped(*args, **kwargs)
        except BaseException as exc:
            _note(exc, verbosity)
            raise

    def coroutine_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        async def run() -> Any:
            try:
                return await wrapped(*args, **kwargs)
            except BaseException as exc:
                _note(exc, verbosity)
                raise

        return run()

    def iterator_wrapper(wrap: Any) -> Any:
        """For generator functions: note failures of the call, then of the iteration."""

        def wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
            try:
                iterator = wrapped(*args, **kwargs)
            except BaseException as exc:
                _note(exc, verbosity)
                raise
            return wrap(iterator, verbosity)

        return wrapper

    def choose(func: Any) -> Any:
        global _decorated
        _decorated += 1
        target = func.__func__ if isinstance(func, (classmethod, staticmethod)) else func
        if inspect.isasyncgenfunction(target):
            return _Annotated(func, iterator_wrapper(_wrap_async_generator))
        if inspect.iscoroutinefunction(target):
            return _Annotated(func, coroutine_wrapper)
        if inspect.isgeneratorfunction(target):
            return _Annotated(func, iterator_wrapper(_wrap_generator))
        return _Annotated(func, sync_wrapper)

    return choose
