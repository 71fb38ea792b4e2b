"""Reading one released source file with ``ast``: its defs, names, and the strings it builds.

A :class:`Module` indexes one parsed file (defs by ``co_qualname``, module constants,
imports); a :class:`Collector` renders the strings a scope builds (f-strings, ``%`` and
``.format()`` formatting, concatenations, constants from other modules) as
:class:`Fragment` text with holes for the dynamic parts. Sources are parsed, never imported
or run.
"""

from __future__ import annotations

import ast
import re
import string
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = ["UPPER_RE", "Collector", "Def", "Fragment", "Module", "Modules", "parse_source"]

_HOLE = "\x00"  # a dynamic part of a built string (a placeholder's value)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_LOG_METHODS = frozenset(
    {"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log"}
)
_PERCENT_RE = re.compile(
    r"%(?:\([^)]*\))?[#0 +\-]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?[diouxXeEfFgGcrsab%]"
)
UPPER_RE = re.compile(r"^[A-Z_][A-Z0-9_]*$")


class Modules(Protocol):
    """Where a :class:`Module` finds the other modules of its release (to follow imports)."""

    def module_by_dotted(self, dotted: str) -> Module | None: ...


Def = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


@dataclass(frozen=True, slots=True)
class Fragment:
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


def _nested_defs(body: Sequence[ast.stmt]) -> Iterator[Def]:
    """The defs and classes directly in a scope's statements (not inside other defs)."""
    for stmt in _statements(body, into_defs=False):
        if isinstance(stmt, _DEFS):
            yield stmt


def _outer_exprs(node: Def) -> list[ast.expr]:
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


class Module:
    """One parsed file of a release: its defs by qualname, constants and imports."""

    def __init__(self, release: Modules, path: str, tree: ast.Module) -> None:
        self.release = release
        self.path = path
        self.tree = tree
        self.defs: dict[str, list[Def]] = {}
        self._names: tuple[dict[str, ast.expr], dict[str, tuple[str, str]]] | None = None
        self._texts: dict[str, str | None] = {}
        self._busy: set[str] = set()
        self._collected: dict[int, Collector] = {}
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
                text = Collector(self).render(expr, [])
            elif name in self.imports and UPPER_RE.match(name):  # constants, by convention
                dotted, original = self.imports[name]
                other = self.release.module_by_dotted(dotted)
                if other is not None:
                    text = other.constant_text(original)
        finally:
            self._busy.discard(name)
        self._texts[name] = text
        return text

    def resolve_class(self, name: str, depth: int = 0) -> tuple[Module, ast.ClassDef] | None:
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

    def scope_nodes(self, qualname: str) -> list[ast.Module | Def]:
        """The code object(s) a qualname names (``<module>`` is the module body)."""
        if qualname == "<module>":
            return [self.tree]
        return list(self.defs.get(qualname, []))

    def fragments(self, scope: ast.Module | Def) -> Collector:
        """The strings one scope builds, in source order (collected once per scope)."""
        collector = self._collected.get(id(scope))
        if collector is None:
            collector = Collector(self)
            collector.scope(scope)
            self._collected[id(scope)] = collector
        return collector


class Collector:
    """Collects the strings a scope builds, rendering f-strings, ``%``, ``.format`` and ``+``."""

    def __init__(self, module: Module) -> None:
        self.module = module
        self.fragments: list[Fragment] = []
        self.raises: list[tuple[int, int]] = []
        self.raised: list[tuple[str, tuple[int, int]]] = []
        self._locals: dict[str, ast.expr] = {}
        self._local_texts: dict[str, str | None] = {}

    def scope(self, node: ast.Module | Def) -> None:
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
                self.fragments.append(Fragment(text, start, end, stored))
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
            parts = receiver.split("{}")
            if not kwargs and len(parts) == len(args) + 1 and "{" not in receiver.replace("{}", ""):
                # "Undefined dataset {} in {}.".format(name, DATA_CONFIG): a constant argument
                # is text the user sees, as an f-string's constant would be.
                out = [parts[0]]
                for arg, part in zip(args, parts[1:], strict=True):
                    text = self._inline(arg) if isinstance(arg, ast.Name) else None
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                        text = arg.value
                    if text is None or _HOLE in text:
                        holes.append(arg)
                        text = _HOLE
                    out.extend((text, part))
                return "".join(out)
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


def parse_source(source: bytes, filename: str) -> ast.Module:
    """Parse without the SyntaxWarnings old releases provoke."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(source, filename=filename)
