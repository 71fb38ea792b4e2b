"""The options a release accepts: SGLang's server flags and fields, LlamaFactory's config keys.

Read with ``ast`` from the few files that define them, never imported:

- SGLang ``flags``: every option string of a ``parser.add_argument(...)`` call in
  ``sglang/srt/server_args.py`` and the argument-group modules (``sglang/srt/arg_groups/``),
  and the flag each ``A[T, Arg(...)]`` field of ``ServerArgs`` or the field classes turns
  into (its ``cli_name`` or ``--field-name``, and its ``aliases``);
- SGLang ``fields``: the annotated fields of ``ServerArgs`` and of the argument-group field
  classes (the keyword arguments ``sglang.Engine(...)`` and ``ServerArgs(...)`` accept);
- LlamaFactory ``keys``: the annotated fields of the argument dataclasses in ``hparams/``
  (the YAML keys of ``llamafactory-cli``), without those it inherits from transformers.

The merged table (name -> release ranges) ships as ``catalog/index/names.json``.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ..._core.known_names import runs_cover
from ..names import _cli_flags, _is_dataclass
from ..source import parse_source

__all__ = [
    "KINDS",
    "RENAMES",
    "Options",
    "RenameError",
    "checked_renames",
    "merge_options",
    "release_options",
]

#: The curated renames: the build's input, checked against every release (see the file).
RENAMES = Path(__file__).with_name("renames.toml")


class RenameError(ValueError):
    """A rename record that the releases contradict."""


#: What each project's table holds, by kind.
KINDS = {"sglang": ("flags", "fields"), "llamafactory": ("keys",)}

Options = dict[str, frozenset[str]]


def _parse(path: Path) -> ast.Module | None:
    try:
        return parse_source(path.read_bytes(), str(path))
    except (SyntaxError, ValueError, OSError, RecursionError):
        return None


def _option_strings(call: ast.Call) -> list[str]:
    """The ``-x``/``--x`` strings of an ``add_argument`` call."""
    return [
        arg.value
        for arg in call.args
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value[:1] == "-"
    ]


def _aliases(stmt: ast.AnnAssign) -> list[str]:
    """The ``aliases=[...]`` of a field's ``Arg(...)`` annotation."""
    ann = stmt.annotation
    if not (isinstance(ann, ast.Subscript) and isinstance(ann.slice, ast.Tuple)):
        return []
    found: list[str] = []
    for meta in ann.slice.elts[1:]:
        if isinstance(meta, ast.Call) and getattr(meta.func, "id", "") == "Arg":
            for kw in meta.keywords:
                if kw.arg == "aliases" and isinstance(kw.value, (ast.List, ast.Tuple)):
                    found.extend(
                        e.value
                        for e in kw.value.elts
                        if isinstance(e, ast.Constant) and isinstance(e.value, str)
                    )
    return found


def _fields(tree: ast.Module, classes: Iterable[str] | None = None) -> Iterable[tuple[str, bool]]:
    """``(field name, is flag-bearing)`` of annotated fields of the module's classes."""
    wanted = set(classes) if classes is not None else None
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        if wanted is not None and node.name not in wanted:
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                yield stmt.target.id, _is_dataclass(node)


def _sglang(root: Path) -> Options:
    srt = root / "sglang" / "srt"
    main = srt / "server_args.py"
    groups = srt / "arg_groups"
    files = [main] + (sorted(groups.rglob("*.py")) if groups.is_dir() else [])
    flags: set[str] = set()
    fields: set[str] = set()
    for path in files:
        tree = _parse(path) if path.is_file() else None
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
                flags.update(_option_strings(node))
            elif isinstance(node, ast.ClassDef):
                dataclass_ = _is_dataclass(node)
                in_fields = path.parent.name == "fields" or node.name == "ServerArgs"
                for stmt in node.body:
                    if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                        continue
                    name = stmt.target.id
                    if in_fields and not name.startswith("_"):
                        fields.add(name)
                    cli = _cli_flags(name, stmt, dataclass_) if in_fields else []
                    if cli:
                        flags.update(cli[:1])
                        flags.update(_aliases(stmt))
    return {"flags": frozenset(flags), "fields": frozenset(fields)}


def _llamafactory(root: Path, top: str) -> Options:
    hparams = root / top / "hparams"
    keys: set[str] = set()
    for path in sorted(hparams.glob("*.py")) if hparams.is_dir() else []:
        tree = _parse(path)
        if tree is None:
            continue
        keys.update(name for name, _ in _fields(tree) if not name.startswith("_"))
    return {"keys": frozenset(keys)}


def release_options(project: str, root: Path, top: str) -> Options:
    """The options of one release unpacked at ``root`` (``top``: its import package name)."""
    if project == "sglang":
        return _sglang(root)
    if project == "llamafactory":
        return _llamafactory(root, top)
    return {}


def merge_options(
    per_release: Sequence[Mapping[str, frozenset[str]]],
) -> dict[str, dict[str, list[int]]]:
    """``{kind: {name: [first, last, first, last, ...]}}``: runs of release indexes.

    ``per_release[i]`` is release ``i`` of the project's release list (oldest first).
    """
    table: dict[str, dict[str, list[int]]] = {}
    for index, options in enumerate(per_release):
        for kind, names in options.items():
            runs = table.setdefault(kind, {})
            for name in names:
                spans = runs.setdefault(name, [])
                if spans and spans[-1] == index - 1:
                    spans[-1] = index
                else:
                    spans.extend([index, index])
    return {kind: dict(sorted(runs.items())) for kind, runs in sorted(table.items())}


def checked_renames(
    tables: Mapping[str, Mapping[str, Mapping[str, Sequence[int]]]],
    versions: Mapping[str, Sequence[str]],
    path: Path = RENAMES,
) -> list[dict[str, str]]:
    """The records of ``path``, each checked against ``tables`` (``{project: {kind: ...}}``).

    ``versions`` gives each project's release list (the indexes of the tables). Raises
    :class:`RenameError` naming the record that a release contradicts.
    """
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - the build runs on 3.11+
        import tomli as tomllib

    data = tomllib.loads(path.read_text("utf-8"))
    records: list[dict[str, str]] = []
    for project, kinds in sorted(data.items()):
        if project not in tables:
            continue
        order = list(versions[project])
        for kind, items in sorted(kinds.items()):
            table = tables[project].get(kind, {})
            for item in items:
                old, new = str(item["old"]), str(item["new"])
                where = f"{path.name}: {project} {kind} {old} -> {new}"
                release = item.get("release")
                if release is not None:
                    if release not in order or order.index(release) == 0:
                        raise RenameError(f"{where}: release {release} is not in the list")
                    at = order.index(release)
                    if not runs_cover(table.get(old, []), at - 1):
                        raise RenameError(f"{where}: {old} is not in {order[at - 1]}")
                    if runs_cover(table.get(old, []), at):
                        raise RenameError(f"{where}: {old} is still in {release}")
                else:
                    if "other" not in item:
                        raise RenameError(f"{where}: needs 'release' or 'other'")
                    if old in table:
                        raise RenameError(f"{where}: {old} is an option of {project} too")
                    at = len(order) - 1
                if not runs_cover(table.get(new, []), at):
                    raise RenameError(f"{where}: {new} is not in {order[at]}")
                record = {"project": project, "kind": kind, "old": old, "new": new}
                for key in ("release", "other", "how"):
                    if key in item:
                        record[key] = str(item[key])
                records.append(record)
    return records
