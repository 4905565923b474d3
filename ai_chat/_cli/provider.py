"""The provider options both commands take, and the adapter they name.

Without a provider option the offline scripted adapter answers (no key, no network). A
missing key, a missing extra or an option that does not fit the provider is a
:class:`CommandError` (a one-line message) or a usage error, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, cast

import anyio

from .._adapter import AIChatAdapter
from .._errors import AIChatError, ConfigurationError
from ..adapters import ScriptedAdapter

__all__ = [
    "DEFAULT_MODELS",
    "PROVIDERS",
    "CommandError",
    "Provider",
    "close_adapter",
    "create_adapter",
    "provider_options",
    "read_provider",
]

PROVIDERS: Final = ("demo", "openai", "anthropic", "gemini", "ui-stream")

DEFAULT_MODELS: Final[Mapping[str, str]] = {
    "openai": "gpt-5.4-mini",
    "anthropic": "claude-haiku-4-5",
    "gemini": "gemini-2.5-flash",
}
"""The model each provider uses when ``--model`` is not given: a fast, inexpensive one."""

_DEMO_DELAY: Final = 0.02

# The environment variables each provider's SDK reads its key from.
_KEY_VARIABLES: Final[Mapping[str, str]] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY (or GOOGLE_API_KEY)",
}

# The module and extra behind each provider (the ui-stream adapter needs only httpx).
_MODULES: Final[Mapping[str, tuple[str, str | None]]] = {
    "openai": ("ai_chat.adapters.openai", "openai"),
    "anthropic": ("ai_chat.adapters.anthropic", "anthropic"),
    "gemini": ("ai_chat.adapters.gemini", "gemini"),
    "ui-stream": ("ai_chat.adapters.ui_stream", None),
}


class CommandError(AIChatError):
    """The command cannot run as asked; the message says what to do."""


@dataclass(frozen=True)
class Provider:
    """The provider options, checked against each other."""

    name: str
    model: str | None
    base_url: str | None
    delay: float | None

    def describe(self) -> str:
        """Who answers, for the serve command's banner."""
        if self.name == "demo":
            return "the offline demo adapter"
        if self.name == "ui-stream":
            return f"the UI message stream endpoint {self.base_url}"
        return f"{self.name} {self.model}" + (f" at {self.base_url}" if self.base_url else "")


def provider_options() -> argparse.ArgumentParser:
    """The options both commands take, as a parent parser."""
    options = argparse.ArgumentParser(add_help=False)
    group = options.add_argument_group("provider options")
    group.add_argument(
        "--provider",
        choices=PROVIDERS,
        default="demo",
        help="who answers: demo is the offline scripted adapter (the default); openai, "
        "anthropic and gemini call the provider with the key from its usual environment "
        "variable; ui-stream calls another UI message stream endpoint (--base-url)",
    )
    group.add_argument(
        "--model",
        help="the model (defaults: "
        + ", ".join(f"{name} {model}" for name, model in DEFAULT_MODELS.items())
        + ")",
    )
    group.add_argument(
        "--base-url",
        help="the provider's API base URL (an OpenAI-compatible server such as "
        "http://localhost:11434/v1, a proxy...); for ui-stream the endpoint's full URL, "
        "such as http://127.0.0.1:8000/api/chat",
    )
    group.add_argument(
        "--delay",
        type=float,
        default=None,
        help=f"demo only: seconds between events (default: {_DEMO_DELAY})",
    )
    return options


def read_provider(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Provider:
    """The provider options, checked against each other (a misfit is a usage error)."""
    name = cast(str, args.provider)
    model = cast("str | None", args.model)
    base_url = cast("str | None", args.base_url)
    delay = cast("float | None", args.delay)
    if name == "demo":
        if model is not None:
            parser.error("--model needs a model provider (--provider openai, anthropic, gemini)")
        if base_url is not None:
            parser.error("--base-url needs --provider (the demo adapter makes no requests)")
        return Provider(name, None, None, _DEMO_DELAY if delay is None else delay)
    if delay is not None:
        parser.error("--delay applies only to --provider demo")
    if name == "ui-stream":
        if base_url is None:
            parser.error("--provider ui-stream needs --base-url, the endpoint's full URL")
        if model is not None:
            parser.error("--model does not apply to --provider ui-stream (the server chooses)")
        return Provider(name, None, base_url, None)
    if model is not None and not model:
        parser.error("--model must not be empty")
    return Provider(name, model or DEFAULT_MODELS[name], base_url, None)


def _import(provider: str) -> Any:
    module, extra = _MODULES[provider]
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if exc.name == module or extra is None:
            raise CommandError(
                f"--provider {provider} is not available in this installation ({exc})"
            ) from exc
        raise CommandError(
            f'--provider {provider} needs the {extra} extra: pip install "ai_chat[{extra}]" '
            f'(or uv add "ai_chat[{extra}]")'
        ) from exc


def create_adapter(provider: Provider) -> AIChatAdapter:
    """The adapter for ``provider``; close it with :func:`close_adapter` (it may own a
    client)."""
    if provider.name == "demo":
        assert provider.delay is not None
        return ScriptedAdapter(delay=provider.delay)
    module = _import(provider.name)
    settings: dict[str, Any] = {}
    try:
        if provider.name == "ui-stream":
            return cast(AIChatAdapter, module.UIMessageStreamAdapter(provider.base_url))
        if provider.name == "gemini":
            if provider.base_url is not None:
                settings["http_options"] = {"base_url": provider.base_url}
            return cast(AIChatAdapter, module.GeminiChatAdapter(model=provider.model, **settings))
        if provider.base_url is not None:
            settings["base_url"] = provider.base_url
        # A page sends back earlier answers; reasoning the API cannot take is left out.
        factory: Callable[..., AIChatAdapter] = (
            module.OpenAIChatAdapter if provider.name == "openai" else module.AnthropicChatAdapter
        )
        return factory(model=provider.model, reasoning_parts="omit", **settings)
    except ConfigurationError as exc:
        if exc.parameter == "api_key":
            raise CommandError(
                f"--provider {provider.name} needs an API key: set {_KEY_VARIABLES[provider.name]}"
            ) from exc
        raise


async def close_adapter(adapter: AIChatAdapter) -> None:
    """Close ``adapter`` if it can be closed, shielded from a cancellation."""
    aclose = getattr(adapter, "aclose", None)
    if aclose is not None:
        with anyio.CancelScope(shield=True):
            await aclose()
