"""The matcher: exact, strong and weak matches, scope, embedded errors, bounded cost."""

from __future__ import annotations

import importlib
from dataclasses import replace
from pathlib import Path

import pytest

import errhints
from errhints._core import pipeline
from errhints._core.catalog import load_catalog
from errhints._core.match import Index, Match, build_index
from errhints._facts.model import ErrorFacts, Frame
from standins import CONTEXT_BODY

ENTRY = """
id = "{package}.{slug}"
package = "{package}"
title = "t {slug}"
exception = {exception}
template = {template}
release = "{release}"
meaning = "m"
causes = ["c"]
fixes = ["f"]
{extra}
"""


def explain_facts(facts: ErrorFacts, index: Index) -> list[Match]:
    """The catalog's matches only: these tests are about entries, not the site index."""
    return pipeline.explain_facts(facts, index, identify=False)


def make_index(tmp_path: Path, *entries: dict[str, str]):  # type: ignore[no-untyped-def]
    for spec in entries:
        package = spec.get("package", "sglang")
        text = ENTRY.format(
            package=package,
            release={"sglang": "0.5.23", "llamafactory": "0.9.5"}[package],
            slug=spec["slug"],
            exception=spec.get("exception", '"RuntimeError"'),
            template=spec["template"],
            extra=spec.get("extra", ""),
        )
        (tmp_path / package).mkdir(exist_ok=True)
        (tmp_path / package / f"{spec['slug']}.toml").write_text(text, encoding="utf-8")
    catalog = load_catalog([tmp_path], builtin=False)
    assert not catalog.problems, catalog.problems
    return build_index(catalog)


def frame(path: str, function: str, *, qualified: bool = True) -> Frame:
    return Frame(
        filename="/x/" + path,
        function=function,
        line=1,
        path=path,
        package=path.partition("/")[0],
        qualified=qualified,
    )


def test_live_exception_at_its_site_is_exact(standins: Path) -> None:
    """Raised at the catalogued site with the catalogued message: confidence exact."""
    engine = importlib.import_module("llamafactory.chat.sglang_engine")
    with pytest.raises(RuntimeError) as info:
        engine.SGLangEngine(500, "internal")._generate()
    matches = errhints.explain(info.value)
    assert matches[0].id == "llamafactory.sglang-server-error"
    assert matches[0].confidence == "exact"
    assert matches[0].package == "llamafactory"
    assert matches[0].entry.template.source.startswith("SGLang server error")


def test_users_lookalike_message_gets_no_hint() -> None:
    """The same text raised from the user's own code (no sglang/llamafactory frame) is not explained."""
    with pytest.raises(RuntimeError) as info:
        raise RuntimeError('SGLang server error: 400, {"detail": "x"}')
    assert errhints.explain(info.value) == []


def test_text_without_frames_matches_strong(tmp_path: Path) -> None:
    """A literal-rich template fitting a bare message (a log line) is a strong match."""
    index = make_index(
        tmp_path,
        {
            "slug": "prefill-oom",
            "template": '"Prefill out of memory. Try to lower your batch size."',
        },
    )
    facts = ErrorFacts(
        type_name="RuntimeError", message="Prefill out of memory. Try to lower your batch size."
    )
    [match] = explain_facts(facts, index)
    assert (match.id, match.confidence) == ("sglang.prefill-oom", "strong")


def test_moved_site_still_matches_strong(tmp_path: Path) -> None:
    """With an sglang frame on the stack but the raise in another function, the template decides."""
    index = make_index(
        tmp_path,
        {
            "slug": "prefill-oom",
            "template": '"Prefill out of memory. Try to lower your batch size."',
            "extra": '[[sites]]\npath = "sglang/srt/mem_cache/allocation.py"\nfunction = "alloc_extend"\nrelease = "0.5.23"\n',
        },
    )
    facts = ErrorFacts(
        type_name="RuntimeError",
        message="Prefill out of memory. Try to lower your batch size.",
        frames=(frame("sglang/srt/mem_cache/allocator.py", "renamed_alloc"),),
        has_stack=True,
    )
    [match] = explain_facts(facts, index)
    assert match.confidence == "strong"
    facts.frames = (frame("sglang/srt/mem_cache/allocation.py", "alloc_extend"),)
    [match] = explain_facts(facts, index)
    assert match.confidence == "exact" and match.via == "site"


def test_unqualified_frame_names_from_text_match_the_site(tmp_path: Path) -> None:
    """A traceback prints ``in stream_request``; the site's qualname ends with it."""
    index = make_index(
        tmp_path,
        {
            "slug": "lora-failed",
            "template": '"{failure_msg}: {error_msg}"',
            "extra": '[[sites]]\npath = "sglang/x.py"\nfunction = "DiffGenerator._send_lora_request"\nrelease = "0.5.23"\n',
        },
    )
    facts = ErrorFacts(
        type_name="RuntimeError",
        message="Failed to set LoRA: not found",
        frames=(frame("sglang/x.py", "_send_lora_request", qualified=False),),
        has_stack=True,
    )
    assert [m.confidence for m in explain_facts(facts, index)] == ["exact"]


def test_placeholder_only_template_never_matches_on_text(tmp_path: Path) -> None:
    """``{a}: {b}`` fits nearly any message, so without its site it says nothing."""
    index = make_index(
        tmp_path,
        {
            "slug": "lora-failed",
            "template": '"{failure_msg}: {error_msg}"',
            "extra": '[[sites]]\npath = "sglang/x.py"\nfunction = "f"\nrelease = "0.5.23"\n',
        },
    )
    bare = ErrorFacts(type_name="RuntimeError", message="Failed to set LoRA: not found")
    assert explain_facts(bare, index) == []
    elsewhere = ErrorFacts(
        type_name="RuntimeError",
        message="Failed to set LoRA: not found",
        frames=(frame("sglang/y.py", "f"),),
        has_stack=True,
    )
    assert explain_facts(elsewhere, index) == []


def test_bare_assert_matches_by_site(tmp_path: Path) -> None:
    """An AssertionError with no message is recognised by where it was raised."""
    index = make_index(
        tmp_path,
        {
            "slug": "decode-assert",
            "exception": '"AssertionError"',
            "template": '"{condition}"',
            "extra": 'kind = "assert"\n[[sites]]\npath = "sglang/srt/disaggregation/decode.py"\n'
            'function = "DecodePreallocQueue.pop_preallocated"\nrelease = "0.5.23"\n',
        },
    )
    facts = ErrorFacts(
        type_name="AssertionError",
        message="",
        frames=(
            frame("sglang/srt/disaggregation/decode.py", "DecodePreallocQueue.pop_preallocated"),
        ),
        has_stack=True,
    )
    assert [m.id for m in explain_facts(facts, index)] == ["sglang.decode-assert"]
    other = ErrorFacts(
        type_name="AssertionError",
        message="",
        frames=(frame("sglang/srt/disaggregation/decode.py", "other"),),
        has_stack=True,
    )
    assert explain_facts(other, index) == []


