"""The Anthropic adapter (the Messages API).

Needs the ``anthropic`` extra: ``pip install "ai_chat[anthropic]"`` (or
``uv add "ai_chat[anthropic]"``). Importing :mod:`ai_chat` or :mod:`ai_chat.adapters`
never imports the SDK; importing this module does.
"""

try:
    import anthropic as _anthropic  # noqa: F401  # pyright: ignore[reportUnusedImport]
    import httpx2 as _httpx2  # noqa: F401  # pyright: ignore[reportUnusedImport]
except ImportError as exc:  # pragma: no cover - exercised in a subprocess
    raise ImportError(
        'ai_chat.adapters.anthropic needs the Anthropic SDK: pip install "ai_chat[anthropic]" '
        '(or uv add "ai_chat[anthropic]")',
        name=exc.name,
    ) from exc

from ._adapter import AnthropicChatAdapter
from ._request import DEFAULT_MAX_TOKENS

__all__ = ["DEFAULT_MAX_TOKENS", "AnthropicChatAdapter"]
