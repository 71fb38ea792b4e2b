"""A zoo of hostile exceptions sent through every door errhints has.

Each case is built twice where that makes sense: *recognised* (the hostile exception is
raised from a stand-in LlamaFactory error, so a note is due) and *unknown* (no note is due).
For every door the same three things must hold: nothing escapes errhints, the exception comes
out intact (same object; type, args, traceback, chain and the user's notes untouched), and
what the door normally prints is still printed, byte for byte, with the note as the only
addition. Child processes import this module to build the very same cases.
"""

from __future__ import annotations

import dataclasses
import gc
import importlib
import json
import os
import re
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

import errhints
from conftest import RunPy, child_env
from errhints._core.notes import attach

if sys.version_info < (3, 11):  # the backport, a dependency of pytest on 3.10
    from exceptiongroup import ExceptionGroup

TESTS = Path(__file__).resolve().parent
NOTE = "errhints: llamafactory.sglang-server-error"
HUGE = 10_000_000


# -- the hostile exceptions ------------------------------------------------------------------


class StrRaises(Exception):
    def __str__(self) -> str:
        raise RuntimeError("str() is broken")


class StrNotStr(Exception):
    def __str__(self) -> str:
        return 42  # type: ignore[return-value]


@dataclasses.dataclass(frozen=True)
class FrozenError(Exception):
    code: int


class GetattrRaises(Exception):
    def __getattr__(self, name: str) -> object:
        raise RuntimeError(f"no {name} for you")


class HostileMeta(type):
    """A metaclass whose type introspection raises."""

    def __getattribute__(cls, name: str) -> Any:
        if name in ("__module__", "__mro__", "__name__", "__qualname__"):
            raise RuntimeError(f"no {name}")
        return super().__getattribute__(name)


class MetaError(Exception, metaclass=HostileMeta):
    pass


class PropertiesRaise(Exception):
    """``__cause__``, ``__context__``, ``__suppress_context__`` and ``__traceback__`` that
    raise when read from Python (the interpreter itself uses the C-level fields)."""

    @property  # type: ignore[override]
    def __cause__(self) -> BaseException | None:
        raise RuntimeError("no cause")

    @property  # type: ignore[override]
    def __context__(self) -> BaseException | None:
        raise RuntimeError("no context")

    @property  # type: ignore[override]
    def __suppress_context__(self) -> bool:
        raise RuntimeError("no suppress_context")

    @property  # type: ignore[override]
    def __traceback__(self) -> Any:
        raise RuntimeError("no traceback")


class MembersRaise(ExceptionGroup):  # type: ignore[type-arg]
    @property
    def exceptions(self) -> Any:  # type: ignore[override]
        raise RuntimeError("no members")


class Unhashable(Exception):
    def __hash__(self) -> int:
        raise RuntimeError("no hash")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no eq")


class BoolRaises(Exception):
    def __bool__(self) -> bool:
        raise RuntimeError("no bool")


class Fatal(BaseException):
    pass


def server_error(text: str = "bad request") -> RuntimeError:
    """The stand-in LlamaFactory error errhints knows, raised through its real frames."""
    engine = importlib.import_module("llamafactory.chat.sglang_engine")
    try:
        engine.SGLangEngine(400, text)._generate()
    except RuntimeError as exc:
        return exc
    raise AssertionError("the stand-in did not raise")


def raised(exc: BaseException, cause: BaseException | None = None) -> BaseException:
    """``exc`` after a real ``raise`` (so it has a traceback), optionally ``from cause``."""
    try:
        if cause is None:
            raise exc
        raise exc from cause
    except BaseException as caught:
        return caught


def chained(exc: BaseException, recognised: bool) -> BaseException:
    return raised(exc, server_error() if recognised else None)


def with_notes(notes: object, recognised: bool) -> BaseException:
    exc = server_error() if recognised else raised(ValueError("user's own"))
    exc.__notes__ = notes  # type: ignore[attr-defined]
    return exc


def cyclic(recognised: bool) -> BaseException:
    inner = server_error() if recognised else raised(ValueError("inner"))
    outer = raised(ValueError("outer"))
    outer.__cause__, inner.__context__ = inner, outer
    inner.__cause__ = inner
    return outer


