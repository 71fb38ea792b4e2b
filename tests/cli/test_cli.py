"""The ``errhints`` command line: explain, list, show, search; exit codes and JSON shapes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "examples" / "logs" / "scheduler.log"


def errhints(
    *args: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "errhints", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=60,
    )


def test_explain_a_scheduler_log() -> None:
    """A logged scheduler traceback is found at its line and explained."""
    proc = errhints("explain", str(LOG))
    assert proc.returncode == 0, proc.stderr
    assert f"{LOG}:7: RuntimeError: Not enough memory." in proc.stdout
    assert "errhints: sglang.not-enough-memory-increase-mem-fraction" in proc.stdout
    assert "\x1b[" not in proc.stdout  # not a terminal: no colour


def test_explain_json_shape() -> None:
    """``--json`` prints findings with line, exception and matches (best first, with sites)."""
    proc = errhints("explain", "--json", str(LOG))
    assert proc.returncode == 0
    data = json.loads(proc.stdout)
    [finding] = data["findings"]
    assert finding["line"] == 7
    assert finding["exception"]["type"] == "RuntimeError"
    assert finding["exception"]["message"].startswith("Not enough memory.")
    best = finding["matches"][0]
    assert set(best) >= {"id", "title", "package", "confidence", "sites"}
    assert best["id"] == "sglang.not-enough-memory-increase-mem-fraction"
    assert best["confidence"] == "exact"
    assert best["sites"][0] == {
        "path": "sglang/srt/model_executor/pool_configurator.py",
        "function": "MemoryPoolConfig.__post_init__",
        "release": "0.5.23",
        "line": best["sites"][0]["line"],
        "releases": {"first": "0.5.23", "last": "0.5.23"},
    }


def test_explain_reads_stdin_and_says_when_nothing_is_known() -> None:
    """'-' reads standard input; exit 1 when nothing was explained."""
    proc = errhints("explain", "-", stdin="all good here\nValueError: something of my own\n")
    assert proc.returncode == 1
    assert "nothing explained" in proc.stderr


def test_explain_usage_errors_exit_2(tmp_path: Path) -> None:
    """A missing file or an unknown option is a usage error."""
    assert errhints("explain", str(tmp_path / "missing.log")).returncode == 2
    assert errhints("explain", "--bogus").returncode == 2
    assert errhints().returncode == 2


def test_explain_a_pasted_error_body() -> None:
    """An openai client error carrying an SGLang error body is explained from a bare line."""
    body = (
        "openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': \"The input "
        "(9000 tokens) is longer than the model's context length (8192 tokens).\", 'type': "
        "'BadRequestError', 'param': None, 'code': 400}\n"
    )
    proc = errhints("explain", "--json", "-", stdin=body)
    assert proc.returncode == 0, proc.stdout
    ids = [m["id"] for f in json.loads(proc.stdout)["findings"] for m in f["matches"]]
    assert "sglang.input-longer-than-context" in ids


def test_list_json_has_the_documented_fields() -> None:
    """``list --json`` gives every entry with id, title, package, exception, template and sites."""
    proc = errhints("list", "--json")
    assert proc.returncode == 0
    entries = json.loads(proc.stdout)
    assert len(entries) >= 150
    for entry in entries:
        assert {"id", "title", "package", "exception", "template", "sites", "releases"} <= set(
            entry
        )
        for site in entry["sites"]:
            assert set(site) == {"path", "function", "release", "line", "releases"}
    assert any("context" in e for e in entries)
    only = json.loads(errhints("list", "--package", "llamafactory", "--json").stdout)
    assert only and {e["package"] for e in only} == {"llamafactory"}


def test_show_prints_a_whole_entry() -> None:
    """``show ID`` prints meaning, causes, fixes and the verified source line."""
    proc = errhints("show", "llamafactory.sglang-server-error")
    assert proc.returncode == 0
    for part in ("What it means:", "Likely causes:", "Fixes:", "sglang_engine.py:219"):
        assert part in proc.stdout
    missing = errhints("show", "sglang.no-such-entry")
    assert missing.returncode == 1 and "no entry" in missing.stderr
    # how an entry matches on text, when it is not by its literal words alone
    shared = errhints("show", "llamafactory.unused-cli-arguments").stdout
    assert "(the same words are raised by transformers)" in shared
    shaped = errhints("show", "sglang.weight-name-not-in-model").stdout
    assert "(matched on text when the message has the shape tensor-name)" in shaped


def test_search_finds_entries_by_meaning_words() -> None:
    """``search`` ranks entries whose words match the query."""
    proc = errhints("search", "cuda", "graph", "capture", "failed")
    assert proc.returncode == 0
    top3 = [line.split()[0] for line in proc.stdout.splitlines()[:3]]
    assert "sglang.capture-cuda-graph-failed" in top3
    assert errhints("search", "zzzqqq").returncode == 1


def test_logged_errors_without_an_exception_name_are_found() -> None:
    """Lines logged by NCCL's watchdog or torchrun carry no exception name; they are found
    through the literal text of the catalog's logged entries and matched on it: strongly when
    the log shows the run is LlamaFactory's, only weakly when nothing says whose job it is."""
    log = (
        "$ llamafactory-cli train examples/train_lora/llama3_lora_sft.yaml\n"
        "[rank1]:[E1130 10:00:00.000000 123 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, "
        "NumelOut=1, Timeout(ms)=600000) ran for 600004 milliseconds before timing out.\n"
        "an ordinary line\n"
        "E1130 10:00:01.000000 140 torch/distributed/elastic/multiprocessing/api.py:869] "
        "failed (exitcode: -9) local_rank: 0 (pid: 1234) of binary: /usr/bin/python3\n"
    )
    proc = errhints("explain", "--json", "-", stdin=log)
    assert proc.returncode == 0, proc.stderr
    findings = json.loads(proc.stdout)["findings"]
    assert [f["line"] for f in findings] == [2, 4]
    assert findings[0]["matches"][0]["id"] == "llamafactory.nccl-watchdog-timeout"
    assert findings[1]["matches"][0]["id"] == "llamafactory.process-killed-exitcode-9"
    assert {f["matches"][0]["confidence"] for f in findings} == {"strong"}
    assert {f["matches"][0]["via"] for f in findings} == {"log context"}
    bare = log.split("\n", 1)[1]
    findings = json.loads(errhints("explain", "--json", "-", stdin=bare).stdout)["findings"]
    assert {m["confidence"] for f in findings for m in f["matches"]} == {"weak"}
    assert {m["via"] for f in findings for m in f["matches"]} == {"no context"}


