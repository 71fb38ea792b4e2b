"""Messages other projects raise word for word: SGLang copied many of vLLM's.

When text shows nothing of the run it comes from, a message that vLLM raises with the same
literal text is no evidence of SGLang: its entry is only a ``weak`` match. The table
(``catalog/index/lookalikes.json``, built with the site index from vLLM's released sources by
:mod:`errhints._maintain.index.lookalikes`) holds a CRC-32 of each such message's skeleton:
its literal text with every placeholder folded to ``{}``.

Loaded on first use, data only, no network; any internal error reads as "not shared".
"""

from __future__ import annotations

import json
import os
import threading
import zlib

from . import siteindex
from .template import Template

__all__ = ["reset", "shared_by", "skeleton_key"]

_lock = threading.Lock()
_state: dict[str, dict[str, list[str]] | None] = {}


def skeleton_key(template: Template) -> str:
    """The CRC-32 (8 hex digits) of a template's literal text with placeholders as ``{}``,
    white space folded: the same for two projects' f-strings that print the same words."""
    skeleton = "{}".join(" ".join(piece.split()) for piece in template.literals)
    return f"{zlib.crc32(skeleton.encode('utf-8')):08x}"


def _table() -> dict[str, list[str]] | None:
    """``{key: [project, ...]}`` of the shipped table (``None`` when there is none)."""
    root = siteindex._data_dir()
    if root in _state:
        return _state[root]
    with _lock:
        if root not in _state:
            try:
                with open(os.path.join(root, "lookalikes.json"), encoding="utf-8") as handle:
                    data = json.load(handle)
                if data.get("format") != siteindex.FORMAT:
                    raise ValueError("lookalikes format differs")
                table: dict[str, list[str]] = {}
                for project, record in sorted(data["projects"].items()):
                    for key in record["keys"]:
                        table.setdefault(str(key), []).append(str(project))
                _state[root] = table
            except Exception:
                _state[root] = None
        return _state[root]


def shared_by(template: Template) -> tuple[str, ...]:
    """The other projects (``vllm``) whose released code raises this template's words."""
    try:
        table = _table()
        return tuple(table.get(skeleton_key(template), ())) if table else ()
    except Exception:
        return ()


def reset() -> None:
    """Forget the loaded table (tests, or after rebuilding the index)."""
    with _lock:
        _state.clear()
