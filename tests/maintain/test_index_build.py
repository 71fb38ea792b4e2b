"""The site index builder on tiny fake releases (tests/data/releases): extraction, merge, write."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from errhints._core import siteindex
from errhints._core.catalog import Entry, entry_from_mapping
from errhints._core.releases import ReleaseRange
from errhints._maintain.index import build_index
from errhints._maintain.index.build import release_sites
from errhints._maintain.index.extract import extract_source
from errhints._maintain.index.update import drift
from errhints._maintain.ranges import check_ranges

RELEASES = Path(__file__).resolve().parents[1] / "data" / "releases"
RELEASE_LIST = {
    "sglang": [("sglang", "0.1.0"), ("sglang", "0.2.0")],
    "llamafactory": [("llmtuner", "0.1.0"), ("llamafactory", "0.2.0")],
}
RENAMES = RELEASES / "renames.toml"
SOURCES = {key: RELEASES / f"{key[0]}-{key[1]}" for keys in RELEASE_LIST.values() for key in keys}


def _build(out: Path) -> None:
    build_index(RELEASE_LIST, out, sources=SOURCES, renames=RENAMES, lookalikes={})


@pytest.fixture
def index_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    out = tmp_path / "index"
    _build(out)
    monkeypatch.setenv(siteindex.ENV_SITEINDEX_DIR, str(out))
    siteindex.reset()
    yield out
    siteindex.reset()


def _rows(out: Path) -> dict[str, list[list[object]]]:
    rows: dict[str, list[list[object]]] = {}
    for file in sorted((out / "sites").glob("*.json")):
        rows.update(json.loads(file.read_text("utf-8")))
    return rows


def test_golden_sites(index_dir: Path) -> None:
    rows = _rows(index_dir)
    by_template = {str(r[3]): r for group in rows.values() for r in group}
    assert by_template["tp_size must be positive, got {self.tp_size}"] == [
        "sglang", "raise", "ValueError", "tp_size must be positive, got {self.tp_size}",
        "ServerArgs.__post_init__", "self.tp_size < 1", ["--tp-size"],
        [[0, 0, 18, "sglang/srt/server_args.py"], [1, 1, 19, "sglang/srt/server_args.py"]],
    ]  # fmt: skip
    # %-formatting, with the tuple's items as placeholders
    old = by_template[
        "Batch of {batch.size} requests exceeds the limit {server_args.max_running_requests}"
    ]
    assert old[7] == [[0, 0, 16, "sglang/srt/managers/scheduler.py"]]
    # .format() with positional and keyword fields; the project's own class is qualified
    empty = by_template["Empty batch {batch.id} on scheduler {self.name}"]
    assert empty[2] == "sglang.srt.managers.scheduler.SchedulerError"
    assert empty[5] == "not batch.reqs"
    # concatenation
    assert "Port {str(port)} is outside the valid range of ports" in by_template
    # pydantic validator
    validator = by_template["temperature must be non-negative, got {value}"]
    assert validator[4] == "ChatRequest.check_temperature"
    # parser.error, with its env variable
    error = by_template["--port cannot be 0 when SGLANG_STRICT_PORT is set"]
    assert error[1:3] == ["raise", "SystemExit"]
    assert error[6] == ["SGLANG_STRICT_PORT"]
    # assert in an else branch: its own condition is the guard
    check = by_template["mem_fraction_static must be above zero"]
    assert check[1:3] == ["assert", "AssertionError"]
    assert check[5] == "self.mem_fraction_static > 0"
    assert check[6] == ["--mem-fraction-static"]
    # logged error and warning
    assert by_template["Scheduler hit an exception: {str(e)}"][1] == "log"
    assert by_template["mem_fraction_static {self.mem_fraction_static} is very high"][1] == (
        "warning"
    )
    # SGLang envs.X
    foo = by_template["Foo mode is not supported with the overlap scheduler"]
    assert foo[6] == ["SGLANG_ENABLE_FOO"]
    # LlamaFactory keys, across the llmtuner -> llamafactory rename (one identity)
    quant = by_template["Quantization is only compatible with the LoRA method."]
    assert quant[6] == ["finetuning_type", "quantization_bit"]
    assert [run[3] for run in quant[7]] == [
        "llmtuner/hparams/parser.py",
        "llamafactory/hparams/parser.py",
    ]


def test_counts_and_releases(index_dir: Path) -> None:
    manifest = json.loads((index_dir / "stats.json").read_text("utf-8"))
    assert manifest["counts"]["sglang"]["sglang==0.1.0"] == {
        "assert": 1, "bare_assert": 1, "bare_raise": 2, "log": 1, "raise": 7, "warning": 1,
    }  # fmt: skip
    assert manifest["sites"] == {"llamafactory": 2, "sglang": 11}
    assert siteindex.releases("sglang") == ["0.1.0", "0.2.0"]
    assert siteindex.releases("llamafactory") == ["0.1.0", "0.2.0"]
    assert siteindex.releases("llmtuner") == ["0.1.0"]
    notice = (index_dir / "NOTICE").read_text("utf-8")
    assert "Apache License, Version 2.0" in notice
    assert "sgl-project" in notice and "hiyouga" in notice and "0.2.0" in notice


def test_moved_site_keeps_identity(index_dir: Path) -> None:
    history = siteindex.function_history("sglang", "check_port")
    assert history == [
        ("sglang/srt/utils.py", ReleaseRange("0.1.0", "0.1.0")),
        ("sglang/srt/network.py", ReleaseRange("0.2.0", "0.2.0")),
    ]
    found = siteindex.identify("ValueError", "Port 70000 is outside the valid range of ports")
    assert len(found) == 1
    assert found[0].path == "sglang/srt/network.py"
    assert found[0].releases == ReleaseRange("0.1.0", "0.2.0")
    assert found[0].url == (
        "https://github.com/sgl-project/sglang/blob/v0.2.0/python/sglang/srt/network.py#L7"
    )


def test_reworded_site_is_two_sites(index_dir: Path) -> None:
    old = siteindex.identify("RuntimeError", "Batch of 9 requests exceeds the limit 8")
    new = siteindex.identify("RuntimeError", "Batch of 9 requests exceeds max_running_requests=8")
    assert [i.releases for i in old] == [ReleaseRange("0.1.0", "0.1.0")]
    assert [i.releases for i in new] == [ReleaseRange("0.2.0", "0.2.0")]
    sites = siteindex.sites_at("sglang", "sglang/srt/managers/scheduler.py", "Scheduler.run_batch")
    assert len(sites) == 5


def test_drift_report() -> None:
    old, new = list(release_sites(RELEASE_LIST["sglang"], sources=SOURCES))
    result = drift("sglang", old, new)
    assert result.added == []
    assert result.removed == []
    assert [(a[3], b[3]) for a, b in result.reworded] == [
        (
            "Batch of {batch.size} requests exceeds the limit {server_args.max_running_requests}",
            "Batch of {batch.size} requests exceeds max_running_requests="
            "{server_args.max_running_requests}",
        )
    ]


def test_rebuild_is_bit_for_bit(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    _build(first)
    _build(second)
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    for name in files:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


@pytest.mark.parametrize(
    ("source", "template"),
    [
        ('raise ValueError("a {b} %d")', "a {{b}} %d"),
        ('raise ValueError(f"x={x!r:>{w}} y")', "x={x!r:>{w}} y"),
        ('raise ValueError("%(n)s is %s%%" % {"n": name})', "{name} is {?}%"),
        ('raise ValueError("{0} and {k.a}".format(p, k=q))', "{p} and {q.a}"),
        ('msg = f"got {v}"\nraise ValueError(msg)', "got {v}"),
        ('logger.exception("failed: %s", err)', "failed: {err}"),
        ('logging.log(logging.ERROR, "bad %s", x)', "bad {x}"),
    ],
)
def test_templates(source: str, template: str) -> None:
    body = "\n".join("    " + line for line in source.splitlines())
    code = f"import logging\nlogger = logging.getLogger()\ndef f():\n{body}\n"
    found = extract_source("pkg/m.py", code.encode(), "pkg").sites
    assert [s.template for s in found] == [template]
    assert found[0].function == "f"


def test_qualnames_and_counts() -> None:
    code = b"""
