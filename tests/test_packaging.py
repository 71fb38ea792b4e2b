"""Packaging: a wheel carries the catalog and works in a fresh venv; import stays cheap."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from wheelenv import WheelEnv, wheel_env

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> WheelEnv:
    """errhints installed from a wheel of this checkout into a fresh venv (shared)."""
    return wheel_env(tmp_path_factory)


@pytest.mark.slow
def test_wheel_contains_the_catalog_bundle_and_type_marker(installed: WheelEnv) -> None:
    """Every catalog entry, the pre-parsed bundle of them, the schema and py.typed ship."""
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    in_repo = {
        p.relative_to(ROOT / "catalog").as_posix() for p in (ROOT / "catalog").rglob("*.toml")
    }
    in_wheel = {
        n.removeprefix("errhints/catalog/")
        for n in names
        if n.startswith("errhints/catalog/") and n.endswith(".toml")
    }
    assert in_repo and in_wheel == in_repo
    assert {
        "errhints/catalog/schema.json",
        "errhints/catalog/_bundle.json",
        "errhints/py.typed",
        "errhints/__init__.py",
    } <= names
    bundle = json.loads(zipfile.ZipFile(installed.wheel).read("errhints/catalog/_bundle.json"))
    assert set(bundle) == in_repo
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(installed.wheel).read(entry_points).decode()
    assert (
        "errhints = errhints._cli:main" in text
        and "errhints = errhints._doors.pytest_plugin" in text
    )


@pytest.mark.slow
def test_wheel_installed_in_a_fresh_venv_reads_its_bundled_catalog(
    installed: WheelEnv, tmp_path: Path
) -> None:
    """Installed from the wheel, errhints loads its own bundled catalog, not this checkout's."""
    code = """
        import json, sys, errhints, errhints._core.catalog as c
        cat = c.load_catalog()
        print(json.dumps({
            "file": errhints.__file__,
            "dir": str(c.builtin_catalog_dir()),
            "n": len(cat),
            "problems": [str(p) for p in cat.problems],
            "parsed_toml": "tomllib" in sys.modules,
            "resources": "importlib_resources" in sys.modules,
        }))
    """
    out = installed.run(code, tmp_path)
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    venv_dir = str(installed.root)
    assert info["file"].startswith(venv_dir) and info["dir"].startswith(venv_dir)
    assert info["n"] == len(list((ROOT / "catalog").rglob("*.toml")))
    assert info["problems"] == []
    assert info["parsed_toml"] is False  # the bundle, not ~200 TOML parses
    assert info["resources"] is False  # a plain directory: pathlib, not importlib_resources
    cli = subprocess.run(
        [str(installed.bin / "errhints"), "show", "llamafactory.sglang-server-error"],
        capture_output=True,
        text=True,
        env=installed.env(),
    )
    assert cli.returncode == 0 and "SGLang server error" in cli.stdout


def test_development_checkout_reads_the_repository_catalog() -> None:
    """In an editable install the loader reads ``catalog/`` of the checkout."""
    import errhints._core.catalog as c

    path = Path(str(c.builtin_catalog_dir()))
    if not str(path).startswith(str(ROOT)):
        pytest.skip("errhints is installed from a wheel here, not from this checkout")
    assert path == ROOT / "catalog"


def test_import_and_install_stay_cheap() -> None:
    """``import errhints`` and ``install()`` load neither wrapt, rapidfuzz, importlib_resources nor the catalog."""
    code = (
        "import sys, errhints\n"
        "errhints.install()\n"
        "heavy = ['wrapt', 'rapidfuzz', 'importlib_resources', 'tomllib', 'errhints._core.catalog', 'errhints._core.match']\n"
        "print([m for m in heavy if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "[]"


def _python(version: str) -> str | None:
    """A ``python3.X`` interpreter on this machine (PATH or pyenv), or ``None``."""
    import glob
    import shutil

    candidates = [shutil.which(f"python{version}")]
    candidates += sorted(
        glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}*/bin/python{version}"))
    )
    for candidate in candidates:
        if (
            candidate
            and subprocess.run([candidate, "-c", "pass"], capture_output=True).returncode == 0
        ):
            return candidate
    return None


