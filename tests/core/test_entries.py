"""One offline test per catalog entry: its message is matched to it, live and from text.

For every packaged entry, a module is generated at the entry's package-relative path (its
first site, or its first context frame) with a function of the same qualified name, which
raises the entry's exception with the entry's message (the template filled with sample
values). Then:

- live: ``errhints.explain(exc)`` names the entry, with ``exact`` confidence;
- text: the formatted traceback, read back by ``errhints explain``'s pipeline, names it;
- evidence: each real message an entry carries (``[[evidence]]``), as a bare line of text,
  names the entry, for entries that need no frames.

Entries whose place cannot be called as an ordinary function (module level, lambdas,
comprehensions) are tested from text only.
"""

from __future__ import annotations

import builtins
import sys
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import errhints
from errhints._core.catalog import Entry, builtin_catalog_dir, load_catalog
from errhints._core.pipeline import explain_text
from errhints._core.releases import version_key

CATALOG = load_catalog(builtin=True)
ENTRIES = sorted(
    (e for e in CATALOG if e.source.startswith(str(builtin_catalog_dir()))), key=lambda e: e.id
) or sorted(CATALOG, key=lambda e: e.id)
PROJECTS = ("sglang", "llamafactory", "llmtuner")
#: Sample values for placeholders: plain, so that no literal of the template is repeated.
SAMPLE = "7"


def filled(entry: Entry) -> str:
    """The entry's message with every placeholder replaced by a sample value."""
    return SAMPLE.join(entry.template.literals)


def _candidates(entry: Entry) -> list[tuple[str, str]]:
    """Places the entry's message is raised at, newest site first, then its context frames."""
    sites = sorted(entry.sites, key=lambda site: version_key(site.releases.last), reverse=True)
    found = [(site.path, site.function) for site in sites]
    found += [(ctx.path, ctx.function) for ctx in entry.context if ctx.function]
    return [
        (path, function)
        for path, function in found
        if not any(p.startswith("<") and p != "<locals>" for p in function.split("."))
    ]


#: Package directories some place needs; a module file of the same name cannot coexist
#: (older releases had ``sglang/srt/utils.py`` where newer ones have ``sglang/srt/utils/``).
_DIRECTORIES = {
    str(parent)
    for entry in ENTRIES
    for path, _function in _candidates(entry)
    for parent in Path(path).parents
    if str(parent) != "."
}


def place(entry: Entry) -> tuple[str, str] | None:
    """Where to raise the entry's message: (package-relative path, qualname), if callable."""
    for path, function in _candidates(entry):
        if path.removesuffix(".py") not in _DIRECTORIES:
            return path, function
    return None


def exception_for(entry: Entry, message: str) -> BaseException:
    """An exception of the entry's first type whose ``str()`` is exactly ``message``."""
    qualified = entry.exceptions[0]
    module, _, short = qualified.rpartition(".")
    base = getattr(builtins, short, None)
    if not (isinstance(base, type) and issubclass(base, BaseException)):
        base = Exception
    cls = type(
        short,
        (base,),
        {
            "__str__": lambda self: message,
            "__module__": module or "builtins",
            # one argument, whatever the base asks for (``UnicodeEncodeError`` wants five)
            "__init__": lambda self, *args: BaseException.__init__(self, *args),
        },
    )
    return cls(message)  # type: ignore[no-any-return]


class _Node:
    def __init__(self) -> None:
        self.children: dict[str, _Node] = {}
        self.kind = "def"  # or "class"
        self.key: str | None = None  # the qualname this def raises for


def _render(name: str, node: _Node, qualname: str, indent: str, out: list[str]) -> None:
    if node.kind == "class":
        out.append(f"{indent}class {name}:")
        for child_name, child in node.children.items():
            _render(child_name, child, f"{qualname}.{child_name}", indent + "    ", out)
        if not node.children:
            out.append(f"{indent}    pass")
        return
    out.append(f"{indent}def {name}(*args, **kwargs):")
    local = node.children.get("<locals>")
    for child_name, child in (local.children if local else {}).items():
        inner = f"{qualname}.<locals>.{child_name}"
        _render(child_name, child, inner, indent + "    ", out)
        out.append(
            f"{indent}    if _TARGET[0] == {inner!r} or _TARGET[0].startswith({inner!r} + '.'):"
        )
        out.append(f"{indent}        {child_name}()")
    out.append(f"{indent}    raise _RAISE[0]")


