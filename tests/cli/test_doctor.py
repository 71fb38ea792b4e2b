"""``errhints doctor``: versions, the doors open in a process, the catalog's coverage."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import RunPy, child_env
from errhints._core.catalog import _toml_module
from wheelenv import ROOT, wheel_env


def doctor(standins_dir: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -m errhints doctor ARGS`` in a child of this environment."""
    return subprocess.run(
        [sys.executable, "-m", "errhints", "doctor", *args],
        env=child_env(standins_dir, **env),
        capture_output=True,
        text=True,
        timeout=60,
    )


def release_text(value: str | dict[str, str]) -> str:
    """A catalog ``release`` as doctor prints it: ``0.5.23`` or ``0.4.6 to 0.5.23``."""
    if isinstance(value, str) or value["first"] == value["last"]:
        return value if isinstance(value, str) else value["last"]
    return f"{value['first']} to {value['last']}"


def catalog_releases() -> dict[str, tuple[int, list[str]]]:
    """Per package: number of catalog files and the releases they name, read from the repo."""
    out: dict[str, tuple[int, list[str]]] = {}
    for package_dir in sorted(p for p in (ROOT / "catalog").iterdir() if any(p.glob("*.toml"))):
        files = sorted(package_dir.glob("*.toml"))
        releases = sorted(
            {
                release_text(_toml_module().loads(f.read_text(encoding="utf-8"))["release"])
                for f in files
            }
        )
        out[package_dir.name] = (len(files), releases)
    return out


def fake_distribution(root: Path, name: str, version: str) -> Path:
    """A directory holding only ``<name>-<version>.dist-info`` (importlib.metadata finds it)."""
    info = root / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    return root


def test_json_report_has_versions_doors_and_catalog(standins_dir: Path) -> None:
    """``--json``: versions ("not installed" is null), the doors, and the catalog per package."""
    proc = doctor(standins_dir, "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    import errhints

    assert report["versions"] == {
        "errhints": errhints.__version__,
        "sglang": None,
        "llamafactory": None,
    }
    assert set(report["doors"]) >= {
        "hooks",
        "logging",
        "multiprocessing",
        "environment",
        "annotate",
        "ipython",
        "pytest",
        "pytest_plugin",
    }
    assert report["doors"]["hooks"] == "off" and report["doors"]["environment"] == "off"
    assert report["doors"]["pytest_plugin"] is True
    for package, (count, releases) in catalog_releases().items():
        info = report["catalog"]["packages"][package]
        assert info["entries"] == count
        assert info["verified_against"] == releases
        assert info["status"] == "not installed"
    assert not any("verified against" in w for w in report["warnings"])


def test_text_report_names_every_section(standins_dir: Path) -> None:
    """The text form lists packages with coverage, the doors, and says "not installed"."""
    proc = doctor(standins_dir)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith("errhints ")
    for text in (
        "sglang",
        "llamafactory",
        "not installed",
        "verified against",
        "interpreter hooks",
        "logging",
        "multiprocessing",
        "environment",
        "start-up hook",
        "pytest plugin",
        "IPython",
    ):
        assert text in out


@pytest.mark.parametrize(("version", "status"), [("0.3.0", "differs"), ("0.5.23", "verified")])
def test_warns_when_the_installed_release_differs_from_the_catalog(
    standins_dir: Path, tmp_path: Path, version: str, status: str
) -> None:
    """An installed sglang other than the catalogued release gets a warning; the same one, none."""
    dists = fake_distribution(tmp_path / "dists", "sglang", version)
    env = child_env(standins_dir)
    env["PYTHONPATH"] = os.pathsep.join([str(dists), env["PYTHONPATH"]])
    proc = subprocess.run(
        [sys.executable, "-m", "errhints", "doctor", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    report = json.loads(proc.stdout)
    assert report["versions"]["sglang"] == version
    assert report["catalog"]["packages"]["sglang"]["status"] == status
    warned = [w for w in report["warnings"] if w.startswith(f"sglang {version} is installed")]
    assert bool(warned) is (status == "differs")
    text = subprocess.run(
        [sys.executable, "-m", "errhints", "doctor"], env=env, capture_output=True, text=True
    ).stdout
    assert f"[{status}]" in text
    assert (f"sglang {version} is installed, but" in text) is (status == "differs")


def test_doors_opened_in_a_process_are_reported(run_py: RunPy) -> None:
    """Inside a process that installed errhints and loaded the IPython extension, every door is on."""
    proc = run_py(
        """
        import json, errhints
        errhints.install()
        from IPython.core.interactiveshell import InteractiveShell
        errhints.load_ipython_extension(InteractiveShell.instance())
        from errhints._cli.doctor import doors
        print(json.dumps(doors()))
        """
    )
    d = json.loads(proc.stdout)
    assert d["hooks"] == d["logging"] == d["environment"] == d["ipython"] == "on", proc.stderr
    assert d["multiprocessing"] in ("waiting", "patched")
    assert d["activated_at_startup"] is False


def test_startup_hook_detection(run_py: RunPy, tmp_path: Path) -> None:
    """The start-up hook counts as installed only when the file this Python uses is present."""
    site_dir = tmp_path / "site"
    site_dir.mkdir()
    proc = run_py(
        f"""
        import shutil, sys
        from errhints._doors.environment import startup_hook
        site_dir = {str(site_dir)!r}
        print(startup_hook([site_dir])["installed"])
        for name in ("errhints-startup.pth", "errhints-startup.start", "_errhints_startup.py"):
            shutil.copy({str(ROOT / "src")!r} + "/" + name, site_dir)
        hook = startup_hook([site_dir])
        print(hook["installed"], hook["uses"], len(hook["files"]["errhints-startup.pth"]))
        """
    )
    assert proc.stdout.split() == ["False", "True", "errhints-startup.pth", "1"], proc.stderr


@pytest.mark.slow
def test_doctor_in_an_installed_wheel_sees_the_startup_hook(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """From the wheel, the hook is found in site-packages; under ERRHINTS=1 the doctor's own
    process was activated by it, and reports its doors on."""
    wenv = wheel_env(tmp_path_factory)
    for extra, active in (({}, False), ({"ERRHINTS": "1"}, True)):
        proc = subprocess.run(
            [str(wenv.bin / "errhints"), "doctor", "--json"],
            env=wenv.env(None, **extra),
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )
        report = json.loads(proc.stdout)
        hook = report["startup_hook"]
        assert hook["installed"] is True
        assert hook["files"]["errhints-startup.pth"] == [
            str(wenv.site_packages / "errhints-startup.pth")
        ]
        assert report["doors"]["activated_at_startup"] is active
        on = "on" if active else "off"
        assert report["doors"]["hooks"] == on and report["doors"]["logging"] == on
        assert not any("start-up hook" in w for w in report["warnings"])


def test_text_report_layout(standins_dir: Path) -> None:
    """Hook file paths sit under the start-up hook row; "not installed" is said once a package."""
    lines = doctor(standins_dir).stdout.splitlines()
    for line in lines:
        if line.startswith(("  sglang ", "  llamafactory ")) and "not installed" in line:
            assert line.count("not installed") == 1, line
            assert len(line) < 160, line
    hook = next(i for i, line in enumerate(lines) if line.startswith("  start-up hook"))
    plugin = next(i for i, line in enumerate(lines) if line.startswith("  pytest plugin"))
    paths = [
        i for i, line in enumerate(lines) if line.strip().endswith(("startup.pth", "startup.start"))
    ]
    paths = [i for i in paths if i != hook]
    assert all(hook < i < plugin for i in paths), "\n".join(lines)
