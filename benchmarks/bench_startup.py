"""What the ERRHINTS=1 start-up hook costs every Python process when the variable is unset.

Four measurements:

1. in-process, the ``.pth`` line as ``site.py`` runs it (``exec`` of the source string, so
   compiling included), and the check alone (the same line precompiled);
2. ``site.addpackage`` on the shipped ``errhints-startup.pth`` (open, read, decode and
   exec: the whole per-file cost for Python 3.11-3.14), warm in-process, and as the first
   call in fresh interpreters next to an empty ``.pth`` (their difference is the line's
   cost at a real start-up);
3. in a fresh interpreter, ``import _errhints_startup; activate()`` (what Python 3.15+
   does for the ``.start`` entry point), and the ``pkgutil`` import 3.15 adds once when
   any ``.start`` file exists;
4. ``python -c pass`` in two throw-away venvs that differ only by the ``.pth``,
   interleaved, many runs: the end-to-end difference (small next to process noise).

Usage: ``python benchmarks/bench_startup.py [--smoke] [--json FILE] [--runs N] [--loops N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
import venv
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PTH = SRC / "errhints-startup.pth"
START_MODULE = SRC / "_errhints_startup.py"


def pth_line() -> str:
    """The import line of the shipped ``.pth`` file."""
    for line in PTH.read_text(encoding="utf-8").splitlines():
        if line.startswith(("import ", "import\t")):
            return line
    raise SystemExit(f"no import line in {PTH}")


def per_call(stmt: Any, loops: int, repeat: int = 5) -> float:
    """Best-of-``repeat`` seconds per call of ``stmt``, ``loops`` calls per repeat."""
    return min(timeit.repeat(stmt, number=loops, repeat=repeat)) / loops


def bench_line(loops: int) -> dict[str, float]:
    """The .pth line: as site.py runs it (compile + exec), and precompiled (the check alone)."""
    os.environ.pop("ERRHINTS", None)
    line = pth_line()
    code = compile(line, "errhints-startup.pth", "exec")
    namespace: dict[str, Any] = {}
    return {  # compiling costs ~20x the check: a tenth of the loops keeps the run short
        "exec_source_us": per_call(lambda: exec(line, namespace), max(loops // 10, 100)) * 1e6,
        "exec_compiled_us": per_call(lambda: exec(code, namespace), loops) * 1e6,
    }


def bench_addpackage(loops: int) -> dict[str, float]:
    """``site.addpackage`` on the shipped file: everything site.py does for it, per process."""
    import site

    os.environ.pop("ERRHINTS", None)
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(PTH, tmp)
        name = PTH.name
        known: set[str] = set()
        seconds = per_call(lambda: site.addpackage(tmp, name, known), loops)
    return {"site_addpackage_us": seconds * 1e6}


def bench_cold_addpackage(python: str, runs: int) -> dict[str, float]:
    """The first ``site.addpackage`` in fresh interpreters (``-S``): the shipped .pth versus an
    empty .pth, so the difference is what the import line adds to a real start-up."""
    code = (
        "import site, sys, time\n"
        "t0 = time.perf_counter()\n"
        "site.addpackage(sys.argv[1], sys.argv[2], set())\n"
        "print(time.perf_counter() - t0)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ERRHINTS", "PYTHON"))}
    samples: dict[str, list[float]] = {"hook": [], "empty": []}
    with tempfile.TemporaryDirectory() as tmp:
        dirs = {"hook": Path(tmp) / "hook", "empty": Path(tmp) / "empty"}
        for kind, directory in dirs.items():
            directory.mkdir()
            target = directory / PTH.name
            if kind == "hook":
                shutil.copy(PTH, target)
            else:
                target.write_text("")
        for _ in range(runs):
            for kind, directory in dirs.items():
                out = subprocess.run(
                    [python, "-S", "-c", code, str(directory), PTH.name],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
                samples[kind].append(float(out))
    hook, empty = statistics.median(samples["hook"]), statistics.median(samples["empty"])
    return {
        "cold_addpackage_hook_us": hook * 1e6,
        "cold_addpackage_empty_us": empty * 1e6,
        "cold_line_cost_us": (hook - empty) * 1e6,
    }


def bench_start_entry_point(python: str, runs: int) -> dict[str, float]:
    """Python 3.15+: importing and calling the .start entry point, in fresh interpreters."""
    code = (
        "import time, sys\n"
        "t0 = time.perf_counter()\n"
        "import _errhints_startup\n"
        "_errhints_startup.activate()\n"
        "t1 = time.perf_counter()\n"
        "import pkgutil\n"
        "t2 = time.perf_counter()\n"
        "print(t1 - t0, t2 - t1)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ERRHINTS", "PYTHON"))}
    env["PYTHONPATH"] = str(SRC)
    entry, pkgutil_import = [], []
    for _ in range(runs):
        out = subprocess.run(
            [python, "-c", code], env=env, capture_output=True, text=True, check=True
        ).stdout.split()
        entry.append(float(out[0]))
        pkgutil_import.append(float(out[1]))
    return {
        "start_entry_point_us": statistics.median(entry) * 1e6,
        "pkgutil_import_us": statistics.median(pkgutil_import) * 1e6,
    }


def bench_processes(runs: int) -> dict[str, float]:
    """``python -c pass`` in two venvs, identical but for the .pth, interleaved; medians, means."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ERRHINTS", "PYTHON"))}
    with tempfile.TemporaryDirectory() as tmp:
        pythons: dict[bool, str] = {}
        for present in (False, True):
            env_dir = Path(tmp) / ("with" if present else "without")
            venv.create(env_dir, with_pip=False, symlinks=True)
            [site_dir] = (env_dir / "lib").glob("python3.*/site-packages")
            shutil.copy(START_MODULE, site_dir)
            if present:
                shutil.copy(PTH, site_dir)
            pythons[present] = str(env_dir / "bin" / "python")
        times: dict[bool, list[float]] = {False: [], True: []}
        for python in pythons.values():  # warm the page cache
            for _ in range(3):
                subprocess.run([python, "-c", "pass"], env=env, check=True)
        for i in range(2 * runs):
            present = i % 2 == 1
            t0 = time.perf_counter()
            subprocess.run([pythons[present], "-c", "pass"], env=env, check=True)
            times[present].append(time.perf_counter() - t0)
    without, with_ = times[False], times[True]
    diff = [b - a for a, b in zip(without, with_, strict=True)]
    stderr = statistics.stdev(diff) / len(diff) ** 0.5 if len(diff) > 1 else float("nan")
    return {
        "runs": float(runs),
        "python_c_pass_without_ms": statistics.median(without) * 1e3,
        "python_c_pass_with_ms": statistics.median(with_) * 1e3,
        "difference_of_medians_us": (statistics.median(with_) - statistics.median(without)) * 1e6,
        "mean_paired_difference_us": statistics.fmean(diff) * 1e6,
        "paired_difference_stderr_us": stderr * 1e6,
    }


