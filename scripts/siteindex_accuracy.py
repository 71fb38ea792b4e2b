#!/usr/bin/env python3
"""How often the site index identifies a message from its text alone (no frames).

Draws a seeded random sample of raise sites whose message has at least 4 literal words, and of
logged errors, from a few releases; fills each template's placeholders with plausible values
(numbers, words, paths, shapes); calls ``identify(type_name, message)`` with no frames and
counts whether the right site (path and function) is among the candidates returned.

    python scripts/siteindex_accuracy.py [--seed N] [--raises 200] [--logs 100]

Targets: >= 95% for raises, >= 80% for logged errors. Reads releases from the download cache
(``errhints catalog index build`` fetched them) and the shipped ``catalog/index``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time

from errhints._core import siteindex
from errhints._core.template import parse_template
from errhints._maintain.index.build import release_sites
from errhints._maintain.index.extract import RawSite

RELEASES = [
    ("sglang", "0.4.6.post5"),
    ("sglang", "0.5.2"),
    ("sglang", "0.5.23"),
    ("llmtuner", "0.6.3"),
    ("llamafactory", "0.8.3"),
    ("llamafactory", "0.9.2"),
    ("llamafactory", "0.9.5"),
]
TARGETS = {"raise": 95.0, "log": 80.0}

_WORDS = ["qwen2", "llama", "fp8", "cuda", "default", "flashinfer", "triton", "lora", "sft"]
_PATHS = ["/models/Qwen2.5-7B-Instruct", "/tmp/data/train.json", "config.yaml"]


def _value(expr: str, rng: random.Random) -> str:
    """A plausible value for a placeholder, guessed from its expression text."""
    low = expr.lower()
    if any(k in low for k in ("path", "dir", "file", "url")):
        return rng.choice(_PATHS)
    if "shape" in low or "size()" in low:
        return f"torch.Size([{rng.randint(1, 64)}, {rng.choice([128, 4096])}])"
    if "dtype" in low:
        return rng.choice(["torch.float16", "torch.bfloat16"])
    if any(k in low for k in ("num", "size", "len", "count", "rank", "port", "id", "dim", "idx")):
        return str(rng.randint(0, 70000))
    if any(k in low for k in ("list", "keys", "names", "choices")):
        return "['a', 'b']"
    if low.startswith(("e", "err", "exc", "str(e")):
        return "CUDA error: out of memory"
    return rng.choice([*_WORDS, str(rng.randint(0, 9999)), "None", "True"])


def _fill(template: str, rng: random.Random) -> str:
    parsed = parse_template(template)
    out = [parsed.literals[0]]
    for name, literal in zip(parsed.names, parsed.literals[1:], strict=True):
        out.append(_value(name, rng))
        out.append(literal)
    return "".join(out)


def _eligible(site: RawSite, kind: str) -> bool:
    if site.kind != kind:
        return False
    words = parse_template(site.template).skeleton.split()
    return len(words) >= 4 if kind == "raise" else bool(words)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--raises", type=int, default=200, help="raise sites per release")
    parser.add_argument("--logs", type=int, default=100, help="logged errors per release")
    parser.add_argument("--limit", type=int, default=5, help="candidates identify returns")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randint(0, 10**6)
    print(f"seed {seed}")
    totals: dict[str, list[int]] = {"raise": [0, 0], "log": [0, 0]}
    misses: list[str] = []
    for release in RELEASES:
        rng = random.Random(f"{seed}-{release[0]}-{release[1]}")
        (sites,) = list(release_sites([release]))
        line = [f"{release[0]}=={release[1]}:"]
        for kind, wanted in (("raise", args.raises), ("log", args.logs)):
            pool = [s for s in sites.sites if _eligible(s, kind)]
            sample = rng.sample(pool, min(wanted, len(pool)))
            hit = 0
            for site in sample:
                message = _fill(site.template, rng)
                type_name = site.exception.rpartition(".")[2] if kind == "raise" else ""
                found = siteindex.identify(type_name, message, limit=args.limit)
                if any(site.path in i.paths and i.function == site.function for i in found):
                    hit += 1
                elif len(misses) < 40:
                    top = found[0].template[:60] if found else "nothing"
                    misses.append(f"  {site.path}:{site.function}: {message[:90]!r} -> {top!r}")
            totals[kind][0] += hit
            totals[kind][1] += len(sample)
            pct = 100.0 * hit / len(sample) if sample else 0.0
            line.append(f"{kind} {hit}/{len(sample)} ({pct:.1f}%)")
        print("  ".join(line), flush=True)
    status = 0
    for kind, (hit, total) in totals.items():
        pct = 100.0 * hit / total if total else 0.0
        verdict = "PASS" if pct >= TARGETS[kind] else "MISS"
        print(f"all {kind}: {hit}/{total} = {pct:.1f}% (target >= {TARGETS[kind]:.0f}%) {verdict}")
        status |= pct < TARGETS[kind]
    if misses:
        print("first misses:")
        print("\n".join(misses))
    return int(status)


if __name__ == "__main__":
    start = time.perf_counter()
    code = main()
    print(f"({time.perf_counter() - start:.1f} s)", file=sys.stderr)
    raise SystemExit(code)
