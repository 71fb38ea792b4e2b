"""``errhints run -- CMD``: the command runs with ERRHINTS=1 and exits as it exits."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import child_env
from wheelenv import WheelEnv, wheel_env

TITLE = "errhints: llamafactory.sglang-server-error"


def errhints_run(
    *args: str, standins_dir: Path, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """``python -m errhints run ARGS`` in a child process of this environment."""
    return subprocess.run(
        [sys.executable, "-m", "errhints", "run", *args],
        env=child_env(standins_dir, **(env or {})),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_command_sees_errhints_1_and_its_arguments(standins_dir: Path) -> None:
    """The command gets ERRHINTS=1 and exactly its own arguments, options included."""
    code = "import os, sys; print(os.environ['ERRHINTS'], sys.argv[1:])"
    proc = errhints_run("--", sys.executable, "-c", code, "-x", "--y", standins_dir=standins_dir)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "1 ['-x', '--y']"
    proc = errhints_run(sys.executable, "-c", code, "--z", standins_dir=standins_dir)
    assert proc.stdout.strip() == "1 ['--z']", proc.stderr


def test_exit_status_passes_through(standins_dir: Path) -> None:
    """``sys.exit(7)`` in the command is errhints' exit status too; success is 0."""
    proc = errhints_run(
        "--", sys.executable, "-c", "raise SystemExit(7)", standins_dir=standins_dir
    )
    assert proc.returncode == 7
    proc = errhints_run("--", sys.executable, "-c", "pass", standins_dir=standins_dir)
    assert proc.returncode == 0


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL, signal.SIGSEGV])
def test_command_killed_by_a_signal_exits_128_plus_n(standins_dir: Path, signum: int) -> None:
    """A command killed by signal N makes errhints exit 128+N, as a shell reports it."""
    code = f"import os; os.kill(os.getpid(), {int(signum)})"
    proc = errhints_run("--", sys.executable, "-c", code, standins_dir=standins_dir)
    assert proc.returncode == 128 + signum


