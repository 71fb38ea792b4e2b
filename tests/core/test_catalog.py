"""The catalog loader: validation by file and field, user directories, data only."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from errhints._core.catalog import FIELDS, load_catalog, split_family

GOOD = """
id = "mypkg.thing-broke"
package = "mypkg"
title = "The thing broke"
exception = "RuntimeError"
template = "The thing broke because {reason}, please fix the thing"
release = "1.0"
meaning = "It broke."
causes = ["a cause"]
fixes = ["a fix"]
"""


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_packaged_catalog_loads_without_problems() -> None:
    """Every packaged entry validates, and related ids point at entries that exist."""
    catalog = load_catalog()
    assert len(catalog) >= 4
    assert [str(p) for p in catalog.problems] == []


def test_seed_entries_are_present() -> None:
    """The four errors the project started from are in the packaged catalog."""
    catalog = load_catalog()
    for entry_id in (
        "llamafactory.sglang-server-error",
        "sglang.diffusion-lora-request-failed",
        "sglang.glm-image-ar-batch-unexpected-response",
        "sglang.mm-encoder-token-count-mismatch",
    ):
        assert catalog.get(entry_id) is not None, entry_id


def test_bad_entry_is_reported_by_file_and_field_and_the_rest_still_load(tmp_path: Path) -> None:
    """A broken file is named with its field; good files beside it keep working."""
    write(tmp_path, "mypkg/thing-broke.toml", GOOD)
    write(
        tmp_path,
        "mypkg/bad-kind.toml",
        GOOD.replace("thing-broke", "bad-kind") + 'kind = "shout"\n',
    )
    write(tmp_path, "mypkg/not-toml.toml", "id = [unclosed")
    catalog = load_catalog([tmp_path], builtin=False)
    assert list(catalog.entries) == ["mypkg.thing-broke"]
    problems = {(p.file.rpartition("/")[2], p.field) for p in catalog.problems}
    assert problems == {("bad-kind.toml", "kind"), ("not-toml.toml", "(file)")}
    assert all(str(p).startswith(str(tmp_path)) for p in catalog.problems)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda s: s.replace('title = "The thing broke"', "title = 3"), "title"),
        (lambda s: s.replace('causes = ["a cause"]', "causes = []"), "causes"),
        (lambda s: s + "surprise = 1\n", "surprise"),
        (lambda s: s.replace('id = "mypkg.thing-broke"', 'id = "other.thing-broke"'), "id"),
        (lambda s: s.replace('id = "mypkg.thing-broke"', 'id = "mypkg.another-name"'), "id"),
        (
            lambda s: s + '[[sites]]\npath = "/abs/x.py"\nfunction = "f"\nrelease = "1"\n',
            "sites[0].path",
        ),
        (lambda s: s + 'references = ["http://insecure"]\n', "references"),
        (lambda s: s.replace("{reason}, please fix the thing", "{reason"), "template"),
        (lambda s: s + 'names = { kind = "flags", placeholder = "nope" }\n', "names.placeholder"),
        (lambda s: s + 'names = { kind = "words", placeholder = "reason" }\n', "names.kind"),
        (lambda s: s + 'shape = "words"\n', "shape"),
        (lambda s: s + 'carried = ["{status} for url {url}"]\n', "carried"),
        (
            lambda s: s + '[[fixed]]\nrelease = "0.9"\nwhat = "x"\nreference = "https://a"\n',
            "fixed[0].release",
        ),
        (
            lambda s: s + '[[fixed]]\nrelease = "1.1"\nwhat = "x"\nreference = "http://a"\n',
            "fixed[0].reference",
        ),
        (
            lambda s: s + '[context]\nframes = [{ path = "mypkg/a.py", release = "2.0" }]\n',
            "context.frames[0].release",
        ),
        (
            lambda s: s + '[context]\nframes = [{ path = "mypkg/a.py", line = 3 }]\n',
            "context.frames[0]",
        ),
    ],
)
def test_each_rule_names_its_field(tmp_path: Path, change: object, field: str) -> None:
    """Each validation rule reports the field at fault."""
    write(tmp_path, "mypkg/thing-broke.toml", change(GOOD))  # type: ignore[operator]
    catalog = load_catalog([tmp_path], builtin=False)
    assert len(catalog) == 0
    assert [p.field for p in catalog.problems] == [field]


def test_placeholder_only_template_needs_a_site(tmp_path: Path) -> None:
    """``{a}: {b}`` cannot match on text, so an entry needs a site or context for it."""
    text = GOOD.replace("The thing broke because {reason}, please fix the thing", "{a}: {b}")
    write(tmp_path, "mypkg/thing-broke.toml", text)
    catalog = load_catalog([tmp_path], builtin=False)
    assert [p.field for p in catalog.problems] == ["template"]


def test_user_catalog_from_env_var_and_argument(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ERRHINTS_CATALOG_PATH (os.pathsep-separated) and the argument both add directories."""
    first, second = tmp_path / "a", tmp_path / "b"
    write(first, "thing-broke.toml", GOOD)
    write(second, "mypkg/other.toml", GOOD.replace("thing-broke", "other"))
    monkeypatch.setenv(
        "ERRHINTS_CATALOG_PATH", f"{first}{__import__('os').pathsep}{tmp_path / 'missing'}"
    )
    catalog = load_catalog([second])
    assert catalog.get("mypkg.thing-broke") is not None
    assert catalog.get("mypkg.other") is not None
    assert catalog.get("llamafactory.sglang-server-error") is not None
    missing = [p.field for p in catalog.problems if p.file == str(tmp_path / "missing")]
    assert missing == ["(directory)"]