def groups(recognised: bool) -> BaseException:
    deep: BaseException = ValueError("bottom")
    for level in range(150):
        deep = ExceptionGroup(f"level {level}", [deep])
    wide = ExceptionGroup("wide", [ValueError(f"member {i}") for i in range(300)])
    members = [deep, wide, server_error() if recognised else ValueError("no")]
    return raised(ExceptionGroup("outer", members))


def recursion(recognised: bool) -> BaseException:
    def down() -> None:
        down()

    try:
        down()
    except RecursionError as exc:
        if recognised:
            return raised(RecursionError("while retrying"), server_error())
        return exc
    raise AssertionError("no recursion error")


@dataclass(frozen=True)
class Case:
    """One hostile exception, built fresh by ``build``; ``note`` says when a note is due."""

    kind: str
    recognised: bool
    build: Callable[[], BaseException]
    sticks: bool = True  # add_note works on it
    note: str = "if recognised"  # or "never"

    @property
    def key(self) -> str:
        return f"{self.kind}-{'recognised' if self.recognised else 'unknown'}"

    @property
    def note_due(self) -> bool:
        """Whether the note must be present (else it must be absent)."""
        return self.recognised and self.note != "never"


def _cases() -> list[Case]:
    out: list[Case] = []
    for r in (True, False):
        out += [
            Case("plain", r, lambda r=r: server_error() if r else raised(ValueError("user's own"))),
            Case("str-raises", r, lambda r=r: chained(StrRaises("x"), r)),
            Case("str-not-str", r, lambda r=r: chained(StrNotStr("x"), r)),
            Case("frozen-dataclass", r, lambda r=r: chained(FrozenError(3), r), sticks=False),
            Case("notes-tuple", r, lambda r=r: with_notes(("theirs",), r), sticks=False),
            Case("notes-non-str", r, lambda r=r: with_notes(["theirs", 42, None], r)),
            Case("getattr-raises", r, lambda r=r: chained(GetattrRaises("x"), r), sticks=False),
            Case("unhashable", r, lambda r=r: chained(Unhashable("x"), r)),
            Case("bool-raises", r, lambda r=r: chained(BoolRaises("x"), r)),
            Case("cyclic-chain", r, lambda r=r: cyclic(r)),
            Case(
                "huge-message",
                r,
                lambda r=r: server_error("x" * HUGE) if r else raised(ValueError("x" * HUGE)),
            ),
            Case("nested-groups", r, lambda r=r: groups(r)),
            Case(
                "surrogates-nul",
                r,
                lambda r=r: (
                    server_error("nul \x00 lone \udc80\ud800 end")
                    if r
                    else raised(ValueError("nul \x00 lone \udc80\ud800 end"))
                ),
            ),
            Case("unpicklable-args", r, lambda r=r: chained(ValueError(threading.Lock()), r)),
            Case("recursion-error", r, lambda r=r: recursion(r)),
            Case("base-exception", r, lambda r=r: chained(Fatal("fatal"), r)),
            # Control flow is never explained, whatever it was raised from.
            Case(
                "keyboard-interrupt", r, lambda r=r: chained(KeyboardInterrupt(), r), note="never"
            ),
            # Hostile introspection: overriding properties and a metaclass that raises.
            Case("hostile-metaclass", r, lambda r=r: chained(MetaError("m"), r)),
            Case("properties-raise", r, lambda r=r: chained(PropertiesRaise("p"), r)),
            Case(
                "group-members-raise", r, lambda r=r: chained(MembersRaise("g", [ValueError()]), r)
            ),
        ]
    # A look-alike message never raised (no frames at all) is not explained.
    out.append(Case("never-raised", False, lambda: RuntimeError("SGLang server error: 400, x")))
    return out


CASES = _cases()
BY_KEY = {case.key: case for case in CASES}


def python_can_format(case: Case) -> bool:
    """Whether Python's own ``traceback`` module can format the case at all.

    Some cannot (it reads ``__notes__`` through a raising ``__getattr__``, tests ``if exc``,
    reads ``__qualname__`` and ``__cause__``): logging then prints "--- Logging error ---" and
    loses stderr, and pytest stops with INTERNALERROR, with or without errhints. The logging
    and pytest doors skip those; the interpreter hooks (the C printer) take every case.
    """
    import traceback

    try:
        "".join(traceback.format_exception(case.build()))
    except Exception:
        return False
    return True