def test_words_another_project_also_raises_are_weak_without_the_run_in_view() -> None:
    """LlamaFactory raises transformers' own HfArgumentParser message (dev/305 and dev/350 are
    other projects' scripts saying it): alone it is weak, in a LlamaFactory log strong."""
    line = "ValueError: Some specified arguments are not used by the HfArgumentParser: ['--x']\n"
    alone = errhints("explain", "-", stdin=line).stdout
    assert "possibly llamafactory.unused-cli-arguments" in alone
    assert (
        "[weak: transformers raises the same words, and nothing here shows LlamaFactory]" in alone
    )
    in_log = errhints("explain", "-", stdin="$ llamafactory-cli train a.yaml\n" + line).stdout
    assert "llamafactory.unused-cli-arguments: " in in_log and "[strong]" in in_log


def test_a_server_message_after_the_clients_http_status_is_matched() -> None:
    """dev/405: an API client printed ``Bad Request: <SGLang's message>``, the message's last
    sentence on the next line."""
    text = (
        "Bad Request: Requested token count exceeds the model's maximum context length of "
        "202752 tokens. You requested a total of 202941 tokens: 170941 tokens from the input "
        "messages and 32000 tokens for the completion.\n"
        "Please reduce the number of tokens in the input messages or the completion to fit "
        "within the limit.\n"
    )
    out = errhints("explain", "-", stdin=text).stdout
    assert "sglang.requested-tokens-exceed-context:" in out


