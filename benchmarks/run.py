#!/usr/bin/env python3
"""errhints benchmarks: one command, a table on stdout, the figures as JSON.

    python benchmarks/run.py              # full run (a minute or two)
    python benchmarks/run.py --smoke      # CI: fewer repetitions, well under 60 s
    python benchmarks/run.py --compare    # also time friendly-traceback (temp venv, needs PyPI)
    python benchmarks/run.py --json FILE  # JSON here (default benchmarks/results/latest.json)

Machines are noisy, so every figure is a median (with its p90) over many repetitions;
anything that depends on a cold interpreter runs in fresh subprocesses; and comparisons are
ratios taken within the same run. Targets are printed beside the figures with PASS or MISS,
but a miss never changes the exit status. The exit status is 1 only when the benchmark itself
broke (a measurement raised); measurements whose module does not exist yet are skipped with a
note.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
BENCH = ROOT / "benchmarks"
DEFAULT_JSON = BENCH / "results" / "latest.json"
DEPTHS = (1, 10, 100)
CATALOG_SIZES = (100, 1_000, 10_000)
RESULT_MARK = "@@RESULT "

# --------------------------------------------------------------------------------------------
# Results


@dataclass
class Row:
    """One line of the table (and one object of the JSON)."""

    name: str
    median: float | None
    p90: float | None = None
    unit: str = ""
    target: str = ""
    ok: bool | None = None  # None: no target
    n: int = 0
    note: str = ""
    group: str = ""

    @property
    def status(self) -> str:
        if self.median is None:
            return "SKIP"
        if self.ok is None:
            return ""
        return "PASS" if self.ok else "MISS"


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def add(self, row: Row) -> Row:
        self.rows.append(row)
        return row

    def skip(self, group: str, name: str, why: str) -> None:
        self.rows.append(Row(name=name, median=None, note=why, group=group))


def median_p90(values: Sequence[float]) -> tuple[float, float]:
    """The median and the 90th percentile (nearest rank) of ``values``."""
    ordered = sorted(values)
    rank = max(math.ceil(0.9 * len(ordered)) - 1, 0)
    return statistics.median(ordered), ordered[rank]


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    shown = "µs" if unit == "us" else unit
    if unit == "x":
        return f"{value:.2f}x"
    if abs(value) >= 100:
        return f"{value:.0f} {shown}"
    if abs(value) >= 10:
        return f"{value:.1f} {shown}"
    return f"{value:.2f} {shown}"


def print_table(report: Report, header: str) -> None:
    widths = (52, 11, 11, 12, 6)
    print(header)
    line = (
        f"{'measurement':<{widths[0]}} {'median':>{widths[1]}} {'p90':>{widths[2]}} "
        f"{'target':>{widths[3]}} {'':<{widths[4]}}  n    note"
    )
    print(line)
    print("-" * len(line))
    group = None
    for row in report.rows:
        if row.group != group:
            group = row.group
            print(f"[{group}]")
        name = row.name if len(row.name) <= widths[0] else row.name[: widths[0] - 1] + "…"
        print(
            f"{name:<{widths[0]}} {fmt(row.median, row.unit):>{widths[1]}} "
            f"{fmt(row.p90, row.unit):>{widths[2]}} {row.target:>{widths[3]}} "
            f"{row.status:<{widths[4]}} {row.n or '':>4}    {row.note}"
        )
    for note in report.notes:
        print(f"note: {note}")
    for error in report.errors:
        print(f"ERROR: {error}")


# --------------------------------------------------------------------------------------------
# The child side: stand-in packages plus a small helper module every child imports

#: Written into the stand-in ``sglang`` package, so that recursion happens in an SGLang frame.
DEPTH_MODULE = '''
"""Benchmark helper inside the stand-in sglang package: exceptions with a chosen depth."""

from functools import partial

from sglang.srt.disaggregation.encoder.server import InternalError, MMEncoder


def recurse(n, fail):
    if n <= 0:
        return fail()
    return recurse(n - 1, fail)


def throw(exc):
    raise exc


def _trim(exc, depth):
    tb = exc.__traceback__
    count, t = 0, tb
    while t is not None:
        count, t = count + 1, t.tb_next
    while count > depth:
        tb, count = tb.tb_next, count - 1
    return exc.with_traceback(tb)


def make(depth):
    """InternalError raised at its catalogued site, with a traceback of exactly ``depth`` frames."""
    try:
        recurse(max(depth - 2, 0), partial(MMEncoder()._validate_embedding_token_count, 5, 6))
    except InternalError as exc:
        return _trim(exc, depth)
    raise AssertionError("the stand-in did not raise")


def make_other(message, depth):
    """A RuntimeError with ``message`` raised under ``depth`` SGLang frames (no catalog site)."""
    try:
        recurse(max(depth - 2, 0), partial(throw, RuntimeError(message)))
    except RuntimeError as exc:
        return _trim(exc, depth)
    raise AssertionError("did not raise")
'''

#: Imported by every child: timing loops and the way results come back.
CHILD_LIB = '''
"""Timing helpers for benchmark children (written by benchmarks/run.py)."""

import json
import sys
import time

MARK = "@@RESULT "


def emit(obj):
    sys.stdout.write(MARK + json.dumps(obj) + "\\n")
    sys.stdout.flush()


def calibrate(fn, round_seconds):
    k = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(k):
            fn()
        if time.perf_counter() - t0 >= round_seconds or k >= 1 << 20:
            return k
        k *= 2


def per_call(fns, budget, min_rounds=7, max_rounds=400, round_seconds=0.004):
    """Seconds per call of each function: one sample per round, rounds interleaved."""
    loops = {name: calibrate(fn, round_seconds) for name, fn in fns.items()}
    samples = {name: [] for name in fns}
    end = time.perf_counter() + budget
    rounds = 0
    while rounds < max_rounds and (rounds < min_rounds or time.perf_counter() < end):
        for name, fn in fns.items():
            k = loops[name]
            t0 = time.perf_counter()
            for _ in range(k):
                fn()
            samples[name].append((time.perf_counter() - t0) / k)
        rounds += 1
    return samples
'''


@dataclass
class Ctx:
    """Where the children run: the temp tree, the environment, the repetition counts."""

    tmp: Path
    lib: Path
    env: dict[str, str]
    python: str
    smoke: bool
    report: Report

    def reps(self, full: int, smoke: int) -> int:
        return smoke if self.smoke else full

    def budget(self, full: float, smoke: float) -> float:
        return smoke if self.smoke else full

    def child(
        self,
        code: str,
        *,
        python: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 300,
        args: Sequence[str] = (),
    ) -> Any:
        """Run ``code`` in a fresh interpreter; return what it passed to ``emit``."""
        script = self.tmp / f"child_{time.monotonic_ns()}.py"
        script.write_text(textwrap.dedent(code), encoding="utf-8")
        try:
            proc = subprocess.run(
                [python or self.python, str(script), *args],
                env=env or self.env,
                capture_output=True,
                text=True,
                timeout=timeout,
                cwd=self.tmp,
            )
        finally:
            script.unlink(missing_ok=True)
        for line in reversed(proc.stdout.splitlines()):
            if line.startswith(RESULT_MARK):
                return json.loads(line[len(RESULT_MARK) :])
        raise RuntimeError(
            f"child exited {proc.returncode} without a result:\n{proc.stderr[-3000:]}"
        )


def make_ctx(tmp: Path, smoke: bool, report: Report) -> Ctx:
    lib = tmp / "lib"
    lib.mkdir()
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from standins import write_standins
    finally:
        sys.path.remove(str(ROOT / "tests"))
    write_standins(lib)
    (lib / "sglang" / "srt" / "_errhints_bench.py").write_text(
        textwrap.dedent(DEPTH_MODULE).lstrip(), encoding="utf-8"
    )
    (lib / "_bench_child.py").write_text(textwrap.dedent(CHILD_LIB).lstrip(), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ERRHINTS", "PYTHON"))}
    env["PYTHONPATH"] = os.pathsep.join([str(lib), str(SRC)])
    return Ctx(tmp=tmp, lib=lib, env=env, python=sys.executable, smoke=smoke, report=report)


def ms(seconds: float) -> float:
    return seconds * 1e3


def us(seconds: float) -> float:
    return seconds * 1e6


# --------------------------------------------------------------------------------------------
# Measurements


def interleaved_startup(
    ctx: Ctx, commands: dict[str, list[str]], reps: int, env: dict[str, str]
) -> dict[str, list[float]]:
    """Wall time of each command, fresh process each time, order alternating per round."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    names = list(commands)
    for name in names:  # warm the page cache and the .pyc files first
        subprocess.run(commands[name], env=env, check=True, capture_output=True, cwd=ctx.tmp)
    for i in range(reps):
        for name in names if i % 2 == 0 else reversed(names):
            t0 = time.perf_counter()
            subprocess.run(commands[name], env=env, check=True, capture_output=True, cwd=ctx.tmp)
            times[name].append(time.perf_counter() - t0)
    return times


