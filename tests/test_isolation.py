"""Isolation: errhints' doors never touch the network and write no file outside its cache.

One scenario sends the stand-in failures through every door (interpreter hooks, threads,
``__del__``, asyncio, logging, multiprocessing children, ``explain``/``annotate``, the
command line, ``errhints run``, IPython), twice in fresh child processes: once without
errhints and once with it. Every Python process of the run, grandchildren included, carries
an audit hook (from a ``sitecustomize`` on ``PYTHONPATH``) that records network calls and
file writes; the child also patches the socket functions to refuse and record. HOME,
XDG_CACHE_HOME, TMPDIR and the working directory are fresh temporary directories whose
contents are compared before and after. What errhints adds to the run must be nothing on the
network and nothing on disk outside the cache directory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from conftest import child_env

#: Imported at start-up by every Python process of the run: records network use and writes.
SITECUSTOMIZE = r"""
import os
import sys

_REPORT = os.environ.get("ISOLATION_REPORT")
if _REPORT:
    import json

    _fd = os.open(_REPORT, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    _WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
    # Which arguments of each event name a path that gets written (created, changed, removed).
    _PATH_EVENTS = {
        "os.mkdir": (0,), "os.remove": (0,), "os.rmdir": (0,), "os.truncate": (0,),
        "os.chmod": (0,), "os.chown": (0,), "os.utime": (0,), "os.rename": (0, 1),
        "os.replace": (0, 1), "os.symlink": (1,), "os.link": (1,), "shutil.copyfile": (1,),
        "shutil.copymode": (1,), "shutil.copystat": (1,), "shutil.move": (0, 1),
        "shutil.rmtree": (0,), "shutil.make_archive": (0,), "shutil.unpack_archive": (1,),
        "tempfile.mkstemp": (0,), "tempfile.mkdtemp": (0,), "sqlite3.connect": (0,),
    }
    _NET = ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr",
            "socket.getnameinfo", "socket.connect", "socket.sendto", "socket.sendmsg",
            "socket.bind", "urllib.Request", "http.client.connect", "ftplib.connect",
            "smtplib.connect", "webbrowser.open", "ssl.")

    def _path(value):
        if isinstance(value, int):
            return None
        try:
            return os.path.abspath(os.fsdecode(value))
        except Exception:
            return None

    def _record(kind, event, detail):
        line = json.dumps([os.getpid(), kind, event, detail]) + "\n"
        os.write(_fd, line.encode("utf-8", "backslashreplace"))

    def _audit(event, args):
        try:
            if event == "open":
                path, mode, flags = args
                writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                    mode is None and isinstance(flags, int) and flags & _WRITE
                )
                target = _path(path) if writes else None
                if target:
                    _record("write", event, target)
            elif event in _PATH_EVENTS:
                for i in _PATH_EVENTS[event]:
                    value = args[i] if i < len(args) else None
                    target = _path(value) if isinstance(value, (str, bytes, os.PathLike)) else None
                    if target:
                        _record("write", event, target)
            elif event.startswith(_NET):
                if event in ("socket.connect", "socket.sendto", "socket.bind", "socket.sendmsg"):
                    address = args[1] if len(args) > 1 else None
                    if not isinstance(address, tuple):  # AF_UNIX paths and the like
                        return
                _record("net", event, repr(args)[:300])
        except Exception:
            pass

    sys.addaudithook(_audit)
    _record("start", "process", " ".join(sys.argv)[:200])
"""

#: The scenario. argv: mode ("plain" or "errhints"), a log file to explain.
SCENARIO = r"""
import asyncio, contextlib, gc, io, json, logging, multiprocessing, socket, sys, threading

REFUSED = []


def refuse(name):
    def refused(*args, **kwargs):
        REFUSED.append(name)
        raise OSError(f"network use refused by the test: {name}")
    return refused


for _name in ("connect", "connect_ex", "sendto", "bind"):
    setattr(socket.socket, _name, refuse(f"socket.socket.{_name}"))
