"""torchrun (torch elastic): the launcher's ``ChildFailedError`` is explained, ranks too.

Opt-in (``pytest -m integration``): needs real torch (CPU, gloo). See docs/integration.md.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import child_env

pytestmark = pytest.mark.integration
pytest.importorskip("torch.distributed.run")

TITLE = "errhints: llamafactory.sglang-server-error"

TRAIN = """
import os
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record


@record
def main():
    dist.init_process_group("gloo")
    from llamafactory.chat.sglang_engine import SGLangEngine
    SGLangEngine(400, "bad request")._generate()


if __name__ == "__main__":
    main()
"""

TORCHRUN = ["-m", "torch.distributed.run", "--nproc_per_node=2", "--monitor_interval=0.1"]


def run(
    args: list[str], standins_dir: Path, tmp_path: Path, **env: str
) -> subprocess.CompletedProcess[str]:
    (tmp_path / "train.py").write_text(TRAIN, encoding="utf-8")
    base = child_env(standins_dir, MASTER_PORT=str(29500 + os.getpid() % 1000), **env)
    base.pop("ERRHINTS_DEBUG", None)
    return subprocess.run(args, env=base, capture_output=True, text=True, timeout=300, cwd=tmp_path)


def test_errhints_run_carries_errhints_to_every_rank_and_the_launcher(
    standins_dir: Path, tmp_path: Path
) -> None:
    proc = run(
        [sys.executable, "-m", "errhints", "run", "--", sys.executable, *TORCHRUN, "train.py"],
        standins_dir,
        tmp_path,
    )
    assert proc.returncode == 1, proc.stderr[-3000:]
    err = proc.stderr
    # each rank's own traceback, and the launcher's summary of rank 0's, carry the note
    assert err.count(TITLE) >= 2, err[-4000:]
    assert "ChildFailedError" in err
    assert TITLE in err[err.rindex("ChildFailedError") :], err[-4000:]


def test_the_launcher_alone_explains_the_root_cause(standins_dir: Path, tmp_path: Path) -> None:
    """Only the launcher has errhints: it explains the rank's failure from the error file
    that ``@record`` wrote (and the summary's traceback text)."""
    launcher = (
        "import sys, errhints\n"
        "errhints.install(children=False)\n"
        "from torch.distributed.run import main\n"
        "main(sys.argv[1:])\n"
    )
    proc = run(
        [
            sys.executable,
            "-c",
            launcher,
            "--nproc_per_node=2",
            "--monitor_interval=0.1",
            "train.py",
        ],
        standins_dir,
        tmp_path,
    )
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert proc.stderr.count(TITLE) == 1, proc.stderr[-4000:]
    assert proc.stderr.index("ChildFailedError") < proc.stderr.index(TITLE)


def test_the_summary_in_a_log_is_explained(standins_dir: Path, tmp_path: Path) -> None:
    """Plain torchrun, no errhints anywhere: ``errhints explain`` reads its output."""
    proc = run([sys.executable, *TORCHRUN, "train.py"], standins_dir, tmp_path)
    assert proc.returncode == 1
    # the launcher's error line and its root-cause summary, without the ranks' own output
    summary = proc.stderr[proc.stderr.rindex("errors.ChildFailedError") - 40 :]
    assert "Root Cause" in summary
    explained = subprocess.run(
        [sys.executable, "-m", "errhints", "explain", "-"],
        input=summary,
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if not k.startswith("ERRHINTS")},
    )
    assert explained.returncode == 0, explained.stdout + explained.stderr
    assert TITLE in explained.stdout
