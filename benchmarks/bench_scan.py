"""Benchmark the log scanner: throughput against ``grep -c Traceback`` and peak memory.

Generates a log of ordinary SGLang/LlamaFactory-style lines with a traceback every couple
of megabytes (plain, SGLang's ``Scheduler hit an exception:`` form, and torchrun's
``[rankN]:`` form), then times ``errhints._facts.scan.scan_stream`` and ``scan_text`` on it and
``grep -c Traceback`` on the same file, and measures the scanner's peak memory in a fresh
subprocess (``ru_maxrss`` and tracemalloc's peak).

    python benchmarks/bench_scan.py            # 100 MB log
    python benchmarks/bench_scan.py --smoke    # 5 MB log, for CI
    python benchmarks/bench_scan.py --json out.json
"""

# ruff: noqa: E501  (the sample tracebacks keep their real, long lines)
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"

ORDINARY = [
    "[{ts} TP{tp}] Prefill batch. #new-seq: {a}, #new-token: {b}, #cached-token: {c}, "
    "token usage: 0.{a:02d}, #running-req: {tp}, #queue-req: 0",
    "[{ts} TP{tp}] Decode batch. #running-req: {a}, #token: {b}, token usage: 0.{c:02d}, "
    "cuda graph: True, gen throughput (token/s): {b}.{a}, #queue-req: 0",
    '[{ts}] INFO:     127.0.0.1:{b} - "POST /generate HTTP/1.1" 200 OK',
    "[INFO|{ts}] llamafactory.train.trainer:{a} >> {{'loss': 1.{b}, 'grad_norm': 0.{c}, "
    "'learning_rate': 4.{a}e-05, 'epoch': 0.{c}}}",
    "[{ts} TP{tp}] Load weight begin. avail mem={a}.{c:02d} GB",
    "  {a}%|\u2588\u2588\u2588\u2588      | {a}/{b} [00:{c:02d}<01:{a:02d}, {tp}.{c}it/s]",
    "[rank{tp}]:[W{a:04d} {ts2} ProcessGroupNCCL.cpp:{b}] NCCL watchdog thread started",
    "{ts} - sglang.srt.managers.tokenizer_manager - INFO - Receive: "
    "obj=GenerateReqInput(rid='{b}')",
]

# Long lines are the point: real tracebacks carry long paths.
TRACEBACKS = [
    """Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 2571, in run
    scheduler.event_loop_overlap()
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/model_executor/model_runner.py", line 1401, in init_memory_pool
    raise RuntimeError(
RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.
""",
    """[{ts} TP3] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2571, in run_scheduler_process
    scheduler.event_loop_normal()
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 990, in event_loop_normal
    result = self.run_batch(batch)
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.15 GiB
""",
    """[rank1]: Traceback (most recent call last):
[rank1]:   File "/opt/conda/lib/python3.11/site-packages/llamafactory/data/loader.py", line 271, in _get_preprocessed_dataset
[rank1]:     raise RuntimeError("Cannot find valid samples, check `data/README.md` for the data format.")
[rank1]: RuntimeError: Cannot find valid samples, check `data/README.md` for the data format.
""",
]


def generate(path: Path, size_mb: float, seed: int = 7) -> tuple[int, int]:
    """Write the log; return (bytes, tracebacks written)."""
    rng = random.Random(seed)
    target = int(size_mb * 1024 * 1024)
    every = 2 * 1024 * 1024  # one traceback per ~2 MB
    written = tracebacks = 0
    next_tb = every // 2
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        while written < target:
            block: list[str] = []
            for _ in range(2000):
                sec = rng.randrange(60)
                fields = {
                    "ts": f"2026-01-01 10:{sec:02d}:{rng.randrange(60):02d}",
                    "ts2": f"10:{sec:02d}:00.{rng.randrange(10**6):06d}",
                    "tp": rng.randrange(8),
                    "a": rng.randrange(100),
                    "b": rng.randrange(10000),
                    "c": rng.randrange(100),
                }
                block.append(rng.choice(ORDINARY).format(**fields))
            text = "\n".join(block) + "\n"
            if written + len(text) >= next_tb:
                tb = rng.choice(TRACEBACKS).replace("{ts}", "2026-01-01 10:00:00")
                text += tb
                tracebacks += 1
                next_tb += every
            out.write(text)
            written += len(text.encode("utf-8"))
    return path.stat().st_size, tracebacks


def _best(fn, repeat: int) -> tuple[float, object]:
    best = float("inf")
    result: object = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


