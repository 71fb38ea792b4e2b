"""Check the catalog's facts against the released sources: ``errhints catalog verify``.

For each entry the released source of its package (downloaded once with ``pip download`` into
a cache, or given as a directory) must still raise the template's literal text at each site's
path and function, hold each context frame, and know each flag, key and environment variable
the fixes mention. Sources are only parsed with :mod:`ast`, never imported or run. This module
is the only part of errhints that touches the network, and only through
:func:`fetch_release`.
"""

from __future__ import annotations

import ast
import difflib
import json
import os
import re
import string
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .._core.catalog import Entry
from .._core.template import Template
from .releases import (
    RELEASE_MARKER,
    ReleaseKey,
    top_level,
)

__all__ = [
    "CheckResult",
    "EntryReport",
    "ReleaseIndex",
    "VerifyReport",
    "build_index",
    "needed_releases",
    "verify_catalog",
]

INDEX_FORMAT = 1
INDEX_FILE = f".errhints-index-v{INDEX_FORMAT}.json"

Status = Literal["ok", "failed", "skipped"]
Category = Literal["in-package", "context", "other"]

_HOLE = "\x00"  # a dynamic part of a built string (a placeholder's value)
_SEP = "\x01"  # between two separately built strings
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_LOG_METHODS = frozenset(
    {"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log"}
)
_PERCENT_RE = re.compile(
    r"%(?:\([^)]*\))?[#0 +\-]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?[diouxXeEfFgGcrsab%]"
)
_FLAG_RE = re.compile(r"(?<![\w-])(--?[A-Za-z0-9](?:[\w.-]*\w)?)")
_ENV_WORD_RE = re.compile(r"(?<![\w])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?![\w])")
_UPPER_RE = re.compile(r"^[A-Z_][A-Z0-9_]*$")
_MAX_MATCHES = 64
_MAX_INDEXED_STRING = 200


# --------------------------------------------------------------------------------------------
# Reading one source file
# --------------------------------------------------------------------------------------------

_Def = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


@dataclass(frozen=True, slots=True)
class _Fragment:
    """One string a scope builds: its text (holes for dynamic parts) and its statement's lines."""

    text: str
    start: int
    end: int
    stored: bool = False  # built in an assignment (a message kept in a variable, raised later)


def _percent_holes(text: str) -> str:
    """Turn ``%s``-style conversions into holes and ``%%`` into ``%``."""
    return _PERCENT_RE.sub(lambda m: "%" if m.group(0) == "%%" else _HOLE, text)


def _brace_holes(text: str) -> str:
    """Turn ``str.format`` fields into holes and ``{{``/``}}`` into braces."""
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError:
        return text
    return "".join(lit + (_HOLE if name is not None else "") for lit, name, _, _ in parsed)


def _statements(body: Sequence[ast.stmt], *, into_defs: bool) -> Iterator[ast.stmt]:
    """Every statement under ``body`` in source order; into nested defs only if asked."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, _DEFS) and not into_defs:
            continue
        for name in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(stmt, name, ()), into_defs=into_defs)
        for handler in getattr(stmt, "handlers", ()):
            yield from _statements(handler.body, into_defs=into_defs)
        for case in getattr(stmt, "cases", ()):
            yield from _statements(case.body, into_defs=into_defs)


def _nested_defs(body: Sequence[ast.stmt]) -> Iterator[_Def]:
    """The defs and classes directly in a scope's statements (not inside other defs)."""
    for stmt in _statements(body, into_defs=False):
        if isinstance(stmt, _DEFS):
            yield stmt


def _outer_exprs(node: _Def) -> list[ast.expr]:
    """Expressions of a def or class statement evaluated in the enclosing scope."""
    exprs: list[ast.expr] = list(node.decorator_list)
    if isinstance(node, ast.ClassDef):
        exprs.extend(node.bases)
        exprs.extend(k.value for k in node.keywords)
    else:
        exprs.extend(node.args.defaults)
        exprs.extend(d for d in node.args.kw_defaults if d is not None)
    return exprs


def _single_assignments(body: list[ast.stmt]) -> dict[str, ast.expr]:
    """Names a scope binds exactly once, by ``name = value``: their values, for inlining."""
    stores: dict[str, int] = {}
    values: dict[str, ast.expr] = {}
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, _DEFS):
            stores[node.name] = stores.get(node.name, 0) + 1
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            if isinstance(node.targets[0], ast.Name):
                values[node.targets[0].id] = node.value
        elif (
            isinstance(node, ast.AnnAssign)
            and node.value is not None
            and isinstance(node.target, ast.Name)
        ):
            values[node.target.id] = node.value
        stack.extend(ast.iter_child_nodes(node))
    return {name: value for name, value in values.items() if stores.get(name) == 1}


