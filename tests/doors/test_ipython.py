"""``%load_ext errhints`` in a real IPython shell, run in a child process."""

from __future__ import annotations

import re
import textwrap

import pytest

from conftest import RunPy

pytest.importorskip("IPython")

TITLE = "errhints: llamafactory.sglang-server-error"
ANSI = re.compile(r"\x1b\[[0-9;]*m")

#: Starts a real (non-terminal) IPython shell; ``cell(code)`` runs a cell like a notebook does.
SHELL = """
import sys
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()

def cell(code):
    return ip.run_cell(code, store_history=True)

FAIL = "from llamafactory.chat.sglang_engine import SGLangEngine\\nSGLangEngine(400, 'bad request')._generate()"
"""


def shell(run_py: RunPy, body: str) -> tuple[str, str]:
    """Run ``body`` after SHELL in a child; return (stdout, stderr) without colour codes."""
    proc = run_py(SHELL + textwrap.dedent(body))
    assert proc.returncode == 0, proc.stderr
    return ANSI.sub("", proc.stdout), ANSI.sub("", proc.stderr)


def test_load_ext_explains_a_cell_error(run_py: RunPy) -> None:
    """After ``%load_ext errhints`` the displayed cell traceback ends with the note, once."""
    out, err = shell(
        run_py,
        """
        ip.run_line_magic("load_ext", "errhints")
        result = cell(FAIL)
        print("ERROR", type(result.error_in_exec).__name__)
        """,
    )
    assert "RuntimeError: SGLang server error: 400, bad request" in out
    assert (out + err).count(TITLE) == 1
    assert out.index("RuntimeError: SGLang server error") < out.index(TITLE)
    assert "ERROR RuntimeError" in out


def test_without_the_extension_no_note(run_py: RunPy) -> None:
    """The baseline: IPython shows the same error without a note."""
    out, err = shell(run_py, "cell(FAIL)\n")
    assert "RuntimeError: SGLang server error: 400, bad request" in out
    assert "errhints" not in out + err


def test_unrecognised_errors_are_shown_unchanged(run_py: RunPy) -> None:
    """A cell error errhints does not know is displayed exactly as without the extension."""
    out, err = shell(
        run_py,
        """
        ip.run_line_magic("load_ext", "errhints")
        cell("raise ValueError('mine')")
        """,
    )
    assert "ValueError: mine" in out
    assert "errhints:" not in out + err


@pytest.mark.parametrize("order", ["handler-first", "extension-first"])
def test_coexists_with_a_custom_exception_handler(run_py: RunPy, order: str) -> None:
    """A ``set_custom_exc`` handler set before or after loading keeps working, and the
    traceback it shows through ``showtraceback`` carries the note."""
    set_handler = """
        def handler(self, etype, value, tb, tb_offset=None):
            print("CUSTOM HANDLER", etype.__name__)
            self.showtraceback((etype, value, tb), tb_offset=tb_offset)
        ip.set_custom_exc((RuntimeError,), handler)
        """
    set_handler = textwrap.dedent(set_handler)
    load = 'ip.run_line_magic("load_ext", "errhints")\n'
    body = set_handler + load if order == "handler-first" else load + set_handler
    out, err = shell(run_py, body + "cell(FAIL)\n")
    assert "CUSTOM HANDLER RuntimeError" in out
    assert (out + err).count(TITLE) == 1


def test_a_handler_that_prints_its_own_output_still_gets_the_explanation(run_py: RunPy) -> None:
    """A custom handler that shows no traceback: the note follows its output after the cell."""
    out, err = shell(
        run_py,
        """
        def handler(self, etype, value, tb, tb_offset=None):
            print("SHORT:", value)
        ip.set_custom_exc((RuntimeError,), handler)
        ip.run_line_magic("load_ext", "errhints")
        cell(FAIL)
        cell("1 + 1")
        """,
    )
    assert "SHORT: SGLang server error: 400, bad request" in out
    assert err.count(TITLE) == 1


