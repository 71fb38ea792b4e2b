"""Messages other projects raise word for word: SGLang copied many of vLLM's.

When text shows nothing of the run it comes from, a message that vLLM raises with the same
literal text is no evidence of SGLang: its entry is only a ``weak`` match. The table
(``catalog/index/lookalikes.json``, built with the site index from vLLM's released sources by
:mod:`errhints._maintain.index.lookalikes`) holds a CRC-32 of each such message's skeleton:
its literal text with every placeholder folded to ``{}``.

Loaded on first use, data only, no network; any internal error reads as "not shared".
"""

from __future__ import annotations

import re
import zlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .template import Template

__all__ = ["python_says", "shared_by", "skeleton_key"]


def skeleton_key(template: Template) -> str:
    """The CRC-32 (8 hex digits) of a template's literal text with placeholders as ``{}``,
    white space folded: the same for two projects' f-strings that print the same words."""
    skeleton = "{}".join(" ".join(piece.split()) for piece in template.literals)
    return f"{zlib.crc32(skeleton.encode('utf-8')):08x}"


def _load(root: str) -> dict[str, list[str]]:
    """``{key: [project, ...]}`` from ``lookalikes.json``."""
    from . import siteindex

    table: dict[str, list[str]] = {}
    data = siteindex.read_json(root, "lookalikes.json")
    for project, record in sorted(data["projects"].items()):
        for key in record["keys"]:
            table.setdefault(str(key), []).append(str(project))
    return table


def shared_by(template: Template) -> tuple[str, ...]:
    """The other projects (``vllm``) whose released code raises this template's words."""
    try:
        from . import siteindex  # only a message matched on text alone asks

        table = siteindex.loaded("lookalikes", _load)
        return tuple(table.get(skeleton_key(template), ())) if table else ()
    except Exception:
        return ()


#: Skeletons of messages Python itself writes (``AttributeError``, ``TypeError``, ...), which
#: some SGLang and LlamaFactory code raises with the same words: on their own they show nothing
#: of who raised them.
_PYTHON_SKELETONS = frozenset(
    {
        "'{}' object has no attribute '{}'",
        "'{}' object has no attribute {}",
        "module '{}' has no attribute '{}'",
        "type object '{}' has no attribute '{}'",
        "'{}' object is not subscriptable",
        "'{}' object is not callable",
        "'{}' object is not iterable",
        "{}() got an unexpected keyword argument '{}'",
        "{}() got multiple values for argument '{}'",
        "{}() missing {} required positional argument: '{}'",
        "{}() takes {} positional arguments but {} were given",
        "No module named '{}'",
        "No module named {}",
        "invalid literal for int() with base 10: {}",
        "could not convert string to float: {}",
        "list index out of range",
    }
)
_SPACES = re.compile(r"\s+")


def python_says(template: Template) -> bool:
    """Whether Python's own error messages read like this template (placeholders aside)."""
    skeleton = "{}".join(_SPACES.sub(" ", piece) for piece in template.literals)
    return skeleton in _PYTHON_SKELETONS
