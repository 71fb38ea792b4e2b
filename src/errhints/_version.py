"""The errhints version, in one place for the build backend and the package."""

__version__ = "0.1.0"
