"""Score ``errhints explain`` on the corpus of real error pastes in tests/data/pastes/.

Each paste listed in ``manifest.jsonl`` is given to ``python -m errhints explain --json --`` in its
own process, and the findings are compared with the manifest's expectations:

* positives (SGLang/LlamaFactory failures), by form (complete / excerpt / one-line):
  ``parsed`` = any finding at all, ``recognised`` = any catalog match of any confidence,
  ``explained`` = the expected entry (or the other side of an entry split at a release,
  ``x``/``x-old``/``x-until-0-5-9``...) is among the exact or strong matches,
  ``covered`` = the manifest names an expected entry (the catalog has one for this failure);
* negatives (other projects' failures), by form: ``false hints`` = any exact or strong match;
* covered positives, by whether the paste shows the error at all (the manifest's ``message``
  carries a mark of ``NOT_IN_PASTE`` when the paste stops before it): of those that show it,
  ``explained``, ``weak by rule`` (the expected entry, as ``weak`` because nothing in the text
  shows the project, or vLLM raises the same words: the rule the text door keeps) and
  ``missed``; of those that do not, how many are ``recognised`` at all.

Files under ``holdout/`` are for the final report only; do not read them while tuning.

    PYTHONPATH=src python3.11 scripts/paste_report.py [--split dev|holdout|all]
        [--batch first|second|...|twelfth|later|all] [--json] [--misses]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PASTES = ROOT / "tests" / "data" / "pastes"
FORMS = ("complete", "excerpt", "one-line")
CONFIDENT = frozenset({"exact", "strong"})
#: How the manifest marks a message taken from the thread because the paste does not reach it
#: (the collectors' wordings: ``(cut)``, ``(from title; paste cut)``, ``(title: ...)``,
#: ``(per report; paste cut)``, ``(cut off in paste)``, ``(traceback cut in run_exp)``).
NOT_IN_PASTE = ("(cut)", "(from title", "(title", "paste cut", "cut off in paste", "traceback cut")

#: Why a text match is only ``weak`` by the text door's rules (``errhints._core.match``).
RULE_VIAS = frozenset({"no context", "shared", "look-alike"})


def _family(entry_id: str) -> str:
    """An entry split at a release (``x`` and ``x-legacy``): one failure, explained for two
    ranges of releases; either side is the expected entry's explanation."""
    from errhints._core.catalog import split_family

    return split_family(entry_id)


@dataclass(frozen=True)
class Match:
    id: str
    confidence: str
    via: str = ""


@dataclass
class Result:
    file: str
    polarity: str
    form: str
    expected: str | None
    shows_error: bool = True
    findings: int = 0
    matches: list[Match] = field(default_factory=list)
    error: str | None = None

    @property
    def recognised(self) -> bool:
        return bool(self.matches)

    @property
    def confident_ids(self) -> set[str]:
        return {m.id for m in self.matches if m.confidence in CONFIDENT}

    @property
    def explained(self) -> bool:
        if self.expected is None:
            return False
        return _family(self.expected) in {_family(i) for i in self.confident_ids}

    @property
    def weak_by_rule(self) -> bool:
        return self.expected is not None and any(
            _family(m.id) == _family(self.expected)
            and m.confidence == "weak"
            and m.via in RULE_VIAS
            for m in self.matches
        )

    @property
    def false_hint(self) -> bool:
        return self.polarity == "negative" and bool(self.confident_ids)


#: The NNN ranges of the collection rounds. The first batch's held-back third was reported
#: before the later batches were drawn, so a report keeps them apart (``later``: all but first).
BATCHES = {
    "first": (1, 319),
    "second": (320, 401),
    "third": (402, 450),
    "fourth": (451, 487),
    "fifth": (488, 544),
    "sixth": (545, 608),
    "seventh": (609, 650),
    "eighth": (651, 720),
    "ninth": (721, 765),
    "tenth": (766, 819),
    "eleventh": (820, 911),
    "twelfth": (912, 963),
    "thirteenth": (964, 1071),
    "fourteenth": (1072, 1106),
    "fifteenth": (1107, 1203),
    "sixteenth": (1204, 1236),
    "seventeenth": (1237, 1275),
    "eighteenth": (1276, 1305),
    "nineteenth": (1306, 1377),
    "twentieth": (1378, 1469),
}


def _in_batch(row: dict[str, Any], batch: str) -> bool:
    number = int(row["file"].split("/", 1)[1].split("-", 1)[0])
    if batch == "all":
        return True
    if batch == "later":
        return number > BATCHES["first"][1]
    low, high = BATCHES[batch]
    return low <= number <= high