def _stmt_span(node: ast.stmt) -> tuple[int, int]:
    """Lines of a simple statement, or of a compound statement's header."""
    if not hasattr(node, "body"):
        return node.lineno, node.end_lineno or node.lineno
    end = node.lineno
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.stmt | ast.excepthandler | ast.match_case):
            continue
        end = max(end, getattr(child, "end_lineno", None) or end)
    return node.lineno, end


class _Module:
    """One parsed file of a release: its defs by qualname, constants and imports."""

    def __init__(self, release: _Release, path: str, tree: ast.Module) -> None:
        self.release = release
        self.path = path
        self.tree = tree
        self.defs: dict[str, list[_Def]] = {}
        self._names: tuple[dict[str, ast.expr], dict[str, tuple[str, str]]] | None = None
        self._texts: dict[str, str | None] = {}
        self._busy: set[str] = set()
        self._collected: dict[int, _Collector] = {}
        self._index_defs(tree.body, "", in_function=False)

    def _index_defs(self, body: list[ast.stmt], prefix: str, *, in_function: bool) -> None:
        """Record every def and class under its ``co_qualname``."""
        for node in _nested_defs(body):
            sep = ".<locals>." if in_function else "."
            qualname = f"{prefix}{sep}{node.name}" if prefix else node.name
            self.defs.setdefault(qualname, []).append(node)
            is_function = not isinstance(node, ast.ClassDef)
            self._index_defs(node.body, qualname, in_function=is_function)

    @property
    def constants(self) -> dict[str, ast.expr]:
        """Module-level ``NAME = value`` assignments (the first of each name)."""
        return self._index_names()[0]

    @property
    def imports(self) -> dict[str, tuple[str, str]]:
        """``from x import y as z`` anywhere in the file: ``z -> (absolute x, y)``."""
        return self._index_names()[1]

    def _index_names(self) -> tuple[dict[str, ast.expr], dict[str, tuple[str, str]]]:
        """Module-level string constants and imported names, for inlining (built on demand)."""
        if self._names is not None:
            return self._names
        constants: dict[str, ast.expr] = {}
        imports: dict[str, tuple[str, str]] = {}
        for node in _statements(self.tree.body, into_defs=False):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name):
                    constants.setdefault(target.id, node.value)
            elif (
                isinstance(node, ast.AnnAssign)
                and node.value is not None
                and isinstance(node.target, ast.Name)
            ):
                constants.setdefault(node.target.id, node.value)
        for node in _statements(self.tree.body, into_defs=True):
            if isinstance(node, ast.ImportFrom):
                base = self.resolve_from(node.module, node.level)
                if base is None:
                    continue
                for alias in node.names:
                    if alias.name != "*":
                        imports.setdefault(alias.asname or alias.name, (base, alias.name))
        self._names = (constants, imports)
        return self._names

    def resolve_from(self, module: str | None, level: int) -> str | None:
        """The absolute dotted module of ``from <level dots><module> import ...``."""
        if level == 0:
            return module
        package = self.path.split("/")[:-1]
        if level - 1 > len(package):
            return None
        base = package[: len(package) - (level - 1)]
        return ".".join(base + (module.split(".") if module else []))

    def constant_text(self, name: str) -> str | None:
        """The text of a string constant defined (or imported) at module level."""
        if name in self._texts:
            return self._texts[name]
        if name in self._busy or len(self._busy) > 8:
            return None
        self._busy.add(name)
        try:
            text: str | None = None
            expr = self.constants.get(name)
            if expr is not None:
                text = _Collector(self).render(expr, [])
            elif name in self.imports and _UPPER_RE.match(name):  # constants, by convention
                dotted, original = self.imports[name]
                other = self.release.module_by_dotted(dotted)
                if other is not None:
                    text = other.constant_text(original)
        finally:
            self._busy.discard(name)
        self._texts[name] = text
        return text

    def resolve_class(self, name: str, depth: int = 0) -> tuple[_Module, ast.ClassDef] | None:
        """A module-level class of this release named ``name`` here (defined or imported)."""
        for node in self.defs.get(name, []):
            if isinstance(node, ast.ClassDef):
                return self, node
        if name in self.imports and depth < 4:
            dotted, original = self.imports[name]
            other = self.release.module_by_dotted(dotted)
            if other is not None:
                return other.resolve_class(original, depth + 1)
        return None

    def scope_nodes(self, qualname: str) -> list[ast.Module | _Def]:
        """The code object(s) a qualname names (``<module>`` is the module body)."""
        if qualname == "<module>":
            return [self.tree]
        return list(self.defs.get(qualname, []))

    def fragments(self, scope: ast.Module | _Def) -> _Collector:
        """The strings one scope builds, in source order (collected once per scope)."""
        collector = self._collected.get(id(scope))
        if collector is None:
            collector = _Collector(self)
            collector.scope(scope)
            self._collected[id(scope)] = collector
        return collector


