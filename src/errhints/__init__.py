"""errhints: explanations for SGLang and LlamaFactory failures, attached where you look.

``errhints.install()`` hooks the interpreter, ``@errhints.annotate`` wraps an entrypoint,
``errhints.explain(exc)`` returns the matching catalog entries. Importing is cheap: the
catalog and heavy dependencies load on the first failure.
"""

from ._api import annotate, annotating, explain, install, uninstall
from ._doors.ipython import load_ipython_extension, unload_ipython_extension
from ._version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._core.catalog import Entry
    from ._core.match import Match

__all__ = [
    "Entry",
    "Match",
    "__version__",
    "annotate",
    "annotating",
    "explain",
    "install",
    "load_ipython_extension",
    "uninstall",
    "unload_ipython_extension",
]


def __getattr__(name: str) -> object:
    """``Match`` and ``Entry`` load on first use, so that ``import errhints`` stays cheap."""
    if name == "Match":
        from ._core.match import Match

        return Match
    if name == "Entry":
        from ._core.catalog import Entry

        return Entry
    raise AttributeError(f"module 'errhints' has no attribute {name!r}")
