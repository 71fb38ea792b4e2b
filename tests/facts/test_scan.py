"""The log scanner: real log styles in, precise facts out (types, messages, frames, chains, lines).

The fixture logs under ``tests/data/logs`` are real output where a tool was at hand (Python
3.11's chains and groups, Python 3.13's colours, rich's boxes) and otherwise follow the real
formats of SGLang, LlamaFactory, torchrun, Ray, vLLM and container runtimes line for line.
"""

from __future__ import annotations

import io
import sys
import time
import traceback
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from errhints._facts import Finding, parse_traceback, scan_lines, scan_stream, scan_text
from errhints._facts.lines import is_exception_name
from errhints._facts.live import facts_from_exception
from errhints._facts.model import ErrorFacts
from errhints._facts.scanner import MAX_LINE

if sys.version_info < (3, 11):  # the backport, a dependency of pytest on 3.10
    from exceptiongroup import ExceptionGroup

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"


def load(name: str) -> str:
    return (LOGS / name).read_text(encoding="utf-8")


def frames_of(facts: ErrorFacts) -> list[tuple[str | None, str, int | None]]:
    return [(f.path, f.function, f.line) for f in facts.frames]


def chain_of(facts: ErrorFacts) -> list[tuple[str, str, str]]:
    return [(c.relation, c.type_name, c.message) for c in facts.chain]


def where(found: list[Finding]) -> list[tuple[int, int, str]]:
    return [(f.line, f.end_line, f.kind) for f in found]


# -- log styles -----------------------------------------------------------------------------


def test_sglang_scheduler_logs_the_traceback_as_text() -> None:
    """``[... TP3] Scheduler hit an exception: Traceback ...`` then unprefixed lines; the next
    prefixed record ends the message, whatever its prefix (``[ts]``, ``[ts DP1 TP0]``)."""
    found = scan_text(load("sglang_scheduler.log"))
    assert where(found) == [(3, 12, "traceback"), (15, 20, "traceback")]
    first, second = (f.facts for f in found)
    assert first.type_name == "RuntimeError"
    assert first.message == (
        "Not enough memory. Please try to increase --mem-fraction-static. "
        "Current value: mem_fraction_static=0.5"
    )
    assert frames_of(first) == [
        ("sglang/srt/managers/scheduler.py", "run_scheduler_process", 2571),
        ("sglang/srt/managers/scheduler.py", "__init__", 312),
        ("sglang/srt/model_executor/pool_configurator.py", "__post_init__", 99),
    ]
    assert first.frames[0].filename == (
        "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py"
    )
    assert all(f.package == "sglang" and not f.qualified for f in first.frames)
    assert first.has_stack and first.chain == [] and first.relation == ""
    assert second.type_name == "sglang.srt.disaggregation.encoder.server.InternalError"
    assert second.short_type == "InternalError"
    assert second.message == "Encoder produced 5 tokens, but preprocessor metadata expected 6"
    assert frames_of(second)[-1] == (
        "sglang/srt/disaggregation/encoder/server.py",
        "_compute_embedding",
        1488,
    )


def test_torchrun_ranks_interleaved() -> None:
    """``[rank0]:``/``[rank1]:`` tracebacks printed line by line into each other are kept
    apart; torchrun's own traceback and its multi-line ChildFailedError message follow."""
    found = scan_text(load("torchrun_ranks.log"))
    assert where(found) == [(2, 11, "traceback"), (3, 13, "traceback"), (15, 30, "traceback")]
    rank1, rank0, agent = (f.facts for f in found)
    assert rank1.type_name == "RuntimeError"
    assert rank1.message == (
        "Cannot find valid samples, check `data/README.md` for the data format."
    )
    assert frames_of(rank1) == [
        ("llamafactory/launcher.py", "<module>", 23),
        ("llamafactory/data/loader.py", "_get_preprocessed_dataset", 271),
    ]
    assert rank0.type_name == "torch.OutOfMemoryError"
    assert rank0.message.startswith("CUDA out of memory. Tried to allocate 2.00 GiB.")
    assert frames_of(rank0) == [
        ("llamafactory/launcher.py", "<module>", 23),
        ("torch/nn/modules/module.py", "_wrapped_call_impl", 1773),
    ]
    assert rank0.frames[1].package == "torch"
    assert agent.type_name == "torch.distributed.elastic.multiprocessing.errors.ChildFailedError"
    lines = agent.message.split("\n")
    assert lines[0] == "" and lines[1] == "=" * 60
    assert lines[-2] == "  exitcode  : 1 (pid: 123)" and len(lines) == 10
    assert frames_of(agent)[0] == (None, "<module>", 8)