class _Collector:
    """Collects the strings a scope builds, rendering f-strings, ``%``, ``.format`` and ``+``."""

    def __init__(self, module: _Module) -> None:
        self.module = module
        self.fragments: list[_Fragment] = []
        self.raises: list[tuple[int, int]] = []
        self.raised: list[tuple[str, tuple[int, int]]] = []
        self._locals: dict[str, ast.expr] = {}
        self._local_texts: dict[str, str | None] = {}

    def scope(self, node: ast.Module | _Def) -> None:
        """Collect one scope's body, leaving nested defs and classes to their own scopes."""
        if not isinstance(node, ast.Module):
            self._locals = _single_assignments(node.body)
        for stmt in node.body:
            self._walk(stmt, stmt)

    def _walk(self, node: ast.AST, stmt: ast.stmt) -> None:
        """Record the strings under ``node``; ``stmt`` is the statement that holds it."""
        if isinstance(node, ast.stmt):
            if isinstance(node, _DEFS):
                for expr in _outer_exprs(node):
                    self._walk(expr, node)
                return
            stmt = node
            if isinstance(node, ast.Raise | ast.Assert):
                self.raises.append(_stmt_span(node))
            if isinstance(node, ast.Raise) and node.exc is not None:
                exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                if isinstance(exc, ast.Name):
                    self.raised.append((exc.id, _stmt_span(node)))
        if isinstance(node, ast.expr):
            holes: list[ast.expr] = []
            text = self.render(node, holes)
            if text is not None:
                start, end = _stmt_span(stmt)
                stored = isinstance(stmt, ast.Assign | ast.AugAssign | ast.AnnAssign)
                self.fragments.append(_Fragment(text, start, end, stored))
                for hole in holes:
                    self._walk(hole, stmt)
                return
        for child in ast.iter_child_nodes(node):
            self._walk(child, stmt)

    def render(self, node: ast.expr, holes: list[ast.expr]) -> str | None:
        """The text an expression builds with holes for dynamic parts; ``None`` if no string."""
        if isinstance(node, ast.Constant):
            return node.value if isinstance(node.value, str) else None
        if isinstance(node, ast.JoinedStr):
            parts: list[str] = []
            for value in node.values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    parts.append(value.value)
                elif isinstance(value, ast.FormattedValue):
                    inline = None
                    if value.conversion == -1 and value.format_spec is None:
                        inline = self._inline(value.value)
                    if inline is None:
                        parts.append(_HOLE)
                        holes.append(value.value)
                    else:
                        parts.append(inline)
            return "".join(parts)
        if isinstance(node, ast.Name):
            return self._inline(node)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left = self.render(node.left, holes)
            right = self.render(node.right, holes)
            if left is None and right is None:
                return None
            if left is None:
                holes.append(node.left)
            if right is None:
                holes.append(node.right)
            return (_HOLE if left is None else left) + (_HOLE if right is None else right)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            left = self.render(node.left, holes)
            if left is None:
                return None
            holes.append(node.right)
            return _percent_holes(left)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            return self._render_call(node, node.func, holes)
        return None

    def _render_call(
        self, node: ast.Call, func: ast.Attribute, holes: list[ast.expr]
    ) -> str | None:
        """``"...".format(...)`` and ``logger.warning("... %s", x)`` build text too."""
        args = [a.value if isinstance(a, ast.Starred) else a for a in node.args]
        kwargs = [k.value for k in node.keywords]
        if func.attr == "format":
            receiver = self.render(func.value, holes)
            if receiver is None:
                return None
            holes.extend(args + kwargs)
            return _brace_holes(receiver)
        if func.attr in _LOG_METHODS:
            at = 1 if func.attr == "log" else 0
            if len(args) <= at + 1:
                return None  # no %-arguments: the message is walked as a plain string
            message = self.render(args[at], holes)
            if message is None:
                return None
            holes.extend(args[:at] + args[at + 1 :] + kwargs)
            return _percent_holes(message)
        return None

    def _inline(self, node: ast.expr) -> str | None:
        """The text of a name bound once to a built string in this scope or the module."""
        if not isinstance(node, ast.Name):
            return None
        name = node.id
        if name in self._locals:
            if name not in self._local_texts:
                self._local_texts[name] = None  # guards against self-reference
                self._local_texts[name] = self.render(self._locals[name], [])
            return self._local_texts[name]
        return self.module.constant_text(name)