def bench_import(ctx: Ctx, call: str) -> dict[str, float]:
    group = "import"
    reps = ctx.reps(60, 15)
    times = interleaved_startup(
        ctx,
        {
            "pass": [ctx.python, "-c", "pass"],
            "import": [ctx.python, "-c", "import errhints"],
            "install": [ctx.python, "-c", f"import errhints; {call}"],
        },
        reps,
        ctx.env,
    )
    base_med, base_p90 = median_p90(times["pass"])
    imp_med, imp_p90 = median_p90(times["import"])
    ins_med = statistics.median(times["install"])
    r = ctx.report
    r.add(Row("python -c pass", ms(base_med), ms(base_p90), "ms", n=reps, group=group))
    r.add(Row("python -c 'import errhints'", ms(imp_med), ms(imp_p90), "ms", n=reps, group=group))
    paired = [b - a for a, b in zip(times["pass"], times["import"], strict=True)]
    d_med, d_p90 = median_p90(paired)
    r.add(
        Row(
            "import errhints overhead (paired difference)",
            ms(d_med),
            ms(d_p90),
            "ms",
            "<= 15 ms",
            ms(d_med) <= 15,
            reps,
            group=group,
        )
    )
    r.add(Row("ratio import / pass", imp_med / base_med, None, "x", n=reps, group=group))
    paired_install = [b - a for a, b in zip(times["pass"], times["install"], strict=True)]
    i_med, i_p90 = median_p90(paired_install)
    r.add(
        Row(
            "import + install() overhead (paired difference)",
            ms(i_med),
            ms(i_p90),
            "ms",
            n=reps,
            group=group,
            note=f"process total {ms(ins_med):.1f} ms",
        )
    )

    # -X importtime: what errhints' own modules cost, and everything `import errhints` pulls in.
    self_sums, cumulative, modules = [], [], set()
    for _ in range(ctx.reps(20, 5)):
        proc = subprocess.run(
            [ctx.python, "-X", "importtime", "-c", "import errhints"],
            env=ctx.env,
            capture_output=True,
            text=True,
            check=True,
        )
        total_self = 0
        for line in proc.stderr.splitlines():
            m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
            if not m:
                continue
            name = m.group(4)
            if name == "errhints" or name.startswith("errhints."):
                total_self += int(m.group(1))
                modules.add(name)
            if name == "errhints" and len(m.group(3)) == 1:  # top level, not nested
                cumulative.append(int(m.group(2)))
        self_sums.append(total_self)
    s_med, s_p90 = median_p90(self_sums)
    r.add(
        Row(
            "-X importtime: self time of errhints.* modules",
            s_med / 1e3,
            s_p90 / 1e3,
            "ms",
            n=len(self_sums),
            group=group,
            note=f"{len(modules)} modules: {', '.join(sorted(modules))}",
        )
    )
    if cumulative:
        c_med, c_p90 = median_p90(cumulative)
        r.add(
            Row(
                "-X importtime: cumulative of `errhints`",
                c_med / 1e3,
                c_p90 / 1e3,
                "ms",
                "<= 15 ms",
                c_med / 1e3 <= 15,
                len(cumulative),
                group=group,
            )
        )
    return {"import_ms": ms(d_med)}


