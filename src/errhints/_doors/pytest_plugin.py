"""The pytest door: failing tests whose exception errhints recognises get the note.

Registered through the ``pytest11`` entry point. Turn it off with ``-p no:errhints``,
``--no-errhints`` or ``errhints = false`` in the ini file; ``uninstall()`` turns it off
for the rest of the session.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from .._config import VERBOSITIES

__all__ = ["NAME", "install", "state", "uninstall"]

#: The door's one-word name, as ``errhints doctor`` shows it.
NAME = "pytest"
_ENABLED = pytest.StashKey[bool]()
_switch = {"on": True, "configured": False}


def install() -> None:
    """Note failing tests again (the default once pytest loaded the plugin)."""
    _switch["on"] = True


def uninstall() -> None:
    """Stop noting failing tests in this session."""
    _switch["on"] = False


def state() -> str:
    """``"on"`` inside a pytest session where the plugin is enabled, else ``"off"``."""
    return "on" if _switch["on"] and _switch["configured"] else "off"


#: Pytest's own outcomes (skip, xfail, fail, exit) are not failures to explain.
_OUTCOMES = (
    pytest.skip.Exception,
    pytest.xfail.Exception,
    pytest.fail.Exception,
    pytest.exit.Exception,
)


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
        choices=VERBOSITIES,
        default=None,
        help="how much of the explanation to show (default: short)",
    )
    parser.addini("errhints", "add errhints notes to failing tests", type="bool", default=True)


def _enabled(config: pytest.Config) -> bool:
    return not config.getoption("no_errhints") and bool(config.getini("errhints"))


class _Summary:
    """Counts failed reports, and the explained ones, for the end-of-run line."""

    def __init__(self) -> None:
        self.failed = 0
        self.explained = 0
        self.identified = 0  # no entry explains them; the site index says where they are raised

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed:
            self.failed += 1
            kind = getattr(report, "errhints_explained", False)
            if kind == "identified":
                self.identified += 1
            elif kind:
                self.explained += 1

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not (self.explained or self.identified):  # silent when errhints has nothing to say
            return
        line = f"errhints: explained {self.explained} of {self.failed} failures"
        if self.identified:
            line += f"; identified where {self.identified} more are raised (not explained)"
        terminalreporter.write_line(line)


def pytest_configure(config: pytest.Config) -> None:
    enabled = _enabled(config)
    config.stash[_ENABLED] = enabled
    _switch["configured"] = enabled
    if enabled:
        config.pluginmanager.register(_Summary(), "errhints-summary")


def _headline(exc: BaseException) -> str | None:
    """The first line of the note for ``exc`` (``--tb=line``), or ``None``."""
    from .._config import PASS_THROUGH, guard
    from .._core.notes import explain_exception, has_note, note_text

    with guard("the pytest door"):
        if isinstance(exc, PASS_THROUGH) or has_note(exc):
            return None
        matches = explain_exception(exc)
        if matches:
            return note_text(matches, "short").splitlines()[0]
    return None


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Add the note before pytest renders the failure, so every ``--tb`` style shows it.

    An exception that refuses the note gets it as an ``errhints`` section of its report.

    The report is marked when its exception carries a note; failures are counted from the
    final reports (``pytest_runtest_logreport``), so xfail and skip never count, and reports
    coming back from xdist workers are counted where the summary is printed.
    """
    excinfo = call.excinfo
    explained: bool | str = False
    unattached: str | None = None
    if excinfo is not None and _switch["on"] and item.config.stash.get(_ENABLED, False):
        exc = excinfo.value
        if not isinstance(exc, _OUTCOMES):
            from .._core.notes import add_note, attach

            verbosity = item.config.getoption("errhints_verbosity")
            if getattr(item.config.option, "tbstyle", None) == "line":
                # pytest prints every line of the message, notes included, under --tb=line:
                # the note's headline alone keeps it to one extra line.
                headline = _headline(exc)
                if headline is not None:
                    explained = True
                    try:
                        add_note(exc, headline)
                    except Exception:
                        unattached = headline
            else:
                outcome = attach(exc, verbosity)
                explained = outcome.note is not None or outcome.attached
                if explained and outcome.identified:
                    explained = "identified"
                if outcome.note is not None and not outcome.attached:
                    unattached = outcome.note  # add_note refused (a frozen exception, say)
    report = yield
    if explained:
        report.errhints_explained = explained  # type: ignore[attr-defined]
    if unattached is not None:
        addsection = getattr(report.longrepr, "addsection", None)
        if addsection is not None:
            addsection("errhints", unattached)
        else:
            report.sections.append(("errhints", unattached))
    return report
