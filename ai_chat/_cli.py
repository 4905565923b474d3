"""The ``ai-chat`` command line: stream a chat answer to the terminal, or serve a chat page.

``ai-chat send TEXT`` prints one answer as it streams; ``ai-chat serve`` serves the UI
message stream endpoint (``POST /api/chat``) and the chat page (``GET /``), keeping the
conversations in a store (``--store``: SQLite in ``./ai-chat.db`` by default). Both take
the same provider options; without them the offline scripted adapter answers (no key, no
network). A missing key, a missing extra or an option that does not fit the provider
ends the command with a one-line message, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import ipaddress
import json
import os
import socket
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TextIO, cast

import anyio

from ._adapter import AIChatAdapter
from ._cli_security import add_security_options, exposure_warning, security_settings
from ._errors import AIChatError, ConfigurationError
from ._stream import ChatStream, create_chat_stream
from ._types import ChatEvent, FinishEvent, ToolInputAvailableEvent
from .adapters import ScriptedAdapter

if TYPE_CHECKING:
    from .store import ConversationStore

__all__ = ["DEFAULT_MODELS", "main"]

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


class _CommandError(AIChatError):
    """The command cannot run as asked; the message says what to do."""


DEFAULT_STORE: Final = "sqlite:ai-chat.db"


@dataclass(frozen=True)
class _StoreSpec:
    kind: str  # "none", "memory", "sqlite" or "postgres"
    target: str | None  # the SQLite path or the PostgreSQL URL

    def describe(self) -> str:
        if self.kind == "sqlite":
            return f"the SQLite database {self.target}"
        if self.kind == "postgres":
            return "PostgreSQL"  # the URL may hold a password: not printed
        return "memory (lost when the server stops)"


def _store_spec(parser: argparse.ArgumentParser, value: str) -> _StoreSpec:
    """``--store``: ``none``, ``memory``, ``sqlite:PATH`` or ``postgresql://...``."""
    if value == "none":
        return _StoreSpec("none", None)
    if value == "memory":
        return _StoreSpec("memory", None)
    if value.startswith("sqlite:"):
        path = value[len("sqlite:") :]
        if not path:
            parser.error("--store sqlite:PATH needs a path, such as sqlite:ai-chat.db")
        return _StoreSpec("sqlite", path)
    if not value.startswith(("postgresql://", "postgres://")):
        parser.error(
            f"--store must be memory, sqlite:PATH, a postgresql:// URL or none, got {value!r}"
        )
    return _StoreSpec("postgres", value)


@dataclass(frozen=True)
class _Provider:
    name: str
    model: str | None
    base_url: str | None
    delay: float | None


