"""Forms of pasted error text the scanner must read, each a minimal case of a class of real
pastes (the corpus under ``tests/data/pastes/dev`` names one of each in the comments).

Excerpts (no header, cut before the last line, indentation lost), Markdown quoting, error
forms without a Python exception line, where a message ends, bodies that are not quite JSON,
and what the text says about the run it comes from.
"""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest

from errhints._core.pipeline import explain_text
from errhints._facts import scan_stream, scan_text
from errhints._facts.lines import exception_in, peel, raise_in, unwrap
from errhints._facts.model import ErrorFacts

SITE = "/usr/lib/python3/site-packages"


def only(text: str) -> ErrorFacts:
    found = scan_text(text)
    assert len(found) == 1, [(f.line, f.facts.type_name, f.facts.message) for f in found]
    return found[0].facts


# -- excerpts ---------------------------------------------------------------------------------


def test_a_paste_starting_mid_stack_keeps_its_frames() -> None:
    """dev/007: the paste starts at a frame line, without ``Traceback (most recent ...)``."""
    facts = only(
        f' File "{SITE}/transformers/hf_argparser.py", line 377, in parse_dict\n'
        '    raise ValueError(f"Some keys are not used by the HfArgumentParser: {x}")\n'
        "ValueError: Some keys are not used by the HfArgumentParser: ['do_predict']\n"
    )
    assert facts.type_name == "ValueError"
    assert facts.message == "Some keys are not used by the HfArgumentParser: ['do_predict']"
    assert [(f.path, f.function) for f in facts.frames] == [
        ("transformers/hf_argparser.py", "parse_dict")
    ]


def test_a_traceback_cut_before_its_last_line_is_read_from_the_raise_statement() -> None:
    """dev/071-like: the paste stops at the innermost frame's ``raise`` line."""
    facts = only(
        "Traceback (most recent call last):\n"
        f'  File "{SITE}/llamafactory/data/template.py", line 540, in get_template\n'
        '    raise ValueError(f"Template {data_args.template} does not exist.")\n'
    )
    assert (facts.type_name, facts.message) == (
        "ValueError",
        "Template {data_args.template} does not exist.",
    )
    assert facts.frames[-1].path == "llamafactory/data/template.py"


def test_a_traceback_cut_inside_its_last_line_is_read_from_the_raise_statement() -> None:
    """dev/592: the paste stops inside the exception's name (``RuntimeErro``)."""
    head = (
        "Traceback (most recent call last):\n"
        f'  File "{SITE}/llamafactory/data/loader.py", line 272, in _get_preprocessed_dataset\n'
        '    raise RuntimeError("Cannot find valid samples, check `data/README.md`.")\n'
    )
    facts = only(head + "RuntimeErro\n")
    assert (facts.type_name, facts.message) == (
        "RuntimeError",
        "Cannot find valid samples, check `data/README.md`.",
    )
    # a last line naming another exception, or with a message of its own, is kept as it is
    assert only(head + "KeyError\n").type_name == "KeyError"
    assert only(head + "RuntimeError: other\n").message == "other"


def test_a_traceback_indented_as_a_whole_keeps_its_error_line() -> None:
    """dev/551: every line of the paste moved right, the error line to the frames' column."""
    facts = only(
        "```\n"
        f'  File "{SITE}/sglang/srt/managers/schedule_batch.py", line 2654, in _force_track_h\n'
        "      assert i % chunk_size == 0\n"
        "             ^^^^^^^^^^^^^^^^^^^\n"
        "  AssertionError\n"
        "```\n"
    )
    assert facts.type_name == "AssertionError"
    assert facts.frames[-1].function == "_force_track_h"
    # a source line at the frames' column is still a source line
    facts = only(f'  File "{SITE}/sglang/a.py", line 3, in f\n  raise_error(x)\nValueError: bad\n')
    assert (facts.type_name, facts.message) == ("ValueError", "bad")


def test_a_traceback_through_a_word_processor_has_straight_quotes_again() -> None:
    """held-back/431: curly quotes in place of Python's (``File \u201c...\u201d``), the whole
    traceback inside one inline code span (a backtick before the header, one after the
    message)."""
    found = scan_text(
        "`Traceback (most recent call last):\n"
        "  File \u201c/opt/conda/lib/python3.10/runpy.py\u201d, line 196, in _run_module_as_main\n"
        "    return _run_code(code, main_globals, None,\n"
        "  File \u201c/home/u/sglang/python/sglang/srt/constrained/__init__.py\u201d, line 4, in <module>\n"
        "    from outlines.fsm.json_schema import build_regex_from_object\n"
        "ImportError: cannot import name \u2018build_regex_from_object\u2019 from "
        "\u2018outlines.fsm.json_schema\u2019 (/opt/conda/lib/outlines/fsm/json_schema.py)`\n"
    )
    [finding] = found
    assert finding.facts.message == (
        "cannot import name 'build_regex_from_object' from 'outlines.fsm.json_schema' "
        "(/opt/conda/lib/outlines/fsm/json_schema.py)"
    )
    assert [f.function for f in finding.facts.frames] == ["_run_module_as_main", "<module>"]
    assert finding.facts.frames[-1].path == "sglang/srt/constrained/__init__.py"


def _wrap(text: str, width: int) -> str:
    """``text`` as a terminal of ``width`` columns shows it (a hard wrap)."""
    out = []
    for line in text.split("\n"):
        while len(line) > width:
            out.append(line[:width])
            line = line[width:]
        out.append(line)
    return "\n".join(out)


WATCHDOG = (
    "(WorkerDict pid=66442) [Rank7]:[E506 14:16:14.487 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 3] "
    "Exception (either an error or timeout) detected by watchdog at work: 3, last enqueued NCCL "
    "work: 3, last completed NCCL work: 2.\n"
    "(WorkerDict pid=66442) [Rank7]:[E506 14:16:14.487575902 ProcessGroupNCCL.cpp:629] "
    "[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=3, "
    "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600066 "
    "milliseconds before timing out.\n"
    "(WorkerDict pid=66442) [Rank7]:[E506 14:16:14.488017295 ProcessGroupNCCL.cpp:2168] "
    "[PG ID 4 PG GUID 12(mesh_tp) Rank 3] failure detected by watchdog at work sequence id: 3\n"
)


@pytest.mark.parametrize("width", [80, 100, 133])
def test_lines_a_terminal_wrapped_at_its_width_are_read_whole(width: int) -> None:
    """dev/402 as a terminal of 80 to 133 columns shows it: each prefixed C++ log line goes
    on at the next lines without its prefix. A line as wide as the widest, once that width
    has been seen twice, is read with the line below it (so the first cut line of a log may
    stay cut: the later ones are whole)."""
    whole = [f.facts.message for f in scan_text(WATCHDOG)]
    wrapped = _wrap(WATCHDOG, width)
    read = [f.facts.message for f in scan_text(wrapped)]
    assert read[1:] == whole[1:]
    assert [f.facts.message for f in scan_stream(io.StringIO(wrapped))] == read


def test_lines_of_one_length_are_not_taken_for_a_wrap() -> None:
    """Repeated lines of one width (the same body from many requests), a rule of one
    character, and lines that end a sentence are lines of their own."""
    body = '{"object":"error","message":"The input (9000 tokens) is too long.","code":400}'
    assert len(scan_text("\n".join([body] * 5))) == 5
    rule = "=" * 80
    found = scan_text(f"{rule}\n{rule}\nValueError: bad thing\n{rule}\n")
    assert [f.facts.message.split("\n")[0] for f in found] == ["bad thing"]


def test_a_short_paste_of_one_wrapped_line_is_one_message() -> None:
    """dev/539 as an 80-column terminal shows it: the one logged line, cut mid-word."""
    text = _wrap(
        "```bash\n(SGLangEngine pid=13265) [2025-08-14 23:22:40 TP7] KV cache pool is full. "
        "Retract requests. #retracted_reqs: 1, #new_token_ratio: 0.4533 -> 0.4767\n```",
        80,
    )
    [finding] = scan_text(text)
    assert finding.facts.message.replace("\n", "") == (
        "KV cache pool is full. Retract requests. #retracted_reqs: 1, "
        "#new_token_ratio: 0.4533 -> 0.4767"
    )
    assert (finding.line, finding.end_line) == (2, 3)


@pytest.mark.parametrize("indent", ["    ", "\t"])
def test_a_paste_indented_as_a_markdown_code_block(indent: str) -> None:
    """Four spaces or a tab before every line (Markdown's indented code block), whatever the
    paste holds: a traceback with its header, ranks' prefixes, a lone error line."""
    tb = (
        "Traceback (most recent call last):\n"
        f'  File "{SITE}/sglang/srt/model_executor/cuda_graph_runner.py", line 269, in __init__\n'
        "    raise Exception(\n"
        "Exception: Capture cuda graph failed: boom\n"
        "Possible solutions:\n"
    )
    for text in (tb, "".join(f"[rank0]: {line}\n" for line in tb.splitlines())):
        facts = only("".join(indent + line + "\n" for line in text.splitlines()))
        assert (facts.type_name, facts.message) == (
            "Exception",
            "Capture cuda graph failed: boom\nPossible solutions:",
        )
        assert facts.frames[-1].function == "__init__"
    lone = only(f"{indent}Exception: Capture cuda graph failed: boom\n{indent}Possible fix\n")
    assert (lone.type_name, lone.message) == (
        "Exception",
        "Capture cuda graph failed: boom\nPossible fix",
    )


def test_an_excerpt_starting_at_an_indented_source_line_keeps_its_indentation() -> None:
    """Not a code block: an excerpt cut above its first frame starts at a source line."""
    facts = only(
        "    config = load(path)\n"
        f'  File "{SITE}/transformers/hub.py", line 3, in cached_file\n'
        "    raise OSError(msg)\n"
        "OSError: gated repo\n"
    )
    assert (facts.type_name, facts.message) == ("OSError", "gated repo")
    assert [f.function for f in facts.frames] == ["cached_file"]


