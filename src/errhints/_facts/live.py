"""Facts from a live exception: its type, message, frames and chain, read defensively.

Extraction never calls the exception's own code except ``str()``, and survives when that
raises: attributes are read through the built-in descriptors.
"""

from __future__ import annotations

import sys
from types import CodeType, FrameType, FunctionType, TracebackType

from .._packages import project_of
from .model import MAX_CHAIN, MAX_FRAMES, ErrorFacts, Frame, module_to_path, safe_str

__all__ = ["facts_from_exception"]


# Read through the built-in descriptors, so that an exception class overriding these
# attributes (properties that raise, a hostile metaclass) cannot break or fool errhints.
_TYPE_ATTR = {name: type.__dict__[name] for name in ("__mro__", "__qualname__", "__module__")}
_EXC_ATTR = {
    name: BaseException.__dict__[name]
    for name in ("__cause__", "__context__", "__suppress_context__", "__traceback__")
}


def _group_type() -> type | None:
    """``BaseExceptionGroup``: built in from 3.11; on 3.10 the ``exceptiongroup`` backport's,
    when something imported it (errhints never imports it itself), else ``None``."""
    import builtins

    group = getattr(builtins, "BaseExceptionGroup", None)
    if group is None:
        backport = sys.modules.get("exceptiongroup")
        group = getattr(backport, "BaseExceptionGroup", None)
    return group if isinstance(group, type) else None


def _group_members(exc: BaseException) -> object:
    """The members of ``exc`` if it is an exception group (read through the class's own
    descriptor, a property in the backport), else ``None``."""
    group = _group_type()
    if group is None or not issubclass(type(exc), group):
        return None
    for klass in type.__dict__["__mro__"].__get__(group):
        descriptor = klass.__dict__.get("exceptions")
        if descriptor is not None:
            return descriptor.__get__(exc)
    return None


def _qualname(code: CodeType, frame: FrameType) -> str | None:
    """The code's qualified name: ``co_qualname`` (3.11+). On 3.10, the ``__qualname__`` of
    the function object that the frame's module (a module-level function) or its first
    argument (``self``/``cls``: a method) holds; ``None`` when neither has it (a nested
    function, a decorated method), for :func:`_resolve_by_gc`."""
    qualname = getattr(code, "co_qualname", None)
    if isinstance(qualname, str):
        return qualname
    name = code.co_name
    try:
        candidate = frame.f_globals.get(name)
        if getattr(candidate, "__code__", None) is code:
            return str(candidate.__qualname__)  # type: ignore[union-attr]
        if code.co_argcount and code.co_varnames[0] in ("self", "cls"):
            first = frame.f_locals.get(code.co_varnames[0])
            klass = first if isinstance(first, type) else type(first)
            for base in type.__dict__["__mro__"].__get__(klass):
                attr = base.__dict__.get(name)
                func = getattr(attr, "__func__", attr)  # classmethod / staticmethod
                if getattr(func, "__code__", None) is code:
                    return str(func.__qualname__)
    except Exception:  # a hostile object on the stack: the other ways will do
        pass
    return None


def _resolve_by_gc(codes: dict[int, CodeType]) -> dict[int, str]:
    """Python 3.10: the qualified names of ``codes`` (by id) from the function objects that
    hold them, found in one pass over the garbage collector's objects. Only asked for the
    frames of the projects errhints explains, whose qualified names catalog sites name."""
    import gc

    found: dict[int, str] = {}
    try:
        for obj in gc.get_referrers(*codes.values()):
            if isinstance(obj, FunctionType):
                key = id(obj.__code__)
                if codes.get(key) is obj.__code__ and key not in found:
                    found[key] = str(obj.__qualname__)
    except Exception:
        pass
    return found


def _type_name(tp: type) -> str:
    try:
        module = _TYPE_ATTR["__module__"].__get__(tp)
        qualname = _TYPE_ATTR["__qualname__"].__get__(tp)
    except Exception:
        return "<unknown type>"
    if not isinstance(module, str) or module in ("builtins", "__main__", ""):
        return str(qualname)
    return f"{module}.{qualname}"


#: id(code object) -> (the code, (file name, qualname, package-relative path, package));
#: bounded. A frame's module name comes from its globals, which belong to its code's module,
#: so the code object decides all four; only the line differs between frames of the same
#: code. Keyed by identity: code objects compare equal across files and classes when their
#: names and bytecode agree (two ``def forward(self): raise NotImplementedError``), and the
#: entry keeps its code alive so that the id is not reused.
_code_info: dict[int, tuple[CodeType, tuple[str, str, str | None, str | None]]] = {}