_CHILD = """
import sys, tracemalloc
sys.path.insert(0, {src!r})
from errhints._facts.scanner import scan_stream

def high_water():
    # VmHWM is per process image; ru_maxrss would carry the parent's peak over exec.
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

mode = sys.argv[1]
base = high_water()
if mode == "tracemalloc":
    tracemalloc.start()
with open({path!r}, "rb") as f:
    n = sum(1 for _ in scan_stream(f))
peak = tracemalloc.get_traced_memory()[1] if mode == "tracemalloc" else 0
print(n, base, high_water(), peak)
"""


def measure_memory(path: Path) -> dict[str, float]:
    """Peak memory of scanning ``path`` with scan_stream, in fresh interpreters (MiB)."""
    code = _CHILD.format(src=str(SRC), path=str(path))
    rss = subprocess.run(
        [sys.executable, "-c", code, "rss"], capture_output=True, text=True, check=True
    ).stdout.split()
    traced = subprocess.run(
        [sys.executable, "-c", code, "tracemalloc"], capture_output=True, text=True, check=True
    ).stdout.split()
    return {
        "rss_before_mib": int(rss[1]) / 1024,
        "rss_peak_mib": int(rss[2]) / 1024,
        "rss_growth_mib": (int(rss[2]) - int(rss[1])) / 1024,
        "tracemalloc_peak_mib": int(traced[3]) / (1024 * 1024),
    }


def run(size_mb: float, repeat: int, keep: Path | None) -> dict[str, object]:
    sys.path.insert(0, str(SRC))
    from errhints._facts.scanner import scan_stream, scan_text

    tmp = Path(tempfile.mkdtemp(prefix="errhints-bench-"))
    try:
        path = (keep or tmp) / "bench.log"
        size, tracebacks = generate(path, size_mb)
        mb = size / (1024 * 1024)
        grep = shutil.which("grep")
        grep_s = float("nan")
        grep_count = -1
        if grep:
            subprocess.run([grep, "-c", "Traceback", str(path)], capture_output=True)  # warm cache
            grep_s, out = _best(
                lambda: (
                    subprocess.run(
                        [grep, "-c", "Traceback", str(path)], capture_output=True, text=True
                    ).stdout
                ),
                repeat,
            )
            grep_count = int(str(out).strip() or 0)

        def stream() -> int:
            with open(path, "rb") as f:
                return sum(1 for _ in scan_stream(f))

        content = path.read_text(encoding="utf-8", errors="replace")

        def text() -> int:
            return len(scan_text(content))

        stream_s, stream_n = _best(stream, repeat)
        text_s, text_n = _best(text, repeat)
        content = ""  # free it before measuring memory
        memory = measure_memory(path)
        return {
            "log_mib": round(mb, 1),
            "tracebacks_written": tracebacks,
            "grep_count": grep_count,
            "findings_stream": stream_n,
            "findings_text": text_n,
            "grep_s": grep_s,
            "grep_mib_s": mb / grep_s if grep_s == grep_s else None,
            "scan_stream_s": stream_s,
            "scan_stream_mib_s": mb / stream_s,
            "scan_text_s": text_s,
            "scan_text_mib_s": mb / text_s,
            "stream_vs_grep": stream_s / grep_s if grep_s == grep_s else None,
            "python": sys.version.split()[0],
            **memory,
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="use a 5 MB log")
    parser.add_argument("--size-mb", type=float, default=None, help="log size (default 100)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs, best is kept")
    parser.add_argument("--json", type=Path, default=None, help="also write results here")
    parser.add_argument("--keep", type=Path, default=None, help="write the log into this dir")
    args = parser.parse_args(argv)
    size = args.size_mb or (5.0 if args.smoke else 100.0)
    result = run(size, args.repeat if not args.smoke else 1, args.keep)
    rows = [
        ("log size", f"{result['log_mib']} MiB, {result['tracebacks_written']} tracebacks"),
        ("grep -c Traceback", f"{result['grep_s']:.3f} s  ({result['grep_mib_s'] or 0:.0f} MiB/s)"),
        (
            "scan_stream",
            f"{result['scan_stream_s']:.3f} s  ({result['scan_stream_mib_s']:.0f} MiB/s), "
            f"{result['findings_stream']} findings",
        ),
        (
            "scan_text (in memory)",
            f"{result['scan_text_s']:.3f} s  ({result['scan_text_mib_s']:.0f} MiB/s), "
            f"{result['findings_text']} findings",
        ),
        ("scan_stream / grep", f"{result['stream_vs_grep'] or 0:.1f}x the time"),
        (
            "peak memory (stream)",
            f"high-water RSS {result['rss_peak_mib']:.1f} MiB "
            f"(+{result['rss_growth_mib']:.1f} over start), "
            f"tracemalloc {result['tracemalloc_peak_mib']:.2f} MiB",
        ),
    ]
    width = max(len(r[0]) for r in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())