def test_unload_restores_the_shell_and_the_process(run_py: RunPy) -> None:
    """``%unload_ext errhints`` puts back showtraceback, the callbacks, the hooks and ERRHINTS."""
    out, err = shell(
        run_py,
        """
        import os, errhints._doors.hooks as hooks
        before = (dict(vars(ip)).get("showtraceback"), len(ip.events.callbacks["post_run_cell"]),
                  ip.custom_exceptions, os.environ.get("ERRHINTS"))
        ip.run_line_magic("load_ext", "errhints")
        loaded = ("showtraceback" in vars(ip), (hooks.state() == 'on'), os.environ.get("ERRHINTS"))
        ip.run_line_magic("unload_ext", "errhints")
        after = (dict(vars(ip)).get("showtraceback"), len(ip.events.callbacks["post_run_cell"]),
                 ip.custom_exceptions, os.environ.get("ERRHINTS"))
        print("LOADED", loaded)
        print("SAME", before == after, (hooks.state() == 'on'))
        cell(FAIL)
        """,
    )
    assert "LOADED (True, True, '1')" in out
    assert "SAME True False" in out
    assert "RuntimeError: SGLang server error" in out
    assert "errhints:" not in out + err


def test_unload_keeps_an_install_that_was_there_before(run_py: RunPy) -> None:
    """If ``errhints.install()`` ran before loading, unloading the extension leaves it on."""
    out, _ = shell(
        run_py,
        """
        import errhints, errhints._doors.hooks as hooks
        errhints.install()
        ip.run_line_magic("load_ext", "errhints")
        ip.run_line_magic("unload_ext", "errhints")
        print("STILL", (hooks.state() == 'on'))
        """,
    )
    assert "STILL True" in out


def test_load_is_idempotent_and_a_later_wrapper_survives_unload(run_py: RunPy) -> None:
    """Loading twice wraps once; a showtraceback wrapper installed after ours stays after unload,
    and ours, buried in it, goes quiet."""
    out, err = shell(
        run_py,
        """
        import errhints
        errhints.load_ipython_extension(ip)
        first = ip.showtraceback
        errhints.load_ipython_extension(ip)
        print("ONCE", ip.showtraceback is first)
        ours = ip.showtraceback
        def theirs(*args, **kwargs):
            print("THEIR WRAPPER")
            return ours(*args, **kwargs)
        ip.showtraceback = theirs
        errhints.unload_ipython_extension(ip)
        print("KEPT", ip.showtraceback is theirs)
        cell(FAIL)
        """,
    )
    assert "ONCE True" in out and "KEPT True" in out
    assert "THEIR WRAPPER" in out
    assert "errhints:" not in out + err


def test_importing_errhints_does_not_import_ipython(run_py: RunPy) -> None:
    """The extension entry points are re-exported without importing IPython."""
    proc = run_py(
        "import sys, errhints\nprint(errhints.load_ipython_extension.__module__, 'IPython' in sys.modules)\n"
    )
    assert proc.stdout.split() == ["errhints._doors.ipython", "False"], proc.stderr


def test_reload_ext_leaves_one_extension(run_py: RunPy) -> None:
    """``%reload_ext errhints`` unloads then loads: one wrapper, one callback, one note."""
    out, err = shell(
        run_py,
        """
        ip.run_line_magic("load_ext", "errhints")
        ip.run_line_magic("reload_ext", "errhints")
        print("CALLBACKS", len(ip.events.callbacks["post_run_cell"]))
        cell(FAIL)
        """,
    )
    assert "CALLBACKS 1" in out
    assert (out + err).count(TITLE) == 1


def test_a_traceback_ipython_printed_reads_as_pythons(run_py: RunPy) -> None:
    """A cell's traceback as IPython prints it (a notebook's, pasted into an issue): its
    frames, source lines and error line are read as Python's, and the entry is exact."""
    from errhints._core.pipeline import explain_text
    from errhints._facts import scan_text

    out, _err = shell(run_py, "cell(FAIL)\n")
    assert "Traceback (most recent call last):" not in out  # IPython's own form only
    (found,) = scan_text(out)
    assert found.kind == "traceback"
    facts = found.facts
    assert (facts.type_name, facts.message) == (
        "RuntimeError",
        "SGLang server error: 400, bad request",
    )
    assert [f.path for f in facts.frames][-1] == "llamafactory/chat/sglang_engine.py"
    assert facts.frames[0].filename.startswith("<In")
    # the same failure as Python itself prints it gets the same answer
    plain = run_py(
        "import sys\n"
        "sys.excepthook = sys.__excepthook__\n"
        "from llamafactory.chat.sglang_engine import SGLangEngine\n"
        "SGLangEngine(400, 'bad request')._generate()\n"
    ).stderr
    assert "Traceback (most recent call last):" in plain
    (explained,) = explain_text(out)
    (expected,) = explain_text(plain)
    assert [(m.id, m.confidence) for m in explained.matches] == [
        (m.id, m.confidence) for m in expected.matches
    ]
    assert explained.matches[0].id == "llamafactory.sglang-server-error"
