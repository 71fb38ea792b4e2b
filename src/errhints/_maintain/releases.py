"""Released sources on disk: download a release's wheel once with pip, unpack, cache it.

This is the only part of errhints that touches the network, and only maintainer commands
(``errhints catalog verify``, ``errhints catalog index``) reach it.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path

from .._config import ENV_CACHE_DIR
from .._packages import project_named

__all__ = [
    "ENV_CACHE_DIR",
    "RELEASE_MARKER",
    "ReleaseKey",
    "ReleaseUnavailable",
    "cached_release",
    "check_release_name",
    "default_cache_dir",
    "fetch_release",
    "fetch_releases",
    "release_top",
    "top_level",
]

#: The Python version ``pip download`` asks wheels for (sglang publishes cp311 wheels).
PIP_PYTHON_VERSION = "3.11"
#: Written into a release directory that :func:`fetch_release` created (so errhints owns it).
RELEASE_MARKER = ".errhints-release.json"

ReleaseKey = tuple[str, str]

_PACKAGE_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
_VERSION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.+!_-]*$")


class ReleaseUnavailable(Exception):
    """A release's source could not be fetched; ``reason`` says why (pip's last error)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def default_cache_dir() -> Path | None:
    """Where releases are cached: ``ERRHINTS_CACHE_DIR``, XDG, ``~/.cache``; ``None`` if off."""
    value = os.environ.get(ENV_CACHE_DIR, "").strip()
    if value.lower() == "off":
        return None
    if value:
        return Path(value).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "errhints"
    return Path.home() / ".cache" / "errhints"


_session_dir: Path | None = None


def _session_cache_dir() -> Path:
    """A temporary cache for this process only (``ERRHINTS_CACHE_DIR=off``), removed at exit."""
    global _session_dir
    if _session_dir is None:
        _session_dir = Path(tempfile.mkdtemp(prefix="errhints-releases-"))
        atexit.register(shutil.rmtree, str(_session_dir), ignore_errors=True)
    return _session_dir


def top_level(package: str) -> str:
    """The import directory of a distribution (``llama-factory`` -> ``llama_factory``)."""
    return package.replace("-", "_").replace(".", "_").lower()


def release_top(package: str, root: Path) -> str | None:
    """The import directory of ``package`` present under ``root``, under any of its names."""
    project = project_named(package)
    for name in project.import_names if project is not None else (top_level(package),):
        if (root / name).is_dir():
            return name
    return None


def check_release_name(package: str, version: str) -> None:
    """Refuse names that could escape the cache directory or inject pip options."""
    if not _PACKAGE_RE.match(package):
        raise ValueError(f"not a package name: {package!r}")
    if not _VERSION_RE.match(version):
        raise ValueError(f"not a version: {version!r}")


def _release_path(package: str, version: str, cache_dir: Path) -> Path:
    """The directory a fetched release is unpacked into."""
    return cache_dir / "releases" / f"{package}-{version}"


def cached_release(package: str, version: str, cache_dir: Path | None = None) -> Path | None:
    """The cached source directory of a release, or ``None`` when it is not cached yet."""
    check_release_name(package, version)
    root = cache_dir if cache_dir is not None else default_cache_dir()
    if root is None:
        return None
    target = _release_path(package, version, root)
    return target if (target / top_level(package)).is_dir() else None


