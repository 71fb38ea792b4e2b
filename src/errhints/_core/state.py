"""The shared, lazily built catalog index: loaded once, on first use, safely across threads.

Many threads may fail at once on first use; exactly one of them loads the catalog while the
others wait for it. A child forked while another thread held the lock gets a fresh lock.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .._config import ENV_CATALOG_PATH, ForkSafeLock

if TYPE_CHECKING:
    from .match import Index

__all__ = ["get_index", "reset"]

_lock = ForkSafeLock(reentrant=False)
_indexes: dict[tuple[str, ...], Index] = {}


def _key(extra: tuple[str, ...]) -> tuple[str, ...]:
    return (os.environ.get(ENV_CATALOG_PATH, ""), *extra)


def get_index(extra_dirs: tuple[str, ...] = ()) -> Index:
    """The index for the packaged catalog plus ``ERRHINTS_CATALOG_PATH`` and ``extra_dirs``."""
    key = _key(extra_dirs)
    index = _indexes.get(key)
    if index is not None:
        return index
    with _lock:
        index = _indexes.get(key)
        if index is None:
            from .catalog import load_catalog
            from .match import build_index

            index = build_index(load_catalog(extra_dirs))
            _indexes[key] = index
    return index


def reset() -> None:
    """Forget loaded catalogs (tests, or after editing a user catalog)."""
    with _lock:
        _indexes.clear()