def test_the_error_line_pasted_above_its_cut_traceback_belongs_to_it() -> None:
    """dev/124: the reporter put the error first, then the traceback, cut before its end."""
    found = scan_text(
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 136.00 MiB.\n"
        "Traceback (most recent call last):\n"
        f'  File "{SITE}/llamafactory/train/rm/workflow.py", line 38, in run_rm\n'
        "    trainer = PairwiseTrainer(\n"
        f'  File "{SITE}/transformers/trainer.py", line 495, in __init__\n'
    )
    assert len(found) == 1
    facts = found[0].facts
    assert (found[0].line, found[0].end_line) == (1, 5)
    assert facts.type_name == "torch.cuda.OutOfMemoryError"
    assert facts.message == "CUDA out of memory. Tried to allocate 136.00 MiB."
    assert [f.function for f in facts.frames] == ["run_rm", "__init__"]


def test_an_error_line_above_a_whole_traceback_stays_its_own_finding() -> None:
    found = scan_text(
        "ValueError: first\n"
        "Traceback (most recent call last):\n"
        f'  File "{SITE}/llamafactory/x.py", line 3, in f\n'
        "KeyError: 'second'\n"
    )
    assert [(f.line, f.facts.type_name) for f in found] == [(1, "ValueError"), (2, "KeyError")]
    streamed = list(scan_stream(io.BytesIO(b"ValueError: alone\n[2025-06-11 09:30:02] next\n")))
    assert [(f.line, f.facts.message) for f in streamed] == [(1, "alone")]


def test_an_error_of_torchs_cpp_logger_is_a_finding() -> None:
    """dev/194: c10d logs its socket timeout at error level, with no exception name."""
    found = scan_text(
        "[W1226 15:44:25.497497753 TCPStore.cpp:358] [c10d] TCP client failed to connect\n"
        "[E1226 15:44:25.497183572 socket.cpp:1011] [c10d] The client socket has timed out"
        " after 600000ms while trying to connect to (node-05, 8000).\n"
        "[rank4]:[E321 02:07:12.539400006 ProcessGroupNCCL.cpp:1709] [PG 1 Rank 4] Timeout\n"
    )
    assert [(f.line, f.facts.message) for f in found] == [
        (
            2,
            "The client socket has timed out after 600000ms while trying to connect to"
            " (node-05, 8000).",
        ),
        (3, "[PG 1 Rank 4] Timeout"),
    ]


def test_a_raise_line_alone_says_what_is_raised() -> None:
    """dev/057: the reporter pasted only the source line."""
    facts = only('raise RuntimeError("Cannot find valid samples, check `data/README.md`.")\n')
    assert (facts.type_name, facts.message) == (
        "RuntimeError",
        "Cannot find valid samples, check `data/README.md`.",
    )
    assert raise_in("    raise ImportError(") is None
    assert raise_in("raise foo(x)") is None
    assert raise_in(r'raise ValueError("say \"hi\"")') == ("ValueError", 'say "hi"')


@pytest.mark.parametrize("raise_", ["", "raise "])
def test_an_exception_cited_between_backticks_in_prose_is_read(raise_: str) -> None:
    """dev/1205: ``Now, in SGLang, it only shows `ValueError("...")`.``"""
    message = "type fp8e4nv not supported in this architecture. The supported fp8 dtypes are"
    facts = only(f'Now, in SGLang, it only shows `{raise_}ValueError("{message} (a, b)")`.\n')
    assert (facts.type_name, facts.message) == ("ValueError", f"{message} (a, b)")
    # a call that constructs no exception, and prose without backticks, are not read so
    printed = scan_text('It shows `print("type fp8e4nv is not supported")`.\n')
    assert all(f.facts.type_name == "" for f in printed)
    assert scan_text(f'It shows ValueError("{message}") here.\n')[0].facts.type_name != "ValueError"


def test_frames_whose_indentation_was_lost() -> None:
    """dev/063, dev/213: every line at column 0, carets included."""
    facts = only(
        "```\n"
        f'File "{SITE}/sglang/srt/managers/scheduler.py", line 2777, in run_scheduler_process\n'
        "scheduler.event_loop_normal()\n"
        "^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        f'File "{SITE}/sglang/srt/managers/scheduler.py", line 983, in event_loop_normal\n'
        "batch = self.get_next_batch_to_run()\n"
        "RuntimeError: CUDA error: an illegal memory access was encountered\n"
        "```\n"
    )
    assert facts.type_name == "RuntimeError"
    assert facts.message == "CUDA error: an illegal memory access was encountered"
    assert [f.function for f in facts.frames] == ["run_scheduler_process", "event_loop_normal"]


# -- quoting ----------------------------------------------------------------------------------


def test_markdown_quotes_and_inline_code() -> None:
    """dev/305 (``> `` quoted, a frame line wrapped after ``in``) and dev/287 (backticks)."""
    facts = only(
        f'>   File "{SITE}/transformers/hf_argparser.py", line 347, in \n'
        "> parse_args_into_dataclasses\n"
        ">     raise ValueError(f'unused: {remaining_args}')\n"
        "> ValueError: unused: ['--llm_type']\n"
    )
    assert (facts.type_name, facts.message) == ("ValueError", "unused: ['--llm_type']")
    assert facts.frames[0].path == "transformers/hf_argparser.py"

    facts = only("`RuntimeError: Decode out of memory.\nTry to allocate 148 tokens.`\n")
    assert facts.message == "Decode out of memory.\nTry to allocate 148 tokens."
    assert unwrap("> > x") == "x" and unwrap("```python") == "```python"


# -- where a message ends ---------------------------------------------------------------------


def test_a_message_ends_at_lines_that_cannot_belong_to_it() -> None:
    """A code fence, a progress bar, ``Killed``, a C++ stack and a torchrun banner end it."""
    for after in (
        "```",
        " 45%|████▌     | 9/20 [00:03<00:04,  2.50it/s]",
        "Running tokenizer on dataset:  45%|████▌     | 9/20",
        "Killed",
        "Exception raised from c10_cuda_check_implementation at CUDAException.cpp:43",
        "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96",
        "***************************************",
        'File "/a/b.py", line 3, in f',
    ):
        facts = scan_text(f"ValueError: Template foo does not exist.\n{after}\n")[0].facts
        assert facts.message == "Template foo does not exist.", after
    facts = only("ValueError: first line\n  second line\n")
    assert facts.message == "first line\n  second line"


# -- error forms without a Python exception line ----------------------------------------------


def test_a_bare_exception_line() -> None:
    """dev/069, dev/101: ``raise Exception(...)`` prints ``Exception: message``."""
    facts = only("Exception: flashinfer with minimum required version 0.1.6 is not installed.\n")
    assert (facts.type_name, facts.message) == (
        "Exception",
        "flashinfer with minimum required version 0.1.6 is not installed.",
    )
    assert exception_in("Exception in thread Thread-1:") is None
    assert exception_in("Exception: ") is None


def test_an_exception_line_cited_in_backticks_ends_at_the_closing_one() -> None:
    """dev/468: prose cites ``The exact error is - `ValueError: Processor was not found ...` ``."""
    line = "The exact error is - `ValueError: Processor was not found, please check.` Any idea?"
    assert exception_in(line) == (22, "ValueError", "Processor was not found, please check.")
    quoted = "it says \u201cRuntimeError: Empty dataset!\u201d again"
    assert exception_in(quoted) == (9, "RuntimeError", "Empty dataset!")
    # no closing quote: the message runs to the end of the line as before
    assert exception_in("see `ValueError: bad value")[2] == "bad value"
    # held-back 681 (read after its report): more code cited after the closing backtick
    line = 'fails with a `KeyError: \'instruction\'`. Even with `"format": "sharegpt"` set'
    assert exception_in(line) == (14, "KeyError", "'instruction'")
    assert exception_in("`ValueError: set `x`.`")[2] == "set `x`."
    # dev/563: no space after the closing backtick; none fits the rule, so the last one closes
    assert exception_in("occurs. `RuntimeError: Failed: x' `Has anyone?")[2].strip() == "Failed: x'"


def test_an_exception_line_glued_to_a_title_in_another_script() -> None:
    """dev/340: an issue title in Chinese, then the error line with no space between."""
    line = "SGlang部署qwen2.5失败Exception: Capture cuda graph failed: boom"
    assert exception_in(line) == (17, "Exception", "Capture cuda graph failed: boom")
    assert exception_in("模型加载ValueError: bad") == (4, "ValueError", "bad")
    # in English prose the bare word is not an exception line
    assert exception_in("the server raised an Exception: see below") is None


def test_two_errors_on_one_line_behind_a_ranks_prefix_are_two_findings() -> None:
    """dev/486: prose quotes one error, then another with the rank's prefix it was logged with."""
    line = (
        "it will show me that:ValueError: Processor was not found, please check. but I change "
        "the template it will show me that: [rank4]: ValueError: Template qwen3_vl does not exist."
    )
    found = [(f.facts.type_name, f.facts.message) for f in scan_text(line + "\n")]
    assert found == [
        (
            "ValueError",
            "Processor was not found, please check. but I change the template it "
            "will show me that:",
        ),
        ("ValueError", "Template qwen3_vl does not exist."),
    ]
    # a rank's prefix before the only error changes nothing
    assert only("[rank4]: ValueError: bad\n").message == "bad"
    assert only("see [rank4] here: ValueError: bad [rank2] too\n").message == "bad [rank2] too"


def test_a_message_starting_on_the_line_after_its_exception_name() -> None:
    """dev/491: sgl_kernel raises ``ImportError`` with a message that starts with a newline
    and a bracketed tag; the tag is the message's, not a log record's prefix."""
    text = (
        "ImportError:\n"
        "[sgl_kernel] CRITICAL: Could not load any common_ops library!\n"
        "\n"
        "Attempted locations:\n"
    )
    facts = only(text)
    assert facts.type_name == "ImportError"
    assert facts.message.strip().startswith("[sgl_kernel] CRITICAL: Could not load any")
    # a prefix with a time, a rank or a pid starts a record of its own
    found = scan_text("ImportError:\n[rank0]: RuntimeError: boom\n")
    assert [(f.facts.type_name, f.facts.message) for f in found] == [
        ("ImportError", ""),
        ("RuntimeError", "boom"),
    ]


def test_a_frame_line_a_terminal_cut_inside_the_functions_name() -> None:
    """dev/593: ``..., line 44, in run_`` and ``sft`` on the next line: one name, ``run_sft``."""
    facts = only(
        "Traceback (most recent call last):\n"
        '  File "/home/someone/project/LLaMA-Efficient-Tuning/src/llmtuner/tuner/sft/workflow.py'
        '", line 44, in run_\n'
        "sft\n"
        "    trainer = Seq2SeqPeftTrainer(\n"
        "ValueError: bad\n"
    )
    assert [f.function for f in facts.frames] == ["run_sft"]


