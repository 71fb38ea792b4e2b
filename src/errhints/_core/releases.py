"""Release numbers: order them as PEP 440 does and hold a first..last range of them.

Only what errhints needs of PEP 440: release segments, pre-releases (``a``/``b``/``rc``),
``.postN`` and ``.devN``, and a local ``+label`` that is ignored. No dependency on
``packaging``: this runs inside the user's process on the first failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["ReleaseRange", "parse_range", "version_key"]

_VERSION = re.compile(
    r"^v?(?P<release>\d+(?:\.\d+)*)"
    r"(?:[-_.]?(?P<pre>a|b|rc|alpha|beta|c)[-_.]?(?P<pre_n>\d*))?"
    r"(?:[-_.]?post[-_.]?(?P<post>\d*))?"
    r"(?:[-_.]?dev[-_.]?(?P<dev>\d*))?"
    r"(?:\+[a-z0-9.]+)?$",
    re.IGNORECASE,
)
_PRE = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2}

VersionKey = tuple[tuple[int, ...], int, int, int, int]


def version_key(version: str) -> VersionKey:
    """A sort key for ``version``; raises ``ValueError`` for text that is not a release number.

    ``0.5.2 < 0.5.10``, ``0.5.1rc1 < 0.5.1 < 0.5.1.post1``; trailing zeros do not count.
    """
    m = _VERSION.match(version.strip())
    if m is None:
        raise ValueError(f"not a release number: {version!r}")
    parts = [int(p) for p in m["release"].split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    pre = m["pre"]
    # (release, pre-rank, pre-number, post, dev): a final release sorts after its
    # pre-releases (rank 3), and a dev release before everything else of its number.
    pre_rank = _PRE[pre.lower()] if pre else 3
    pre_n = int(m["pre_n"] or 0) if pre else 0
    post = int(m["post"] or 0) + 1 if m["post"] is not None else 0
    dev = int(m["dev"] or 0) if m["dev"] is not None else 1 << 30
    if m["dev"] is not None and not pre and m["post"] is None:
        pre_rank = -1
    return (tuple(parts), pre_rank, pre_n, post, dev)


@dataclass(frozen=True, slots=True)
class ReleaseRange:
    """The releases from ``first`` to ``last``, both included (equal for one release)."""

    first: str
    last: str

    def __post_init__(self) -> None:
        if version_key(self.first) > version_key(self.last):
            raise ValueError(f"first release {self.first!r} is newer than last {self.last!r}")

    def __contains__(self, version: object) -> bool:
        if not isinstance(version, str):
            return False
        try:
            key = version_key(version)
        except ValueError:
            return False
        return version_key(self.first) <= key <= version_key(self.last)

    def __str__(self) -> str:
        return self.last if self.first == self.last else f"{self.first} to {self.last}"

    def select(self, versions: list[str]) -> list[str]:
        """The versions of ``versions`` inside this range, oldest first."""
        return sorted((v for v in versions if v in self), key=version_key)

    def to_dict(self) -> dict[str, str]:
        """``{"first": ..., "last": ...}``, the catalog's table form."""
        return {"first": self.first, "last": self.last}


def parse_range(value: object) -> ReleaseRange:
    """A catalog ``release`` value: ``"0.5.23"`` or ``{first = "0.4.6", last = "0.5.23"}``.

    Raises ``ValueError`` saying what is wrong.
    """
    if isinstance(value, str) and value.strip():
        version_key(value)
        return ReleaseRange(value.strip(), value.strip())
    if isinstance(value, dict):
        unknown = set(value) - {"first", "last"}
        if unknown:
            raise ValueError(f"unknown keys {sorted(unknown)}; use 'first' and 'last'")
        first, last = value.get("first"), value.get("last")
        if not (isinstance(first, str) and isinstance(last, str) and first and last):
            raise ValueError("needs 'first' and 'last' release numbers")
        version_key(first)
        version_key(last)
        return ReleaseRange(first.strip(), last.strip())
    raise ValueError('must be a release ("0.5.23") or a table {first = "...", last = "..."}')
