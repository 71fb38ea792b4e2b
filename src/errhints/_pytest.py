"""The pytest plugin: failing tests whose exception errhints recognises get the note.

Registered through the ``pytest11`` entry point. Turn it off with ``-p no:errhints``,
``--no-errhints`` or ``errhints = false`` in the ini file.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

_KEY = pytest.StashKey[dict[str, int]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("errhints", "explanations of SGLang / LlamaFactory failures")
    group.addoption(
        "--no-errhints",
        action="store_true",
        default=False,
        help="do not add errhints notes to failing tests",
    )
    group.addoption(
        "--errhints-verbosity",
        choices=("short", "full"),
        default=None,
        help="how much of the explanation to show (default: short)",
    )
    parser.addini("errhints", "add errhints notes to failing tests", type="bool", default=True)


def _enabled(config: pytest.Config) -> bool:
    return not config.getoption("no_errhints") and bool(config.getini("errhints"))


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_KEY] = {"failed": 0, "explained": 0}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    """Add the note before pytest renders the failure, so every ``--tb`` style shows it."""
    config = item.config
    excinfo = call.excinfo
    if (
        excinfo is not None
        and _enabled(config)
        and not isinstance(excinfo.value, pytest.skip.Exception)
    ):
        from ._notes import attach

        counts = config.stash[_KEY]
        counts["failed"] += 1
        outcome = attach(excinfo.value, config.getoption("errhints_verbosity"))
        if outcome.note is not None:
            counts["explained"] += 1
    yield


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    counts = config.stash.get(_KEY, None)
    if not counts or not counts["failed"] or not _enabled(config):
        return
    terminalreporter.write_line(
        f"errhints: explained {counts['explained']} of {counts['failed']} failures"
    )