def install_call(ctx: Ctx) -> str:
    """What the benchmarks call to install errhints: every door, as users do."""
    return "errhints.install()"


def bench_install(ctx: Ctx, call: str) -> None:
    group = "install"
    code = f"""
        import time, errhints
        from _bench_child import emit
        t0 = time.perf_counter()
        {call}
        t1 = time.perf_counter()
        {call}
        t2 = time.perf_counter()
        errhints.uninstall()
        t3 = time.perf_counter()
        emit({{"first": t1 - t0, "again": t2 - t1, "uninstall": t3 - t2}})
    """
    reps = ctx.reps(30, 8)
    results = [ctx.child(code) for _ in range(reps)]
    for key, label in (
        ("first", "install() in a fresh process"),
        ("again", "install() again (idempotent)"),
        ("uninstall", "uninstall()"),
    ):
        med, p90 = median_p90([us(x[key]) for x in results])
        ctx.report.add(Row(label, med, p90, "us", n=reps, group=group))


#: Standard modules any SGLang or LlamaFactory process has imported long before it fails.
HOST_PRELOAD = "import dataclasses, inspect, logging, pathlib, re, tempfile, typing, zipfile\n"


def wheel_python(ctx: Ctx) -> str | None:
    """A fresh venv with errhints installed from a wheel built here (its catalog bundled)."""
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from wheelenv import build_wheel, make_venv
    finally:
        sys.path.remove(str(ROOT / "tests"))
    try:
        env = make_venv(ctx.tmp / "wheel" / "venv", build_wheel(ctx.tmp / "wheel" / "dist"))
    except (subprocess.CalledProcessError, OSError, ValueError) as err:
        ctx.report.notes.append(f"installed-wheel figures skipped: {err}")
        return None
    return str(env.python)


def bench_first_explain(ctx: Ctx) -> float:
    group = "explain"
    code = """
        import time, errhints
        from _bench_child import emit
        from sglang.srt._errhints_bench import make
        exc = make(10)
        t0 = time.perf_counter()
        matches = errhints.explain(exc)
        t1 = time.perf_counter()
        from errhints._core.notes import attach
        exc2 = make(10)
        t2 = time.perf_counter()
        outcome = attach(exc2)
        t3 = time.perf_counter()
        from errhints._core.state import get_index
        emit({
            "first": t1 - t0,
            "attach": t3 - t2,
            "ids": [m.id for m in matches],
            "entries": len(get_index().catalog),
            "noted": outcome.attached,
        })
    """
    reps = ctx.reps(25, 6)
    installed = wheel_python(ctx)
    variants = [("source checkout: parses every TOML file", None, ctx.env, "")]
    if installed:
        wheel_env = dict(ctx.env, PYTHONPATH=str(ctx.lib))
        variants += [
            ("installed wheel: reads the JSON bundle", installed, wheel_env, ""),
            (
                "installed wheel, host stdlib already imported",
                installed,
                wheel_env,
                HOST_PRELOAD,
            ),
        ]
    best = None
    first_results = None
    for label, python, env, preload in variants:
        results = [
            ctx.child(preload + textwrap.dedent(code), python=python, env=env) for _ in range(reps)
        ]
        first_results = first_results or results
        med, p90 = median_p90([ms(x["first"]) for x in results])
        matched = results[0]["ids"][:1] or "nothing"
        note = f"catalog of {results[0]['entries']} entries; matched {matched}"
        ctx.report.add(
            Row(
                f"first explain, fresh process ({label})",
                med,
                p90,
                "ms",
                "<= 50 ms",
                med <= 50,
                reps,
                note,
                group,
            )
        )
        if python is not None and not preload:
            best = med
    assert first_results is not None
    a_med, a_p90 = median_p90([us(x["attach"]) for x in first_results])
    ctx.report.add(
        Row(
            "then attach() on a second exception (note rendered)",
            a_med,
            a_p90,
            "us",
            n=reps,
            group=group,
        )
    )
    return best if best is not None else median_p90([ms(x["first"]) for x in first_results])[0]


