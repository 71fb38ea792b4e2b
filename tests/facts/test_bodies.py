"""Error messages embedded in other messages: JSON bodies, Python dict reprs, wrapped bodies."""

from __future__ import annotations

import json
import time

from errhints._facts.bodies import Embedded, body_field, embedded_errors, embedded_messages

CONTEXT = "The input (9000 tokens) is longer than the model's context length (8192 tokens)."
SGLANG_BODY = json.dumps(
    {"object": "error", "message": CONTEXT, "type": "BadRequestError", "param": None, "code": 400}
)


def test_sglang_error_body() -> None:
    """SGLang's ``{"object": "error", "message": ...}`` gives its message and type."""
    assert embedded_errors(SGLANG_BODY) == [Embedded(CONTEXT, "BadRequestError", True)]


def test_openai_client_repr_is_read_as_a_literal() -> None:
    """openai's ``Error code: 400 - {...}`` is a Python dict repr with mixed quotes."""
    text = (
        "Error code: 400 - {'object': 'error', 'message': \"This model's maximum context "
        "length is 4096 tokens. However, you requested 5000 tokens.\", 'type': "
        "'BadRequestError', 'param': None, 'code': 400}"
    )
    assert embedded_messages(text) == [
        "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens."
    ]
    assert embedded_errors(text)[0].type == "BadRequestError"


def test_llamafactory_wrapper() -> None:
    """``SGLang server error: 400, {...}`` from LlamaFactory carries the server's body."""
    assert embedded_messages(f"SGLang server error: 400, {SGLANG_BODY}") == [CONTEXT]


def test_fastapi_detail_forms() -> None:
    """``{"detail": "..."}`` and the validation list ``{"detail": [{"msg": ...}]}``."""
    assert embedded_messages('{"detail": "Model not found"}') == ["Model not found"]
    validation = json.dumps(
        {
            "detail": [
                {"loc": ["body", "text"], "msg": "Field required", "type": "missing"},
                {"loc": ["body", "n"], "msg": "Input should be a valid integer", "type": "x"},
            ]
        }
    )
    assert embedded_messages(validation) == ["Field required", "Input should be a valid integer"]


def test_error_key_forms() -> None:
    """OpenAI-style nested ``{"error": {"message": ...}}`` and a plain ``{"error": "..."}``."""
    nested = '{"error": {"message": "Invalid temperature", "type": "invalid_request_error"}}'
    assert embedded_errors(nested) == [Embedded("Invalid temperature", "invalid_request_error")]
    assert embedded_messages('status 500: {"error": "Internal Server Error"}') == [
        "Internal Server Error"
    ]


def test_nested_wrapping_is_unwrapped_once_more() -> None:
    """A body whose message itself embeds a body yields both messages, outer first."""
    inner = json.dumps({"detail": "sampling params invalid"})
    outer = json.dumps({"object": "error", "message": f"SGLang server error: 400, {inner}"})
    assert embedded_messages(outer) == [
        f"SGLang server error: 400, {inner}",
        "sampling params invalid",
    ]


def test_a_body_cut_off_by_the_log_still_gives_its_message() -> None:
    """A truncated body (no closing brace) falls back to the string field itself."""
    text = (
        'upstream said {"object":"error","message":"Invalid request: top_p must be in (0, 1]", "co'
    )
    assert embedded_messages(text) == ["Invalid request: top_p must be in (0, 1]"]


def test_non_error_bodies_are_marked() -> None:
    """A body without any error signal is returned but flagged, for callers that filter."""
    assert embedded_errors('{"level": "info", "message": "ready"}') == [
        Embedded("ready", "", False)
    ]
    assert embedded_errors('{"level": "error", "message": "boom"}')[0].is_error


def test_one_field_of_a_body_printed_over_several_lines() -> None:
    assert body_field('  "message": "Model x not found.",') == "Model x not found."
    assert body_field("    'detail': 'Not Found'") == "Not Found"
    assert body_field('"error": "bad \\"q\\" value"') == 'bad "q" value'
    assert body_field('  "message": "cut in the mid') == "cut in the mid"  # a log cut it
    for line in (
        '  "error": {',  # opens the object whose message is on a later line
        '  "messages": "x"',
        '  "message": "a" + suffix',
        '  "message": ""',
        '  "message": null,',
        "message: x",
    ):
        assert body_field(line) is None, line


def test_nothing_to_find() -> None:
    """Text without braces, with unrelated dicts, or with invalid bodies gives nothing."""
    assert embedded_messages("no body here") == []
    assert embedded_messages("{'loss': 1.2, 'epoch': 0.5}") == []
    assert embedded_messages('{"message": }') == []
    assert embedded_messages("{\"message\": __import__('os').system('true')}") == []


def test_bounded_work_on_a_huge_message() -> None:
    """A 10 MB message, with or without bodies and with hostile nesting, is read fast."""
    big = "x" * 10_000_000 + SGLANG_BODY + '"message"' * 100_000
    hostile = '{"message": [' * 200_000
    started = time.perf_counter()
    assert embedded_messages(big) == [CONTEXT]
    assert embedded_messages(hostile) == []
    assert embedded_messages("{" * 5_000_000) == []
    assert time.perf_counter() - started < 3.0