def test_ray_worker_prefixes() -> None:
    """``(WorkerDict pid=616, ip=...)`` streams; another worker's lines in between; the
    multi-line message of SGLang's cuda graph failure; Ray's ``[repeated 3x ...]`` suffix."""
    found = scan_text(load("ray_workers.log"))
    assert where(found) == [(2, 10, "traceback"), (11, 11, "line")]
    capture, other = (f.facts for f in found)
    assert capture.type_name == "Exception"
    assert capture.message == (
        "Capture cuda graph failed: CUDA out of memory. Tried to allocate 20.00 MiB.\n"
        "Possible solutions:\n"
        "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)"
    )
    assert frames_of(capture) == [
        ("sglang/srt/model_executor/cuda_graph_runner.py", "__init__", 380),
        ("sglang/srt/model_executor/cuda_graph_runner.py", "capture", 501),
    ]
    assert (other.type_name, other.message) == ("RuntimeError", "CUDA error: out of memory")
    assert not other.has_stack and other.frames == ()


def test_container_timestamps_on_every_line() -> None:
    """``kubectl logs --timestamps``/CRI lines: ``<RFC3339> stderr F <line>``; the first line
    carries SGLang's own prefix too."""
    found = scan_text(load("container.log"))
    assert where(found) == [(2, 7, "traceback")]
    facts = found[0].facts
    assert facts.type_name == "ValueError"
    assert facts.message == (
        "The input (9000 tokens) is longer than the model's context length (8192 tokens)."
    )
    assert frames_of(facts) == [
        ("sglang/srt/entrypoints/http_server.py", "generate_request", 540),
        ("sglang/srt/managers/tokenizer_manager.py", "_validate_one_request", 610),
    ]


def test_level_and_location_prefix_on_every_line() -> None:
    """vLLM's ``ERROR 01-01 10:00:01 [core.py:700]`` prefixes each line of the message."""
    found = scan_text(load("vllm_style.log"))
    assert where(found) == [(3, 8, "traceback")]
    facts = found[0].facts
    assert facts.type_name == "ValueError"
    assert facts.message.startswith("No available memory for the cache blocks. Try increasing")
    assert frames_of(facts) == [
        ("vllm/v1/engine/core.py", "run_engine_core", 691),
        ("vllm/worker/worker.py", "determine_available_memory", 226),
    ]


def test_llamafactory_source_checkout() -> None:
    """A plain traceback between LlamaFactory's ``[INFO|ts]`` records, from a checkout."""
    found = scan_text(load("llamafactory_train.log"))
    assert where(found) == [(4, 11, "traceback")]
    facts = found[0].facts
    assert (facts.type_name, facts.message) == ("OSError", "Failed to load tokenizer.")
    assert frames_of(facts) == [
        ("llamafactory/launcher.py", "<module>", 23),
        ("llamafactory/train/tuner.py", "run_exp", 110),
        ("llamafactory/model/loader.py", "load_tokenizer", 77),
    ]


