"""A fresh venv with errhints installed from a wheel of this checkout, built once per run.

Only a real installation has the start-up hook (``errhints-startup.pth`` at the root of
site-packages), so the tests of ``ERRHINTS=1``, ``errhints run`` and spawned children run
there. The dependencies come read-only from this test run's environment, without network.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import venv
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_cache: dict[str, WheelEnv] = {}


@dataclass(frozen=True)
class WheelEnv:
    """The venv: its interpreter, its site-packages, the wheel it was installed from."""

    root: Path
    python: Path
    site_packages: Path
    wheel: Path

    @property
    def bin(self) -> Path:
        return self.python.parent

    def env(self, standins_dir: Path | None = None, **extra: str) -> dict[str, str]:
        """A clean environment: no ERRHINTS*, no PYTHON* from outside, stand-ins importable."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ERRHINTS", "PYTHON"))}
        env["PATH"] = os.pathsep.join([str(self.bin), "/usr/bin", "/bin"])
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("VIRTUAL_ENV", None)
        if standins_dir is not None:
            env["PYTHONPATH"] = str(standins_dir)
        env.update(extra)
        return env

    def run(
        self,
        code: str,
        cwd: Path,
        *,
        standins_dir: Path | None = None,
        env: dict[str, str] | None = None,
        args: tuple[str, ...] = (),
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        """Run a script with this venv's Python; returns the completed process."""
        script = cwd / "wheel_child.py"
        script.write_text(textwrap.dedent(code), encoding="utf-8")
        return subprocess.run(
            [str(self.python), str(script), *args],
            env=self.env(standins_dir, **(env or {})),
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=cwd,
        )


def build_wheel(out: Path) -> Path:
    """Build a wheel of this checkout into ``out`` (no build isolation: no download)."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    [wheel] = out.glob("errhints-*.whl")
    return wheel


def _dependency_dirs() -> list[str]:
    import importlib_resources
    import rapidfuzz
    import wrapt

    return sorted(
        {
            str(Path(m.__file__).resolve().parents[1])
            for m in (wrapt, rapidfuzz, importlib_resources)
        }
    )


def make_venv(root: Path, wheel: Path) -> WheelEnv:
    """A venv at ``root`` with ``wheel`` installed by pip (run from this environment)."""
    venv.create(root, with_pip=False, symlinks=True)
    python = root / "bin" / "python"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--no-compile",
            str(wheel),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    [site_packages] = (root / "lib").glob("python3.*/site-packages")
    # Named to sort after errhints-startup.pth: the hook itself must not need them.
    (site_packages / "zz_errhints_test_deps.pth").write_text(
        "\n".join(_dependency_dirs()) + "\n", encoding="utf-8"
    )
    return WheelEnv(root=root, python=python, site_packages=site_packages, wheel=wheel)


def wheel_env(tmp_path_factory: pytest.TempPathFactory) -> WheelEnv:
    """The shared venv of this test session (built on first use)."""
    env = _cache.get("env")
    if env is None:
        base = tmp_path_factory.mktemp("wheelenv")
        wheel = build_wheel(base / "dist")
        env = make_venv(base / "venv", wheel)
        _cache["env"] = env
    return env