def test_a_message_cut_short_under_its_raise_site_is_matched_there() -> None:
    """dev/435: the paste cuts the exception line mid-word; the raise site, the type and the
    start of the message say which failure it is (strong, not exact)."""
    text = (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.10/site-packages/llamafactory/data/mm_plugin.py", line 179,'
        " in _validate_input\n"
        '    raise ValueError("Processor was not found, please check and update your model '
        'file.")\n'
        "ValueError: Processor was not found, plea\n"
    )
    proc = errhints("explain", "--json", "-", stdin=text)
    (finding,) = json.loads(proc.stdout)["findings"]
    found = {m["id"]: (m["confidence"], m["via"]) for m in finding["matches"]}
    assert found and set(found.values()) == {("strong", "cut site")}
    assert all(i.startswith("llamafactory.processor-not-found") for i in found)


def test_sglangs_own_start_up_lines_show_its_run() -> None:
    """dev/402: verl's log shows no SGLang path, but SGLang's CUDA-graph progress bar."""
    text = (
        "Capturing batches (avail_mem=6.28 GB): 0%| | 0/23 [00:00<?, ?it/s]\n"
        "(WorkerDict pid=66442) [Rank7]:[T506 14:16:14.487575902 ProcessGroupNCCL.cpp:629] "
        "[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=3, "
        "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600066 "
        "milliseconds before timing out.\n"
    )
    (finding,) = json.loads(errhints("explain", "--json", "-", stdin=text).stdout)["findings"]
    first = finding["matches"][0]
    assert (first["id"], first["confidence"], first["via"]) == (
        "sglang.nccl-watchdog-timeout",
        "strong",
        "log context",
    )


def test_a_typed_message_cut_inside_its_first_words_is_matched_under_its_frames() -> None:
    """dev/456: Triton's OutOfResources, cut at 'shared me', under SGLang's EP MoE kernel."""
    text = (
        "Traceback (most recent call last):\n"
        '  File "/opt/sglang/python/sglang/srt/layers/moe/ep_moe/kernels.py", line 331, in '
        "grouped_gemm_triton\n"
        "    grouped_gemm_triton_kernel[grid](\n"
        '  File "/usr/lib/python3.10/dist-packages/triton/compiler/compiler.py", line 374, in '
        "_init_handles\n"
        '    raise OutOfResources(self.metadata.shared, max_shared, "shared memory")\n'
        "triton.runtime.errors.OutOfResources: out of resource: shared me\n"
    )
    (finding,) = json.loads(errhints("explain", "--json", "-", stdin=text).stdout)["findings"]
    (match,) = finding["matches"]
    assert (match["id"], match["confidence"], match["via"]) == (
        "sglang.triton-out-of-shared-memory",
        "strong",
        "cut message",
    )
    # the same cut without the type is too little to go on
    bare = errhints("explain", "--json", "-", stdin="out of resource: shared me\n").stdout
    assert "triton-out-of-shared-memory" not in bare


def test_a_message_carried_in_sglangs_own_message_is_sglangs() -> None:
    """dev/340: SGLang's capture failure carries a CUDA error; the carrier shows whose run it
    is, so SGLang's entry for the carried error is strong and LlamaFactory's is dropped."""
    text = (
        "SGlang部署qwen2.5失败Exception: Capture cuda graph failed: BatchPrefillWithPagedKVCache"
        " failed with error code no kernel image is available for execution on the device\n"
    )
    proc = errhints("explain", "--json", "-", stdin=text)
    (finding,) = json.loads(proc.stdout)["findings"]
    assert finding["exception"]["type"] == "Exception"
    got = [(m["id"], m["confidence"], m["via"]) for m in finding["matches"]]
    assert got == [
        ("sglang.capture-cuda-graph-failed", "strong", "template"),
        # the same failure's entry for older releases (another list of advice after the
        # first line, which the paste does not show) comes after the newer one
        ("sglang.capture-cuda-graph-failed-until-0-5-13-post1", "strong", "template"),
        ("sglang.no-kernel-image-for-gpu", "strong", "carried"),
    ]