def test_chains_groups_and_unraised_causes() -> None:
    """Real Python 3.11 output: cause/context chains, exception groups with nested members
    and member chains, an unraised cause, SyntaxError, a recursion, a 20-member group."""
    found = scan_text(load("py311_chains_groups.log"))
    assert where(found) == [
        (1, 45, "traceback"),
        (47, 54, "traceback"),
        (56, 62, "traceback"),
        (64, 78, "traceback"),
        (80, 84, "traceback"),
        (86, 122, "traceback"),
    ]
    wrapper = found[0].facts
    assert (wrapper.type_name, wrapper.message) == ("RuntimeError", "wrapper")
    assert frames_of(wrapper) == [(None, "<module>", 26)]
    # Nearest first, breadth first: the group (cause), its context, its members, then the
    # members' own chains and nested members.
    assert chain_of(wrapper) == [
        ("cause", "ExceptionGroup", "outer msg (3 sub-exceptions)"),
        ("context", "ZeroDivisionError", "z"),
        ("group", "ValueError", "one"),
        ("group", "TypeError", "inner ctx"),
        ("group", "ExceptionGroup", "inner (1 sub-exception)"),
        ("context", "KeyError", "'k'"),
        ("group", "OSError", "os"),
    ]
    group, _zero, value, type_error, inner, key, os_error = wrapper.chain
    assert frames_of(group) == [(None, "<module>", 24), (None, "grp", 21)]
    assert frames_of(value) == [(None, "grp", 7), (None, "f", 4)]
    assert frames_of(type_error) == [(None, "grp", 13)] and frames_of(key) == [(None, "grp", 10)]
    assert not inner.has_stack and not os_error.has_stack and group.has_stack
    assert all(c.chain == [] for c in wrapper.chain)

    unraised = found[1].facts
    assert (unraised.type_name, unraised.message) == ("RuntimeError", "outer")
    assert chain_of(unraised) == [("cause", "ValueError", "never raised")]
    assert not unraised.chain[0].has_stack

    syntax = found[2].facts
    assert (syntax.type_name, syntax.message) == ("SyntaxError", "invalid syntax")
    assert frames_of(syntax) == [(None, "<module>", 36), (None, "", 1)]
    assert syntax.frames[1].filename == "<string>"

    recursion = found[3].facts
    assert recursion.type_name == "RecursionError" and len(recursion.frames) == 4

    key_error = found[4].facts
    assert (key_error.type_name, key_error.message) == ("KeyError", "'c'")

    many = found[5].facts
    assert many.message == "many (20 sub-exceptions)"
    assert [c.message for c in many.chain] == [str(i) for i in range(15)]
    assert {c.relation for c in many.chain} == {"group"}


def test_rich_traceback_boxes() -> None:
    """rich's boxed frames (``/path/file.py:5 in func``, wrapped over two rows, even
    mid-path), locals boxes ignored, and the message re-joined where rich wrapped it."""
    found = scan_text(load("rich_traceback.log"))
    assert where(found) == [(1, 100, "traceback")]
    facts = found[0].facts
    assert (facts.type_name, facts.message) == ("RuntimeError", "Scheduler died")
    assert frames_of(facts) == [
        (None, "<module>", 13),
        (None, "launch_server", 11),
    ]
    assert facts.frames[0].filename == "/tmp/richdemo/serve.py"
    assert len(facts.chain) == 1
    cause = facts.chain[0]
    assert cause.relation == "cause" and cause.type_name == "ValueError"
    assert cause.message == (
        "The input (5000 tokens) is longer than the model's context length (4096 tokens)."
    )
    scheduler = "sglang/srt/managers/scheduler.py"
    assert frames_of(cause) == [
        (None, "launch_server", 9),
        (scheduler, "event_loop_normal", 5),
        (scheduler, "event_loop_normal", 5),
        (scheduler, "event_loop_normal", 5),
        (scheduler, "event_loop_normal", 4),
    ]
    assert cause.frames[1].filename == (
        "/tmp/richdemo/venv/lib/python3.11/site-packages/sglang/srt/managers/scheduler.py"
    )


