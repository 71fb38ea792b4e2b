"""Golden files for every kind of printed text: the note, ``show``, ``doctor`` and ``explain``.

A change of wording is a visible diff of ``tests/golden/``. After a deliberate change, rewrite
the files with ``ERRHINTS_UPDATE_GOLDEN=1 pytest tests/test_golden.py`` and review the diff.
The README's example is the golden note, so it cannot drift from what errhints prints.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"
EXAMPLES = ROOT / "examples"
STANDIN_FAILURE = (
    "import asyncio, errhints\n"
    "errhints.install()\n"
    "from llamafactory.chat.sglang_engine import SGLangEngine\n"
    "asyncio.run(SGLangEngine(context_length=8192).chat(prompt_tokens=9000))\n"
)


def run(*args: str, pythonpath: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ERRHINTS", "PYTHON"))}
    env["NO_COLOR"] = "1"
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
    )


def check(name: str, text: str) -> None:
    """Compare ``text`` with ``tests/golden/<name>``, or rewrite it in update mode."""
    path = GOLDEN / name
    if os.environ.get("ERRHINTS_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.is_file(), f"no golden file {path}; run with ERRHINTS_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8")


def the_note() -> str:
    """What a user sees at the end of the stand-in failure's traceback: last line and note."""
    proc = run("-c", STANDIN_FAILURE, pythonpath=EXAMPLES / "standins")
    assert proc.returncode == 1
    tail = proc.stderr[proc.stderr.index("\nKeyError: 'text'\n") + 1 :]
    return tail


def test_the_note() -> None:
    check("note.txt", the_note())


def test_the_readme_shows_the_golden_note() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_block = re.search(r"```\n(.*?)```", readme, re.S)
    assert first_block is not None
    assert first_block.group(1) == (GOLDEN / "note.txt").read_text(encoding="utf-8")


def test_show() -> None:
    proc = run("-m", "errhints", "show", "llamafactory.sglang-stream-error-chunk-keyerror")
    assert proc.returncode == 0, proc.stderr
    check("show.txt", proc.stdout)


def test_explain() -> None:
    proc = run("-m", "errhints", "explain", "examples/logs/scheduler.log")
    assert proc.returncode == 0, proc.stderr
    check("explain.txt", proc.stdout)


def normalized_doctor(text: str) -> str:
    """The doctor report with what differs between machines replaced by placeholders."""
    text = re.sub(r"^errhints \S+ \(.*\)$", "errhints <version> (<location>)", text, flags=re.M)
    text = re.sub(r"^Python \S+ \(.*\)$", "Python <version> (<executable>)", text, flags=re.M)
    text = re.sub(r"\d+ entries", "<n> entries", text)
    text = re.sub(
        r"verified against .*?( \[|$)", r"verified against <releases>\1", text, flags=re.M
    )
    text = re.sub(r"^( +)(/\S+)$", r"\1<path>", text, flags=re.M)
    return text


@pytest.mark.parametrize("name", ["doctor.txt"])
def test_doctor(name: str) -> None:
    proc = run("-m", "errhints", "doctor")
    assert proc.returncode == 0, proc.stderr
    check(name, normalized_doctor(proc.stdout))


@pytest.mark.parametrize(
    ("paste", "golden", "known"),
    [
        # dev/027: the paste stops in the middle of the stack; errhints says where, and what
        # to paste. The frame's source line is a call (get_dataset_list): the failure came
        # from below it, so the checks _get_merged_dataset raises itself are not named.
        ("dev/027-llamafactory-undefined-dataset-filepath-cut.txt", "explain-cut.txt", None),
        # dev/205: it stops in check_dependencies, where two failures the catalog knows come
        # from; they are named, not matched (the error line is not shown).
        (
            "dev/205-llamafactory-check-dependencies-internvl3-transfor.txt",
            "explain-cut-known.txt",
            ["llamafactory.dependency-version-check", "llamafactory.hf-version-metadata-missing"],
        ),
    ],
)
def test_explain_a_traceback_cut_before_its_error_line(
    paste: str, golden: str, known: list[str] | None
) -> None:
    path = f"tests/data/pastes/{paste}"
    proc = run("-m", "errhints", "explain", path)
    assert proc.returncode == 1
    check(golden, proc.stdout)
    data = run("-m", "errhints", "explain", "--json", path)
    (finding,) = json.loads(data.stdout)["findings"]
    assert finding["cut"] is True and finding["matches"] == []
    assert finding.get("known_here") == known
