"""The provider name the UI message stream adapter's errors carry; its in-band error class,
:class:`~ai_chat.RemoteStreamError`, lives with the others in :mod:`ai_chat._errors` and
is exported from :mod:`ai_chat`."""

from __future__ import annotations

from typing import Final

__all__ = ["PROVIDER"]

PROVIDER: Final = "ui-stream"