# -- "intact": the same object, nothing changed but one added note ----------------------------


def tb_chain(tb: TracebackType | None) -> list[TracebackType]:
    out = []
    while tb is not None:
        out.append(tb)
        tb = tb.tb_next
    return out


@dataclass
class Snapshot:
    obj: BaseException
    type: type
    args: Any
    tb: TracebackType | None
    cause: Any
    context: Any
    attrs: dict[str, Any]
    notes: Any
    notes_copy: Any


def _base(exc: BaseException, name: str) -> Any:
    """Read a BaseException slot without running the exception's own overrides."""
    return BaseException.__dict__[name].__get__(exc)


def snapshot(exc: BaseException) -> Snapshot:
    attrs = dict(object.__getattribute__(exc, "__dict__"))
    notes = attrs.pop("__notes__", None)
    return Snapshot(
        obj=exc,
        type=type(exc),
        args=_base(exc, "args"),
        tb=_base(exc, "__traceback__"),
        cause=_base(exc, "__cause__"),
        context=_base(exc, "__context__"),
        attrs=attrs,
        notes=notes,
        notes_copy=list(notes) if isinstance(notes, list) else notes,
    )


def errhints_notes(exc: BaseException) -> int:
    notes = object.__getattribute__(exc, "__dict__").get("__notes__")
    if not isinstance(notes, list):
        return 0
    return sum(1 for n in notes if isinstance(n, str) and n.startswith("errhints:"))


def damage(before: Snapshot, after: object, *, tb_may_grow: bool = False) -> list[str]:
    """What changed about the exception, beyond at most one added errhints note."""
    if after is not before.obj:
        return [f"a different object came out: {type(after).__name__}"]
    assert isinstance(after, BaseException)
    problems = []
    if type(after) is not before.type:
        problems.append("type changed")
    if _base(after, "args") is not before.args:
        problems.append("args replaced")
    tb = _base(after, "__traceback__")
    if tb_may_grow:  # re-raising prepends frames; the original entries must still be there
        if before.tb is not None and before.tb not in tb_chain(tb):
            problems.append("traceback lost its original entries")
    elif tb is not before.tb:
        problems.append("traceback replaced")
    if _base(after, "__cause__") is not before.cause:
        problems.append("__cause__ changed")
    if _base(after, "__context__") is not before.context:
        problems.append("__context__ changed")
    attrs = dict(object.__getattribute__(after, "__dict__"))
    notes = attrs.pop("__notes__", None)
    if attrs.keys() != before.attrs.keys() or any(attrs[k] is not before.attrs[k] for k in attrs):
        problems.append("attributes changed")
    if isinstance(before.notes, list):
        if notes is not before.notes:
            problems.append("__notes__ list replaced")
        added = notes[len(before.notes_copy) :] if isinstance(notes, list) else []
        if notes[: len(before.notes_copy)] != before.notes_copy:
            problems.append("the user's notes changed")
        if len(added) > 1 or any(not str(n).startswith("errhints:") for n in added):
            problems.append(f"unexpected notes added: {added!r}")
    elif before.notes is not None:
        if notes is not before.notes:
            problems.append("a __notes__ that is not a list was replaced")
    elif notes is not None and (
        not isinstance(notes, list) or len(notes) != 1 or not notes[0].startswith("errhints:")
    ):
        problems.append(f"unexpected notes: {notes!r}")
    return problems


def install() -> None:
    """``errhints.install()`` as a user calls it, minus environment propagation to children."""
    try:
        errhints.install(children=False)  # type: ignore[call-arg]
    except TypeError:  # an errhints without the children door
        errhints.install()


# -- in-process doors ------------------------------------------------------------------------


def door_explain(exc: BaseException) -> tuple[BaseException, bool]:
    matches = errhints.explain(exc)
    assert isinstance(matches, list)
    return exc, bool(matches)


def door_attach(exc: BaseException) -> tuple[BaseException, bool]:
    outcome = attach(exc)
    if outcome.attached and outcome.note is not None:
        assert errhints_notes(exc) == 1
    return exc, outcome.note is not None