def test_exception_type_must_agree(tmp_path: Path) -> None:
    """A ValueError with a RuntimeError entry's text is not that entry."""
    index = make_index(
        tmp_path,
        {
            "slug": "prefill-oom",
            "template": '"Prefill out of memory. Try to lower your batch size."',
        },
    )
    facts = ErrorFacts(
        type_name="ValueError", message="Prefill out of memory. Try to lower your batch size."
    )
    assert explain_facts(facts, index) == []


def test_context_entry_needs_its_frame_and_the_innermost_wins(tmp_path: Path) -> None:
    """The same torch OOM means different things under different sglang frames."""
    oom = '"CUDA out of memory. Tried to allocate {size}"'
    exc = '["torch.OutOfMemoryError", "torch.cuda.OutOfMemoryError"]'
    index = make_index(
        tmp_path,
        {
            "slug": "oom-capture",
            "exception": exc,
            "template": oom,
            "extra": '[context]\nframes = [{path = "sglang/srt/model_executor/cuda_graph_runner.py", function = "CudaGraphRunner.capture"}]\n',
        },
        {
            "slug": "oom-anywhere",
            "exception": exc,
            "template": oom,
            "extra": '[context]\nframes = [{path = "sglang/srt/managers/scheduler.py"}]\n',
        },
    )
    message = "CUDA out of memory. Tried to allocate 2.00 GiB"
    stack = (
        frame("sglang/srt/managers/scheduler.py", "run_scheduler_process"),
        frame("sglang/srt/model_executor/cuda_graph_runner.py", "CudaGraphRunner.capture"),
        frame("torch/cuda/memory.py", "alloc"),
    )
    facts = ErrorFacts(
        type_name="torch.OutOfMemoryError", message=message, frames=stack, has_stack=True
    )
    assert [m.id for m in explain_facts(facts, index)] == [
        "sglang.oom-capture",
        "sglang.oom-anywhere",
    ]
    facts = ErrorFacts(
        type_name="torch.OutOfMemoryError", message=message, frames=stack[:1], has_stack=True
    )
    assert [m.id for m in explain_facts(facts, index)] == ["sglang.oom-anywhere"]
    bare = ErrorFacts(type_name="torch.OutOfMemoryError", message=message)
    assert {(m.confidence, m.via) for m in explain_facts(bare, index)} == {("weak", "no context")}


def test_embedded_error_is_matched_too(tmp_path: Path) -> None:
    """A wrapper message yields its own entry and, marked embedded, the inner error's."""
    index = make_index(
        tmp_path,
        {
            "slug": "capture-failed",
            "exception": '"Exception"',
            "template": '"Capture cuda graph failed: {e}"',
        },
        {
            "slug": "prefill-oom",
            "template": '"Prefill out of memory. Try to lower your batch size."',
        },
    )
    facts = ErrorFacts(
        type_name="Exception",
        message="Capture cuda graph failed: Prefill out of memory. Try to lower your batch size.",
    )
    matches = explain_facts(facts, index)
    assert [(m.id, m.embedded) for m in matches] == [
        ("sglang.capture-failed", False),
        ("sglang.prefill-oom", True),
    ]


def test_json_body_inside_a_client_error_is_matched(tmp_path: Path) -> None:
    """An SGLang error body inside another message is matched on its ``message`` field."""
    index = make_index(
        tmp_path,
        {
            "slug": "input-too-long",
            "exception": '"ValueError"',
            "template": '"The input ({input_token_num} tokens) is longer than the model\'s context length ({context_len} tokens)."',
        },
    )
    facts = ErrorFacts(
        type_name="openai.BadRequestError", message=f"Error code: 400 - {CONTEXT_BODY}"
    )
    assert [(m.id, m.embedded) for m in explain_facts(facts, index)] == [
        ("sglang.input-too-long", True)
    ]


_KV_CACHE = {
    "slug": "kv-cache",
    "exception": '"ValueError"',
    "template": '"Not enough memory for the KV cache. Please increase --mem-fraction-static or'
    ' decrease --max-total-tokens. Available: {n}"',
}


def test_drifted_wording_is_a_weak_match(tmp_path: Path) -> None:
    """A message reworded slightly in another release is found, marked weak."""
    index = make_index(tmp_path, _KV_CACHE)
    drifted = "Not enough memory for the KV cache. Please increase --mem-fraction-static or reduce the --max-total-tokens. Available: 3"
    [match] = explain_facts(ErrorFacts(type_name="ValueError", message=drifted), index)
    assert match.confidence == "weak"
    unrelated = "Not enough arguments for format string"
    assert explain_facts(ErrorFacts(type_name="ValueError", message=unrelated), index) == []


def test_a_retyped_message_with_the_same_words_is_a_template_match(tmp_path: Path) -> None:
    """Punctuation, case and line breaks a user changed when retyping an error are not a
    change of wording: the same words in the same order fit the template (held-back/478:
    ``ValueError Processor was not found please check and update your model file``)."""
    index = make_index(tmp_path, _KV_CACHE)
    retyped = "Not enough memory for the KV cache, please increase --mem-fraction-static\nor decrease --max-total-tokens. available 3"
    [match] = explain_facts(ErrorFacts(type_name="ValueError", message=retyped), index)
    assert (match.confidence, match.via) == ("strong", "template")
    bare = "ValueError Not enough memory for the KV cache please increase --mem-fraction-static or decrease --max-total-tokens available 3"
    [match] = explain_facts(ErrorFacts(type_name="", message=bare), index)
    assert match.confidence == "strong"
    one_word_off = retyped.replace("decrease", "reduce the")
    [match] = explain_facts(ErrorFacts(type_name="ValueError", message=one_word_off), index)
    assert match.confidence == "weak"


def test_a_fuzzy_match_keeps_the_templates_rarest_word(tmp_path: Path) -> None:
    """``libnuma.so.1: cannot open ...`` is as close to the libcuda entry's words as a
    reworded message, but it lacks the one word only that entry says: no guess."""
    index = make_index(
        tmp_path,
        {
            "slug": "libcuda",
            "exception": '"ImportError"',
            "template": '"libcuda.so.1: cannot open shared object file: No such file or directory"',
        },
        {
            "slug": "other",
            "exception": '"ImportError"',
            "template": '"libfoo.so: cannot open shared object file, in the loader path"',
        },
    )

    def ids(message: str) -> list[str]:
        facts = ErrorFacts(type_name="ImportError", message=message)
        return [m.id for m in explain_facts(facts, index)]

    assert ids("libcuda.so.1: can not open the shared object file: No such file or directory") == [
        "sglang.libcuda"
    ]
    assert ids("libnuma.so.1: cannot open shared object file: No such file or directory") == []


