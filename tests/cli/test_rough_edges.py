"""Rough edges of the CLI, the user catalog and the settings: one test each."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import RunPy

ROOT = Path(__file__).resolve().parents[2]
PACKAGED = ROOT / "catalog" / "llamafactory" / "sglang-server-error.toml"

FAIL = """
import errhints
errhints.install()
from llamafactory.chat.sglang_engine import SGLangEngine
SGLangEngine(400, "bad request")._generate()
"""


def errhints(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("ERRHINTS")}
    return subprocess.run(
        [sys.executable, "-m", "errhints", *args],
        capture_output=True,
        text=True,
        env={**base, **(env or {})},
        timeout=120,
    )


@pytest.mark.parametrize("limit", ["-1", "0", "x"])
def test_search_limit_must_be_a_positive_number(limit: str) -> None:
    """``--limit -1`` crashed rapidfuzz and ``--limit 0`` said nothing matched: usage error."""
    proc = errhints("search", "--limit", limit, "out", "of", "memory")
    assert proc.returncode == 2
    assert "argument --limit" in proc.stderr
    assert proc.stdout == ""


def test_search_ranks_ties_and_explains_the_score() -> None:
    """Results are sorted by score, ties broken by closeness of the title; the score is explained."""
    proc = errhints("search", "--limit", "5", "out", "of", "memory", "cuda", "graph")
    assert proc.returncode == 0
    assert "score:" in proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 5
    scores = [int(line.rsplit("(", 1)[1].rstrip(")")) for line in lines]
    assert scores == sorted(scores, reverse=True)
    assert lines[0].startswith("sglang.oom-during-cuda-graph-capture")
    assert errhints("search", "--limit", "5", "out", "of", "memory", "cuda", "graph").stdout == (
        proc.stdout
    )


def test_an_unknown_flag_is_named() -> None:
    """``errhints --frobnicate`` names the flag instead of asking for a COMMAND."""
    proc = errhints("--frobnicate")
    assert proc.returncode == 2
    assert "unrecognized arguments: --frobnicate" in proc.stderr
    assert "required" not in proc.stderr
    assert "COMMAND is required" in errhints().stderr


def test_list_package_any_case_and_unknown_rejected() -> None:
    """``list --package SGLang`` lists SGLang's entries; an unknown package is a usage error."""
    proc = errhints("list", "--package", "SGLang")
    assert proc.returncode == 0
    assert proc.stdout.startswith("sglang.")
    assert not proc.stderr.startswith("0 entries")
    bad = errhints("list", "--package", "vllm")
    assert bad.returncode == 2
    assert "unknown package 'vllm'" in bad.stderr


def test_catalog_help_works() -> None:
    proc = errhints("catalog", "-h")
    assert proc.returncode == 0
    assert "check" in proc.stdout and "verify" in proc.stdout


def test_show_indents_multi_line_templates(tmp_path: Path) -> None:
    """Continuation lines of a multi-line message stay under the message column."""
    text = PACKAGED.read_text(encoding="utf-8")
    text = text.replace(
        'template = "SGLang server error: {response.status_code}, {response.text}"',
        'template = """SGLang server error: {response.status_code},\nsecond line {response.text}"""',
    )
    (tmp_path / "llamafactory").mkdir()
    (tmp_path / "llamafactory" / "sglang-server-error.toml").write_text(text, encoding="utf-8")
    proc = errhints("show", "--catalog", str(tmp_path), "llamafactory.sglang-server-error")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    i = next(i for i, line in enumerate(lines) if line.startswith("  message:"))
    assert lines[i + 1] == " " * 13 + "second line {response.text}"