def bench_warm_explain(ctx: Ctx) -> dict[int, float]:
    group = "explain"
    code = f"""
        import errhints
        from _bench_child import emit, per_call
        from sglang.srt._errhints_bench import make
        excs = {{d: make(d) for d in {DEPTHS!r}}}
        ids = {{d: [m.id for m in errhints.explain(e)] for d, e in excs.items()}}
        fns = {{str(d): (lambda e=e: errhints.explain(e)) for d, e in excs.items()}}
        emit({{"samples": per_call(fns, {ctx.budget(1.5, 0.4)}), "ids": ids}})
    """
    result = ctx.child(code)
    medians: dict[int, float] = {}
    for depth in DEPTHS:
        samples = [us(s) for s in result["samples"][str(depth)]]
        med, p90 = median_p90(samples)
        medians[depth] = med
        matched = result["ids"][str(depth)]
        ctx.report.add(
            Row(
                f"warm explain, {depth}-frame traceback",
                med,
                p90,
                "us",
                "<= 250 µs",
                med <= 250,
                len(samples),
                "" if matched else "NO MATCH (stand-in not recognised)",
                group,
            )
        )
    ctx.report.add(
        Row(
            f"ratio warm explain {DEPTHS[-1]} frames / {DEPTHS[0]} frame",
            medians[DEPTHS[-1]] / medians[DEPTHS[0]],
            None,
            "x",
            group=group,
        )
    )
    return medians


# -- catalog size ----------------------------------------------------------------------------

WORDS = """
scheduler tokenizer request batch prefill decode memory allocation kernel attention sampler
adapter lora checkpoint dataset template worker process server client stream timeout device
tensor shape dtype precision quantization weights loader config argument parameter module
engine runtime backend cache pool capacity length context sequence position rotary embedding
vision encoder processor image audio video placeholder chunk radix tree eviction transfer
bootstrap handshake rank world group collective barrier launch compile graph capture replay
overflow underflow gradient optimizer scheduler warmup epoch evaluation metric export merge
quantized bitsandbytes deepspeed fsdp zero offload pipeline tensorparallel expert router
gating sparse dense float bfloat half integer index offset stride contiguous layout format
json schema grammar regex constraint logits penalty temperature nucleus beam draft speculative
verify accept reject tokens prompt completion response status health metrics tracing profile
session handle socket address port endpoint router balancer replica shard partition manifest
revision version release license mirror download upload storage volume mount permission owner
""".split()


def generate_catalog(root: Path, size: int, seed: int = 1234) -> None:
    """``size`` valid synthetic entries (varied heads, tails, sites), one of them the target."""
    rng = random.Random(seed)
    exceptions = ["RuntimeError", "ValueError", "AssertionError", "TypeError", "OSError"]
    for package in ("sglang", "llamafactory"):
        (root / package).mkdir(parents=True, exist_ok=True)
    base = (
        'title = "{title}"\nexception = "{exc}"\ntemplate = {template}\nrelease = "1.0"\n'
        'meaning = "Synthetic entry for the benchmark."\ncauses = ["c"]\nfixes = ["f"]\n'
    )
    for i in range(size - 1):
        package = "sglang" if i % 2 else "llamafactory"
        words = rng.sample(WORDS, 7)
        shape = rng.random()
        sites = ""
        if shape < 0.55:  # pinned by its head
            template = (
                f"{words[0].capitalize()} {words[1]} {words[2]} {words[3]}: {{value}} "
                f"while {words[4]} {words[5]}"
            )
        elif shape < 0.8:  # pinned by its tail
            template = f"{{name}} {words[0]} {words[1]} {words[2]} {words[3]} {words[4]}."
        else:  # placeholder-heavy: only its raise site makes it match
            template = f"{{a}}: {{b}} ({words[0]})"
            sites = (
                f'\n[[sites]]\npath = "{package}/gen{i % 50}/mod{i % 97}.py"\n'
                f'function = "Worker{i % 13}.step{i % 31}"\nrelease = "1.0"\n'
            )
        text = f'id = "{package}.gen-{i:05d}"\npackage = "{package}"\n' + base.format(
            title=f"synthetic {i}",
            exc=rng.choice(exceptions),
            template=json.dumps(template),
        )
        (root / package / f"gen-{i:05d}.toml").write_text(text + sites, encoding="utf-8")
    target = (
        'id = "sglang.bench-target"\npackage = "sglang"\n'
        + base.format(
            title="benchmark target",
            exc="InternalError",
            template=json.dumps(
                "Encoder produced {n} tokens, but preprocessor metadata expected {m}"
            ),
        )
        + '\n[[sites]]\npath = "sglang/srt/disaggregation/encoder/server.py"\n'
        'function = "MMEncoder._validate_embedding_token_count"\nrelease = "1.0"\n'
    )
    (root / "sglang" / "bench-target.toml").write_text(target, encoding="utf-8")


#: A failure no entry explains, worded from the same vocabulary (so it reaches the fuzzy stage).
MISS_MESSAGE = (
    "Scheduler request batch could not reserve memory for the prefill tokens of the "
    "attention kernel while the worker process was waiting on the cache pool"
)


