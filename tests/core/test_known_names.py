"""Rejected flags and keys: which releases have each name, the closest ones, known renames.

The table is built from the fake releases of ``tests/data/releases`` (``sglang`` 0.1.0 and 0.2.0,
where 0.2.0 replaced ``--disable-radix`` by ``--radix-cache``), then read through
``errhints explain`` as a user runs it, and against the shipped table for real names.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from errhints._core import known_names, siteindex
from errhints._maintain.index import build_index

RELEASES = Path(__file__).resolve().parents[1] / "data" / "releases"
RELEASE_LIST = {
    "sglang": [("sglang", "0.1.0"), ("sglang", "0.2.0")],
    "llamafactory": [("llmtuner", "0.1.0"), ("llamafactory", "0.2.0")],
}
SOURCES = {key: RELEASES / f"{key[0]}-{key[1]}" for keys in RELEASE_LIST.values() for key in keys}


def explain(text: str, *args: str, index: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ERRHINTS")}
    env["NO_COLOR"] = "1"
    if index is not None:
        env[siteindex.ENV_SITEINDEX_DIR] = str(index)
    return subprocess.run(
        [sys.executable, "-m", "errhints", "explain", *args, "-"],
        input=text,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_the_table_holds_flags_fields_and_keys_per_release(built: Path) -> None:
    table = json.loads((built / "names.json").read_text("utf-8"))
    sglang = table["projects"]["sglang"]
    assert sglang["flags"]["--model-path"] == [0, 1]
    assert sglang["flags"]["--tensor-parallel-size"] == [0, 1]
    assert sglang["flags"]["--disable-radix"] == [0, 0]
    assert sglang["flags"]["--radix-cache"] == [1, 1]
    assert sglang["flags"]["--radix"] == [1, 1]  # an alias of Arg(...)
    assert sglang["flags"]["--page-size-bytes"] == [1, 1]  # Arg(cli_name=...)
    assert "--secret" not in sglang["flags"]  # Arg(no_cli=True)
    assert sglang["fields"]["secret"] == [1, 1]
    assert "_internal" not in sglang["fields"]
    assert table["projects"]["llamafactory"]["keys"]["finetuning_type"] == [0, 1]
    assert table["renames"] == [
        {
            "project": "sglang",
            "kind": "flags",
            "old": "--disable-radix",
            "new": "--radix-cache",
            "release": "0.2.0",
            "how": "--radix-cache off",
        },
        {
            "project": "sglang",
            "kind": "flags",
            "old": "--gpu-memory-utilization",
            "new": "--mem-fraction-static",
            "other": "vLLM",
        },
    ]


def test_a_rename_the_releases_contradict_stops_the_build(tmp_path: Path) -> None:
    from errhints._maintain.index.options import RenameError

    wrong = tmp_path / "renames.toml"
    wrong.write_text('[[sglang.flags]]\nold = "--port"\nnew = "--radix-cache"\nrelease = "0.2.0"\n')
    with pytest.raises(RenameError, match=r"--port is still in 0\.2\.0"):
        build_index(RELEASE_LIST, tmp_path / "index", sources=SOURCES, renames=wrong, lookalikes={})
    other = tmp_path / "other.toml"
    other.write_text('[[sglang.flags]]\nold = "--port"\nnew = "--tp-size"\nother = "vLLM"\n')
    with pytest.raises(RenameError, match="--port is an option of sglang too"):
        build_index(RELEASE_LIST, tmp_path / "index", sources=SOURCES, renames=other, lookalikes={})


def test_the_note_answers_for_each_rejected_flag(index_dir: Path) -> None:
    text = (
        "usage: launch_server.py [-h] --model-path MODEL_PATH\n"
        "launch_server.py: error: unrecognized arguments: --disable-radix --tp_size 2 "
        "--gpu-memory-utilization=0.8 --mem-fraction 0.8 --quantum\n"
    )
    proc = explain(text, index=index_dir)
    assert proc.returncode == 0, proc.stderr
    out = " ".join(proc.stdout.split())
    assert "sglang.launch-server-unrecognized-arguments" in out
    assert (
        "--disable-radix: a flag of SGLang 0.1.0; gone after 0.1.0, so not in 0.2.0. "
        "Replaced by --radix-cache (--radix-cache off) in 0.2.0." in out
    )
    assert "--tp_size: not a flag of any SGLang release up to 0.2.0. Spelled --tp-size" in out
    assert "--gpu-memory-utilization: vLLM's name; SGLang's flag is --mem-fraction-static." in out
    assert "Closest in 0.2.0: --mem-fraction-static." in out
    assert "--quantum: not a flag of any SGLang release up to 0.2.0." in out


def test_json_output_carries_the_names(index_dir: Path) -> None:
    text = "sglang serve: error: unrecognized arguments: --radix-cache on\n"
    proc = explain(text, "--json", index=index_dir)
    assert proc.returncode == 0, proc.stderr
    findings = json.loads(proc.stdout)
    names = findings["findings"][0]["matches"][0]["names"]
    assert names == [
        {
            "name": "--radix-cache",
            "kind": "flags",
            "releases": [{"first": "0.2.0", "last": "0.2.0"}],
            "compared_with": "0.2.0",
            "installed": False,
            "present": True,
            "spelled": None,
            "closest": [],
            "replaced_by": None,
        }
    ]


def test_config_keys_and_a_missing_table_stay_quiet_and_correct(
    index_dir: Path, tmp_path: Path
) -> None:
    text = "ValueError: Some keys are not used by the HfArgumentParser: ['finetuning_typ']\n"
    out = " ".join(explain(text, index=index_dir).stdout.split())
    assert "finetuning_typ: not a config key of any LlamaFactory release up to 0.2.0." in out
    assert "Closest in 0.2.0: finetuning_type." in out
    assert "Keys of transformers' TrainingArguments" in out
    # no table: the entry is still explained, without the names part
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = explain(text, index=empty)
    assert proc.returncode == 0, proc.stderr
    assert "llamafactory.hf-unused-yaml-keys" in proc.stdout
    assert "Names:" not in proc.stdout


@pytest.mark.parametrize(
    ("text", "kind", "names"),
    [
        ("--a 1 --b=2 -c x--not", "flags", ["--a", "--b", "-c"]),
        ("['a', 'b=1', 'c_d']", "keys", ["a", "b", "c_d"]),
        ("['--cutof_len', '1024', '--flash-attn', 'fa2']", "keys", ["cutof_len", "flash_attn"]),
        ("['x y', 'ok']", "keys", ["ok"]),
        ("", "flags", []),
    ],
)
def test_names_in_messages(text: str, kind: str, names: list[str]) -> None:
    assert known_names.names_in(text, kind) == names


def test_the_shipped_renames_hold_against_the_shipped_table() -> None:
    """Each curated rename still holds for the shipped table (rebuilt with every release)."""
    from errhints._maintain.index.options import checked_renames

    index = RELEASES.parents[2] / "catalog" / "index"
    table = json.loads((index / "names.json").read_text("utf-8"))
    listed = json.loads((index / "releases.json").read_text("utf-8"))["projects"]
    versions = {p: [v for _, v in rs] for p, rs in listed.items()}
    assert checked_renames(table["projects"], versions) == table["renames"]
    assert len(table["renames"]) >= 10
