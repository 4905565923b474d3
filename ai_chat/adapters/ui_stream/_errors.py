"""The provider name the UI message stream adapter's errors carry; its in-band error class
lives with the others in :mod:`ai_chat._errors`."""

from __future__ import annotations

from typing import Final

from ..._errors import RemoteStreamError

__all__ = ["PROVIDER", "RemoteStreamError"]

PROVIDER: Final = "ui-stream"
