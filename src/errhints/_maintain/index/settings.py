"""Map the names a guard reads to user settings: SGLang flags, LlamaFactory keys, env variables.

Extraction records raw references (``self:x``, ``sa:x`` for ``server_args.x``, ``hp:x`` for
``model_args.x`` and the other hparams, ``env:X``); this module reads a release's own
``ServerArgs`` (its ``add_cli_args`` and annotated fields) and LlamaFactory's hparams
dataclasses, and turns the references into what a user sets: ``--tp-size``,
``finetuning_type``, ``SGLANG_ENABLE_X``.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterable, Mapping

__all__ = ["map_settings", "settings_of"]


def _parse(data: bytes) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(data)
    except (SyntaxError, ValueError, RecursionError):
        return None


def _annotated_flag(name: str, ann: ast.expr) -> str | None:
    """The flag of an annotated ``ServerArgs`` field (``A[T, Arg(cli_name=...)]``)."""
    if not (isinstance(ann, ast.Subscript) and isinstance(ann.slice, ast.Tuple)):
        return None
    head = ann.value
    head_name = head.attr if isinstance(head, ast.Attribute) else getattr(head, "id", "")
    if head_name not in ("A", "Annotated"):
        return None
    for meta in ann.slice.elts[1:]:
        if isinstance(meta, ast.Call) and getattr(meta.func, "id", "") == "Arg":
            options = {k.arg: k.value for k in meta.keywords if k.arg}
            no_cli = options.get("no_cli")
            if isinstance(no_cli, ast.Constant) and no_cli.value is True:
                return None
            cli = options.get("cli_name")
            if isinstance(cli, ast.Constant) and isinstance(cli.value, str):
                return cli.value
            return "--" + name.replace("_", "-")
        if isinstance(meta, ast.Constant) and isinstance(meta.value, str):
            return "--" + name.replace("_", "-")
    return None


def _server_args(tree: ast.Module) -> tuple[dict[str, str], set[str]]:
    """Flags by field name, and the fields, of the ``ServerArgs`` class in ``tree``."""
    flags: dict[str, str] = {}
    fields: set[str] = set()
    for cls in tree.body:
        if not (isinstance(cls, ast.ClassDef) and cls.name == "ServerArgs"):
            continue
        for stmt in cls.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                fields.add(stmt.target.id)
                flag = _annotated_flag(stmt.target.id, stmt.annotation)
                if flag:
                    flags.setdefault(stmt.target.id, flag)
        for node in ast.walk(cls):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"
            ):
                continue
            options = [
                a.value
                for a in node.args
                if isinstance(a, ast.Constant) and isinstance(a.value, str)
            ]
            longs = [o for o in options if o.startswith("--")]
            if not longs:
                continue
            dest = longs[0][2:].replace("-", "_")
            for kw in node.keywords:
                if kw.arg == "dest" and isinstance(kw.value, ast.Constant):
                    dest = str(kw.value.value)
            flags.setdefault(dest, longs[0])
    return flags, fields


def _dataclass_fields(tree: ast.Module) -> set[str]:
    """Annotated fields of every class in an hparams module: LlamaFactory's YAML keys."""
    fields: set[str] = set()
    for cls in tree.body:
        if isinstance(cls, ast.ClassDef):
            for stmt in cls.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    fields.add(stmt.target.id)
    return fields


def settings_of(top: str, files: Mapping[str, bytes]) -> tuple[dict[str, str], list[str]]:
    """The settings a release defines: ``(flag by ServerArgs field, settings fields)``.

    ``files`` holds the release's ``server_args.py`` and ``hparams/`` modules by
    package-relative path.
    """
    flags: dict[str, str] = {}
    fields: set[str] = set()
    for rel in sorted(files):
        tree = _parse(files[rel])
        if tree is None:
            continue
        if rel == f"{top}/srt/server_args.py" or rel == f"{top}/server_args.py":
            more_flags, more_fields = _server_args(tree)
            for key, value in more_flags.items():
                flags.setdefault(key, value)
            fields |= more_fields
        elif "/arg_groups/fields/" in rel:
            for cls in tree.body:
                if not isinstance(cls, ast.ClassDef):
                    continue
                for stmt in cls.body:
                    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                        flag = _annotated_flag(stmt.target.id, stmt.annotation)
                        if flag:
                            flags.setdefault(stmt.target.id, flag)
                            fields.add(stmt.target.id)
        elif "/hparams/" in rel:
            fields |= _dataclass_fields(tree)
    return flags, sorted(fields)


def map_settings(
    refs: Iterable[str],
    *,
    project: str,
    path: str,
    function: str,
    flags: Mapping[str, str],
    fields: Iterable[str],
) -> tuple[str, ...]:
    """Settings names for a site's raw references, sorted: flags, keys, then env variables."""
    known = set(fields)
    out: set[str] = set()
    in_server_args = "/arg_groups/" in path or (
        path.endswith("server_args.py") and function.startswith("ServerArgs.")
    )
    in_hparams = "/hparams/" in path
    for ref in refs:
        kind, _, name = ref.partition(":")
        if kind == "env":
            out.add(name)
        elif project == "sglang" and (kind == "sa" or (kind == "self" and in_server_args)):
            if name in flags:
                out.add(flags[name])
            elif name in known:
                out.add("--" + name.replace("_", "-"))
        elif project == "llamafactory" and (
            kind == "hp" or (kind == "self" and in_hparams and name in known)
        ):
            out.add(name)  # any hparams attribute is a key (TrainingArguments' too)
    return tuple(sorted(out, key=lambda s: (s.isupper(), s)))