def load_manifest(split: str) -> list[dict[str, Any]]:
    rows = []
    with (PASTES / "manifest.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rows.append(json.loads(line))
    if split == "all":
        return rows
    return [r for r in rows if r["file"].split("/", 1)[0] == split]


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    if importlib.util.find_spec("errhints") is None:
        src = str(ROOT / "src")
        env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    env["NO_COLOR"] = "1"
    return env


def explain(row: dict[str, Any], env: dict[str, str]) -> Result:
    message = row.get("message") or ""
    shows = bool(message) and not any(mark in message for mark in NOT_IN_PASTE)
    result = Result(row["file"], row["polarity"], row["form"], row.get("expected_entry"), shows)
    cmd = [sys.executable, "-m", "errhints", "explain", "--json", "--", str(PASTES / row["file"])]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, check=False)
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        result.error = f"exit {proc.returncode}: {tail}"
        return result
    findings = data.get("findings", [])
    result.findings = len(findings)
    for finding in findings:
        for match in finding.get("matches", []):
            result.matches.append(Match(match["id"], match["confidence"], match.get("via", "")))
    return result


def run_all(rows: Sequence[dict[str, Any]], jobs: int) -> list[Result]:
    env = child_env()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda row: explain(row, env), rows))


def summarise(results: Iterable[Result]) -> dict[str, dict[str, dict[str, int]]]:
    table: dict[str, dict[str, dict[str, int]]] = {"positive": {}, "negative": {}}
    for r in results:
        for form in (r.form, "all"):
            if r.polarity == "positive":
                row = table["positive"].setdefault(
                    form,
                    {"count": 0, "parsed": 0, "recognised": 0, "explained": 0, "covered": 0},
                )
                row["parsed"] += r.findings > 0
                row["recognised"] += r.recognised
                row["explained"] += r.explained
                row["covered"] += r.expected is not None
            else:
                row = table["negative"].setdefault(
                    form, {"count": 0, "parsed": 0, "any match": 0, "false hints": 0}
                )
                row["parsed"] += r.findings > 0
                row["any match"] += r.recognised
                row["false hints"] += r.false_hint
            row["count"] += 1
    return table


def summarise_covered(results: Iterable[Result]) -> dict[str, dict[str, int]]:
    """Covered positives by whether the paste shows the error, and what became of them."""
    table: dict[str, dict[str, int]] = {}
    for r in results:
        if r.polarity != "positive" or r.expected is None:
            continue
        for form in (r.form, "all"):
            row = table.setdefault(
                form,
                {
                    "covered": 0,
                    "shown": 0,
                    "explained": 0,
                    "weak by rule": 0,
                    "missed": 0,
                    "not shown": 0,
                    "recognised": 0,
                },
            )
            row["covered"] += 1
            if r.shows_error:
                row["shown"] += 1
                if r.explained:
                    row["explained"] += 1
                elif r.weak_by_rule:
                    row["weak by rule"] += 1
                else:
                    row["missed"] += 1
            else:
                row["not shown"] += 1
                row["recognised"] += r.recognised
    return table


def print_table(title: str, rows: dict[str, dict[str, int]]) -> None:
    if not rows:
        print(f"{title}: none")
        return
    columns = list(next(iter(rows.values())))
    print(title)
    print(f"  {'form':<10}" + "".join(f"{c:>13}" for c in columns))
    for form in (*FORMS, "all"):
        if form in rows:
            print(f"  {form:<10}" + "".join(f"{rows[form][c]:>13}" for c in columns))


def misses(results: Iterable[Result]) -> list[Result]:
    return [
        r
        for r in results
        if r.error
        or (r.polarity == "positive" and r.expected is not None and not r.explained)
        or r.false_hint
    ]


def describe(r: Result) -> str:
    got = ", ".join(f"{m.id} ({m.confidence})" for m in r.matches) or "nothing"
    if r.error:
        return f"{r.file}: ERROR {r.error}"
    if r.polarity == "negative":
        return f"{r.file}: false hint: {got}"
    return f"{r.file}: expected {r.expected}; got {got}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("dev", "holdout", "all"), default="dev")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--misses", action="store_true", help="list pastes not explained right")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument(
        "--batch",
        choices=(*BATCHES, "later", "all"),
        default="all",
        help="one collection round's pastes (by NNN), or all but the first (later)",
    )
    args = parser.parse_args(argv)

    rows = [r for r in load_manifest(args.split) if _in_batch(r, args.batch)]
    results = run_all(rows, max(1, args.jobs))
    table = summarise(results)
    missed = misses(results)
    if args.json:
        out: dict[str, Any] = {
            "split": args.split,
            "batch": args.batch,
            "table": table,
            "covered": summarise_covered(results),
        }
        if args.misses:
            out["misses"] = [asdict(r) for r in missed]
        json.dump(out, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    batch = "" if args.batch == "all" else f", {args.batch} batch"
    print(f"split: {args.split}{batch} ({len(results)} pastes)")
    print_table("positives", table["positive"])
    print_table("negatives", table["negative"])
    print_table("covered positives", summarise_covered(results))
    errors = sum(1 for r in results if r.error)
    if errors:
        print(f"{errors} paste(s) could not be explained (errhints failed); see --misses")
    if args.misses:
        print("misses:")
        for r in missed:
            print("  " + describe(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