def test_rich_log_handler() -> None:
    """Real ``RichHandler(rich_tracebacks=True)`` output: the box and the message are drawn
    indented under the time and level columns and padded; the next record, further left,
    ends the message."""
    found = scan_text(load("rich_handler.log"))
    assert where(found) == [(3, 56, "traceback")]
    facts = found[0].facts
    assert facts.type_name == "ValueError"
    assert facts.message == (
        "The input (5000 tokens) is longer than the model's context length (4096 tokens)."
    )
    assert frames_of(facts) == [
        (None, "<module>", 11),
        ("sglang/srt/managers/scheduler.py", "event_loop_normal", 5),
        ("sglang/srt/managers/scheduler.py", "event_loop_normal", 5),
        ("sglang/srt/managers/scheduler.py", "event_loop_normal", 5),
        ("sglang/srt/managers/scheduler.py", "event_loop_normal", 4),
    ]


@pytest.mark.parametrize(
    "name",
    [
        "py311_chains_groups.log",
        "rich_traceback.log",
        "py313_colour.log",
        "llamafactory_train.log",
        "sglang_scheduler.log",
    ],
)
@pytest.mark.parametrize(
    "prefix",
    [
        "[rank3]: ",
        "(WorkerDict pid=616, ip=10.0.0.1) ",
        "2026-01-01T10:00:00.1Z stderr F ",
        "sglang-1  | ",
        "llamafactory_trainer_1  | 2026-01-01T10:00:00.123456789Z ",
        "Jun 11 09:30:02 gpu-node-3 python3[12345]: ",
        "0: ",
    ],
)
def test_a_prefix_on_every_line_changes_nothing(name: str, prefix: str) -> None:
    """The same log behind a per-line prefix (torchrun, Ray, a container runtime, docker
    compose, journald, ``srun --label``) gives the same findings: groups keep their columns,
    rich boxes their rows."""
    text = load(name)
    prefixed = "".join(f"{prefix}{line}\n" for line in text.splitlines())
    assert scan_text(prefixed) == scan_text(text)


def test_python313_colours() -> None:
    """Real Python 3.13 output with ANSI colours (``FORCE_COLOR=1``)."""
    text = load("py313_colour.log")
    assert "\x1b[" in text
    found = scan_text(text)
    assert where(found) == [(1, 8, "traceback")]
    facts = found[0].facts
    assert (facts.type_name, facts.message) == ("KeyError", "'model_name_or_path'")
    assert frames_of(facts) == [
        (None, "<module>", 4),
        ("llamafactory/hparams/parser.py", "get_train_args", 2),
    ]


def test_crlf_windows_paths_and_carets() -> None:
    """A Windows log: CRLF endings, backslash paths, 3.11 caret lines."""
    text = (
        "Traceback (most recent call last):\r\n"
        '  File "C:\\Users\\me\\venv\\Lib\\site-packages\\llamafactory\\cli.py", line 31,'
        " in main\r\n"
        "    run_exp()\r\n"
        "    ~~~~~~~^^\r\n"
        '  File "C:\\Users\\me\\venv\\Lib\\site-packages\\llamafactory\\model\\loader.py",'
        " line 77, in load_tokenizer\r\n"
        "    raise OSError(\r\n"
        "OSError: Failed to load tokenizer.\r\n"
        "\r\n"
    )
    found = scan_text(text)
    assert where(found) == [(1, 7, "traceback")]
    facts = found[0].facts
    assert (facts.type_name, facts.message) == ("OSError", "Failed to load tokenizer.")
    assert frames_of(facts) == [
        ("llamafactory/cli.py", "main", 31),
        ("llamafactory/model/loader.py", "load_tokenizer", 77),
    ]