def test_one_failure_split_at_several_releases_lists_its_newest_side_first() -> None:
    """The KV pool leak check was reworded four times; text without a version gets the
    entries of every wording it fits, the newest releases first."""
    text = (
        "token_to_kv_pool_allocator memory leak detected! available_size=1, protected_size=2,"
        " self.max_total_num_tokens=3\navailable_token_size=4\n"
    )
    proc = errhints("explain", "--json", "-", stdin=text)
    (finding,) = json.loads(proc.stdout)["findings"]
    ids = [m["id"] for m in finding["matches"] if m["confidence"] == "strong"]
    assert ids[:2] == [
        "sglang.token-kv-pool-leak-detected-strict",
        "sglang.token-kv-pool-leak-detected",
    ]
    assert ids.index("sglang.token-kv-pool-leak-detected-until-0-4-9-post2") < ids.index(
        "sglang.token-kv-pool-leak-detected-until-0-4-8-post1"
    )


def test_a_tensor_name_key_error_is_matched_on_its_shape() -> None:
    """``KeyError: {name}`` has no literal text; a checkpoint tensor's name is its shape.
    dev/336 alone: weak (nothing shows whose run); dev/334, a log printed newest first with
    SGLang's paths and command: strong, the source line above each frame not glued to the
    message; under a whole stack of vLLM's frames: not SGLang's failure at all."""
    key_error = "KeyError: 'model.layers.14.mlp.shared_expert.gate_gate_up_proj.weight'\n"

    def first(text: str) -> dict[str, str]:
        proc = errhints("explain", "--json", "-", stdin=text)
        assert proc.returncode == 0, proc.stderr
        (finding,) = json.loads(proc.stdout)["findings"]
        (match,) = [m for m in finding["matches"] if m["id"] == "sglang.weight-name-not-in-model"]
        return {"message": finding["exception"]["message"], **match}

    assert first(key_error)["confidence"] == "weak"
    newest_first = (
        "ERROR 2025-04-07T19:13:52.5Z ./entrypoint.sh: line 48: 27 Killed python3 -m "
        "sglang.launch_server --port 30000\n"
        "ERROR 2025-04-07T19:13:52.4Z KeyError: 'model.layers.55.mlp.gate_up_proj.input_scale'\n"
        "ERROR 2025-04-07T19:13:52.3Z param = params_dict[name]\n"
        'ERROR 2025-04-07T19:13:52.2Z File "/sgl/python/sglang/srt/models/llama.py", line 508,'
        " in load_weights\n"
        "ERROR 2025-04-07T19:13:52.1Z model.load_weights(self._get_all_weights(config, model))\n"
        'ERROR 2025-04-07T19:13:52.0Z File "/sgl/python/sglang/srt/model_loader/loader.py", '
        "line 370, in load_model\n"
    )
    match = first(newest_first)
    assert match["confidence"] == "strong"
    assert match["message"] == "'model.layers.55.mlp.gate_up_proj.input_scale'"
    vllm = (
        "Traceback (most recent call last):\n"
        '  File "/venv/lib/python3.12/site-packages/vllm/model_executor/models/llama.py", '
        "line 480, in load_weights\n"
        "    param = params_dict[name]\n" + key_error
    )
    proc = errhints("explain", "--json", "-", stdin=vllm)
    assert proc.returncode == 1 and json.loads(proc.stdout)["findings"][0]["matches"] == []
    # a KeyError that is not a tensor name is not this entry's
    proc = errhints("explain", "--json", "-", stdin="KeyError: 'model_type'\n")
    assert "sglang.weight-name-not-in-model" not in proc.stdout