def module_source(qualnames: list[str]) -> str:
    """A module defining each qualname as a function that raises ``_RAISE[0]``."""
    root = _Node()
    for qualname in qualnames:
        node = root
        parts = qualname.split(".")
        for i, part in enumerate(parts):
            node = node.children.setdefault(part, _Node())
            nxt = parts[i + 1] if i + 1 < len(parts) else None
            if nxt is not None and nxt != "<locals>" and part != "<locals>":
                node.kind = "class"
        node.key = qualname
    out = ["_RAISE = [None]", "_TARGET = ['']"]
    for name, node in root.children.items():
        _render(name, node, name, "", out)
    return "\n".join(out) + "\n"


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A tree of generated modules for every entry's place, importable during the tests."""
    root = tmp_path_factory.mktemp("entries")
    by_path: dict[str, list[str]] = {}
    for entry in ENTRIES:
        where = place(entry)
        if where is not None:
            by_path.setdefault(where[0], [])
            if where[1] not in by_path[where[0]]:
                by_path[where[0]].append(where[1])
    for path, qualnames in by_path.items():
        file = root / path
        file.parent.mkdir(parents=True, exist_ok=True)
        for parent in file.relative_to(root).parents:
            if str(parent) != ".":
                (root / parent / "__init__.py").touch()
        try:
            file.write_text(module_source(qualnames), encoding="utf-8")
        except OSError:
            continue
    saved = {k: v for k, v in sys.modules.items() if k.partition(".")[0] in PROJECTS}
    for name in saved:
        del sys.modules[name]
    sys.path.insert(0, str(root))
    yield root
    sys.path.remove(str(root))
    for name in [k for k in sys.modules if k.partition(".")[0] in PROJECTS]:
        del sys.modules[name]
    sys.modules.update(saved)


def raise_at(root: Path, path: str, qualname: str, exc: BaseException) -> BaseException:
    """Call the generated function ``qualname`` of ``path`` so that it raises ``exc``."""
    import importlib

    dotted = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    module = importlib.import_module(dotted)
    module._RAISE[0] = exc
    module._TARGET[0] = qualname
    chain = qualname.split(".<locals>.")[0].split(".")
    owner: object = module
    for part in chain[:-1]:
        owner = getattr(owner, part)
    target = getattr(owner, chain[-1])
    func: Callable[[], object]
    if isinstance(owner, type):
        instance = object.__new__(owner)
        func = lambda: target(instance)  # noqa: E731 - a method needs its self
    else:
        func = target
    try:
        func()
    except BaseException as raised:  # the entry's exception, whatever it is
        return raised
    raise AssertionError(f"{path}:{qualname} did not raise")


def ids(entries: list[Entry]) -> list[str]:
    return [e.id for e in entries]


LIVE = [e for e in ENTRIES if place(e) is not None]


@pytest.mark.parametrize("entry", LIVE, ids=ids(LIVE))
def test_live_exception_at_the_entrys_place_is_explained_exactly(
    entry: Entry, generated: Path
) -> None:
    where = place(entry)
    assert where is not None
    exc = raise_at(generated, *where, exception_for(entry, filled(entry)))
    matches = errhints.explain(exc)
    best = [m for m in matches if m.confidence == matches[0].confidence] if matches else []
    assert entry.id in [m.id for m in best], [(m.id, m.confidence) for m in matches]
    assert matches[0].confidence == "exact", [(m.id, m.confidence) for m in matches]


@pytest.mark.parametrize("entry", LIVE, ids=ids(LIVE))
def test_the_same_traceback_as_text_is_explained(entry: Entry, generated: Path) -> None:
    where = place(entry)
    assert where is not None
    exc = raise_at(generated, *where, exception_for(entry, filled(entry)))
    text = "".join(traceback.format_exception(exc))
    found = [m.id for result in explain_text(text) for m in result.matches]
    assert entry.id in found, text


#: Evidence the text reader does not recognise yet, and why (strict: a fix must remove it).
KNOWN_TEXT_GAPS: dict[str, str] = {}


def _evidence_case(entry: Entry, n: int) -> object:
    message = entry.evidence[n].message
    gap = next((why for prefix, why in KNOWN_TEXT_GAPS.items() if message.startswith(prefix)), None)
    marks = [pytest.mark.xfail(strict=True, reason=gap)] if gap else []
    return pytest.param(entry, n, marks=marks, id=f"{entry.id}[{n}]")


# Entries with too little literal text to match without frames (by design) are left out, and
# so are context entries, which need their frames.
WITH_EVIDENCE = [
    _evidence_case(e, i)
    for e in ENTRIES
    if (not e.context or e.kind == "log") and e.template.literal_rich
    for i in range(len(e.evidence))
]


@pytest.mark.parametrize(("entry", "n"), WITH_EVIDENCE)
def test_each_evidence_message_is_recognised_as_text(entry: Entry, n: int) -> None:
    """The real message an entry quotes, pasted alone, names the entry."""
    message = entry.evidence[n].message
    found = {m.id for result in explain_text(message + "\n") for m in result.matches}
    if entry.id not in found and entry.sites:
        # A message without its exception name is still a message: try the usual last line.
        line = f"{entry.exceptions[0].rpartition('.')[2]}: {message}\n"
        found |= {m.id for result in explain_text(line) for m in result.matches}
    assert entry.id in found, (message, sorted(found))
