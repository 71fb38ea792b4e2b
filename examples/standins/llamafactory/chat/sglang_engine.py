"""A stand-in for llamafactory/chat/sglang_engine.py (0.9.5): same path, names and failure.

The real engine streams each generation from an SGLang server it started and reads the
``text`` field of every chunk. When SGLang refuses a request after the stream has begun (here:
a prompt longer than the context length), it still answers HTTP 200 and sends one chunk
``{"error": {...}}``; the engine does not look for it and fails with ``KeyError: 'text'``.
"""

from collections.abc import Iterator
from typing import Any


class SGLangEngine:
    def __init__(self, context_length: int = 8192) -> None:
        self.context_length = context_length

    def _generate(self, prompt_tokens: int) -> Iterator[dict[str, Any]]:
        """The chunks the SGLang server streams back for a prompt it refuses."""
        message = (
            f"The input ({prompt_tokens} tokens) is longer than the model's "
            f"context length ({self.context_length} tokens)."
        )
        yield {"error": {"message": message, "type": "BadRequestError", "code": 400}}

    async def chat(self, prompt_tokens: int) -> str:
        final_output: dict[str, Any] = {}
        for request_output in self._generate(prompt_tokens):
            final_output = request_output
        return str(final_output["text"])