def test_a_line_cut_by_the_terminal_above_a_line_padded_to_its_width() -> None:
    """dev/436: a tmux copy pads each line with spaces to the terminal's width; the first
    wide line has no padding because the terminal cut it there (``line 15`` / ``3, in ...``),
    before any width was seen twice. A redacted path (``/home/xxx/``) left it short of it."""
    width = 88
    source = (
        '[rank0]:     {"role": tag_mapping[message[dataset_attr.role_tag]], "content":'
        " message[dataset_attr.content_tag]}"
    )
    facts = only(
        '[rank0]:   File "/home/xxx/LLaMA-Factory/src/llamafactory/data/aligner.py", line 15\n'
        + "3, in convert_sharegpt".ljust(width)
        + f"\n{source[:width]}\n{source[width:].ljust(width)}\n"
        + "[rank0]: KeyError: 'user'\n"
    )
    assert [(f.path, f.function, f.line) for f in facts.frames] == [
        ("llamafactory/data/aligner.py", "convert_sharegpt", 153)
    ]
    assert (facts.type_name, facts.message) == ("KeyError", "'user'")
    # a line without padding under one that ends mid-word stays a line of its own
    two = only("x" * 70 + " ends here\nValueError: " + "y" * 79 + "\n")
    assert two.message == "y" * 79


def test_a_line_glued_after_a_progress_bar() -> None:
    """tqdm redraws its bar with a carriage return and never ends the line; a paste without
    the return glues the next line to the finished bar (dev/041's ranks' NCCL lines)."""
    bar = "Running tokenizer: 100%|##########| 10/10 [00:01<00:00, 9.1it/s]"
    facts = only(bar + "ValueError: Template foo does not exist.\n")
    assert (facts.type_name, facts.message) == ("ValueError", "Template foo does not exist.")
    usage = only(bar + "launch_server.py: error: unrecognized arguments: --x 1\n")
    assert usage.message.startswith("launch_server.py: error:")
    assert scan_text(bar + "\n") == []


def test_a_cpp_abort_gives_the_what_message() -> None:
    """dev/060: ``terminate called after throwing an instance of 'c10::Error'``."""
    facts = only(
        "terminate called after throwing an instance of 'c10::DistBackendError'\n"
        "  what():  [PG ID 2 Rank 1] Process group watchdog thread terminated with exception:"
        " CUDA error: an illegal memory access was encountered\n"
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
        "\n"
        "Exception raised from c10_cuda_check_implementation at CUDAException.cpp:43\n"
        "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96\n"
    )
    assert facts.message.startswith("[PG ID 2 Rank 1] Process group watchdog")
    assert facts.message.endswith("device-side assertions.")


def test_cuda_assertions_glog_checks_and_triton_resources() -> None:
    """dev/227 (a kernel's device-side assertion), glog's ``Check failed``, dev/167 (Triton's
    ``OutOfResources``, whose name has none of the usual suffixes)."""
    found = scan_text(
        "../aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [0,0,0], thread:"
        ' [64,0,0] Assertion `index < sizes[i] && "index out of bounds"` failed.\n'
        "F0101 10:00:00.000000 123 engine.cc:12] Check failed: x == y (1 vs. 2)\n"
        "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required:"
        " 163840, Hardware limit: 101376\n"
    )
    assert [(f.facts.type_name, f.facts.message[:24]) for f in found] == [
        ("", "../aten/src/ATen/native/"),
        ("", "Check failed: x == y (1 "),
        ("triton.runtime.errors.OutOfResources", "out of resource: shared "),
    ]


def test_a_short_paste_of_a_bare_message() -> None:
    """dev/279: only the message, without a type; a longer log is not read this way."""
    facts = only("Please merge adapters before quantizing the model.\n")
    assert (facts.type_name, facts.message) == (
        "",
        "Please merge adapters before quantizing the model.",
    )
    assert scan_text("hello\n" * 2000) == []
    # a log, not a message: its first line is only a guess, reported if an entry fits it
    assert [(f.facts.message, f.tentative) for f in scan_text("one\ntwo\nthree\nfour\n")] == [
        ("one", True)
    ]
    assert scan_text("Traceback (most recent call last):\n") == []
    # the reporter's words around a code block: the block's lines are the message
    framed = "I got this error:\n```\nPlease merge adapters first.\n```\nAny idea?\nThanks!\n"
    assert [f.facts.message for f in scan_text(framed)] == ["Please merge adapters first."]
    long_block = "Hi\n```\none\ntwo\nthree\nfour\n```\n"
    assert [(f.facts.message, f.tentative) for f in scan_text(long_block)] == [("one", True)]


def test_the_title_line_of_a_longer_paste_is_read_when_an_entry_fits_it() -> None:
    """dev/755: an issue copied with its title (``# ...``) and a body of prose and system info;
    the title is the error. A first line that fits nothing is not reported."""
    issue = (
        "# Lora微调完Llama-3-8B-Instruct拿来预测，does not appear to have a file named config.json\n"
        "\n### System Info\n\n- `llamafactory` version: 0.9.1.dev0\n- Python version: 3.12.4\n"
        "\n### Reproduction\n\n![image](https://example.invalid/a.png)\n"
    )
    (found,) = explain_text(issue)
    assert found.finding.line == 1
    assert [m.id for m in found.matches][:1] == ["llamafactory.hf-config-json-missing"]
    assert explain_text("# A question about batching\n\nHow do I\nset it\nup?\n") == []


# -- bodies -----------------------------------------------------------------------------------


def test_a_json_body_with_a_shell_escaped_quote() -> None:
    """dev/142: ``model\\'s`` is neither JSON nor Python; the message still reads, and the
    body's ``type`` (an HTTP error class) is not taken for the exception."""
    facts = only(
        '{"object":"error","message":"The input (61709 tokens) is longer than the model\\\'s'
        ' context length (40960 tokens).","type":"BadRequestError","param":null,"code":400}\n'
    )
    assert facts.type_name == ""
    assert facts.message == (
        "The input (61709 tokens) is longer than the model's context length (40960 tokens)."
    )


NOT_EMBEDDING = (
    "This model does not appear to be an embedding model by default. Please add"
    " `--is-embedding` when launching the server or try another model."
)


@pytest.mark.parametrize("indent", [2, 4])
def test_a_body_printed_over_several_lines_is_read_by_its_message(indent: int) -> None:
    """dev/1389: SGLang's error body pretty-printed (``jq``, ``json.dumps(indent=...)``), in a
    code fence: no line holds the whole body, the ``"message"`` line still says the failure."""
    pad = " " * indent
    body = (
        f'```\n{{\n{pad}"object": "error",\n{pad}"message": "{NOT_EMBEDDING}",\n'
        f'{pad}"type": "BadRequestError",\n{pad}"param": null,\n{pad}"code": 400\n}}\n```\n'
    )
    (found,) = explain_text(body)
    assert (found.finding.kind, found.finding.line, found.finding.facts.message) == (
        "body",
        4,
        NOT_EMBEDDING,
    )
    assert [m.id for m in found.matches] == ["sglang.not-an-embedding-model"]
    # nested under "error", as OpenAI-style servers print it
    nested = f'{{\n  "error": {{\n    "message": "{NOT_EMBEDDING}",\n    "code": 400\n  }}\n}}\n'
    assert [m.id for m in explain_text(nested)[0].matches] == ["sglang.not-an-embedding-model"]


def test_a_field_line_the_catalog_does_not_know_is_no_finding() -> None:
    """A ``"message"`` field is read tentatively: a body whose words no entry has, or a chat
    reply's message, says nothing; so does a field line of a structured log."""
    reply = '{\n  "id": "c1",\n  "message": "Hello! How can I help you today?",\n  "n": 1\n}\n'
    assert explain_text(reply) == []
    log = '{"time": "10:00", "level": "INFO",  "message": "Load weight end."}\n' * 3
    assert [e for e in explain_text(log) if e.matches or e.finding.kind == "body"] == []


# -- run context from the text ----------------------------------------------------------------


def test_the_projects_the_text_shows() -> None:
    """Paths, commands and logger names anywhere in the head of a log, and in the lines read
    closely after it, say which project ran; look-alikes are noted too."""
    log = (
        "$ llamafactory-cli train examples/qwen.yaml\n"
        "ValueError: Some keys are not used by the HfArgumentParser: ['x']\n"
    )
    assert scan_text(log)[0].context == {"llamafactory"}
    vllm = f'  File "{SITE}/vllm/engine/llm_engine.py", line 3, in f\nValueError: bad\n'
    assert scan_text(vllm)[0].context == {"vllm"}
    assert scan_text("ValueError: bad\n")[0].context == frozenset()
    # dev/502: SGLang's scheduler loop named in a summary of the stack
    summary = "RuntimeError: CUDA error\n  ...in scheduler.event_loop_overlap() -> x()\n"
    assert scan_text(summary)[0].context == {"sglang"}
    # dev/570: a response of SGLang's native /generate, aborted with the error in it
    body = '{"text":"","meta_info":{"id":"c5","finish_reason":{"message":"ValueError: x"}}}\n'
    assert scan_text(body)[0].context == {"sglang"}
    streamed = list(scan_stream(io.BytesIO(log.encode()), 7))
    assert streamed[0].context == {"llamafactory"}


# -- size -------------------------------------------------------------------------------------