def test_log_prefix_formats_around_a_traceback() -> None:
    """Python's default ``ERROR:root:`` prefix, loguru's ``ts | LEVEL | loc - ``, and the
    ``ts - name - LEVEL - `` format each start a traceback and end the one before."""
    text = (
        "ERROR:root:Scheduler hit an exception: Traceback (most recent call last):\n"
        '  File "/x/sglang/python/sglang/srt/managers/scheduler.py", line 5, in run\n'
        "ValueError: one\n"
        "2026-01-01 10:00:00.123 | ERROR    | sglang.srt.x:run:5 - Traceback (most recent"
        " call last):\n"
        '  File "/x/sglang/python/sglang/srt/managers/scheduler.py", line 6, in run\n'
        "KeyError: 'two'\n"
        "2026-01-01 10:00:00,123 - sglang.srt.managers - ERROR - Traceback (most recent call"
        " last):\n"
        '  File "/x/sglang/python/sglang/srt/managers/scheduler.py", line 7, in run\n'
        "TypeError: three\n"
        "2026-01-01 10:00:01,000 - sglang.srt.managers - INFO - next record\n"
    )
    found = scan_text(text)
    assert where(found) == [(1, 3, "traceback"), (4, 6, "traceback"), (7, 9, "traceback")]
    assert [(f.facts.type_name, f.facts.message) for f in found] == [
        ("ValueError", "one"),
        ("KeyError", "'two'"),
        ("TypeError", "three"),
    ]
    assert [f.facts.frames[0].line for f in found] == [5, 6, 7]


# -- truncated tracebacks and lone lines ----------------------------------------------------


def test_truncated_tracebacks() -> None:
    """Cut by EOF or by a new record before the final line: emitted with the frames seen
    and an empty type and message; a header with nothing after it is not a finding."""
    cut_by_record = (
        "[2026-01-01 10:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        '  File "/usr/lib/python3/dist-packages/sglang/srt/managers/scheduler.py", line 9, in f\n'
        "    g()\n"
        "[2026-01-01 10:00:01 TP0] Received sigquit from a child process.\n"
    )
    found = scan_text(cut_by_record)
    assert where(found) == [(1, 3, "traceback")]
    assert (found[0].facts.type_name, found[0].facts.message) == ("", "")
    assert frames_of(found[0].facts) == [("sglang/srt/managers/scheduler.py", "f", 9)]

    cut_by_eof = 'Traceback (most recent call last):\n  File "/a/b.py", line 3, in <module>\n'
    found = scan_text(cut_by_eof)
    assert where(found) == [(1, 2, "traceback")]
    assert found[0].facts.type_name == "" and found[0].facts.frames[0].line == 3

    assert scan_text("Traceback (most recent call last):\n") == []
    assert scan_text("Traceback (most recent call last):\nhello world\n") == []


def test_lone_error_lines() -> None:
    """Final error lines without a traceback: dotted and plain names, known names, a multi-line
    CUDA message, an error named inside a log line, warnings; prose is not an error, and a
    line that only says ``error:`` is a tentative finding (reported only if the catalog knows
    the words after it)."""
    text = (
        "RuntimeError: CUDA error: an illegal memory access was encountered\n"
        "CUDA kernel errors might be asynchronously reported at some other API call, so the"
        " stacktrace below might be incorrect.\n"
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
        "\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB.\n"
        "[2026-01-01 10:00:00 DP0 TP0] Prefill transfer failed for request rank=0"
        " req.bootstrap_room=7 with exception KVTransferError(bootstrap_room=7): Failed to get"
        " kvcache from prefill instance, it might be dead\n"
        "INFO 01-01 10:00:00 [engine.py:1] Failed: ValueError: bad value for top_p\n"
        "/usr/lib/python3/dist-packages/transformers/x.py:12: FutureWarning: `x` is deprecated\n"
        "  warnings.warn(\n"
        "Error: this is prose, not an exception\n"
        "error: lowercase is a log word\n"
        "We saw 0 errors and no Exception: all good\n"
        "KeyboardInterrupt\n"
    )
    found = scan_text(text)
    said = [(f.line, f.facts.message) for f in found if f.tentative]
    assert said == [
        (10, "Error: this is prose, not an exception"),
        (11, "error: lowercase is a log word"),
    ]
    found = [f for f in found if not f.tentative]
    got = [(f.line, f.end_line, f.kind, f.facts.type_name, f.facts.message) for f in found]
    assert got == [
        (
            1,
            3,
            "line",
            "RuntimeError",
            "CUDA error: an illegal memory access was encountered\n"
            "CUDA kernel errors might be asynchronously reported at some other API call, so the"
            " stacktrace below might be incorrect.\n"
            "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
        ),
        (5, 5, "line", "torch.OutOfMemoryError", "CUDA out of memory. Tried to allocate 1.00 GiB."),
        (
            6,
            6,
            "line",
            "KVTransferError",
            "KVTransferError(bootstrap_room=7): Failed to get kvcache from prefill instance,"
            " it might be dead",
        ),
        (7, 7, "line", "ValueError", "bad value for top_p"),
        (8, 8, "line", "FutureWarning", "`x` is deprecated"),
    ]
    assert all(not f.facts.has_stack for f in found)


