"""The messages look-alike projects raise: vLLM releases' raise sites as skeleton keys.

SGLang copied many messages from vLLM word for word; a paste of one with nothing around it
is no evidence of SGLang. The build extracts every raise of the releases below with the
site index's extractor and keeps the :func:`~errhints._core.lookalikes.skeleton_key` of
those whose literal text is specific enough to match on its own (the only ones that could
give a confident match) and that SGLang or LlamaFactory raise too. Releases are fetched like
SGLang's (``pip download``, cached).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ..._core.lookalikes import skeleton_key
from ..._core.template import TemplateError, parse_template
from ..releases import fetch_release, top_level
from .extract import extract_release
from .merge import Site

__all__ = ["LOOKALIKE_RELEASES", "lookalike_keys"]

#: The look-alike releases read, spread over the time SGLang has existed.
LOOKALIKE_RELEASES: Mapping[str, tuple[str, ...]] = {
    "vllm": ("0.6.3", "0.8.5", "0.10.2", "0.33.0"),
}


def lookalike_keys(
    releases: Mapping[str, Sequence[str]] = LOOKALIKE_RELEASES,
    *,
    cache_dir: Path | None = None,
    sources: Mapping[tuple[str, str], Path] | None = None,
    within: Iterable[Site] | None = None,
) -> dict[str, dict[str, list[str]]]:
    """``{project: {"releases": [...], "keys": [sorted skeleton keys]}}``.

    ``within``: keep only the keys of messages these (SGLang and LlamaFactory) sites raise
    too, the only ones a catalog entry for them can share.
    """
    wanted: set[str] | None = None
    if within is not None:
        wanted = set()
        for known in within:
            try:
                wanted.add(skeleton_key(parse_template(known.template)))
            except TemplateError:
                continue
    table: dict[str, dict[str, list[str]]] = {}
    for project, versions in sorted(releases.items()):
        keys: set[str] = set()
        for version in versions:
            if sources is not None:
                root = sources[project, version]
            else:
                root = fetch_release(project, version, cache_dir)
            extracted = extract_release(project, version, root, top_level(project))
            for site in extracted.sites:
                if site.kind not in ("raise", "assert"):
                    continue
                try:
                    template = parse_template(site.template)
                except TemplateError:
                    continue
                if template.literal_rich:
                    keys.add(skeleton_key(template))
        if wanted is not None:
            keys &= wanted
        table[project] = {"releases": list(versions), "keys": sorted(keys)}
    return table