for _name in ("getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr",
              "getnameinfo", "create_connection"):
    setattr(socket, _name, refuse(f"socket.{_name}"))


def fail():
    from llamafactory.chat.sglang_engine import SGLangEngine
    SGLangEngine(400, "bad request")._generate()


def caught():
    try:
        fail()
    except RuntimeError as exc:
        return exc


class Holder:
    def __del__(self):
        fail()


async def never_retrieved():
    async def bad():
        fail()
    asyncio.get_running_loop().create_task(bad())
    await asyncio.sleep(0.05)


def main(mode, log_file):
    use = mode == "errhints"
    if use:
        import errhints
        errhints.install()
    # Interpreter hooks, threads, __del__, asyncio.
    thread = threading.Thread(target=fail)
    thread.start()
    thread.join()
    exc = caught()
    sys.excepthook(type(exc), exc, exc.__traceback__)
    holder = Holder()
    del holder
    gc.collect()
    asyncio.run(never_retrieved())
    gc.collect()
    # Logging: a record with exc_info, and SGLang's traceback-as-text pattern.
    logging.basicConfig(stream=sys.stderr)
    try:
        fail()
    except RuntimeError:
        logging.getLogger("scenario").exception("request failed")
    from sglang.srt.managers.scheduler import run_scheduler_process
    run_scheduler_process(fail)
    # Multiprocessing children that fail.
    for method in ("spawn", "fork"):
        process = multiprocessing.get_context(method).Process(target=fail)
        process.start()
        process.join(60)
    if use:
        from errhints._cli import main as cli
        from errhints._core.notes import attach

        errhints.explain(caught())
        attach(caught())

        @errhints.annotate
        def decorated():
            fail()

        with contextlib.suppress(RuntimeError):
            decorated()
        with contextlib.suppress(RuntimeError), errhints.annotating():
            fail()
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            for argv in (
                ["explain", log_file],
                ["explain", "--json", log_file],
                ["list"],
                ["list", "--json"],
                ["show", "llamafactory.sglang-server-error"],
                ["search", "out", "of", "memory"],
                ["doctor"],
                ["doctor", "--json"],
                ["catalog", "check"],
                ["run", "--", sys.executable, "-c", "raise SystemExit(0)"],
            ):
                cli(argv)
    # IPython, when it is installed.
    try:
        from IPython.core.interactiveshell import InteractiveShell
    except ImportError:
        pass
    else:
        shell = InteractiveShell.instance()
        if use:
            shell.run_line_magic("load_ext", "errhints")
        shell.run_cell(
            "from llamafactory.chat.sglang_engine import SGLangEngine\n"
            "SGLangEngine(400, 'x')._generate()"
        )
    if use:
        errhints.uninstall()
    print(json.dumps({"refused": REFUSED}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
"""

LOG = """\
[2026-01-01 10:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/opt/venv/lib/python3.11/site-packages/llamafactory/chat/sglang_engine.py", line 219, in stream_request
    raise RuntimeError(f"SGLang server error: {response.status_code}, {response.text}")
RuntimeError: SGLang server error: 400, {"object": "error", "message": "The input (9000 tokens) is longer than the model's context length (8192 tokens).", "code": 400}
"""


def tree(root: Path) -> dict[str, tuple[bool, int, int]]:
    """Every path under ``root``: (is a directory, size, mtime) — what changed shows up."""
    found = {}
    for path in root.rglob("*"):
        st = path.lstat()
        is_dir = path.is_dir() and not path.is_symlink()
        found[str(path.relative_to(root))] = (is_dir, 0 if is_dir else st.st_size, st.st_mtime_ns)
    return found


def changed(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    """New paths, and files whose size or time changed (directories only when new)."""
    return {
        path
        for path, info in after.items()
        if path not in before or (not info[0] and before[path] != info)
    }


def run_scenario(tmp: Path, standins_dir: Path, mode: str) -> dict[str, Any]:
    roots = {name: tmp / mode / name for name in ("home", "cache", "tmp", "work")}
    for root in roots.values():
        root.mkdir(parents=True)
    harness = tmp / mode / "harness"
    harness.mkdir()
    (harness / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    (roots["work"] / "scenario.py").write_text(textwrap.dedent(SCENARIO), encoding="utf-8")
    (roots["work"] / "server.log").write_text(LOG, encoding="utf-8")
    report = harness / "report.jsonl"
    env = child_env(standins_dir)
    env.update(
        PYTHONPATH=os.pathsep.join([str(harness), env["PYTHONPATH"]]),
        HOME=str(roots["home"]),
        XDG_CACHE_HOME=str(roots["cache"]),
        TMPDIR=str(roots["tmp"]),
        ISOLATION_REPORT=str(report),
        IPYTHONDIR=str(roots["home"] / ".ipython"),
    )
    env.pop("XDG_CONFIG_HOME", None)
    env.pop("XDG_DATA_HOME", None)
    before = {name: tree(root) for name, root in roots.items()}
    proc = subprocess.run(
        [sys.executable, "scenario.py", mode, "server.log"],
        cwd=roots["work"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    after = {name: tree(root) for name, root in roots.items()}
    events = [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines()]
    return {
        "proc": proc,
        "roots": roots,
        "changed": {name: changed(before[name], after[name]) for name in roots},
        "events": events,
        "refused": json.loads(proc.stdout.strip().splitlines()[-1])["refused"],
        "processes": [e[3] for e in events if e[1] == "start"],
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, standins_dir: Path) -> dict[str, Any]:
    """The scenario without and with errhints, each in fresh directories."""
    tmp = tmp_path_factory.mktemp("isolation")
    return {mode: run_scenario(tmp, standins_dir, mode) for mode in ("plain", "errhints")}


def test_the_doors_did_run(runs: dict[str, Any]) -> None:
    """The scenario is not vacuous: with errhints, the failures were explained (stderr has the
    notes), several Python processes ran under the audit hook, and without errhints none."""
    noted = runs["errhints"]["proc"].stderr
    assert noted.count("errhints: llamafactory.sglang-server-error") >= 6
    assert "errhints:" not in runs["plain"]["proc"].stderr
    processes = runs["errhints"]["processes"]
    assert len(processes) >= 3, processes  # the scenario, its spawn child, `errhints run`'s child
    assert any("raise SystemExit(0)" in p or p == "-c" for p in processes), processes


def test_no_door_touches_the_network(runs: dict[str, Any]) -> None:
    """No refused socket call was attempted and no process of the run used the network."""
    for mode in ("plain", "errhints"):
        assert runs[mode]["refused"] == [], mode
        network = [e for e in runs[mode]["events"] if e[1] == "net"]
        assert network == [], (mode, network[:5])


def test_no_door_writes_outside_the_cache(runs: dict[str, Any]) -> None:
    """Files errhints' run created or changed, beyond what the same run without errhints did,
    are all under XDG_CACHE_HOME: nothing in HOME, TMPDIR or the working directory, and no
    write anywhere else on the machine (per the audit hook)."""
    plain, noted = runs["plain"], runs["errhints"]
    for name in ("home", "tmp", "work"):
        extra = noted["changed"][name] - plain["changed"][name]
        assert extra == set(), (name, sorted(extra)[:10])
    extra = written(noted) - written(plain)
    outside = sorted(p for p in extra if not p.startswith("cache/") and p != os.devnull)
    assert outside == [], outside[:10]


def written(run: dict[str, Any]) -> set[str]:
    """Paths the run's processes opened for writing (or created, renamed, removed...), those
    under the run's own directories as ``home/...``, ``cache/...``, ``tmp/...``, ``work/...``."""
    out = set()
    for event in run["events"]:
        if event[1] != "write":
            continue
        path = event[3]
        for name, root in run["roots"].items():
            if path == str(root) or path.startswith(str(root) + os.sep):
                path = name + "/" + os.path.relpath(path, root)
                break
        out.add(path)
    return out
