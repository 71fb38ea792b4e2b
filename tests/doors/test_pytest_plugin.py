"""The pytest plugin, driven through pytester in real pytest subprocesses."""

from __future__ import annotations

from pathlib import Path

import pytest

TITLE = "errhints: llamafactory.sglang-server-error"
TESTS = """
import pytest
from llamafactory.chat.sglang_engine import SGLangEngine

def test_sglang_error():
    SGLangEngine(400, "bad request")._generate()

def test_plain_assertion():
    assert 1 == 2

@pytest.mark.xfail(reason="known")
def test_expected_failure():
    SGLangEngine(400, "bad request")._generate()

def test_skipped():
    pytest.skip("not here")

def test_passes():
    pass
"""


@pytest.fixture
def project(
    pytester: pytest.Pytester, standins_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> pytest.Pytester:
    """A test project that imports the stand-ins (its conftest puts them on sys.path).

    ``CI`` is unset for the inner runs: under CI pytest prints whole messages, notes
    included, in its short summary, which would count the note twice.
    """
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("BUILD_NUMBER", raising=False)
    pytester.makeconftest(f"import sys\nsys.path.insert(0, {str(standins_dir)!r})\n")
    pytester.makepyfile(test_project=TESTS)
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """Run pytest on the project in a subprocess, plugins autoloaded as for a user."""
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)


@pytest.mark.parametrize("tb", ["long", "short", "auto", "line", "native"])
def test_failure_report_carries_the_note_in_every_tb_style(
    project: pytest.Pytester, tb: str
) -> None:
    """Each ``--tb`` style but ``no`` prints the note with the failure, once."""
    result = run(project, f"--tb={tb}")
    result.assert_outcomes(failed=2, passed=1, skipped=1, xfailed=1)
    out = result.stdout.str()
    assert out.count(TITLE) == 1, out
    assert out.index("SGLang server error: 400, bad request") < out.index(TITLE)


def test_summary_counts_failures_but_not_xfail_or_skip(project: pytest.Pytester) -> None:
    """The run ends with ``errhints: explained N of M failures``; xfail and skip are not counted."""
    result = run(project, "--tb=no")
    result.assert_outcomes(failed=2, passed=1, skipped=1, xfailed=1)
    result.stdout.fnmatch_lines(["errhints: explained 1 of 2 failures"])
    assert TITLE not in result.stdout.str()


def test_no_summary_when_nothing_failed(pytester: pytest.Pytester) -> None:
    """A green run says nothing about errhints."""
    pytester.makepyfile(test_ok="def test_ok():\n    pass\n")
    result = run(pytester)
    result.assert_outcomes(passed=1)
    assert "errhints:" not in result.stdout.str()


def test_failure_in_a_fixture_is_explained(project: pytest.Pytester) -> None:
    """An error while setting up a fixture (an error, not a failure) is explained and counted."""
    project.makepyfile(
        test_fixture="""
        import pytest
        from llamafactory.chat.sglang_engine import SGLangEngine

        @pytest.fixture
        def engine():
            SGLangEngine(500, "down")._generate()

        def test_uses_engine(engine):
            pass
        """
    )
    result = run(project, "test_fixture.py")
    result.assert_outcomes(errors=1)
    assert result.stdout.str().count(TITLE) == 1
    result.stdout.fnmatch_lines(["errhints: explained 1 of 1 failures"])


@pytest.mark.parametrize(
    "switch",
    [["-p", "no:errhints"], ["--no-errhints"], ["-o", "errhints=false"], "ini"],
    ids=["-p no:errhints", "--no-errhints", "-o errhints=false", "ini errhints = false"],
)
def test_plugin_can_be_turned_off(project: pytest.Pytester, switch: list[str] | str) -> None:
    """``-p no:errhints``, ``--no-errhints`` and ``errhints = false`` leave reports untouched."""
    if switch == "ini":
        project.makeini("[pytest]\nerrhints = false\n")
        args: list[str] = []
    else:
        assert isinstance(switch, list)
        args = switch
    result = run(project, "--tb=long", *args)
    result.assert_outcomes(failed=2, passed=1, skipped=1, xfailed=1)
    out = result.stdout.str()
    assert "RuntimeError: SGLang server error: 400, bad request" in out
    assert "errhints:" not in out


