"""Packaging: a wheel carries the catalog and works in a fresh venv; import stays cheap."""

from __future__ import annotations

import json
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
