"""Write the shipped site index deterministically: sorted JSON shards, manifest, NOTICE.

Layout of ``catalog/index/`` (see :mod:`errhints._core.siteindex` for the reader):

``releases.json``
    the release list per project it was built from: ``[[dist, version], ...]`` oldest first.
``manifest.json``
    what a lookup reads first: format, shard counts, every shard key word.
``stats.json``
    site identities per project, and per release the sites by kind and what was only
    counted (bare raises and asserts, messages without literal text).
``sites/NNN.json``
    ``{key word: [site, ...]}`` for the key words whose CRC-32 falls in shard NNN; a site is
    ``[project, kind, exception, template, function, guard, [settings], [[first, last, line,
    path], ...]]`` with ``first``/``last`` indexes into the project's release list.
``functions/NN.json``
    ``{project: {function: [[[path, first, last], ...], [shard, ...]]}}``: path history and
    the shards holding the function's sites.
``names.json``
    the options each release accepts, ``{"projects": {project: {kind: {name: [first, last,
    ...]}}}, "renames": [...]}``: SGLang's server ``flags`` and ``fields``, LlamaFactory's
    config ``keys``, as runs of indexes into the release list, and the curated renames
    checked against them (see :mod:`errhints._maintain.index.options`).
``lookalikes.json``
    ``{"projects": {project: {"releases": [...], "keys": [...]}}}``: the skeleton keys of the
    messages look-alike projects (vLLM) raise too (:mod:`errhints._core.lookalikes`).
``NOTICE``
    the attribution the derived data requires.

The same inputs give the same bytes: keys sorted, no floats, no timestamps, ``\\n`` endings.
"""

from __future__ import annotations

import json
import os
import shutil
import textwrap
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..._core.siteindex import FORMAT, function_bucket, key_bucket, template_keywords
from .merge import Site

__all__ = ["FUNCTION_SHARDS", "SITE_SHARDS", "choose_keyword", "write_index"]

SITE_SHARDS = 512
FUNCTION_SHARDS = 64

_NOTICE = """\
errhints site index (catalog/index/)

This directory holds data derived from the released source code of the projects below:
for each place their code raises an exception, asserts or logs an error or warning with a
message, the index records the message's text as a template, where it is (file, function,
line, condition) and in which releases, and the names of the command-line options and
configuration keys each release accepts. The source files themselves are not included.

SGLang
  Copyright the SGLang team (sgl-project, https://github.com/sgl-project/sglang).
  Licensed under the Apache License, Version 2.0.
  Derived from the released wheels of the "sglang" distribution:
{sglang}

LlamaFactory
  Copyright the LlamaFactory team (hiyouga, https://github.com/hiyouga/LlamaFactory).
  Licensed under the Apache License, Version 2.0.
  Derived from the released wheels of the "llamafactory" distribution:
{llamafactory_new}
  and of its earlier name "llmtuner":
{llamafactory_old}

vLLM
  Copyright the vLLM team (https://github.com/vllm-project/vllm).
  Licensed under the Apache License, Version 2.0.
  lookalikes.json holds only checksums of the literal text of its messages, derived from
  the released sources of the "vllm" distribution:
{vllm}

You may obtain a copy of the Apache License, Version 2.0 at
    https://www.apache.org/licenses/LICENSE-2.0
Unless required by applicable law or agreed to in writing, the derived data is distributed
on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
The data was changed from its source: messages were reduced to templates and located.
"""


def _dump(data: object) -> str:
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)


def choose_keyword(template: str, frequency: Mapping[str, int]) -> str | None:
    """The key word of a template: its rarest whole literal word (ties: longest, then first)."""
    words = template_keywords(template)
    if not words:
        return None
    return min(words, key=lambda w: (frequency.get(w, 0), -len(w), w))


def _site_row(site: Site) -> list[Any]:
    return [
        site.project,
        site.kind,
        site.exception,
        site.template,
        site.function,
        site.guard,
        list(site.settings),
        [run.to_json() for run in site.runs],
    ]


def _versions(releases: Sequence[tuple[str, str]], dist: str | None = None) -> str:
    chosen = [v for d, v in releases if dist is None or d == dist]
    text = ", ".join(chosen) if chosen else "none"
    return textwrap.fill(text, width=92, initial_indent="    ", subsequent_indent="    ")


