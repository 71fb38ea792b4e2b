"""Live facts on every supported Python: qualified names (no ``co_qualname`` on 3.10) and
exception groups (the ``exceptiongroup`` backport on 3.10)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from errhints._facts.live import facts_from_exception


def _raise() -> None:
    raise ValueError("boom")


class Engine:
    def method(self) -> None:
        _raise()

    @classmethod
    def klass(cls) -> None:
        _raise()

    @staticmethod
    def static() -> None:
        _raise()


def caught(call: object) -> BaseException:
    try:
        call()  # type: ignore[operator]
    except BaseException as exc:
        return exc
    raise AssertionError("did not raise")


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (lambda: Engine().method(), "Engine.method"),
        (Engine.klass, "Engine.klass"),
        (_raise, "_raise"),
    ],
)
def test_qualified_names_of_module_functions_and_methods(call: object, expected: str) -> None:
    frames = facts_from_exception(caught(call)).frames
    assert expected in [f.function for f in frames]


def test_nested_and_decorated_functions_of_a_project_are_qualified(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inside SGLang/LlamaFactory (whose sites the catalog names) every frame gets its full
    qualified name, nested functions and methods called without ``self`` included."""
    pkg = tmp_path / "sglang"
    (pkg / "srt").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "srt" / "__init__.py").write_text("")
    (pkg / "srt" / "zz_compat.py").write_text(
        textwrap.dedent(
            """
            class Scheduler:
                def run(*args):
                    def inner():
                        raise RuntimeError("x")
                    inner()
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m.partition(".")[0] == "sglang"]:
        monkeypatch.delitem(sys.modules, name)
    from sglang.srt.zz_compat import Scheduler  # type: ignore[import-not-found]

    functions = [f.function for f in facts_from_exception(caught(Scheduler().run)).frames]
    assert functions[-2:] == ["Scheduler.run", "Scheduler.run.<locals>.inner"]


def test_exception_group_members_are_read() -> None:
    if sys.version_info >= (3, 11):
        group_type = ExceptionGroup  # noqa: F821 - built in from 3.11
    else:
        group_type = pytest.importorskip("exceptiongroup").ExceptionGroup
    group = group_type("outer", [ValueError("a"), KeyError("b")])
    facts = facts_from_exception(group)
    assert [(f.relation, f.short_type) for f in facts.chain] == [
        ("group", "ValueError"),
        ("group", "KeyError"),
    ]
