"""Build hook: bundle the catalog's TOML entries into one JSON file inside the wheel.

Parsing ~200 small TOML files costs ~150 ms with the pure-Python ``tomllib``; one JSON
file parses in a few ms, so the first explanation in an installed errhints stays fast.
The TOML files ship too (they are the source, and what ``errhints show`` users may read).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CatalogBundleHook(BuildHookInterface):  # type: ignore[misc]
    PLUGIN_NAME = "catalog-bundle"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        root = Path(self.root) / "catalog"
        entries = {
            path.relative_to(root).as_posix(): tomllib.loads(path.read_text(encoding="utf-8"))
            for path in sorted(root.glob("*/*.toml"))
        }
        self._tmp = tempfile.mkdtemp(prefix="errhints-bundle-")
        bundle = Path(self._tmp) / "_bundle.json"
        bundle.write_text(json.dumps(entries, ensure_ascii=False, sort_keys=True), encoding="utf-8")
        build_data["force_include"][str(bundle)] = "errhints/catalog/_bundle.json"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        tmp = getattr(self, "_tmp", None)
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
