"""Packaging: a wheel carries the catalog and works in a fresh venv; import stays cheap."""

from __future__ import annotations

import json
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from this checkout (no build isolation, so no download)."""
    out = tmp_path_factory.mktemp("dist")
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
    [built] = out.glob("errhints-*.whl")
    return built


@pytest.mark.slow
def test_wheel_contains_the_catalog_and_type_marker(wheel: Path) -> None:
    """Every catalog entry, the schema and py.typed are inside the wheel."""
    names = set(zipfile.ZipFile(wheel).namelist())
    in_repo = {
        p.relative_to(ROOT / "catalog").as_posix() for p in (ROOT / "catalog").rglob("*.toml")
    }
    in_wheel = {
        n.removeprefix("errhints/catalog/")
        for n in names
        if n.startswith("errhints/catalog/") and n.endswith(".toml")
    }
    assert in_repo and in_wheel == in_repo
    assert {"errhints/catalog/schema.json", "errhints/py.typed", "errhints/__init__.py"} <= names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "errhints = errhints._cli:main" in text and "errhints = errhints._pytest" in text


@pytest.mark.slow
def test_wheel_installed_in_a_fresh_venv_finds_its_catalog(wheel: Path, tmp_path: Path) -> None:
    """Installed from the wheel, errhints loads the packaged catalog, not this checkout's."""
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
        text=True,
    )
    # The dependencies come from this test run's environment, read-only, without network.
    import rapidfuzz
    import wrapt

    deps = {str(Path(m.__file__).resolve().parents[1]) for m in (wrapt, rapidfuzz)}
    site = next((env_dir / "lib").glob("python3.*/site-packages"))
    (site / "_errhints_test_deps.pth").write_text("\n".join(sorted(deps)) + "\n")
    code = (
        "import json, errhints, errhints._catalog as c\n"
        "cat = c.load_catalog()\n"
        "print(json.dumps({'file': errhints.__file__, 'dir': str(c.builtin_catalog_dir()),"
        " 'n': len(cat), 'problems': [str(p) for p in cat.problems]}))\n"
    )
    out = subprocess.run(
        [str(python), "-c", code],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
    )
    info = json.loads(out.stdout)
    assert info["file"].startswith(str(env_dir))
    assert info["dir"].startswith(str(env_dir))
    assert info["n"] == len(list((ROOT / "catalog").rglob("*.toml")))
    assert info["problems"] == []
    cli = subprocess.run(
        [str(env_dir / "bin" / "errhints"), "show", "llamafactory.sglang-server-error"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert cli.returncode == 0 and "SGLang server error" in cli.stdout


def test_development_checkout_reads_the_repository_catalog() -> None:
    """In an editable install the loader reads ``catalog/`` of the checkout."""
    import errhints._catalog as c

    path = Path(str(c.builtin_catalog_dir()))
    if not str(path).startswith(str(ROOT)):
        pytest.skip("errhints is installed from a wheel here, not from this checkout")
    assert path == ROOT / "catalog"


def test_import_and_install_stay_cheap() -> None:
    """``import errhints`` and ``install()`` load neither wrapt, rapidfuzz, importlib_resources nor the catalog."""
    code = (
        "import sys, errhints\n"
        "errhints.install()\n"
        "heavy = ['wrapt', 'rapidfuzz', 'importlib_resources', 'tomllib', 'errhints._catalog', 'errhints._match']\n"
        "print([m for m in heavy if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "[]"
