"""``errhints show`` on a raise site or a pasted message: the site index, and the user's source."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SITE = "sglang/srt/server_args.py:ServerArgs.check_server_args"
MESSAGE = "multi-node data parallel is not supported"


def show(*args: str, path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ERRHINTS")}
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(path), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "errhints", "show", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def fake_install(root: Path, version: str, line: int) -> Path:
    """An 'installed' sglang of ``version`` whose server_args.py raises at ``line``."""
    (root / f"sglang-{version}.dist-info").mkdir(parents=True)
    (root / f"sglang-{version}.dist-info" / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: sglang\nVersion: {version}\n", encoding="utf-8"
    )
    package = root / "sglang" / "srt"
    package.mkdir(parents=True)
    (root / "sglang" / "__init__.py").write_text("", encoding="utf-8")
    (package / "__init__.py").write_text("", encoding="utf-8")
    body = [f"# line {n}" for n in range(1, line)] + [f'assert ok, "{MESSAGE}"', "# after"]
    (package / "server_args.py").write_text("\n".join(body) + "\n", encoding="utf-8")
    return root


def test_a_site_by_path_and_function() -> None:
    proc = show(SITE)
    assert proc.returncode == 0, proc.stderr
    assert "in ServerArgs.check_server_args (sglang 0.4.0 to" in proc.stdout
    assert f"AssertionError: {MESSAGE}" in proc.stdout
    assert "settings: --dp-size, --nnodes" in proc.stdout
    assert "https://github.com/sgl-project/sglang/blob/v" in proc.stdout


def test_a_pasted_message_lists_its_sites_as_json() -> None:
    proc = show(f"AssertionError: {MESSAGE}", "--json")
    assert proc.returncode == 0, proc.stderr
    sites = json.loads(proc.stdout)
    assert sites and all(s["template"] == MESSAGE for s in sites)
    assert {s["function"] for s in sites} == {"ServerArgs.check_server_args"}


def line_at(version: str) -> int:
    """The line the message is raised at in ``version``, as the site index records it."""
    sites = json.loads(show(SITE, "--json").stdout)
    site = next(s for s in sites if s["template"] == MESSAGE)
    return next(r["line"] for r in site["runs"] if r["releases"]["first"] == version)


def test_the_installed_copy_shows_its_own_source(tmp_path: Path) -> None:
    """With sglang 0.4.0 installed, the raising line is read from that copy, at its line."""
    line = line_at("0.4.0")
    proc = show(f"AssertionError: {MESSAGE}", path=fake_install(tmp_path, "0.4.0", line))
    assert proc.returncode == 0, proc.stderr
    assert "Source in your installed sglang 0.4.0" in proc.stdout
    assert f'  >{line:>6} | assert ok, "{MESSAGE}"' in proc.stdout


def test_an_installed_release_without_the_site_says_so(tmp_path: Path) -> None:
    proc = show(f"AssertionError: {MESSAGE}", path=fake_install(tmp_path, "0.5.23", 10))
    assert "your installed sglang 0.5.23 does not raise it here" in proc.stdout