def _readme_install_command() -> list[str]:
    """The install command of the README's quickstart (its first ``pip install`` line)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    quickstart = text[text.index("## Quickstart") :]
    line = next(line for line in quickstart.splitlines() if line.startswith("pip install"))
    return line.split("#")[0].split()


def test_readme_install_command_is_the_checkout_form() -> None:
    """No index serves errhints: the quickstart installs from the checkout."""
    assert _readme_install_command() == ["pip", "install", "."]


@pytest.mark.slow
@pytest.mark.parametrize("version", ["3.10", "3.11"])
def test_readme_install_command_works_in_a_fresh_venv(version: str, tmp_path: Path) -> None:
    """The README's command, run in the checkout with a fresh venv's pip, installs a working
    errhints: ``errhints explain`` runs, and an uncaught failure carries the note (on 3.10
    too, where errhints prints the note itself)."""
    python = _python(version)
    if python is None:
        pytest.skip(f"no python{version} here")
    venv_dir = tmp_path / "venv"
    subprocess.run([python, "-m", "venv", str(venv_dir)], check=True)
    command = _readme_install_command()
    proc = subprocess.run(
        [str(venv_dir / "bin" / "python"), "-m", *command[:1], "install", "-q", *command[2:]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0 and "No matching distribution" in proc.stderr:
        pytest.skip(f"dependencies cannot be fetched here: {proc.stderr[-300:]}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    log = "RuntimeError: SGLang server error: 400, bad request\n"
    explained = subprocess.run(
        [str(venv_dir / "bin" / "errhints"), "explain", "-"],
        input=log,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "llamafactory.sglang-server-error" in explained.stdout, explained.stderr
    from standins import write_standins

    standins = write_standins(tmp_path / "standins")
    crash = subprocess.run(
        [
            str(venv_dir / "bin" / "python"),
            "-c",
            "from llamafactory.chat.sglang_engine import SGLangEngine\n"
            "SGLangEngine(400, 'bad request')._generate()\n",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "ERRHINTS": "1", "PYTHONPATH": str(standins)},
    )
    assert crash.returncode == 1
    assert crash.stderr.count("errhints: llamafactory.sglang-server-error") == 1, crash.stderr


@pytest.mark.slow
def test_python_3_9_is_refused_by_requires_python(tmp_path: Path) -> None:
    """pip on 3.9 says errhints needs another Python (``Requires-Python``), no build traceback."""
    python = _python("3.9")
    if python is None:
        pytest.skip("no python3.9 here")
    venv_dir = tmp_path / "venv39"
    subprocess.run([python, "-m", "venv", str(venv_dir)], check=True)
    proc = subprocess.run(
        [str(venv_dir / "bin" / "python"), "-m", "pip", "install", "--dry-run", str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode != 0
    assert "requires a different Python" in proc.stderr, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_wheel_builds_only_the_entries_a_failure_touches(
    installed: WheelEnv, tmp_path: Path
) -> None:
    """The wheel's prebuilt index answers the first failure without building every entry."""
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    assert "errhints/catalog/_prebuilt.json" in names
    code = """
        import json, errhints
        from errhints._core.state import get_index
        from errhints._core.pipeline import explain_text
        index = get_index()
        found = explain_text("ValueError: Template llama9 does not exist.\\n")
        print(json.dumps({
            "ids": [m.id for r in found for m in r.matches],
            "built": len(index.catalog.entries),
            "known": len(index.catalog),
        }))
    """
    proc = installed.run(code, tmp_path)
    data = json.loads(proc.stdout.splitlines()[-1])
    assert data["ids"][0] == "llamafactory.template-does-not-exist", proc.stderr
    assert data["known"] >= 600
    # Only the entries whose templates share the message's pinned words (head, tail or a
    # distinctive word: "Template", "exist"): a few percent of the catalog, never all of it.
    assert 0 < data["built"] <= data["known"] // 20, data
