"""What the site index costs: first and warm identification, import-time isolation, wheel size.

Measured in one run, as figures against budgets:

1. first identification in a fresh process: ``identify`` right after ``explain`` found no
   curated entry (import, index manifest, shard loading included), timed inside fresh
   interpreters next to ``explain`` of a curated failure (medians over ``--runs``, the two
   cases interleaved); budget: identification adds at most 30 ms to the explain;
2. warm identification (index loaded, several messages, many loops): median per call;
   budget 100 µs;
3. ``import errhints`` + ``errhints.install()`` leave ``errhints._core.siteindex`` (and its
   data) unloaded: checked in ``sys.modules`` of a fresh interpreter;
4. wheel growth: ``catalog/index`` deflated as zip members; budget 4 MB.

Usage: ``python benchmarks/bench_siteindex.py [--smoke] [--runs N] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
INDEX = ROOT / "catalog" / "index"

CURATED = (
    "RuntimeError",
    "alloc_req_slots runs out of memory. Please set a smaller number for "
    "`--max-running-requests`. req_to_token_pool.available_size()=0, num_reqs=4, ",
)
#: Messages no curated entry explains, each raised at an indexed site.
UNCURATED = [
    ("ValueError", "Quantization is only compatible with the LoRA method."),
    ("ValueError", "Invalid Ulysses rank 3 of 2."),
    ("ValueError", "--direct-gpu-weight-loading requires --tp-size 1"),
    ("AssertionError", "either input or output dim must be set"),
    ("RuntimeError", "resolution already failed on this ServerArgs; nothing else here"),
]

_FRESH = """
import sys, time
t0 = time.perf_counter()
import errhints
exc = {exc_type}({message!r})
errhints.explain(exc)
t1 = time.perf_counter()
if {identify}:
    from errhints._core.siteindex import identify
    found = identify({exc_type!r}, {message!r})
    assert found, "nothing identified"
t2 = time.perf_counter()
print((t1 - t0) * 1e3, (t2 - t1) * 1e3)
"""

_ISOLATION = """
import sys, errhints
errhints.install()
print(int("errhints._core.siteindex" in sys.modules))
"""


def _fresh(exc_type: str, message: str, identify: bool) -> tuple[float, float]:
    code = _FRESH.format(exc_type=exc_type, message=message, identify=identify)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    return float(out[0]), float(out[1])


def first_identification(runs: int) -> dict[str, float]:
    """Median ms: curated explain; uncurated explain; identify after it; the extra cost."""
    curated: list[float] = []
    uncurated: list[float] = []
    identify: list[float] = []
    exc_type, message = UNCURATED[0]
    for _ in range(runs):  # interleaved, so drift in machine load hits both alike
        curated.append(sum(_fresh(*CURATED, identify=False)))
        explain_ms, identify_ms = _fresh(exc_type, message, identify=True)
        uncurated.append(explain_ms + identify_ms)
        identify.append(identify_ms)
    return {
        "curated_explain_ms": statistics.median(curated),
        "uncurated_explain_plus_identify_ms": statistics.median(uncurated),
        "first_identify_ms": statistics.median(identify),
        "extra_ms": statistics.median(identify),
        "ratio_uncurated_to_curated": statistics.median(uncurated) / statistics.median(curated),
    }


def warm_identification(loops: int) -> dict[str, float]:
    """Median and p90 µs per ``identify`` call once the shards are loaded."""
    from errhints._core.siteindex import identify

    for exc_type, message in UNCURATED:
        identify(exc_type, message)
    per_call: list[float] = []
    for _ in range(loops):
        for exc_type, message in UNCURATED:
            start = time.perf_counter()
            identify(exc_type, message)
            per_call.append((time.perf_counter() - start) * 1e6)
    per_call.sort()
    return {
        "warm_identify_us": statistics.median(per_call),
        "warm_identify_p90_us": per_call[int(len(per_call) * 0.9)],
    }


def isolation() -> bool:
    """Whether ``import errhints`` + ``install()`` leave the site index unloaded."""
    out = subprocess.run(
        [sys.executable, "-c", _ISOLATION], capture_output=True, text=True, check=True
    ).stdout
    return out.strip() == "0"


def wheel_growth() -> dict[str, int]:
    """Raw bytes and zip-deflated bytes of ``catalog/index``."""
    buffer = io.BytesIO()
    raw = 0
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(INDEX.rglob("*")):
            if file.is_file():
                data = file.read_bytes()
                raw += len(data)
                archive.writestr(f"errhints/catalog/index/{file.relative_to(INDEX)}", data)
    return {"raw_bytes": raw, "zip_bytes": len(buffer.getvalue())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="fewer repetitions")
    parser.add_argument("--runs", type=int, default=None, help="fresh interpreters per case")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    if not (INDEX / "manifest.json").is_file():
        print(f"no site index at {INDEX}; run 'errhints catalog index build'")
        return 1
    runs = args.runs or (3 if args.smoke else 15)
    results: dict[str, Any] = {}
    results.update(first_identification(runs))
    results.update(warm_identification(50 if args.smoke else 2000))
    results["isolated"] = isolation()
    results.update(wheel_growth())
    rows = [
        ("curated explain, fresh process", f"{results['curated_explain_ms']:.1f} ms", ""),
        (
            "uncurated explain + identify, fresh",
            f"{results['uncurated_explain_plus_identify_ms']:.1f} ms",
            "",
        ),
        ("  ratio to curated explain", f"{results['ratio_uncurated_to_curated']:.2f}x", ""),
        ("first identify (added to explain)", f"{results['extra_ms']:+.1f} ms", "<= 30 ms",
         results["extra_ms"] <= 30),
        ("warm identify (median)", f"{results['warm_identify_us']:.1f} µs", "<= 100 µs",
         results["warm_identify_us"] <= 100),
        ("warm identify (p90)", f"{results['warm_identify_p90_us']:.1f} µs", ""),
        ("not loaded by import + install()", str(results["isolated"]), "True",
         results["isolated"]),
        ("catalog/index raw", f"{results['raw_bytes'] / 1e6:.2f} MB", ""),
        ("catalog/index zip-deflated", f"{results['zip_bytes'] / 1e6:.2f} MB", "<= 4 MB",
         results["zip_bytes"] <= 4_000_000),
    ]  # fmt: skip
    for row in rows:
        name, value, target = row[0], row[1], row[2]
        verdict = ("PASS" if row[3] else "MISS") if len(row) > 3 else ""
        print(f"{name:<40} {value:>12}  {target:<10} {verdict}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
