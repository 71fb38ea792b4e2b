"""The site index lookup: messages with their placeholders filled, frames, warnings, bad data."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from errhints._core import siteindex
from errhints._core.releases import ReleaseRange
from errhints._facts.model import Frame
from errhints._maintain.index import build_index

RELEASES = Path(__file__).resolve().parents[1] / "data" / "releases"


def test_identify_filled_message(index_dir: Path) -> None:
    found = siteindex.identify("ValueError", "tp_size must be positive, got -2")
    assert len(found) == 1
    site = found[0]
    assert (site.project, site.kind, site.exception) == ("sglang", "raise", "ValueError")
    assert (site.path, site.function, site.line) == (
        "sglang/srt/server_args.py",
        "ServerArgs.__post_init__",
        19,
    )
    assert site.releases == ReleaseRange("0.1.0", "0.2.0")
    assert site.guard == "self.tp_size < 1"
    assert site.settings == ("--tp-size",)
    assert site.candidates == 1
    assert site.on_stack is False
    assert site.url.endswith("/blob/v0.2.0/python/sglang/srt/server_args.py#L19")
    assert site.runs == (
        (ReleaseRange("0.1.0", "0.1.0"), "sglang/srt/server_args.py", 18),
        (ReleaseRange("0.2.0", "0.2.0"), "sglang/srt/server_args.py", 19),
    )
    data = site.to_dict()
    assert data["releases"] == [{"first": "0.1.0", "last": "0.2.0"}]
    assert data["runs"][0] == {
        "releases": {"first": "0.1.0", "last": "0.1.0"},
        "path": "sglang/srt/server_args.py",
        "line": 18,
    }
    assert data["settings"] == ["--tp-size"]


def test_llamafactory_across_rename(index_dir: Path) -> None:
    found = siteindex.identify(
        "ValueError", "Quantization is only compatible with the LoRA method."
    )
    assert [(i.project, i.path) for i in found] == [
        ("llamafactory", "llamafactory/hparams/parser.py")
    ]
    assert found[0].url == (
        "https://github.com/hiyouga/LlamaFactory/blob/v0.2.0/src/llamafactory/hparams/parser.py#L9"
    )
    assert siteindex.function_history("llamafactory", "get_train_args")[0] == (
        "llmtuner/hparams/parser.py",
        ReleaseRange("0.1.0", "0.1.0"),
    )


def test_warnings_off_by_default(index_dir: Path) -> None:
    message = "mem_fraction_static 0.99 is very high"
    assert siteindex.identify("", message) == []
    found = siteindex.identify("", message, warnings=True)
    assert [i.kind for i in found] == ["warning"]


def test_logged_error_and_parser_error(index_dir: Path) -> None:
    found = siteindex.identify("", "Scheduler hit an exception: CUDA error: out of memory")
    assert [(i.kind, i.function) for i in found] == [("log", "Scheduler.run_batch")]
    found = siteindex.identify("SystemExit", "--port cannot be 0 when SGLANG_STRICT_PORT is set")
    assert found[0].settings == ("SGLANG_STRICT_PORT",)


def test_pydantic_wrapped_message(index_dir: Path) -> None:
    message = (
        "1 validation error for ChatRequest\ntemperature\n"
        "  Value error, temperature must be non-negative, got -1.0 "
        "[type=value_error, input_value=-1.0, input_type=float]"
    )
    found = siteindex.identify("ValidationError", message)
    assert [i.function for i in found] == ["ChatRequest.check_temperature"]


def test_frames_rank_first(index_dir: Path, tmp_path: Path) -> None:
    # two sites share one template: the one on the stack ranks first
    doubled = tmp_path / "two"
    shutil.copytree(RELEASES / "sglang-0.2.0", doubled)
    (doubled / "sglang" / "srt" / "other.py").write_text(
        "def g(port):\n    raise RuntimeError('Port ' + str(port) + "
        "' is outside the valid range of ports')\n"
    )
    out = tmp_path / "index"
    build_index(
        {"sglang": [("sglang", "0.2.0")]},
        out,
        sources={("sglang", "0.2.0"): doubled},
        renames=None,
        lookalikes={},
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(siteindex.ENV_SITEINDEX_DIR, str(out))
        siteindex.reset()
        message = "Port 1 is outside the valid range of ports"
        plain = siteindex.identify("ValueError", message)
        assert [i.function for i in plain] == ["check_port", "g"]  # type agreement
        assert all(i.candidates == 2 for i in plain)
        frames = [Frame("x/other.py", "g", 2, "sglang/srt/other.py", "sglang")]
        ranked = siteindex.identify("ValueError", message, frames)
        assert [(i.function, i.on_stack) for i in ranked] == [("g", True), ("check_port", False)]
        unqualified = [Frame("x/other.py", "g", 2, "sglang/srt/other.py", "sglang", False)]
        assert siteindex.identify("ValueError", message, unqualified)[0].function == "g"
        assert len(siteindex.identify("ValueError", message, limit=1)) == 1
    siteindex.reset()


def test_no_match(index_dir: Path) -> None:
    assert siteindex.identify("ValueError", "something else entirely") == []
    assert siteindex.identify("ValueError", "") == []
    assert siteindex.identify("ValueError", "x" * 1_000_000) == []


@pytest.mark.parametrize("damage", ["missing", "manifest", "shard", "format", "rows"])
def test_bad_data_returns_nothing(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    copy = tmp_path / "index"
    shutil.copytree(built, copy)
    if damage == "missing":
        shutil.rmtree(copy)
    elif damage == "manifest":
        (copy / "manifest.json").write_text("{not json")
    elif damage == "shard":
        for shard in (copy / "sites").glob("*.json"):
            shard.write_text("[1, 2")
    elif damage == "format":
        (copy / "releases.json").write_text('{"format": 999, "projects": {}}')
    else:
        for shard in (copy / "sites").glob("*.json"):
            shard.write_text('{"positive": [[1], "x", null]}')
    monkeypatch.setenv(siteindex.ENV_SITEINDEX_DIR, str(copy))
    siteindex.reset()
    try:
        assert siteindex.identify("ValueError", "tp_size must be positive, got -2") == []
        assert siteindex.sites_at("sglang", "sglang/srt/server_args.py", "f") == []
        if damage in ("missing", "manifest", "format"):
            assert siteindex.releases("sglang") == []
            assert siteindex.function_history("sglang", "check_port") == []
    finally:
        siteindex.reset()


def test_threads_load_once(index_dir: Path) -> None:
    results: list[int] = []

    def worker() -> None:
        results.append(len(siteindex.identify("ValueError", "tp_size must be positive, got 0")))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [1] * 8


def test_not_loaded_by_import_or_install() -> None:
    code = (
        "import sys, errhints; errhints.install(); print('errhints._core.siteindex' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"


def test_shipped_index_identifies_a_real_message() -> None:
    shipped = Path(__file__).resolve().parents[2] / "catalog" / "index" / "manifest.json"
    if not shipped.is_file():
        pytest.skip("no shipped index in this checkout")
    siteindex.reset()
    found = siteindex.identify(
        "ValueError",
        "Quantization is only compatible with the LoRA method.",
    )
    siteindex.reset()
    assert found and found[0].project == "llamafactory"


def _identified(text: str) -> list[str]:
    from errhints._core.pipeline import explain_text

    return [m.id for e in explain_text(text) for m in e.matches if m.confidence == "identified"]


@pytest.fixture
def shipped_index() -> Iterator[None]:
    shipped = Path(__file__).resolve().parents[2] / "catalog" / "index" / "manifest.json"
    if not shipped.is_file():
        pytest.skip("no shipped index in this checkout")
    siteindex.reset()
    yield
    siteindex.reset()


DEEPSEEK_OCR = "sglang:sglang/srt/models/deepseek_ocr.py:_merge_multimodal_embeddings"


@pytest.mark.usefixtures("shipped_index")
def test_a_message_vllm_raises_too_is_identified_only_with_sglangs_frames() -> None:
    """dev/1040: vLLM raises SGLang's words; alone they say nothing of who raised them."""
    message = "ValueError: Attempted to assign 2816 = 2816 multimodal tokens to 2817 placeholders"
    assert _identified(message) == []
    stack = (
        "Traceback (most recent call last):\n"
        '  File "/venv/lib/python3.11/site-packages/sglang/srt/models/deepseek_ocr.py", '
        "line 1200, in _merge_multimodal_embeddings\n"
        "    raise ValueError(\n"
    )
    assert _identified(stack + message) == [DEEPSEEK_OCR]


