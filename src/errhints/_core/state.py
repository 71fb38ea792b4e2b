"""The shared, lazily built catalog index: loaded once, on first use, safely across threads.

Many threads may fail at once on first use; exactly one of them loads the catalog while the
others wait for it. A child forked while another thread held the lock gets a fresh lock.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from .._config import ENV_CATALOG_PATH, NOTE_PREFIX, ForkSafeLock

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .catalog import CatalogProblem
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
            index = _prebuilt() if key == ("",) else None
            if index is None:
                from .catalog import load_catalog
                from .match import build_index

                catalog = load_catalog(extra_dirs)
                index = build_index(catalog)
                _tell_problems(catalog.problems)
            _indexes[key] = index
    return index


def _prebuilt() -> Index | None:
    """The wheel's prebuilt index of the packaged catalog (``None`` in a source checkout)."""
    from .bundle import load_prebuilt
    from .catalog import builtin_catalog_dir, packaged_catalog_path

    where = packaged_catalog_path()
    return load_prebuilt(where if where is not None else builtin_catalog_dir())


_told: set[str] = set()


def _tell_problems(problems: Iterable[CatalogProblem]) -> None:
    """Say, once per process and on stderr, each problem of a user catalog (one line each).

    A user catalog that fails to load must not pass unnoticed, nor ever fail the program
    errhints runs in: this never raises. Packaged-catalog problems are for
    ``errhints catalog check``.
    """
    for problem in problems:
        if not problem.user:
            continue
        line = f"{NOTE_PREFIX} catalog problem, entry skipped: {problem}"
        if problem.field == "(directory)":
            line = f"{NOTE_PREFIX} catalog directory skipped: {problem.file}: {problem.problem}"
        if line in _told:
            continue
        _told.add(line)
        try:  # noqa: SIM105 - contextlib would cost import time
            sys.stderr.write(line[:1000].replace("\n", " ") + "\n")
        except Exception:
            pass


def reset() -> None:
    """Forget loaded catalogs (tests, or after editing a user catalog)."""
    with _lock:
        _indexes.clear()