def test_verbosity_option_gives_the_full_explanation(project: pytest.Pytester) -> None:
    """``--errhints-verbosity=full`` shows the long form of the note."""
    short = run(project, "--tb=short").stdout.str()
    full = run(project, "--tb=short", "--errhints-verbosity=full").stdout.str()
    assert full.count(TITLE) == 1
    assert len(full) > len(short)


def test_plugin_is_registered_by_entry_point(pytester: pytest.Pytester) -> None:
    """The plugin loads through the ``pytest11`` entry point, and its options are in ``--help``."""
    result = run(pytester, "--help")
    result.stdout.fnmatch_lines(["*--no-errhints*", "*errhints (bool)*"])


@pytest.mark.parametrize("tb", ["long", "short", "native"])
def test_note_refused_by_the_exception_is_shown_in_its_own_section(
    project: pytest.Pytester, tb: str
) -> None:
    """An exception whose ``__notes__`` is not a list refuses ``add_note``: the report shows the
    explanation in an errhints section after the traceback, and it counts as explained."""
    project.makepyfile(
        test_refuses="""
        from llamafactory.chat.sglang_engine import SGLangEngine

        def test_refuses():
            try:
                SGLangEngine(400, "x")._generate()
            except RuntimeError as e:
                e.__notes__ = ("a note in a tuple",)
                raise
        """
    )
    result = run(project, "test_refuses.py", f"--tb={tb}")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert out.count(TITLE) == 1, out
    assert out.index("SGLang server error: 400, x") < out.index("errhints ---") < out.index(TITLE)
    result.stdout.fnmatch_lines(["errhints: explained 1 of 1 failures"])


def test_no_summary_when_nothing_was_explained(pytester: pytest.Pytester) -> None:
    """An unrelated project's failing run gets no "explained 0 of 1 failures" line."""
    pytester.makepyfile(test_other="def test_fails():\n    assert 1 == 2\n")
    result = run(pytester, "-q")
    result.assert_outcomes(failed=1)
    assert "errhints" not in result.stdout.str()


def test_tb_line_adds_one_line(project: pytest.Pytester) -> None:
    """``--tb=line``: the explained failure gets the note's headline, one extra line only."""
    plain = run(project, "--tb=line", "--no-errhints").stdout.lines
    noted = run(project, "--tb=line").stdout.lines
    assert sum(line.strip().startswith(TITLE) for line in noted) == 1
    # one line for the note, one for the summary
    assert len(noted) - len(plain) == 2, "\n".join(plain) + "\n----\n" + "\n".join(noted)


def test_identified_failures_are_counted_apart(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure only the site index knows gets its note, and the summary keeps it apart."""
    monkeypatch.delenv("CI", raising=False)
    root = pytester.path / "fake"
    where = "sglang/multimodal_gen/runtime/cache"
    (root / where).mkdir(parents=True)
    for package in ("sglang", "sglang/multimodal_gen", "sglang/multimodal_gen/runtime", where):
        (root / package / "__init__.py").write_text("", encoding="utf-8")
    (root / where / "cache_dit_integration.py").write_text(
        "def _assert_calibrator_exclusive(label):\n"
        "    raise ValueError(\n"
        "        f'DMD and TaylorSeer calibrators are mutually exclusive on {label}, but both '\n"
        "        'are enabled. Please set only one of SGLANG_CACHE_DIT_DMD / '\n"
        "        'SGLANG_CACHE_DIT_TAYLORSEER (or their SECONDARY_ variants) to true.'\n"
        "    )\n",
        encoding="utf-8",
    )
    pytester.makeconftest(f"import sys\nsys.path.insert(0, {str(root)!r})\n")
    pytester.makepyfile(
        test_site=(
            "from sglang.multimodal_gen.runtime.cache import cache_dit_integration as c\n"
            "def test_args():\n    c._assert_calibrator_exclusive('transformer')\n"
        )
    )
    result = run(pytester, "-q")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "not in the catalog; raised at sglang/multimodal_gen/runtime/cache/" in out
    assert "errhints: explained 0 of 1 failures; identified where 1 more are raised" in out