def table(results: dict[str, float]) -> str:
    """The results as an aligned two-column table."""
    labels = {
        "exec_source_us": "the .pth line as site.py runs it (compile + exec), µs",
        "exec_compiled_us": "the check alone (precompiled line), µs",
        "site_addpackage_us": "site.addpackage(errhints-startup.pth), warm, µs",
        "cold_addpackage_hook_us": "first site.addpackage in a fresh process: the .pth, µs",
        "cold_addpackage_empty_us": "first site.addpackage in a fresh process: empty .pth, µs",
        "cold_line_cost_us": "=> what the disabled hook adds to a start-up, µs",
        "start_entry_point_us": "3.15+: import + call _errhints_startup.activate, µs",
        "pkgutil_import_us": "3.15+: pkgutil import site.py adds for .start files, µs",
        "runs": "python -c pass runs (each, with and without)",
        "python_c_pass_without_ms": "python -c pass without the .pth, median ms",
        "python_c_pass_with_ms": "python -c pass with the .pth, median ms",
        "difference_of_medians_us": "difference of medians, µs",
        "mean_paired_difference_us": "mean paired difference, µs",
        "paired_difference_stderr_us": "± standard error of the paired difference, µs",
    }
    width = max(len(v) for v in labels.values())
    rows = [f"{'measurement':<{width}}  value", f"{'-' * width}  ---------"]
    for key, value in results.items():
        rows.append(f"{labels.get(key, key):<{width}}  {value:9.2f}")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks, print a table, optionally write JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="a quick run (few loops and runs)")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--loops", type=int, default=None, help="in-process loops (default 1e6)")
    parser.add_argument("--runs", type=int, default=None, help="process pairs (default 300)")
    args = parser.parse_args(argv)
    loops = args.loops or (2_000 if args.smoke else 1_000_000)
    runs = args.runs or (5 if args.smoke else 300)
    results: dict[str, float] = {}
    results |= bench_line(loops)
    results |= bench_addpackage(max(loops // 50, 100))
    results |= bench_cold_addpackage(sys.executable, 5 if args.smoke else 100)
    results |= bench_start_entry_point(sys.executable, 3 if args.smoke else 30)
    results |= bench_processes(runs)
    print(f"errhints start-up hook, ERRHINTS unset; Python {platform.python_version()}")
    print(table(results))
    if args.json:
        payload = {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "loops": loops,
            "smoke": args.smoke,
            "results": results,
        }
        Path(args.json).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
