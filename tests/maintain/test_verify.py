"""``errhints catalog verify``: catalog facts checked against a (fake) released source tree."""

from __future__ import annotations

import importlib.util
import json
import os
import textwrap
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from errhints._cli import main as cli_main
from errhints._core.catalog import Entry, load_catalog
from errhints._maintain.names import INDEX_FILE
from errhints._maintain.releases import (
    RELEASE_MARKER,
    ReleaseUnavailable,
    cached_release,
    default_cache_dir,
    fetch_release,
)
from errhints._maintain.verify import (
    EntryReport,
    VerifyReport,
    needed_releases,
    verify_catalog,
)


def main(argv: list[str]) -> int:
    """``errhints catalog ARGV...`` as the command line runs it; the exit status."""
    try:
        return cli_main(["catalog", *argv])
    except SystemExit as exc:  # argparse's usage errors
        return exc.code if isinstance(exc.code, int) else 2


X_PY = '''\
"""A module of a fake sglang release."""

import logging
import os
from dataclasses import dataclass

from sglang.srt.consts import HINT_MSG

logger = logging.getLogger(__name__)



class Scheduler:
    def check_memory(self, used, total):
        if used > total:
            raise RuntimeError(
                f"Not enough memory: used {used} of {total} bytes. "
                "Lower --mem-fraction-static."
            )

    def event_loop(self):
        def handle(req):
            raise ValueError("Request %s was aborted: %s" % (req.rid, req.reason))

        return handle

    def load(self, name):
        raise ValueError("Cannot load {} from {path}".format(name, path=self.path))

    def lookup(self, key):
        raise KeyError("Unknown key " + repr(key) + ", see the docs.")

    def log_import(self, name, err):
        logger.warning("Ignore import error when loading %s: %s", name, err)


class Outer:
    class Inner:
        def method(self):
            msg = f"Inner failure in {self!r}."
            cleanup()
            raise RuntimeError(msg)


def capture(err):
    raise RuntimeError(f"Capture failed: {err}\\n{HINT_MSG}")


def wrapped(failure_msg, error_msg):
    raise RuntimeError(f"{failure_msg}: {error_msg}")


def timeout():
    return int(os.environ.get("SGLANG_FAKE_TIMEOUT", "10"))


def cleanup():
    pass


class TransferError(Exception):
    def __init__(self, room, reason):
        super().__init__(reason)
        self.room = room
        self.reason = reason

    def __str__(self):
        return f"TransferError(room={self.room}): {self.reason}"


def fail_transfer(room):
    raise TransferError(room, "unknown")


@dataclass
class FakeServerArgs:
    mem_fraction_static: float = 0.9
    chunked_prefill_size: int = 8192


def add_cli_args(parser):
    parser.add_argument("--mem-fraction-static", type=float)
    parser.add_argument("--chunked-prefill-size", type=int)
'''

CONSTS_PY = """\
HINT_MSG = (
    "Possible solutions:\\n"
    "1. lower --mem-fraction-static\\n"
)
"""


def line_of(source: str, needle: str) -> int:
    """The 1-based line of the first occurrence of ``needle`` in ``source``."""
    return source[: source.index(needle)].count("\n") + 1


def write_release(root: Path, files: Mapping[str, str]) -> Path:
    """A release tree: package-relative path -> source text."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def release(tmp_path: Path) -> Path:
    """A fake sglang 0.5.23 source tree."""
    return write_release(
        tmp_path / "sglang-0.5.23",
        {
            "sglang/__init__.py": "",
            "sglang/srt/__init__.py": "",
            "sglang/srt/x.py": X_PY,
            "sglang/srt/consts.py": CONSTS_PY,
        },
    )


def toml_value(value: Any) -> str:
    """A TOML literal for a string, int, list or inline table (JSON escapes are TOML escapes)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(value)


