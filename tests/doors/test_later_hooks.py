"""Hooks installed after errhints (rich, friendly-traceback) keep the note in their output."""

from __future__ import annotations

import pytest

from conftest import RunPy

TITLE = "errhints: llamafactory.sglang-server-error"

SCRIPT = """
import sys, errhints
errhints.install()
before = sys.excepthook
{setup}
assert sys.excepthook is not before  # the other hook replaced ours
if "uninstall" in sys.argv:
    theirs = sys.excepthook
    errhints.uninstall()
    assert sys.excepthook is theirs, "uninstall must leave the user's hook in place"
    print("restored")
from llamafactory.chat.sglang_engine import SGLangEngine
SGLangEngine(400, "bad request")._generate()
"""

SETUPS = {
    "rich": "import rich.traceback; rich.traceback.install(width=200)",
    "friendly": "import friendly_traceback; friendly_traceback.install()",
    "plain": "sys.excepthook = lambda *a: sys.__excepthook__(*a)",
}


@pytest.mark.parametrize("kind", ["rich", "friendly", "plain"])
def test_a_hook_installed_after_errhints_still_shows_the_note(kind: str, run_py: RunPy) -> None:
    if kind == "rich":
        pytest.importorskip("rich")
    if kind == "friendly":
        pytest.importorskip("friendly_traceback")
    proc = run_py(SCRIPT.format(setup=SETUPS[kind]), env={"COLUMNS": "200"})
    assert proc.returncode == 1
    assert "SGLang server error: 400, bad request" in proc.stderr
    assert proc.stderr.count(TITLE) == 1, proc.stderr
    assert proc.stderr.index("SGLang server error: 400") < proc.stderr.index(TITLE)


@pytest.mark.parametrize("kind", ["rich", "friendly"])
def test_uninstall_leaves_the_later_hook_and_adds_nothing(kind: str, run_py: RunPy) -> None:
    pytest.importorskip({"rich": "rich", "friendly": "friendly_traceback"}[kind])
    proc = run_py(SCRIPT.format(setup=SETUPS[kind]), args=("uninstall",))
    assert proc.stdout.strip() == "restored"
    assert proc.returncode == 1
    assert "errhints" not in proc.stderr


def test_friendly_installed_before_errhints_shows_the_note(run_py: RunPy) -> None:
    """errhints in front of friendly-traceback: the note shows in its report, once."""
    pytest.importorskip("friendly_traceback")
    proc = run_py(
        """
        import friendly_traceback; friendly_traceback.install()
        import errhints; errhints.install()
        from llamafactory.chat.sglang_engine import SGLangEngine
        SGLangEngine(400, "bad request")._generate()
        """
    )
    assert proc.stderr.count(TITLE) == 1, proc.stderr