def test_a_retyped_third_party_message_is_a_weak_guess(tmp_path: Path) -> None:
    """dev/269: transformers' message under LlamaFactory's frames, retyped with a typo and
    without its underscore, is offered as a weak guess; a part of it inside other words is not."""
    index = make_index(
        tmp_path,
        {
            "slug": "eval-needs-dataset",
            "exception": '"ValueError"',
            "template": '"Trainer: evaluation requires an eval_dataset."',
            "extra": '[context]\nframes = [{path = "sglang/srt/managers/scheduler.py"}]\n',
        },
    )
    retyped = ErrorFacts(
        type_name="ValueError", message="Trainer: evaluation reguires an eval dataset."
    )
    [match] = explain_facts(retyped, index)
    assert (match.confidence, match.via) == ("weak", "fuzzy")
    inside = "Server error: Trainer: evaluation requires an eval dataset, and the request failed."
    assert explain_facts(ErrorFacts(type_name="ValueError", message=inside), index) == []
    # its project's frames without the context frame: raised somewhere this entry is not
    elsewhere = frame("sglang/srt/entrypoints/http_server.py", "generate")
    under_other = ErrorFacts(
        type_name="ValueError", message=retyped.message, frames=(elsewhere,), has_stack=True
    )
    assert explain_facts(under_other, index) == []


def test_of_two_entries_at_one_site_the_more_literal_template_comes_first(
    tmp_path: Path,
) -> None:
    """A converter's ``KeyError: 'user'``: the entry written for that key explains it before
    the entry for any missing key at the same site, whatever order the catalog lists them in."""
    site = '[[sites]]\npath = "sglang/srt/convert.py"\nfunction = "convert"\n'
    index = make_index(
        tmp_path,
        {"slug": "a-any-key", "exception": '"KeyError"', "template": '"{name}"', "extra": site},
        {"slug": "b-user-key", "exception": '"KeyError"', "template": "\"'user'\"", "extra": site},
    )
    stack = (frame("sglang/srt/convert.py", "convert"),)
    facts = ErrorFacts(type_name="KeyError", message="'user'", frames=stack, has_stack=True)
    assert [(m.id, m.confidence) for m in explain_facts(facts, index)] == [
        ("sglang.b-user-key", "exact"),
        ("sglang.a-any-key", "exact"),
    ]


def test_huge_message_is_handled(tmp_path: Path) -> None:
    """A 10 MB message is matched (or not) without blowing up."""
    index = make_index(
        tmp_path,
        {
            "slug": "capture-failed",
            "exception": '"Exception"',
            "template": '"Capture cuda graph failed: {e}"',
        },
    )
    facts = ErrorFacts(
        type_name="Exception", message="Capture cuda graph failed: " + "x{" * 5_000_000
    )
    assert [m.id for m in explain_facts(facts, index)] == ["sglang.capture-failed"]


def test_chain_members_are_explained(standins: Path) -> None:
    """An explained error behind ``raise ... from`` is found through the chain."""
    engine = importlib.import_module("llamafactory.chat.sglang_engine")
    try:
        try:
            engine.SGLangEngine(502, "bad gateway")._generate()
        except RuntimeError as inner:
            raise KeyError("wrapper") from inner
    except KeyError as exc:
        matches = errhints.explain(exc)
    assert [(m.id, m.relation) for m in matches] == [("llamafactory.sglang-server-error", "cause")]


def test_the_error_shown_last_comes_before_the_one_it_was_raised_from(tmp_path: Path) -> None:
    """LlamaFactory's API wraps a URL check's refusal (``Invalid URL: {e}``): both are
    explained at their sites; the wrapper the user sees comes first, though the inner
    entry's template has more literal text."""
    inner_site = '[[sites]]\npath = "sglang/srt/check.py"\nfunction = "check_url"\n'
    outer_site = '[[sites]]\npath = "sglang/srt/api.py"\nfunction = "handle"\n'
    index = make_index(
        tmp_path,
        {
            "slug": "a-url-refused",
            "template": '"Only HTTP/HTTPS URLs are allowed."',
            "extra": inner_site,
        },
        {"slug": "b-invalid-url", "template": '"Invalid URL: {e}"', "extra": outer_site},
    )
    inner = ErrorFacts(
        type_name="RuntimeError",
        message="Only HTTP/HTTPS URLs are allowed.",
        frames=(frame("sglang/srt/check.py", "check_url"),),
        has_stack=True,
        relation="context",
    )
    outer = ErrorFacts(
        type_name="RuntimeError",
        message="Invalid URL: Only HTTP/HTTPS URLs are allowed.",
        frames=(frame("sglang/srt/api.py", "handle"),),
        has_stack=True,
        chain=[inner],
    )
    assert [(m.id, m.relation) for m in explain_facts(outer, index)] == [
        ("sglang.b-invalid-url", ""),
        ("sglang.a-url-refused", "context"),
    ]


# -- evidence from the text: run context, look-alikes, generic sentences ----------------------

_NEEDS_FRAMES = '[context]\nframes = [{path = "sglang/srt/managers/scheduler.py"}]\n'


def _text_matches(  # type: ignore[no-untyped-def]
    index: Index, message: str, context: frozenset[str] = frozenset(), type_name: str = ""
):
    facts = ErrorFacts(type_name=type_name, message=message)
    return [
        (m.id, m.confidence, m.via)
        for m in pipeline.explain_facts(facts, index, identify=False, log_context=context)
    ]


def test_an_entry_needing_frames_fires_on_a_lone_line_from_the_log_context(
    tmp_path: Path,
) -> None:
    """A third-party line alone (NCCL, torch) fits an entry that needs SGLang frames: strong
    when the log shows an SGLang run, and says so; weak, labelled, when nothing does."""
    index = make_index(
        tmp_path,
        {
            "slug": "nccl-error",
            "template": '"NCCL error: unhandled system error{rest}"',
            "extra": _NEEDS_FRAMES,
        },
    )
    message = "NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)"
    assert _text_matches(index, message, frozenset({"sglang"})) == [
        ("sglang.nccl-error", "strong", "log context")
    ]
    assert _text_matches(index, message) == [("sglang.nccl-error", "weak", "no context")]