def bench_catalog_size(ctx: Ctx) -> None:
    group = "catalog size (user catalog only, builtin=False)"
    sizes = CATALOG_SIZES
    dirs = {}
    for size in sizes:
        d = ctx.tmp / f"catalog_{size}"
        generate_catalog(d, size)
        dirs[size] = str(d)
    code = f"""
        import time
        from errhints._core.catalog import load_catalog
        from errhints._facts.live import facts_from_exception
        from errhints._core.match import build_index
        from errhints._core.pipeline import explain_facts
        from _bench_child import emit, per_call
        from sglang.srt._errhints_bench import make, make_other
        hit = facts_from_exception(make(10))
        miss = facts_from_exception(make_other({MISS_MESSAGE!r}, 10))
        out = {{}}
        fns = {{}}
        for size, d in {dirs!r}.items():
            t0 = time.perf_counter()
            catalog = load_catalog([d], builtin=False)
            t1 = time.perf_counter()
            index = build_index(catalog)
            t2 = time.perf_counter()
            assert not catalog.problems, catalog.problems[:3]
            ids = [m.id for m in explain_facts(hit, index)]
            missed = [m.id for m in explain_facts(miss, index)]
            fns[f"hit {{size}}"] = lambda index=index: explain_facts(hit, index)
            fns[f"miss {{size}}"] = lambda index=index: explain_facts(miss, index)
            cands = [len(index.text_candidates(f.message)) for f in (hit, miss)]
            out[size] = {{"load": t1 - t0, "index": t2 - t1, "entries": len(catalog),
                         "ids": ids, "missed": missed, "cands": cands}}
        # every size in each round, so the ratios compare calls made under the same load
        samples = per_call(fns, {ctx.budget(3.0, 1.0)})
        for size in out:
            out[size]["samples"] = {{k: samples[f"{{k}} {{size}}"] for k in ("hit", "miss")}}
        emit(out)
    """
    result = ctx.child(code, timeout=600)
    medians: dict[str, dict[int, float]] = {"hit": {}, "miss": {}}
    for size in sizes:
        data = result[str(size)]
        for kind in ("hit", "miss"):
            samples = [us(s) for s in data["samples"][kind]]
            med, p90 = median_p90(samples)
            medians[kind][size] = med
            cands = data["cands"][0 if kind == "hit" else 1]
            if kind == "hit":
                note = (
                    f"load {ms(data['load']):.0f} ms + index {ms(data['index']):.0f} ms; "
                    f"{cands} text candidates"
                )
                if data["ids"][:1] != ["sglang.bench-target"]:
                    note += f"; UNEXPECTED matches {data['ids'][:3]}"
            else:
                note = f"matched {data['missed'][:2]}" if data["missed"] else "no match (as meant)"
                note += f"; {cands} text candidates"
            label = "known failure" if kind == "hit" else "unknown failure (fuzzy stage)"
            ctx.report.add(
                Row(
                    f"explain_facts, {size:>6} entries, {label}",
                    med,
                    p90,
                    "us",
                    n=len(samples),
                    note=note,
                    group=group,
                )
            )
    for kind in ("hit", "miss"):
        ratio = medians[kind][sizes[-1]] / medians[kind][sizes[0]]
        label = "known" if kind == "hit" else "unknown"
        ctx.report.add(
            Row(
                f"ratio {sizes[-1]} / {sizes[0]} entries ({label} failure)",
                ratio,
                None,
                "x",
                "<= 2x",
                ratio <= 2,
                group=group,
            )
        )


def bench_prebuilt_scale(ctx: Ctx) -> None:
    """First explain through a wheel-style prebuilt index of 1,000 entries, and with none.

    The wheel's catalog is validated and indexed at build time; a failure builds only the
    entries its lookups return. Measured in fresh processes: a 1,000-entry prebuilt catalog
    against the packaged one (~740), for an explained failure and for one only the site
    index identifies (the full index, loaded lazily).
    """
    group = "first explain at scale (prebuilt wheel catalog)"
    root = ctx.tmp / "prebuilt_1000"
    generate_catalog(root, 1000)
    build = f"""
        import json, shutil
        from pathlib import Path
        from errhints._core.bundle import PREBUILT_NAME, bundle_bytes, prebuild
        from errhints._core.catalog import load_catalog
        root = Path({str(root)!r})
        catalog = load_catalog([root], builtin=False)
        sources = {{e.id: Path(e.source).relative_to(root).as_posix() for e in catalog}}
        tables = {{}}
        import tomllib
        for rel in sources.values():
            tables[rel] = tomllib.loads((root / rel).read_text(encoding="utf-8"))
        data, spans = bundle_bytes(tables)
        (root / "_bundle.json").write_bytes(data)
        prebuilt = prebuild(catalog, sources, spans)
        (root / PREBUILT_NAME).write_text(json.dumps(prebuilt), encoding="utf-8")
        from _bench_child import emit
        emit({{"entries": len(sources)}})
    """
    ctx.child(build)
    code = f"""
        import time
        from pathlib import Path
        from _bench_child import emit
        from sglang.srt._errhints_bench import make, make_other
        t0 = time.perf_counter()
        from errhints._core.bundle import load_prebuilt
        from errhints._core.pipeline import explain_facts
        from errhints._facts.live import facts_from_exception
        index = load_prebuilt(Path({str(root)!r}), "bench")
        t1 = time.perf_counter()
        hit = explain_facts(facts_from_exception(make(10)), index)
        t2 = time.perf_counter()
        miss = explain_facts(facts_from_exception(make_other(
            "multi-node data parallel is not supported", 10)), index)
        t3 = time.perf_counter()
        emit({{"load": t1 - t0, "hit": t2 - t1, "identify": t3 - t2,
              "ids": [m.id for m in hit], "miss": [m.confidence for m in miss],
              "built": len(index.catalog.entries), "known": len(index.catalog)}})
    """
    reps = ctx.reps(15, 4)
    results = [ctx.child(textwrap.dedent(code)) for _ in range(reps)]
    first = results[0]
    note = (
        f"{first['known']} entries, {first['built']} built; matched {first['ids'][:1]}; "
        f"unknown failure: {first['miss'][:1]}"
    )
    for key, label, budget in (
        ("load", "load the prebuilt 1,000-entry index (fresh process)", None),
        ("hit", "then the first explained failure", None),
        ("identify", "then a failure only the site index knows (loads its shards)", 30.0),
    ):
        med, p90 = median_p90([ms(x[key]) for x in results])
        ok = None if budget is None else med <= budget
        target = "" if budget is None else f"<= {budget:.0f} ms"
        ctx.report.add(Row(label, med, p90, "ms", target, ok, reps, note, group=group))


