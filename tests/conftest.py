"""Shared fixtures: stand-in packages on sys.path and a runner for real subprocesses."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from standins import write_standins

SRC = Path(__file__).resolve().parents[1] / "src"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "internal_errors: the test provokes errhints' own failures on purpose (not a defect)",
    )


@pytest.fixture(autouse=True)
def no_internal_errors(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail any test during which errhints swallowed one of its own failures.

    errhints hides its internal errors from users (they are reported only with
    ``ERRHINTS_DEBUG=1``); under test they are defects, unless a test provokes them on
    purpose and says so with ``@pytest.mark.internal_errors``.
    """
    from errhints._config import internal_errors

    internal_errors.clear()
    yield
    if request.node.get_closest_marker("internal_errors") is None and internal_errors:
        seen = "; ".join(f"{where}: {error!r}" for where, error in internal_errors)
        internal_errors.clear()
        pytest.fail(f"errhints reported internal errors: {seen}", pytrace=False)


@pytest.fixture(scope="session")
def standins_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding the stand-in ``sglang`` and ``llamafactory`` packages."""
    return write_standins(tmp_path_factory.mktemp("standins"))


@pytest.fixture
def standins(standins_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The stand-ins importable in this process; their modules are forgotten afterwards."""
    monkeypatch.syspath_prepend(str(standins_dir))
    yield standins_dir
    for name in list(sys.modules):
        if name.partition(".")[0] in ("sglang", "llamafactory"):
            del sys.modules[name]


def child_env(standins_dir: Path, **extra: str) -> dict[str, str]:
    """Environment for a child Python that sees errhints and the stand-ins."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ERRHINTS", "PYTHON"))}
    paths = [str(standins_dir)]
    import errhints

    errhints_root = str(Path(errhints.__file__).resolve().parents[1])
    paths.append(errhints_root)
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["ERRHINTS_DEBUG"] = "1"  # a child's internal errors reach its stderr (see run_py)
    env.update(extra)
    return env


#: What errhints writes on stderr, in debug mode, when one of its own steps failed.
INTERNAL_ERROR = "errhints: internal error in "


RunPy = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run_py(standins_dir: Path, tmp_path: Path) -> RunPy:
    """Run a Python script in a real child interpreter; returns the completed process."""

    def run(
        code: str,
        *,
        env: dict[str, str] | None = None,
        timeout: float = 60,
        args: tuple[str, ...] = (),
        allow_internal_errors: bool = False,
    ) -> subprocess.CompletedProcess[str]:
        script = tmp_path / "child_script.py"
        script.write_text(textwrap.dedent(code), encoding="utf-8")
        proc = subprocess.run(
            [sys.executable, str(script), *args],
            env=child_env(standins_dir, **(env or {})),
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=tmp_path,
        )
        if INTERNAL_ERROR in proc.stderr and not allow_internal_errors:
            pytest.fail(f"errhints failed inside the child:\n{proc.stderr[-3000:]}", pytrace=False)
        return proc

    return run


# -- an index built from the fake releases of tests/data/releases ------------------------------
# sglang 0.1.0 and 0.2.0 (0.2.0 replaced --disable-radix by --radix-cache), and LlamaFactory
# as llmtuner 0.1.0 and llamafactory 0.2.0; shared by the site index and names tests.

FAKE_RELEASES = Path(__file__).resolve().parent / "data" / "releases"
FAKE_RELEASE_LIST = {
    "sglang": [("sglang", "0.1.0"), ("sglang", "0.2.0")],
    "llamafactory": [("llmtuner", "0.1.0"), ("llamafactory", "0.2.0")],
}
FAKE_SOURCES = {
    key: FAKE_RELEASES / f"{key[0]}-{key[1]}" for keys in FAKE_RELEASE_LIST.values() for key in keys
}


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The index directory of the fake releases (built once per test session)."""
    from errhints._maintain.index import build_index

    out = tmp_path_factory.mktemp("fake-releases") / "index"
    build_index(
        FAKE_RELEASE_LIST,
        out,
        sources=FAKE_SOURCES,
        renames=FAKE_RELEASES / "renames.toml",
        lookalikes={},
    )
    return out


@pytest.fixture
def index_dir(built: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``built``, made the index errhints reads for the test's duration."""
    from errhints._core import siteindex

    monkeypatch.setenv(siteindex.ENV_SITEINDEX_DIR, str(built))
    siteindex.reset()
    yield built
    siteindex.reset()
