"""The real catalog against the real releases (downloaded once with pip, then cached)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from errhints._core.catalog import Entry, load_catalog
from errhints._core.template import parse_template
from errhints._maintain.releases import fetch_releases
from errhints._maintain.verify import VerifyReport, needed_releases, verify_catalog

pytestmark = pytest.mark.releases

PINNED = [("sglang", "0.5.23"), ("llamafactory", "0.9.5")]
MIN_PERCENT = 95.0


@pytest.fixture(scope="module")
def entries() -> list[Entry]:
    """The packaged catalog alone (no user directories)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("ERRHINTS_CATALOG_PATH", raising=False)
        return list(load_catalog())


@pytest.fixture(scope="module")
def releases(entries: list[Entry]) -> dict[tuple[str, str], Path | None]:
    """Every release the catalog names, fetched through pip into the errhints cache."""
    paths, reasons = fetch_releases(sorted(set(PINNED) | set(needed_releases(entries))))
    for (package, version), reason in reasons.items():
        pytest.skip(f"cannot fetch {package}=={version} (offline?): {reason}")
    return paths


@pytest.fixture(scope="module")
def report(entries: list[Entry], releases: dict[tuple[str, str], Path | None]) -> VerifyReport:
    """The catalog verified against its pinned releases."""
    return verify_catalog(entries, releases=releases)


def test_catalog_verifies_against_its_releases(report: VerifyReport) -> None:
    """At least 95% of the in-package entries verify against sglang 0.5.23 / llamafactory 0.9.5."""
    failures = "\n".join(f"  {e.id}: {'; '.join(e.failures)}" for e in report.failed)
    assert report.in_package_checked > 0, report.summary()
    assert report.percent is not None
    assert report.percent >= MIN_PERCENT, f"{report.summary()}\nfailing entries:\n{failures}"


def test_a_changed_template_no_longer_verifies(
    entries: list[Entry], releases: dict[tuple[str, str], Path | None], report: VerifyReport
) -> None:
    """Changing one character of each verified template's longest literal fails its sites:
    the site check reads the release's text, it does not just find the function."""
    verified = {e.id for e in report.entries if e.status == "ok"}
    mutated = []
    for entry in entries:
        literals = list(entry.template.literals)
        if entry.id not in verified or not entry.sites or not any(p.strip() for p in literals):
            continue
        i = max(range(len(literals)), key=lambda k: len(literals[k]))
        middle = len(literals[i]) // 2
        swap = "Q" if literals[i][middle] != "Q" else "R"
        literals[i] = literals[i][:middle] + swap + literals[i][middle + 1 :]
        escaped = [p.replace("{", "{{").replace("}", "}}") for p in literals]
        template = parse_template("{x}".join(escaped))
        mutated.append(dataclasses.replace(entry, template=template, mentions={}, context=()))
    assert mutated
    still_ok = [
        e.id for e in verify_catalog(mutated, releases=releases).entries if e.status == "ok"
    ]
    assert still_ok == []
