"""Ray: a failure inside a task or actor reaches the driver as ``RayTaskError`` with the note.

Opt-in (``pytest -m integration``): needs the real ``ray`` package; a local cluster on the
CPU. See docs/integration.md for the venv these tests run in.
"""

from __future__ import annotations

import pytest

from conftest import RunPy

pytestmark = pytest.mark.integration
pytest.importorskip("ray")

TITLE = "errhints: llamafactory.sglang-server-error"

DRIVER = f"""
import os, sys
import errhints
mode = sys.argv[1]
if mode == "children":
    errhints.install()  # ERRHINTS=1 in os.environ before ray.init: every worker activates
import ray
ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)


def fail():
    from llamafactory.chat.sglang_engine import SGLangEngine
    SGLangEngine(400, "bad request")._generate()


@ray.remote
def task():
    fail()


@ray.remote
class Engine:
    def generate(self):
        fail()


def message(ref):
    try:
        ray.get(ref)
    except Exception as err:
        return type(err).__name__, str(err), err
    raise AssertionError("no error")


if mode == "children":
    for ref in (task.remote(), Engine.remote().generate.remote()):
        name, text, _ = message(ref)
        print(name, "WORKER-NOTED" if {TITLE!r} in text else "PLAIN")
elif mode == "runtime_env":
    env = {{"env_vars": {{"ERRHINTS": "1"}}}}
    name, text, _ = message(task.options(runtime_env=env).remote())
    print(name, "WORKER-NOTED" if {TITLE!r} in text else "PLAIN")
else:  # the driver alone has errhints; the worker had none
    errhints.install(children=False)
    name, text, err = message(task.remote())
    print(name, "WORKER-NOTED" if {TITLE!r} in text else "PLAIN", flush=True)
    ray.shutdown()
    raise err
ray.shutdown()
"""


def test_workers_started_after_install_note_their_failures(run_py: RunPy) -> None:
    """``errhints.install(children=True)`` before ``ray.init``: task and actor failures come
    back to the driver as RayTaskError whose text carries the worker's note."""
    proc = run_py(DRIVER, args=("children",), timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.split()
    assert lines.count("WORKER-NOTED") == 2, proc.stdout + proc.stderr[-3000:]
    assert all(name.startswith("RayTaskError") for name in lines[::2])


def test_runtime_env_errhints_1_reaches_the_worker(run_py: RunPy) -> None:
    proc = run_py(DRIVER, args=("runtime_env",), timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "WORKER-NOTED" in proc.stdout, proc.stdout + proc.stderr[-3000:]


def test_the_driver_explains_a_worker_without_errhints(run_py: RunPy) -> None:
    """The worker had no errhints: the driver's hook explains the RayTaskError from the
    remote traceback text in its message."""
    proc = run_py(DRIVER, args=("driver",), timeout=300)
    assert "PLAIN" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    assert proc.returncode == 1
    assert proc.stderr.count(TITLE) == 1, proc.stderr[-3000:]
    assert proc.stderr.index("SGLang server error: 400") < proc.stderr.index(TITLE)
