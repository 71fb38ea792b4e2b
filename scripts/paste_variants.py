"""Put the development pastes errhints explains into the other forms real pastes take.

Each development positive whose expected entry is explained today (see
``scripts/paste_report.py``) is rewritten, one way at a time, as a paste of the same failure
would look elsewhere, and explained again in this process. The report counts, per way, the
pastes that lost their entry (``miss``) or kept it only as ``weak`` where the rule does not
ask for weak. Two kinds of ways:

* the whole paste: behind a per-line prefix (docker compose, journald, ``srun --label``,
  torchrun, Ray, kubectl), quoted, indented, with CRLF, copied from a web page (no-break
  spaces, HTML entities), with the shell's ``Killed`` or a log line before or after it;
* the message alone (the manifest's ``message`` with its ``exception``), as an issue's title
  puts it: bare, as a Markdown heading, in lower case, with a clause after it (``... when
  fine-tuning Qwen3``), in quotes or backticks, cut with an ellipsis.

Only development pastes are read. A way that loses pastes names a form the text door does
not read yet; the pastes it names are the ones to look at.

    PYTHONPATH=src python3.11 scripts/paste_variants.py [WAY ...] [--list]
"""

from __future__ import annotations

import argparse
import html
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import paste_report as report

Way = Callable[[str], str]


def _each_line(change: Callable[[str], str]) -> Way:
    return lambda text: "\n".join(change(line) for line in text.split("\n"))


def _prefixed(prefix: str) -> Way:
    return _each_line(lambda line: prefix + line if line else line)


#: Ways to rewrite a whole paste.
PASTE_WAYS: dict[str, Way] = {
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "indent": _prefixed("    "),
    "tab": _prefixed("\t"),
    "quote": _each_line(lambda line: "> " + line),
    "fenced-in-prose": lambda t: "I ran the job and got this:\n\n```\n" + t + "\n```\nAny idea?\n",
    "details": lambda t: "<details><summary>log</summary>\n\n```\n" + t + "\n```\n</details>\n",
    "torchrun-rank": _prefixed("[rank0]: "),
    "ray-worker": _prefixed("(WorkerDict pid=12345) "),
    "kubectl": _prefixed("2025-06-11T09:30:02.123456789Z "),
    "docker-compose": _prefixed("worker-1  | "),
    "docker-compose-t": _prefixed("app_1  | 2025-06-11T09:30:02.123456789Z "),
    "journald": _prefixed("Jun 11 09:30:02 gpu-node-3 python3[12345]: "),
    "srun-label": _prefixed("0: "),
    "bracket-time": _prefixed("[2025-06-11 09:30:02] "),
    "no-break-spaces": lambda t: t.replace("  ", "\u00a0\u00a0"),
    "html-entities": lambda t: html.escape(t, quote=True),
    "ansi-colour": _each_line(lambda line: f"\x1b[31m{line}\x1b[0m" if line else line),
    "byte-order-mark": lambda t: "\ufeff" + t,
    "log-line-after": lambda t: (
        t.rstrip("\n") + "\n[2025-06-11 09:30:03] INFO:     Shutting down\n"
    ),
    "killed-after": lambda t: t.rstrip("\n") + "\nKilled\n",
    "prose-before": lambda t: "运行时报错如下：\n" + t,
    "one-paragraph": lambda t: " ".join(t.split()) + "\n",
}


def _typed(row: dict[str, Any]) -> str:
    name = (row.get("exception") or "").rpartition(".")[2]
    return f"{name}: {row['message']}" if name else str(row["message"])


#: Ways to put a message as one line (from the manifest's ``exception`` and ``message``).
LINE_WAYS: dict[str, Callable[[dict[str, Any]], str]] = {
    "bare": lambda r: r["message"],
    "title-tag": lambda r: "[Bug] " + r["message"],
    "title-prose": lambda r: "运行报错：" + r["message"],
    "heading": lambda r: "# " + _typed(r),
    "lower-case": lambda r: r["message"][:1].lower() + r["message"][1:],
    "no-full-stop": lambda r: r["message"].rstrip("."),
    "clause-after": lambda r: _typed(r).rstrip(".") + " when fine-tuning Qwen3",
    "backticks": lambda r: "I get `" + _typed(r) + "` when starting the server",
    "double-quotes": lambda r: 'I get "' + r["message"] + '" when starting the server',
    "ellipsis": lambda r: r["message"][:80] + ("..." if len(r["message"]) > 80 else ""),
}


def _outcome(text: str, expected: str) -> str:
    from errhints._core.pipeline import explain_text

    family = report._family(expected)
    best = "miss"
    for explained in explain_text(text):
        for match in explained.matches:
            if report._family(match.entry.id) != family:
                continue
            if match.confidence in report.CONFIDENT or match.via in report.RULE_VIAS:
                return "ok"
            best = "weak"
    return best


def _line_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows whose manifest message is the paste's own one-line message, as shown."""
    return [
        r
        for r in rows
        if r.get("message")
        and "\n" not in r["message"].strip()
        and not r["message"].startswith("[")
        and not any(mark in r["message"] for mark in report.NOT_IN_PASTE)
        and "(" not in r["message"][-12:]  # a collector's note at the end
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ways", nargs="*", help="only these ways (default: all)")
    parser.add_argument("--list", action="store_true", help="list the ways and stop")
    parser.add_argument("--show", type=int, default=12, help="pastes named per way")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join([*PASTE_WAYS, *LINE_WAYS]))
        return 0
    unknown = [w for w in args.ways if w not in PASTE_WAYS and w not in LINE_WAYS]
    if unknown:
        parser.error(f"unknown way: {', '.join(unknown)} (see --list)")
    rows = [
        r
        for r in report.load_manifest("dev")
        if r["polarity"] == "positive" and r.get("expected_entry")
    ]
    texts = {r["file"]: (report.PASTES / r["file"]).read_text(encoding="utf-8") for r in rows}
    pastes = [r for r in rows if _outcome(texts[r["file"]], r["expected_entry"]) == "ok"]
    lines = [r for r in _line_rows(rows) if _outcome(_typed(r), r["expected_entry"]) == "ok"]
    print(f"{len(pastes)} development pastes explained whole, {len(lines)} as one typed line")
    print(f"{'way':18} {'lost':>5}  pastes")
    for name, way in PASTE_WAYS.items():
        if args.ways and name not in args.ways:
            continue
        lost = [
            (r["file"], o)
            for r in pastes
            if (o := _outcome(way(texts[r["file"]]), r["expected_entry"])) != "ok"
        ]
        _print(name, lost, len(pastes), args.show)
    for name, put in LINE_WAYS.items():
        if args.ways and name not in args.ways:
            continue
        lost = [
            (r["file"], o) for r in lines if (o := _outcome(put(r), r["expected_entry"])) != "ok"
        ]
        _print(name, lost, len(lines), args.show)
    return 0


def _print(name: str, lost: list[tuple[str, str]], of: int, show: int) -> None:
    named = " ".join(f"{f.split('/')[1].split('-')[0]}:{o}" for f, o in lost[:show])
    more = " ..." if len(lost) > show else ""
    print(f"{name:18} {len(lost):>5}  {named}{more}  (of {of})")


if __name__ == "__main__":
    sys.exit(main())
