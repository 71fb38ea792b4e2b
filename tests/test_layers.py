"""The layers of ``src/errhints`` and what each may import, checked on the source and at run time.

Layers, lowest first: the leaves (``_config``, ``_packages``, ``_version``) import nothing of
errhints; ``_facts`` imports only leaves; ``_core`` adds ``_facts``; ``_doors`` adds the core's
notes and text pipeline (and the door registry); the top (``__init__``, ``_api``,
``_startup``) adds the doors; ``_cli`` may import anything; only ``_cli`` imports ``_maintain``,
which itself stands on leaves, ``_facts`` and ``_core``.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "errhints"

LEAVES = {"errhints._config", "errhints._packages", "errhints._version"}
TOP = {"errhints", "errhints.__main__", "errhints._api", "errhints._startup"}
DOOR_CORE = {"errhints._core.notes", "errhints._core.pipeline"}


def layer_of(module: str) -> str:
    """The layer a module of errhints belongs to."""
    if module in LEAVES:
        return "leaf"
    if module in TOP:
        return "top"
    parts = module.split(".")
    return parts[1].lstrip("_")  # errhints._core.match -> core


def allowed(importer: str, imported: str) -> bool:
    """Whether module ``importer`` may import module ``imported`` (both of errhints)."""
    src, dst = layer_of(importer), layer_of(imported)
    if src == dst or dst == "leaf":
        return src != "leaf" or importer == imported
    if importer == "errhints.__main__":
        return dst == "cli"
    return {
        "facts": False,
        "core": dst == "facts",
        "doors": imported in DOOR_CORE or imported == "errhints._core",
        "top": dst in ("doors", "core", "facts"),
        "maintain": dst in ("facts", "core"),
        "cli": True,
    }.get(src, False)


def module_name(path: Path) -> str:
    relative = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    """The errhints modules a source file imports (relative imports resolved), anywhere in it."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "errhints")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target.split(".")[0] != "errhints":
                continue
            for alias in node.names:  # `from . import hooks` names a module
                candidate = f"{target}.{alias.name}"
                found.add(candidate if candidate in MODULES else target)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module":
            pass  # dynamic imports are covered by the run-time checks below
    return found


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def graph() -> dict[str, set[str]]:
    return {name: imports_of(path) & set(MODULES) - {name} for name, path in MODULES.items()}


def violations(edges: Mapping[str, Iterable[str]]) -> list[str]:
    """Every import that breaks the layer rules, as ``importer -> imported``."""
    out = []
    for importer, imported in sorted(edges.items()):
        for target in sorted(imported):
            parent = target.rpartition(".")[0]
            if target in MODULES and MODULES[target].name == "__init__.py" and parent == importer:
                continue
            if not allowed(importer, target):
                out.append(f"{importer} -> {target}")
    return out


def test_every_import_keeps_to_the_layers() -> None:
    assert violations(graph()) == []


def test_the_rules_catch_a_forbidden_import() -> None:
    """The checker is not vacuous: each kind of forbidden edge is reported."""
    edges = {
        "errhints._facts.scanner": {"errhints._core.match"},
        "errhints._core.match": {"errhints._doors.hooks"},
        "errhints._doors.hooks": {"errhints._api", "errhints._core.render"},
        "errhints._api": {"errhints._maintain.verify"},
        "errhints._config": {"errhints._packages"},
        "errhints._cli.doctor": {"errhints._maintain.verify"},
    }
    assert violations(edges) == [
        "errhints._api -> errhints._maintain.verify",
        "errhints._config -> errhints._packages",
        "errhints._core.match -> errhints._doors.hooks",
        "errhints._doors.hooks -> errhints._api",
        "errhints._doors.hooks -> errhints._core.render",
        "errhints._facts.scanner -> errhints._core.match",
    ]


def floors(edges: Mapping[str, set[str]]) -> int:
    """The length of the longest import chain; raises ``AssertionError`` on a cycle."""
    depth: dict[str, int] = {}
    visiting: set[str] = set()

    def walk(node: str) -> int:
        if node in depth:
            return depth[node]
        assert node not in visiting, f"import cycle through {node}"
        visiting.add(node)
        below = [walk(n) for n in edges.get(node, ()) if n in edges]
        visiting.discard(node)
        depth[node] = 1 + max(below, default=0)
        return depth[node]

    return max(walk(n) for n in edges)