def test_error_bodies_in_log_lines() -> None:
    """JSON error bodies become ``body`` findings with the embedded message and no type (a
    body's ``type`` names the HTTP error class, not the exception raised); an error line keeps
    its own full message."""
    text = (
        'response: {"object":"error","message":"The input (9000 tokens) is longer than the'
        ' model\'s context length (8192 tokens).","type":"BadRequestError","param":null,'
        '"code":400}\n'
        'INFO:     127.0.0.1:5555 - "POST /v1/chat HTTP/1.1" 422 {"detail": [{"loc": ["body"],'
        ' "msg": "Field required", "type": "missing"}]}\n'
        'metrics {"level": "info", "message": "no errors so far"}\n'
        "openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': 'top_p must be"
        " in (0, 1]', 'type': 'BadRequestError', 'param': None, 'code': 400}\n"
    )
    found = scan_text(text)
    got = [(f.line, f.kind, f.facts.type_name, f.facts.message) for f in found]
    assert got == [
        (
            1,
            "body",
            "",
            "The input (9000 tokens) is longer than the model's context length (8192 tokens).",
        ),
        (2, "body", "", "Field required"),
        (
            4,
            "line",
            "openai.BadRequestError",
            "Error code: 400 - {'object': 'error', 'message': 'top_p must be in (0, 1]', 'type':"
            " 'BadRequestError', 'param': None, 'code': 400}",
        ),
    ]


def test_an_errhints_note_in_the_log_is_not_part_of_the_message() -> None:
    """A log of a run that already had errhints: the printed note is cut off the message."""
    text = (
        "Traceback (most recent call last):\n"
        '  File "/a/site-packages/sglang/srt/x.py", line 1, in f\n'
        "RuntimeError: boom\n"
        "second line\n"
        "errhints: sglang.something: A title [exact]\n"
        "  meaning\n"
    )
    assert scan_text(text)[0].facts.message == "boom\nsecond line"


# -- the same facts as from a live exception ------------------------------------------------


class CustomError(Exception):
    pass


def _raise(exc: BaseException) -> BaseException:
    try:
        raise exc
    except BaseException as caught:
        return caught


@st.composite
def exceptions(draw: st.DrawFn, depth: int = 0) -> BaseException:
    """Random exceptions: plain or groups, raised or not, with causes or contexts."""
    message = draw(st.text(alphabet="abc xyz0123:'", min_size=0, max_size=12))
    kinds: list[Callable[[str], BaseException]] = [ValueError, KeyError, CustomError, OSError]
    if depth < 2 and draw(st.booleans()):
        members = draw(st.lists(exceptions(depth + 1), min_size=1, max_size=3))
        exc: BaseException = ExceptionGroup(message or "g", members)
    else:
        exc = draw(st.sampled_from(kinds))(message)
    if draw(st.booleans()):
        exc = _raise(exc)
    if depth < 2:
        link = draw(st.sampled_from(["none", "cause", "context"]))
        if link != "none":
            other = draw(exceptions(depth + 1))
            if link == "cause":
                exc.__cause__ = other
            else:
                exc.__context__ = other
    return exc


