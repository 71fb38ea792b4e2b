"""Map a file path printed in a traceback to a package-relative path and its package.

Text has no module names, only paths. A path is trusted to belong to a package only where
the layout says so: below ``site-packages``/``dist-packages``, in a source checkout
(``.../python/sglang/...``, ``.../src/llamafactory/...``), or where the names below the
package root are the package's real top-level names. A user's own directory that happens to
be called ``sglang`` (``/home/me/sglang/run.py``) is not SGLang.
"""

from __future__ import annotations

from functools import lru_cache

from .._packages import PROJECTS

__all__ = ["KNOWN_LAYOUTS", "split_path"]

#: Top-level names below each import package we explain (from ``_packages``).
KNOWN_LAYOUTS: dict[str, frozenset[str]] = {
    name: project.layout for project in PROJECTS for name in project.import_names
}

#: Directory names that mark a source checkout's package root: ``<repo>/python/sglang``.
_CHECKOUT_PARENTS = frozenset({"python", "src"})
_SITE_DIRS = frozenset({"site-packages", "dist-packages"})
_MAX_PATH = 4096


def _known_child(package: str, parts: list[str], index: int) -> bool:
    """Whether ``parts[index]`` (below the package root) is one of the package's real names."""
    names = KNOWN_LAYOUTS[package]
    child = parts[index]
    is_dir = index < len(parts) - 1
    if is_dir:
        return child + "/" in names
    if child in names:
        return True
    return any(
        n.endswith("*") and child.startswith(n[:-1]) and child.endswith(".py") for n in names
    )


def _is_identifier_like(name: str) -> bool:
    """A plausible importable top-level name (``torch``, ``six.py``, ``_cffi_backend.so``)."""
    stem = name.partition(".")[0]
    return bool(stem) and stem.isidentifier()


def _is_stdlib_dir(name: str) -> bool:
    """``python3.11`` (also ``python3.13t``), the directory holding the standard library."""
    if not name.startswith("python3."):
        return False
    minor = name[len("python3.") :].rstrip("t")
    return minor.isdigit() and len(minor) <= 3


def _frozen(filename: str) -> tuple[str | None, str | None]:
    """``<frozen importlib._bootstrap>`` -> (``importlib/_bootstrap.py``, ``importlib``)."""
    inner = filename[1:-1]
    if inner.startswith("frozen "):
        module = inner[len("frozen ") :].strip()
        if module and all(p.isidentifier() for p in module.split(".")):
            return module.replace(".", "/") + ".py", module.partition(".")[0]
    return None, None


@lru_cache(maxsize=4096)
def split_path(filename: str) -> tuple[str | None, str | None]:
    """Return (package-relative path, top-level package) for a traceback path, or (None, None).

    Cached because a log repeats the same few hundred paths many times.
    """
    if not filename or len(filename) > _MAX_PATH:
        return None, None
    if filename.startswith("<") and filename.endswith(">"):
        return _frozen(filename)
    parts = [p for p in filename.replace("\\", "/").split("/") if p and p != "."]
    if len(parts) < 2:
        return None, None
    # 1. Installed: the segment after the last site-packages/dist-packages is the package.
    for i in range(len(parts) - 2, -1, -1):
        if parts[i].lower() in _SITE_DIRS:
            rest = parts[i + 1 :]
            if rest and rest[0].endswith((".egg", ".egg-link")) and len(rest) > 1:
                rest = rest[1:]
            top = rest[0]
            if not _is_identifier_like(top) or top.endswith((".dist-info", ".egg-info")):
                return None, None
            package = top.partition(".")[0] if len(rest) == 1 else top
            return "/".join(rest), package
    # 2. The standard library: ``.../lib/python3.11/concurrent/futures/thread.py``.
    for i in range(len(parts) - 2, 0, -1):
        if parts[i - 1].lower() == "lib" and _is_stdlib_dir(parts[i]):
            rest = parts[i + 1 :]
            if _is_identifier_like(rest[0]):
                return "/".join(rest), rest[0].partition(".")[0]
            return None, None
    # 3. Not installed: a package we know, in a checkout layout or its real layout.
    for i in range(len(parts) - 2, -1, -1):
        package = parts[i]
        if package not in KNOWN_LAYOUTS:
            continue
        below = len(parts) - i - 1
        checkout = i > 0 and parts[i - 1] in _CHECKOUT_PARENTS
        if _known_child(package, parts, i + 1) or (checkout and below >= 2):
            return "/".join(parts[i:]), package
    return None, None