def test_user_entry_replaces_a_packaged_one(tmp_path: Path) -> None:
    """A user entry with a packaged id wins, so teams can adapt advice locally."""
    packaged = load_catalog().get("llamafactory.sglang-server-error")
    assert packaged is not None
    text = (
        GOOD.replace("mypkg.thing-broke", "llamafactory.sglang-server-error")
        .replace('package = "mypkg"', 'package = "llamafactory"')
        .replace("The thing broke", "Our own words")
    )
    write(tmp_path, "llamafactory/sglang-server-error.toml", text)
    catalog = load_catalog([tmp_path])
    entry = catalog.get("llamafactory.sglang-server-error")
    assert entry is not None and entry.title == "Our own words"


def test_catalog_data_is_never_executed(tmp_path: Path) -> None:
    """Text that would run as code in a template or field stays inert data."""
    marker = tmp_path / "pwned"
    payload = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    write(tmp_path, "mypkg/thing-broke.toml", GOOD.replace("{reason}", "{" + payload + "}"))
    catalog = load_catalog([tmp_path], builtin=False)
    entry = catalog.get("mypkg.thing-broke")
    assert entry is not None
    assert entry.template.match("The thing broke because x, please fix the thing") == ("x",)
    assert not marker.exists()


def test_published_schema_lists_exactly_the_loader_fields() -> None:
    """catalog/schema.json and the loader agree on the fields an entry may have."""
    schema_path = Path(__file__).resolve().parents[2] / "catalog" / "schema.json"
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    assert set(schema["properties"]) == set(FIELDS)
    assert set(schema["required"]) <= set(FIELDS)


def test_a_fixed_bug_is_shown_with_its_release(tmp_path: Path) -> None:
    """``fixed`` says which release removed a bug behind the message; ``show`` prints it."""
    import os
    import subprocess
    import sys

    text = GOOD + (
        '[[fixed]]\nrelease = "1.2"\nwhat = "The check counted padding as tokens."\n'
        'reference = "https://github.com/example/mypkg/pull/7"\n'
    )
    write(tmp_path, "mypkg/thing-broke.toml", text)
    [entry] = load_catalog([tmp_path], builtin=False)
    assert [(f.release, f.reference) for f in entry.fixed] == [
        ("1.2", "https://github.com/example/mypkg/pull/7")
    ]
    env = {**os.environ, "ERRHINTS_CATALOG_PATH": str(tmp_path), "NO_COLOR": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "errhints", "show", "mypkg.thing-broke"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Fixed in later releases:\n  mypkg 1.2: The check counted padding as tokens." in (
        proc.stdout
    )


def test_a_renamed_context_frame_keeps_its_own_releases(tmp_path: Path) -> None:
    """A frame of a function's old name carries the releases it had that name; ``show`` and
    the JSON view say them, and a frame without one takes the entry's range."""
    text = GOOD.replace('release = "1.0"', 'release = { first = "0.8", last = "1.0" }') + (
        "[context]\nframes = [\n"
        '  { path = "mypkg/run.py", function = "Runner.go" },\n'
        '  { path = "mypkg/old.py", function = "OldRunner.go", release = { first = "0.8", '
        'last = "0.9" } },\n]\n'
    )
    write(tmp_path, "mypkg/thing-broke.toml", text)
    catalog = load_catalog([tmp_path], builtin=False)
    assert not catalog.problems
    entry = catalog.get("mypkg.thing-broke")
    assert entry is not None
    assert [str(c.releases) for c in entry.context] == ["0.8 to 1.0", "0.8 to 0.9"]
    assert entry.to_dict()["context"]["frames"] == [
        {"path": "mypkg/run.py", "function": "Runner.go"},
        {
            "path": "mypkg/old.py",
            "function": "OldRunner.go",
            "release": {"first": "0.8", "last": "0.9"},
        },
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "errhints", "show", "--catalog", str(tmp_path), entry.id],
        capture_output=True,
        text=True,
        check=True,
    )
    shown = proc.stdout
    assert "applies when on the stack: mypkg/run.py in Runner.go\n" in shown
    assert "applies when on the stack: mypkg/old.py in OldRunner.go (mypkg 0.8 to 0.9)" in shown


@pytest.mark.parametrize(
    ("entry_id", "family"),
    [
        ("sglang.x-old", "sglang.x"),
        ("sglang.x-legacy", "sglang.x"),
        ("sglang.top-k-invalid-old-wording", "sglang.top-k-invalid"),
        ("sglang.capture-cuda-graph-failed-until-0-5-13-post1", "sglang.capture-cuda-graph-failed"),
        ("llamafactory.image-count-mismatch-0-9-0", "llamafactory.image-count-mismatch"),
        # other failures whose ids share a start, and ranges of values, are not sides of a split
        ("sglang.nccl-error-during-init", "sglang.nccl-error-during-init"),
        (
            "sglang.repetition-penalty-out-of-range-0-2",
            "sglang.repetition-penalty-out-of-range-0-2",
        ),
        ("sglang.token-kv-pool-leak-detected-strict", "sglang.token-kv-pool-leak-detected-strict"),
        # "too old" in a failure's own name is not the older side of a split; "-old" after it is
        ("sglang.package-version-too-old", "sglang.package-version-too-old"),
        ("sglang.package-version-too-old-old", "sglang.package-version-too-old"),
        ("sglang.package-version-too-legacy", "sglang.package-version-too"),
    ],
)
def test_the_sides_of_an_entry_split_at_a_release_share_one_family(
    entry_id: str, family: str
) -> None:
    assert split_family(entry_id) == family