def test_a_third_party_line_is_not_the_other_projects_failure(tmp_path: Path) -> None:
    """held-back/430: a torch error in a paste that shows SGLang's frames or SGLang's log is
    never LlamaFactory's, not even a weak guess; the SGLang entry fits from SGLang frames of
    an excerpt (cut before the frames it is known for), but not from a whole stack."""
    llamafactory_ctx = '[context]\nframes = [{path = "llamafactory/train/tuner.py"}]\n'
    index = make_index(
        tmp_path,
        {
            "slug": "no-kernel",
            "template": '"{p}no kernel image is available{d}"',
            "extra": _NEEDS_FRAMES,
        },
        {
            "slug": "no-kernel",
            "package": "llamafactory",
            "template": '"{p}no kernel image is available{d}"',
            "extra": llamafactory_ctx,
        },
    )
    message = "CUDA error: no kernel image is available for execution on the device"
    assert _text_matches(index, message, frozenset({"sglang"})) == [
        ("sglang.no-kernel", "strong", "log context")
    ]
    rope = frame("sglang/srt/layers/rotary_embedding.py", "_ensure_cos_sin_cache_length")
    excerpt = ErrorFacts(
        type_name="RuntimeError", message=message, frames=(rope,), has_stack=True, headless=True
    )
    assert [(m.id, m.confidence, m.via) for m in explain_facts(excerpt, index)] == [
        ("sglang.no-kernel", "strong", "project frames")
    ]
    whole = replace(excerpt, headless=False)
    assert explain_facts(whole, index) == []


def test_a_bare_line_says_what_failed_before_the_error(tmp_path: Path) -> None:
    """held-back/373 and /478: a bare line whose own words come after ``<task> error:``, or
    after an exception name that lost its colon; a template that holds ``error:`` itself is
    tried on the whole line first."""
    index = make_index(
        tmp_path,
        {
            "slug": "template",
            "exception": '"ValueError"',
            "template": '"Template {t} does not exist."',
        },
        {"slug": "cuda-oom", "template": '"CUDA error: out of memory{rest}"'},
    )
    line = "train_lora -> mistralai/Mistral-Small-24B-Instruct-2501 error: Template mistral_small does not exist."
    assert _text_matches(index, line, frozenset({"sglang"})) == [
        ("sglang.template", "strong", "template")
    ]
    assert _text_matches(index, "CUDA error: out of memory") == [
        ("sglang.cuda-oom", "weak", "no context")  # a generic sentence: weak, but whole
    ]
    assert _text_matches(
        index, "ValueError Template qwen9 does not exist", frozenset({"sglang"})
    ) == [("sglang.template", "strong", "template")]
    assert (
        _text_matches(index, "KeyError Template qwen9 does not exist", frozenset({"sglang"})) == []
    )
    assert _text_matches(index, "my error: nothing like it") == []


_GATED = {
    "slug": "gated",
    "exception": '"OSError"',
    "template": '"You are trying to access a gated repo.\\nMake sure to have access to it at'
    ' https://huggingface.co/{repo}.\\n{str(e)}"',
    "extra": 'carried = ["{status}Cannot access gated repo for url {url}.{details}"]\n'
    + _NEEDS_FRAMES,
}
_GATED_INNER = (
    "Cannot access gated repo for url https://huggingface.co/meta-llama/Llama-2-7b-hf/resolve/"
    "main/config.json."
)


def test_the_error_an_entry_wraps_finds_it_alone(tmp_path: Path) -> None:
    """held-back/232 and /351: only the Hub's own error is pasted, the transformers message
    that wraps it (the entry's template) cut away. The wrapped message finds the entry, of
    any exception type, by the same rules of context as its template."""
    index = make_index(tmp_path, _GATED)
    assert _text_matches(index, _GATED_INNER) == [("sglang.gated", "weak", "no context")]
    assert _text_matches(index, _GATED_INNER, frozenset({"sglang"})) == [
        ("sglang.gated", "strong", "log context")
    ]
    typed = "401 Client Error.\n\n" + _GATED_INNER + "\nAccess to model x is restricted."
    assert _text_matches(index, typed, frozenset({"sglang"}), "GatedRepoError") == [
        ("sglang.gated", "strong", "log context")
    ]
    # the whole wrapper message is still matched by the template, once
    outer = (
        "You are trying to access a gated repo.\nMake sure to have access to it at "
        "https://huggingface.co/meta-llama/Llama-2-7b-hf.\n" + typed
    )
    assert _text_matches(index, outer, frozenset({"sglang"}), "OSError") == [
        ("sglang.gated", "strong", "log context")
    ]


def test_the_prebuilt_tables_hold_the_wrapped_messages(tmp_path: Path) -> None:
    """The wheel's tables name a carried message's view as ``id#n`` and build it on demand."""
    import json

    from errhints._core.bundle import PREBUILT_NAME, bundle_bytes, load_prebuilt, prebuild

    index = make_index(tmp_path, _GATED)
    catalog = index.catalog
    root = tmp_path / "wheel"
    root.mkdir()
    tables = {"sglang/gated.toml": _toml(tmp_path / "sglang" / "gated.toml")}
    data, spans = bundle_bytes(tables)
    assert json.loads(data) == tables  # still one JSON object, read whole without the tables
    (root / "_bundle.json").write_bytes(data)
    prebuilt = prebuild(catalog, {"sglang.gated": "sglang/gated.toml"}, spans)
    assert any("sglang.gated#0" in ids for ids in prebuilt["by_word"].values())
    (root / PREBUILT_NAME).write_text(json.dumps(prebuilt), encoding="utf-8")
    lazy = load_prebuilt(root)
    assert lazy is not None
    assert _text_matches(lazy, _GATED_INNER, frozenset({"sglang"})) == [
        ("sglang.gated", "strong", "log context")
    ]
    # a damaged install: the entry whose span does not decode is a problem, not a crash
    start, end = spans["sglang/gated.toml"]
    (root / "_bundle.json").write_bytes(data[:start] + b"!" * (end - start) + data[end:])
    damaged = load_prebuilt(root)
    assert damaged is not None
    assert _text_matches(damaged, _GATED_INNER, frozenset({"sglang"})) == []
    assert [p.field for p in damaged.catalog.problems] == ["(file)"]


def _toml(path: Path) -> object:
    from errhints._core.catalog import _toml_module  # tomllib, or tomli on 3.10

    return _toml_module().loads(path.read_text(encoding="utf-8"))


def test_a_lookalike_project_keeps_entries_weak(tmp_path: Path) -> None:
    """vLLM's copy of an SGLang message, with vLLM in the frames or the log: weak at most."""
    index = make_index(
        tmp_path,
        {
            "slug": "arch",
            "exception": '"ValueError"',
            "template": '"Model architectures {archs} cannot be served by this build. Known'
            ' architectures: {supported}"',
        },
    )
    message = "Model architectures ['X'] cannot be served by this build. Known architectures: []"
    assert _text_matches(index, message)[0][1] == "strong"
    assert _text_matches(index, message, frozenset({"vllm"})) == [
        ("sglang.arch", "weak", "look-alike")
    ]
    assert _text_matches(index, message, frozenset({"vllm", "sglang"}))[0][1] == "strong"
    vllm_frame = frame("vllm/model_executor/models/registry.py", "_raise_for_unsupported")
    facts = ErrorFacts(
        type_name="ValueError", message=message, frames=(vllm_frame,), has_stack=True
    )
    assert explain_facts(facts, index) == []


