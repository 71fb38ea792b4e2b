"""Build hook: bundle the catalog's TOML entries into one JSON file inside the wheel.

Parsing ~200 small TOML files costs ~150 ms with the pure-Python ``tomllib``; one JSON
file parses in a few ms, so the first explanation in an installed errhints stays fast.
The TOML files ship too (they are the source, and what ``errhints show`` users may read).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the build requirements bring the backport
    import tomli as tomllib


class CatalogBundleHook(BuildHookInterface):  # type: ignore[misc]
    PLUGIN_NAME = "catalog-bundle"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        if sys.version_info < (3, 10):  # noqa: UP036 - pip may build metadata on an older Python
            # An unsupported Python: pip (which may build the wheel to read its metadata)
            # must get as far as Requires-Python and say so, not fail in errhints' code.
            return
        root = Path(self.root) / "catalog"
        entries = {
            path.relative_to(root).as_posix(): tomllib.loads(path.read_text(encoding="utf-8"))
            for path in sorted(root.glob("*/*.toml"))
        }
        self._tmp = tempfile.mkdtemp(prefix="errhints-bundle-")
        data, prebuilt_tables = self._build(entries)
        bundle = Path(self._tmp) / "_bundle.json"
        bundle.write_bytes(data)
        build_data["force_include"][str(bundle)] = "errhints/catalog/_bundle.json"
        prebuilt = Path(self._tmp) / "_prebuilt.json"
        prebuilt.write_text(json.dumps(prebuilt_tables, sort_keys=True), encoding="utf-8")
        build_data["force_include"][str(prebuilt)] = "errhints/catalog/_prebuilt.json"

    def _build(self, entries: dict[str, Any]) -> tuple[bytes, Any]:
        """The bundle's bytes and the matcher's lookup tables, built now so that a failure need
        not build them."""
        sys.path.insert(0, str(Path(self.root) / "src"))
        try:
            from errhints._core.bundle import bundle_bytes, prebuild
            from errhints._core.catalog import load_catalog

            saved = os.environ.pop("ERRHINTS_CATALOG_PATH", None)  # the packaged catalog alone
            try:
                catalog = load_catalog(builtin=True)
            finally:
                if saved is not None:
                    os.environ["ERRHINTS_CATALOG_PATH"] = saved
            if catalog.problems:
                problems = "\n".join(str(p) for p in catalog.problems)
                raise RuntimeError(f"the catalog does not load cleanly:\n{problems}")
            sources = {
                entry.id: Path(entry.source).relative_to("catalog").as_posix() for entry in catalog
            }
            data, spans = bundle_bytes(entries)
            return data, prebuild(catalog, sources, spans)
        finally:
            sys.path.remove(str(Path(self.root) / "src"))
            for name in [m for m in sys.modules if m == "errhints" or m.startswith("errhints.")]:
                del sys.modules[name]

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        tmp = getattr(self, "_tmp", None)
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