def bench_decorator(ctx: Ctx) -> None:
    group = "decorator"
    code = f"""
        import timeit, errhints
        from _bench_child import emit
        def bare():
            return None
        def _inner():
            return None
        annotated = errhints.annotate(_inner)
        annotated()
        timers = {{"bare": timeit.Timer(bare), "annotated": timeit.Timer(annotated)}}
        per_call = timers["annotated"].timeit(1000) / 1000
        number = max(1000, int(0.02 / per_call))  # about 20 ms per annotated round
        out = {{"bare": [], "annotated": []}}
        for i in range({ctx.reps(40, 12)}):
            for name in (("bare", "annotated") if i % 2 == 0 else ("annotated", "bare")):
                out[name].append(timers[name].timeit(number) / number)
        emit(out)
    """
    result = ctx.child(code)
    bare = [x * 1e9 for x in result["bare"]]
    annotated = [x * 1e9 for x in result["annotated"]]
    n = len(bare)
    b_med, b_p90 = median_p90(bare)
    a_med, a_p90 = median_p90(annotated)
    ctx.report.add(Row("bare function call", b_med, b_p90, "ns", n=n, group=group))
    ctx.report.add(Row("@errhints.annotate function call", a_med, a_p90, "ns", n=n, group=group))
    diff = [a - b for a, b in zip(annotated, bare, strict=True)]
    d_med, d_p90 = median_p90(diff)
    ctx.report.add(
        Row(
            "decorator overhead per call (paired difference)",
            d_med,
            d_p90,
            "ns",
            "<= 2000 ns",
            d_med <= 2000,
            n,
            group=group,
        )
    )


#: Figures of the other benchmark scripts that have a target from the issue.
EXTERNAL_TARGETS: dict[str, tuple[str, Callable[[float], bool]]] = {
    "scan_stream_mib_s": (">= 50 MB/s", lambda mb_s: mb_s >= 50),
    "scan_text_mib_s": (">= 50 MB/s", lambda mb_s: mb_s >= 50),
    # What every process pays while ERRHINTS is unset: site.py compiles and runs the line.
    "exec_source_us": ("< 5 µs", lambda us_: us_ < 5),
    "exec_compiled_us": ("< 5 µs", lambda us_: us_ < 5),
}
#: Key suffix -> (unit shown, factor from the script's unit). Longest suffixes first.
SUFFIXES = (
    ("_mib_s", "MB/s", 1.048576),
    ("_us", "us", 1.0),
    ("_ns", "ns", 1.0),
    ("_ms", "ms", 1.0),
    ("_s", "ms", 1e3),
    ("_mib", "MiB", 1.0),
    ("_mb", "MB", 1.0),
)


def rows_from(data: Any, group: str) -> list[Row]:
    """Rows from another script's JSON: a list of row-shaped dicts, or a dict of figures.

    A dict's figures (at its top level or under ``"results"``) are named by their keys; the
    unit comes from the suffix (``_mib_s`` as MB/s, ``_us``, ``_ns``, ``_ms``, ``_s`` as ms,
    ``_mib``), ``*_vs_*`` keys are ratios, and :data:`EXTERNAL_TARGETS` adds targets.
    """
    rows: list[Row] = []
    if isinstance(data, list):
        for item in data:
            if isinstance(item, dict) and "name" in item:
                known = {k: item[k] for k in Row.__dataclass_fields__ if k in item}
                known["group"] = group
                rows.append(Row(**known))
        return rows
    if not isinstance(data, dict):
        return rows
    figures = dict(data)
    if isinstance(figures.get("results"), dict):
        figures.update(figures.pop("results"))
    for key, value in figures.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
            continue
        if "_vs_" in key:
            rows.append(Row(key, float(value), None, "x", group=group))
            continue
        for suffix, unit, factor in SUFFIXES:
            if key.endswith(suffix):
                shown = float(value) * factor
                target, check = EXTERNAL_TARGETS.get(key, ("", None))
                ok = check(shown) if check is not None else None
                rows.append(Row(key, shown, None, unit, target, ok, group=group))
                break
    return rows


