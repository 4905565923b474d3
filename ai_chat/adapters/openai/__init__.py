"""The OpenAI adapter, for OpenAI and OpenAI-compatible servers.

:class:`OpenAIChatAdapter` speaks the Chat Completions API (``api="chat"``, the default)
or the Responses API (``api="responses"``), through the official SDK.

Needs the ``openai`` extra: ``pip install "ai_chat[openai]"`` (or
``uv add "ai_chat[openai]"``). Importing :mod:`ai_chat` or :mod:`ai_chat.adapters` never
imports the SDK; importing this module does.
"""

try:
    import httpx2 as _httpx2  # noqa: F401  # pyright: ignore[reportUnusedImport]
    import openai as _openai  # noqa: F401  # pyright: ignore[reportUnusedImport]
except ImportError as exc:  # pragma: no cover - exercised in a subprocess
    raise ImportError(
        'ai_chat.adapters.openai needs the OpenAI SDK: pip install "ai_chat[openai]" '
        '(or uv add "ai_chat[openai]")',
        name=exc.name,
    ) from exc

from ._adapter import OpenAIChatAdapter

__all__ = ["OpenAIChatAdapter"]
