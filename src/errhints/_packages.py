"""The projects errhints explains: one record each, so a new project is one record here.

A leaf of the package (standard library only). Each record says how the project is
distributed (distribution and import names, including former names), where its released
source lives (repository, tag format, source folder), and which top-level names its
installed package has (so that a user's own folder called ``sglang`` is not SGLang).
"""

from __future__ import annotations

import functools

__all__ = [
    "PROJECTS",
    "Project",
    "canonical_path",
    "installed_release",
    "project_named",
    "project_names",
    "project_of",
]


class Project:
    """One supported project: names, repository and installed layout."""

    __slots__ = (
        "display",
        "distributions",
        "import_names",
        "layout",
        "name",
        "repository",
        "source_dir",
    )

    def __init__(
        self,
        name: str,
        *,
        display: str,
        distributions: tuple[str, ...],
        import_names: tuple[str, ...],
        repository: str,
        source_dir: str,
        layout: frozenset[str],
    ) -> None:
        #: The name catalog entries use (``package = "sglang"``).
        self.name = name
        #: The name people write (``SGLang``).
        self.display = display
        #: PyPI distributions, newest name first (LlamaFactory was ``llmtuner`` before 0.8).
        self.distributions = distributions
        #: Top-level import names, in the same order.
        self.import_names = import_names
        self.repository = repository
        #: The folder of the repository that holds the import package (``python/``).
        self.source_dir = source_dir
        #: Top-level names below the import package of an installed release; a directory
        #: ends with ``/``; ``*`` at the end is a prefix wildcard for file names.
        self.layout = layout

    def source_url(self, version: str, path: str, line: int | None = None) -> str:
        """The GitHub link of ``path`` (package-relative) at release ``version``."""
        anchor = f"#L{line}" if line else ""
        return f"{self.repository}/blob/v{version}/{self.source_dir}{path}{anchor}"

    def __repr__(self) -> str:
        return f"Project({self.name!r})"


_LLAMAFACTORY_LAYOUT = frozenset(
    {
        "data/",
        "model/",
        "train/",
        "chat/",
        "hparams/",
        "extras/",
        "webui/",
        "api/",
        "eval/",
        "third_party/",
        "v1/",
        "tuner/",  # llmtuner 0.1 to 0.2.x: the trainers, and the datasets in dsets/
        "dsets/",
        "__init__.py",
        "cli.py",
        "launcher.py",
        "tuner.py",
    }
)

PROJECTS: tuple[Project, ...] = (
    Project(
        "sglang",
        display="SGLang",
        distributions=("sglang",),
        import_names=("sglang",),
        repository="https://github.com/sgl-project/sglang",
        source_dir="python/",
        layout=frozenset(
            {
                "srt/",
                "lang/",
                "multimodal_gen/",
                "test/",
                "jit_kernel/",
                "api/",
                "benchmark/",
                "cli/",
                "kernels/",
                "eval/",
                "__init__.py",
                "_version.py",
                "version.py",
                "_platform_stubs.py",
                "launch_server.py",
                "utils.py",
                "check_env.py",
                "profiler.py",
                "compile_deep_gemm.py",
                "global_config.py",
                "api.py",
                "bench_*",
            }
        ),
    ),
    Project(
        "llamafactory",
        display="LlamaFactory",
        distributions=("llamafactory", "llmtuner"),
        import_names=("llamafactory", "llmtuner"),
        repository="https://github.com/hiyouga/LlamaFactory",
        source_dir="src/",
        layout=_LLAMAFACTORY_LAYOUT,
    ),
)

_BY_NAME = {p.name: p for p in PROJECTS}
_BY_IMPORT = {name: p for p in PROJECTS for name in p.import_names}


def project_named(name: str) -> Project | None:
    """The project catalog entries call ``name`` (``"sglang"``), or ``None``."""
    return _BY_NAME.get(name)


def project_of(import_name: str) -> Project | None:
    """The project a top-level import name belongs to (``"llmtuner"`` -> LlamaFactory)."""
    return _BY_IMPORT.get(import_name)


def canonical_path(path: str) -> str:
    """``path`` under its project's current import name: ``llmtuner/x.py`` -> ``llamafactory/x.py``.

    Catalog entries name one path for a site across the releases of their range; a release
    made under a former name has the same files under that name.
    """
    head, sep, rest = path.partition("/")
    project = _BY_IMPORT.get(head)
    if project is None or not sep or head == project.import_names[0]:
        return path
    return f"{project.import_names[0]}/{rest}"


def project_names(packages: frozenset[str]) -> frozenset[str]:
    """Top-level package names with each former import name replaced by its project's name."""
    return frozenset(_BY_IMPORT[p].name if p in _BY_IMPORT else p for p in packages)


@functools.cache
def installed_release(name: str) -> str | None:
    """The version of ``name`` (a project) installed here, from any of its distributions
    (read once per process: installing another release means starting a new one)."""
    from importlib import metadata

    project = project_named(name)
    for distribution in project.distributions if project is not None else ():
        try:
            return metadata.version(distribution)
        except Exception:  # not installed, or broken metadata
            continue
    return None
