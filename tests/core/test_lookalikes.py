"""Messages a look-alike project raises word for word: weak without the project in view.

The build side reads a fake vLLM release (``tests/data/releases/vllm-0.1.0``); the reading side
uses the real catalog entry for a message vLLM and SGLang share, with a table written here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from errhints._core import siteindex
from errhints._core.lookalikes import skeleton_key
from errhints._core.template import parse_template
from errhints._maintain.index import build_index

ROOT = Path(__file__).resolve().parents[2]
RELEASES = ROOT / "tests" / "data" / "releases"
SGLANG = {"sglang": [("sglang", "0.1.0"), ("sglang", "0.2.0")]}
SOURCES = {
    ("sglang", "0.1.0"): RELEASES / "sglang-0.1.0",
    ("sglang", "0.2.0"): RELEASES / "sglang-0.2.0",
    ("vllm", "0.1.0"): RELEASES / "vllm-0.1.0",
}
MOE = (
    "ValueError: The output_size of gate's and up's weight = 192 is not divisible by weight "
    "quantization block_n = 128.\n"
)
MOE_TEMPLATE = (
    "The output_size of gate's and up's weight = {x} is not divisible by weight quantization "
    "block_n = {n}."
)


def test_the_build_keeps_the_shared_messages_only(tmp_path: Path) -> None:
    out = tmp_path / "index"
    build_index(SGLANG, out, sources=SOURCES, renames=None, lookalikes={"vllm": ("0.1.0",)})
    table = json.loads((out / "lookalikes.json").read_text("utf-8"))
    shared = skeleton_key(parse_template("tp_size must be positive, got {self.tp_size}"))
    assert table == {
        "format": siteindex.FORMAT,
        "projects": {"vllm": {"releases": ["0.1.0"], "keys": [shared]}},
    }
    assert "vLLM" in (out / "NOTICE").read_text("utf-8")


def test_skeletons_ignore_placeholder_names_and_spacing() -> None:
    one = parse_template("Model {a} is   not supported.\nUse {b}")
    two = parse_template("Model {arch} is not supported. Use {choices}")
    assert skeleton_key(one) == skeleton_key(two)
    assert skeleton_key(one) != skeleton_key(parse_template("Model {a} is supported. Use {b}"))


def explain(text: str, index: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ERRHINTS")}
    env.update(NO_COLOR="1", ERRHINTS_SITEINDEX_DIR=str(index))
    proc = subprocess.run(
        [sys.executable, "-m", "errhints", "explain", "-"],
        input=text,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout


def test_a_shared_message_alone_is_weak_and_strong_in_an_sglang_log(tmp_path: Path) -> None:
    index = tmp_path / "index"
    index.mkdir()
    key = skeleton_key(parse_template(MOE_TEMPLATE))
    table = {"format": siteindex.FORMAT, "projects": {"vllm": {"releases": [], "keys": [key]}}}
    (index / "lookalikes.json").write_text(json.dumps(table), encoding="utf-8")
    alone = explain(MOE, index)
    assert "possibly sglang.fp8-moe-block-quant-not-divisible" in alone
    assert "[weak: vLLM raises the same words, and nothing here shows SGLang]" in alone
    in_sglang_log = explain("[2025-06-11 09:30:02 TP0] " + MOE, index)
    assert "errhints: sglang.fp8-moe-block-quant-not-divisible" in in_sglang_log
    (index / "lookalikes.json").write_text(
        json.dumps({"format": siteindex.FORMAT, "projects": {}}), encoding="utf-8"
    )
    assert "errhints: sglang.fp8-moe-block-quant-not-divisible" in explain(MOE, index)


def test_pythons_own_messages_are_known_by_their_words() -> None:
    """Python's wording, however the code spells its placeholders and spaces."""
    from errhints._core.lookalikes import python_says

    for template in (
        "'{self.__class__.__name__}' object has no attribute '{name}'",
        "{fn}() missing {n} required positional argument: '{arg}'",
        "{func}()  takes {n} positional arguments but {m} were given",
        "No module named {module}",
        "invalid literal for int() with base 10: {value!r}",
    ):
        assert python_says(parse_template(template)), template
    assert not python_says(parse_template("'{name}' object has no attribute for {x}"))
    assert not python_says(parse_template("No module named '{module}'; install sglang[all]"))
