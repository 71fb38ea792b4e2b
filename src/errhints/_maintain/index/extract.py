"""Extract the error sites of one release's source tree with :mod:`ast` (never imported or run).

A site is a ``raise X(message)``, ``parser.error(message)``, ``assert cond, message``, or a
logged error or warning whose message is built from literal text: a string, an f-string,
``%``-formatting, ``.format()`` or a concatenation of those. Its message becomes a template in
the catalog's form: literal text with ``{{``/``}}`` for braces and one ``{expression}`` per
dynamic part (f-string fields as written, ``%s`` and ``.format`` arguments by their source).
Raises and asserts without a message, and messages without literal text, are only counted.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import string
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "EXTRACT_FORMAT",
    "FileSites",
    "RawSite",
    "ReleaseSites",
    "extract_release",
    "extract_source",
    "render_template",
]

#: Bump when what extraction records changes: cached per-release results are then rebuilt.
EXTRACT_FORMAT = 4
#: The longest guard kept (``ast.unparse`` text, shortened with ``...``).
MAX_GUARD = 120
#: The longest placeholder expression kept in a template.
MAX_PLACEHOLDER = 80

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_PERCENT_RE = re.compile(
    r"%(?:\((?P<key>[^)]*)\))?[#0 +\-]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?"
    r"(?P<conv>[diouxXeEfFgGcrsab%])"
)
_ERROR_LOG = ("error", "exception", "critical", "fatal")
_WARNING_LOG = ("warning", "warn")
_LOGGER_NAMES = frozenset({"logger", "log", "logging", "_logger", "_log", "LOGGER", "LOG"})
_ENV_CALLS = frozenset(
    {"getenv", "get_bool_env_var", "get_int_env_var", "get_float_env_var", "get_str_env_var"}
)
_LEVELS = {
    "ERROR": "log",
    "CRITICAL": "log",
    "FATAL": "log",
    "WARNING": "warning",
    "WARN": "warning",
}

Part = tuple[bool, str]  # (is_placeholder, text)
_Guard = tuple[ast.expr, bool] | None  # the condition and whether it is negated (else)


@dataclass(frozen=True, slots=True)
class RawSite:
    """One site in one release: what it raises or logs, where, under which condition."""

    kind: str  # "raise", "assert", "log" or "warning"
    exception: str
    template: str
    path: str
    function: str
    line: int
    guard: str
    refs: tuple[str, ...]  # names read: "self:x", "sa:x", "hp:x", "env:X"

    def to_json(self) -> list[Any]:
        """A compact list form for the per-release cache."""
        return [
            self.kind,
            self.exception,
            self.template,
            self.path,
            self.function,
            self.line,
            self.guard,
            list(self.refs),
        ]

    @classmethod
    def from_json(cls, data: Sequence[Any]) -> RawSite:
        """Read :meth:`to_json` back."""
        kind, exc, tpl, path, func, line, guard, refs = data
        return cls(str(kind), str(exc), str(tpl), str(path), str(func), int(line), str(guard),
                   tuple(str(r) for r in refs))  # fmt: skip


@dataclass(slots=True)
class FileSites:
    """The sites of one file and what was only counted there."""

    sites: list[RawSite] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def count(self, what: str) -> None:
        """Count one occurrence of something not indexed (``bare_raise``, ``dynamic``...)."""
        self.counts[what] = self.counts.get(what, 0) + 1


@dataclass(slots=True)
class ReleaseSites:
    """Everything extracted from one release: sites, counts and its settings' names."""

    dist: str
    version: str
    sites: list[RawSite]
    counts: dict[str, int]
    flags: dict[str, str]  # ServerArgs field -> --flag (SGLang)
    fields: list[str]  # settings fields (ServerArgs fields, LlamaFactory hparams keys)
    unparsed: list[str]

    def to_json(self) -> dict[str, Any]:
        """The per-release cache form."""
        return {
            "format": EXTRACT_FORMAT,
            "dist": self.dist,
            "version": self.version,
            "sites": [s.to_json() for s in self.sites],
            "counts": dict(sorted(self.counts.items())),
            "flags": dict(sorted(self.flags.items())),
            "fields": sorted(self.fields),
            "unparsed": sorted(self.unparsed),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReleaseSites:
        """Read :meth:`to_json` back; ``ValueError`` for another format."""
        if data.get("format") != EXTRACT_FORMAT:
            raise ValueError("extraction format differs")
        return cls(
            dist=str(data["dist"]),
            version=str(data["version"]),
            sites=[RawSite.from_json(s) for s in data["sites"]],
            counts={str(k): int(v) for k, v in data["counts"].items()},
            flags={str(k): str(v) for k, v in data["flags"].items()},
            fields=[str(f) for f in data["fields"]],
            unparsed=[str(u) for u in data["unparsed"]],
        )


# --------------------------------------------------------------------------------------------
# Templates
# --------------------------------------------------------------------------------------------


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _placeholder(text: str) -> str:
    """Placeholder text the template parser reads back: one line, balanced braces, short."""
    text = " ".join(text.split())
    if not _balanced(text):
        text = text.replace("{", "(").replace("}", ")")
    if len(text) > MAX_PLACEHOLDER:
        text = text[: MAX_PLACEHOLDER - 3] + "..."
        if not _balanced(text):
            text = text.replace("{", "(").replace("}", ")")
    return text or "?"


def render_template(parts: Sequence[Part]) -> str:
    """Join rendered parts into catalog template text (literal braces doubled)."""
    out: list[str] = []
    for is_ph, text in parts:
        if is_ph:
            out.append("{" + _placeholder(text) + "}")
        else:
            out.append(text.replace("{", "{{").replace("}", "}}"))
    return "".join(out)


def _unparse(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # an AST ast.unparse cannot print: keep a neutral name
        return "?"


def _percent_parts(text: str, args: Sequence[ast.expr], named: dict[str, str]) -> list[Part]:
    """``"a %s b" % x``: literal pieces and one placeholder per conversion."""
    parts: list[Part] = []
    pos = 0
    index = 0
    for m in _PERCENT_RE.finditer(text):
        parts.append((False, text[pos : m.start()]))
        pos = m.end()
        if m.group("conv") == "%":
            parts.append((False, "%"))
            continue
        key = m.group("key")
        if key is not None:
            parts.append((True, named.get(key, key)))
        elif index < len(args):
            parts.append((True, _unparse(args[index])))
            index += 1
        else:
            parts.append((True, "?"))
    parts.append((False, text[pos:]))
    return parts


def _format_parts(text: str, args: Sequence[ast.expr], kwargs: dict[str, ast.expr]) -> list[Part]:
    """``"a {} b {name}".format(x, name=y)``: placeholders take the arguments' source."""
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError:
        return [(False, text)]
    parts: list[Part] = []
    auto = 0
    for literal, name, _spec, _conv in parsed:
        parts.append((False, literal))
        if name is None:
            continue
        head = re.match(r"[^.\[]*", name)
        first = head.group(0) if head else name
        rest = name[len(first) :]
        if first == "":
            expr = args[auto] if auto < len(args) else None
            auto += 1
        elif first.isdigit():
            expr = args[int(first)] if int(first) < len(args) else None
        else:
            expr = kwargs.get(first)
        source = _unparse(expr) if expr is not None else first or "?"
        parts.append((True, source + rest))
    return parts


class _Renderer:
    """Renders a message expression to parts; inlines names bound once to a message."""

    def __init__(self, body: Sequence[ast.stmt], module: dict[str, ast.expr]) -> None:
        self.body = body
        self._local: dict[str, ast.expr] | None = None
        self.module = module
        self._busy: set[str] = set()

    def parts(self, node: ast.expr) -> list[Part] | None:
        """The parts ``node`` builds, or ``None`` when it is not a string built from literals."""
        if isinstance(node, ast.Constant):
            return [(False, node.value)] if isinstance(node.value, str) else None
        if isinstance(node, ast.JoinedStr):
            out: list[Part] = []
            for value in node.values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    out.append((False, value.value))
                elif isinstance(value, ast.FormattedValue):
                    out.append((True, self._field(value)))
            return out
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left = self.parts(node.left)
            right = self.parts(node.right)
            if left is None and right is None:
                return None
            return (left or [(True, _unparse(node.left))]) + (
                right or [(True, _unparse(node.right))]
            )
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            if not isinstance(node.left, ast.Constant) or not isinstance(node.left.value, str):
                return None
            operand = node.right
            named: dict[str, str] = {}
            args: list[ast.expr] = [operand]
            if isinstance(operand, ast.Tuple):
                args = list(operand.elts)
            elif isinstance(operand, ast.Dict):
                args = []
                named = {
                    k.value: _unparse(v)
                    for k, v in zip(operand.keys, operand.values, strict=False)
                    if isinstance(k, ast.Constant) and isinstance(k.value, str)
                }
            return _percent_parts(node.left.value, args, named)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format"
        ):
            receiver = node.func.value
            if isinstance(receiver, ast.Constant) and isinstance(receiver.value, str):
                kwargs = {k.arg: k.value for k in node.keywords if k.arg}
                return _format_parts(receiver.value, node.args, kwargs)
            return None
        if isinstance(node, ast.Name):
            return self._inline(node.id)
        return None

    def _field(self, value: ast.FormattedValue) -> str:
        text = _unparse(value.value)
        if value.conversion != -1:
            text += "!" + chr(value.conversion)
        if value.format_spec is not None:
            spec = _unparse(value.format_spec)
            # ast.unparse gives f'...' for the spec; keep its inside only
            if spec.startswith(("f'", 'f"')):
                spec = spec[2:-1]
            text += ":" + spec
        return text

    def _inline(self, name: str) -> list[Part] | None:
        if self._local is None:
            self._local = _single_assignments(self.body)
        expr = self._local.get(name)
        if expr is None:
            expr = self.module.get(name)
        if expr is None or name in self._busy:
            return None
        self._busy.add(name)
        try:
            return self.parts(expr)
        finally:
            self._busy.discard(name)


def _clean(parts: Sequence[Part]) -> list[Part]:
    """Merge adjacent literals and drop empty ones."""
    out: list[Part] = []
    for is_ph, text in parts:
        if not is_ph and not text:
            continue
        if not is_ph and out and not out[-1][0]:
            out[-1] = (False, out[-1][1] + text)
        else:
            out.append((is_ph, text))
    return out


def _has_literal(parts: Sequence[Part]) -> bool:
    return any(not is_ph and any(ch.isalnum() for ch in text) for is_ph, text in parts)


# --------------------------------------------------------------------------------------------
# Guards and settings
# --------------------------------------------------------------------------------------------

_FLIP = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
}