def _broken_catalog(tmp_path: Path) -> Path:
    folder = tmp_path / "mycat"
    (folder / "sglang").mkdir(parents=True)
    (folder / "sglang" / "broken.toml").write_text("id = [unclosed", encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    "command",
    [
        ["list"],
        ["show", "llamafactory.sglang-server-error"],
        ["explain", "-"],
    ],
)
def test_a_broken_user_catalog_is_reported_once(command: list[str], tmp_path: Path) -> None:
    """A user catalog that fails to load is said once on stderr, one line per problem."""
    folder = _broken_catalog(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "errhints", *command],
        input="RuntimeError: SGLang server error: 400, x\n",
        capture_output=True,
        text=True,
        env={**os.environ, "ERRHINTS_CATALOG_PATH": str(folder)},
        timeout=120,
    )
    problems = [line for line in proc.stderr.splitlines() if "broken.toml" in line]
    assert len(problems) == 1, proc.stderr
    assert problems[0].startswith("errhints: catalog problem")


def test_a_missing_catalog_option_directory_is_reported() -> None:
    proc = errhints("list", "--catalog", "/nonexistent/errhints-cat")
    assert proc.returncode == 0
    assert "errhints: catalog directory skipped: /nonexistent/errhints-cat" in proc.stderr


def test_install_reports_a_broken_user_catalog_without_failing(
    run_py: RunPy, tmp_path: Path
) -> None:
    """In a crashing program: the problem line, then the normal traceback with the note."""
    folder = _broken_catalog(tmp_path)
    proc = run_py(FAIL, env={"ERRHINTS_CATALOG_PATH": str(folder)})
    assert proc.returncode == 1
    assert proc.stderr.count("broken.toml") == 1
    assert "errhints: llamafactory.sglang-server-error" in proc.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_in_a_catalog_folder_is_skipped(run_py: RunPy, tmp_path: Path) -> None:
    """A FIFO named like an entry used to hang the crashing process; it is skipped."""
    folder = tmp_path / "fifocat"
    (folder / "sglang").mkdir(parents=True)
    os.mkfifo(folder / "sglang" / "pipe.toml")
    os.mkfifo(folder / "top.toml")
    start = time.monotonic()
    proc = run_py(FAIL, env={"ERRHINTS_CATALOG_PATH": str(folder)}, timeout=30)
    assert time.monotonic() - start < 30
    assert "errhints: llamafactory.sglang-server-error" in proc.stderr


def test_a_huge_meaning_is_bounded(run_py: RunPy, tmp_path: Path) -> None:
    """A 20 MB file is not read whole, and a long meaning prints a few lines in the note."""
    folder = tmp_path / "bigcat"
    (folder / "llamafactory").mkdir(parents=True)
    text = PACKAGED.read_text(encoding="utf-8")
    start = text.index('meaning = """')
    end = text.index('"""', start + 13) + 3
    huge = text[:start] + 'meaning = """' + "word " * 4_000_000 + '"""' + text[end:]
    (folder / "llamafactory" / "huge.toml").write_text(huge, encoding="utf-8")
    long = text[:start] + 'meaning = """' + "word " * 100_000 + '"""' + text[end:]
    (folder / "llamafactory" / "sglang-server-error.toml").write_text(long, encoding="utf-8")
    proc = run_py(FAIL, env={"ERRHINTS_CATALOG_PATH": str(folder)})
    assert "huge.toml: (file): is larger than 1 MiB" in proc.stderr
    assert len(proc.stderr) < 5000
    note = proc.stderr[proc.stderr.index("errhints: llamafactory.sglang-server-error") :]
    assert len(note.splitlines()) < 15


def test_unknown_verbosity_is_reported_once(run_py: RunPy) -> None:
    proc = run_py(FAIL, env={"ERRHINTS_VERBOSITY": "loud"})
    assert proc.stderr.count("ignoring ERRHINTS_VERBOSITY='loud'") == 1
    assert "errhints: llamafactory.sglang-server-error" in proc.stderr


def test_a_note_for_a_cause_says_so(run_py: RunPy) -> None:
    """An SGLang error that is the cause of the raised one: the note says it explains the cause."""
    proc = run_py(
        """
        import errhints
        errhints.install()
        from llamafactory.chat.sglang_engine import SGLangEngine
        try:
            SGLangEngine(400, "bad request")._generate()
        except RuntimeError as err:
            raise ValueError("my wrapper failed") from err
        """
    )
    assert "ValueError: my wrapper failed" in proc.stderr
    assert "(explains the direct cause of this error" in proc.stderr
