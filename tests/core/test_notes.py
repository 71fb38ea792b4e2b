"""Notes: one errhints note per exception, nothing else altered, hostile exceptions survived."""

from __future__ import annotations

import dataclasses
import importlib
import sys
from pathlib import Path

import pytest

from errhints._core.notes import add_note, attach, has_note
from standins import server_error

if sys.version_info < (3, 11):  # the backport, a dependency of pytest on 3.10
    from exceptiongroup import ExceptionGroup


def test_note_is_added_once_and_nothing_else_changes(standins: Path) -> None:
    """Two doors seeing one exception add one note; message, args, type, traceback stay."""
    exc = server_error()
    add_note(exc, "a note of the user's")
    before = (type(exc), exc.args, str(exc), exc.__traceback__, list(exc.__notes__))
    first, second = attach(exc), attach(exc)
    assert first.attached and first.note is not None
    assert second.attached and second.note is None
    assert (type(exc), exc.args, str(exc), exc.__traceback__) == before[:4]
    assert exc.__notes__[:1] == ["a note of the user's"]
    assert len([n for n in exc.__notes__ if n.startswith("errhints:")]) == 1
    assert has_note(exc)


def test_note_shape(standins: Path) -> None:
    """Title line with id, a few lines of meaning, fixes, and where to read more."""
    note = attach(server_error()).note
    assert note is not None
    lines = note.splitlines()
    assert lines[0].startswith("errhints: llamafactory.sglang-server-error: ")
    assert lines[0].endswith("[exact]")
    assert "  Try:" in lines
    assert lines[-1].startswith(
        "  More: errhints show llamafactory.sglang-server-error | https://github.com/"
    )
    assert len(lines) <= 12
    full = attach(server_error(), "full").note
    assert full is not None and "Likely causes:" in full and len(full) > len(note)


def test_unmatched_exception_gets_no_note() -> None:
    """An error errhints does not know is left exactly as it was."""
    exc = ValueError("something of the user's")
    assert attach(exc).note is None
    assert not hasattr(exc, "__notes__")


@dataclasses.dataclass(frozen=True)
class FrozenError(Exception):
    code: int


def test_frozen_dataclass_exception_gets_the_note_as_text(standins: Path) -> None:
    """Where ``add_note`` itself raises, the note text comes back to be printed instead."""
    engine = importlib.import_module("llamafactory.chat.sglang_engine")
    try:
        try:
            engine.SGLangEngine(500, "x")._generate()
        except RuntimeError as inner:
            raise FrozenError(1) from inner
    except FrozenError as caught:
        exc = caught
    outcome = attach(exc)
    assert outcome.note is not None and not outcome.attached
    assert "__notes__" not in vars(exc)


def test_notes_that_are_not_a_list_are_left_alone(standins: Path) -> None:
    """A ``__notes__`` tuple is never replaced; the note is returned as text."""
    exc = server_error()
    exc.__notes__ = ("theirs",)  # type: ignore[assignment]
    outcome = attach(exc)
    assert outcome.note is not None and not outcome.attached
    assert exc.__notes__ == ("theirs",)


class UnprintableError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("str() is broken")


class GetattrError(Exception):
    def __getattr__(self, name: str) -> object:
        raise RuntimeError(f"no {name} for you")


@pytest.mark.parametrize(
    "exc",
    [
        UnprintableError(),
        GetattrError("x"),
        ValueError("nul \x00 and lone surrogate \udc80"),
        ValueError("x" * 10_000_000),
    ],
    ids=["str-raises", "getattr-raises", "nul-surrogate", "10MB"],
)
def test_hostile_exceptions_never_raise(exc: BaseException) -> None:
    """Whatever the exception does, attach returns and the exception is untouched."""
    args = exc.args
    outcome = attach(exc)
    assert outcome.note is None
    assert exc.args is args
    assert "__notes__" not in vars(exc)


def test_cyclic_chain_and_nested_groups_terminate(standins: Path) -> None:
    """Cause/context cycles are cut and nested exception groups are searched."""
    a, b = ValueError("a"), ValueError("b")
    a.__context__, b.__context__ = b, a
    assert attach(a).note is None
    inner = server_error()
    group = ExceptionGroup("outer", [ValueError("v"), ExceptionGroup("inner", [inner, b])])
    outcome = attach(group)
    assert outcome.note is not None
    assert outcome.note.startswith("errhints: llamafactory.sglang-server-error")


def test_control_flow_exceptions_pass_untouched() -> None:
    """KeyboardInterrupt and SystemExit are never explained."""
    for exc in (KeyboardInterrupt(), SystemExit(2)):
        assert attach(exc).note is None
        assert not hasattr(exc, "__notes__")


def test_an_http_exception_is_read_by_its_detail(standins: Path) -> None:
    """starlette's HTTPException prints as ``400: <detail>``; the detail is what matches."""
    from errhints._facts.live import facts_from_exception

    class HTTPException(Exception):  # the shape of starlette.exceptions.HTTPException
        def __init__(self, status_code: int, detail: str) -> None:
            self.status_code, self.detail = status_code, detail

        def __str__(self) -> str:
            return f"{self.status_code}: {self.detail}"

    facts = facts_from_exception(HTTPException(400, "Invalid length"))
    assert facts.message == "Invalid length"
    assert facts_from_exception(ValueError("400: x")).message == "400: x"