def _negate(test: ast.expr) -> ast.expr:
    """``not test``, simplified where the result reads naturally."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return test.operand
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        flipped = _FLIP.get(type(test.ops[0]))
        if flipped is not None:
            return ast.Compare(test.left, [flipped()], test.comparators)
    return ast.UnaryOp(ast.Not(), test)


def _shorten(text: str, limit: int = MAX_GUARD) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _guard_text(guard: _Guard) -> str:
    """The guard as shortened source text (``not`` applied for an ``else`` branch)."""
    if guard is None:
        return ""
    test, negated = guard
    return _shorten(_unparse(_negate(test) if negated else test))


def _refs(nodes: Sequence[ast.AST]) -> set[str]:
    """Names of settings a guard or message reads: attributes, hparams and env variables."""
    found: set[str] = set()
    for root in nodes:
        called = {id(n.func) for n in ast.walk(root) if isinstance(n, ast.Call)}
        for node in ast.walk(root):
            if isinstance(node, ast.Attribute) and id(node) not in called:
                base = node.value
                holder = base.id if isinstance(base, ast.Name) else ""
                if isinstance(base, ast.Attribute):
                    holder = base.attr
                elif isinstance(base, ast.Call):
                    callee = base.func
                    holder = getattr(callee, "id", getattr(callee, "attr", ""))
                    if holder == "get_global_server_args":
                        holder = "server_args"
                if holder in ("self", "view", "cfg") and isinstance(base, ast.Name):
                    found.add(f"self:{node.attr}")
                elif holder in ("server_args", "_server_args"):
                    found.add(f"sa:{node.attr}")
                elif holder.endswith("_args") and holder != "server_args":
                    found.add(f"hp:{node.attr}")
                elif holder == "envs" and node.attr.isupper():
                    found.add(f"env:{node.attr}")
            elif isinstance(node, ast.Subscript):
                value = node.value
                key = node.slice
                if (
                    isinstance(value, ast.Attribute)
                    and value.attr == "environ"
                    and isinstance(key, ast.Constant)
                    and isinstance(key.value, str)
                ):
                    found.add(f"env:{key.value}")
                elif (
                    isinstance(value, ast.Name)
                    and value.id == "global_server_args_dict"
                    and isinstance(key, ast.Constant)
                    and isinstance(key.value, str)
                ):
                    found.add(f"sa:{key.value}")
            elif isinstance(node, ast.Call) and node.args:
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                first = node.args[0]
                if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                    continue
                is_environ_get = (
                    name == "get"
                    and isinstance(func, ast.Attribute)
                    and isinstance(func.value, ast.Attribute)
                    and func.value.attr == "environ"
                )
                if name in _ENV_CALLS or is_environ_get:
                    found.add(f"env:{first.value}")
    return found


# --------------------------------------------------------------------------------------------
# Walking one file
# --------------------------------------------------------------------------------------------


def _single_assignments(body: Sequence[ast.stmt]) -> dict[str, ast.expr]:
    """Names a function binds exactly once by ``name = value`` (not in nested defs)."""
    stores: dict[str, int] = {}
    values: dict[str, ast.expr] = {}
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (*_DEFS, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            values[node.targets[0].id] = node.value
        stack.extend(ast.iter_child_nodes(node))
    return {k: v for k, v in values.items() if stores.get(k) == 1}


def _module_strings(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level ``NAME = <string>`` constants (upper-case names only)."""
    found: dict[str, ast.expr] = {}
    for stmt in tree.body:
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id.isupper()
        ):
            found.setdefault(stmt.targets[0].id, stmt.value)
    return found