def external_bench(ctx: Ctx, path: Path, group: str) -> bool:
    """Run another benchmark script of this folder; its figures join the table.

    It is run as ``python SCRIPT [--smoke] --json FILE``; whatever JSON it writes becomes rows
    (see :func:`rows_from`), and when it writes none its printed output is kept as a note.
    """
    if not path.is_file():
        return False
    out = ctx.tmp / f"{path.stem}.json"
    started = time.perf_counter()
    proc = subprocess.run(
        [ctx.python, str(path), *(["--smoke"] if ctx.smoke else []), "--json", str(out)],
        env=ctx.env,
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
    )
    elapsed = time.perf_counter() - started
    if proc.returncode:
        raise RuntimeError(f"{path.name} exited {proc.returncode}: {proc.stderr[-2000:]}")
    data = None
    if out.is_file():
        with contextlib.suppress(ValueError):
            data = json.loads(out.read_text(encoding="utf-8"))
    ctx.report.extra[path.name] = data if data is not None else proc.stdout
    rows = rows_from(data, group)
    for row in rows:
        row.note = row.note or f"from {path.name}"
        ctx.report.add(row)
    if not rows:
        ctx.report.notes.append(f"{path.name} printed:\n{proc.stdout.rstrip()}")
    ctx.report.notes.append(f"{path.name} took {elapsed:.1f} s")
    return True


def bench_scan(ctx: Ctx) -> None:
    group = "log scanning (benchmarks/bench_scan.py)"
    if not external_bench(ctx, BENCH / "bench_scan.py", group):
        ctx.report.skip(
            group, "scanning MB/s vs grep -c Traceback", "skipped: no benchmarks/bench_scan.py"
        )


def bench_memory(ctx: Ctx, call: str) -> None:
    group = "memory"
    # On Linux, ru_maxrss survives execve, so a child would report the parent's peak at fork
    # time; VmHWM is the high-water mark of the child's own address space.
    rss = """
        import resource, sys
        def peak_mb():
            try:
                with open("/proc/self/status", encoding="ascii") as status:
                    for line in status:
                        if line.startswith("VmHWM:"):
                            return int(line.split()[1]) / 1e3
            except OSError:
                pass
            value = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            return value / 1e6 if sys.platform == "darwin" else value / 1e3
    """
    base = (
        rss
        + """
        from _bench_child import emit
        from sglang.srt._errhints_bench import make
        exc = make(10)
        emit({"peak": peak_mb()})
    """
    )
    full = (
        rss
        + f"""
        import errhints
        from _bench_child import emit
        from sglang.srt._errhints_bench import make
        {call}
        from errhints._core.notes import attach
        assert attach(make(10)).attached
        emit({{"peak": peak_mb()}})
    """
    )
    reps = ctx.reps(7, 3)
    bases, fulls = [], []
    for _ in range(reps):
        bases.append(ctx.child(base)["peak"])
        fulls.append(ctx.child(full)["peak"])
    b_med, _ = median_p90(bases)
    f_med, f_p90 = median_p90(fulls)
    ctx.report.add(
        Row(
            "peak RSS: import + install + explain (+note)",
            f_med,
            f_p90,
            "MB",
            n=reps,
            note=f"baseline without errhints {b_med:.1f} MB",
            group=group,
        )
    )
    ctx.report.add(
        Row("peak RSS added by errhints", f_med - b_med, None, "MB", n=reps, group=group)
    )


def bench_startup(ctx: Ctx) -> None:
    group = "startup hook, disabled (benchmarks/bench_startup.py)"
    if not external_bench(ctx, BENCH / "bench_startup.py", group):
        ctx.report.skip(
            group, "disabled startup hook cost", "skipped: no benchmarks/bench_startup.py"
        )


# -- friendly-traceback ----------------------------------------------------------------------


@contextlib.contextmanager
def friendly_venv(ctx: Ctx) -> Iterator[str | None]:
    """A throwaway venv with friendly-traceback; yields its python, or None (offline)."""
    where = Path(tempfile.mkdtemp(prefix="errhints-bench-ft-"))
    try:
        try:
            subprocess.run(
                [sys.executable, "-m", "venv", str(where)],
                check=True,
                capture_output=True,
                timeout=300,
            )
            python = str(where / ("Scripts" if os.name == "nt" else "bin") / "python")
            subprocess.run(
                [
                    python,
                    "-m",
                    "pip",
                    "install",
                    "-q",
                    "--disable-pip-version-check",
                    "friendly-traceback",
                ],
                check=True,
                capture_output=True,
                timeout=600,
            )
        except (subprocess.SubprocessError, OSError) as err:
            detail = getattr(err, "stderr", b"") or b""
            if isinstance(detail, bytes):
                detail = detail.decode("utf-8", "replace")
            ctx.report.notes.append(
                "friendly-traceback comparison skipped (offline or PyPI unreachable): "
                + (detail.strip().splitlines() or [str(err)])[-1]
            )
            yield None
            return
        yield python
    finally:
        shutil.rmtree(where, ignore_errors=True)