def write_entry(
    directory: Path,
    slug: str,
    template: str,
    *,
    sites: Sequence[tuple[str, str, int | None]] = (),
    release: str | dict[str, str] = "0.5.23",
    mentions: Mapping[str, list[str]] | None = None,
    context: Sequence[Mapping[str, Any]] = (),
    kind: str = "raise",
) -> None:
    """Write ``<directory>/sglang/<slug>.toml`` with the given facts."""
    lines = [
        f'id = "sglang.{slug}"',
        'package = "sglang"',
        f'title = "Test entry {slug}"',
        'exception = "RuntimeError"',
        f"template = {toml_value(template)}",
        f'kind = "{kind}"',
        f"release = {toml_value(release) if isinstance(release, dict) else json.dumps(release)}",
        'meaning = "A test entry."',
        'causes = ["a cause"]',
        'fixes = ["a fix"]',
    ]
    if context:
        lines.append(f"context = {{ frames = {toml_value(list(context))} }}")
    for path, function, line in sites:
        lines += ["[[sites]]", f'path = "{path}"', f'function = "{function}"']
        lines.append(f'release = "{release}"')
        if line is not None:
            lines.append(f"line = {line}")
    if mentions:
        lines.append("[mentions]")
        lines += [f"{kind_} = {toml_value(names)}" for kind_, names in mentions.items()]
    path = directory / "sglang" / f"{slug}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def load(directory: Path, monkeypatch: pytest.MonkeyPatch) -> list[Entry]:
    """The entries of a test catalog directory only."""
    monkeypatch.delenv("ERRHINTS_CATALOG_PATH", raising=False)
    catalog = load_catalog([directory], builtin=False)
    assert not catalog.problems, catalog.problems
    return list(catalog)


def verify(
    directory: Path, release_root: Path | None, monkeypatch: pytest.MonkeyPatch
) -> dict[str, EntryReport]:
    """Verify a test catalog against the fake release; reports by entry id."""
    report = verify_catalog(
        load(directory, monkeypatch), releases={("sglang", "0.5.23"): release_root}
    )
    return {e.id: e for e in report.entries}


X = "sglang/srt/x.py"

# (slug, template, function, needle marking the line the entry's `line` hint points at)
GOOD_SITES = [
    (
        "implicit-concat",
        "Not enough memory: used {used} of {total} bytes. Lower --mem-fraction-static.",
        "Scheduler.check_memory",
        'raise RuntimeError(\n                f"Not enough',
    ),
    (
        "percent-in-nested-function",
        "Request {req.rid} was aborted: {req.reason}",
        "Scheduler.event_loop.<locals>.handle",
        '"Request %s',
    ),
    ("str-format", "Cannot load {name} from {self.path}", "Scheduler.load", '"Cannot load'),
    ("concatenation", "Unknown key {key!r}, see the docs.", "Scheduler.lookup", "Unknown key"),
    (
        "logging-args",
        "Ignore import error when loading {name}: {err}",
        "Scheduler.log_import",
        "logger.warning",
    ),
    (
        "message-in-variable",
        "Inner failure in {self!r}.",
        "Outer.Inner.method",
        "raise RuntimeError(msg)",
    ),
    (
        "imported-constant-inlined",
        "Capture failed: {err}\nPossible solutions:\n1. lower --mem-fraction-static\n",
        "capture",
        "Capture failed",
    ),
    ("punctuation-only", "{failure_msg}: {error_msg}", "wrapped", '{failure_msg}: {error_msg}"'),
    (
        "built-by-exception-class",
        "TransferError(room={self.room}): {self.reason}",
        "fail_transfer",
        "raise TransferError(room",
    ),
]