def write_index(
    out: Path,
    sites: Sequence[Site],
    releases: Mapping[str, Sequence[tuple[str, str]]],
    counts: Mapping[str, Mapping[str, Mapping[str, int]]],
    names: Mapping[str, Any] | None = None,
    lookalikes: Mapping[str, Any] | None = None,
    *,
    site_shards: int = SITE_SHARDS,
    function_shards: int = FUNCTION_SHARDS,
) -> dict[str, int]:
    """Replace ``out`` with the index of ``sites``; return ``{"sites": n, "unkeyed": n}``."""
    frequency: dict[str, int] = {}
    for site in sites:
        for word in set(template_keywords(site.template)):
            frequency[word] = frequency.get(word, 0) + 1
    shards: dict[int, dict[str, list[list[Any]]]] = {}
    functions: dict[int, dict[str, dict[str, list[Any]]]] = {}
    unkeyed = 0
    kept: dict[str, int] = {}
    for site in sites:
        key = choose_keyword(site.template, frequency)
        if key is None:
            unkeyed += 1
            continue
        kept[site.project] = kept.get(site.project, 0) + 1
        bucket = key_bucket(key, site_shards)
        shards.setdefault(bucket, {}).setdefault(key, []).append(_site_row(site))
        fbucket = function_bucket(site.function, function_shards)
        entry = functions.setdefault(fbucket, {}).setdefault(site.project, {})
        record = entry.setdefault(site.function, [[], []])
        for run in site.runs:
            record[0].append([run.path, run.first, run.last])
        if bucket not in record[1]:
            record[1].append(bucket)
    staging = out.with_name(out.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for bucket, groups in shards.items():
        for rows in groups.values():
            rows.sort(key=lambda r: (r[0], r[7][-1][3], r[4], r[3], r[1], r[7][0][0], r[2]))
        _write(staging / "sites" / f"{bucket:03d}.json", _dump(groups))
    for bucket, projects in functions.items():
        for by_function in projects.values():
            for record in by_function.values():
                record[0] = _path_history(record[0])
                record[1].sort()
        _write(staging / "functions" / f"{bucket:02d}.json", _dump(projects))
    keys = sorted({word for groups in shards.values() for word in groups})
    manifest = {
        "format": FORMAT,
        "site_shards": site_shards,
        "function_shards": function_shards,
        "keys": keys,
    }
    _write(staging / "manifest.json", _dump(manifest))
    stats = {"format": FORMAT, "sites": dict(sorted(kept.items())), "counts": counts}
    _write(staging / "stats.json", _dump(stats))
    release_lists = {p: [list(r) for r in rs] for p, rs in sorted(releases.items())}
    _write(staging / "releases.json", _dump({"format": FORMAT, "projects": release_lists}))
    lf = list(releases.get("llamafactory", ()))
    notice = _NOTICE.format(
        sglang=_versions(releases.get("sglang", ())),
        llamafactory_new=_versions(lf, "llamafactory"),
        llamafactory_old=_versions(lf, "llmtuner"),
        vllm=_versions(
            [
                ("vllm", v)
                for v in (lookalikes or {}).get("projects", {}).get("vllm", {}).get("releases", ())
            ]
        ),
    )
    _write(staging / "NOTICE", notice)
    table = {"format": FORMAT, "projects": {}, "renames": [], **(names or {})}
    _write(staging / "names.json", _dump(table))
    shared = {"format": FORMAT, "projects": {}, **(lookalikes or {})}
    _write(staging / "lookalikes.json", _dump(shared))
    if out.exists():
        shutil.rmtree(out)
    os.replace(staging, out)
    return {"sites": sum(kept.values()), "unkeyed": unkeyed}


def _path_history(spans: list[list[Any]]) -> list[list[Any]]:
    """Merge ``[path, first, last]`` spans of one function into sorted, joined ranges."""
    spans = sorted(spans, key=lambda s: (s[1], s[2], s[0]))
    merged: list[list[Any]] = []
    for path, first, last in spans:
        for item in merged:
            if item[0] == path and first <= item[2] + 1:
                item[2] = max(item[2], last)
                break
        else:
            merged.append([path, first, last])
    merged.sort(key=lambda s: (s[1], s[0]))
    return merged


def data_size(out: Path) -> tuple[int, int]:
    """``(raw bytes, zip-deflated bytes)`` of the files under ``out``."""
    raw = packed = 0
    for file in sorted(out.rglob("*")):
        if file.is_file():
            data = file.read_bytes()
            raw += len(data)
            packed += len(zlib.compress(data, 6)) + 30 + len(file.name) * 2  # zip entry overhead
    return raw, packed
