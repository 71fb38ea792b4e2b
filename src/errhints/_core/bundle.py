"""The wheel's prebuilt catalog index: built at wheel-build time, entries made on demand.

Validating ~800 entries and indexing them costs ~50 ms, and the first failure of a process
would pay it. So the wheel build (``hatch_build.py``) loads and validates the catalog once and
writes the matcher's lookup tables as entry ids (``_prebuilt.json``, beside ``_bundle.json``
which holds the entries' tables, with where each one's JSON lies in it). At run time the
lookup tables are read as they are; an entry's JSON is decoded, validated and built only when
a lookup hands it to the matcher: a failure touches a few. A user catalog
(``ERRHINTS_CATALOG_PATH``) is indexed the ordinary way, with every entry.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

from .catalog import Catalog, CatalogProblem, Entry, entry_from_mapping
from .match import Index, build_index

__all__ = ["FORMAT", "PREBUILT_NAME", "bundle_bytes", "load_prebuilt", "prebuild"]

#: The file beside ``_bundle.json`` that holds the prebuilt tables.
PREBUILT_NAME = "_prebuilt.json"
#: Bumped whenever the tables' layout changes; an older file is ignored.
FORMAT = 5

T = TypeVar("T")


def bundle_bytes(tables: Mapping[str, Any]) -> tuple[bytes, dict[str, list[int]]]:
    """``_bundle.json`` (a JSON object: catalog file -> its entry table) and the byte span of
    each table's JSON in it, so that one entry can be decoded without the others."""
    out = bytearray(b"{")
    spans: dict[str, list[int]] = {}
    for n, relative in enumerate(sorted(tables)):
        if n:
            out += b", "
        out += json.dumps(relative, ensure_ascii=False).encode() + b": "
        start = len(out)
        out += json.dumps(tables[relative], ensure_ascii=False, sort_keys=True).encode()
        spans[relative] = [start, len(out)]
    out += b"}"
    return bytes(out), spans


def prebuild(
    catalog: Catalog, sources: Mapping[str, str], spans: Mapping[str, list[int]]
) -> dict[str, Any]:
    """The lookup tables of ``catalog`` as JSON data: entry ids, sites as (id, position).

    ``sources`` maps each entry id to its key in ``_bundle.json``; ``spans`` each key to
    where its table lies in the file (``bundle_bytes``).
    """
    index = build_index(catalog)

    def ids(table: Mapping[str, list[Entry]]) -> dict[str, list[str]]:
        return {key: [e.key for e in entries] for key, entries in sorted(table.items())}

    return {
        "format": FORMAT,
        "sources": dict(sorted(sources.items())),
        "spans": {key: list(spans[key]) for key in sorted(spans)},
        "by_head": ids(index.by_head),
        "by_tail": ids(index.by_tail),
        "by_word": ids(index.by_word),
        "fuzzy_words": ids(index.fuzzy_words),
        "by_early_word": ids(index.by_early_word),
        "by_site": {
            f"{path}\t{function}": [[e.id, e.sites.index(site)] for e, site in pairs]
            for (path, function), pairs in sorted(index.by_site.items())
        },
        "by_context_path": {
            path: [[e.id, e.context.index(ctx)] for e, ctx in pairs]
            for path, pairs in sorted(index.by_context_path.items())
        },
        "log_needles": list(index.log_needles),
    }


class _Tables(Mapping[str, Any]):
    """The entry tables of ``_bundle.json``, each decoded from its span when first asked for."""

    def __init__(self, raw: bytes, spans: Mapping[str, list[int]]) -> None:
        self._raw = raw
        self._spans = spans

    def __getitem__(self, relative: str) -> Any:
        start, end = self._spans[relative]
        return json.loads(self._raw[start:end])

    def __iter__(self) -> Iterator[str]:
        return iter(self._spans)

    def __len__(self) -> int:
        return len(self._spans)