def test_good_sites_verify_at_their_lines(
    tmp_path: Path, release: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Messages built by implicit concatenation, %, .format, +, logging args, a variable, an
    imported constant or the raised class's __str__ verify at the hinted line, without warning."""
    for slug, template, function, needle in GOOD_SITES:
        write_entry(tmp_path / "cat", slug, template, sites=[(X, function, line_of(X_PY, needle))])
    reports = verify(tmp_path / "cat", release, monkeypatch)
    for slug, _, function, _ in GOOD_SITES:
        entry = reports[f"sglang.{slug}"]
        assert entry.status == "ok", (slug, entry.failures)
        assert entry.category == "in-package"
        assert entry.warnings == [], slug
        (check,) = entry.checks
        assert check.subject == f"{X}:{function}"
        assert check.release == "sglang==0.5.23"
    built_in = reports["sglang.built-by-exception-class"].checks[0].detail
    assert "built in TransferError.__str__" in built_in


def test_moved_line_is_a_warning_not_a_failure(
    tmp_path: Path, release: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A site whose line hint is off still verifies and says where the text is now."""
    found = line_of(X_PY, '"Cannot load')
    write_entry(
        tmp_path / "cat",
        "moved",
        "Cannot load {name} from {self.path}",
        sites=[(X, "Scheduler.load", found + 40)],
    )
    entry = verify(tmp_path / "cat", release, monkeypatch)["sglang.moved"]
    assert entry.status == "ok"
    assert entry.checks[0].line == found
    assert entry.warnings == [
        f"site {X}:Scheduler.load: line moved: found at line {found}, the entry says {found + 40}"
    ]


def test_wrong_function_fails_naming_the_functions_there(
    tmp_path: Path, release: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A qualname that is not in the file fails; qualnames ending the same way are suggested."""
    write_entry(
        tmp_path / "cat",
        "wrong-function",
        "Request {rid} was aborted: {reason}",
        sites=[(X, "Scheduler.handle", None)],
    )
    entry = verify(tmp_path / "cat", release, monkeypatch)["sglang.wrong-function"]
    assert entry.status == "failed"
    assert entry.failures == [
        f"site {X}:Scheduler.handle: function Scheduler.handle not found in {X} "
        "(there: Scheduler.event_loop.<locals>.handle)"
    ]


def test_text_of_another_function_fails_and_says_where_it_is_built(
    tmp_path: Path, release: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Text raised elsewhere in the file does not verify at the wrong site; the reason says where."""
    write_entry(
        tmp_path / "cat",
        "wrong-site",
        "Cannot load {name} from {self.path}",
        sites=[(X, "Scheduler.lookup", None)],
    )
    entry = verify(tmp_path / "cat", release, monkeypatch)["sglang.wrong-site"]
    assert entry.status == "failed"
    (reason,) = entry.failures
    assert reason.startswith(f"site {X}:Scheduler.lookup: template text not found in")
    assert "'Cannot load ' is not built there" in reason
    assert f"it is built in Scheduler.load (line {line_of(X_PY, 'def load')})" in reason


@pytest.mark.parametrize(
    ("template", "missing"),
    [
        ("Not enough memory: used {used} of {total} bytes, lower it.", "' bytes, lower it.'"),
        ("not enough memory: used {used} of {total} bytes. ", "'not enough memory: used '"),
        ("Lower --mem-fraction-static.{x} Not enough memory: ", "' Not enough memory: ' (piece 2"),
        ("Not enough memory: used 5 of {total} bytes.", "'Not enough memory: used 5 of '"),
    ],
    ids=["wrong-word", "case-differs", "out-of-order", "value-instead-of-placeholder"],
)
def test_wrong_text_fails(
    template: str,
    missing: str,
    tmp_path: Path,
    release: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Literal pieces compare exactly and in order; the reason quotes the piece not found."""
    write_entry(tmp_path / "cat", "bad-text", template, sites=[(X, "Scheduler.check_memory", 16)])
    entry = verify(tmp_path / "cat", release, monkeypatch)["sglang.bad-text"]
    assert entry.status == "failed"
    (reason,) = entry.failures
    assert missing in reason


def test_punctuation_template_fails_without_its_punctuation(
    tmp_path: Path, release: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mostly-placeholder template still needs its pieces (here ' -> ') in the function."""
    write_entry(tmp_path / "cat", "arrow", "{a} -> {b}", sites=[(X, "wrapped", None)])
    entry = verify(tmp_path / "cat", release, monkeypatch)["sglang.arrow"]
    assert entry.status == "failed"
    assert "' -> ' is not built there" in entry.failures[0]


def test_missing_file_and_unparsable_file_fail(
    tmp_path: Path, release: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A site path absent from the release, or not Python the verifier can parse, fails."""
    (release / "sglang/srt/broken.py").write_text("def f(:\n", encoding="utf-8")
    write_entry(
        tmp_path / "cat", "no-file", "Anything at all here", sites=[("sglang/nope.py", "f", 1)]
    )
    write_entry(
        tmp_path / "cat", "broken", "Anything at all here", sites=[("sglang/srt/broken.py", "f", 1)]
    )
    reports = verify(tmp_path / "cat", release, monkeypatch)
    assert reports["sglang.no-file"].failures == [
        "site sglang/nope.py:f: sglang/nope.py does not exist in sglang==0.5.23"
    ]
    assert "sglang/srt/broken.py cannot be parsed" in reports["sglang.broken"].failures[0]


def test_mentions_found_and_missing(
    tmp_path: Path, release: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Flags, keys and env vars the release knows pass; unknown ones fail, with a suggestion."""
    site = [(X, "wrapped", None)]
    good = {
        "flags": ["--mem-fraction-static", "--chunked-prefill-size=4096"],
        "keys": ["mem_fraction_static", "chunked_prefill_size"],
        "env": ["SGLANG_FAKE_TIMEOUT"],
    }
    bad = {
        "flags": ["--mem-fraction-statik"],
        "keys": ["chunked_prefill_sizes"],
        "env": ["SGLANG_NO_SUCH_VARIABLE"],
    }
    write_entry(tmp_path / "cat", "good-mentions", "{a}: {b}", sites=site, mentions=good)
    write_entry(tmp_path / "cat", "bad-mentions", "{a}: {b}", sites=site, mentions=bad)
    reports = verify(tmp_path / "cat", release, monkeypatch)
    ok = reports["sglang.good-mentions"]
    assert ok.status == "ok", ok.failures
    assert [c.check for c in ok.checks] == ["site", "flag", "flag", "key", "key", "env"]
    assert reports["sglang.bad-mentions"].failures == [
        "flag --mem-fraction-statik: not found in sglang==0.5.23; "
        "did you mean --mem-fraction-static?",
        "key chunked_prefill_sizes: not found in sglang==0.5.23; did you mean chunked_prefill_size?",
        "env SGLANG_NO_SUCH_VARIABLE: not found in sglang==0.5.23",
    ]


def test_context_frames_are_checked(
    tmp_path: Path, release: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A context entry passes when its frame's file and function exist, and fails otherwise."""
    good = [{"path": X, "function": "Scheduler.check_memory"}, {"path": "sglang/srt/consts.py"}]
    write_entry(tmp_path / "cat", "ctx-good", "CUDA out of memory. {details}", context=good)
    write_entry(
        tmp_path / "cat",
        "ctx-bad",
        "CUDA out of memory. {details}",
        context=[{"path": X, "function": "Scheduler.capture"}, {"path": "sglang/gone.py"}],
    )
    reports = verify(tmp_path / "cat", release, monkeypatch)
    assert reports["sglang.ctx-good"].status == "ok"
    assert reports["sglang.ctx-good"].category == "context"
    assert reports["sglang.ctx-bad"].failures == [
        f"context {X}:Scheduler.capture: function Scheduler.capture not found in {X} (there: capture)",
        "context sglang/gone.py: sglang/gone.py does not exist in sglang==0.5.23",
    ]


def test_a_renamed_frame_is_checked_at_the_releases_it_names(
    tmp_path: Path, release: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A frame with its own ``release`` is looked for at the first and last release of that
    range, not at the entry's newest; a chosen release outside it skips the frame."""
    old_release = write_release(
        tmp_path / "sglang-0.4.0",
        {"sglang/__init__.py": "", "sglang/srt/old.py": "class Runner:\n    def go(self): ...\n"},
    )
    mid_release = write_release(
        tmp_path / "sglang-0.5.0",
        {"sglang/__init__.py": "", "sglang/srt/x.py": "def capture(): ...\n"},
    )
    write_entry(
        tmp_path / "cat",
        "renamed",
        "CUDA out of memory. {details}",
        release={"first": "0.4.0", "last": "0.5.23"},
        context=[
            {"path": X, "function": "Scheduler.check_memory"},
            {
                "path": "sglang/srt/old.py",
                "function": "Runner.go",
                "release": {"first": "0.4.0", "last": "0.5.0"},
            },
        ],
    )
    entries = load(tmp_path / "cat", monkeypatch)
    roots = {
        ("sglang", "0.4.0"): old_release,
        ("sglang", "0.5.0"): mid_release,
        ("sglang", "0.5.23"): release,
    }
    assert needed_releases(entries) == sorted(roots)
    report = verify_catalog(entries, releases=roots)
    assert report.entries[0].failures == [
        "context sglang/srt/old.py:Runner.go: sglang/srt/old.py does not exist in sglang==0.5.0"
    ]
    checked = {(c.subject, c.release) for c in report.entries[0].checks if c.status == "ok"}
    assert checked == {
        (f"{X}:Scheduler.check_memory", "sglang==0.5.23"),
        ("sglang/srt/old.py:Runner.go", "sglang==0.4.0"),
    }
    chosen = verify_catalog(entries, releases=roots, target={"sglang": "0.5.23"})
    skipped = [c.detail for c in chosen.entries[0].checks if c.status == "skipped"]
    assert skipped == ["sglang==0.5.23 is outside this frame's releases"]
    assert chosen.entries[0].status == "ok"


def test_entries_without_a_release_are_skipped_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unavailable or absent release skips its entries, and the report says why."""
    write_entry(tmp_path / "cat", "old", "{a}: {b}", sites=[(X, "wrapped", None)], release="0.4.0")
    write_entry(tmp_path / "cat", "new", "{a}: {b}", sites=[(X, "wrapped", None)])
    entries = load(tmp_path / "cat", monkeypatch)
    report = verify_catalog(
        entries,
        releases={("sglang", "0.5.23"): None},
        reasons={("sglang", "0.5.23"): "pip download sglang==0.5.23 failed: offline"},
    )
    by_id = {e.id: e for e in report.entries}
    assert by_id["sglang.new"].status == "skipped"
    assert by_id["sglang.new"].reason == (
        "sglang==0.5.23 is not available: pip download sglang==0.5.23 failed: offline"
    )
    assert by_id["sglang.old"].reason == "no source of sglang==0.4.0 was given"
    assert report.summary() == (
        "verified 0 of 0 in-package entries (0 context entries checked, 2 skipped): n/a"
    )


def test_an_in_package_entry_needs_a_checked_site(
    tmp_path: Path, release: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mentions that pass do not make an entry verified when its site's release is missing."""
    cat = tmp_path / "cat"
    write_entry(cat, "old-site", "{a}: {b}", sites=[(X, "wrapped", None)], release="0.5.22")
    text = (cat / "sglang" / "old-site.toml").read_text(encoding="utf-8")
    text = text.replace('release = "0.5.22"', 'release = "0.5.23"', 1)  # the entry's own pin
    text += '[mentions]\nflags = ["--mem-fraction-static"]\n'
    (cat / "sglang" / "old-site.toml").write_text(text, encoding="utf-8")
    entries = load(cat, monkeypatch)
    assert needed_releases(entries) == [("sglang", "0.5.22"), ("sglang", "0.5.23")]
    report = verify_catalog(entries, releases={("sglang", "0.5.23"): release})
    (entry,) = report.entries
    assert [c.status for c in entry.checks] == ["skipped", "ok"]
    assert entry.status == "skipped"
    assert entry.reason == "no source of sglang==0.5.22 was given"


def test_target_release_checks_every_entry_there(
    tmp_path: Path, release: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a chosen release every entry is checked there: a renamed function fails, a site
    still present passes (its line hint was for another release, so no warning)."""
    newer = write_release(
        tmp_path / "sglang-0.6.0",
        {"sglang/srt/x.py": "\n\n" + X_PY.replace("def lookup(", "def find(")},
    )
    lookup_line = line_of(X_PY, '"Unknown key')
    write_entry(
        tmp_path / "cat",
        "lookup",
        "Unknown key {key!r}, see the docs.",
        sites=[(X, "Scheduler.lookup", lookup_line)],
    )
    load_line = line_of(X_PY, '"Cannot load')
    write_entry(
        tmp_path / "cat",
        "load",
        "Cannot load {name} from {self.path}",
        sites=[(X, "Scheduler.load", load_line)],
    )
    entries = load(tmp_path / "cat", monkeypatch)
    assert needed_releases(entries) == [("sglang", "0.5.23")]
    assert needed_releases(entries, {"sglang": "0.6.0"}) == [("sglang", "0.6.0")]
    report = verify_catalog(
        entries, releases={("sglang", "0.6.0"): newer}, target={"sglang": "0.6.0"}
    )
    by_id = {e.id: e for e in report.entries}
    (reason,) = by_id["sglang.lookup"].failures
    assert reason.startswith(f"site {X}:Scheduler.lookup: function Scheduler.lookup not found")
    moved = by_id["sglang.load"]
    assert moved.status == "ok"
    assert moved.checks[0].release == "sglang==0.6.0"
    assert moved.checks[0].line == load_line + 2
    assert moved.warnings == []


def test_report_summary_and_json(
    tmp_path: Path, release: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The summary counts in-package, context and skipped entries; the JSON form round-trips."""
    write_entry(tmp_path / "cat", "good", "{a}: {b}", sites=[(X, "wrapped", None)])
    write_entry(tmp_path / "cat", "bad", "{a} -> {b}", sites=[(X, "wrapped", None)])
    write_entry(tmp_path / "cat", "ctx", "CUDA out of memory. {details}", context=[{"path": X}])
    write_entry(tmp_path / "cat", "bare", "A message with enough literal text")
    report = verify_catalog(
        load(tmp_path / "cat", monkeypatch), releases={("sglang", "0.5.23"): release}
    )
    assert isinstance(report, VerifyReport)
    assert report.summary() == (
        "verified 1 of 2 in-package entries (1 context entries checked, 1 skipped): 50.0%"
    )
    data = json.loads(json.dumps(report.to_dict()))
    assert data["summary"]["in_package_ok"] == 1
    assert data["summary"]["failed"] == 1
    assert data["releases"] == {"sglang==0.5.23": str(release)}
    bare = next(e for e in data["entries"] if e["id"] == "sglang.bare")
    assert bare["status"] == "skipped"
    assert bare["reason"] == "nothing to verify (no sites, context or mentions)"


# --- fetching releases ---------------------------------------------------------------------


def make_wheel(folder: Path, name: str = "fakerel", version: str = "1.0") -> Path:
    """A minimal py3 wheel: package files, a stray module, a data file and a path escaping it."""
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    dist = f"{name}-{version}.dist-info"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(f"{name}/__init__.py", 'FLAG = "--fake-flag"\n')
        archive.writestr(f"{name}/sub/mod.py", "def f():\n    raise ValueError('fake failure')\n")
        archive.writestr(f"{name}/data.json", "{}")
        archive.writestr("stray.py", "")
        archive.writestr(f"{name}/../../../../escape.py", "")  # would land in the cache dir
        archive.writestr(
            f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        )
        archive.writestr(
            f"{dist}/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        archive.writestr(f"{dist}/RECORD", "")
    return wheel


needs_pip = pytest.mark.skipif(
    importlib.util.find_spec("pip") is None, reason="pip is not installed in this interpreter"
)


@pytest.fixture
def local_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """pip sees only a local find-links directory: no index, no config, no network."""
    links = tmp_path / "links"
    links.mkdir()
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(links))
    return links


def test_cache_dir_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ERRHINTS_CACHE_DIR wins, then $XDG_CACHE_HOME/errhints, then ~/.cache/errhints; off: None."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("ERRHINTS_CACHE_DIR", raising=False)
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "errhints"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "errhints"
    monkeypatch.setenv("ERRHINTS_CACHE_DIR", str(tmp_path / "mine"))
    assert default_cache_dir() == tmp_path / "mine"
    monkeypatch.setenv("ERRHINTS_CACHE_DIR", "off")
    assert default_cache_dir() is None


def test_a_cached_release_never_runs_pip(tmp_path: Path, local_index: Path) -> None:
    """A release already in the cache is returned as is (pip here could not find it anyway)."""
    cache = tmp_path / "cache"
    tree = write_release(cache / "releases" / "sglang-0.5.23", {"sglang/srt/x.py": X_PY})
    assert cached_release("sglang", "0.5.23", cache) == tree
    assert fetch_release("sglang", "0.5.23", cache) == tree


@needs_pip
def test_fetch_downloads_once_and_unpacks_only_sources(tmp_path: Path, local_index: Path) -> None:
    """The first fetch runs pip and keeps only the package's .py files and METADATA (no path
    escapes the release directory); the second is served from the cache once the wheel is gone."""
    wheel = make_wheel(local_index)
    cache = tmp_path / "cache"
    assert cached_release("fakerel", "1.0", cache) is None
    root = fetch_release("fakerel", "1.0", cache)
    assert root == cache / "releases" / "fakerel-1.0"
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    assert files == [
        RELEASE_MARKER,
        "fakerel-1.0.dist-info/METADATA",
        "fakerel/__init__.py",
        "fakerel/sub/mod.py",
    ]
    assert [p.name for p in (cache / "releases").iterdir()] == ["fakerel-1.0"]
    assert not list(tmp_path.rglob("escape.py"))
    wheel.unlink()
    assert fetch_release("fakerel", "1.0", cache) == root


@needs_pip
def test_fetch_failure_is_a_clear_release_unavailable(tmp_path: Path, local_index: Path) -> None:
    """When pip cannot get the release the error carries pip's last error line; nothing is left."""
    cache = tmp_path / "cache"
    with pytest.raises(ReleaseUnavailable) as info:
        fetch_release("fakerel", "9.9", cache)
    assert info.value.reason.startswith("pip download fakerel==9.9 failed: ERROR: ")
    assert "fakerel==9.9" in info.value.reason.partition("ERROR: ")[2]
    assert list((cache / "releases").iterdir()) == []


def test_fetch_refuses_names_that_are_not_names(tmp_path: Path) -> None:
    """Package and version strings cannot escape the cache or smuggle pip options."""
    with pytest.raises(ValueError, match="not a package name"):
        fetch_release("../evil", "1.0", tmp_path)
    with pytest.raises(ValueError, match="not a version"):
        fetch_release("sglang", "--index-url=http://x", tmp_path)


@needs_pip
def test_cache_off_fetches_into_a_temporary_directory(
    tmp_path: Path, local_index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ERRHINTS_CACHE_DIR=off ignores the cache on disk and downloads into a temporary dir."""
    make_wheel(local_index)
    xdg = tmp_path / "xdg"
    write_release(xdg / "errhints" / "releases" / "fakerel-1.0", {"fakerel/__init__.py": ""})
    monkeypatch.setenv("XDG_CACHE_HOME", str(xdg))
    monkeypatch.setenv("ERRHINTS_CACHE_DIR", "off")
    root = fetch_release("fakerel", "1.0")
    assert xdg not in root.parents
    assert (root / "fakerel" / "sub" / "mod.py").is_file()
    assert (root / RELEASE_MARKER).is_file()


@needs_pip
def test_index_of_a_fetched_release_is_built_once(
    tmp_path: Path, local_index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mention index is saved next to a fetched release and read back on the next run."""
    make_wheel(local_index)
    root = fetch_release("fakerel", "1.0", tmp_path / "cache")
    cat = tmp_path / "cat"
    (cat / "fakerel").mkdir(parents=True)
    (cat / "fakerel" / "fake.toml").write_text(
        textwrap.dedent(
            """\
            id = "fakerel.fake"
            package = "fakerel"
            title = "Fake"
            exception = "ValueError"
            template = "fake failure"
            release = "1.0"
            meaning = "m"
            causes = ["c"]
            fixes = ["f"]
            [[sites]]
            path = "fakerel/sub/mod.py"
            function = "f"
            release = "1.0"
            line = 2
            [mentions]
            flags = ["--fake-flag"]
            """
        ),
        encoding="utf-8",
    )
    entries = load(cat, monkeypatch)
    first = verify_catalog(entries, releases={("fakerel", "1.0"): root})
    assert first.entries[0].status == "ok", first.entries[0].failures
    assert (root / INDEX_FILE).is_file()
    (root / "fakerel" / "__init__.py").write_text("", encoding="utf-8")  # the flag's only home
    second = verify_catalog(entries, releases={("fakerel", "1.0"): root})
    assert second.entries[0].status == "ok"  # the saved index still knows --fake-flag


# --- command line --------------------------------------------------------------------------


@pytest.fixture
def cli_env(tmp_path: Path, release: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache holding the fake sglang 0.5.23 and a catalog directory; returns the catalog."""
    cache = tmp_path / "cache"
    (cache / "releases").mkdir(parents=True)
    release.rename(cache / "releases" / "sglang-0.5.23")
    monkeypatch.setenv("ERRHINTS_CACHE_DIR", str(cache))
    monkeypatch.delenv("ERRHINTS_CATALOG_PATH", raising=False)
    cat = tmp_path / "cat"
    line = line_of(X_PY, '"Cannot load')
    write_entry(
        cat, "good", "Cannot load {name} from {self.path}", sites=[(X, "Scheduler.load", line)]
    )
    write_entry(cat, "ctx", "CUDA out of memory. {details}", context=[{"path": X}])
    return cat


def test_cli_verify_passes_with_exit_0(cli_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """All entries verified: the summary line and exit code 0."""
    assert main(["verify", "--no-builtin", "--catalog", str(cli_env)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == [
        "verified 1 of 1 in-package entries (1 context entries checked, 0 skipped): 100.0%"
    ]


def test_cli_verify_lists_failures_with_exit_1(
    cli_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A failing entry gets one FAIL line with its reasons, then the summary; exit code 1."""
    write_entry(
        cli_env, "bad", "{a}: {b}", sites=[(X, "wrapped", None)], mentions={"env": ["NOPE_NOPE"]}
    )
    assert main(["verify", "--no-builtin", "--catalog", str(cli_env)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "FAIL sglang.bad: env NOPE_NOPE: not found in sglang==0.5.23",
        "verified 1 of 2 in-package entries (1 context entries checked, 0 skipped): 50.0%",
    ]


def test_cli_verify_json(cli_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--json prints the whole report, load problems included."""
    assert main(["verify", "--json", "--no-builtin", "--catalog", str(cli_env)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["summary"]["in_package_ok"] == 1
    assert data["problems"] == []
    assert {e["id"] for e in data["entries"]} == {"sglang.good", "sglang.ctx"}


@needs_pip
def test_cli_verify_exit_3_when_a_release_cannot_be_fetched(
    cli_env: Path, local_index: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An unfetchable release exits 3; with --offline-ok its entries are skipped instead."""
    args = ["verify", "--release", "sglang==0.9.9", "--no-builtin", "--catalog", str(cli_env)]
    assert main(args) == 3
    captured = capsys.readouterr()
    assert "cannot fetch sglang==0.9.9: pip download sglang==0.9.9 failed: ERROR:" in captured.err
    assert "2 skipped" in captured.out
    assert main([*args, "--offline-ok"]) == 0
    assert "skip 2 entries (sglang.ctx, sglang.good): sglang==0.9.9 is not available" in (
        capsys.readouterr().out
    )


@pytest.mark.parametrize(
    "argv",
    [[], ["verify", "--release", "sglang"], ["verify", "--bogus"], ["frobnicate"]],
    ids=["no-command", "bad-release", "unknown-option", "unknown-command"],
)
def test_cli_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Usage errors return 2 with a message on stderr."""
    assert main(argv) == 2
    assert "error" in capsys.readouterr().err


def test_cli_check_reports_invalid_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``catalog check`` prints each file problem and exits 1; a clean catalog exits 0."""
    monkeypatch.delenv("ERRHINTS_CATALOG_PATH", raising=False)
    cat = tmp_path / "cat"
    write_entry(cat, "fine", "A message with enough literal text")
    assert main(["check", "--no-builtin", "--catalog", str(cat)]) == 0
    assert capsys.readouterr().out == "1 entries loaded, 0 problem(s)\n"
    (cat / "sglang" / "broken.toml").write_text('id = "sglang.broken"\n', encoding="utf-8")
    assert main(["check", "--no-builtin", "--catalog", str(cat)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{cat}/sglang/broken.toml: ")
    assert out[-1] == "1 entries loaded, 1 problem(s)"


def test_a_flag_named_only_in_a_message_is_not_a_flag_of_the_release(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the release's server defines its flags, a flag must be one of them (or an option
    string of another command): ``lower --cuda-graph-max-bs`` in a hint's text is a
    leftover of a removed flag, not a flag."""
    root = write_release(
        tmp_path / "sglang-0.5.23",
        {
            "sglang/__init__.py": "",
            "sglang/srt/__init__.py": "",
            "sglang/srt/x.py": X_PY,
            "sglang/srt/server_args.py": (
                "def add_cli_args(parser):\n"
                '    parser.add_argument("--mem-fraction-static", type=float)\n'
                '    parser.add_argument("--cuda-graph-max-bs-decode", type=int)\n'
            ),
            "sglang/bench.py": (
                "def main(parser):\n"
                '    parser.add_argument("--backend")\n'
                '    raise ValueError("lower --cuda-graph-max-bs or --mem-fraction-static")\n'
            ),
        },
    )
    site = [(X, "wrapped", None)]
    flags = ["--mem-fraction-static", "--backend", "--cuda-graph-max-bs"]
    write_entry(tmp_path / "cat", "hint-flag", "{a}: {b}", sites=site, mentions={"flags": flags})
    reports = verify(tmp_path / "cat", root, monkeypatch)
    checks = {c.subject: c.detail for c in reports["sglang.hint-flag"].checks if c.check == "flag"}
    assert checks == {
        "--mem-fraction-static": "found as a flag of the server",
        "--backend": "found as an option string",
        "--cuda-graph-max-bs": "found only inside message text, not as an option the release "
        "defines",
    }


def test_a_mention_for_part_of_the_range_is_checked_there(
    tmp_path: Path, release: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fix that names the flag each part of the range has: ``--x @ ..0.5.0`` is checked at
    0.5.0, a bare mention at the entry's newest release; a chosen release outside the
    mention's releases skips it."""
    server = 'def add(parser):\n    parser.add_argument("--{}", type=int)\n'
    old = write_release(
        tmp_path / "sglang-0.5.0",
        {"sglang/__init__.py": "", "sglang/srt/server_args.py": server.format("old-max-bs")},
    )
    flags = ["--old-max-bs @ ..0.5.0", "--mem-fraction-static"]
    write_entry(
        tmp_path / "cat",
        "split-flag",
        "CUDA out of memory. {details}",
        release={"first": "0.4.0", "last": "0.5.23"},
        context=[{"path": X}],
        mentions={"flags": flags},
    )
    entries = load(tmp_path / "cat", monkeypatch)
    roots = {("sglang", "0.5.0"): old, ("sglang", "0.5.23"): release}
    assert needed_releases(entries) == sorted(roots)
    (report,) = verify_catalog(entries, releases=roots).entries
    assert report.status == "ok", report.failures
    flags_at = {(c.subject, c.release) for c in report.checks if c.check == "flag"}
    assert flags_at == {
        ("--old-max-bs", "sglang==0.5.0"),
        ("--mem-fraction-static", "sglang==0.5.23"),
    }
    (chosen,) = verify_catalog(entries, releases=roots, target={"sglang": "0.5.23"}).entries
    skipped = [c.detail for c in chosen.checks if c.status == "skipped"]
    assert skipped == ["sglang==0.5.23 is outside the releases of this mention"]


@pytest.mark.parametrize("mention", ["--x @ 0.5", "--x @ ..banana", "--x @ 0.6.."])
def test_a_bad_release_qualifier_is_a_catalog_problem(tmp_path: Path, mention: str) -> None:
    """A qualifier must be a range of real releases that meets the entry's range."""
    write_entry(
        tmp_path,
        "bad-qualifier",
        "CUDA out of memory. {details}",
        context=[{"path": X}],
        mentions={"flags": [mention]},
    )
    catalog = load_catalog([tmp_path], builtin=False)
    assert [p.field for p in catalog.problems] == ["mentions.flags"]
