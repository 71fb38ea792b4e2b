"""An index built from the fake releases of ``tests/data/releases``, shared by the readers' tests.

``sglang`` 0.1.0 and 0.2.0 (0.2.0 replaced ``--disable-radix`` by ``--radix-cache``), and
LlamaFactory as ``llmtuner`` 0.1.0 and ``llamafactory`` 0.2.0.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from errhints._core import siteindex
from errhints._maintain.index import build_index

RELEASES = Path(__file__).resolve().parents[1] / "data" / "releases"
RELEASE_LIST = {
    "sglang": [("sglang", "0.1.0"), ("sglang", "0.2.0")],
    "llamafactory": [("llmtuner", "0.1.0"), ("llamafactory", "0.2.0")],
}
SOURCES = {key: RELEASES / f"{key[0]}-{key[1]}" for keys in RELEASE_LIST.values() for key in keys}


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The index directory of the fake releases (built once per test session)."""
    out = tmp_path_factory.mktemp("fake-releases") / "index"
    build_index(
        RELEASE_LIST, out, sources=SOURCES, renames=RELEASES / "renames.toml", lookalikes={}
    )
    return out


@pytest.fixture
def index_dir(built: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``built``, made the index errhints reads for the test's duration."""
    monkeypatch.setenv(siteindex.ENV_SITEINDEX_DIR, str(built))
    siteindex.reset()
    yield built
    siteindex.reset()