class _Generated(io.RawIOBase):
    """``size`` bytes of an ordinary log, made up as they are read (never on disk)."""

    LINE = b"[2025-06-11 09:30:02 TP0] Decode batch. #running-req: 3, #token: 1024, gen\n"

    def __init__(self, size: int) -> None:
        self.left = size
        self.block = self.LINE * ((1 << 20) // len(self.LINE))

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        n = min(len(buffer), len(self.block), self.left)
        buffer[:n] = self.block[:n]
        self.left -= n
        return n


@pytest.mark.slow
def test_a_gigabyte_stream_in_bounded_memory() -> None:
    """1 GB of log made up on the fly, one traceback at its end: found, in linear time."""
    tail = b'Traceback (most recent call last):\n  File "/a/b.py", line 1, in f\nValueError: x\n'
    stream = io.BufferedReader(_Generated(1 << 30), buffer_size=1 << 20)
    found = list(scan_stream(io.BufferedReader(_Chain(stream, tail))))
    assert [(f.facts.type_name, f.facts.message) for f in found] == [("ValueError", "x")]


class _Chain(io.RawIOBase):
    def __init__(self, first: io.BufferedReader, tail: bytes) -> None:
        self.first, self.tail = first, tail

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self.first.read(len(buffer)) or self.tail
        if data is self.tail:
            self.tail = b""
        buffer[: len(data)] = data
        return len(data)


def test_line_numbers_a_viewer_added() -> None:
    """dev/039: ``[80810] `` before every line; a numbered listing's ``12<TAB>``."""
    facts = only(
        "[80817] Traceback (most recent call last):\n"
        '[80818]   File "/a/b.py", line 3, in f\n'
        "[80819] ValueError: x\n"
    )
    assert (facts.type_name, facts.message, len(facts.frames)) == ("ValueError", "x", 1)
    facts = only(
        '12\tTraceback (most recent call last):\n13\t  File "/a/b.py", line 3, in f\n'
        "14\tValueError: x\n"
    )
    assert (facts.type_name, facts.message, len(facts.frames)) == ("ValueError", "x", 1)


def test_sglang_log_prefixes_say_the_run_is_sglang() -> None:
    for prefix in (
        "[2025-06-11 09:30:02 TP0] ",
        "[2025-06-11 09:30:02 DP1 TP3 EP3] ",
        "[2026-06-30 05:18:57 DP1] ",  # dev/1379: data parallel alone, no TP rank
        "[2026-06-30 05:18:57.042 DP0 PP1 ATTN_CP1 MOE_DP0 TP3 EP3] ",  # SGLANG_LOG_MS
    ):
        assert scan_text(prefix + "ValueError: x\n")[0].context == {"sglang"}, prefix
    for prefix in ("[TPU] ", "[2026-06-30 05:18:57] ", "[2026-06-30 05:18:57 DPO] ", "[DP1] "):
        assert scan_text(prefix + "ValueError: x\n")[0].context == frozenset(), prefix
    # an ordinary SGLang line before the error (one the scanner never looks at closely)
    text = "[2025-06-11 09:30:02 TP0] Load weight end.\nERROR:    OSError: bind failed\n"
    assert scan_text(text)[0].context == {"sglang"}
    assert next(scan_stream(io.BytesIO(text.encode()))).context == {"sglang"}


def test_log_record_starts_end_a_message() -> None:
    """dev/071: torchrun's glog lines (a 15-digit thread id) right after an error line; the
    same for the other record formats."""
    for record in (
        "W0429 11:19:48.007000 140541977510912 torch/distributed/elastic/api.py:858] Sending",
        "[2025-06-11 09:30:02 TP0] Prefill batch.",
        "[INFO|2025-06-11 09:30:02] llamafactory.train.trainer:42 >> loss",
        "2025-06-11 10:20:01,554 ERROR something else",
        "06/28/2024 18:00:13 - WARNING - llamafactory.hparams.parser - We recommend x",
        "INFO: 127.0.0.1 - GET /health",
        "(WorkerDict pid=616) hello",
    ):
        facts = scan_text(f"ValueError: Template qwen3 does not exist.\n{record}\n")[0].facts
        assert facts.message == "Template qwen3 does not exist.", record


def test_prefixes_of_cpp_and_python_loggers() -> None:
    """A C++ location ends the prefix, so ``[Rank 1]`` stays in NCCL's message (dev/042);
    ``LEVEL - logger.name - `` is peeled, even with the line's head cut off (dev/149, 150)."""
    from errhints._facts.lines import peel

    assert (
        peel(
            "[rank1]:[E1130 10:00:00.000000 123 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught"
        )[1]
        == "[Rank 1] Watchdog caught"
    )
    assert peel("WARNING - llmtuner.model.patcher - FlashAttention2 is not installed.")[1] == (
        "FlashAttention2 is not installed."
    )
    assert peel("- WARNING - llamafactory.model.attention - Gemma-2 should use fa2.")[1] == (
        "Gemma-2 should use fa2."
    )
    assert peel("- foo")[1] == "- foo"
    assert peel("Decode batch. a.b - c")[1] == "Decode batch. a.b - c"


def test_llamafactorys_logger_prefix_is_peeled_even_with_its_bracket_cut() -> None:
    """dev/701: LlamaFactory's ``[LEVEL|time] name:lineno >> message``, the bracket cut off by
    the excerpt: ``llamafactory.webui.common:162 >> Cannot open ...``. What follows ``>>`` is
    the message, even when it looks like another prefix."""
    from errhints._facts.lines import peel

    message = "Cannot open data/dataset_info.json due to Expecting value: line 1 column 1."
    for line in (
        f"[WARNING|2025-01-15 16:41:57] llamafactory.webui.common:162 >> {message}",
        f"llamafactory.webui.common:162 >> {message}",
    ):
        key, content = peel(line)
        assert content == message and key.endswith(">>"), line
    assert peel("llamafactory.data.loader:57 >> - WARNING - x")[1] == "- WARNING - x"
    # a shell's redirection or a quoted prompt is no logger's prefix
    assert peel("cat a >> b.txt")[1] == "cat a >> b.txt"
    assert peel("ValueError: x >> y")[1] == "ValueError: x >> y"


def test_an_error_cited_in_prose_ends_where_its_citation_does() -> None:
    """dev/732: an inline code span that closes mid-line (```ZMQError: ...` when serving``);
    dev/728: a ``KeyError`` key cited in a title before more words (``... 'x' on v0.5.13``)."""
    assert unwrap("`ZMQError: Operation cannot be accomplished in current state` when serving") == (
        "ZMQError: Operation cannot be accomplished in current state"
    )
    # a span that holds code spans of its own keeps its text; so does a span closed at the end
    assert unwrap("`ValueError: set `x` first.`") == "ValueError: set `x` first."
    assert unwrap("`a` and `b`") == "a` and `b"
    # a cited message in double quotes (dev/836), but not a line that quotes twice
    assert unwrap('> "This model does not appear to be an embedding model..."') == (
        "This model does not appear to be an embedding model..."
    )
    assert unwrap('"a" and "b"') == '"a" and "b"'
    hit = exception_in(
        "MiMoV2 fails to load: KeyError: 'model.layers.1.w2_weight_scale' on v0.5.13"
    )
    assert hit is not None and hit[1:] == ("KeyError", "'model.layers.1.w2_weight_scale'")
    # other messages that start with a quoted value go on after it (dev/747)
    hit = exception_in(
        "报错 AttributeError: 'DeepSpeedZeroOptimizer_Stage3' object has no attribute 'train'"
    )
    assert (
        hit is not None
        and hit[2] == "'DeepSpeedZeroOptimizer_Stage3' object has no attribute 'train'"
    )
    # at the line's start the whole line is the message; a quote inside it stays
    assert exception_in("KeyError: 'a' and more")[1:] == ("KeyError", "'a' and more")  # type: ignore[index]


def test_a_logged_message_that_quotes_the_error_it_met_is_matched_whole() -> None:
    """sglang#14754: the loader logs ``Corrupted safetensors file detected: <file> -
    SafetensorError: ...``; the error it quotes is explained, and so is the logged line."""
    line = (
        "[2025-12-09 14:26:50 TP0] Corrupted safetensors file detected: /root/.cache/huggingface"
        "/hub/models--x/snapshots/abc/model-00001-of-00002.safetensors - SafetensorError: Error"
        " while deserializing header: MetadataIncompleteBuffer\n"
    )
    (found,) = explain_text(line)
    assert (found.finding.facts.type_name, found.finding.wrapper) == (
        "SafetensorError",
        line.partition("] ")[2].strip(),
    )
    assert [m.id for m in found.matches] == [
        "sglang.safetensors-corrupt-checkpoint",
        "sglang.corrupted-safetensors-file-detected",
    ]


def test_a_line_that_says_error_in_a_longer_paste_is_read_tentatively() -> None:
    """dev/979: a client's report (date, provider, model, status) whose one error line has
    no exception name: the line is read, and kept only if the catalog knows its words."""
    text = (
        "Date/time: 2025-12-20T06:57:07.662Z\n"
        "Provider: openai\n"
        "Model: DeepSeek-R1\n"
        "\n"
        "500\n"
        "OpenAI completion error: 500 Internal server error: Unsupported tool_call_parser: None"
        " (request id: 202512200652133627752312601517)\n"
    )
    (found,) = [f for f in scan_text(text) if f.line == 6]
    assert found.tentative and found.facts.message.startswith("OpenAI completion error: 500")
    (explained,) = explain_text(text)
    # the same message from older releases (their own entry) comes second
    assert [m.id for m in explained.matches] == [
        "sglang.unsupported-tool-call-parser",
        "sglang.unsupported-tool-call-parser-old",
    ]
    assert explain_text(text.replace("tool_call_parser", "something else")) == []


def test_sglang_jax_in_view_keeps_sglangs_entries_weak() -> None:
    """dev/930: sglang-jax (``sgl_jax``), SGLang's JAX port, raises SGLang's words and prints
    its log lines; where the text shows it, SGLang's entries are weak at most, and its own
    name (``sglang-jax``), its ``[... TP0]`` prefix and its ``launch_server`` are no evidence of
    SGLang. A lone message, with nothing in view, stays SGLang's."""
    message = (
        "RuntimeError: Decode out of memory. Try to lower your batch size.\n"
        "Try to allocate 127 tokens.\n"
        "Available tokens: 5248 (available_size=5248 + evictable_size=0)\n"
    )
    log = (
        "$ python -m sgl_jax.launch_server --model-path Qwen/Qwen3-8B --tp-size 4\n"
        "[2025-10-01 10:00:00 TP0] The server is fired up and ready to roll!\n"
        "[2025-10-01 10:05:00 TP0] " + message
    )
    prose = "Seen with https://github.com/sgl-project/sglang-jax on a TPU:\n\n" + message

    def confidences(text: str) -> set[tuple[str, str]]:
        return {(m.id, m.confidence) for e in explain_text(text) for m in e.matches}

    for text in (log, prose):
        assert all(c == "weak" for _id, c in confidences(text)), text
        assert {f.context for f in scan_text(text)} == {frozenset({"sgl_jax"})}
    assert ("sglang.decode-out-of-memory", "strong") in confidences(message)
    both = "sglang 0.5.3 and sglang-jax side by side\n" + log
    assert ("sglang.decode-out-of-memory", "strong") in confidences(both)


@pytest.mark.parametrize(
    "copy",
    [
        pytest.param(lambda t: t.replace("  ", "\u00a0\u00a0"), id="no-break-spaces"),
        pytest.param(
            lambda t: t.replace("&", "&amp;").replace('"', "&quot;").replace("'", "&#39;"),
            id="html-entities",
        ),
        pytest.param(
            lambda t: t.replace("'", "&#x27;").replace("<", "&lt;"), id="html-entities-no-quot"
        ),
        pytest.param(lambda t: "\ufeff" + t, id="byte-order-mark"),
    ],
)
def test_a_traceback_copied_from_a_web_page_reads_as_the_original(
    copy: Callable[[str], str],
) -> None:
    """A copy of a rendered page indents with no-break spaces; a copy of its source keeps
    the quotes as entities (``File &quot;...&quot;``); a file saved on Windows starts with a
    byte-order mark: each reads as the traceback itself."""
    text = (
        '  File "/usr/lib/python3.10/site-packages/llamafactory/data/template.py", line 9,'
        " in get_template_and_fix_tokenizer\n"
        '    raise ValueError(f"Template {name} does not exist.")\n'
        "ValueError: Template 'qwen9' does not exist.\n"
    )
    copied = copy(text)
    assert copied != text
    assert scan_text(copied) == scan_text(text)
    assert scan_text(text)[0].facts.frames[0].function == "get_template_and_fix_tokenizer"


def test_the_shells_killed_below_a_cut_traceback_is_not_its_error_line() -> None:
    """dev/746 with the shell's ``Killed`` after it: a traceback cut inside its raise
    statement is still read from that statement, not from ``Killed``."""
    text = (
        "Traceback (most recent call last):\n"
        '  File "/x/llamafactory/train/tuner.py", line 60, in run_exp\n'
        '    raise ValueError("Unknown task: {}.".f\n'
    )
    for after in ("", "Killed\n", "./run.sh: line 22: 103525 Killed  python train.py\n"):
        (found,) = [f for f in scan_text(text + after) if f.kind == "traceback"]
        assert (found.facts.type_name, found.facts.message) == ("ValueError", "Unknown task: {}.")


def test_a_short_paste_with_a_log_line_below_keeps_its_lines_apart() -> None:
    """dev/749 with a log record below it: the prose line is as wide as the widest, but the
    line under it starts a record of its own, so no terminal cut it there."""
    prose = (
        'Thank you, but I met a new error that "Undefined dataset pretrain_data in'
        ' dataset_info.json". Can you explain how to generate it'
    )
    for after, message in (
        ("[2025-06-11 09:30:03] INFO:     Shutting down", "Shutting down"),
        ("Killed", "Killed"),
    ):
        found = scan_text(prose + "\n" + after + "\n")
        assert [f.facts.message for f in found] == [prose, message]


_PYTHON_FORM = (
    "Traceback (most recent call last):\n"
    '  File "<ipython-input-5-2f1c3a1b2c3d>", line 3, in <cell line: 3>\n'
    "    run_exp(args)\n"
    '  File "/usr/local/lib/python3.10/dist-packages/llamafactory/train/tuner.py", line 50,'
    " in run_exp\n"
    '    raise ValueError(f"Unknown task: {finetuning_args.stage}.")\n'
    "ValueError: Unknown task: sft2.\n"
)

#: IPython 7 (Colab until 2024), as printed and as Colab's page copies it (dev/868's form).
_IPYTHON7 = """\
---------------------------------------------------------------------------
ValueError                                Traceback (most recent call last)
<ipython-input-5-2f1c3a1b2c3d> in <cell line: 3>()
      1 from llamafactory.train.tuner import run_exp
      2
----> 3 run_exp(args)

/usr/local/lib/python3.10/dist-packages/llamafactory/train/tuner.py in run_exp(args, callbacks)
     48         run_pt(model_args, data_args, training_args, finetuning_args, callbacks)
     49     else:
---> 50         raise ValueError(f"Unknown task: {finetuning_args.stage}.")

ValueError: Unknown task: sft2.
"""

_COLAB = """\
ValueError                                Traceback (most recent call last)
[<ipython-input-5-2f1c3a1b2c3d>](https://localhost:8080/#) in <cell line: 3>()
      1 from llamafactory.train.tuner import run_exp
----> 3 run_exp(args)

1 frames
[/usr/local/lib/python3.10/dist-packages/llamafactory/train/tuner.py](https://localhost:8080/#) in run_exp(args, callbacks)
     49     else:
---> 50         raise ValueError(f"Unknown task: {finetuning_args.stage}.")

ValueError: Unknown task: sft2.

---------------------------------------------------------------------------
NOTE: If your import is failing due to a missing package, you can
"""


@pytest.mark.parametrize(
    "text",
    [_IPYTHON7, _COLAB, "".join(f"    {line}\n" for line in _IPYTHON7.splitlines())],
    ids=["ipython7", "colab", "ipython7-indented"],
)
def test_an_ipython_traceback_reads_as_pythons(text: str) -> None:
    """IPython's older form names a frame by its path and function and its line by the
    arrow (``---> 50``); Colab's page copies each path as a Markdown link and folds frames
    (``1 frames``); a Markdown code block indents it. Each reads as the traceback Python would
    print (the live form, IPython 8 and later, is checked in a real shell:
    ``tests/doors/test_ipython.py``)."""
    (found,) = scan_text(text)
    (python,) = scan_text(_PYTHON_FORM)
    assert found.kind == "traceback"
    assert found.facts == python.facts


def test_a_quoted_paste_keeps_a_librarys_tag_and_loses_a_loggers_prefix() -> None:
    """dev/834 and /701 quoted with ``> ``: the ``[sgl_kernel] CRITICAL: ...`` line under an
    empty ``ImportError:`` is still its message, and LlamaFactory's ``name:lineno >> `` is
    still peeled off a short paste's line."""

    def quoted(text: str) -> str:
        return "".join(f"> {line}\n" for line in text.splitlines())

    kernel = (
        "Traceback (most recent call last):\n"
        '  File "/opt/.venv/lib/python3.12/site-packages/sgl_kernel/load_utils.py", line 188,'
        " in _load_architecture_specific_ops\n"
        "    raise ImportError(error_msg)\n"
        "ImportError: \n"
        "[sgl_kernel] CRITICAL: Could not load any common_ops library!\n"
    )
    assert scan_text(quoted(kernel))[0].facts == scan_text(kernel)[0].facts
    assert "CRITICAL: Could not load" in scan_text(kernel)[0].facts.message
    logged = (
        "llamafactory.webui.common:162 >> Cannot open data/dataset_info.json due to Expecting"
        " property name enclosed in double quotes: line 2 column 1 (char 17).\n"
    )
    (found,) = scan_text(quoted(logged))
    assert found.facts.message.startswith("Cannot open data/dataset_info.json")


def test_an_issue_title_as_a_page_shows_it_is_read_without_its_heading_marks() -> None:
    """dev/726 as a Markdown heading (``# Exception: Capture cuda graph failed: ...``): the
    marks are not part of the error line, even in a paste that shows an error form."""
    title = "# Exception: Capture cuda graph failed: Could not run 'sgl_kernel::rmsnorm'\n"
    (found,) = scan_text(title + "Traceback (most recent call last):\n")[:1]
    assert (found.facts.type_name, found.facts.message) == (
        "Exception",
        "Capture cuda graph failed: Could not run 'sgl_kernel::rmsnorm'",
    )


def test_a_record_glued_after_a_terminals_padding_is_a_line_of_its_own() -> None:
    """dev/649: a terminal padded each record to its width, and the copy lost some line
    breaks, so a record follows another on one line after the spaces: each is read as a
    line of its own, and the traceback reads as if nothing were glued."""
    pad = " " * 40
    lines = [
        "Traceback (most recent call last):",
        '  File "<frozen runpy>", line 88, in _run_code',
        '  File "/x/site-packages/sglang/api.py", line 39, in Runtime',
        "    return Runtime(*args, **kwargs)",
        "ValueError: Template qwen9 does not exist.",
    ]
    prefix = "2024-06-02 00:26:10 | ERROR | stderr | "
    plain = "".join(f"{prefix}{line}\n" for line in lines)
    glued = (
        f"{prefix}{lines[0]}\n{prefix}{lines[1]}{pad}{prefix}{lines[2]}\n"
        f"{prefix}{lines[3]}{pad}{prefix}{lines[4]}\n"
    )
    assert [f.facts for f in scan_text(glued)] == [f.facts for f in scan_text(plain)]
    assert scan_text(plain)[0].facts.frames[-1].function == "Runtime"


@pytest.mark.parametrize("header", [True, False], ids=["whole", "mid-stack"])
def test_a_traceback_reflowed_into_one_paragraph_reads_as_its_lines(header: bool) -> None:
    """A traceback pasted where line breaks are lost (a forum's paragraph, a title; dev/437
    holds one): its header, frames, separators, source lines and error line are found again
    in the one line, and read as the traceback Python printed."""
    text = (
        "Traceback (most recent call last):\n"
        '  File "/x/llamafactory/hparams/parser.py", line 57, in _parse_args\n'
        "    return parser.parse_dict(args)\n"
        "           ^^^^^^^^^^^^^^^^^^^^^^^\n"
        '  File "/x/transformers/hf_argparser.py", line 377, in parse_dict\n'
        '    raise ValueError(f"Some keys are not used by the HfArgumentParser: {sorted(k)}")\n'
        "ValueError: Some keys are not used by the HfArgumentParser: ['flash_attn2']\n"
    )
    if not header:
        text = text.split("\n", 1)[1]
    (whole,) = scan_text(text)
    (reflowed,) = scan_text(" ".join(text.split()) + "\n")
    assert reflowed.facts.type_name == whole.facts.type_name == "ValueError"
    assert reflowed.facts.message == whole.facts.message
    assert [(f.path, f.function, f.line) for f in reflowed.facts.frames] == [
        (f.path, f.function, f.line) for f in whole.facts.frames
    ]


#: Tracebacks reflowed after words of their own (dev/1191: a logged error and "Full traceback
#: points to:"; dev/631: Chinese prose), and ending in a bare ``Exception`` (dev/320) or a
#: dotted exception name without ``Error`` in it (dev/456).
REFLOWED_AFTER_WORDS = {
    "after-a-log-line": (
        "ERROR srt_server - Scheduler hit an exception: RuntimeError: probability tensor "
        "contains either inf, nan or element < 0\nFull traceback points to:\n",
        '  File ".../sglang/srt/layers/sampler.py", line 476, in forward\n'
        "    batch_next_token_ids = torch.multinomial(probs, ...)\n"
        "RuntimeError: probability tensor contains either inf, nan or element < 0\n",
    ),
    "after-prose": (
        "\u62a5\u9519\u5982\u4e0b\n",
        '  File "/ai/src/llmtuner/tuner/core/loader.py", line 190, in load_model\n'
        "    model.load_adapter(path, 'reward')\n"
        '  File "/env/peft/tuners/tuners_utils.py", line 192, in inject_adapter\n'
        "    peft_config = self.peft_config[adapter_name]\n"
        "KeyError: 'reward'\n",
    ),
    "bare-exception": (
        "",
        '  File "/w/sglang/srt/model_executor/cuda_graph_runner.py", line 269, in __init__\n'
        "    raise Exception(\n"
        "Exception: Capture cuda graph failed: CUDA out of memory.\n",
    ),
    "error-in-a-string": (
        "",
        '  File "/w/sglang/srt/x.py", line 3, in f\n'
        '    raise RuntimeError(f"NCCL Error: {e}")\n'
        "RuntimeError: NCCL Error: unhandled system error\n",
    ),
    "dotted-name": (
        "",
        '  File "/env/triton/compiler/compiler.py", line 374, in _init_handles\n'
        '    raise OutOfResources(self.metadata.shared, max_shared, "shared memory")\n'
        "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 1\n",
    ),
}


@pytest.mark.parametrize(
    ("before", "stack"), list(REFLOWED_AFTER_WORDS.values()), ids=list(REFLOWED_AFTER_WORDS)
)
def test_a_traceback_reflowed_after_other_words_reads_as_its_lines(before: str, stack: str) -> None:
    (whole,) = [f for f in scan_text(stack) if f.facts.frames]
    reflowed = [f for f in scan_text(" ".join((before + stack).split()) + "\n") if f.facts.frames]
    assert [f.facts.type_name for f in reflowed] == [whole.facts.type_name]
    assert reflowed[0].facts.message == whole.facts.message
    assert [(f.path, f.function, f.line) for f in reflowed[0].facts.frames] == [
        (f.path, f.function, f.line) for f in whole.facts.frames
    ]


#: Logs whose line breaks a copy lost, each the shape of a development paste: torchrun's rank
#: prefix with glog lines after the error (dev/071), a GCP log's level and time (dev/334), a
#: message above an SGLang record and a traceback (dev/190), an error line above a traceback
#: (dev/124), tqdm bars before a rank's NCCL record (dev/041).
RUN_TOGETHER = {
    "rank-prefix-then-glog": (
        '[rank2]: File "/x/llamafactory/data/template.py", line 547, in get_template\n'
        '[rank2]:     raise ValueError(f"Template {data_args.template} does not exist.")\n'
        "[rank2]: ValueError: Template qwen3 does not exist.\n"
        "W0429 11:19:48.007000 140541977510912 torch/distributed/elastic/multiprocessing/api.py:858]"
        " Sending process 122719 closing signal SIGTERM\n"
        "W0429 11:19:48.007000 140541977510912 torch/distributed/elastic/multiprocessing/api.py:858]"
        " Sending process 122720 closing signal SIGTERM\n"
    ),
    "level-and-time": (
        "ERROR 2025-04-07T19:13:52.317869663Z KeyError: 'model.layers.55.mlp.input_scale'\n"
        "ERROR 2025-04-07T19:13:52.317867517Z param = params_dict[name]\n"
        'ERROR 2025-04-07T19:13:52.317865848Z File "/w/sglang/srt/models/llama.py", line 508,'
        " in load_weights\n"
    ),
    "message-record-traceback": (
        "zmq.error.ZMQError: Operation cannot be accomplished in current state\n"
        "[12-24 06:00:17] Error receiving requests in scheduler event loop: Operation cannot be"
        " accomplished in current state\n"
        "Traceback (most recent call last):\n"
        '  File "/v/sglang/multimodal_gen/runtime/managers/scheduler.py", line 163, in event_loop\n'
        "    reqs = self.recv_reqs()\n"
        '  File "/v/zmq/sugar/socket.py", line 989, in recv_pyobj\n'
        "    msg = self.recv(flags)\n"
    ),
    "bars-then-rank": (
        "{'loss': 0.8533, 'grad_norm': 4.869833469390869, 'epoch': 0.16}\n"
        "  2%|▏         | 10/620 [00:52<50:17,  4.95s/it]\n"
        "  2%|▏         | 11/620 [00:57<49:56,  4.92s/it]\n"
        "[rank0]:[E1123 00:52:57.664949121 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught"
        " collective operation timeout: WorkNCCL(SeqNum=1516, OpType=ALLREDUCE) ran for 600017"
        " milliseconds before timing out.\n"
    ),
}


@pytest.mark.parametrize("text", list(RUN_TOGETHER.values()), ids=list(RUN_TOGETHER))
def test_a_log_whose_line_breaks_were_lost_reads_as_its_lines(text: str) -> None:
    """A log copied into one paragraph: each record starts again where its prefix (a rank's,
    a glog header, a level and a time, SGLang's time, a traceback's header, a bar) shows,
    and the errors read as in the log with its line breaks."""

    def errors(found: str) -> list[tuple[str, str]]:
        return [(f.facts.type_name, f.facts.message) for f in scan_text(found) if f.facts.message]

    assert errors(" ".join(text.split()) + "\n") == errors(text) != []


def test_a_line_with_one_time_in_its_message_is_not_cut() -> None:
    """One record start inside an ordinary line (a time the message quotes) is no run-on."""
    line = (
        "ValueError: the checkpoint saved at 2025-06-11 09:30:02 by an older release does not"
        " match this model's config; re-save it with the release that trained it, or convert"
        " it first.\n"
    )
    assert only(line).message == line.split(": ", 1)[1].strip()


def test_an_error_line_and_its_traceback_in_one_paragraph() -> None:
    """dev/124's shape: a logged error line, then the traceback, in one paragraph: the error
    line is still read (it was dropped when only the traceback was unfolded)."""
    text = (
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 136.00 MiB."
        " Traceback (most recent call last):"
        ' File "src/train_bash.py", line 14, in <module> main()'
        ' File "/r/LLaMA-Factory/src/llmtuner/train/tuner.py", line 28, in run_exp run_rm()\n'
    )
    found = [(f.facts.type_name, f.facts.message) for f in scan_text(text)]
    assert ("torch.cuda.OutOfMemoryError", "CUDA out of memory. Tried to allocate 136.00 MiB.") in (
        found
    )


@pytest.mark.parametrize(
    "prefix",
    [
        "2025-12-18T08:24:02.431Z (SGLangEngine pid=3111) ",
        "[2025-12-18T16:24:02+08:00] leihaodi-qwen3-8b-rl-eagle3-20251218-162008s-3da56-cfcd2"
        " >> (SGLangEngine pid=3111) ",
    ],
    ids=["kubectl-and-ray", "pod-name-and-ray"],
)
def test_a_stack_of_prefixes_on_each_line_is_not_records_run_together(prefix: str) -> None:
    """dev/907: a time, a pod's name and Ray's worker prefix before SGLang's own prefix and
    its ``Scheduler hit an exception: Traceback ...``, on every line: each line is one record
    (two times and a header in it are a stack of prefixes, not records run together)."""
    lines = [
        "[2025-12-18 08:24:01 TP7] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2683,'
        " in run_scheduler_process",
        "    scheduler.event_loop_normal()",
        "ValueError: Template qwen9 does not exist.",
    ]
    text = "".join(prefix + line + "\n" for line in lines)
    (found,) = [f for f in scan_text(text) if f.facts.type_name]
    assert (found.facts.type_name, found.facts.message) == (
        "ValueError",
        "Template qwen9 does not exist.",
    )
    if "leihaodi" not in prefix:  # a pod's name before Ray's prefix is not peeled (yet)
        assert found.facts.frames[0].function == "run_scheduler_process"


def test_a_rank_prefix_repeated_inside_one_line_is_two_records() -> None:
    """dev/343 in one paragraph: the line's own rank prefix shows again inside it."""
    text = (
        '[rank3]: File "/app/src/llamafactory/data/template.py", line 639, in get_template_and_fix_tokenizer '
        '[rank3]: raise ValueError(f"Template {data_args.template} does not exist.")\n'
    )
    (found,) = scan_text(text)
    assert found.facts.type_name == "ValueError"
    assert found.facts.frames[-1].function == "get_template_and_fix_tokenizer"


def test_a_line_that_says_error_in_chinese_prose_is_read_tentatively() -> None:
    """Held-back 751 (read after its report): an issue's sections, and the error after
    ``终端报错：`` ("the terminal reported:") in a line of its own, with no exception name."""
    text = (
        "### Reproduction\n\n"
        "终端报错：Cannot open data\\dataset_info.json due to [Errno 2] No such file or"
        " directory: 'data\\\\dataset_info.json'.\n\n"
        "### Expected behavior\n\n选择data文件夹中的json数据\n"
    )
    (found,) = explain_text(text)
    assert [m.id for m in found.matches] == ["llamafactory.cannot-open-dataset-info"]
    assert explain_text(text.replace("Cannot open", "Could not read")) == []
    # in a log longer than a short paste, line by line as well as in blocks
    log = "".join(f"[INFO|2025-01-01 10:00:00] llamafactory.cli:1 >> step {i}\n" for i in range(80))
    said = "终端报错：Cannot open data/dataset_info.json due to Expecting value: line 3 column 1."
    log += said + "\n" + log
    assert [[m.id for m in e.matches] for e in explain_text(log)] == [
        ["llamafactory.cannot-open-dataset-info"]
    ]
    assert "终端报错：Cannot" in [f.facts.message[:11] for f in scan_stream(io.StringIO(log))]


def test_a_loggers_name_before_its_message_is_a_prefix() -> None:
    """Held-back 600 (read after its report): Python logging's ``%(name)s - %(message)s``."""
    line = "src.llamafactory.webui.common - Cannot open data/dataset_info.json due to [Errno 2] x."
    assert only(line + "\n").message.startswith("Cannot open data/")
    assert only("ValueError: a.b - c\n").message == "a.b - c"


@pytest.mark.parametrize(
    ("title", "entry"),
    [
        # dev/244's message: the template starts with a value, so it is keyed by its tail,
        # which the ellipsis took away
        (
            "DPOTrainer.get_batch_logps() got an unexpected keyword argument 'average_log_pro...",
            "llamafactory.dpo-get-batch-logps-average-log-prob",
        ),
        # dev/836's: cut inside a literal, with twice a whole message's literal text before it
        (
            "This model does not appear to be an embedding model by default. Please add"
            " `--is-embedding`\u2026",
            "sglang.not-an-embedding-model",
        ),
        # dev/497's: cut inside the last value, with all the literal text but ``)`` before it
        (
            "ImportError: cannot import name 'CachedGrammarCompiler' from 'xgrammar'"
            " (/usr/local/lib/pytho...",
            "sglang.xgrammar-import-name",
        ),
        # dev/233's: a message of several lines, on the one line of a title
        (
            "OSError: You are trying to access a gated repo. Make sure to have access to it at"
            " https:/...",
            "sglang.hf-gated-repo",
        ),
    ],
)
def test_a_title_cut_with_an_ellipsis_still_names_its_entry(title: str, entry: str) -> None:
    """A message its writer cut at about 80 characters with ``...`` is the template's start;
    the entry is found even when its key was in the part that was cut."""
    (found,) = explain_text(f"# {title}\n")
    assert entry in [m.id for m in found.matches]
    assert not any(e.matches for e in explain_text("# cannot import name 'x' from 'y...\n"))
    # too little of a start fits unrelated entries alike: none of them
    said = "ValueError: The server is not configured to..."
    assert not any(
        m.confidence in ("exact", "strong") for e in explain_text(said) for m in e.matches
    )


@pytest.mark.parametrize(
    "way",
    [
        lambda t: t.replace("\n", "\r\n"),
        lambda t: "".join("    " + line for line in t.splitlines(True)),
        lambda t: "".join("\t" + line for line in t.splitlines(True)),
    ],
    ids=["crlf", "indented", "tabbed"],
)
def test_a_line_wrapped_by_tmux_is_joined_in_a_crlf_or_indented_copy(
    way: Callable[[str], str],
) -> None:
    """dev/436's shape: tmux cut a frame line at its width and padded the rest with spaces to
    the width. Saved with CRLF line ends, or pasted indented as a Markdown code block, the
    rest is still joined to the line it belongs to."""
    width = 88
    frame = '[rank0]:   File "/home/xxx/LLaMA-Factory/src/llamafactory/data/aligner.py", line 153'
    head, rest = frame[:width], frame[width:] + ", in convert_sharegpt"
    text = (
        "```\n"
        f"{head}\n{rest.ljust(width)}\n"
        '[rank0]:     {"role": tag_mapping[message[dataset_attr.role_tag]]}\n'
        "[rank0]: KeyError: 'user'\n"
        "```\n"
    )

    def read(found: str) -> list[tuple[str, str, list[str]]]:
        return [
            (f.facts.type_name, f.facts.message, [fr.function for fr in f.facts.frames])
            for f in scan_text(found)
        ]

    assert read(text) == [("KeyError", "'user'", ["convert_sharegpt"])]
    assert read(way(text)) == read(text)


@pytest.mark.parametrize(
    "prefix",
    ["[rank0]: ", "(WorkerDict pid=12345) ", "2025-06-11T09:30:02.123456789Z ", "worker-1  | "],
)
def test_a_librarys_tag_after_a_loggers_prefix_starts_the_awaited_message(prefix: str) -> None:
    """dev/834 behind a rank's, a Ray worker's, kubectl's or docker compose's prefix:
    ``ImportError:`` with its message on the next line, which starts with sgl_kernel's
    ``[sgl_kernel]`` tag. After the stream's own prefix the tag is the message's start,
    as it is in a paste without a prefix."""
    lines = [
        "Traceback (most recent call last):",
        '  File "/v/sgl_kernel/load_utils.py", line 188, in _load_architecture_specific_ops',
        "    raise ImportError(error_msg)",
        "ImportError: ",
        "[sgl_kernel] CRITICAL: Could not load any common_ops library!",
    ]
    plain = "".join(line + "\n" for line in lines)
    (found,) = scan_text("".join(prefix + line + "\n" for line in lines))
    assert found.facts.message == scan_text(plain)[0].facts.message
    assert "[sgl_kernel] CRITICAL: Could not load" in found.facts.message


@pytest.mark.parametrize(
    "line",
    [
        "2025-03-06 10:05:08,123 - ERROR - Training crashed: ValueError: Certificate for"
        " huggingface.co is not valid before 2025-03-07 00:00:00 (UTC); check the system clock"
        " of this node and retry the download",
        "(VllmWorkerProcess pid=1234) ERROR 03-06 10:05:08 multiproc_worker_utils.py:226]"
        " Exception in worker VllmWorkerProcess while processing method load_model:"
        " RuntimeError: NCCL timeout, last heartbeat at 2025-03-06 10:05:08 and again at"
        " 2025-03-06 10:06:08.",
        "(TaskRunner pid=1234) ray.exceptions.RayTaskError(ValueError):"
        " ray::WorkerDict.actor_rollout_init_model() (pid=5678, ip=10.0.0.1,"
        " actor_id=3f1a0e0bd5a1c1e4f5c2a31e01000000,"
        " repr=<verl.single_controller.ray.base.WorkerDict object at 0x7f1c2c1b2e90>)",
    ],
    ids=["time-in-message", "two-times-in-message", "ray-pid-in-message"],
)
def test_a_record_whose_message_quotes_times_or_pids_is_not_cut(line: str) -> None:
    """A second review's cases: one record whose message quotes a time or Ray's own
    ``(pid=..., ip=...)`` is not records run together; the message is read whole."""
    (found,) = scan_text(line + "\n")
    assert found.facts.message.endswith(line[-30:])


def test_a_cited_error_that_opens_with_code_of_its_own() -> None:
    """A second review's cases: a cited message that starts with, or holds, code in
    backticks (``--trust-remote-code``, ``len(images)``) ends at the citation's own quote."""
    for line, message in (
        (
            "I get `ValueError: `len(images)` is less than the number of <image> tokens.` when",
            "`len(images)` is less than the number of <image> tokens.",
        ),
        (
            "It exits with `ValueError: Please pass `--trust-remote-code` to load it.` after",
            "Please pass `--trust-remote-code` to load it.",
        ),
    ):
        hit = exception_in(line)
        assert hit is not None and hit[2] == message


def test_a_message_line_starting_with_a_short_dotted_name_stays_in_the_message() -> None:
    """A second review's case: ``torch.cuda - not available`` under ``ValueError:`` is more
    message, not a logger's record (a logger's name first needs three parts)."""
    text = (
        "Traceback (most recent call last):\n"
        '  File "x.py", line 3, in <module>\n'
        "    check()\n"
        "ValueError: Missing modules:\n"
        "torch.cuda - not available\n"
        "flash_attn.ops - not installed\n"
    )
    assert only(text).message.splitlines()[1:] == [
        "torch.cuda - not available",
        "flash_attn.ops - not installed",
    ]


# -- held-back misses of the eleventh to thirteenth batches (read after three reports) -------


def test_a_message_whose_line_breaks_a_page_dropped_fits_its_template() -> None:
    """Held-back 839: SGLang's three-line prefill message with its line breaks gone
    (``...batch size.Try to allocate ...``), as a rendered page copies it."""
    glued = (
        "RuntimeError: Prefill out of memory. Try to lower your batch size.Try to allocate"
        " 1444 tokens.Avaliable tokens:5120self.token to kv pool allocator.available size()=5120"
    )
    (found,) = explain_text(glued + "\n")
    assert found.matches[0].entry.id == "sglang.prefill-out-of-memory"
    spaced = glued.replace("size.Try", "size. Try").replace("tokens.Ava", "tokens. Ava")
    assert explain_text(spaced + "\n")[0].matches[0].entry.id == "sglang.prefill-out-of-memory"
    # the words must still be the template's, in its order
    assert not explain_text(glued.replace("Try to allocate", "Allocating") + "\n")[0].matches


def test_prose_after_two_spaces_is_not_the_message() -> None:
    """Held-back 860: a question in Chinese after the message and two spaces."""
    line = "训练方式选择full的话，提示ValueError: Adapter is only valid for the LoRA method.  请问该怎么处理呢？"
    (found,) = explain_text(line + "\n")
    assert [m.entry.id for m in found.matches] == ["llamafactory.adapter-only-for-lora"]


def test_a_message_written_as_a_triple_quoted_string_starts_with_its_line_break() -> None:
    """Held-back 862: bitsandbytes' ``RuntimeError('''\\n        CUDA Setup failed ...''')``
    behind a rank's prefix, with a blank line inside."""
    text = (
        "[rank0]: RuntimeError:\n"
        "[rank0]:         CUDA Setup failed despite GPU being available. Please run the following"
        " command to get more information:\n\n"
        "[rank0]:         python -m bitsandbytes\n"
    )
    (found,) = explain_text(text)
    assert found.finding.facts.message.startswith("\n")
    assert [m.entry.id for m in found.matches] == ["llamafactory.bnb-cuda-setup-failed"]


def test_an_error_cited_in_double_quotes_ends_at_its_closing_quote() -> None:
    """Held-back 931: an issue title ``About “RuntimeError: 'weight' must be 2-D”``, whose
    curly quotes are read as straight ones."""
    assert only("About \u201cRuntimeError: 'weight' must be 2-D\u201d\n").message == (
        "'weight' must be 2-D"
    )
    assert only('It says "ValueError: bad "x" here" again\n').message == 'bad "x" here'
    # a bare ``Exception`` (``raise Exception(...)``) counts when prose cites it so, not in
    # prose's own words
    cited = only("I get `Exception: Capture cuda graph failed: x y z.` when starting it\n")
    assert (cited.type_name, cited.message) == ("Exception", "Capture cuda graph failed: x y z.")
    assert only("An Exception: not cited\n").type_name == ""
    # code's own strings are not citations
    for code in ('    print("Exception: ", e)\n', 'logger.error("Exception: %s", e)\n'):
        assert all(f.facts.type_name != "Exception" for f in scan_text(code)), code
    # no quote closes the citation: the message is kept whole
    unclosed = 'the error is "ValueError: Unknown split "test". Should be one of [\'train\'].\n'
    assert only(unclosed).message == "Unknown split \"test\". Should be one of ['train']."


def test_a_log_prefix_whose_opening_bracket_was_cut_is_still_a_prefix() -> None:
    """Held-back 964: an excerpt that starts inside SGLang's ``[2025-02-17 11:56:43]``."""
    text = (
        "2025-02-17 11:56:43] Initialization failed. warmup error: Traceback (most recent call"
        " last):\n"
        '  File "/x/python3.11/site-packages/sglang/srt/entrypoints/http_server.py", line 548,'
        " in _wait_and_warmup\n"
        '    assert res.status_code == 200, f"{res=}, {res.text=}"\n'
        "AssertionError: res=<Response [403]>, res.text='<html>forbidden</html>'\n"
    )
    (found,) = explain_text(text)
    assert found.matches[0].entry.id == "sglang.initialization-failed-warmup"
    assert found.matches[0].confidence in ("exact", "strong")
    # the cut line and the whole ones below it are one stream
    assert peel("2025-02-17 11:56:43 TP0] a")[0] == peel("[2025-02-17 11:56:44 TP0] b")[0]
    # not inside a line, nor a bracket in a logger's message after its own time
    assert only("ValueError: at 2025-02-17 11:56:43] x\n").message == "at 2025-02-17 11:56:43] x"
    assert peel("2025-02-17 11:56:43,123 - root - ERROR - Got: a] b")[1] == "Got: a] b"


def test_a_short_paste_reads_its_lines_logged_as_warnings() -> None:
    """Held-back 912: a shell session and gradio's banner above LlamaFactory's logged warning;
    no line has an error form, and the paste is longer than a few lines."""
    text = (
        "(llamafactory_env) student@vm:~$ llamafactory-cli webui\n"
        "Running on local URL:  http://0.0.0.0:7860\n"
        "Running on public URL: https://0123456789abcdef.gradio.live\n\n"
        "This share link expires in 72 hours.\n"
        "06/03/2024 09:08:12 - WARNING - llamafactory.webui.common - Cannot open"
        " data/dataset_info.json due to [Errno 2] No such file or directory:"
        " 'data/dataset_info.json'.\n"
    )
    found = [e for e in explain_text(text) if e.matches]
    assert [e.matches[0].entry.id for e in found] == ["llamafactory.cannot-open-dataset-info"]
    assert found[0].finding.line == 6
    # an INFO line is not read that way
    assert not any(e.matches for e in explain_text(text.replace("WARNING", "INFO")))
    # torch's C++ warning, and a warning quoted with ``> ``
    cpp = "[W1226 15:44:25.496586391 socket.cpp:752] [c10d] The client socket has failed\n"
    lines = [f.facts.message for f in scan_text(text.replace("This share", cpp + "This share"))]
    assert "[c10d] The client socket has failed" in lines
    quoted = text.replace("06/03/2024", "> 06/03/2024")
    assert [e.matches[0].entry.id for e in explain_text(quoted) if e.matches] == [
        "llamafactory.cannot-open-dataset-info"
    ]


class _Pieces:
    """A pipe: each read returns what one write put there."""

    def __init__(self, pieces: list[str]) -> None:
        self.pieces = [piece.encode() for piece in pieces]

    def read(self, size: int = -1) -> bytes:
        return self.pieces.pop(0) if self.pieces else b""


XINFERENCE_ERROR = (
    "2025-03-09 05:46:53,503 xinference.api.restful_api 1 ERROR    [address=0.0.0.0:46697,"
    " pid=578] '<class 'sglang.srt.configs.qwen2_5_vl_config.Qwen2_5_VLConfig'>' is already"
    " used by a Transformers model.\n"
)


def test_the_error_logged_above_a_cut_traceback_is_the_failure() -> None:
    """dev/1355: Xinference logs SGLang's error (``logger.exception``), then its traceback,
    which the paste cuts inside the first frame line: the logged words are the failure."""
    text = XINFERENCE_ERROR + "Traceback (most recent call last):\n" + '  File "/usr/local/lib/py'
    (found,) = explain_text("```\n" + text + "\n```\n")
    assert found.finding.line == 2
    assert found.finding.facts.message.startswith("'<class 'sglang.srt.configs.qwen2_5")
    assert found.matches[0].entry.id == "sglang.config-class-already-used-by-transformers"
    # the same through a stream read in small chunks (the CLI's first read is a few bytes)
    streamed = list(scan_stream(io.BytesIO(text.encode()), chunk_size=7))
    assert [f.facts.message for f in streamed] == [found.finding.facts.message]
    # a stream whose read ends right before the header, after a line read closely
    info = "[2025-01-01 10:00:01] INFO: worker 3 restarted\n"
    split = [XINFERENCE_ERROR, 'Traceback (most recent call last):\n  File "/x/y.py"']
    assert [f.facts.message for f in scan_stream(_Pieces(split))] == [found.finding.facts.message]
    error = "[2025-01-01 10:00:00] ERROR: request 7 hit an error, retrying.\n"
    apart = [error + info, 'Traceback (most recent call last):\n  File "/x/y.py", line']
    assert not any("request 7" in f.facts.message for f in scan_stream(_Pieces(apart)))
    # a traceback that reaches its own error line is that error, the logged line its lead
    whole = text + 'x.py", line 1, in <module>\nValueError: boom\n'
    assert [(f.facts.type_name, f.facts.message) for f in scan_text(whole)] == [
        ("ValueError", "boom")
    ]
    # only a record logged at error level or above, right above the header
    for other in (
        text.replace(" ERROR ", " WARNING "),
        text.replace(" ERROR ", " INFO "),
        text.replace("Traceback", "\nTraceback"),
    ):
        assert not any(f.facts.message.startswith("'<class") for f in scan_text(other))


def test_a_cut_stack_under_an_error_record_stays_a_cut_stack() -> None:
    """The logged words above a cut traceback are a finding of their own, and only where the
    catalog knows them: the cut stack keeps its report and its frames keep their say."""
    stack = (
        "Traceback (most recent call last):\n"
        '  File "/x/sglang/srt/entrypoints/http_server.py", line 500, in openai_v1_chat\n'
        "    return await raw_request.app.state.openai_serving_chat.handle_request(\n"
        '  File "/x/sglang/srt/entrypoints/openai/serving_base.py", line 40, in handle_request\n'
        "    adapted_request, processed_request = self._convert_to_internal_request(\n"
    )
    unknown = "[2025-06-01 10:00:00] ERROR: Training failed\n" + stack
    (cut,) = explain_text(unknown)
    assert cut.finding.kind == "traceback" and not cut.finding.facts.message
    known = (
        "[2025-06-01 10:00:00] ERROR: Cannot use chat template functions because"
        " tokenizer.chat_template is not set and no template argument was passed!\n" + stack
    )
    words, cut = explain_text(known)
    assert (words.finding.line, cut.finding.line) == (1, 2)
    assert words.matches[0].entry.id == "sglang.chat-template-not-set"
    assert cut.finding.facts.frames[-1].function == "handle_request"


def test_a_process_id_between_logger_and_level_is_prefix() -> None:
    """Xinference's ``%(name)s %(process)d %(levelname)s`` (dev/1355 and eight more)."""
    key, content = peel(XINFERENCE_ERROR.rstrip("\n"))
    assert content.startswith("'<class 'sglang.srt.configs")
    assert "ERROR" in key
    # a message's words are not taken for one
    assert peel("2025-03-09 05:46:53 the step 1 ERROR count")[1] == "the step 1 ERROR count"


class _Sniffed(io.BytesIO):
    """A file as ``errhints explain`` reads it: a few bytes first (to sniff the encoding),
    then all that is there."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.sniffed = False

    def read(self, size: int | None = -1) -> bytes:
        if not self.sniffed:
            self.sniffed = True
            return super().read(4)
        return super().read(size)


def test_a_kernel_assertion_line_explains_the_device_side_assert() -> None:
    """dev/1358: the paste keeps the CUDA kernel's ``Assertion ... failed.`` line and the
    scheduler's traceback cut above torch's error; the SGLang frames below it show the run,
    for a file read as a stream too (its first line is scanned knowing the whole chunk)."""
    text = (
        "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1500: indexSelectSmallIndex: block:"
        " [32,0,0], thread: [63,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n"
        "[2025-06-13 09:59:00] Scheduler hit an exception: Traceback (most recent call last):\n"
        '  File "/hy-tmp/sglang-0.4.7/python/sglang/srt/managers/scheduler.py", line 2506, in'
        " run_scheduler_process\n"
    )
    first = explain_text(text)[0]
    assert first.finding.line == 1
    assert (first.matches[0].entry.id, first.matches[0].confidence) == (
        "sglang.cuda-device-side-assert",
        "strong",
    )
    streamed = list(scan_stream(_Sniffed(text.encode())))
    assert streamed[0].line == 1 and "sglang" in streamed[0].context
    # alone, nothing shows whose run it is
    (alone,) = explain_text(text.splitlines()[0])
    assert {m.confidence for m in alone.matches} == {"weak"}


def test_a_cut_message_fits_with_its_code_spans_unquoted() -> None:
    """dev/1328: a note quotes the head of LlamaFactory's message, its backticks dropped as a
    rendered page drops them (``requires flash-linear-attention>=0.4.1``)."""
    head = "ImportError: Qwen3.5 packing-seq forwarding requires "
    for cut in ("`flash-linear-attention>=0.4.1`", "flash-linear-attention>=0.4.1"):
        (found,) = explain_text("```\n" + head + cut + "\n```\n")
        assert found.matches[0].entry.id == "llamafactory.qwen35-fa2-needs-fla"
    # a head in other words is not a cut message
    assert not explain_text(head + "flash-attn>=2.0")[0].matches