class _LazyCatalog(Catalog):
    """A catalog whose entries are validated and built on first access."""

    def __init__(self, tables: Mapping[str, Any], sources: Mapping[str, str], label: str) -> None:
        super().__init__(entries={}, problems=[])
        self._tables = tables
        self._sources = dict(sources)
        self._label = label
        self._complete = False

    def get(self, entry_id: str) -> Entry | None:
        entry = self.entries.get(entry_id)
        if entry is not None or self._complete:
            return entry
        relative = self._sources.get(entry_id)
        if relative is None:
            return None
        display = f"{self._label}/{relative}"
        slug = relative.rpartition("/")[2].removesuffix(".toml")
        try:
            entry = entry_from_mapping(self._tables[relative], source=display, slug=slug)
        except Exception as err:  # validated at build time: only a damaged install lands here
            self.problems.append(CatalogProblem(display, "(file)", f"invalid: {err}"))
            self._sources.pop(entry_id, None)
            return None
        self.entries[entry_id] = entry
        return entry

    def _all(self) -> dict[str, Entry]:
        if not self._complete:
            for entry_id in list(self._sources):
                self.get(entry_id)
            self._complete = True
        return self.entries

    def __iter__(self) -> Iterator[Entry]:
        return iter(list(self._all().values()))

    def __len__(self) -> int:
        return len(self._sources) if not self._complete else len(self.entries)


class _Postings(dict[Any, list[T]]):
    """A lookup table whose entry ids become entries on first access to their key."""

    def __init__(self, raw: Mapping[Any, list[Any]], make: Any) -> None:
        super().__init__()
        self._raw = raw
        self._make = make

    def get(self, key: Any, default: Any = None) -> Any:
        found = super().get(key)
        if found is None:
            ids = self._raw.get(key)
            if ids is None:
                return default
            found = [item for item in (self._make(i) for i in ids) if item is not None]
            self[key] = found
        return found

    def __contains__(self, key: object) -> bool:
        return key in self._raw

    def __len__(self) -> int:
        return len(self._raw)


def _read(root: Any, name: str) -> bytes | None:
    """The bytes of ``root/name`` (``root`` a plain path or a ``Traversable``), or ``None``."""
    if isinstance(root, str):
        path = os.path.join(root, name)
        if not os.path.isfile(path):
            return None
        with open(path, "rb") as handle:
            return handle.read()
    found = root.joinpath(name)
    return bytes(found.read_bytes()) if found.is_file() else None


def load_prebuilt(root: Any, label: str = "catalog") -> Index | None:
    """The prebuilt index of the packaged catalog under ``root`` (a plain path, a ``Path``
    or a ``Traversable``); ``None`` if there is none."""
    try:
        raw = _read(root, PREBUILT_NAME)
        bundle = _read(root, "_bundle.json")
        if raw is None or bundle is None:
            return None
        data = json.loads(raw)
        if data.get("format") != FORMAT:
            return None
        tables = _Tables(bundle, data["spans"])
    except (OSError, ValueError, KeyError):
        return None
    catalog = _LazyCatalog(tables, data["sources"], label)

    def entry(key: str) -> Entry | None:
        entry_id, _, carried = key.partition("#")
        found = catalog.get(entry_id)
        if found is None or not carried:
            return found
        return found.carried_view(int(carried)) if int(carried) < len(found.carried) else None

    def site(pair: list[Any]) -> tuple[Entry, Any] | None:
        found = catalog.get(pair[0])
        return (found, found.sites[pair[1]]) if found is not None else None

    def context(pair: list[Any]) -> tuple[Entry, Any] | None:
        found = catalog.get(pair[0])
        return (found, found.context[pair[1]]) if found is not None else None

    by_site = {tuple(key.split("\t", 1)): pairs for key, pairs in data["by_site"].items()}
    return Index(
        catalog=catalog,
        by_head=_Postings(data["by_head"], entry),
        by_tail=_Postings(data["by_tail"], entry),
        by_word=_Postings(data["by_word"], entry),
        by_site=_Postings(by_site, site),
        by_context_path=_Postings(data["by_context_path"], context),
        fuzzy_words=_Postings(data["fuzzy_words"], entry),
        by_early_word=_Postings(data["by_early_word"], entry),
        log_needles=tuple(data["log_needles"]),
    )
