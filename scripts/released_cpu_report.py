"""How many real exceptions from the released SGLang/LlamaFactory code errhints explains.

Runs the cases of tests/integration/test_released_cpu.py (in the released-cpu venv, see
tests/integration/README.md) and prints: cases, raised as expected, explained (any match),
explained with the expected entry, and the unexplained exceptions (type, message, site): the
to-do list for catalog writers.

    .venvs/released-cpu/bin/python scripts/released_cpu_report.py [--json] [-k SUBSTRING]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import os
import sys
import warnings
from collections import Counter
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SUITE = HERE.parent / "tests" / "integration"


def load_suite() -> Any:
    os.environ["ERRHINTS_RELEASED_CPU_ANY_VERSION"] = "1"  # measure any installed release
    sys.path.insert(0, str(SUITE))
    import test_released_cpu

    return test_released_cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("-k", default="", help="only cases whose id contains this")
    args = parser.parse_args(argv)

    warnings.simplefilter("ignore")
    logging.disable(logging.CRITICAL)
    try:
        suite = load_suite()
    except BaseException as exc:  # pytest's Skipped when the packages are missing
        print(f"cannot load the released-cpu cases: {exc}", file=sys.stderr)
        return 2
    import errhints

    rows = []
    for case in suite.CASES:
        if args.k not in case.id:
            continue
        sink = io.StringIO()
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            exc = suite.run_case(case)
        row: dict[str, Any] = {
            "case": case.id,
            "package": case.package,
            "family": case.family,
            "expected": case.expected,
            "raised": exc is not None,
        }
        site = suite.site_of(exc) if exc is not None else None
        if exc is not None and (site or "").startswith(SUITE.as_posix()):
            # the case itself broke (an API that this release does not have): not a raise
            row.update(raised=False, harness_error=suite.describe(exc))
            exc = None
        if exc is not None:
            matches = errhints.explain(exc)
            # "identified": errhints knows the raise site from its site index, but no entry
            entries = [m for m in matches if m.confidence != "identified"]
            best = entries[0] if entries else None
            row.update(
                type=type(exc).__name__,
                message=" ".join(str(exc).split())[:300],
                site=site,
                best=best.id if best else None,
                confidence=best.confidence if best else None,
                identified=bool(matches) and not entries,
                explained=best is not None and best.id not in case.not_ids,
                right=best is not None and case.expected is not None and best.id == case.expected,
                gap=case.gap,
            )
        else:
            row.update(explained=False, right=False, identified=False)
        rows.append(row)

    raised = [r for r in rows if r["raised"]]
    versions = {}
    for dist in ("llamafactory", "sglang", "transformers", "torch", "pydantic", "errhints"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = None
    summary = {
        "versions": versions,
        "cases": len(rows),
        "raised": len(raised),
        "explained": sum(r["explained"] for r in raised),
        "right_entry": sum(r["right"] for r in raised),
        "site_identified_only": sum(r["identified"] for r in raised),
        "by_family": {
            f"{p}/{f}": n
            for (p, f), n in sorted(Counter((r["package"], r["family"]) for r in rows).items())
        },
    }
    unexplained = [r for r in raised if not r["explained"]]
    wrong = [r for r in raised if r["explained"] and r["expected"] and not r["right"]]
    not_raised = [r["case"] for r in rows if not r["raised"] and "harness_error" not in r]
    broken = [r for r in rows if "harness_error" in r]

    if args.json:
        doc = {
            "case_broken_on_this_release": broken,
            "summary": summary,
            "cases": rows,
            "unexplained": unexplained,
            "not_raised": not_raised,
        }
        print(json.dumps(doc, indent=2))
        return 0

    print("versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    print(f"cases:                       {summary['cases']} ({len(broken)} not applicable here)")
    print(f"raised as expected:          {summary['raised']}")
    print(f"explained (any match):       {summary['explained']}")
    print(f"explained with right entry:  {summary['right_entry']}")
    print(f"site identified, no entry:   {summary['site_identified_only']}")
    for pkg in ("llamafactory", "sglang"):
        sub = [r for r in raised if r["package"] == pkg]
        print(
            f"  {pkg}: {len(sub)} raised, {sum(r['explained'] for r in sub)} explained, "
            f"{sum(r['right'] for r in sub)} with the right entry"
        )
    print("cases per family: " + ", ".join(f"{k} {v}" for k, v in summary["by_family"].items()))
    if broken:
        print(f"\ncases that do not apply to this release ({len(broken)}):")
        for r in broken:
            print(f"  {r['case']}: {r['harness_error'][:150]}")
    if not_raised:
        print(f"\ndid not raise ({len(not_raised)}): {', '.join(not_raised)}")
    if wrong:
        print(f"\nexplained by another entry than expected ({len(wrong)}):")
        for r in wrong:
            print(f"  {r['case']}: got {r['best']} ({r['confidence']}), expected {r['expected']}")
    print(f"\nunexplained ({len(unexplained)}):")
    for r in unexplained:
        tag = " (entry exists: " + r["expected"] + ")" if r["expected"] else ""
        tag += " (site identified)" if r["identified"] else ""
        print(f"  [{r['case']}] {r['type']}: {r['message'][:160]} @ {r['site']}{tag}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