# --------------------------------------------------------------------------------------------
# The release index (mentions)
# --------------------------------------------------------------------------------------------


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


def _parse(source: bytes, filename: str) -> ast.Module:
    """Parse without the SyntaxWarnings old releases provoke."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(source, filename=filename)


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
            tree = _parse(Path(path).read_bytes(), path)
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
                if _UPPER_RE.match(node.id):
                    names.add(node.id)
            elif isinstance(node, ast.Attribute):
                if _UPPER_RE.match(node.attr):
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


class _Release:
    """One release's source directory: parsed modules on demand and the mention index."""

    def __init__(self, package: str, version: str, root: Path) -> None:
        self.package = package
        self.version = version
        self.root = root
        self.label = f"{package}=={version}"
        self._modules: dict[str, _Module | str] = {}
        self._index: ReleaseIndex | None = None

    def module(self, path: str) -> _Module | str:
        """The parsed file at a package-relative path, or why there is none."""
        if path in self._modules:
            return self._modules[path]
        parts = path.split("/")
        result: _Module | str
        if any(part in ("", ".", "..") for part in parts) or not path.endswith(".py"):
            result = f"{path} is not a package-relative source path"
        else:
            file = self.root.joinpath(*parts)
            if not file.is_file():
                result = f"{path} does not exist in {self.label}"
            else:
                try:
                    result = _Module(self, path, _parse(file.read_bytes(), str(file)))
                except SyntaxError as err:
                    result = f"{path} cannot be parsed: {err.msg} (line {err.lineno})"
                except (OSError, ValueError, RecursionError) as err:
                    result = f"{path} cannot be read: {err}"
        self._modules[path] = result
        return result

    def module_by_dotted(self, dotted: str) -> _Module | None:
        """The parsed module ``a.b.c`` of this release (``a/b/c.py`` or ``a/b/c/__init__.py``)."""
        if not dotted or dotted.split(".")[0] != self.root_package:
            return None
        base = dotted.replace(".", "/")
        for candidate in (f"{base}.py", f"{base}/__init__.py"):
            if self.root.joinpath(*candidate.split("/")).is_file():
                found = self.module(candidate)
                return found if isinstance(found, _Module) else None
        return None

    @property
    def root_package(self) -> str:
        """The import name of the release's package."""
        return top_level(self.package)

    def index(self, progress: Callable[[str], None] | None = None) -> ReleaseIndex:
        """The mention index: read from the release's cache file, else built (and saved)."""
        if self._index is not None:
            return self._index
        cache = self.root / INDEX_FILE
        if cache.is_file():
            try:
                self._index = ReleaseIndex.from_json(json.loads(cache.read_text("utf-8")))
                return self._index
            except (OSError, ValueError, KeyError, TypeError):
                pass
        if progress:
            progress(f"indexing {self.label} (once; cached afterwards)")
        self._index = build_index(self.root)
        if (self.root / RELEASE_MARKER).is_file():  # a directory errhints fetched: keep it
            tmp = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
            try:
                tmp.write_text(json.dumps(self._index.to_json()), encoding="utf-8")
                os.replace(tmp, cache)
            except OSError:
                tmp.unlink(missing_ok=True)
        return self._index


