"""The version of the installed distribution, read from its metadata (pyproject.toml)."""

from importlib.metadata import PackageNotFoundError, version

__all__ = ["__version__"]

try:
    __version__: str = version("ai_chat")
except PackageNotFoundError:  # pragma: no cover - a source tree on sys.path, not installed
    __version__ = "0+unknown"