def bench_friendly(ctx: Ctx, ours: dict[str, Any]) -> None:
    group = "compare: friendly-traceback (same exceptions)"
    with friendly_venv(ctx) as python:
        if python is None:
            ctx.report.skip(group, "friendly-traceback", "skipped: could not install it")
            return
        env = dict(ctx.env, PYTHONPATH=str(ctx.lib))  # no errhints in that venv
        reps = ctx.reps(30, 8)
        times = interleaved_startup(
            ctx,
            {
                "pass": [python, "-c", "pass"],
                "import": [python, "-c", "import friendly_traceback"],
            },
            reps,
            env,
        )
        paired = [b - a for a, b in zip(times["pass"], times["import"], strict=True)]
        d_med, d_p90 = median_p90(paired)
        ctx.report.add(
            Row(
                "import friendly_traceback overhead",
                ms(d_med),
                ms(d_p90),
                "ms",
                n=reps,
                group=group,
            )
        )
        if ours.get("import_ms"):
            ctx.report.add(
                Row(
                    "ratio friendly / errhints import overhead",
                    ms(d_med) / ours["import_ms"],
                    None,
                    "x",
                    group=group,
                )
            )
        first_code = """
            import time
            from _bench_child import emit
            from sglang.srt._errhints_bench import make
            exc = make(10)
            t0 = time.perf_counter()
            from friendly_traceback.core import FriendlyTraceback
            ft = FriendlyTraceback(type(exc), exc, exc.__traceback__)
            ft.compile_info()
            emit({"first": time.perf_counter() - t0, "cause": str(ft.info.get("cause", ""))[:80]})
        """
        firsts = [ctx.child(first_code, python=python, env=env) for _ in range(ctx.reps(10, 3))]
        f_med, f_p90 = median_p90([ms(x["first"]) for x in firsts])
        ctx.report.add(
            Row(
                "first explanation, fresh process (import included)",
                f_med,
                f_p90,
                "ms",
                n=len(firsts),
                group=group,
            )
        )
        if ours.get("first_ms"):
            ctx.report.add(
                Row(
                    "ratio friendly / errhints first explain",
                    f_med / ours["first_ms"],
                    None,
                    "x",
                    group=group,
                )
            )
        warm_code = f"""
            from _bench_child import emit, per_call
            from sglang.srt._errhints_bench import make
            from friendly_traceback.core import FriendlyTraceback
            excs = {{d: make(d) for d in {DEPTHS!r}}}
            def explain(e):
                ft = FriendlyTraceback(type(e), e, e.__traceback__)
                ft.compile_info()
                return ft.info
            fns = {{str(d): (lambda e=e: explain(e)) for d, e in excs.items()}}
            emit({{"samples": per_call(fns, {ctx.budget(3.0, 1.0)}, min_rounds=5,
                                       round_seconds=0.02)}})
        """
        result = ctx.child(warm_code, python=python, env=env, timeout=900)
        for depth in DEPTHS:
            samples = [us(s) for s in result["samples"][str(depth)]]
            med, p90 = median_p90(samples)
            ctx.report.add(
                Row(
                    f"warm explanation, {depth}-frame traceback",
                    med,
                    p90,
                    "us",
                    n=len(samples),
                    group=group,
                )
            )
            mine = ours.get("warm_us", {}).get(depth)
            if mine:
                ctx.report.add(
                    Row(
                        f"ratio friendly / errhints, {depth} frames",
                        med / mine,
                        None,
                        "x",
                        group=group,
                    )
                )


# --------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--smoke", action="store_true", help="few repetitions, for CI (< 60 s)")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help="where to write JSON")
    parser.add_argument(
        "--compare", action="store_true", help="also time friendly-traceback (installs it)"
    )
    args = parser.parse_args(argv)

    started = time.perf_counter()
    report = Report()
    ours: dict[str, Any] = {}
    step_seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="errhints-bench-") as tmp:
        ctx = make_ctx(Path(tmp), args.smoke, report)
        call = install_call(ctx)
        steps: list[tuple[str, Callable[[], Any]]] = [
            ("import", lambda: ours.update(bench_import(ctx, call))),
            ("install", lambda: bench_install(ctx, call)),
            ("first explain", lambda: ours.update(first_ms=bench_first_explain(ctx))),
            ("warm explain", lambda: ours.update(warm_us=bench_warm_explain(ctx))),
            ("catalog size", lambda: bench_catalog_size(ctx)),
            ("prebuilt scale", lambda: bench_prebuilt_scale(ctx)),
            ("decorator", lambda: bench_decorator(ctx)),
            ("scanning", lambda: bench_scan(ctx)),
            ("memory", lambda: bench_memory(ctx, call)),
            ("startup hook", lambda: bench_startup(ctx)),
        ]
        if args.compare:
            steps.append(("friendly-traceback", lambda: bench_friendly(ctx, ours)))
        for name, step in steps:
            t0 = time.perf_counter()
            try:
                step()
            except Exception:
                report.errors.append(f"{name}: {traceback.format_exc(limit=3).strip()}")
            step_seconds[name] = round(time.perf_counter() - t0, 2)
    elapsed = time.perf_counter() - started

    header = (
        f"errhints benchmarks: Python {platform.python_version()} on {platform.system()} "
        f"{platform.machine()}, {os.cpu_count()} CPUs, "
        f"{'smoke' if args.smoke else 'full'} run, {elapsed:.0f} s"
    )
    print_table(report, header)
    payload = {
        "meta": {
            "python": platform.python_version(),
            "implementation": platform.python_implementation(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "smoke": args.smoke,
            "compare": args.compare,
            "seconds": round(elapsed, 2),
            "step_seconds": step_seconds,
            "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        },
        "results": [dict(asdict(row), status=row.status) for row in report.rows],
        "notes": report.notes,
        "errors": report.errors,
        "extra": report.extra,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"JSON written to {args.json}")
    return 1 if report.errors else 0


if __name__ == "__main__":
    sys.exit(main())