def _provider_options() -> argparse.ArgumentParser:
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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ai-chat", description="Stream chat answers through ai_chat's send lifecycle."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    options = _provider_options()
    send = commands.add_parser(
        "send",
        parents=[options],
        help="send one user message and stream the answer",
        description="Send one user message and print the answer as it streams. Without a "
        "provider option the built-in offline scripted adapter answers: no key, no network.",
    )
    send.add_argument("text", help="the user message")
    send.add_argument("--system", help="a system message to send first")
    send.add_argument("--json", action="store_true", help="print one normalized event per line")
    serve = commands.add_parser(
        "serve",
        parents=[options],
        help="serve POST /api/chat and a chat page at /",
        description="Serve the UI message stream endpoint POST /api/chat (what the AI SDK's "
        "useChat talks to) and a chat page at /. Without a provider option the offline "
        "scripted adapter answers. Stop with Ctrl+C.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="interface (default: %(default)s)")
    serve.add_argument(
        "--port", type=int, default=8000, help="port, 0 for any free one (default: %(default)s)"
    )
    serve.add_argument(
        "--store",
        default=DEFAULT_STORE,
        metavar="STORE",
        help="where conversations are kept: memory, sqlite:PATH, a postgresql:// URL (needs "
        "the postgres extra) or none (default: %(default)s, in the working directory)",
    )
    add_security_options(serve)
    return parser


def _provider(parser: argparse.ArgumentParser, args: argparse.Namespace) -> _Provider:
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
        return _Provider(name, None, None, _DEMO_DELAY if delay is None else delay)
    if delay is not None:
        parser.error("--delay applies only to --provider demo")
    if name == "ui-stream":
        if base_url is None:
            parser.error("--provider ui-stream needs --base-url, the endpoint's full URL")
        if model is not None:
            parser.error("--model does not apply to --provider ui-stream (the server chooses)")
        return _Provider(name, None, base_url, None)
    if model is not None and not model:
        parser.error("--model must not be empty")
    return _Provider(name, model or DEFAULT_MODELS[name], base_url, None)


def _import(provider: str) -> Any:
    module, extra = _MODULES[provider]
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if exc.name == module or extra is None:
            raise _CommandError(
                f"--provider {provider} is not available in this installation ({exc})"
            ) from exc
        raise _CommandError(
            f'--provider {provider} needs the {extra} extra: pip install "ai_chat[{extra}]" '
            f'(or uv add "ai_chat[{extra}]")'
        ) from exc


def _create_adapter(provider: _Provider) -> AIChatAdapter:
    """The adapter for ``provider``; close it with :func:`_close` (it may own a client)."""
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
            raise _CommandError(
                f"--provider {provider.name} needs an API key: set {_KEY_VARIABLES[provider.name]}"
            ) from exc
        raise


async def _close(adapter: AIChatAdapter) -> None:
    aclose = getattr(adapter, "aclose", None)
    if aclose is not None:
        with anyio.CancelScope(shield=True):
            await aclose()


def _describe(provider: _Provider) -> str:
    if provider.name == "demo":
        return "the offline demo adapter"
    if provider.name == "ui-stream":
        return f"the UI message stream endpoint {provider.base_url}"
    return f"{provider.name} {provider.model}" + (
        f" at {provider.base_url}" if provider.base_url else ""
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 failed, 130 interrupted)."""
    parser = _parser()
    args = parser.parse_args(argv)
    provider = _provider(parser, args)
    # A terminal that cannot show a character gets an escape, not a traceback.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    try:
        if args.command == "serve":
            store = _store_spec(parser, cast(str, args.store))
            return _serve(provider, cast(str, args.host), cast(int, args.port), store, args)
        anyio.run(_send, provider, _messages(args), args.json, sys.stdout)
    except _CommandError as exc:
        sys.stdout.flush()
        print(f"ai-chat: {_one_line(str(exc))}", file=sys.stderr)
        return 1
    except AIChatError as exc:
        sys.stdout.flush()
        print(f"\nai-chat: {type(exc).__name__}: {_one_line(str(exc))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nai-chat: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`ai-chat send ... | head`): stop quietly, as cat does.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    return 0


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _messages(args: argparse.Namespace) -> list[dict[str, object]]:
    messages: list[dict[str, object]] = []
    if args.system is not None:
        messages.append(
            {"id": "system-1", "role": "system", "parts": [{"type": "text", "text": args.system}]}
        )
    messages.append(
        {"id": "user-1", "role": "user", "parts": [{"type": "text", "text": args.text}]}
    )
    return messages


async def _send(
    provider: _Provider, messages: list[dict[str, object]], as_json: bool, out: TextIO
) -> None:
    adapter = _create_adapter(provider)
    try:
        await _print_stream(create_chat_stream(adapter, {"messages": messages}), as_json, out)
    finally:
        await _close(adapter)


# --- serve -------------------------------------------------------------------------------


def _open_store(spec: _StoreSpec) -> ConversationStore | None:
    """The store ``--store`` names (not opened yet), or ``None``."""
    from .store import MemoryConversationStore, SQLiteConversationStore

    if spec.kind == "memory":
        return MemoryConversationStore()
    if spec.kind == "sqlite":
        assert spec.target is not None
        return SQLiteConversationStore(spec.target)
    if spec.kind == "postgres":
        assert spec.target is not None
        try:
            from .store import PostgresConversationStore
        except ImportError as exc:
            raise _CommandError(
                '--store postgresql://... needs the postgres extra: pip install "ai_chat[postgres]" '
                '(or uv add "ai_chat[postgres]")'
            ) from exc
        return PostgresConversationStore(spec.target)
    return None


def _serve(
    provider: _Provider, host: str, port: int, store_spec: _StoreSpec, args: argparse.Namespace
) -> int:
    try:
        import uvicorn

        from .server import create_chat_app
    except ImportError as exc:
        raise _CommandError(
            'serve needs the server extra: pip install "ai_chat[server]" '
            '(or uv add "ai_chat[server]")'
        ) from exc
    listener = _listen(host, port)
    with listener:
        adapter = _create_adapter(provider)
        # After the port and the provider are known good: a first start creates the
        # secret file, which a command that cannot serve should not leave behind.
        security = security_settings(args, host, store_spec.kind, store_spec.target)
        store = _open_store(store_spec)
        app = create_chat_app(adapter, page=True, store=store, **security)
        config = uvicorn.Config(app, log_level="warning", server_header=False)
        server = uvicorn.Server(config)
        bound_host, bound_port = cast("tuple[str, int]", listener.getsockname()[:2])
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host

        async def run() -> None:
            try:
                if store is not None:
                    # Open (and migrate) now: a bad path or URL fails before serving.
                    await store.list_conversations("chat", "-", limit=1)
                    print(
                        f"ai-chat: keeping conversations in {store_spec.describe()}",
                        file=sys.stderr,
                        flush=True,
                    )
                print(
                    f"ai-chat: serving {_describe(provider)} at http://{shown}:{bound_port}/ "
                    "(Ctrl+C to stop)",
                    file=sys.stderr,
                    flush=True,
                )
                warning = exposure_warning(
                    f"{shown}:{bound_port}",
                    loopback=_is_loopback(bound_host),
                    provider=provider.name,
                    store=store is not None,
                    token=security["token"] is not None,
                )
                if warning is not None:
                    print(f"ai-chat: warning: {warning}", file=sys.stderr, flush=True)
                await server.serve(sockets=[listener])
            finally:
                try:
                    await _close(adapter)
                finally:
                    if store is not None:
                        with anyio.CancelScope(shield=True):
                            await store.aclose()

        # Ctrl+C is how a server is stopped: uvicorn has shut down gracefully by then.
        with contextlib.suppress(KeyboardInterrupt):
            anyio.run(run)
    print("ai-chat: stopped", file=sys.stderr)
    return 0


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.partition("%")[0]).is_loopback
    except ValueError:
        return False


def _listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket, bound here so that the address is known (port 0 works)."""
    if not 0 <= port <= 65535:
        raise _CommandError(f"--port must be between 0 and 65535, got {port}")
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        listener = socket.socket(family, kind, proto)
    except OSError as exc:
        raise _CommandError(f"cannot listen on {host}:{port}: {exc}") from exc
    try:
        if os.name != "nt":
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(address)
        listener.listen(2048)
        listener.setblocking(False)
    except OSError as exc:
        listener.close()
        raise _CommandError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    return listener


# --- send output -------------------------------------------------------------------------


async def _print_stream(stream: ChatStream, as_json: bool, out: TextIO) -> None:
    printer = _Printer(out)
    async with stream:
        async for event in stream:
            if as_json:
                out.write(json.dumps(event, ensure_ascii=False) + "\n")
                out.flush()
            else:
                printer.show(event)


class _Printer:
    """Human output: text live, reasoning live but marked, the rest summarized."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._column = 0
        self._section: str | None = None

    def _write(self, text: str) -> None:
        self._out.write(text)
        self._out.flush()
        newline = text.rfind("\n")
        self._column = len(text) - newline - 1 if newline >= 0 else self._column + len(text)

    def _line(self, text: str) -> None:
        if self._column:
            self._write("\n")
        self._write(text + "\n")
        self._section = None

    def _enter(self, section: str, header: str) -> None:
        if self._section != section:
            if self._column:
                self._write("\n")
            self._write(header)
            self._section = section

    def show(self, event: ChatEvent) -> None:
        kind = event["type"]
        if kind == "reasoning-delta":
            self._enter("reasoning", "[reasoning] ")
            self._write(cast(str, event.get("delta", "")))
        elif kind == "text-delta":
            self._enter("text", "")
            self._write(cast(str, event.get("delta", "")))
        elif kind == "tool-input-available":
            call = cast(ToolInputAvailableEvent, event)
            self._line(
                f"[tool call {call['toolName']} {json.dumps(call['input'], ensure_ascii=False)}]"
            )
        elif kind in ("tool-input-error", "tool-output-error"):
            self._line(f"[{kind}: {event.get('errorText', '')}]")
        elif kind == "tool-output-available":
            self._line(f"[tool output {json.dumps(event.get('output'), ensure_ascii=False)}]")
        elif kind in ("source-url", "source-document", "file"):
            self._line(f"[{kind} {event.get('url') or event.get('title', '')}]")
        elif kind == "finish":
            self._line(_finish_summary(cast(FinishEvent, event)))


def _finish_summary(event: FinishEvent) -> str:
    summary = f"[finish: {event['finishReason']}"
    usage = event.get("usage")
    if usage:
        counts = [
            f"{usage[key]} {label}"
            for key, label in (
                ("inputTokens", "in"),
                ("outputTokens", "out"),
                ("reasoningTokens", "reasoning"),
                ("cachedInputTokens", "cached"),
                ("totalTokens", "total"),
            )
            if key in usage
        ]
        summary += " · tokens: " + ", ".join(counts)
    return summary + "]"


if __name__ == "__main__":
    sys.exit(main())
