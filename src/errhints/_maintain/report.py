"""What ``errhints catalog verify`` found: one result per fact, per entry, for the catalog.

Plain records with a text summary and a JSON form; no checking happens here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Category", "CheckResult", "EntryReport", "Status", "VerifyReport"]

Status = Literal["ok", "failed", "skipped"]
Category = Literal["in-package", "context", "other"]


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One fact checked against one release: a site, a context frame or a mention."""

    check: str  # "site", "context", "flag", "key", "env" or "external"
    subject: str
    release: str
    status: Status
    detail: str = ""
    line: int | None = None
    warning: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view."""
        data: dict[str, Any] = {
            "check": self.check,
            "subject": self.subject,
            "release": self.release,
            "status": self.status,
            "detail": self.detail,
        }
        if self.line is not None:
            data["line"] = self.line
        if self.warning:
            data["warning"] = self.warning
        return data


@dataclass(frozen=True, slots=True)
class EntryReport:
    """What verifying one entry found: its status and every check behind it."""

    id: str
    source: str
    category: Category
    status: Status
    checks: tuple[CheckResult, ...]
    reason: str = ""  # why the entry was skipped

    @property
    def failures(self) -> list[str]:
        """One line per failed check."""
        return [f"{c.check} {c.subject}: {c.detail}" for c in self.checks if c.status == "failed"]

    @property
    def warnings(self) -> list[str]:
        """One line per warning (a moved line, a site gone in a newer release)."""
        return [f"{c.check} {c.subject}: {c.warning}" for c in self.checks if c.warning]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view."""
        data: dict[str, Any] = {
            "id": self.id,
            "source": self.source,
            "category": self.category,
            "status": self.status,
            "checks": [c.to_dict() for c in self.checks],
        }
        if self.reason:
            data["reason"] = self.reason
        return data


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """The result of :func:`verify_catalog`: per-entry reports and the releases used."""

    entries: tuple[EntryReport, ...]
    releases: Mapping[str, str] = field(default_factory=dict)  # label -> path or why missing
    elapsed: float = 0.0

    def with_status(self, status: Status, category: Category | None = None) -> list[EntryReport]:
        """Entries with this status (and category, if given)."""
        return [
            e
            for e in self.entries
            if e.status == status and (category is None or e.category == category)
        ]

    @property
    def failed(self) -> list[EntryReport]:
        """Entries with at least one failed check."""
        return self.with_status("failed")

    @property
    def skipped(self) -> list[EntryReport]:
        """Entries nothing could be checked for."""
        return self.with_status("skipped")

    @property
    def in_package_checked(self) -> int:
        """In-package entries (those with sites) that were checked, not skipped."""
        return sum(e.category == "in-package" and e.status != "skipped" for e in self.entries)

    @property
    def in_package_ok(self) -> int:
        """In-package entries whose every check passed."""
        return len(self.with_status("ok", "in-package"))

    @property
    def context_checked(self) -> int:
        """Entries without sites (context or mentions only) that were checked."""
        return sum(e.category != "in-package" and e.status != "skipped" for e in self.entries)

    @property
    def percent(self) -> float | None:
        """Share of checked in-package entries that verified, or ``None`` if none was checked."""
        total = self.in_package_checked
        return 100.0 * self.in_package_ok / total if total else None

    def summary(self) -> str:
        """``verified N of M in-package entries (K context entries checked, S skipped): P%``."""
        pct = "n/a" if self.percent is None else f"{self.percent:.1f}%"
        return (
            f"verified {self.in_package_ok} of {self.in_package_checked} in-package entries "
            f"({self.context_checked} context entries checked, {len(self.skipped)} skipped): {pct}"
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view, the shape of ``errhints catalog verify --json``."""
        return {
            "summary": {
                "in_package_checked": self.in_package_checked,
                "in_package_ok": self.in_package_ok,
                "percent": self.percent,
                "context_checked": self.context_checked,
                "failed": len(self.failed),
                "skipped": len(self.skipped),
                "elapsed_seconds": round(self.elapsed, 3),
                "text": self.summary(),
            },
            "releases": dict(self.releases),
            "entries": [e.to_dict() for e in self.entries],
        }