@settings(max_examples=150, deadline=None)
@given(exceptions())
def test_text_gives_the_same_facts_as_the_live_exception(exc: BaseException) -> None:
    """Formatting an exception and scanning the text gives the types, messages, relations
    and frame lines that reading the live exception gives, in the same order."""
    text = "".join(traceback.format_exception(exc))
    found = scan_text(text)
    assert len(found) == 1, text
    from_text = found[0].facts
    live = facts_from_exception(exc)

    def summary(facts: ErrorFacts) -> list[tuple[str, str, str, list[int | None]]]:
        items = [facts, *facts.chain]
        return [(f.relation, f.type_name, f.message, [fr.line for fr in f.frames]) for f in items]

    assert summary(from_text) == summary(live), text
    assert parse_traceback(text) is not None


_PIECES = [
    "Traceback (most recent call last):",
    '  File "/a/site-packages/sglang/srt/x.py", line 3, in f',
    "    x()",
    "    ~~^^",
    "ValueError: bad",
    "KVTransferError(bootstrap_room=1): gone",
    "",
    "The above exception was the direct cause of the following exception:",
    "During handling of the above exception, another exception occurred:",
    "  + Exception Group Traceback (most recent call last):",
    "  | ExceptionGroup: g (2 sub-exceptions)",
    "  +-+---------------- 1 ----------------",
    "    | OSError: x",
    "    +------------------------------------",
    "╭─── Traceback (most recent call last) ───╮",
    "│ /a/b.py:3 in f │",
    "╰──────────────────────────────╯",
    "[rank0]: ",
    "[rank1]: ",
    "(WorkerDict pid=1, ip=1.2.3.4) ",
    "[2026-01-01 10:00:00 TP0] ",
    "2026-01-01T10:00:00Z stderr F ",
    '{"object": "error", "message": "m", "type": "BadRequestError"}',
    "\x1b[31m",
    "\r",
    "errhints: x",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=20)), max_size=60))
def test_any_text_is_survived_the_same_way_by_every_form(pieces: list[str]) -> None:
    """Arbitrary mixes of traceback fragments, prefixes and junk never raise, and the text,
    line and stream forms agree on them."""
    text = "\n".join(pieces)
    expected = scan_text(text)
    assert all(1 <= f.line <= f.end_line for f in expected)
    lined = sorted(scan_lines(text.split("\n")), key=lambda f: (f.line, f.end_line))
    assert lined == expected
    data = text.encode("utf-8", "surrogatepass")
    streamed = sorted(scan_stream(io.BytesIO(data), 3), key=lambda f: (f.line, f.end_line))
    assert [(f.line, f.end_line, f.kind) for f in streamed] == [
        (f.line, f.end_line, f.kind) for f in expected
    ]


# -- the streaming forms --------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in LOGS.glob("*.log")))
def test_stream_and_lines_agree_with_text(name: str) -> None:
    """scan_stream (any chunk size, bytes) and scan_lines find exactly what scan_text finds."""
    data = (LOGS / name).read_bytes()
    expected = scan_text(data.decode("utf-8"))
    assert expected
    for chunk_size in (1, 7, 64, 1 << 20):
        streamed = sorted(scan_stream(io.BytesIO(data), chunk_size), key=lambda f: f.line)
        assert streamed == expected, chunk_size
    lined = sorted(scan_lines(io.StringIO(data.decode("utf-8"))), key=lambda f: f.line)
    assert lined == expected
    assert sorted(scan_stream(io.StringIO(data.decode()), 5), key=lambda f: f.line) == expected


