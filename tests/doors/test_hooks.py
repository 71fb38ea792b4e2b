"""install()/uninstall(): every interpreter hook, each exercised in a real child process."""

from __future__ import annotations

from textwrap import dedent

from conftest import RunPy

RAISE = """
from llamafactory.chat.sglang_engine import SGLangEngine
SGLangEngine(400, "bad request")._generate()
"""
TITLE = "errhints: llamafactory.sglang-server-error"


def test_uncaught_exception_in_main_thread(run_py: RunPy) -> None:
    """sys.excepthook: the traceback ends with the note, once, and the exit status is 1."""
    proc = run_py("import errhints\nerrhints.install()\n" + RAISE)
    assert proc.returncode == 1
    assert "RuntimeError: SGLang server error: 400, bad request" in proc.stderr
    assert proc.stderr.count(TITLE) == 1
    assert proc.stderr.index("RuntimeError: SGLang") < proc.stderr.index(TITLE)


def test_without_install_nothing_is_added(run_py: RunPy) -> None:
    """The baseline: the same failure without errhints has no note."""
    proc = run_py(RAISE)
    assert proc.returncode == 1
    assert "errhints" not in proc.stderr


def test_thread_exception(run_py: RunPy) -> None:
    """threading.excepthook: an exception ending a thread is explained."""
    proc = run_py(
        """
        import threading, errhints
        errhints.install()
        from llamafactory.chat.sglang_engine import SGLangEngine
        t = threading.Thread(target=lambda: SGLangEngine(500, "boom")._generate())
        t.start(); t.join()
        print("main survived")
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert "main survived" in proc.stdout
    assert proc.stderr.count(TITLE) == 1


def test_exception_escaping_asyncio_run(run_py: RunPy) -> None:
    """An exception leaving ``asyncio.run`` reaches the excepthook with its note."""
    proc = run_py(
        """
        import asyncio, errhints
        errhints.install()
        from llamafactory.chat.sglang_engine import SGLangEngine
        async def main():
            await asyncio.sleep(0)
            SGLangEngine(400, "x")._generate()
        asyncio.run(main())
        """
    )
    assert proc.returncode == 1
    assert proc.stderr.count(TITLE) == 1


def test_task_exception_never_retrieved(run_py: RunPy) -> None:
    """asyncio logs "Task exception was never retrieved"; that log carries the note."""
    proc = run_py(
        """
        import asyncio, gc, errhints
        errhints.install(logging=False)
        from llamafactory.chat.sglang_engine import SGLangEngine
        async def fail():
            SGLangEngine(400, "x")._generate()
        async def main():
            asyncio.get_running_loop().create_task(fail())
            await asyncio.sleep(0.05)
        asyncio.run(main())
        gc.collect()
        print("done")
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert "Task exception was never retrieved" in proc.stderr
    assert proc.stderr.count(TITLE) == 1


def test_unraisable_exception(run_py: RunPy) -> None:
    """sys.unraisablehook: an exception in ``__del__`` is explained."""
    proc = run_py(
        """
        import gc, errhints
        errhints.install()
        from llamafactory.chat.sglang_engine import SGLangEngine
        class Holder:
            def __del__(self):
                SGLangEngine(400, "x")._generate()
        h = Holder(); del h; gc.collect()
        print("done")
        """
    )
    assert proc.returncode == 0
    assert "Exception ignored" in proc.stderr
    assert proc.stderr.count(TITLE) == 1


def test_install_is_idempotent_and_uninstall_restores(run_py: RunPy) -> None:
    """Installing twice is one install; uninstall puts back exactly what was there."""
    proc = run_py(
        """
        import sys, threading, errhints
        before = (sys.excepthook, threading.excepthook, sys.unraisablehook)
        errhints.install(); first = sys.excepthook
        errhints.install()
        assert sys.excepthook is first
        assert first.previous is before[0]
        errhints.uninstall()
        assert (sys.excepthook, threading.excepthook, sys.unraisablehook) == before
        errhints.uninstall()
        print("ok")
        """
    )
    assert proc.stdout.strip() == "ok", proc.stderr


def test_uninstall_keeps_a_hook_installed_after_ours(run_py: RunPy) -> None:
    """A hook installed after ours stays; ours, still in its chain, goes quiet."""
    proc = run_py(
        dedent("""
        import sys, errhints
        errhints.install()
        ours = sys.excepthook
        def theirs(tp, value, tb):
            sys.stderr.write("THEIR HOOK\\n")
            ours(tp, value, tb)
        sys.excepthook = theirs
        errhints.uninstall()
        assert sys.excepthook is theirs
        """)
        + RAISE
    )
    assert "THEIR HOOK" in proc.stderr
    assert "RuntimeError: SGLang server error" in proc.stderr
    assert "errhints" not in proc.stderr


def test_previous_hook_is_chained(run_py: RunPy) -> None:
    """A hook that was there before install() still runs, with the noted exception."""
    proc = run_py(
        dedent("""
        import sys, errhints
        def previous(tp, value, tb):
            sys.stderr.write("PREVIOUS saw %d note(s)\\n" % len(getattr(value, "__notes__", [])))
        sys.excepthook = previous
        errhints.install()
        """)
        + RAISE
    )
    assert "PREVIOUS saw 1 note(s)" in proc.stderr


def test_internal_failure_falls_back_quietly(run_py: RunPy) -> None:
    """If errhints itself breaks, the plain traceback is printed, and only debug mode says so."""
    script = (
        dedent("""
        import errhints, errhints._core.notes as notes
        def broken(exc, extra_dirs=()):
            raise MemoryError("simulated internal failure")
        notes.explain_exception = broken
        errhints.install()
        """)
        + RAISE
    )
    quiet = run_py(script, env={"ERRHINTS_DEBUG": "0"})
    assert quiet.returncode == 1
    assert "RuntimeError: SGLang server error: 400, bad request" in quiet.stderr
    assert "errhints" not in quiet.stderr
    loud = run_py(script, env={"ERRHINTS_DEBUG": "1"}, allow_internal_errors=True)
    assert "errhints: internal error in explaining an exception" in loud.stderr
    assert "RuntimeError: SGLang server error: 400, bad request" in loud.stderr


def test_keyboard_interrupt_and_system_exit_pass_through(run_py: RunPy) -> None:
    """SystemExit keeps its status and KeyboardInterrupt its traceback, unexplained."""
    proc = run_py("import sys, errhints\nerrhints.install()\nsys.exit(7)\n")
    assert proc.returncode == 7 and proc.stderr == ""
    proc = run_py("import errhints\nerrhints.install()\nraise KeyboardInterrupt\n")
    assert "KeyboardInterrupt" in proc.stderr and "errhints" not in proc.stderr


def test_frozen_exception_note_is_printed_after_the_traceback(run_py: RunPy) -> None:
    """Where add_note fails, the hook prints the note after the standard traceback."""
    proc = run_py(
        """
        import dataclasses, errhints
        errhints.install()
        from llamafactory.chat.sglang_engine import SGLangEngine
        @dataclasses.dataclass(frozen=True)
        class Frozen(Exception):
            code: int
        try:
            SGLangEngine(400, "x")._generate()
        except RuntimeError as e:
            raise Frozen(3) from e
        """
    )
    assert proc.returncode == 1
    assert proc.stderr.rstrip().splitlines()[-1].startswith("  More: errhints show")
    assert proc.stderr.count(TITLE) == 1
