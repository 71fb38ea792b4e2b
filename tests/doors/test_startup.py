"""``ERRHINTS=1``: the start-up hook of the wheel activates errhints in every new process."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from conftest import RunPy
from wheelenv import ROOT, WheelEnv, wheel_env

TITLE = "errhints: llamafactory.sglang-server-error"
FAIL = """
import sys
from llamafactory.chat.sglang_engine import SGLangEngine
print(sorted(m for m in ("errhints", "_errhints_startup") if m in sys.modules))
SGLangEngine(400, "bad request")._generate()
"""
PTH = ROOT / "src" / "errhints-startup.pth"
START = ROOT / "src" / "errhints-startup.start"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wenv(tmp_path_factory: pytest.TempPathFactory) -> WheelEnv:
    """A venv with errhints installed from a freshly built wheel."""
    return wheel_env(tmp_path_factory)


def _code_lines(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8-sig").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]


def test_startup_files_are_at_the_root_of_the_wheel(wenv: WheelEnv) -> None:
    """The wheel ships the .pth, its PEP 829 .start twin and the entry-point module at its root."""
    names = set(zipfile.ZipFile(wenv.wheel).namelist())
    assert {"errhints-startup.pth", "errhints-startup.start", "_errhints_startup.py"} <= names
    for name in ("errhints-startup.pth", "errhints-startup.start", "_errhints_startup.py"):
        assert (wenv.site_packages / name).is_file()


def test_pth_line_checks_the_variable_before_importing_anything(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One import line, which reads os.environ first and imports errhints only for ERRHINTS=1."""
    monkeypatch.delenv("ERRHINTS", raising=False)
    [line] = _code_lines(PTH)
    assert line.startswith("import os;")
    assert line.index('os.environ.get("ERRHINTS", "0")') < line.index("__import__")
    namespace: dict[str, object] = {}
    before = set(sys.modules)
    exec(compile(line, str(PTH), "exec"), namespace)  # what site.py does, with ERRHINTS unset
    assert "_errhints_startup" not in set(sys.modules) - before


def test_start_file_names_a_strict_entry_point_matching_the_pth() -> None:
    """PEP 829: ``<name>.start`` beside ``<name>.pth`` (same name) holds ``pkg.mod:callable`` lines."""
    assert START.stem == PTH.stem  # the match is what makes Python 3.15+ skip the import line
    [entry] = _code_lines(START)
    module, _, attr = entry.partition(":")
    assert module and attr and all(part.isidentifier() for part in [*module.split("."), attr])
    sys.path.insert(0, str(ROOT / "src"))
    try:
        assert callable(pkgutil.resolve_name(entry))
    finally:
        sys.path.remove(str(ROOT / "src"))
    START.read_bytes().decode("utf-8")  # PEP 829: .start files must be UTF-8


def test_without_the_variable_nothing_is_imported(
    wenv: WheelEnv, standins_dir: Path, tmp_path: Path
) -> None:
    """ERRHINTS unset (or 0): errhints is not even imported, and the failure is unexplained."""
    for extra in ({}, {"ERRHINTS": "0"}):
        proc = wenv.run(FAIL, tmp_path, standins_dir=standins_dir, env=extra)
        assert proc.returncode == 1
        assert proc.stdout.strip() == "[]"
        assert "RuntimeError: SGLang server error: 400, bad request" in proc.stderr
        assert "errhints" not in proc.stderr


def test_errhints_1_activates_errhints_with_no_code_change(
    wenv: WheelEnv, standins_dir: Path, tmp_path: Path
) -> None:
    """ERRHINTS=1: the same script's traceback carries the note, once."""
    proc = wenv.run(FAIL, tmp_path, standins_dir=standins_dir, env={"ERRHINTS": "1"})
    assert proc.returncode == 1
    assert proc.stdout.strip() == "['_errhints_startup', 'errhints']"
    assert proc.stderr.count(TITLE) == 1
    assert proc.stderr.index("RuntimeError: SGLang") < proc.stderr.index(TITLE)


def test_activation_reaches_threads_and_logging(
    wenv: WheelEnv, standins_dir: Path, tmp_path: Path
) -> None:
    """The start-up hook is a full ``install()``: thread hook and logging integration are on."""
    proc = wenv.run(
        """
        import errhints._doors.hooks, errhints._doors.log_records, errhints._startup
        print(errhints._doors.environment.activated_at_startup(), errhints._doors.hooks.state() == 'on',
              errhints._doors.log_records.state() == 'on')
        """,
        tmp_path,
        standins_dir=standins_dir,
        env={"ERRHINTS": "1"},
    )
    assert proc.stdout.split() == ["True", "True", "True"], proc.stderr


def test_install_propagates_to_subprocesses(
    wenv: WheelEnv, standins_dir: Path, tmp_path: Path
) -> None:
    """install() sets ERRHINTS=1, so a Python subprocess started afterwards explains its failure."""
    (tmp_path / "fail.py").write_text(FAIL, encoding="utf-8")
    code = """
        import os, subprocess, sys
        import errhints
        errhints.install(children=sys.argv[1] == "yes")
        print("ERRHINTS", os.environ.get("ERRHINTS"))
        subprocess.run([sys.executable, "fail.py"])
        """
    proc = wenv.run(code, tmp_path, standins_dir=standins_dir, args=("yes",))
    assert "ERRHINTS 1" in proc.stdout
    assert proc.stderr.count(TITLE) == 1
    proc = wenv.run(code, tmp_path, standins_dir=standins_dir, args=("no",))
    assert "ERRHINTS None" in proc.stdout
    assert "RuntimeError: SGLang server error" in proc.stderr
    assert TITLE not in proc.stderr


