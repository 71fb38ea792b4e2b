"""Facts from a live exception: its type, message, frames and chain, read defensively.

Extraction never calls the exception's own code except ``str()``, and survives when that
raises: attributes are read through the built-in descriptors.
"""

from __future__ import annotations

from types import CodeType, TracebackType

from .model import MAX_CHAIN, MAX_FRAMES, ErrorFacts, Frame, module_to_path, safe_str

__all__ = ["facts_from_exception"]


# Read through the built-in descriptors, so that an exception class overriding these
# attributes (properties that raise, a hostile metaclass) cannot break or fool errhints.
_TYPE_ATTR = {name: type.__dict__[name] for name in ("__mro__", "__qualname__", "__module__")}
_EXC_ATTR = {
    name: BaseException.__dict__[name]
    for name in ("__cause__", "__context__", "__suppress_context__", "__traceback__")
}
_GROUP_MEMBERS = BaseExceptionGroup.__dict__["exceptions"]


def _type_name(tp: type) -> str:
    try:
        module = _TYPE_ATTR["__module__"].__get__(tp)
        qualname = _TYPE_ATTR["__qualname__"].__get__(tp)
    except Exception:
        return "<unknown type>"
    if not isinstance(module, str) or module in ("builtins", "__main__", ""):
        return str(qualname)
    return f"{module}.{qualname}"


#: code object -> (file name, qualname, package-relative path, package); bounded. A frame's
#: module name comes from its globals, which belong to its code's module, so the code
#: object decides all four; only the line differs between frames of the same code.
_code_info: dict[object, tuple[str, str, str | None, str | None]] = {}


def _info(code: CodeType, module: object) -> tuple[str, str, str | None, str | None]:
    path = package = None
    if isinstance(module, str) and module and module != "__main__":
        path, package = module_to_path(module, code.co_filename), module.partition(".")[0]
    return code.co_filename, code.co_qualname, path, package


def _frames(tb: TracebackType | None) -> tuple[Frame, ...]:
    frames: list[Frame] = []
    append = frames.append
    cache = _code_info
    while tb is not None and len(frames) < 100_000:
        frame = tb.tb_frame
        code = frame.f_code
        info = cache.get(code)
        if info is None:
            info = _info(code, frame.f_globals.get("__name__"))
            if len(cache) < 8192:
                cache[code] = info
        append(Frame(info[0], info[1], tb.tb_lineno, info[2], info[3]))
        tb = tb.tb_next
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
        message=safe_str(exc),
        frames=_frames(_EXC_ATTR["__traceback__"].__get__(exc)),
        type_names=frozenset(names),
        relation=relation,
        has_stack=True,
    )


def _linked(exc: BaseException) -> list[tuple[BaseException, str]]:
    """The exceptions ``exc`` points to: its cause, its context, its group members."""
    linked: list[tuple[BaseException, str]] = []
    cause = _EXC_ATTR["__cause__"].__get__(exc)
    if isinstance(cause, BaseException):
        linked.append((cause, "cause"))
    context = _EXC_ATTR["__context__"].__get__(exc)
    if isinstance(context, BaseException) and not _EXC_ATTR["__suppress_context__"].__get__(exc):
        linked.append((context, "context"))
    if issubclass(type(exc), BaseExceptionGroup):
        members = _GROUP_MEMBERS.__get__(exc)
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