@pytest.mark.usefixtures("shipped_index")
def test_pythons_own_words_and_retyped_or_prose_filled_messages_are_not_evidence() -> None:
    # dev/1011: Python's AttributeError, which one SGLang class also raises word for word
    assert _identified("AttributeError: 'Qwen2Config' object has no attribute 'rope_scaling'") == []
    # dev/418: TensorRT-LLM's words fit ``{process.name} failed to initialize: {data}`` only
    # when case and punctuation are set aside
    assert _identified("Failed to initialize executor on rank 1: Executor creation failed.") == []
    # dev/1116: vLLM's sentence in ``{kv_cache_dtype} is not supported for {model_arch}``
    assert (
        _identified("NotImplementedError: Pipeline parallelism is not supported for this model.")
        == []
    )
    # the same template with values that read like values
    assert _identified("AssertionError: fp8_e4m3 is not supported for DeepseekV4ForCausalLM") == [
        "sglang:sglang/srt/arg_groups/overrides.py:_deepseek_v4_kv_cache_dtype"
    ]


@pytest.mark.usefixtures("shipped_index")
def test_a_key_errors_quoted_message_alone_is_read_unquoted() -> None:
    assert _identified("KeyError: 'Layer 3 is not a full-attention layer'") == [
        "sglang:sglang/srt/hardware_backend/mlx/kv_cache/layout.py:"
        "MlxModelCacheLayout.full_kv_pool_index"
    ]


@pytest.mark.usefixtures("shipped_index")
def test_a_short_template_off_the_stack_is_not_named_for_a_stack_of_sglangs() -> None:
    """dev/1113: xgrammar's check failed under SGLang's frames fits ``{label} failed: {err}``
    of a function that is not on the stack."""
    text = (
        "Traceback (most recent call last):\n"
        '  File "/srv/sglang/python/sglang/srt/constrained/xgrammar_backend.py", line 100, '
        "in fill_vocab_mask\n"
        "    self.matcher.fill_next_token_bitmask(vocab_mask, idx)\n"
        "RuntimeError: [23:42:39] /project/cpp/grammar_matcher.cc:556: Check failed: "
        "(!IsStopTokenAccepted()) is false: GrammarMatcher has terminated\n"
    )
    assert _identified(text) == []