def test_the_start_entry_point_activates_like_python_3_15_would(
    wenv: WheelEnv, standins_dir: Path, tmp_path: Path
) -> None:
    """Emulates PEP 829 (Python 3.15+): no .pth processing, the .start entry points are called."""
    site_dir = wenv.site_packages
    code = (
        textwrap.dedent(
            f"""
        import pkgutil, sys
        sys.path.append({str(site_dir)!r})  # -S: no .pth processed, as if its import line were skipped
        sys.path.extend(open({str(site_dir / "zz_errhints_test_deps.pth")!r}).read().split())
        for line in open({str(site_dir / "errhints-startup.start")!r}, encoding="utf-8-sig"):
            line = line.strip()
            if line and not line.startswith("#"):
                pkgutil.resolve_name(line)()
        """
        )
        + FAIL
    )
    for value, explained in (("1", True), (None, False)):
        env = {"ERRHINTS": value} if value else {}
        proc = subprocess.run(
            [str(wenv.python), "-S", "-c", code],
            env=wenv.env(standins_dir, **env),
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=60,
        )
        assert ("'errhints'" in proc.stdout) is explained, proc.stderr
        assert (proc.stderr.count(TITLE) == 1) is explained, proc.stderr


def test_a_broken_errhints_never_breaks_start_up(wenv: WheelEnv, tmp_path: Path) -> None:
    """If errhints cannot be imported, ERRHINTS=1 processes start normally; debug mode says why."""
    shadow = tmp_path / "shadow"
    (shadow / "errhints").mkdir(parents=True)
    (shadow / "errhints" / "__init__.py").write_text("raise ImportError('broken errhints')\n")
    env = {"ERRHINTS": "1", "PYTHONPATH": str(shadow)}
    proc = wenv.run("print('started')", tmp_path, env=env)
    assert proc.returncode == 0 and proc.stdout.strip() == "started"
    assert proc.stderr == ""
    loud = wenv.run("print('started')", tmp_path, env={**env, "ERRHINTS_DEBUG": "1"})
    assert loud.returncode == 0 and loud.stdout.strip() == "started"
    assert "start-up hook could not import errhints" in loud.stderr
    assert "broken errhints" in loud.stderr


def test_development_checkout_startup_module_is_cheap(run_py: RunPy) -> None:
    """``_errhints_startup`` (what Python 3.15+ imports in every process) imports nothing when off."""
    proc = run_py(
        """
        import sys
        before = set(sys.modules)
        import _errhints_startup
        _errhints_startup.activate()
        print(sorted(set(sys.modules) - before))
        """
    )
    assert proc.stdout.strip() == "['_errhints_startup']", proc.stderr


def test_startup_files_name_the_same_variables_as_the_package() -> None:
    """The start-up files spell the variables out (they import nothing); they must agree."""
    from errhints._config import ENV_DEBUG, ENV_ENABLE, FALSE_VALUES, TRUE_VALUES

    src = Path(__file__).resolve().parents[2] / "src"
    entry = (src / "_errhints_startup.py").read_text(encoding="utf-8")
    assert f'os.environ.get("{ENV_ENABLE}", "")' in entry
    assert f'os.environ.get("{ENV_DEBUG}", "")' in entry
    assert f"_TRUE = {TRUE_VALUES!r}".replace("'", '"') in entry
    assert f"_FALSE = {FALSE_VALUES!r}".replace("'", '"') in entry
    pth = (src / "errhints-startup.pth").read_text(encoding="utf-8")
    assert f'"{ENV_ENABLE}"' in pth
    assert f"not in {FALSE_VALUES!r}".replace("'", '"') in pth


@pytest.mark.parametrize("value", ["1", "true", "YES", "on", " On "])
def test_truthy_spellings_activate(value: str, run_py: RunPy) -> None:
    """``ERRHINTS=true``, ``yes``, ``on`` (any case) turn errhints on like ``1``."""
    proc = run_py(
        """
        import _errhints_startup, errhints._doors as d
        _errhints_startup.activate()
        print(d.states()["hooks"])
        """,
        env={"ERRHINTS": value},
    )
    assert proc.stdout.strip() == "on", proc.stderr
    assert proc.stderr == ""


def test_unknown_value_warns_once_and_stays_off(run_py: RunPy) -> None:
    """``ERRHINTS=maybe``: one line on stderr, errhints stays off."""
    proc = run_py(
        """
        import _errhints_startup, errhints._doors as d
        _errhints_startup.activate()
        print(d.states()["hooks"])
        """,
        env={"ERRHINTS": "maybe"},
    )
    assert proc.stdout.strip() == "off"
    assert proc.stderr == "errhints: ignoring ERRHINTS='maybe': use 1/true/yes/on or 0/false\n"


def test_pth_line_accepts_truthy_spellings(monkeypatch: pytest.MonkeyPatch) -> None:
    """The .pth line itself reaches the start-up module for every truthy spelling, not for off."""
    [line] = _code_lines(PTH)
    calls: list[str] = []

    class Fake:
        @staticmethod
        def activate() -> None:
            calls.append("x")

    for value, expected in [("yes", 1), ("TRUE", 1), ("on", 1), ("0", 0), ("off", 0), ("", 0)]:
        calls.clear()
        monkeypatch.setenv("ERRHINTS", value)
        namespace = {
            "__builtins__": {
                "__import__": lambda name, *a: (
                    Fake if name == "_errhints_startup" else __import__(name, *a)
                )
            }
        }
        exec(compile(line, str(PTH), "exec"), namespace)
        assert len(calls) == expected, value