def door_annotate(exc: BaseException) -> tuple[BaseException, bool]:
    @errhints.annotate
    def entrypoint() -> None:
        raise exc

    try:
        entrypoint()
    except BaseException as caught:
        return caught, errhints_notes(caught) > 0
    raise AssertionError("annotate swallowed the exception")


def door_annotating(exc: BaseException) -> tuple[BaseException, bool]:
    try:
        with errhints.annotating():
            raise exc
    except BaseException as caught:
        return caught, errhints_notes(caught) > 0
    raise AssertionError("annotating swallowed the exception")


DOORS = {
    "explain": door_explain,
    "attach": door_attach,
    "annotate": door_annotate,
    "annotating": door_annotating,
}


@pytest.mark.parametrize(
    ("key", "door"),
    [pytest.param(c.key, d, id=f"{c.key}-{d}") for c in CASES for d in DOORS],
)
def test_in_process_doors(key: str, door: str, standins: Path) -> None:
    """explain, attach, @annotate and annotating(): nothing escapes, the same exception comes
    out untouched but for one note, and the note is there exactly when it is due."""
    case = BY_KEY[key]
    exc = case.build()
    before = snapshot(exc)
    out, explained = DOORS[door](exc)
    assert damage(before, out, tb_may_grow=door in ("annotate", "annotating")) == []
    due = case.note_due
    if door == "explain" and case.kind == "keyboard-interrupt":
        due = case.recognised  # explain() answers for any exception; only notes skip these
    if door in ("annotate", "annotating") and not case.sticks:
        due = False  # the note cannot stick to this one
    assert explained == due
    assert errhints_notes(out) <= 1


# -- interpreter hooks in real child processes -----------------------------------------------

#: Runs every case through one hook door. argv: door, "plain" | "errhints".
HOOK_CHILD = r"""
import gc, json, sys, threading
import test_zoo as zoo

door, mode = sys.argv[1], sys.argv[2]
results, current = {}, {}


def probe_then(hook):
    # Outermost: snapshot what the interpreter hands over, then call the real chain.
    def probe(*args):
        value = args[1] if len(args) == 3 else getattr(args[0], "exc_value", None)
        current["before"] = zoo.snapshot(value)
        hook(*args)
    return probe


def recorder_of(previous):
    # Innermost: the hook that was there before errhints; checks what reaches it.
    def recorder(*args):
        value = args[1] if len(args) == 3 else getattr(args[0], "exc_value", None)
        results[current["key"]] = {
            "damage": zoo.damage(current["before"], value) if value is current["exc"]
            else ["the previous hook got a different object"],
            "notes": zoo.errhints_notes(value),
        }
        previous(*args)
    return recorder


def reraise(exc):
    raise exc


class Holder:
    def __init__(self, exc):
        self.exc = exc

    def __del__(self):
        raise self.exc


owner, attr = {"excepthook": (sys, "excepthook"), "thread": (threading, "excepthook"),
               "unraisable": (sys, "unraisablehook")}[door]
setattr(owner, attr, recorder_of(getattr(owner, attr)))
internal = {}
if mode == "errhints":
    import errhints._config

    def report(where, error):  # what ERRHINTS_DEBUG=1 would print, kept per case
        internal.setdefault(current.get("key"), []).append(where)

    errhints._config.report = report
    zoo.install()
setattr(owner, attr, probe_then(getattr(owner, attr)))

for case in zoo.CASES:
    sys.stderr.write(f"=== {case.key}\n")
    sys.stderr.flush()
    exc = case.build()
    current.update(key=case.key, exc=exc)
    if door == "excepthook":
        sys.excepthook(type(exc), exc, zoo._base(exc, "__traceback__"))
    elif door == "thread":
        t = threading.Thread(target=reraise, args=(exc,), name="zoo")
        t.start()
        t.join()
    else:
        holder = Holder(exc)
        del holder
        gc.collect()
    del exc
    current.pop("exc")
    sys.stderr.flush()
sys.stderr.write("=== done\n")
for key, wheres in internal.items():
    results.setdefault(key, {})["internal"] = wheres
print(json.dumps(results))
"""

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_REFCOUNT = re.compile(r"object refcount : \d+")


