"""The site index: every raise, assert and logged error of the released sources, located.

One job per module: :mod:`.extract` reads one release with :mod:`ast`; :mod:`.settings` maps
the names a guard reads to flags, keys and environment variables; :mod:`.merge` joins the
releases into site identities with ranges and path history; :mod:`.write` writes the shipped
files deterministically; :mod:`.build` runs those steps over a release list; :mod:`.update`
adds newer releases and reports drift. The reader is :mod:`errhints._core.siteindex`.
"""

from __future__ import annotations

from .build import DEFAULT_OUT, BuildResult, build_index, default_release_list, load_release_list

__all__ = [
    "DEFAULT_OUT",
    "BuildResult",
    "build_index",
    "default_release_list",
    "load_release_list",
]
