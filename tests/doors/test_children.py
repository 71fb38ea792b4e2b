"""Child processes: multiprocessing's own traceback printer, ERRHINTS=1, the SGLang scheduler log."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import RunPy
from wheelenv import WheelEnv, wheel_env

TITLE = "errhints: llamafactory.sglang-server-error"
METHODS = ["spawn", "fork", "forkserver"]

#: A script whose multiprocessing child fails with a stand-in LlamaFactory error.
PROCESS = """
import multiprocessing as mp
import sys

def fail():
    from llamafactory.chat.sglang_engine import SGLangEngine
    SGLangEngine(400, "bad request")._generate()

class Worker(mp.Process):
    def run(self):
        fail()

if __name__ == "__main__":
    import errhints
    errhints.install(children=sys.argv[3] == "children")
    mp.set_start_method(sys.argv[1])
    p = mp.Process(target=fail) if sys.argv[2] == "target" else Worker()
    p.start()
    p.join()
    print("exitcode", p.exitcode)
"""


@pytest.fixture(scope="module")
def wenv(tmp_path_factory: pytest.TempPathFactory) -> WheelEnv:
    """A venv with errhints installed from a freshly built wheel (it has the start-up hook)."""
    return wheel_env(tmp_path_factory)


@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS)
def test_exception_escaping_process_run_is_explained_once(
    wenv: WheelEnv, standins_dir: Path, tmp_path: Path, method: str
) -> None:
    """spawn, fork, forkserver: the child's traceback, printed by multiprocessing, carries the note once."""
    proc = wenv.run(
        PROCESS, tmp_path, standins_dir=standins_dir, args=(method, "target", "children")
    )
    assert "exitcode 1" in proc.stdout, proc.stderr
    assert "Process " in proc.stderr  # multiprocessing's own header: its printer, not a hook
    assert "RuntimeError: SGLang server error: 400, bad request" in proc.stderr
    assert proc.stderr.count(TITLE) == 1, proc.stderr
    assert proc.stderr.index("RuntimeError: SGLang") < proc.stderr.index(TITLE)


@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS)
def test_a_subclass_overriding_run_is_explained_too(
    wenv: WheelEnv, standins_dir: Path, tmp_path: Path, method: str
) -> None:
    """A ``Process`` subclass with its own ``run`` (no target) is covered as well."""
    proc = wenv.run(
        PROCESS, tmp_path, standins_dir=standins_dir, args=(method, "subclass", "children")
    )
    assert "exitcode 1" in proc.stdout, proc.stderr
    assert proc.stderr.count(TITLE) == 1, proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    ("method", "explained"), [("spawn", False), ("forkserver", False), ("fork", True)]
)
def test_children_false_keeps_new_interpreters_plain(
    wenv: WheelEnv, standins_dir: Path, tmp_path: Path, method: str, explained: bool
) -> None:
    """install(children=False): spawn/forkserver children start plain; a fork child shares our state."""
    proc = wenv.run(PROCESS, tmp_path, standins_dir=standins_dir, args=(method, "target", "alone"))
    assert "exitcode 1" in proc.stdout, proc.stderr
    assert "RuntimeError: SGLang server error" in proc.stderr
    assert proc.stderr.count(TITLE) == (1 if explained else 0), proc.stderr


@pytest.mark.slow
def test_sglang_scheduler_log_in_a_spawned_child_is_explained(
    wenv: WheelEnv, standins_dir: Path, tmp_path: Path
) -> None:
    """The SGLang pattern end to end: a spawned scheduler configures its own logging, catches the
    error, logs ``traceback.format_exc()`` as text; the emitted log carries the explanation."""
    proc = wenv.run(
        """
        import logging, multiprocessing as mp

        def scheduler():
            logging.basicConfig(level=logging.INFO, format="[%(asctime)s %(processName)s] %(message)s")
            from sglang.srt.managers.scheduler import run_scheduler_process
            from sglang.srt.disaggregation.encoder.server import MMEncoder
            run_scheduler_process(lambda: MMEncoder()._validate_embedding_token_count(10, 12))

        if __name__ == "__main__":
            import errhints
            errhints.install()
            p = mp.get_context("spawn").Process(target=scheduler)
            p.start()
            p.join()
            print("exitcode", p.exitcode)
        """,
        tmp_path,
        standins_dir=standins_dir,
    )
    assert "exitcode 0" in proc.stdout, proc.stderr
    log = proc.stderr
    assert "SpawnProcess-1] Scheduler hit an exception: Traceback" in log
    assert "InternalError: Encoder produced 10 tokens, but preprocessor metadata expected 12" in log
    assert log.count("errhints: sglang.mm-encoder-token-count-mismatch") == 1, log
    assert log.index("InternalError: Encoder produced") < log.index("errhints: sglang.mm-encoder")


def test_fork_child_is_explained_without_the_startup_hook(run_py: RunPy) -> None:
    """Fork children inherit the patched multiprocessing; no installed wheel is needed."""
    proc = run_py(PROCESS, args=("fork", "target", "children"))
    assert "exitcode 1" in proc.stdout, proc.stderr
    assert proc.stderr.count(TITLE) == 1


