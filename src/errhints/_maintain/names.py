"""The names a release knows (CLI flags, config keys, environment variables), for mentions.

Built once per release from every ``.py`` file (about 30 s for sglang), then cached on disk
beside the release as JSON.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .source import UPPER_RE, parse_source

__all__ = ["INDEX_FILE", "ReleaseIndex", "build_index"]

INDEX_FORMAT = 1
INDEX_FILE = f".errhints-index-v{INDEX_FORMAT}.json"
_FLAG_RE = re.compile(r"(?<![\w-])(--?[A-Za-z0-9](?:[\w.-]*\w)?)")
_ENV_WORD_RE = re.compile(r"(?<![\w])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?![\w])")
_MAX_INDEXED_STRING = 200


@dataclass(frozen=True, slots=True)
class ReleaseIndex:
    """Names a release knows, for checking mentions: built once per release, then cached."""

    strings: frozenset[str] = frozenset()  # short string constants without whitespace
    flags: frozenset[str] = frozenset()  # --flags in strings and derived from CLI fields
    fields: frozenset[str] = frozenset()  # annotated class attributes (dataclass fields)
    names: frozenset[str] = frozenset()  # UPPER_CASE identifiers
    env_words: frozenset[str] = frozenset()  # UPPER_CASE words inside strings
    key_words: frozenset[str] = frozenset()  # attributes read on ``*_args``, ``dict(k=...)`` keys
    files: int = 0
    unparsed: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready form for the on-disk cache."""
        return {
            "format": INDEX_FORMAT,
            "strings": sorted(self.strings),
            "flags": sorted(self.flags),
            "fields": sorted(self.fields),
            "names": sorted(self.names),
            "env_words": sorted(self.env_words),
            "key_words": sorted(self.key_words),
            "files": self.files,
            "unparsed": list(self.unparsed),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ReleaseIndex:
        """Read :meth:`to_json` output back; ``ValueError`` when it is another format."""
        if data.get("format") != INDEX_FORMAT:
            raise ValueError("index format differs")
        return cls(
            strings=frozenset(data["strings"]),
            flags=frozenset(data["flags"]),
            fields=frozenset(data["fields"]),
            names=frozenset(data["names"]),
            env_words=frozenset(data["env_words"]),
            key_words=frozenset(data["key_words"]),
            files=int(data["files"]),
            unparsed=tuple(data["unparsed"]),
        )


def _is_dataclass(node: ast.ClassDef) -> bool:
    """Whether a class is decorated with ``dataclass`` (bare, called or dotted)."""
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name == "dataclass":
            return True
    return False


def _cli_flags(name: str, stmt: ast.AnnAssign, dataclass_: bool) -> list[str]:
    """Flags a class field turns into: sglang's ``A[T, Arg(...)]``, HfArgumentParser fields."""
    ann = stmt.annotation
    if isinstance(ann, ast.Subscript):
        head = ann.value
        head_name = head.attr if isinstance(head, ast.Attribute) else getattr(head, "id", "")
        if head_name in ("A", "Annotated") and isinstance(ann.slice, ast.Tuple):
            for meta in ann.slice.elts[1:]:
                if isinstance(meta, ast.Constant) and isinstance(meta.value, str):
                    return ["--" + name.replace("_", "-")]
                if isinstance(meta, ast.Call) and getattr(meta.func, "id", "") == "Arg":
                    options = {k.arg: k.value for k in meta.keywords if k.arg}
                    no_cli = options.get("no_cli")
                    if isinstance(no_cli, ast.Constant) and no_cli.value is True:
                        return []
                    cli = options.get("cli_name")
                    if isinstance(cli, ast.Constant) and isinstance(cli.value, str):
                        return [cli.value]
                    return ["--" + name.replace("_", "-")]
    value = stmt.value
    if dataclass_ and isinstance(value, ast.Call) and getattr(value.func, "id", "") == "field":
        for kw in value.keywords:
            if kw.arg == "metadata" and isinstance(kw.value, ast.Dict):
                keys = [k.value for k in kw.value.keys if isinstance(k, ast.Constant)]
                if "help" in keys:
                    return [f"--{name}", "--" + name.replace("_", "-")]
    return []


def _holder_name(node: ast.expr) -> str:
    """The last name of ``x`` or ``a.b.x``: what an attribute is read on."""
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else ""


def _index_paths(paths: Sequence[str]) -> tuple[list[set[str]], int, list[str]]:
    """Index files: (strings, flags, fields, names, env words, key words), count, unparsed."""
    strings: set[str] = set()
    flags: set[str] = set()
    fields: set[str] = set()
    names: set[str] = set()
    env_words: set[str] = set()
    key_words: set[str] = set()
    unparsed: list[str] = []
    count = 0
    for path in paths:
        try:
            tree = parse_source(Path(path).read_bytes(), path)
        except (SyntaxError, ValueError, OSError, RecursionError):
            unparsed.append(path)
            continue
        count += 1
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant):
                value = node.value
                if not isinstance(value, str):
                    continue
                if len(value) <= _MAX_INDEXED_STRING and not any(c.isspace() for c in value):
                    strings.add(value)
                if "-" in value:
                    flags.update(_FLAG_RE.findall(value))
                if "_" in value:
                    env_words.update(_ENV_WORD_RE.findall(value))
            elif isinstance(node, ast.Name):
                if UPPER_RE.match(node.id):
                    names.add(node.id)
            elif isinstance(node, ast.Attribute):
                if UPPER_RE.match(node.attr):
                    names.add(node.attr)
                elif _holder_name(node.value).endswith("args"):
                    key_words.add(node.attr)  # training_args.do_train: a config key read
            elif isinstance(node, ast.Call):
                if isinstance(node.func, ast.Name) and node.func.id == "dict":
                    key_words.update(k.arg for k in node.keywords if k.arg)
            elif isinstance(node, ast.ClassDef):
                dataclass_ = _is_dataclass(node)
                for stmt in node.body:
                    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                        fields.add(stmt.target.id)
                        flags.update(_cli_flags(stmt.target.id, stmt, dataclass_))
    return [strings, flags, fields, names, env_words, key_words], count, unparsed


def build_index(root: Path) -> ReleaseIndex:
    """Index every ``.py`` file under ``root`` (about 30 s for sglang; then cached on disk)."""
    files = [
        os.path.join(folder, name)
        for folder, _, names in os.walk(root, followlinks=True)
        for name in names
        if name.endswith(".py")
    ]
    sets, count, unparsed = _index_paths(sorted(files))
    base = str(root) + os.sep
    return ReleaseIndex(
        strings=frozenset(sets[0]),
        flags=frozenset(sets[1]),
        fields=frozenset(sets[2]),
        names=frozenset(sets[3]),
        env_words=frozenset(sets[4]),
        key_words=frozenset(sets[5]),
        files=count,
        unparsed=tuple(sorted(p.removeprefix(base).replace(os.sep, "/") for p in unparsed)),
    )