def _last_error_line(output: str) -> str:
    """pip's last ``ERROR:`` line (else its last line), the part worth showing a user."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR:")]
    if errors:
        return errors[-1]
    return lines[-1] if lines else "no output"


def _pip_download(package: str, version: str, dest: Path) -> Path:
    """Run ``pip download`` for one wheel of ``package==version`` into ``dest``."""
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--python-version",
        PIP_PYTHON_VERSION,
        "--disable-pip-version-check",
        "--no-input",
        f"{package}=={version}",
        "-d",
        str(dest),
    ]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, encoding="utf-8", errors="replace", check=False
        )
    except OSError as err:
        raise ReleaseUnavailable(f"cannot run pip for {package}=={version}: {err}") from None
    if proc.returncode != 0:
        line = _last_error_line(proc.stderr or proc.stdout or "")
        raise ReleaseUnavailable(f"pip download {package}=={version} failed: {line}")
    wheels = sorted(dest.glob("*.whl"))
    if not wheels:
        raise ReleaseUnavailable(f"pip download {package}=={version} produced no wheel")
    return wheels[0]


def _unpack(wheel: Path, top: str, dest: Path) -> int:
    """Extract the ``.py`` files of ``top/`` and the wheel's METADATA; return the file count."""
    count = 0
    try:
        with zipfile.ZipFile(wheel) as archive:
            for info in archive.infolist():
                parts = info.filename.split("/")
                if info.is_dir() or "\\" in info.filename:
                    continue
                if any(part in ("", ".", "..") for part in parts):
                    continue
                is_source = parts[0] == top and parts[-1].endswith(".py")
                is_metadata = (
                    len(parts) == 2 and parts[0].endswith(".dist-info") and parts[1] == "METADATA"
                )
                if not (is_source or is_metadata):
                    continue
                out = dest.joinpath(*parts)
                out.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(info) as src, open(out, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                count += is_source
    except (zipfile.BadZipFile, OSError) as err:
        raise ReleaseUnavailable(f"cannot unpack {wheel.name}: {err}") from None
    if not count:
        raise ReleaseUnavailable(f"{wheel.name} holds no '{top}/' source files")
    return count


def fetch_release(package: str, version: str, cache_dir: Path | None = None) -> Path:
    """Return a directory holding ``package``'s source as released; download it once.

    The wheel comes from ``pip download --no-deps --only-binary=:all:``; only the package's
    ``.py`` files and the wheel's METADATA are unpacked, into
    ``<cache_dir>/releases/<package>-<version>/``. A cached release never runs pip.
    ``cache_dir=None`` takes :func:`default_cache_dir` (a per-process temporary directory
    when that is off). Raises :class:`ReleaseUnavailable` when pip fails (offline, no such
    version) and ``ValueError`` for a malformed name.
    """
    check_release_name(package, version)
    root = cache_dir if cache_dir is not None else (default_cache_dir() or _session_cache_dir())
    target = _release_path(package, version, root)
    top = top_level(package)
    if (target / top).is_dir():
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{package}-{version}-", dir=target.parent))
    except OSError as err:
        raise ReleaseUnavailable(f"cannot write the cache {target.parent}: {err}") from None
    try:
        (work / "download").mkdir()
        wheel = _pip_download(package, version, work / "download")
        staged = work / "tree"
        files = _unpack(wheel, top, staged)
        marker = {"package": package, "version": version, "wheel": wheel.name, "files": files}
        (staged / RELEASE_MARKER).write_text(json.dumps(marker), encoding="utf-8")
        if target.exists() and not (target / top).is_dir():
            shutil.rmtree(target, ignore_errors=True)  # a broken earlier attempt
        try:
            os.rename(staged, target)
        except OSError:
            if not (target / top).is_dir():  # not merely a concurrent fetch that won the race
                raise
    except OSError as err:
        raise ReleaseUnavailable(f"cannot store {package}=={version} in {root}: {err}") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def fetch_releases(
    keys: Iterable[ReleaseKey],
    cache_dir: Path | None = None,
    *,
    progress: Callable[[str], None] | None = None,
) -> tuple[dict[ReleaseKey, Path | None], dict[ReleaseKey, str]]:
    """Fetch several releases; return their directories (``None`` if not fetched) and reasons."""
    paths: dict[ReleaseKey, Path | None] = {}
    reasons: dict[ReleaseKey, str] = {}
    for package, version in keys:
        project = project_named(package)
        # A project published under a former name (LlamaFactory as llmtuner before 0.7.1).
        names = project.distributions if project is not None else (package,)
        for name in names:
            if progress and cached_release(name, version, cache_dir) is None:
                progress(f"downloading {name}=={version} (once; cached afterwards)")
            try:
                paths[package, version] = fetch_release(name, version, cache_dir)
            except ReleaseUnavailable as err:
                paths[package, version] = None
                reasons.setdefault((package, version), err.reason)
            else:
                reasons.pop((package, version), None)
                break
    return paths, reasons