def strip_notes(text: str) -> str:
    """Remove errhints notes (attached or printed after the traceback) from printed output."""
    out: list[str] = []
    prefix: str | None = None
    for line in text.split("\n"):
        if prefix is not None and line.startswith(prefix + "  "):
            continue
        prefix = None
        at = line.find("errhints: ")
        if at >= 0 and set(line[:at]) <= set(" |"):
            prefix = line[:at]
            continue
        out.append(line)
    return "\n".join(out)


def normalise(text: str) -> str:
    return _REFCOUNT.sub("object refcount : N", _ADDRESS.sub("0xADDR", text))


def sections(stderr: str) -> dict[str, str]:
    """The stderr of each case, keyed by case."""
    parts = re.split(r"^=== (\S+)\n", stderr, flags=re.M)
    found = dict(zip(parts[1::2], parts[2::2], strict=True))
    found.pop("done", None)
    return found


def zoo_env(standins_dir: Path, **extra: str) -> dict[str, str]:
    env = child_env(standins_dir)
    return {"PYTHONPATH": env["PYTHONPATH"] + os.pathsep + str(TESTS), **extra}


@pytest.mark.skipif(
    sys.version_info < (3, 11),
    reason="on 3.10 the zoo imports the exceptiongroup backport, whose traceback printer "
    "itself fails on the zoo's hostile exceptions (with or without errhints)",
)
@pytest.mark.parametrize("door", ["excepthook", "thread", "unraisable"])
def test_hook_doors_in_a_child_process(
    door: str, run_py: RunPy, standins_dir: Path, standins: Path
) -> None:
    """sys.excepthook, threading.excepthook, sys.unraisablehook: for every case the previous
    hook gets the same, intact exception; the output is exactly what Python prints without
    errhints, plus the note where one is due; and errhints reports no internal failure."""
    plain = run_py(HOOK_CHILD, args=(door, "plain"), env=zoo_env(standins_dir))
    noted = run_py(HOOK_CHILD, args=(door, "errhints"), env=zoo_env(standins_dir))
    for proc in (plain, noted):
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert proc.stderr.endswith("=== done\n"), proc.stderr[-3000:]
    results = json.loads(noted.stdout)
    plain_out, noted_out = sections(plain.stderr), sections(noted.stderr)
    assert set(results) == set(BY_KEY) == set(noted_out)
    for key, case in BY_KEY.items():
        assert results[key]["damage"] == [], key
        assert results[key]["notes"] <= 1, key
        section = noted_out[key]
        assert normalise(strip_notes(section)) == normalise(plain_out[key]), key
        shown = NOTE in section
        if case.sticks and not shown and (door == "unraisable" or not python_can_format(case)):
            # Where Python itself cannot print the notes, the note on the exception must do:
            # its unraisablehook ignores __notes__ (errhints prints the note only when the
            # default hook comes right after it, not behind the recorder here: see
            # test_unraisable_note_behind_another_hook), and from 3.13 the interpreter's
            # printer falls back to one without notes when the traceback module fails.
            shown = results[key]["notes"] == 1
        assert shown == case.note_due, (key, section[-2000:])
        assert section.count(NOTE) <= 1, key
        # What errhints' own code failed at (ERRHINTS_DEBUG=1 would print it): only refusals.
        allowed = {"adding a note"} if not case.sticks else set()
        assert set(results[key].get("internal", [])) <= allowed, (key, results[key])


@pytest.mark.xfail(
    strict=True,
    reason="errhints prints the unraisable note itself only when the hook it wraps is "
    "sys.__unraisablehook__; a hook installed earlier that delegates to the default one "
    "(as libraries and test runners do) hides the note, since the default ignores __notes__",
)
def test_unraisable_note_behind_another_hook(run_py: RunPy, standins_dir: Path) -> None:
    """With a delegating unraisable hook installed before errhints, the note still shows."""
    code = """
        import gc, sys, test_zoo as zoo
        def delegating(unraisable):
            sys.__unraisablehook__(unraisable)
        sys.unraisablehook = delegating
        zoo.install()
        class Holder:
            def __del__(self):
                raise zoo.server_error()
        holder = Holder()
        del holder
        gc.collect()
    """
    proc = run_py(code, env=zoo_env(standins_dir))
    assert "Exception ignored in" in proc.stderr
    assert NOTE in proc.stderr


REAL_UNCAUGHT = ["frozen-dataclass", "getattr-raises", "cyclic-chain"]


