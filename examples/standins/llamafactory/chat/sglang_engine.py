"""A stand-in for llamafactory/chat/sglang_engine.py (0.9.5): same path, names and message.

The real engine posts to an SGLang server it started; this one answers as such a server does
when the prompt is longer than the model's context window.
"""

import json


class SGLangEngine:
    def __init__(self, context_length: int = 8192) -> None:
        self.context_length = context_length

    def _post(self, prompt_tokens: int) -> tuple[int, str]:
        body = {
            "object": "error",
            "message": (
                f"The input ({prompt_tokens} tokens) is longer than the model's "
                f"context length ({self.context_length} tokens)."
            ),
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        }
        return 400, json.dumps(body)

    def _generate(self, prompt_tokens: int) -> list[str]:
        def stream_request() -> list[str]:
            status_code, text = self._post(prompt_tokens)
            if status_code != 200:
                raise RuntimeError(f"SGLang server error: {status_code}, {text}")
            return []

        return stream_request()