def _info(code: CodeType, frame: FrameType) -> tuple[str, str, str | None, str | None]:
    module = frame.f_globals.get("__name__")
    path = package = None
    if isinstance(module, str) and module and module != "__main__":
        path, package = module_to_path(module, code.co_filename), module.partition(".")[0]
    qualname = _qualname(code, frame)
    if qualname is None:
        if package is not None and project_of(package) is not None:
            return code.co_filename, _UNRESOLVED, path, package
        qualname = code.co_name
    return code.co_filename, qualname, path, package


_UNRESOLVED = "\0"  # a 3.10 qualified name left to _resolve_by_gc


def _frames(tb: TracebackType | None) -> tuple[Frame, ...]:
    frames: list[Frame] = []
    append = frames.append
    cache = _code_info
    pending: dict[int, tuple[CodeType, list[int]]] = {}  # 3.10: codes whose qualname is unknown
    while tb is not None and len(frames) < 100_000:
        frame = tb.tb_frame
        code = frame.f_code
        cached = cache.get(id(code))
        if cached is not None and cached[0] is code:
            info = cached[1]
        else:
            info = _info(code, frame)
            if info[1] is not _UNRESOLVED and len(cache) < 8192:
                cache[id(code)] = (code, info)
        if info[1] is _UNRESOLVED:
            pending.setdefault(id(code), (code, []))[1].append(len(frames))
        append(Frame(info[0], info[1], tb.tb_lineno, info[2], info[3]))
        tb = tb.tb_next
    if pending:  # Python 3.10 only
        names = _resolve_by_gc({key: code for key, (code, _) in pending.items()})
        for key, (code, positions) in pending.items():
            name = names.get(key, code.co_name)
            for i in positions:
                frames[i] = frames[i]._replace(function=name)
            first = frames[positions[0]]
            if len(cache) < 8192:
                cache[key] = (code, (first.filename, name, first.path, first.package))
    if len(frames) > MAX_FRAMES:
        half = MAX_FRAMES // 2
        frames = frames[:half] + frames[-half:]
    return tuple(frames)


def _one(exc: BaseException, relation: str) -> ErrorFacts:
    tp = type(exc)
    names: set[str] = set()
    for base in _TYPE_ATTR["__mro__"].__get__(tp):
        if base is not object:
            name = _type_name(base)
            names.add(name)
            names.add(name.rpartition(".")[2])
    return ErrorFacts(
        type_name=_type_name(tp),
        message=_message(exc, names),
        frames=_frames(_EXC_ATTR["__traceback__"].__get__(exc)),
        type_names=frozenset(names),
        relation=relation,
        has_stack=True,
    )


def _message(exc: BaseException, type_names: set[str]) -> str:
    """What the exception says. An HTTP exception of starlette or FastAPI prints as
    ``"400: <detail>"``; the detail is the message its code wrote, so that is what is read
    (a plain string ``detail`` only, found in the instance's own attributes)."""
    if "HTTPException" in type_names:
        try:
            detail = vars(exc).get("detail")
        except Exception:  # an exception without a __dict__, or a hostile one
            detail = None
        if isinstance(detail, str) and detail:
            return safe_str(detail)
    return safe_str(exc)


def _linked(exc: BaseException) -> list[tuple[BaseException, str]]:
    """The exceptions ``exc`` points to: its cause, its context, its group members."""
    linked: list[tuple[BaseException, str]] = []
    cause = _EXC_ATTR["__cause__"].__get__(exc)
    if isinstance(cause, BaseException):
        linked.append((cause, "cause"))
    context = _EXC_ATTR["__context__"].__get__(exc)
    if isinstance(context, BaseException) and not _EXC_ATTR["__suppress_context__"].__get__(exc):
        linked.append((context, "context"))
    members = _group_members(exc)
    if isinstance(members, tuple):
        linked.extend((m, "group") for m in members if isinstance(m, BaseException))
    return linked


def facts_from_exception(exc: BaseException) -> ErrorFacts:
    """Read a live exception and its chain (causes, contexts, group members), cycles cut."""
    root = _one(exc, "")
    seen = {id(exc)}
    queue: list[BaseException] = [exc]
    while queue and len(seen) < MAX_CHAIN:
        for other, relation in _linked(queue.pop(0)):
            if id(other) in seen or len(seen) >= MAX_CHAIN:
                continue
            seen.add(id(other))
            root.chain.append(_one(other, relation))
            queue.append(other)
    return root