def _statements(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement under ``body``, nested blocks and defs included (no expressions)."""
    for stmt in body:
        yield stmt
        for name in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, name, None)
            if isinstance(inner, list):
                yield from _statements(inner)
        for handler in getattr(stmt, "handlers", ()):
            yield from _statements(handler.body)
        for case in getattr(stmt, "cases", ()):
            yield from _statements(case.body)


def _dotted(path: str) -> str:
    """``a/b/c.py`` -> ``a.b.c``; ``a/b/__init__.py`` -> ``a.b``."""
    module = path[:-3] if path.endswith(".py") else path
    if module.endswith("/__init__"):
        module = module[: -len("/__init__")]
    return module.replace("/", ".")


class _FileWalker:
    """Finds the sites of one parsed file."""

    def __init__(self, path: str, tree: ast.Module, top: str, result: FileSites) -> None:
        self.path = path
        self.top = top
        self.result = result
        self.module = _dotted(path)
        self.module_strings = _module_strings(tree)
        self.classes = {s.name for s in tree.body if isinstance(s, ast.ClassDef)}
        self.imports: dict[str, str] = {}
        package = path.split("/")[:-1]
        for node in _statements(tree.body):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    if node.level - 1 > len(package):
                        continue
                    base = package[: len(package) - (node.level - 1)]
                    source = ".".join(base + (node.module.split(".") if node.module else []))
                else:
                    source = node.module or ""
                if source.split(".")[0] != top:
                    continue
                for alias in node.names:
                    if alias.name != "*":
                        self.imports.setdefault(
                            alias.asname or alias.name, f"{source}.{alias.name}"
                        )
        self.renderer = _Renderer((), self.module_strings)

    def walk(self, tree: ast.Module) -> None:
        self._body(tree.body, "<module>", function=False, guard=None, prefix="")

    def _body(
        self,
        body: Sequence[ast.stmt],
        qualname: str,
        *,
        function: bool,
        guard: _Guard,
        prefix: str,
    ) -> None:
        for stmt in body:
            self._stmt(stmt, qualname, function=function, guard=guard, prefix=prefix)

    def _stmt(
        self, stmt: ast.stmt, qualname: str, *, function: bool, guard: _Guard, prefix: str
    ) -> None:
        if isinstance(stmt, (*_DEFS, ast.ClassDef)):
            sep = ".<locals>." if function else "."
            name = f"{prefix}{sep}{stmt.name}" if prefix else stmt.name
            if isinstance(stmt, ast.ClassDef):
                self._body(stmt.body, name, function=False, guard=None, prefix=name)
            else:
                saved = self.renderer
                self.renderer = _Renderer(stmt.body, self.module_strings)
                self._body(stmt.body, name, function=True, guard=None, prefix=name)
                self.renderer = saved
            return
        if isinstance(stmt, ast.If):
            test = (stmt.test, False)
            self._body(stmt.body, qualname, function=function, guard=test, prefix=prefix)
            if stmt.orelse:
                other = (stmt.test, True)
                self._body(stmt.orelse, qualname, function=function, guard=other, prefix=prefix)
            return
        if isinstance(stmt, ast.Raise):
            self._raise(stmt, qualname, guard)
            return
        if isinstance(stmt, ast.Assert):
            self._assert(stmt, qualname)
            return
        if isinstance(stmt, ast.Expr | ast.Return) and isinstance(stmt.value, ast.Call):
            self._call(stmt.value, stmt.lineno, qualname, guard)
        for name in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, name, None)
            if isinstance(inner, list):
                self._body(inner, qualname, function=function, guard=guard, prefix=prefix)
        for handler in getattr(stmt, "handlers", ()):
            self._body(handler.body, qualname, function=function, guard=guard, prefix=prefix)
        for case in getattr(stmt, "cases", ()):
            self._body(case.body, qualname, function=function, guard=guard, prefix=prefix)

    def _exception_name(self, node: ast.expr) -> str:
        if isinstance(node, ast.Name):
            if node.id in self.classes:
                return f"{self.module}.{node.id}"
            return self.imports.get(node.id, node.id)
        return _unparse(node)

    def _message(self, call: ast.Call) -> ast.expr | None:
        if call.args:
            first = call.args[0]
            return None if isinstance(first, ast.Starred) else first
        for kw in call.keywords:
            if kw.arg in ("msg", "message", "detail", "reason", "error"):
                return kw.value
        return None

    def _add(
        self,
        kind: str,
        exception: str,
        message: ast.expr | None,
        line: int,
        qualname: str,
        guard: _Guard,
        extra_args: Sequence[ast.expr] = (),
    ) -> None:
        parts: list[Part] | None = None
        if message is not None:
            if extra_args and isinstance(message, ast.Constant) and isinstance(message.value, str):
                parts = _percent_parts(message.value, extra_args, {})
            else:
                parts = self.renderer.parts(message)
        if parts is None:
            self.result.count(f"dynamic_{kind}")
            return
        parts = _clean(parts)
        if not _has_literal(parts):
            self.result.count(f"dynamic_{kind}")
            return
        refs_from: list[ast.AST] = [guard[0]] if guard else []
        if message is not None:
            refs_from.append(message)
        refs_from.extend(extra_args)
        self.result.sites.append(
            RawSite(
                kind=kind,
                exception=exception,
                template=render_template(parts),
                path=self.path,
                function=qualname,
                line=line,
                guard=_guard_text(guard),
                refs=tuple(sorted(_refs(refs_from))),
            )
        )

    def _raise(self, stmt: ast.Raise, qualname: str, guard: _Guard) -> None:
        exc = stmt.exc
        if not isinstance(exc, ast.Call):
            self.result.count("bare_raise")
            return
        message = self._message(exc)
        if message is None:
            self.result.count("bare_raise")
            return
        exception = self._exception_name(exc.func)
        self._add("raise", exception, message, stmt.lineno, qualname, guard)

    def _assert(self, stmt: ast.Assert, qualname: str) -> None:
        if stmt.msg is None:
            self.result.count("bare_assert")
            return
        guard = (stmt.test, False)
        self._add("assert", "AssertionError", stmt.msg, stmt.lineno, qualname, guard)

    def _call(self, call: ast.Call, line: int, qualname: str, guard: _Guard) -> None:
        func = call.func
        if not isinstance(func, ast.Attribute):
            return
        receiver = func.value
        holder = receiver.id if isinstance(receiver, ast.Name) else ""
        if isinstance(receiver, ast.Attribute):
            holder = receiver.attr
        attr = func.attr
        if attr == "error" and "parser" in holder.lower():
            self._add("raise", "SystemExit", self._message(call), line, qualname, guard)
            return
        if holder not in _LOGGER_NAMES and not holder.lower().endswith("logger"):
            return
        args = [a for a in call.args if not isinstance(a, ast.Starred)]
        kind: str | None = None
        if attr.startswith(_ERROR_LOG):
            kind = "log"
        elif attr.startswith(_WARNING_LOG):
            kind = "warning"
        elif attr == "log" and args:
            level = args[0]
            level_name = level.attr if isinstance(level, ast.Attribute) else ""
            kind = _LEVELS.get(level_name)
            args = args[1:]
        if kind is None or not args:
            return
        self._add(kind, "", args[0], line, qualname, guard, args[1:])


def _parse(source: bytes, filename: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(source, filename=filename)


_MARKERS = (b"raise", b"assert", b"log", b".error(")


def extract_source(path: str, source: bytes, top: str) -> FileSites:
    """The sites of one file (``path`` package-relative, ``top`` the import name)."""
    result = FileSites()
    if not any(marker in source for marker in _MARKERS):
        return result
    tree = _parse(source, path)
    _FileWalker(path, tree, top, result).walk(tree)
    return result


# --------------------------------------------------------------------------------------------
# One release
# --------------------------------------------------------------------------------------------


def _files(root: Path, top: str) -> Iterator[tuple[str, Path]]:
    """``(package-relative path, file)`` for every ``.py`` file under ``root/top``, sorted."""
    base = root / top
    found: list[tuple[str, Path]] = []
    for folder, dirs, names in os.walk(base):
        dirs.sort()
        for name in names:
            if name.endswith(".py"):
                file = Path(folder) / name
                found.append((file.relative_to(root).as_posix(), file))
    yield from sorted(found)


#: Per-file results of the previous release extracted in this process: (path, digest) -> sites.
_FileCache = dict[tuple[str, str], FileSites]


def extract_release(
    dist: str,
    version: str,
    root: Path,
    top: str,
    *,
    cache_dir: Path | None = None,
    file_cache: _FileCache | None = None,
) -> ReleaseSites:
    """Extract every site of one release; read from / write to ``cache_dir`` when given.

    ``file_cache`` carries per-file results between releases of one build: a file whose bytes
    did not change is not parsed again. It is replaced by this release's files on return.
    """
    from .settings import settings_of

    cache_file = cache_dir / f"{dist}-{version}.json" if cache_dir is not None else None
    if cache_file is not None and cache_file.is_file():
        try:
            return ReleaseSites.from_json(json.loads(cache_file.read_text("utf-8")))
        except (OSError, ValueError, KeyError, TypeError):
            pass
    sites: list[RawSite] = []
    counts: dict[str, int] = {}
    unparsed: list[str] = []
    seen: _FileCache = {}
    trees: dict[str, bytes] = {}
    for rel, file in _files(root, top):
        data = file.read_bytes()
        key = (rel, hashlib.sha1(data).hexdigest())
        found = file_cache.get(key) if file_cache is not None else None
        if found is None:
            try:
                found = extract_source(rel, data, top)
            except (SyntaxError, ValueError, RecursionError):
                unparsed.append(rel)
                continue
        seen[key] = found
        sites.extend(found.sites)
        for what, n in found.counts.items():
            counts[what] = counts.get(what, 0) + n
        if "/hparams/" in rel or "/arg_groups/fields/" in rel or rel.endswith("server_args.py"):
            trees[rel] = data
    if file_cache is not None:
        file_cache.clear()
        file_cache.update(seen)
    flags, fields = settings_of(top, trees)
    result = ReleaseSites(dist, version, sites, counts, flags, fields, unparsed)
    if cache_file is not None:
        try:
            cache_file.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache_file.with_name(f"{cache_file.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(result.to_json()), encoding="utf-8")
            os.replace(tmp, cache_file)
        except OSError:
            pass
    return result