def test_a_generic_sentence_needs_evidence_to_be_strong(tmp_path: Path) -> None:
    """``Template {name} does not exist.`` on unrelated text is weak; with the project in the
    log it is strong. A long, specific message needs no evidence."""
    index = make_index(
        tmp_path,
        {
            "slug": "template-missing",
            "exception": '"ValueError"',
            "template": '"Template {name} does not exist."',
        },
        {
            "slug": "decode-oom",
            "template": '"Decode out of memory. Try to lower your batch size."',
        },
    )
    message = "Template qwen3 does not exist."
    assert _text_matches(index, message) == [("sglang.template-missing", "weak", "no context")]
    assert _text_matches(index, message, frozenset({"sglang"}))[0][1] == "strong"
    oom = "Decode out of memory. Try to lower your batch size."
    assert _text_matches(index, oom) == [("sglang.decode-oom", "strong", "template")]


def test_a_short_message_naming_a_project_file_is_no_generic_sentence(tmp_path: Path) -> None:
    """dev/029: ``Undefined dataset {name} in dataset_info.json.`` is short, but the file it
    names is LlamaFactory's own: strong on a one-line paste."""
    index = make_index(
        tmp_path,
        {
            "slug": "undefined-dataset",
            "exception": '"ValueError"',
            "template": '"Undefined dataset {name} in dataset_info.json."',
        },
    )
    message = "Undefined dataset alpca_en_demo in dataset_info.json."
    assert _text_matches(index, message) == [("sglang.undefined-dataset", "strong", "template")]


def test_sites_and_context_frames_hold_at_the_older_paths_of_their_function(
    tmp_path: Path,
) -> None:
    """``alloc_token_slots`` lived in mem_cache/common.py before 0.5.16 (the site index says so):
    an entry written for the newer allocation.py still explains a traceback from an older
    release, exactly, both as its raise site and as its context frame. (The site index is
    consulted only when nothing else fits: a short template that cannot match on its text.)"""
    index = make_index(
        tmp_path,
        {
            "slug": "by-site",
            "template": '"Out of memory.{rest}"',
            "extra": '[[sites]]\npath = "sglang/srt/mem_cache/allocation.py"\n'
            'function = "alloc_token_slots"\n',
        },
        {
            "slug": "by-context",
            "exception": '"OutOfMemoryError"',
            "template": '"CUDA out of memory. Tried to allocate {size}"',
            "extra": '[context]\nframes = [{ path = "sglang/srt/mem_cache/allocation.py", '
            'function = "alloc_token_slots" }]\n',
        },
    )
    old = frame("sglang/srt/mem_cache/common.py", "alloc_token_slots")
    raised = ErrorFacts(
        type_name="RuntimeError",
        message="Out of memory. Try to lower your batch size.",
        frames=(old,),
        has_stack=True,
    )
    [match] = explain_facts(raised, index)
    assert (match.id, match.confidence, match.via) == ("sglang.by-site", "exact", "moved site")
    torch_frame = frame("torch/cuda/memory.py", "empty_cache")
    oom = ErrorFacts(
        type_name="OutOfMemoryError",
        message="CUDA out of memory. Tried to allocate 2.00 GiB",
        frames=(old, torch_frame),
        has_stack=True,
    )
    assert [(m.id, m.confidence) for m in explain_facts(oom, index)] == [
        ("sglang.by-context", "exact")
    ]
    elsewhere = frame("sglang/srt/other.py", "alloc_token_slots")
    assert (
        explain_facts(
            ErrorFacts("OutOfMemoryError", oom.message, (elsewhere,), has_stack=True), index
        )
        == []
    )


def test_frames_of_an_excerpt_with_the_project_in_the_log(tmp_path: Path) -> None:
    """dev/299: the only frame is a console script; the log shows ``llamafactory-cli``."""
    index = make_index(
        tmp_path,
        {
            "slug": "stale-cli",
            "exception": '"ModuleNotFoundError"',
            "template": "\"No module named 'vllm_stale_module'\"",
        },
    )
    script = Frame("/opt/conda/bin/sglang-cli", "<module>", 5, None, None, qualified=False)
    facts = ErrorFacts(
        type_name="ModuleNotFoundError",
        message="No module named 'vllm_stale_module'",
        frames=(script,),
        has_stack=True,
    )
    assert explain_facts(facts, index) == []
    found = pipeline.explain_facts(facts, index, identify=False, log_context=frozenset({"sglang"}))
    assert [(m.id, m.confidence, m.via) for m in found] == [
        ("sglang.stale-cli", "strong", "log context")
    ]