def test_stream_survives_binary_junk_and_a_huge_line() -> None:
    """Invalid UTF-8, NULs, and a 5 MB line without a newline are skipped; the traceback after
    them is found with the right line number, and memory stays far below the input size."""
    tb = (
        b"Traceback (most recent call last):\n"
        b'  File "/a/site-packages/sglang/srt/x.py", line 1, in f\n'
        b"ValueError: caf\xc3\xa9 \xff\xfe broken\n"
    )
    junk = bytes(range(256)) * 64 + b"\n"
    huge = b"Error " * (5 * 1024 * 1024 // 6)  # contains markers, no newline for 5 MB
    data = junk + b"\x00\x00 Error: nope\n" + huge + b"\n" + tb
    tracemalloc.start()
    try:
        found = list(scan_stream(io.BytesIO(data), chunk_size=64 * 1024))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    first = data[: data.index(tb)].count(b"\n") + 1  # the junk holds newline bytes too
    # ``Error: nope`` is only a tentative finding, dropped unless the catalog knows it
    found = [f for f in found if not f.tentative]
    assert [(f.line, f.end_line) for f in found] == [(first, first + 2)]
    assert found[0].facts.message == "caf\u00e9 \ufffd\ufffd broken"
    assert peak < 2 * 1024 * 1024, peak


def test_scan_lines_is_lazy() -> None:
    """scan_lines yields a finding as soon as it ends, before the input is exhausted."""

    def endless() -> object:
        yield 'Traceback (most recent call last):\n  File "/a.py", line 1, in f\n'
        yield "ValueError: x\n"
        yield "[2026-01-01 10:00:00] next record\n"
        raise AssertionError("read past the finding")

    first = next(scan_lines(endless()))  # type: ignore[arg-type]
    assert (first.line, first.facts.message) == (1, "x")


# -- cost -----------------------------------------------------------------------------------


def test_pathological_lines_stay_linear() -> None:
    """Lines built to make a backtracking regex explode are read quickly (64 KiB each)."""
    nasty = [
        "[" * MAX_LINE,
        "(pid=" * (MAX_LINE // 5),
        "2026-01-01 10:00:00 " * (MAX_LINE // 20),
        'File "' + "a" * MAX_LINE,
        '  File "' + '"' * (MAX_LINE - 20) + '", line 1',
        "ValueError: " * (MAX_LINE // 12),
        "Error(" * (MAX_LINE // 6),
        "a." * (MAX_LINE // 2) + "Error: x",
        "{" + '"message": "x", ' * (MAX_LINE // 16),
        "\x1b[" * (MAX_LINE // 2),
        "│ " + "/a" * (MAX_LINE // 2) + ":1 in",
    ]
    started = time.perf_counter()
    for line in nasty:
        scan_text(line + "\n")
        scan_text(f"Traceback (most recent call last):\n{line}\n")
    assert time.perf_counter() - started < 10


def test_ordinary_lines_are_cheap() -> None:
    """10 MB of ordinary log lines scan at tens of MB/s (benchmarks/bench_scan.py has the
    real figures; this only guards against a slow path taking over)."""
    line = "[2026-01-01 10:00:00 TP0] Decode batch. #running-req: 8, #token: 1000, gen: 80.1\n"
    text = line * (10 * 1024 * 1024 // len(line))
    started = time.perf_counter()
    assert scan_text(text) == []
    elapsed = time.perf_counter() - started
    assert len(text) / elapsed > 20 * 1024 * 1024, elapsed


def test_exception_names() -> None:
    """Which names count as exceptions on a lone line."""
    for name in (
        "ValueError",
        "torch.OutOfMemoryError",
        "KVTransferError",
        "KeyboardInterrupt",
        "SystemExit",
        "StopIteration",
        "UserWarning",
        "ray.exceptions.RayTaskError(RuntimeError)",
        "ExceptionGroup",
    ):
        assert is_exception_name(name), name
    for name in ("Error", "Exception", "Warning", "error", "ERROR", "valueError", "Some thing"):
        assert not is_exception_name(name), name
