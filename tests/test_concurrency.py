"""Concurrency: many failures at once on first use, asyncio tasks, and forked children.

The catalog is loaded lazily on the first failure, so the first failures of a process race
for it. These tests run that race in fresh child processes (counting catalog loads by
wrapping ``errhints._core.catalog.load_catalog``), and fork children while the parent holds the
catalog, or while another thread holds errhints' locks. A deadlock shows up as a child that
``faulthandler`` stops, with every thread's stack on stderr.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
from pathlib import Path

import pytest

import errhints
from conftest import RunPy

NOTE = "errhints: llamafactory.sglang-server-error"
ID = "llamafactory.sglang-server-error"
needs_fork = pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")

#: Shared by the child scripts: a watchdog, a load counter, the stand-in failure.
PRELUDE = """
import faulthandler, json, os, sys, threading, time
faulthandler.dump_traceback_later(WATCHDOG, exit=True)

import errhints
import errhints._core.catalog as catalog
import errhints._core.state as state
from errhints._core.notes import attach

LOADS = []
_real_load = catalog.load_catalog
HOLD_IN = set()  # names of threads whose load blocks until RELEASE is set
RELEASE = threading.Event()
LOADING = threading.Event()


def counting_load(*args, **kwargs):
    LOADS.append(threading.current_thread().name)
    if threading.current_thread().name in HOLD_IN:
        LOADING.set()
        RELEASE.wait(30)
    time.sleep(0.02)  # widen the race window
    return _real_load(*args, **kwargs)


catalog.load_catalog = counting_load


def fail():
    from llamafactory.chat.sglang_engine import SGLangEngine
    SGLangEngine(400, "bad request")._generate()


def caught():
    try:
        fail()
    except RuntimeError as exc:
        return exc
    raise AssertionError("the stand-in did not raise")


def our_notes(exc):
    return sum(1 for n in getattr(exc, "__notes__", []) if n.startswith("errhints:"))
"""


def child(code: str, watchdog: int = 25) -> str:
    return PRELUDE.replace("WATCHDOG", str(watchdog)) + code


def last_json(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])


# -- threads ---------------------------------------------------------------------------------

THREADS = """
N = 32
seen, annotated, lock = {}, {}, threading.Lock()
previous = threading.excepthook


def record(args):
    with lock:
        seen[args.thread.name] = our_notes(args.exc_value)
    previous(args)


threading.excepthook = record  # errhints' hook wraps this one: it sees the noted exception
errhints.install(children=False)
barrier = threading.Barrier(N)


@errhints.annotate
def decorated():
    fail()


def uncaught():
    barrier.wait()
    fail()


def through_annotate():
    barrier.wait()
    try:
        decorated()
    except RuntimeError as exc:
        with lock:
            annotated[threading.current_thread().name] = our_notes(exc)


