"""The Gemini adapter (the Gemini API and Vertex AI, through ``google-genai``).

Needs the ``gemini`` extra: ``pip install "ai_chat[gemini]"`` (or
``uv add "ai_chat[gemini]"``). Importing :mod:`ai_chat` or :mod:`ai_chat.adapters` never
imports the SDK; importing this module does.
"""

try:
    import google.genai as _genai  # noqa: F401  # pyright: ignore[reportUnusedImport]
    import httpx2 as _httpx2  # noqa: F401  # pyright: ignore[reportUnusedImport]
except ImportError as exc:  # pragma: no cover - exercised in a subprocess
    raise ImportError(
        'ai_chat.adapters.gemini needs the google-genai SDK: pip install "ai_chat[gemini]" '
        '(or uv add "ai_chat[gemini]")',
        name=exc.name,
    ) from exc

from ._adapter import GeminiChatAdapter

__all__ = ["GeminiChatAdapter"]