@pytest.mark.skipif(
    sys.version_info < (3, 11),
    reason="on 3.10 the zoo imports the exceptiongroup backport, whose traceback printer "
    "itself fails on the zoo's hostile exceptions (with or without errhints)",
)
@pytest.mark.parametrize("kind", REAL_UNCAUGHT)
def test_really_uncaught_in_the_main_thread(kind: str, run_py: RunPy, standins_dir: Path) -> None:
    """The interpreter itself calls the hook for an uncaught hostile exception: same exit
    status, same output as without errhints, plus the note (attached or printed after)."""
    code = f"""
        import sys, test_zoo as zoo
        if sys.argv[1] == "errhints":
            zoo.install()
        raise zoo.BY_KEY[{kind + "-recognised"!r}].build()
    """
    plain = run_py(code, args=("plain",), env=zoo_env(standins_dir))
    noted = run_py(code, args=("errhints",), env=zoo_env(standins_dir))
    assert noted.returncode == plain.returncode == 1
    assert noted.stderr.count(NOTE) == 1, noted.stderr[-3000:]
    assert normalise(strip_notes(noted.stderr)) == normalise(plain.stderr)


def test_logging_door(run_py: RunPy, standins_dir: Path, standins: Path) -> None:
    """``logger.exception`` on every case: the record is logged as without errhints (no
    '--- Logging error ---'), plus the note where one is due."""
    pytest.importorskip("errhints._doors.log_records")
    code = """
        import logging, sys, test_zoo as zoo
        logging.basicConfig(format="%(levelname)s %(message)s", stream=sys.stderr)
        if sys.argv[1] == "errhints":
            zoo.install()
        log = logging.getLogger("zoo")
        for case in zoo.CASES:
            if not zoo.python_can_format(case):
                continue
            sys.stderr.write(f"=== {case.key}\\n")
            exc = case.build()
            before = zoo.snapshot(exc)
            try:
                raise exc
            except BaseException:
                log.exception("case %s failed", case.key)
            damage = zoo.damage(before, exc, tb_may_grow=True)
            if damage:
                print(case.key, damage)
        sys.stderr.write("=== done\\n")
    """
    plain = run_py(code, args=("plain",), env=zoo_env(standins_dir))
    noted = run_py(code, args=("errhints",), env=zoo_env(standins_dir))
    assert noted.returncode == plain.returncode == 0, noted.stderr[-3000:]
    assert noted.stdout == "", noted.stdout
    assert "Logging error" not in noted.stderr
    plain_out, noted_out = sections(plain.stderr), sections(noted.stderr)
    formattable = [case for case in CASES if python_can_format(case)]
    assert set(noted_out) == {case.key for case in formattable}
    for case in formattable:
        key = case.key
        section = noted_out[key]
        assert f"case {key} failed" in section
        assert normalise(strip_notes(section)) == normalise(plain_out[key]), key
        if not case.note_due or case.sticks:  # (a refused note's fallback is not specified)
            assert (NOTE in section) == case.note_due, (key, section[-1500:])


# -- the pytest plugin -----------------------------------------------------------------------

PYTEST_PROJECT = """
import sys
sys.path[:0] = [{standins!r}, {tests!r}]

import pytest
import test_zoo as zoo

@pytest.mark.parametrize("key", sorted(zoo.BY_KEY))
def test_case(key):
    raise zoo.BY_KEY[key].build()
"""