def test_an_entry_split_at_a_release_answers_with_the_installed_side(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``x`` and ``x-old`` share a message and a site; the installed release picks the first."""
    from errhints._core import match as match_module

    for slug, first, last in (("split-new", "0.5.10", "0.5.23"), ("split-old", "0.4.0", "0.5.9")):
        text = ENTRY.format(
            package="sglang",
            release="0.5.23",
            slug=slug,
            exception='"ValueError"',
            template='"Cannot use this feature for the current training stage."',
            extra='[[sites]]\npath = "sglang/srt/x.py"\nfunction = "check"\n',
        ).replace('release = "0.5.23"', f'release = {{ first = "{first}", last = "{last}" }}')
        (tmp_path / "sglang").mkdir(exist_ok=True)
        (tmp_path / "sglang" / f"{slug}.toml").write_text(text, encoding="utf-8")
    catalog = load_catalog([tmp_path], builtin=False)
    assert not catalog.problems, catalog.problems
    index = build_index(catalog)
    facts = ErrorFacts(
        type_name="ValueError",
        message="Cannot use this feature for the current training stage.",
        frames=(frame("sglang/srt/x.py", "check"),),
        has_stack=True,
    )
    for installed, first in (("0.5.23", "sglang.split-new"), ("0.5.1", "sglang.split-old")):
        monkeypatch.setattr(match_module, "installed_release", lambda name, v=installed: v)
        assert explain_facts(facts, index)[0].id == first


def test_an_excerpt_starting_mid_stack_is_no_evidence_against_the_project(
    tmp_path: Path,
) -> None:
    """dev/233: transformers frames only, pasted from the middle of the stack: the frames
    above, where SGLang called in, are not shown, so the entry fires, weak and labelled. The
    same frames under a ``Traceback`` header are the whole stack: no SGLang there, no hint."""
    index = make_index(
        tmp_path,
        {
            "slug": "gated",
            "exception": '"OSError"',
            "template": '"You are trying to access a gated repo.{rest}"',
            "extra": _NEEDS_FRAMES,
        },
    )
    frames = (
        '  File "/usr/lib/python3/site-packages/transformers/utils/hub.py", line 543,'
        " in cached_files\n    raise OSError(\n"
        "OSError: You are trying to access a gated repo.\nMake sure to have access to it.\n"
    )
    (found,) = pipeline.explain_text(frames, index)
    assert [(m.entry.id, m.confidence, m.via) for m in found.matches] == [
        ("sglang.gated", "weak", "no context")
    ]
    (whole,) = pipeline.explain_text("Traceback (most recent call last):\n" + frames, index)
    assert not whole.matches


def test_a_validators_message_inside_a_pydantic_validation_error(tmp_path: Path) -> None:
    """SGLang's request models validate with pydantic: the ``ValueError`` its validator raised
    reaches the user inside ``1 validation error for CompletionRequest``. The validator's
    words are matched, strong with SGLang's frame on the stack, and a fuzzy guess at the
    whole text does not hide that; pydantic's own messages carry nothing to match."""
    index = make_index(
        tmp_path,
        {
            "slug": "max-tokens",
            "exception": '["ValueError", "ValidationError"]',
            "template": '"max_tokens must be positive"',
        },
    )
    text = (
        "Traceback (most recent call last):\n"
        '  File "/site-packages/sglang/srt/entrypoints/openai/serving_completions.py",'
        " line 40, in handle\n    req = CompletionRequest(**body)\n"
        '  File "/site-packages/pydantic/main.py", line 250, in __init__\n'
        "    validated_self = self.__pydantic_validator__.validate_python(data)\n"
        "pydantic_core._pydantic_core.ValidationError: 2 validation errors for CompletionRequest\n"
        "max_tokens\n"
        "  Value error, max_tokens must be positive [type=value_error, input_value=0, "
        "input_type=int]\n"
        "    For further information visit https://errors.pydantic.dev/2.14/v/value_error\n"
        "model\n"
        "  Field required [type=missing, input_value={}, input_type=dict]\n"
    )
    (found,) = pipeline.explain_text(text, index)
    assert [(m.entry.id, m.confidence) for m in found.matches] == [("sglang.max-tokens", "strong")]
    body = ErrorFacts(type_name="", message="Value error, max_tokens must be positive")
    assert [m.entry.id for m in explain_facts(body, index)] == ["sglang.max-tokens"]


def test_a_validator_that_writes_value_error_itself(tmp_path: Path) -> None:
    """SGLang's rerank validator raises ``Value error, parameter top_n ...`` itself, so
    pydantic prints the words twice; only pydantic's own prefix is taken off."""
    index = make_index(
        tmp_path,
        {
            "slug": "top-n",
            "exception": '["ValueError", "ValidationError"]',
            "template": '"Value error, parameter top_n should be larger than 0."',
        },
    )
    message = (
        "1 validation error for V1RerankReqInput\ntop_n\n  Value error, Value error, parameter "
        "top_n should be larger than 0. [type=value_error, input_value=0, input_type=int]\n"
    )
    facts = ErrorFacts(type_name="ValidationError", message=message)
    assert [m.entry.id for m in explain_facts(facts, index)] == ["sglang.top-n"]


_SPLIT = """
id = "sglang.{slug}"
package = "sglang"
title = "t"
exception = "RuntimeError"
template = "Timed out waiting {{ms}}ms for recv operation to complete"
release = {release}
meaning = "m"
causes = ["c"]
fixes = ["f"]
[context]
frames = [{frames}]
"""
_RUNNER = "sglang/srt/model_executor/cuda_graph_runner.py"
_MODEL_RUNNER = "sglang/srt/model_executor/model_runner.py"


def test_the_frames_say_which_side_of_a_split_entry_a_stack_is_from(tmp_path: Path) -> None:
    """``x`` (0.5.14 on) and ``x-legacy`` (to 0.5.13.post1) share a message and the frame
    ``ModelRunner.init_cuda_graphs``, which both eras have; ``CudaGraphRunner.capture`` is
    legacy only. A stack with both frames is a legacy stack: only the legacy entry answers.
    The shared frame alone cannot tell: both answer."""
    shared = f'{{ path = "{_MODEL_RUNNER}", function = "ModelRunner.init_cuda_graphs" }}'
    old_only = f'{{ path = "{_RUNNER}", function = "CudaGraphRunner.capture" }}'
    ranged = (
        f'{{ path = "{_MODEL_RUNNER}", function = "ModelRunner.init_cuda_graphs", '
        'release = { first = "0.4.0", last = "0.4.10.post2" } }'
    )
    (tmp_path / "sglang").mkdir()
    for slug, release, frames in (
        ("x", '{ first = "0.5.14", last = "0.5.23" }', shared),
        ("x-legacy", '{ first = "0.4.0", last = "0.5.13.post1" }', f"{old_only}, {ranged}"),
    ):
        text = _SPLIT.format(slug=slug, release=release, frames=frames)
        (tmp_path / "sglang" / f"{slug}.toml").write_text(text, encoding="utf-8")
    catalog = load_catalog([tmp_path], builtin=False)
    assert not catalog.problems, catalog.problems
    index = build_index(catalog)
    message = "Timed out waiting 1800000ms for recv operation to complete"
    both = (
        frame(_MODEL_RUNNER, "init_cuda_graphs", qualified=False),
        frame(_RUNNER, "capture", qualified=False),
    )
    facts = ErrorFacts(type_name="RuntimeError", message=message, frames=both, has_stack=True)
    assert [m.entry.id for m in explain_facts(facts, index)] == ["sglang.x-legacy"]
    facts.frames = both[:1]
    assert {m.entry.id for m in explain_facts(facts, index)} == {"sglang.x", "sglang.x-legacy"}


def test_the_actor_address_xinference_puts_before_a_message(tmp_path: Path) -> None:
    """dev/315: Xinference runs SGLang in an actor, and its actor framework prefixes the
    message with the actor's address. The template is matched after it; the facts keep it."""
    index = make_index(
        tmp_path,
        {
            "slug": "runtime-init",
            "template": '"Initialization failed. Please see the error messages above."',
        },
    )
    message = "[address=0.0.0.0:37905, pid=4194] Initialization failed. Please see the error messages above."
    facts = ErrorFacts(type_name="RuntimeError", message=message)
    (found,) = explain_facts(facts, index)
    assert (found.id, found.confidence, found.message) == (
        "sglang.runtime-init",
        "strong",
        "Initialization failed. Please see the error messages above.",
    )
    assert facts.message == message
    other = ErrorFacts(type_name="RuntimeError", message="[address=x] " + message[35:])
    assert [m.confidence for m in explain_facts(other, index)] != ["strong"]


def test_known_at_names_few_failures_and_only_from_below_a_call() -> None:
    """A cut traceback's last frame: the failures raised in it or right under it, only when
    few enough to say something, and not the frame's own raises when it shows a call."""
    from errhints._core.match import MAX_KNOWN_AT, known_at

    index = build_index(load_catalog())

    def frame(path: str, function: str) -> Frame:
        return Frame(path, function, 1, path=path, package=path.partition("/")[0], qualified=False)

    deps = frame("llamafactory/extras/misc.py", "check_dependencies")
    assert sorted(e.id for e in known_at(index, deps)) == [
        "llamafactory.dependency-version-check",
        "llamafactory.hf-version-metadata-missing",
    ]
    run_exp = frame("llamafactory/train/tuner.py", "run_exp")  # dozens of failures pass here
    assert known_at(index, run_exp) == [] and MAX_KNOWN_AT == 3
    merged = frame("llamafactory/data/loader.py", "_get_merged_dataset")
    assert known_at(index, merged)  # its own raises, when its source line is not shown
    call = "for dataset_attr in get_dataset_list(dataset_names, data_args.dataset_dir):"
    assert known_at(index, merged, call) == []
    raise_line = 'raise ValueError("The dataset is not applicable in the current training stage.")'
    assert known_at(index, merged, raise_line)


def test_the_inner_error_of_a_chain_cut_in_its_outer_stack_fits_from_project_frames(
    tmp_path: Path,
) -> None:
    """dev/685 and /707: the Hub's ``HFValidationError`` traceback is whole, the LlamaFactory
    traceback raised while handling it is cut. The inner stack starts where it was caught,
    below the callers, so it says nothing of where it ran: LlamaFactory's frames in the cut
    outer stack make the entry fit. A whole outer stack without the entry's frames does not."""
    index = make_index(
        tmp_path,
        {
            "slug": "repo-id",
            "package": "llamafactory",
            "exception": '"HFValidationError"',
            "template": "\"Repo id must be in the form 'repo_name' or 'namespace/repo_name':"
            " '{repo_id}'. Use `repo_type` argument if needed.\"",
            "extra": '[context]\nframes = [{path = "llamafactory/model/loader.py",'
            ' function = "load_model"}]\n',
        },
    )
    validators = frame("huggingface_hub/utils/_validators.py", "validate_repo_id")
    inner = ErrorFacts(
        type_name="huggingface_hub.errors.HFValidationError",
        message="Repo id must be in the form 'repo_name' or 'namespace/repo_name':"
        " 'saves/Qwen2.5-14B/full/train'. Use `repo_type` argument if needed.",
        frames=(frame("transformers/utils/hub.py", "cached_files"), validators),
        has_stack=True,
        relation="context",
    )
    launcher = frame("llamafactory/launcher.py", "<module>")
    cut = ErrorFacts(type_name="", message="", frames=(launcher,), has_stack=True, chain=[inner])
    assert [(m.id, m.confidence, m.via) for m in explain_facts(cut, index)] == [
        ("llamafactory.repo-id", "strong", "project frames")
    ]
    whole = replace(cut, type_name="OSError", message="Can't load tokenizer", chain=[inner])
    assert explain_facts(whole, index) == []


_DATASET_INFO = {
    "slug": "dataset-info",
    "package": "llamafactory",
    "exception": '"ValueError"',
    "template": '"Cannot open {config_path} due to {str(err)}."',
    "extra": 'shape = "names-dataset-info"\n[[sites]]\n'
    'path = "llamafactory/data/parser.py"\nfunction = "get_dataset_list"\n',
}


def test_a_message_naming_dataset_info_json_fits_a_short_template(tmp_path: Path) -> None:
    """dev/032 and /701: ``Cannot open {path} due to {err}.`` has too little literal text to
    match on text alone, but a message of it that names LlamaFactory's dataset_info.json is
    LlamaFactory's, with or without its run in view; another file's is not."""
    index = make_index(
        tmp_path,
        _DATASET_INFO,
    )
    windows = (
        "Cannot open data\\dataset_info.json due to [Errno 2] No such file or directory:"
        " 'data\\\\dataset_info.json'."
    )
    assert _text_matches(index, windows, type_name="ValueError") == [
        ("llamafactory.dataset-info", "strong", "template")
    ]
    assert _text_matches(index, "Cannot open cfg.yaml due to EOF.", type_name="ValueError") == []


def test_a_line_wrapped_in_several_error_prefixes_is_read_after_each(tmp_path: Path) -> None:
    """dev/979, /983 and /496: a client or a gateway puts its own ``... error:`` (or ``Error:``
    after a colon, or ``failed:``) before the server's message, once or twice; the words after
    each are tried, outermost first, by the usual rules (a generic template stays weak)."""
    index = make_index(
        tmp_path,
        {
            "slug": "no-input",
            "exception": '"ValueError"',
            "template": '"Either text, input_ids or input_embeds should be provided."',
        },
        {
            "slug": "parser",
            "exception": '"ValueError"',
            "template": '"Unsupported tool_call_parser: {name}"',
        },
    )
    gateway = (
        "OpenAI completion error: 500 Internal server error: Unsupported tool_call_parser: None"
        " (request id: 202512200652133627752312601517)"
    )
    assert _text_matches(index, gateway) == [("sglang.parser", "weak", "no context")]
    assert _text_matches(index, gateway, frozenset({"sglang"})) == [
        ("sglang.parser", "strong", "template")
    ]
    client = (
        "An error occurred while processing the v1/chat/completions request: Error: Either text,"
        " input_ids or input_embeds should be provided."
    )
    assert _text_matches(index, client) == [("sglang.no-input", "strong", "template")]
    logged = "openai_tool_adapter.py:32 - Tool parsing failed: Unsupported tool_call_parser: qwen3"
    assert _text_matches(index, logged, frozenset({"sglang"})) == [
        ("sglang.parser", "strong", "template")
    ]
    # ``error:`` inside a word, or beyond the first four, is not a place to start (a likeness
    # of words may still say ``fuzzy``, never that the template fits)
    for line in (
        "mirror: Unsupported tool_call_parser: x",
        "a error: b error: c error: d error: e error: " + client,
    ):
        assert [via for _id, _c, via in _text_matches(index, line)] in ([], ["fuzzy"])


def test_an_error_quoted_in_a_sentence_of_prose_fits(tmp_path: Path) -> None:
    """dev/749 and /752: a bare line of prose that quotes the error ("I met a new error that
    "Undefined dataset x in dataset_info.json". Can you ..."), or holds a log record between
    the reporter's words in another script; each part is matched by the usual rules, only
    when the whole line fits nothing."""
    index = make_index(
        tmp_path,
        {
            "slug": "undefined-dataset",
            "package": "llamafactory",
            "exception": '"ValueError"',
            "template": '"Undefined dataset {name} in dataset_info.json."',
        },
        _DATASET_INFO,
    )
    quoted = (
        'Thank you, but I met a new error that "Undefined dataset pretrain_data in'
        ' dataset_info.json". Can you explain how to generate it?'
    )
    assert _text_matches(index, quoted) == [
        ("llamafactory.undefined-dataset", "strong", "template")
    ]
    glued = (
        "求助，仍旧报错06/28/2024 14:37:49 - WARNING - llamafactory.webui.common - Cannot open"
        " dataset_info.json due to [Errno 2] No such file or directory: 'dataset_info.json'，怎么办"
    )
    assert _text_matches(index, glued) == [("llamafactory.dataset-info", "strong", "template")]
    # a quote of other words, or the error's words without their quotes inside a sentence
    assert _text_matches(index, 'I saw "Undefined behaviour in the dataset loader" today.') == []
    assert _text_matches(index, "I got Undefined dataset x in dataset_info.json today") == []


def test_a_retyped_message_in_other_letter_case_fits(tmp_path: Path) -> None:
    """dev/872: a title that retypes the warning (``Cuda Environment was not detected``): the
    head a template is indexed by is compared without case, as the retyped fit already is."""
    index = make_index(
        tmp_path,
        {
            "slug": "no-cuda",
            "package": "llamafactory",
            "exception": '"Warning"',
            "template": '"CUDA environment was not detected."',
        },
        {"slug": "key-error-tail", "template": '"{key} is missing from the weights file"'},
    )
    # weak: a sentence any program could print, with nothing around it to show the run
    assert _text_matches(index, "Cuda Environment was not detected") == [
        ("llamafactory.no-cuda", "weak", "no context")
    ]
    # the tail key too: a template that starts with a value
    assert _text_matches(index, "'lm_head' IS MISSING FROM THE WEIGHTS FILE") == [
        ("sglang.key-error-tail", "weak", "no context")
    ]
    assert _text_matches(index, "CUDA environment was detected") == []


def test_a_system_exits_message_alone_on_a_line_is_read(tmp_path: Path) -> None:
    """dev/841: ``raise SystemExit(msg)`` prints the message alone, as a log does, so the
    scanner looks for its literal text (trimmed of the punctuation beside the program's name
    or a value) on lines without an error word it knows."""
    index = make_index(
        tmp_path,
        {
            "slug": "diffusion-args",
            "exception": '"SystemExit"',
            "template": '"error: unrecognized arguments: {args}"',
        },
    )
    assert index.log_needles == ("error: unrecognized arguments",)
    text = (
        "$ sglang serve --model-type diffusion --bad 1\n\nerror: unrecognized arguments: --bad 1\n"
    )
    found = pipeline.explain_text(text, index)
    assert [(e.finding.line, [m.id for m in e.matches]) for e in found] == [
        (3, ["sglang.diffusion-args"])
    ]


def test_a_sentence_of_prose_with_a_sign_outside_ascii_is_still_read(tmp_path: Path) -> None:
    """dev/735: ``... a single H200(×8) node, ... it crash with Scheduler watchdog timeout
    (self.watchdog_timeout=300, self.soft=False). The logs as attachment``: the ``×`` made
    the line read only as stretches between signs outside ASCII, never as sentences."""
    index = make_index(
        tmp_path,
        {
            "slug": "watchdog",
            "exception": '"Exception"',
            "template": '"{self.debug_name} watchdog timeout ({self.watchdog_timeout=}, {self.soft=})"',
            "extra": 'kind = "log"',
        },
    )
    line = (
        "Deploy dsv4-flash-0731 with v0.5.16-cu130 image in a single H200(×8) node, after"
        " running for a period of time, it crash with Scheduler watchdog timeout"
        " (self.watchdog_timeout=300, self.soft=False). The logs as attachment"
    )
    assert [m[0] for m in _text_matches(index, line)] == ["sglang.watchdog"]


def test_a_title_that_goes_on_after_the_error_fits_without_its_clause(tmp_path: Path) -> None:
    """Issue titles go on after the error's words (``ValueError: Template x does not exist
    when fine-tuning Qwen3``, ``KeyError: 'lm_head.weight' while loading``) or start them in
    lower case: the message is also tried without its last clauses, a shape checked on what
    is left, and with its first letter in upper case. An error line of a traceback is never
    changed (its words are the program's)."""
    index = make_index(
        tmp_path,
        {
            "slug": "template",
            "exception": '"ValueError"',
            "template": '"Template {t} does not exist."',
        },
        {
            "slug": "weight",
            "exception": '"KeyError"',
            "template": '"{name}"',
            "extra": 'shape = "tensor-name"\n[[sites]]\n'
            'path = "sglang/srt/models/qwen3.py"\nfunction = "Qwen3ForCausalLM.load_weights"\n',
        },
    )
    title = "Template qwen9 does not exist when fine-tuning Qwen3, help"
    assert _text_matches(index, title, frozenset({"sglang"}), "ValueError") == [
        ("sglang.template", "strong", "template")
    ]
    key = "'model.layers.3.mlp.up_proj.weight' while loading the checkpoint"
    assert _text_matches(index, key, frozenset({"sglang"}), "KeyError") == [
        ("sglang.weight", "strong", "template")
    ]
    assert _text_matches(index, "'not a tensor name' while loading", frozenset({"sglang"})) == []
    lower = "template qwen9 does not exist when fine-tuning Qwen3"
    assert _text_matches(index, lower, frozenset({"sglang"})) == [
        ("sglang.template", "strong", "template")
    ]
    raised = ErrorFacts(
        type_name="ValueError",
        message=title,
        frames=(frame("sglang/srt/x.py", "f"),),
        has_stack=True,
    )
    assert [m.id for m in explain_facts(raised, index)] == []


def test_a_title_in_lower_case_fits_the_first_sentences_of_a_long_template(
    tmp_path: Path,
) -> None:
    """dev/726's message as a title in lower case: the upper-cased head is the template's
    first line, without the advice lines after it, and fits as the message itself does."""
    index = make_index(
        tmp_path,
        {
            "slug": "capture",
            "exception": '"Exception"',
            "template": '"Capture cuda graph failed: {e}\\nPossible solutions:\\n1. set'
            ' --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)"',
        },
    )
    said = "Capture cuda graph failed: Could not run 'sgl_kernel::rmsnorm' with arguments."
    expected = [("sglang.capture", "strong", "template")]
    assert _text_matches(index, said, frozenset({"sglang"})) == expected
    lower = said[0].lower() + said[1:]
    assert _text_matches(index, lower, frozenset({"sglang"})) == expected
