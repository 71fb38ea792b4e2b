"""Markers for the opt-in integration suites (see README.md beside this file)."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "released_cpu: raises real exceptions from the released sglang/llamafactory packages on "
        "CPU (needs the .venvs/released-cpu venv; skipped elsewhere)",
    )