class A:
    def m(self):
        def inner():
            raise KeyError(f"missing {self.k}")
        raise
    raise TypeError("in class body")
assert x
"""
    result = extract_source("pkg/m.py", code, "pkg")
    assert [(s.function, s.template) for s in result.sites] == [
        ("A.m.<locals>.inner", "missing {self.k}"),
        ("A", "in class body"),
    ]
    assert result.counts == {"bare_raise": 1, "bare_assert": 1}


def test_cli_build_and_stats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    from errhints._cli import main

    cache = tmp_path / "cache"
    shutil.copytree(RELEASES, cache / "releases")
    out = tmp_path / "index"

    def run(*argv: str) -> int:  # the command as documented: errhints catalog index ...
        return main(["catalog", "index", *argv])

    renames = ("--renames", str(RENAMES), "--without-lookalikes")
    assert run("build", "--out", str(out), "--cache-dir", str(cache), "--from-cache", *renames) == 0
    assert "13 sites" in capsys.readouterr().out
    first = {p.name: p.read_bytes() for p in out.rglob("*.json")}
    # the second build reads releases.json and the per-release extraction cache
    assert (cache / "index").is_dir()
    assert run("build", "--out", str(out), "--cache-dir", str(cache), *renames) == 0
    assert {p.name: p.read_bytes() for p in out.rglob("*.json")} == first
    capsys.readouterr()
    assert run("stats", "--out", str(out)) == 0
    text = capsys.readouterr().out
    assert "sglang: 11 site identities" in text
    assert "sglang==0.2.0: assert=1 bare_assert=1 bare_raise=2" in text
    assert run("stats", "--out", str(tmp_path / "nowhere")) == 2
    capsys.readouterr()
    assert main(["catalog", "index"]) == 2  # no index command: usage, not a traceback
    assert "choose an index command" in capsys.readouterr().err


def test_newer_releases_and_touched_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from errhints._maintain.index import update

    monkeypatch.setattr(update, "available_versions", lambda dist: ["0.1.0", "0.2.0", "0.10.0"])
    assert update.newer_releases("sglang", [("sglang", "0.1.0"), ("sglang", "0.2.0")]) == [
        ("sglang", "0.10.0")
    ]
    old, new = list(release_sites(RELEASE_LIST["sglang"], sources=SOURCES))
    result = drift("sglang", old, new)
    site = SimpleNamespace(path="sglang/srt/managers/scheduler.py", function="Scheduler.run_batch")
    old_template = "Batch of {n} requests exceeds the limit {limit}"
    entries = [
        SimpleNamespace(id="sglang.batch-too-large", package="sglang", sites=[site]),
        SimpleNamespace(
            id="sglang.batch-limit", package="sglang", sites=[site], template=old_template
        ),
        SimpleNamespace(id="sglang.other", package="sglang", sites=[]),
    ]
    update.touched_entries(result, entries)
    assert sorted(result.touched) == ["sglang.batch-limit", "sglang.batch-too-large"]
    assert result.touched["sglang.batch-limit"][0].startswith("ITS MESSAGE: reworded")
    assert result.touched["sglang.batch-too-large"] == ["1 other change(s) in its function"]
    assert any("reworded" in line for line in result.lines())


def _tp_size_entry(
    release: object,
    entry_id: str = "sglang.tp-size",
    template: str = "tp_size must be positive, got {self.tp_size}",
    exception: str = "ValueError",
    kind: str = "raise",
) -> Entry:
    return entry_from_mapping(
        {
            "id": entry_id,
            "package": "sglang",
            "title": "t",
            "exception": exception,
            "kind": kind,
            "template": template,
            "release": release,
            "meaning": "m",
            "causes": ["c"],
            "fixes": ["f"],
            "sites": [
                {"path": "sglang/srt/server_args.py", "function": "ServerArgs.__post_init__"}
            ],
        }
    )


def test_ranges_name_the_releases_outside_a_range_that_raise_the_same(index_dir: Path) -> None:
    """A range narrower than the releases raising its wording holds, and names the rest."""
    (narrow,) = check_ranges([_tp_size_entry("0.2.0")])
    assert narrow.ok and narrow.checked == 1
    assert narrow.wider == ["sglang/srt/server_args.py:ServerArgs.__post_init__ in 0.1.0"]
    assert narrow.to_dict()["wider"] == narrow.wider
    (whole,) = check_ranges([_tp_size_entry({"first": "0.1.0", "last": "0.2.0"})])
    assert whole.ok and whole.checked == 2 and whole.wider == []
    # the other side of an entry split at a release already names 0.1.0
    split = check_ranges([_tp_size_entry("0.2.0"), _tp_size_entry("0.1.0", "sglang.tp-size-old")])
    assert [r.wider for r in split] == [[], []]
    # the same words raised another way are another failure: an assert is not a ValueError,
    # a warning is not a raise
    zero = "mem_fraction_static must be above zero"
    (assertion,) = check_ranges(
        [_tp_size_entry("0.2.0", template=zero, exception="AssertionError")]
    )
    assert assertion.wider == ["sglang/srt/server_args.py:ServerArgs.__post_init__ in 0.1.0"]
    (value_error,) = check_ranges([_tp_size_entry("0.2.0", template=zero)])
    assert value_error.wider == []
    high = "mem_fraction_static {x} is very high"
    (raised,) = check_ranges([_tp_size_entry("0.2.0", template=high)])
    assert raised.wider == []
    (logged,) = check_ranges([_tp_size_entry("0.2.0", template=high, kind="log")])
    assert logged.wider == ["sglang/srt/server_args.py:ServerArgs.__post_init__ in 0.1.0"]
