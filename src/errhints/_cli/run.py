"""``errhints run -- CMD [ARGS...]``: run a command with ``ERRHINTS=1``, exit as it exits.

Every Python process the command starts (and their children) activates errhints through
the start-up hook of the installed wheel, with no change to the command. The exit status
passes through; a command killed by signal N exits 128+N, as a shell reports it.
SIGINT and SIGQUIT from the terminal reach the command directly (same process group), so
errhints does not pass those on; SIGTERM and SIGHUP sent to errhints are forwarded, and so is
a SIGINT sent to errhints alone (``kill -INT``): on Linux errhints tells the two apart by
the signal's origin (``si_code``: the terminal's is the kernel's, a ``kill`` is a user's).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence
from types import FrameType
from typing import Any

from .._config import ENV_CATALOG_PATH, ENV_ENABLE, ENV_VERBOSITY, VERBOSITIES
from .common import Subparsers, add_catalog_option

__all__ = ["add_parser", "child_environment", "run_command"]

_FORWARDED = ("SIGTERM", "SIGHUP", "SIGUSR1", "SIGUSR2")
_IGNORED = ("SIGINT", "SIGQUIT")


def child_environment(
    base: dict[str, str] | None = None,
    *,
    verbosity: str | None = None,
    catalog_dirs: Sequence[str] = (),
) -> dict[str, str]:
    """The command's environment: ``base`` (``os.environ``) plus ``ERRHINTS=1`` and options."""
    env = dict(os.environ if base is None else base)
    env[ENV_ENABLE] = "1"
    if verbosity is not None:
        env[ENV_VERBOSITY] = verbosity
    if catalog_dirs:
        existing = [p for p in env.get(ENV_CATALOG_PATH, "").split(os.pathsep) if p]
        env[ENV_CATALOG_PATH] = os.pathsep.join([*existing, *catalog_dirs])
    return env


def _exit_status(returncode: int) -> int:
    """A shell's view of the status: killed by signal N is 128+N."""
    return 128 - returncode if returncode < 0 else returncode


def _warn_without_startup_hook() -> None:
    """Say so when this environment lacks the start-up hook that ``ERRHINTS=1`` relies on."""
    try:
        from .._doors.environment import startup_hook

        hook = startup_hook()
    except Exception:
        return
    if not hook["installed"]:
        print(
            f"errhints run: warning: {hook['uses']} is not in this environment's site-packages, "
            "so Python processes here will not activate errhints (see `errhints doctor`)",
            file=sys.stderr,
        )


def _warn_other_python(command: Sequence[str]) -> None:
    """Say so when the command's ``python`` is not the interpreter errhints is installed in."""
    name = os.path.basename(command[0])
    if not (name == "python" or name.startswith("python3")) or name.endswith("-config"):
        return
    found = shutil.which(command[0])
    if found is None:
        return
    ours = os.path.dirname(os.path.abspath(sys.executable))
    if os.path.dirname(os.path.abspath(found)) != ours:
        same = os.path.abspath(found) == os.path.abspath(command[0])
        named = command[0] if same else f"{command[0]} ({found})"
        print(
            f"errhints run: note: {named} is not the Python errhints is installed in "
            f"({sys.executable}); if errhints is not installed there, its failures will not "
            "be explained",
            file=sys.stderr,
        )


def run_command(
    argv: Sequence[str], *, verbosity: str | None = None, catalog_dirs: Sequence[str] = ()
) -> int:
    """Run ``argv`` with errhints activated; return its exit status (127: not found)."""
    command = list(argv)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        print(
            "errhints run: no command given (usage: errhints run -- CMD [ARGS...])", file=sys.stderr
        )
        return 2
    env = child_environment(verbosity=verbosity, catalog_dirs=catalog_dirs)
    _warn_without_startup_hook()
    _warn_other_python(command)
    try:
        proc = subprocess.Popen(command, env=env)
    except FileNotFoundError:
        print(f"errhints run: command not found: {command[0]}", file=sys.stderr)
        return 127
    except PermissionError:
        print(f"errhints run: permission denied: {command[0]}", file=sys.stderr)
        return 126
    except OSError as err:
        print(f"errhints run: cannot run {command[0]}: {err}", file=sys.stderr)
        return 126

    def forward(signum: int, frame: FrameType | None) -> None:
        with contextlib.suppress(OSError):
            proc.send_signal(signum)

    previous: dict[int, Any] = {}
    for name in (*_FORWARDED, *_IGNORED):
        signum = getattr(signal, name, None)
        if signum is None:
            continue
        with contextlib.suppress(OSError, ValueError):  # not the main thread, or unsupported
            previous[signum] = signal.signal(
                signum, forward if name in _FORWARDED else signal.SIG_IGN
            )
    try:
        returncode = _wait(proc)
    finally:
        for signum, handler in previous.items():
            with contextlib.suppress(OSError, ValueError):
                signal.signal(signum, handler)
    return _exit_status(returncode)


_SI_KERNEL = 0x80  # Linux: a signal the kernel sent, e.g. the terminal's Ctrl-C


def _wait(proc: subprocess.Popen[bytes]) -> int:
    """Wait for the command; forward a SIGINT that was sent to errhints alone.

    Ctrl-C in a terminal signals the whole foreground process group, the command included,
    so it is not passed on (the command would see it twice). Where the signal's origin can
    be read (``sigtimedwait``, Linux), a SIGINT from ``kill`` is forwarded to the command.
    """
    sigint = signal.SIGINT
    can_tell = hasattr(signal, "sigtimedwait") and hasattr(signal, "pthread_sigmask")
    if can_tell:
        try:
            old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, {sigint})
        except (OSError, ValueError):
            can_tell = False
    if not can_tell:
        while True:
            try:
                return proc.wait()
            except KeyboardInterrupt:  # SIGINT was not ignorable here: keep waiting
                continue
    try:
        while True:
            try:
                return proc.wait(timeout=0.05)
            except subprocess.TimeoutExpired:
                pass
            info = signal.sigtimedwait({sigint}, 0)
            if info is not None and info.si_code != _SI_KERNEL:
                with contextlib.suppress(OSError):
                    proc.send_signal(sigint)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)


def _cmd_run(args: argparse.Namespace) -> int:
    # The command may run elsewhere (cd in a script): relative catalog paths become absolute.
    catalogs = [os.path.abspath(p) for p in args.catalog]
    return run_command(args.cmd, verbosity=args.verbosity, catalog_dirs=catalogs)


def add_parser(sub: Subparsers) -> None:
    """``errhints run [--verbosity V] [--catalog DIR] -- CMD [ARGS...]``."""
    p = sub.add_parser(
        "run", help="run a command with errhints active in every Python process it starts"
    )
    add_catalog_option(p)
    p.add_argument(
        "--verbosity",
        choices=VERBOSITIES,
        default=None,
        help="set ERRHINTS_VERBOSITY for the command",
    )
    p.add_argument(
        "cmd",
        nargs=argparse.REMAINDER,
        metavar="-- CMD [ARGS...]",
        help="the command; its exit status is errhints' (killed by signal N: 128+N)",
    )
    p.set_defaults(func=_cmd_run)
