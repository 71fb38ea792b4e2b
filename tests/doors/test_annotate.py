"""@errhints.annotate and errhints.annotating(): every kind of callable, same exception object."""

from __future__ import annotations

import asyncio
import importlib
import inspect
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

import errhints

TITLE = "errhints: llamafactory.sglang-server-error"


def fail() -> None:
    importlib.import_module("llamafactory.chat.sglang_engine").SGLangEngine(400, "x")._generate()


def notes(exc: BaseException) -> list[str]:
    return [n for n in getattr(exc, "__notes__", []) if n.startswith("errhints:")]


class Service:
    @errhints.annotate
    def method(self) -> None:
        fail()

    @errhints.annotate
    @classmethod
    def klass(cls) -> None:
        fail()

    @errhints.annotate
    @staticmethod
    def static() -> None:
        fail()


@errhints.annotate
def plain(value: int) -> int:
    if value < 0:
        fail()
    return value * 2


@errhints.annotate(verbosity="full")
def plain_full() -> None:
    fail()


@errhints.annotate
async def coroutine() -> None:
    await asyncio.sleep(0)
    fail()


@errhints.annotate
def generator() -> Iterator[int]:
    received = yield 1
    assert received == "go"
    yield 2
    fail()


@errhints.annotate
async def async_generator() -> AsyncIterator[int]:
    received = yield 1
    assert received == "go"
    yield 2
    fail()


def test_plain_function_reraises_the_same_object(standins: Path) -> None:
    """The exception that leaves the wrapper is the one raised inside, with one note."""
    assert plain(2) == 4
    with pytest.raises(RuntimeError) as info:
        plain(-1)
    assert len(notes(info.value)) == 1
    assert info.value.__traceback__ is not None
    frames = [f.name for f in __import__("traceback").extract_tb(info.value.__traceback__)]
    assert "stream_request" in frames


@pytest.mark.parametrize(
    "call",
    [lambda: Service().method(), Service.klass, Service.static],
    ids=["method", "classmethod", "staticmethod"],
)
def test_methods(standins: Path, call: Any) -> None:
    """Methods, classmethods and staticmethods are all covered."""
    with pytest.raises(RuntimeError) as info:
        call()
    assert len(notes(info.value)) == 1


def test_options_choose_verbosity(standins: Path) -> None:
    """``annotate(verbosity="full")`` writes the long form."""
    with pytest.raises(RuntimeError) as info:
        plain_full()
    assert "Likely causes:" in notes(info.value)[0]


def test_coroutine_function(standins: Path) -> None:
    """An async function stays a coroutine function, and its failure gets the note."""
    assert inspect.iscoroutinefunction(coroutine)
    with pytest.raises(RuntimeError) as info:
        asyncio.run(coroutine())
    assert len(notes(info.value)) == 1


def test_generator_passes_send_and_notes_errors(standins: Path) -> None:
    """Generators keep send/next semantics; an error while iterating is noted."""
    gen = generator()
    assert next(gen) == 1
    assert gen.send("go") == 2
    with pytest.raises(RuntimeError) as info:
        next(gen)
    assert len(notes(info.value)) == 1


def test_generator_close_and_throw(standins: Path) -> None:
    """close() and throw() reach the wrapped generator."""
    gen = generator()
    next(gen)
    with pytest.raises(KeyError):
        gen.throw(KeyError("k"))
    gen2 = generator()
    next(gen2)
    gen2.close()
    assert inspect.getgeneratorstate(gen2) == inspect.GEN_CLOSED


def test_async_generator(standins: Path) -> None:
    """Async generators keep asend semantics; an error while iterating is noted."""

    async def drive() -> BaseException:
        agen = async_generator()
        assert await agen.__anext__() == 1
        assert await agen.asend("go") == 2
        try:
            await agen.__anext__()
        except RuntimeError as exc:
            return exc
        raise AssertionError("no error")

    exc = asyncio.run(drive())
    assert len(notes(exc)) == 1


def test_async_generator_aclose_reaches_the_inner_generator() -> None:
    """aclose() runs the wrapped generator's cleanup."""
    cleaned: list[bool] = []

    @errhints.annotate
    async def agen() -> AsyncIterator[int]:
        try:
            yield 1
            yield 2
        finally:
            cleaned.append(True)

    async def drive() -> None:
        it = agen()
        await it.__anext__()
        await it.aclose()

    asyncio.run(drive())
    assert cleaned == [True]


def test_context_manager(standins: Path) -> None:
    """``with errhints.annotating():`` notes and re-raises the very same exception."""
    raised: list[BaseException] = []
    with pytest.raises(RuntimeError) as info, errhints.annotating():
        try:
            fail()
        except RuntimeError as exc:
            raised.append(exc)
            raise
    assert info.value is raised[0]
    assert len(notes(info.value)) == 1


def test_nested_doors_add_one_note(standins: Path) -> None:
    """A decorated function inside an annotating block still carries exactly one note."""
    with pytest.raises(RuntimeError) as info, errhints.annotating():
        plain(-1)
    assert len(notes(info.value)) == 1


def test_bad_option_is_a_clear_error() -> None:
    """An unknown verbosity is refused when decorating, not when failing."""
    with pytest.raises(ValueError, match="verbosity"):
        errhints.annotate(verbosity="loud")  # type: ignore[call-overload]