def test_sigterm_to_errhints_is_forwarded_to_the_command(
    standins_dir: Path, tmp_path: Path
) -> None:
    """SIGTERM sent to ``errhints run`` reaches the command, whose own exit status is kept."""
    ready = tmp_path / "ready"
    code = (
        "import signal, sys, time, pathlib\n"
        "signal.signal(signal.SIGTERM, lambda *a: (print('child got SIGTERM', flush=True), sys.exit(5)))\n"
        f"pathlib.Path({str(ready)!r}).touch()\n"
        "time.sleep(30)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "errhints", "run", "--", sys.executable, "-c", code],
        env=child_env(standins_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert ready.exists()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert "child got SIGTERM" in out, err
    assert proc.returncode == 5


def test_missing_command_is_a_usage_error_and_unknown_command_is_127(standins_dir: Path) -> None:
    """No command: status 2 with a usage line; a command that does not exist: 127."""
    proc = errhints_run(standins_dir=standins_dir)
    assert proc.returncode == 2 and "usage: errhints run -- CMD" in proc.stderr
    proc = errhints_run("--", "no-such-command-errhints-test", standins_dir=standins_dir)
    assert proc.returncode == 127
    assert "command not found: no-such-command-errhints-test" in proc.stderr


def test_verbosity_and_catalog_options_reach_the_command(
    standins_dir: Path, tmp_path: Path
) -> None:
    """``--verbosity`` and ``--catalog`` become ERRHINTS_VERBOSITY and ERRHINTS_CATALOG_PATH."""
    code = "import os; print(os.environ['ERRHINTS_VERBOSITY'], os.environ['ERRHINTS_CATALOG_PATH'])"
    proc = errhints_run(
        "--verbosity",
        "full",
        "--catalog",
        str(tmp_path),
        "--",
        sys.executable,
        "-c",
        code,
        standins_dir=standins_dir,
        env={"ERRHINTS_CATALOG_PATH": "/existing"},
    )
    assert proc.stdout.split() == ["full", os.pathsep.join(["/existing", str(tmp_path)])], (
        proc.stderr
    )


@pytest.mark.slow
def test_failure_of_an_unmodified_script_is_explained(
    tmp_path_factory: pytest.TempPathFactory, standins_dir: Path, tmp_path: Path
) -> None:
    """End to end with the installed wheel: a script that never mentions errhints, run through
    ``errhints run``, gets the explanation; its subprocesses too; the status is the script's."""
    wenv: WheelEnv = wheel_env(tmp_path_factory)
    script = tmp_path / "train.py"
    script.write_text(
        "import subprocess, sys\n"
        "if sys.argv[1:] == ['parent']:\n"
        "    sys.exit(subprocess.run([sys.executable, __file__]).returncode)\n"
        "from llamafactory.chat.sglang_engine import SGLangEngine\n"
        "SGLangEngine(400, 'bad request')._generate()\n",
        encoding="utf-8",
    )
    for args in ([], ["parent"]):
        proc = subprocess.run(
            [str(wenv.bin / "errhints"), "run", "--", "python", str(script), *args],
            env=wenv.env(standins_dir),
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )
        assert proc.returncode == 1
        assert proc.stderr.count(TITLE) == 1, proc.stderr
        assert "errhints run: warning" not in proc.stderr  # the wheel has the start-up hook
    plain = subprocess.run(
        [str(wenv.python), str(script)], env=wenv.env(standins_dir), capture_output=True, text=True
    )
    assert plain.returncode == 1 and TITLE not in plain.stderr


def test_a_python_from_another_environment_gets_a_note(tmp_path: Path) -> None:
    """``errhints run -- python ...`` where ``python`` is another environment's interpreter
    says so on stderr, and still runs the command."""
    other = tmp_path / "otherenv" / "bin"
    other.mkdir(parents=True)
    fake = other / "python3"
    fake.write_text("#!/bin/sh\nexit 3\n")
    fake.chmod(0o755)
    proc = subprocess.run(
        [sys.executable, "-m", "errhints", "run", "--", "python3"],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": f"{other}{os.pathsep}{os.environ['PATH']}"},
    )
    assert proc.returncode == 3
    assert f"python3 ({fake}) is not the Python errhints is installed in" in proc.stderr


def test_an_absolute_python_path_is_not_compared_with_itself(tmp_path: Path) -> None:
    """``errhints run -- /path/python3``: the note names the path once."""
    other = tmp_path / "otherenv" / "bin"
    other.mkdir(parents=True)
    fake = other / "python3"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    proc = subprocess.run(
        [sys.executable, "-m", "errhints", "run", "--", str(fake)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0
    assert f"note: {fake} is not the Python errhints is installed in" in proc.stderr
    assert proc.stderr.count(str(fake)) == 1


def test_a_relative_catalog_path_is_made_absolute(standins_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "cat").mkdir()
    code = "import os; print(os.environ['ERRHINTS_CATALOG_PATH'])"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "errhints",
            "run",
            "--catalog",
            "cat",
            "--",
            sys.executable,
            "-c",
            code,
        ],
        env=child_env(standins_dir),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert proc.stdout.strip() == str(tmp_path / "cat"), proc.stderr


def _start_waiting_child(
    standins_dir: Path, tmp_path: Path, **popen: object
) -> subprocess.Popen[str]:
    ready = tmp_path / "ready"
    code = (
        "import signal, sys, time, pathlib\n"
        "def got(*a):\n"
        "    print('child got SIGINT', flush=True)\n"
        "signal.signal(signal.SIGINT, got)\n"
        f"pathlib.Path({str(ready)!r}).touch()\n"
        "deadline = time.monotonic() + 3\n"
        "while time.monotonic() < deadline: time.sleep(0.05)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "errhints", "run", "--", sys.executable, "-c", code],
        env=child_env(standins_dir),
        text=True,
        **popen,  # type: ignore[call-overload]
    )
    deadline = time.monotonic() + 30
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert ready.exists()
    time.sleep(0.2)  # errhints run is waiting (its SIGINT handling set up)
    return proc


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the signal's origin")
def test_sigint_sent_to_errhints_alone_is_forwarded(standins_dir: Path, tmp_path: Path) -> None:
    """``kill -INT <errhints run>`` reaches the command, once."""
    proc = _start_waiting_child(
        standins_dir, tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert out.count("child got SIGINT") == 1, err
    assert proc.returncode == 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs a pseudo-terminal")
def test_terminal_ctrl_c_reaches_the_command_once(standins_dir: Path, tmp_path: Path) -> None:
    """Ctrl-C on a terminal signals the whole foreground group: the command sees it once."""
    import pty

    leader, follower = pty.openpty()

    def session() -> None:  # a new session whose controlling terminal is the pty
        os.setsid()
        import fcntl
        import termios

        fcntl.ioctl(follower, termios.TIOCSCTTY, 0)

    proc = _start_waiting_child(
        standins_dir,
        tmp_path,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        preexec_fn=session,
    )
    os.write(leader, b"\x03")  # the terminal's interrupt character
    proc.wait(timeout=30)
    os.close(follower)
    output = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    os.close(leader)
    assert output.decode(errors="replace").count("child got SIGINT") == 1, output