# --------------------------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One fact checked against one release: a site, a context frame or a mention."""

    check: str  # "site", "context", "flag", "key", "env" or "external"
    subject: str
    release: str
    status: Status
    detail: str = ""
    line: int | None = None
    warning: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view."""
        data: dict[str, Any] = {
            "check": self.check,
            "subject": self.subject,
            "release": self.release,
            "status": self.status,
            "detail": self.detail,
        }
        if self.line is not None:
            data["line"] = self.line
        if self.warning:
            data["warning"] = self.warning
        return data


@dataclass(frozen=True, slots=True)
class EntryReport:
    """What verifying one entry found: its status and every check behind it."""

    id: str
    source: str
    category: Category
    status: Status
    checks: tuple[CheckResult, ...]
    reason: str = ""  # why the entry was skipped

    @property
    def failures(self) -> list[str]:
        """One line per failed check."""
        return [f"{c.check} {c.subject}: {c.detail}" for c in self.checks if c.status == "failed"]

    @property
    def warnings(self) -> list[str]:
        """One line per warning (a moved line, a site gone in a newer release)."""
        return [f"{c.check} {c.subject}: {c.warning}" for c in self.checks if c.warning]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view."""
        data: dict[str, Any] = {
            "id": self.id,
            "source": self.source,
            "category": self.category,
            "status": self.status,
            "checks": [c.to_dict() for c in self.checks],
        }
        if self.reason:
            data["reason"] = self.reason
        return data


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """The result of :func:`verify_catalog`: per-entry reports and the releases used."""

    entries: tuple[EntryReport, ...]
    releases: Mapping[str, str] = field(default_factory=dict)  # label -> path or why missing
    elapsed: float = 0.0

    def with_status(self, status: Status, category: Category | None = None) -> list[EntryReport]:
        """Entries with this status (and category, if given)."""
        return [
            e
            for e in self.entries
            if e.status == status and (category is None or e.category == category)
        ]

    @property
    def failed(self) -> list[EntryReport]:
        """Entries with at least one failed check."""
        return self.with_status("failed")

    @property
    def skipped(self) -> list[EntryReport]:
        """Entries nothing could be checked for."""
        return self.with_status("skipped")

    @property
    def in_package_checked(self) -> int:
        """In-package entries (those with sites) that were checked, not skipped."""
        return sum(e.category == "in-package" and e.status != "skipped" for e in self.entries)

    @property
    def in_package_ok(self) -> int:
        """In-package entries whose every check passed."""
        return len(self.with_status("ok", "in-package"))

    @property
    def context_checked(self) -> int:
        """Entries without sites (context or mentions only) that were checked."""
        return sum(e.category != "in-package" and e.status != "skipped" for e in self.entries)

    @property
    def percent(self) -> float | None:
        """Share of checked in-package entries that verified, or ``None`` if none was checked."""
        total = self.in_package_checked
        return 100.0 * self.in_package_ok / total if total else None

    def summary(self) -> str:
        """``verified N of M in-package entries (K context entries checked, S skipped): P%``."""
        pct = "n/a" if self.percent is None else f"{self.percent:.1f}%"
        return (
            f"verified {self.in_package_ok} of {self.in_package_checked} in-package entries "
            f"({self.context_checked} context entries checked, {len(self.skipped)} skipped): {pct}"
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view, the shape of ``errhints catalog verify --json``."""
        return {
            "summary": {
                "in_package_checked": self.in_package_checked,
                "in_package_ok": self.in_package_ok,
                "percent": self.percent,
                "context_checked": self.context_checked,
                "failed": len(self.failed),
                "skipped": len(self.skipped),
                "elapsed_seconds": round(self.elapsed, 3),
                "text": self.summary(),
            },
            "releases": dict(self.releases),
            "entries": [e.to_dict() for e in self.entries],
        }


# --------------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Found:
    """Where a template's pieces were found: first line, accepted line range, description."""

    line: int
    span: tuple[int, int]
    where: str


def _stream(fragments: Sequence[_Fragment]) -> tuple[str, list[int]]:
    """Join fragments into one searchable text; return it with each fragment's offset."""
    offsets: list[int] = []
    pos = 0
    for frag in fragments:
        offsets.append(pos)
        pos += len(frag.text) + 1
    return _SEP.join(f.text for f in fragments), offsets


def _fragment_at(offsets: list[int], pos: int) -> int:
    """Index of the fragment holding stream offset ``pos``."""
    lo, hi = 0, len(offsets) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if offsets[mid] <= pos:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _find_pieces(
    fragments: Sequence[_Fragment], pieces: Sequence[str]
) -> tuple[list[tuple[int, int]], str]:
    """Every place the pieces occur in order: (first, last) fragment indexes; or the miss."""
    text, offsets = _stream(fragments)
    matches: list[tuple[int, int]] = []
    start = text.find(pieces[0])
    if start < 0:
        return [], f"{pieces[0]!r} is not built there"
    while start >= 0 and len(matches) < _MAX_MATCHES:
        pos = start + len(pieces[0])
        last = start
        for i, piece in enumerate(pieces[1:], 1):
            found = text.find(piece, pos)
            if found < 0:
                if matches:
                    return matches, ""
                where = f"(piece {i + 1} of {len(pieces)}) is not built after {pieces[i - 1]!r}"
                return [], f"{piece!r} {where}"
            last = found
            pos = found + len(piece)
        matches.append((_fragment_at(offsets, start), _fragment_at(offsets, last)))
        start = text.find(pieces[0], start + 1)
    return matches, ""


def _span(collector: _Collector, fragments: Sequence[_Fragment], first: int, last: int) -> _Found:
    """The lines a match covers, extended to the raise of a message kept in a variable."""
    lo, hi = fragments[first].start, fragments[last].end
    if fragments[last].stored:
        later = [span for span in collector.raises if span[0] >= fragments[last].start]
        if later:
            hi = max(hi, min(later)[1])
    return _Found(line=lo, span=(lo, hi), where="")


def _locate(
    module: _Module, function: str, template: Template, hint: int | None
) -> tuple[_Found | None, str]:
    """Find the template's literal pieces in the strings ``function`` builds, in order."""
    scopes = module.scope_nodes(function)
    if not scopes:
        return None, _missing_function(module, function)
    pieces = [p for p in template.literals if p]
    if not pieces:
        first = scopes[0]
        line = getattr(first, "lineno", 1)
        return _Found(line, (line, getattr(first, "end_lineno", None) or line), ""), ""
    miss = ""
    candidates: list[_Found] = []
    for scope in scopes:
        collector = module.fragments(scope)
        fragments = collector.fragments
        matches, miss_here = _find_pieces(fragments, pieces)
        miss = miss or miss_here
        candidates.extend(_span(collector, fragments, a, b) for a, b in matches)
        if not matches:
            extra = _class_fragments(module, collector)
            if extra:
                combined = list(fragments) + [frag for frag, _ in extra]
                matches, _ = _find_pieces(combined, pieces)
                for a, b in matches:
                    found = _span(collector, combined, a, b)
                    names = {extra[i - len(fragments)][1] for i in (a, b) if i >= len(fragments)}
                    where = ", ".join(sorted(names))
                    candidates.append(_Found(found.line, found.span, where))
    if not candidates:
        return None, f"template text not found in {function}: {miss}{_elsewhere(module, pieces)}"
    for found in candidates:
        if hint is not None and found.span[0] <= hint <= found.span[1]:
            return found, ""
    return candidates[0], ""


def _class_fragments(module: _Module, collector: _Collector) -> list[tuple[_Fragment, str]]:
    """Strings built by the exception classes the function raises (``__init__``/``__str__``)."""
    out: list[tuple[_Fragment, str]] = []
    seen: set[int] = set()
    for name, (start, end) in collector.raised:
        resolved = module.resolve_class(name)
        depth = 0
        while resolved is not None and depth < 4 and id(resolved[1]) not in seen:
            owner, cls = resolved
            seen.add(id(cls))
            for method in ("__init__", "__str__", "__repr__", "__new__"):
                for scope in owner.defs.get(f"{cls.name}.{method}", []):
                    for frag in owner.fragments(scope).fragments:
                        moved = _Fragment(frag.text, start, end)
                        out.append((moved, f"{cls.name}.{method}"))
            base = cls.bases[0] if cls.bases else None
            resolved = owner.resolve_class(base.id) if isinstance(base, ast.Name) else None
            depth += 1
    return out


def _missing_function(module: _Module, function: str) -> str:
    """Why a qualname is not in a file, with the qualnames that share its last part."""
    last = function.rpartition(".")[2]
    similar = sorted(q for q in module.defs if q.rpartition(".")[2] == last)
    if not similar:
        similar = difflib.get_close_matches(function, list(module.defs), n=3)
    hint = f" (there: {', '.join(similar[:5])})" if similar else ""
    return f"function {function} not found in {module.path}{hint}"


def _elsewhere(module: _Module, pieces: Sequence[str]) -> str:
    """Where else in the file the text is built, to help whoever fixes the site."""
    owners = []
    for qualname, nodes in module.defs.items():
        for node in nodes:
            if isinstance(node, ast.ClassDef):
                continue
            fragments = module.fragments(node).fragments
            if fragments and _find_pieces(fragments, pieces)[0]:
                owners.append(f"{qualname} (line {node.lineno})")
    return f"; it is built in {', '.join(owners[:3])}" if owners else ""


def _check_site(
    release: _Release, path: str, function: str, template: Template, hint: int | None
) -> CheckResult:
    """Check that a release builds the template's literal text in ``path``:``function``."""
    subject = f"{path}:{function}"
    module = release.module(path)
    if isinstance(module, str):
        return CheckResult("site", subject, release.label, "failed", module)
    try:
        found, why = _locate(module, function, template, hint)
    except RecursionError:
        return CheckResult("site", subject, release.label, "failed", "source nests too deeply")
    if found is None:
        return CheckResult("site", subject, release.label, "failed", why)
    if any(template.literals):
        detail = f"found at line {found.line}"
        detail += f" (built in {found.where})" if found.where else ""
    else:
        detail = f"function at line {found.line} (the template has no literal text)"
    warning = None
    if hint is not None and not found.span[0] <= hint <= found.span[1]:
        warning = f"line moved: found at line {found.line}, the entry says {hint}"
    return CheckResult("site", subject, release.label, "ok", detail, found.line, warning)


def _check_context(release: _Release, path: str, function: str | None) -> CheckResult:
    """Check that a context frame's file (and function, if given) exists in the release."""
    subject = f"{path}:{function}" if function else path
    module = release.module(path)
    if isinstance(module, str):
        return CheckResult("context", subject, release.label, "failed", module)
    if function is not None and not module.scope_nodes(function):
        why = _missing_function(module, function)
        return CheckResult("context", subject, release.label, "failed", why)
    return CheckResult("context", subject, release.label, "ok", "exists")


def _check_mention(
    release: _Release, kind: str, name: str, progress: Callable[[str], None] | None
) -> CheckResult:
    """Check that a mentioned flag, key or environment variable exists in the release."""
    index = release.index(progress)
    check = {"flags": "flag", "keys": "key", "env": "env"}[kind]
    found: str | None = None
    pool: Iterable[str] = ()
    if kind == "flags":
        flag = name.split("=", 1)[0].strip()
        if flag in index.flags:
            found = "a command-line flag"
        elif flag in index.strings:
            found = "a string literal"
        pool = index.flags
    elif kind == "keys":
        parts = [p for p in re.split(r"[.\[\]]+", name) if p]
        if name in index.fields or all(p in index.fields for p in parts):
            found = "a config field"
        elif name in index.strings or all(p in index.fields or p in index.strings for p in parts):
            found = "a string key"
        elif name in index.key_words:
            found = "a key the code reads (args.<key> or dict(<key>=...))"
        pool = index.fields
    else:
        if name in index.names:
            found = "an identifier"
        elif name in index.strings:
            found = "a string literal"
        elif name in index.env_words:
            found = "a word in a string"
        pool = index.names | index.env_words
    if found:
        return CheckResult(check, name, release.label, "ok", f"found as {found}")
    similar = [p for p in pool if p[:2] == name[:2]]  # keeps difflib fast on large releases
    close = difflib.get_close_matches(name, similar, n=3, cutoff=0.75)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return CheckResult(check, name, release.label, "failed", f"not found in {release.label}{hint}")


# --------------------------------------------------------------------------------------------
# Verifying a catalog
# --------------------------------------------------------------------------------------------


def _site_package(path: str) -> str:
    """The top-level package a package-relative path lies in."""
    return path.split("/", 1)[0]


def needed_releases(
    entries: Iterable[Entry], target: Mapping[str, str] | None = None
) -> list[ReleaseKey]:
    """The ``(package, version)`` releases verifying these entries reads, sorted."""
    target = target or {}
    keys: set[ReleaseKey] = set()
    for entry in entries:
        if entry.package in target:
            keys.add((entry.package, target[entry.package]))
            continue
        keys.add((entry.package, entry.release))
        for site in entry.sites:
            if _site_package(site.path) == top_level(entry.package):
                keys.add((entry.package, site.release))
    return sorted(keys)


class _Verifier:
    """Holds the releases (parsed lazily) while a catalog is verified."""

    def __init__(
        self,
        releases: Mapping[ReleaseKey, Path | None],
        reasons: Mapping[ReleaseKey, str],
        target: Mapping[str, str],
        progress: Callable[[str], None] | None,
    ) -> None:
        self.paths = releases
        self.reasons = reasons
        self.target = target
        self.progress = progress
        self.loaded: dict[ReleaseKey, _Release] = {}

    def release(self, package: str, version: str) -> _Release | str:
        """The release to check against, or why it is not available."""
        key = (package, version)
        if key in self.loaded:
            return self.loaded[key]
        label = f"{package}=={version}"
        if key not in self.paths:
            return f"no source of {label} was given"
        path = self.paths[key]
        if path is None:
            reason = self.reasons.get(key)
            return f"{label} is not available" + (f": {reason}" if reason else "")
        if not (path / top_level(package)).is_dir():
            return f"{label} at {path} has no {top_level(package)}/ directory"
        self.loaded[key] = _Release(package, version, path)
        return self.loaded[key]

    def entry(self, entry: Entry) -> EntryReport:
        """Verify one entry: its sites, context frames and mentions."""
        checks: list[CheckResult] = []
        version = self.target.get(entry.package, entry.release)
        checks.extend(self._sites(entry, version))
        for frame in entry.context:
            subject = f"{frame.path}:{frame.function}" if frame.function else frame.path
            frame_pkg = _site_package(frame.path)
            if frame_pkg != top_level(entry.package):
                why = f"frame is in {frame_pkg}, not in {entry.package}: not checked"
                checks.append(CheckResult("context", subject, "", "skipped", why))
                continue
            rel = self.release(entry.package, version)
            if isinstance(rel, str):
                checks.append(CheckResult("context", subject, "", "skipped", rel))
            else:
                checks.append(_check_context(rel, frame.path, frame.function))
        for kind in ("flags", "keys", "env"):
            for name in entry.mentions.get(kind, ()):
                rel = self.release(entry.package, version)
                if isinstance(rel, str):
                    check = {"flags": "flag", "keys": "key", "env": "env"}[kind]
                    checks.append(CheckResult(check, name, "", "skipped", rel))
                else:
                    checks.append(_check_mention(rel, kind, name, self.progress))
        for name in entry.mentions.get("external", ()):
            project = name.partition(":")[0]
            why = f"belongs to {project}, not checked against {entry.package}=={version}"
            checks.append(CheckResult("external", name, "", "skipped", why))
        category: Category = (
            "in-package" if entry.sites else ("context" if entry.context else "other")
        )
        # An in-package entry counts as verified only when one of its sites was found.
        deciding = [c for c in checks if c.check == "site"] if entry.sites else checks
        status: Status
        reason = ""
        if any(c.status == "failed" for c in checks):
            status = "failed"
        elif any(c.status == "ok" for c in deciding):
            status = "ok"
        else:
            status = "skipped"
            skipped = [c.detail for c in deciding if c.status == "skipped"]
            reason = skipped[0] if skipped else "nothing to verify (no sites, context or mentions)"
        return EntryReport(entry.id, entry.source, category, status, tuple(checks), reason)

    def _sites(self, entry: Entry, version: str) -> list[CheckResult]:
        """Site checks: each at its own release, or all against a chosen release."""
        top = top_level(entry.package)
        out: list[CheckResult] = []
        if entry.package not in self.target:
            for site in entry.sites:
                subject = f"{site.path}:{site.function}"
                if _site_package(site.path) != top:
                    why = f"site is outside {entry.package}: not checked"
                    out.append(CheckResult("site", subject, "", "skipped", why))
                    continue
                rel = self.release(entry.package, site.release)
                if isinstance(rel, str):
                    out.append(CheckResult("site", subject, "", "skipped", rel))
                else:
                    check = _check_site(rel, site.path, site.function, entry.template, site.line)
                    out.append(check)
            return out
        # A chosen release: each distinct (path, function) once; one found is enough.
        rel = self.release(entry.package, version)
        hints: dict[tuple[str, str], int | None] = {}
        for site in entry.sites:
            key = (site.path, site.function)
            if site.release == version or key not in hints:
                hints[key] = site.line if site.release == version else None
        for (path, function), hint in hints.items():
            subject = f"{path}:{function}"
            if _site_package(path) != top:
                why = f"site is outside {entry.package}: not checked"
                out.append(CheckResult("site", subject, "", "skipped", why))
            elif isinstance(rel, str):
                out.append(CheckResult("site", subject, "", "skipped", rel))
            else:
                out.append(_check_site(rel, path, function, entry.template, hint))
        if any(c.status == "ok" for c in out):
            out = [
                CheckResult(
                    c.check, c.subject, c.release, "skipped", c.detail, None, f"gone: {c.detail}"
                )
                if c.status == "failed"
                else c
                for c in out
            ]
        return out


def verify_catalog(
    entries: Iterable[Entry],
    *,
    releases: Mapping[ReleaseKey, Path | None],
    target: Mapping[str, str] | None = None,
    reasons: Mapping[ReleaseKey, str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> VerifyReport:
    """Check entries against released sources; never downloads anything.

    ``releases`` maps ``(package, version)`` to the directory holding that release's
    ``<package>/`` source tree (``None``: unavailable, ``reasons`` may say why). Entries are
    checked against their pinned releases (each site against its own ``release``), or, for a
    package in ``target`` (``{"sglang": "0.5.24"}``), against that release: then each
    distinct site is looked up there and one found is enough. Entries whose release is
    missing are skipped with the reason.
    """
    started = time.perf_counter()
    verifier = _Verifier(releases, reasons or {}, target or {}, progress)
    reports = tuple(verifier.entry(entry) for entry in entries)
    labels: dict[str, str] = {}
    for (package, version), path in sorted(releases.items()):
        why = (reasons or {}).get((package, version), "not available")
        labels[f"{package}=={version}"] = str(path) if path is not None else f"unavailable: {why}"
    return VerifyReport(reports, labels, time.perf_counter() - started)