def test_spawn_child_is_explained_when_the_main_module_installs(run_py: RunPy) -> None:
    """A spawn child re-imports the main module: a module-level install() covers it, wheel or not."""
    proc = run_py(
        """
        import multiprocessing as mp
        import errhints
        errhints.install()

        def fail():
            from llamafactory.chat.sglang_engine import SGLangEngine
            SGLangEngine(400, "bad request")._generate()

        if __name__ == "__main__":
            p = mp.get_context("spawn").Process(target=fail)
            p.start(); p.join()
            print("exitcode", p.exitcode)
        """
    )
    assert "exitcode 1" in proc.stdout, proc.stderr
    assert proc.stderr.count(TITLE) == 1


def test_multiprocessing_is_patched_lazily_and_restored(run_py: RunPy) -> None:
    """install() before multiprocessing is imported does not import it; the patch lands on import,
    leaves the module's loader as it was, and uninstall() restores the original method."""
    proc = run_py(
        """
        import sys
        import errhints, errhints._doors.processes as mp
        errhints.install()
        assert "multiprocessing" not in sys.modules
        assert mp.state() == "waiting"
        import multiprocessing.process as mpp
        assert mp.state() == "patched"
        assert type(mpp.__loader__).__name__ == "SourceFileLoader", mpp.__loader__
        assert mpp.__spec__.loader is mpp.__loader__
        assert mpp.BaseProcess._bootstrap.__wrapped__ is not None
        assert not any(getattr(getattr(f, "owner", None), "module", "") == "multiprocessing.process" for f in sys.meta_path)
        original = mpp.BaseProcess._bootstrap.__wrapped__
        errhints.uninstall()
        assert mpp.BaseProcess._bootstrap is original
        assert mp.state() == "off"
        errhints.install(); errhints.install()
        assert mpp.BaseProcess._bootstrap.__wrapped__ is original
        errhints.uninstall()
        assert mpp.BaseProcess._bootstrap is original
        print("ok")
        """
    )
    assert proc.stdout.strip() == "ok", proc.stderr


def test_uninstall_without_multiprocessing_leaves_no_finder(run_py: RunPy) -> None:
    """install() then uninstall() before multiprocessing is imported: no finder stays behind."""
    proc = run_py(
        """
        import sys, errhints
        n = len(sys.meta_path)
        errhints.install(); errhints.uninstall()
        assert len(sys.meta_path) == n
        import multiprocessing.process as mpp
        assert not hasattr(mpp.BaseProcess._bootstrap, "__wrapped__")
        print("ok")
        """
    )
    assert proc.stdout.strip() == "ok", proc.stderr


def test_errhints_variable_is_set_and_restored(run_py: RunPy) -> None:
    """install() sets ERRHINTS=1 for children; uninstall() puts back what was there before."""
    proc = run_py(
        """
        import os, errhints
        before = os.environ.get("ERRHINTS")
        errhints.install()
        during = os.environ.get("ERRHINTS")
        errhints.install(children=False)
        opted_out = os.environ.get("ERRHINTS")
        errhints.install()
        errhints.uninstall()
        print(before, during, opted_out, os.environ.get("ERRHINTS"))
        """
    )
    assert proc.stdout.split() == ["None", "1", "None", "None"], proc.stderr
    for value in ("0", "1"):
        proc = run_py(
            """
            import os, errhints
            errhints.install(); during = os.environ["ERRHINTS"]
            errhints.uninstall()
            print(during, os.environ.get("ERRHINTS"))
            """,
            env={"ERRHINTS": value},
        )
        # Under ERRHINTS=1 the variable was the user's: uninstall leaves it alone.
        assert proc.stdout.split() == ["1", value], proc.stderr


def test_unrecognised_failure_and_exit_status_pass_through(run_py: RunPy) -> None:
    """A child's unknown error prints as before, and ``sys.exit(3)`` keeps its exit code."""
    proc = run_py(
        """
        import multiprocessing as mp, sys
        import errhints
        errhints.install()

        def boom():
            raise ValueError("nothing errhints knows")

        def leave():
            sys.exit(3)

        if __name__ == "__main__":
            ctx = mp.get_context("fork")
            for target in (boom, leave):
                p = ctx.Process(target=target); p.start(); p.join()
                print("exitcode", p.exitcode)
        """
    )
    assert proc.stdout.split() == ["exitcode", "1", "exitcode", "3"], proc.stderr
    assert "ValueError: nothing errhints knows" in proc.stderr
    assert "errhints:" not in proc.stderr


def test_note_that_cannot_be_attached_is_printed_after_the_childs_traceback(run_py: RunPy) -> None:
    """A frozen exception refuses the note: it is printed right after multiprocessing's traceback."""
    proc = run_py(
        """
        import dataclasses, multiprocessing as mp
        import errhints
        errhints.install()

        @dataclasses.dataclass(frozen=True)
        class Frozen(Exception):
            code: int

        def fail():
            from llamafactory.chat.sglang_engine import SGLangEngine
            try:
                SGLangEngine(400, "x")._generate()
            except RuntimeError as e:
                raise Frozen(3) from e

        if __name__ == "__main__":
            p = mp.get_context("fork").Process(target=fail)
            p.start(); p.join()
            print("exitcode", p.exitcode)
        """
    )
    assert "exitcode 1" in proc.stdout, proc.stderr
    assert proc.stderr.count(TITLE) == 1, proc.stderr
    assert proc.stderr.index("Frozen: 3") < proc.stderr.index(TITLE)
    assert proc.stderr.rstrip().splitlines()[-1].startswith("  More: errhints show")
