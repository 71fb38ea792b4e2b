"""``errhints explain`` on the inputs people give it: repeats, streams, odd files, bad bytes."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest


def errhints(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "errhints", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=120,
    )


SITE = "/usr/lib/python3/site-packages"

#: One SGLang scheduler failure as each of 8 TP ranks logs it.
RANKS = "".join(
    f"[2025-06-11 09:30:02 TP{rank}] Scheduler hit an exception: Traceback (most recent call"
    " last):\n"
    f'  File "{SITE}/sglang/srt/managers/scheduler.py", line 2571, in run_scheduler_process\n'
    "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)\n"
    "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n"
    for rank in range(8)
)


def test_the_same_failure_from_many_ranks_is_one_finding(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(RANKS, encoding="utf-8")
    data = json.loads(errhints("explain", "--json", str(log)).stdout)
    assert len(data["findings"]) == 1
    assert data["findings"][0]["count"] == 8
    assert data["findings"][0]["lines"] == [1, 5, 9, 13, 17, 21, 25, 29]
    text = errhints("explain", str(log)).stdout
    assert text.count("Not enough memory") == 1 and "seen 8 times" in text
    every = json.loads(errhints("explain", "--json", "--all", str(log)).stdout)
    assert len(every["findings"]) == 8


def test_requests_differing_only_in_numbers_are_grouped() -> None:
    bodies = "".join(
        f'{{"object":"error","message":"The input ({n} tokens) is longer than the model\'s'
        ' context length (8192 tokens).","type":"BadRequestError","param":null,"code":400}\n'
        for n in range(9000, 9200)
    )
    data = json.loads(errhints("explain", "--json", "-", stdin=bodies).stdout)
    assert [f["count"] for f in data["findings"]] == [200]


def test_a_directory_and_a_missing_file_do_not_stop_the_others(tmp_path: Path) -> None:
    good = tmp_path / "good.log"
    good.write_text(RANKS, encoding="utf-8")
    proc = errhints("explain", str(tmp_path), str(tmp_path / "missing.log"), str(good))
    assert f"{tmp_path}: is a directory" in proc.stderr
    assert "missing.log: no such file" in proc.stderr
    assert "Not enough memory" in proc.stdout
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr


def test_gzip_and_utf16_logs(tmp_path: Path) -> None:
    packed = tmp_path / "server.log.gz"
    packed.write_bytes(gzip.compress(RANKS.encode()))
    wide = tmp_path / "server-utf16.log"
    wide.write_bytes(RANKS.replace("\n", "\r\n").encode("utf-16"))
    for path in (packed, wide):
        data = json.loads(errhints("explain", "--json", str(path)).stdout)
        assert [f["count"] for f in data["findings"]] == [8], path


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_argument(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    proc = subprocess.Popen(
        [sys.executable, "-m", "errhints", "explain", "--json", str(fifo)],
        stdout=subprocess.PIPE,
        text=True,
    )
    with open(fifo, "w", encoding="utf-8") as writer:
        writer.write(RANKS)
    out, _ = proc.communicate(timeout=60)
    assert json.loads(out)["findings"][0]["count"] == 8


def test_stdin_findings_come_out_while_the_stream_is_open() -> None:
    """``tail -f server.log | errhints explain -``: a finding is printed once its traceback
    is complete, before the input ends."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "errhints", "explain", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(RANKS.split("[2025-06-11 09:30:02 TP1]")[0])
    proc.stdin.write("[2025-06-11 09:30:03] INFO: next record\n")
    proc.stdin.flush()
    start = time.monotonic()
    first = proc.stdout.readline()
    assert "Not enough memory" in first
    assert time.monotonic() - start < 30
    proc.stdin.close()
    proc.stdout.read()
    proc.wait(timeout=60)


def test_bad_input_never_raises(tmp_path: Path) -> None:
    junk = tmp_path / "junk.bin"
    junk.write_bytes(bytes(range(256)) * 64 + b"\xff" * (5 << 20) + b"\nValueError: x\n")
    nested = tmp_path / "nested.log"
    nested.write_text(("[rank0]: (pid=1) " * 2000 + "> " * 500 + "ValueError: x\n") * 50)
    for path in (junk, nested):
        proc = errhints("explain", str(path))
        assert proc.returncode in (0, 1), proc.stderr
        assert "Traceback" not in proc.stderr


#: SGLang logs a failed warm-up as its own words followed by the traceback on the same line
#: (https://github.com/sgl-project/sglang/issues/16855).
WARMUP = (
    "[2026-01-10 08:01:13] Initialization failed. warmup error: Traceback (most recent call"
    " last):\n"
    '  File "/envs/SGLang/lib/python3.11/site-packages/sglang/srt/entrypoints/http_server.py",'
    " line 1434, in _execute_server_warmup\n"
    '    assert res.status_code == 200, f"{res=}, {res.text=}"\n'
    "AssertionError: res=<Response [502]>, res.text=''\n"
)


def test_words_logged_before_a_traceback_are_explained_with_it() -> None:
    proc = errhints("explain", "--json", "-", stdin=WARMUP)
    assert proc.returncode == 0, proc.stderr
    [finding] = json.loads(proc.stdout)["findings"]
    assert finding["exception"]["type"] == "AssertionError"
    ids = [m["id"] for m in finding["matches"]]
    assert "sglang.initialization-failed-warmup" in ids


def test_the_real_error_comes_before_the_words_that_wrap_it() -> None:
    proc = errhints("explain", "-", stdin=RANKS[: RANKS.index("\n[")] + "\n")
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.startswith(("errhints:", "  also:"))]
    assert lines[0].startswith("errhints: sglang.not-enough-memory-increase-mem-fraction")
    assert lines[1].startswith("  also: sglang.scheduler-hit-exception-sigquit")


def test_words_before_a_cut_traceback_still_count() -> None:
    text = (
        "[2025-06-11 09:30:02 TP3] Scheduler hit an exception: Traceback (most recent call last):\n"
    )
    proc = errhints("explain", "-", stdin=text)
    assert proc.returncode == 0, proc.stderr
    assert "errhints: sglang.scheduler-hit-exception-sigquit" in proc.stdout


def test_every_development_paste_is_read_without_a_traceback_of_errhints() -> None:
    """The real pastes under tests/data/pastes/dev, all in one run: findings or nothing, never
    errhints' own traceback (what they should explain is scored by scripts/paste_report.py)."""
    pastes = sorted((Path(__file__).resolve().parents[1] / "data" / "pastes" / "dev").glob("*"))
    assert len(pastes) > 250
    proc = errhints("explain", "--json", "--", *map(str, pastes))
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    findings = json.loads(proc.stdout)["findings"]
    assert {f["file"] for f in findings} <= set(map(str, pastes))
