"""errhints: explanations for SGLang and LlamaFactory failures, attached where you look.

``errhints.install()`` hooks the interpreter, ``@errhints.annotate`` wraps an entrypoint,
``errhints.explain(exc)`` returns the matching catalog entries. Importing is cheap: the
catalog and heavy dependencies load on the first failure.
"""

from ._api import annotate, annotating, explain, install, uninstall
from ._doors.ipython import load_ipython_extension, unload_ipython_extension
from ._version import __version__

__all__ = [
    "__version__",
    "annotate",
    "annotating",
    "explain",
    "install",
    "load_ipython_extension",
    "uninstall",
    "unload_ipython_extension",
]