rounds = []
for round_ in range(int(sys.argv[1])):
    seen.clear(); annotated.clear(); LOADS.clear()
    state.reset()
    threads = [threading.Thread(target=uncaught if i % 2 else through_annotate, name=f"t{i}")
               for i in range(N)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    rounds.append({
        "alive": sum(t.is_alive() for t in threads),
        "hook_notes": sorted(seen.values()),
        "annotate_notes": sorted(annotated.values()),
        "loads": len(LOADS),
        "indexes": len(state._indexes),
    })
print(json.dumps({"rounds": rounds}))
"""


def test_many_threads_failing_at_first_use(run_py: RunPy) -> None:
    """32 threads fail at the same instant in a fresh process, half uncaught (threading hook),
    half through ``@annotate``: each exception gets exactly one note, the catalog is loaded
    exactly once, and no thread hangs. Repeated after forgetting the catalog."""
    proc = run_py(child(THREADS), args=("4",), timeout=90)
    assert proc.returncode == 0, proc.stderr[-4000:]
    for result in last_json(proc.stdout)["rounds"]:
        assert result["alive"] == 0
        assert result["hook_notes"] == [1] * 16
        assert result["annotate_notes"] == [1] * 16
        assert result["loads"] == 1
        assert result["indexes"] == 1
    assert proc.stderr.count(NOTE) == 16 * 4  # the uncaught ones, printed once each


def test_explain_from_many_threads_at_first_use(run_py: RunPy) -> None:
    """``errhints.explain`` called by 32 threads at once, before anything is loaded: every call
    returns the same answer and the catalog is loaded once."""
    code = """
        N = 32
        barrier, answers, lock = threading.Barrier(N), [], threading.Lock()
        excs = [caught() for _ in range(N)]

        def work(exc):
            barrier.wait()
            ids = [m.id for m in errhints.explain(exc)]
            with lock:
                answers.append(ids[:1])

        threads = [threading.Thread(target=work, args=(e,)) for e in excs]
        for t in threads:
            t.start()
        for t in threads:
            t.join(20)
        print(json.dumps({"answers": answers, "loads": len(LOADS),
                          "alive": sum(t.is_alive() for t in threads)}))
    """
    import textwrap

    proc = run_py(child(textwrap.dedent(code)), timeout=60)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = last_json(proc.stdout)
    assert out["alive"] == 0
    assert out["answers"] == [[ID]] * 32
    assert out["loads"] == 1


# -- asyncio ---------------------------------------------------------------------------------


def test_asyncio_tasks_failing_concurrently(standins: Path) -> None:
    """Many tasks fail together under ``gather(return_exceptions=True)``: each exception,
    annotated in its coroutine, carries one note, and ``explain`` (also run concurrently in
    worker threads) agrees on every one."""
    engine = importlib.import_module("llamafactory.chat.sglang_engine")

    @errhints.annotate
    async def task(i: int) -> int:
        await asyncio.sleep(0.001 * (i % 7))
        if i % 4 == 3:
            return i
        engine.SGLangEngine(400, f"request {i}")._generate()
        raise AssertionError("unreachable")

    async def main() -> tuple[list[object], list[list[str]]]:
        results = await asyncio.gather(*(task(i) for i in range(64)), return_exceptions=True)
        failures = [r for r in results if isinstance(r, BaseException)]
        explained = await asyncio.gather(
            *(asyncio.to_thread(errhints.explain, exc) for exc in failures)
        )
        return results, [[m.id for m in matches] for matches in explained]

    results, explained = asyncio.run(main())
    failures = [r for r in results if isinstance(r, BaseException)]
    assert len(failures) == 48
    assert [r for r in results if not isinstance(r, BaseException)] == list(range(3, 64, 4))
    for exc in failures:
        assert isinstance(exc, RuntimeError)
        notes = [n for n in exc.__notes__ if n.startswith("errhints:")]
        assert len(notes) == 1 and notes[0].startswith(NOTE)
    assert all(ids[:1] == [ID] for ids in explained)
    assert len({id(e) for e in failures}) == 48


def test_asyncio_tasks_failing_at_first_use_in_a_fresh_process(run_py: RunPy) -> None:
    """The same in a fresh process, where the tasks' first failures also load the catalog
    (from the executor threads ``to_thread`` uses): loaded once, one note each."""
    code = """
        import asyncio

        @errhints.annotate
        async def task(i):
            await asyncio.sleep(0)
            await asyncio.to_thread(fail)

        async def main():
            return await asyncio.gather(*(task(i) for i in range(40)), return_exceptions=True)

        results = asyncio.run(main())
        print(json.dumps({"notes": [our_notes(r) for r in results], "loads": len(LOADS)}))
    """
    import textwrap

    proc = run_py(child(textwrap.dedent(code)), timeout=60)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = last_json(proc.stdout)
    assert out["notes"] == [1] * 40
    assert out["loads"] == 1


# -- fork ------------------------------------------------------------------------------------

FORK_HELPERS = """
import signal


def in_fork(body, timeout=20):
    # Run body() in a forked child; return its JSON answer (or a description of its death).
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        # faulthandler's watchdog thread does not survive fork (re-arming it there hangs):
        # SIGALRM prints every thread's stack and ends the child instead.
        def stuck(signum, frame):
            faulthandler.dump_traceback(all_threads=True)
            os._exit(3)
        signal.signal(signal.SIGALRM, stuck)
        signal.alarm(timeout - 5)
        try:
            answer = body()
        except BaseException as exc:
            answer = {"error": repr(exc)}
        os.write(w, json.dumps(answer).encode())
        os._exit(0)
    os.close(w)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return {"error": "deadlock: the forked child did not finish"}
        time.sleep(0.01)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.close(r)
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and data:
        return json.loads(data)
    return {"error": f"child ended with status {status}: {data[-500:]!r}"}


def explain_here(extra=()):
    exc = caught()
    outcome = attach(exc)
    return {"ids": [m.id for m in errhints.explain(exc, catalog_paths=extra)][:1],
            "noted": our_notes(exc), "attached": outcome.attached, "loads": len(LOADS)}
"""


@needs_fork
def test_fork_after_the_catalog_is_loaded(run_py: RunPy) -> None:
    """A child forked after the parent loaded the catalog explains with the parent's copy: no
    reload, no deadlock; an os.fork child and a multiprocessing "fork" worker alike."""
    code = (
        FORK_HELPERS
        + """
import multiprocessing, warnings
warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads (3.12+)
parent = explain_here()


def worker(_):
    return explain_here()


with multiprocessing.get_context("fork").Pool(2) as pool:
    pooled = pool.map(worker, range(4))
print(json.dumps({"parent": parent, "forked": in_fork(explain_here), "pooled": pooled}))
"""
    )
    proc = run_py(child(code), timeout=60)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = last_json(proc.stdout)
    assert out["parent"] == {"ids": [ID], "noted": 1, "attached": True, "loads": 1}
    assert out["forked"] == out["parent"]  # loads still 1: nothing reloaded in the child
    assert out["pooled"] == [out["parent"]] * 4


@needs_fork
def test_fork_while_another_thread_holds_the_state_lock(run_py: RunPy) -> None:
    """Forked while another thread holds the catalog lock (mid-load, and idle-holding after
    the load): the child gets a working lock, loads what it needs, and answers."""
    code = (
        FORK_HELPERS
        + """
import tempfile, warnings
warnings.simplefilter("ignore", DeprecationWarning)
extra = (tempfile.mkdtemp(),)

# 1. Another thread is inside the first catalog load, holding the lock.
HOLD_IN.add("loader")
loader = threading.Thread(target=lambda: errhints.explain(caught()), name="loader")
loader.start()
assert LOADING.wait(10)
mid_load = in_fork(explain_here)
RELEASE.set()
loader.join(10)

# 2. The catalog is loaded; another thread just sits on the lock.
holding, stop = threading.Event(), threading.Event()


def sit():
    with state._lock:
        holding.set()
        stop.wait(30)


sitter = threading.Thread(target=sit)
sitter.start()
assert holding.wait(10)
loaded = in_fork(explain_here)
new_key = in_fork(lambda: explain_here(extra))  # a new key: the child must take the lock
reset = in_fork(lambda: (state.reset(), explain_here())[1])
stop.set()
sitter.join(10)
print(json.dumps({"mid_load": mid_load, "loaded": loaded, "new_key": new_key, "reset": reset,
                  "parent_loads": len(LOADS)}))
"""
    )
    proc = run_py(child(code), timeout=90)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = last_json(proc.stdout)
    good = {"ids": [ID], "noted": 1, "attached": True}
    for name in ("mid_load", "loaded", "new_key", "reset"):
        answer = out[name]
        assert "error" not in answer, (name, answer)
        assert {k: answer[k] for k in good} == good, (name, answer)
    # Mid-load, the child could not use the parent's half-built index: it loaded its own.
    assert out["mid_load"]["loads"] == 2
    assert out["loaded"]["loads"] == 1  # inherited, not reloaded
    assert out["new_key"]["loads"] == 2  # the new key's catalog, once
    assert out["reset"]["loads"] == 2
    assert out["parent_loads"] == 1


@needs_fork
def test_fork_while_another_thread_holds_every_errhints_lock(run_py: RunPy) -> None:
    """Forked while another thread holds each of errhints' module locks in turn: install,
    explain, attach and uninstall still work in the child."""
    code = (
        FORK_HELPERS
        + """
import warnings
warnings.simplefilter("ignore", DeprecationWarning)
errhints.install(children=False)
errhints.explain(caught())
import errhints._doors.processes, errhints._doors.environment, errhints._doors.hooks, errhints._doors.log_records
locks = {}
for name, module in sorted(sys.modules.items()):
    if name.startswith("errhints"):
        for attr, value in vars(module).items():
            if type(value).__name__ in ("lock", "RLock", "_RLock", "ForkSafeLock"):
                locks[f"{name}.{attr}"] = value


def everything():
    errhints.uninstall()
    errhints.install(children=False)
    answer = explain_here()
    errhints.uninstall()
    return answer


results = {}
for name, lock in locks.items():
    holding, stop = threading.Event(), threading.Event()

    def sit():
        with lock:
            holding.set()
            stop.wait(30)

    sitter = threading.Thread(target=sit)
    sitter.start()
    holding.wait(10)
    results[name] = in_fork(everything, timeout=8)
    stop.set()
    sitter.join(10)
print(json.dumps(results))
"""
    )
    proc = run_py(child(code, watchdog=80), timeout=120)
    assert proc.returncode == 0, proc.stderr[-4000:]
    results = last_json(proc.stdout)
    assert len(results) >= 4, results
    broken = {name: r["error"] for name, r in results.items() if "error" in r}
    assert broken == {}


def test_no_thread_is_left_behind(standins: Path) -> None:
    """Explaining starts no background thread of its own."""
    import threading

    before = set(threading.enumerate())
    engine = importlib.import_module("llamafactory.chat.sglang_engine")
    with pytest.raises(RuntimeError) as info:
        engine.SGLangEngine(400, "x")._generate()
    assert errhints.explain(info.value)
    assert set(threading.enumerate()) == before
    assert sys.modules["errhints._core.state"]._indexes  # type: ignore[attr-defined]