@pytest.fixture
def zoo_project(
    pytester: pytest.Pytester, standins_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> pytest.Pytester:
    """A pytest project with one failing test per zoo case.

    ``CI`` is unset for the inner run: under CI pytest repeats whole messages, notes
    included, in its short summary, which would land in the last case's section.
    """
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("BUILD_NUMBER", raising=False)
    # No conftest in the project: test_zoo imports the suite's own conftest module.
    source = PYTEST_PROJECT.format(standins=str(standins_dir), tests=str(TESTS))
    pytester.makepyfile(test_zoo_project=source)
    return pytester


def pytest_sections(out: str) -> dict[str, str]:
    parts = re.split(r"^_+ test_case\[(\S+)\] _+$", out, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_pytest_plugin(zoo_project: pytest.Pytester, standins: Path) -> None:
    """Every case fails as itself (KeyboardInterrupt aside, which stops the session), the
    report shows the note where it is due, and pytest reports no internal error."""
    cases = [c for c in CASES if c.kind != "keyboard-interrupt" and python_can_format(c)]
    skipped = {c.key for c in CASES} - {c.key for c in cases}
    result = zoo_project.runpytest_subprocess(
        "-p", "no:cacheprovider", "--tb=short", "-k", " and ".join(f"not {k}" for k in skipped)
    )
    out = result.stdout.str()
    assert "INTERNALERROR" not in out + result.stderr.str()
    result.assert_outcomes(failed=len(cases), deselected=len(CASES) - len(cases))
    found = pytest_sections(out)
    assert set(found) == {c.key for c in cases}
    for case in cases:
        section = found[case.key]
        assert (NOTE in section) == case.note_due, (case.key, section[-1500:])
    assert re.search(rf"errhints: explained \d+ of {len(cases)} failures", out)


def test_pytest_plugin_shows_a_note_that_could_not_be_attached(
    zoo_project: pytest.Pytester,
) -> None:
    """A ``__notes__`` tuple refuses the note; the failure report still shows it."""
    result = zoo_project.runpytest_subprocess(
        "-p", "no:cacheprovider", "--tb=short", "-k", "notes-tuple-recognised"
    )
    result.assert_outcomes(failed=1, deselected=len(CASES) - 1)
    assert NOTE in result.stdout.str() + result.stderr.str()


# -- across a process boundary ---------------------------------------------------------------

SPAWN_CHILD = r"""
import json, multiprocessing, threading
import errhints, test_zoo as zoo


class Unpicklable(Exception):
    def __init__(self, lock):
        super().__init__("cannot cross")
        self.lock = lock


def work(what):
    with errhints.annotating():  # the note is added in the worker, before pickling
        if what == "recognised":
            raise zoo.server_error()
        if what == "unpicklable":
            raise zoo.raised(Unpicklable(threading.Lock()), zoo.server_error())
        if what == "unpicklable-args":
            raise zoo.BY_KEY["unpicklable-args-recognised"].build()
        return what


if __name__ == "__main__":
    zoo.install()
    out = {}
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2, initializer=zoo.install) as pool:
        for what in ("recognised", "unpicklable", "unpicklable-args", "fine"):
            try:
                out[what] = {"value": pool.apply(work, (what,))}
            except BaseException as exc:
                notes = getattr(exc, "__notes__", [])
                out[what] = {"type": type(exc).__name__, "text": str(exc)[:300],
                             "notes": zoo.errhints_notes(exc), "all_notes": len(notes)}
                zoo.attach(exc)  # the parent's doors see it too: still one note
                out[what]["after_attach"] = zoo.errhints_notes(exc)
        out["still-works"] = pool.apply(work, ("again",))
    print(json.dumps(out))
"""


def test_exceptions_crossing_a_spawn_pool(run_py: RunPy, standins_dir: Path) -> None:
    """errhints in the parent and in spawn workers: a recognised error arrives with one note
    (not two), an unpicklable one fails exactly as multiprocessing makes it fail without
    errhints, and the pool keeps working."""
    proc = run_py(SPAWN_CHILD, env=zoo_env(standins_dir), timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["recognised"]["type"] == "RuntimeError"
    assert out["recognised"]["notes"] == 1 and out["recognised"]["after_attach"] == 1
    for what in ("unpicklable", "unpicklable-args"):
        assert out[what]["type"] == "MaybeEncodingError", out[what]
        assert "Error sending result" in out[what]["text"]
    assert out["fine"] == {"value": "fine"}
    assert out["still-works"] == "again"


@errhints.annotate
def annotated_target(value: int) -> int:
    """A module-level function, as multiprocessing and pickle need them."""
    return value * 2


def test_annotated_function_can_be_pickled_by_reference() -> None:
    """Like the bare function, the decorated one pickles as a reference to itself."""
    import pickle

    assert pickle.loads(pickle.dumps(annotated_target)) is annotated_target


def test_zoo_module_builds_fresh_exceptions_each_time(standins: Path) -> None:
    """Sanity of the zoo itself: builders return new, raised exceptions."""
    for case in CASES:
        first, second = case.build(), case.build()
        assert first is not second
        assert (case.kind == "never-raised") == (_base(first, "__traceback__") is None)
    gc.collect()