def room(module: str) -> str:
    """What ``ls src/errhints`` shows: a layer folder, or a top-level module of its own."""
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 or module in SUBPACKAGES else module


SUBPACKAGES = {m for m, p in MODULES.items() if p.name == "__init__.py" and m != "errhints"}


def test_no_cycle_between_modules() -> None:
    edges = graph()
    # A package's __init__ naming its own children lazily is not a cycle through them.
    for name in list(edges):
        edges[name] = {t for t in edges[name] if not name.startswith(t + ".")}
    floors(edges)


def test_at_most_eight_floors_of_layers() -> None:
    """Counted as the eye sees ``ls``: each layer folder is one room, each top module one."""
    rooms: dict[str, set[str]] = {}
    for importer, imported in graph().items():
        here = room(importer)
        rooms.setdefault(here, set()).update(room(t) for t in imported if room(t) != here)
    assert floors(rooms) <= 8


def run_child(code: str) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(PACKAGE.parent)},
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def test_a_failing_process_never_loads_the_maintainer_code_or_the_command_line() -> None:
    """install() plus one explained exception imports no _maintain, no _cli, no rapidfuzz,
    and not the text door's readers: a live error is never text to scan."""
    found = run_child(
        """
        import json, sys, errhints
        errhints.install()
        class Fake(RuntimeError):
            pass
        import types
        code = compile("def alloc_req_slots():\\n    raise RuntimeError('alloc_req_slots runs "
                       "out of memory. Please set a smaller number for `--max-running-requests`. "
                       "req_to_token_pool.available_size()=0, num_reqs=2, ')",
                       "sglang/srt/mem_cache/allocation.py", "exec")
        module = types.ModuleType("sglang.srt.mem_cache.allocation")
        module.__file__ = "sglang/srt/mem_cache/allocation.py"
        exec(code, module.__dict__)
        try:
            module.alloc_req_slots()
        except RuntimeError as exc:
            matches = errhints.explain(exc)
        print(json.dumps({
            "matched": [m.id for m in matches],
            "modules": sorted(m for m in sys.modules if m.startswith(("errhints", "rapidfuzz"))),
        }))
        """
    )
    assert found["matched"], found
    modules = found["modules"]
    assert isinstance(modules, list)
    assert not [m for m in modules if m.startswith(("errhints._maintain", "errhints._cli"))]
    assert not [m for m in modules if m.startswith("rapidfuzz")]
    assert not {"errhints._facts.scanner", "errhints._facts.traceback_text"} & set(modules)


def new_modules(statement: str) -> list[str]:
    """Modules that ``statement`` imports in a fresh interpreter, beyond what start-up has."""
    found = run_child(
        f"""
        import json, sys
        before = set(sys.modules)
        {statement}
        print(json.dumps({{"new": sorted(set(sys.modules) - before)}}))
        """
    )
    new = found["new"]
    assert isinstance(new, list)
    return new


def test_import_errhints_imports_only_its_own_front_door() -> None:
    new = set(new_modules("import errhints"))
    ours = {m for m in new if m.startswith("errhints")}
    assert ours == {
        "errhints",
        "errhints._api",
        "errhints._config",
        "errhints._doors",
        "errhints._doors.ipython",
        "errhints._version",
    }
    assert new - ours <= {"__future__"}, new - ours


@pytest.mark.parametrize(
    "module",
    sorted(
        m for m in MODULES if layer_of(m) in ("leaf", "facts") or m.startswith("errhints._core")
    ),
)
def test_low_layers_import_only_the_standard_library(module: str) -> None:
    """What a failure loads first stays light: no third-party package below the doors."""
    new = new_modules(f"import {module}")
    third_party = {m.partition(".")[0] for m in new} - set(sys.stdlib_module_names) - {"errhints"}
    allowed_third_party = (
        {"importlib_resources", "zipp"} if module == "errhints._core.catalog" else set()
    )
    assert third_party <= allowed_third_party, third_party
