"""Stand-in ``sglang`` and ``llamafactory`` packages for tests.

The real projects need GPUs; these small modules sit at the real package-relative paths,
with the real class and function names, and raise the real messages of the releases the
catalog was verified against (sglang 0.5.23, llamafactory 0.9.5).
"""

from __future__ import annotations

import importlib
import json
import textwrap
from pathlib import Path

MODULES: dict[str, str] = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/disaggregation/__init__.py": "",
    "sglang/srt/disaggregation/encoder/__init__.py": "",
    "sglang/srt/disaggregation/encoder/server.py": """
        class MMError(Exception):
            pass


        class InternalError(MMError):
            pass


        class MMEncoder:
            def _validate_embedding_token_count(self, produced, expected_tokens):
                if produced != expected_tokens:
                    raise InternalError(
                        f"Encoder produced {produced} tokens, but "
                        f"preprocessor metadata expected {expected_tokens}"
                    )

            def slice_embedding(self, produced, token_counts):
                offset = sum(token_counts)
                if produced != offset:
                    raise InternalError(
                        f"Encoder produced {produced} tokens, but "
                        f"preprocessor metadata expected {offset}"
                    )
    """,
    "sglang/multimodal_gen/__init__.py": "",
    "sglang/multimodal_gen/runtime/__init__.py": "",
    "sglang/multimodal_gen/runtime/entrypoints/__init__.py": "",
    "sglang/multimodal_gen/runtime/entrypoints/diffusion_generator.py": """
        class DiffGenerator:
            def _send_lora_request(self, error_msg, failure_msg="Failed to set LoRA adapter"):
                raise RuntimeError(f"{failure_msg}: {error_msg}")

            def set_lora(self, nickname, path):
                return self._send_lora_request(f"adapter {path} not found", "Failed to set LoRA")


        def unrelated_failure():
            raise RuntimeError("Failed to set LoRA: something")
    """,
    "sglang/multimodal_gen/runtime/pipelines_core/__init__.py": "",
    "sglang/multimodal_gen/runtime/pipelines_core/stages/__init__.py": "",
    "sglang/multimodal_gen/runtime/pipelines_core/stages/model_specific_stages/__init__.py": "",
    "sglang/multimodal_gen/runtime/pipelines_core/stages/model_specific_stages/glm_image.py": """
        class GlmImageAR:
            def generate_prior_tokens_batch(self, prompts, data):
                if not isinstance(data, list) or len(data) != len(prompts):
                    raise RuntimeError(
                        "GLM-Image AR batch returned an unexpected response: "
                        f"expected {len(prompts)} outputs, got "
                        f"{len(data) if isinstance(data, list) else type(data).__name__}."
                    )
                return data
    """,
    "sglang/srt/managers/__init__.py": "",
    "sglang/srt/managers/scheduler.py": '''
        import logging
        import traceback

        logger = logging.getLogger(__name__)


        def run_scheduler_process(fail):
            """Mimics SGLang: catch, format, log the traceback as text, no exc_info."""
            try:
                fail()
            except Exception:
                traceback_str = traceback.format_exc()
                logger.error(f"Scheduler hit an exception: {traceback_str}")
                return traceback_str
    ''',
    "llamafactory/__init__.py": "",
    "llamafactory/chat/__init__.py": "",
    "llamafactory/chat/sglang_engine.py": """
        class _Response:
            def __init__(self, status_code, text):
                self.status_code = status_code
                self.text = text


        class SGLangEngine:
            def __init__(self, status_code=400, text="{}"):
                self.response = _Response(status_code, text)

            def _generate(self):
                def stream_request():
                    response = self.response
                    if response.status_code != 200:
                        raise RuntimeError(f"SGLang server error: {response.status_code}, {response.text}")
                    yield from ()

                return list(stream_request())
    """,
}

#: An HTTP error body as an SGLang server returns it for a too-long prompt.
CONTEXT_BODY = json.dumps(
    {
        "object": "error",
        "message": "The input (9000 tokens) is longer than the model's context length (8192 tokens).",
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    }
)


def write_standins(root: Path) -> Path:
    """Write the stand-in packages under ``root`` and return it (put it on ``sys.path``)."""
    for relative, source in MODULES.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return root


def server_error(status: int = 503, text: str = "overloaded") -> RuntimeError:
    """The LlamaFactory stand-in's ``SGLang server error``, raised and caught (stand-ins on
    ``sys.path``), with its traceback through the catalogued raise site."""
    engine = importlib.import_module("llamafactory.chat.sglang_engine")
    try:
        engine.SGLangEngine(status, text)._generate()
    except RuntimeError as exc:
        return exc
    raise AssertionError("the stand-in did not raise")
