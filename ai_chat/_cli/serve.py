"""``ai-chat serve``: the UI message stream endpoint and the chat page, on uvicorn.

The conversations are kept in the store ``--store`` names (SQLite in ``./ai-chat.db`` by
default), opened and migrated before the server starts, so that a bad path or URL fails
at once.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import os
import socket
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, cast

import anyio

from .provider import CommandError, Provider, close_adapter, create_adapter
from .security import exposure_warning, security_settings

if TYPE_CHECKING:
    from ..store import ConversationStore

__all__ = ["DEFAULT_STORE", "StoreSpec", "is_loopback", "serve", "store_spec"]

DEFAULT_STORE: Final = "sqlite:ai-chat.db"


@dataclass(frozen=True)
class StoreSpec:
    """What ``--store`` names."""

    kind: str  # "none", "memory", "sqlite" or "postgres"
    target: str | None  # the SQLite path or the PostgreSQL URL

    def describe(self) -> str:
        """Where conversations are kept, for the banner (never a URL: it may hold a
        password)."""
        if self.kind == "sqlite":
            return f"the SQLite database {self.target}"
        if self.kind == "postgres":
            return "PostgreSQL"  # the URL may hold a password: not printed
        return "memory (lost when the server stops)"


def store_spec(parser: argparse.ArgumentParser, value: str) -> StoreSpec:
    """``--store``: ``none``, ``memory``, ``sqlite:PATH`` or ``postgresql://...``."""
    if value == "none":
        return StoreSpec("none", None)
    if value == "memory":
        return StoreSpec("memory", None)
    if value.startswith("sqlite:"):
        path = value[len("sqlite:") :]
        if not path:
            parser.error("--store sqlite:PATH needs a path, such as sqlite:ai-chat.db")
        return StoreSpec("sqlite", path)
    if not value.startswith(("postgresql://", "postgres://")):
        parser.error(
            f"--store must be memory, sqlite:PATH, a postgresql:// URL or none, got {value!r}"
        )
    return StoreSpec("postgres", value)


def _open_store(spec: StoreSpec) -> ConversationStore | None:
    """The store ``--store`` names (not opened yet), or ``None``."""
    from ..store import MemoryConversationStore, SQLiteConversationStore

    if spec.kind == "memory":
        return MemoryConversationStore()
    if spec.kind == "sqlite":
        assert spec.target is not None
        return SQLiteConversationStore(spec.target)
    if spec.kind == "postgres":
        assert spec.target is not None
        try:
            from ..store import PostgresConversationStore
        except ImportError as exc:
            raise CommandError(
                '--store postgresql://... needs the postgres extra: pip install "ai_chat[postgres]" '
                '(or uv add "ai_chat[postgres]")'
            ) from exc
        return PostgresConversationStore(spec.target)
    return None


def serve(
    provider: Provider, host: str, port: int, store: StoreSpec, args: argparse.Namespace
) -> int:
    """Serve until Ctrl+C; returns the exit status."""
    try:
        import uvicorn

        from ..server import create_chat_app
    except ImportError as exc:
        raise CommandError(
            'serve needs the server extra: pip install "ai_chat[server]" '
            '(or uv add "ai_chat[server]")'
        ) from exc
    listener = _listen(host, port)
    with listener:
        adapter = create_adapter(provider)
        # After the port and the provider are known good: a first start creates the
        # secret file, which a command that cannot serve should not leave behind.
        security = security_settings(args, host, store.kind, store.target)
        conversations = _open_store(store)
        app = create_chat_app(adapter, page=True, store=conversations, **security)
        config = uvicorn.Config(app, log_level="warning", server_header=False)
        server = uvicorn.Server(config)
        bound_host, bound_port = cast("tuple[str, int]", listener.getsockname()[:2])
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host

        async def run() -> None:
            try:
                if conversations is not None:
                    # Open (and migrate) now: a bad path or URL fails before serving.
                    await conversations.list_conversations("chat", "-", limit=1)
                    print(
                        f"ai-chat: keeping conversations in {store.describe()}",
                        file=sys.stderr,
                        flush=True,
                    )
                print(
                    f"ai-chat: serving {provider.describe()} at http://{shown}:{bound_port}/ "
                    "(Ctrl+C to stop)",
                    file=sys.stderr,
                    flush=True,
                )
                warning = exposure_warning(
                    f"{shown}:{bound_port}",
                    loopback=is_loopback(bound_host),
                    provider=provider.name,
                    store=conversations is not None,
                    token=security["token"] is not None,
                )
                if warning is not None:
                    print(f"ai-chat: warning: {warning}", file=sys.stderr, flush=True)
                await server.serve(sockets=[listener])
            finally:
                try:
                    await close_adapter(adapter)
                finally:
                    if conversations is not None:
                        with anyio.CancelScope(shield=True):
                            await conversations.aclose()

        # Ctrl+C is how a server is stopped: uvicorn has shut down gracefully by then.
        with contextlib.suppress(KeyboardInterrupt):
            anyio.run(run)
    print("ai-chat: stopped", file=sys.stderr)
    return 0


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (only this machine can reach it)."""
    try:
        return ipaddress.ip_address(host.partition("%")[0]).is_loopback
    except ValueError:
        return False


def _listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket, bound here so that the address is known (port 0 works)."""
    if not 0 <= port <= 65535:
        raise CommandError(f"--port must be between 0 and 65535, got {port}")
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        listener = socket.socket(family, kind, proto)
    except OSError as exc:
        raise CommandError(f"cannot listen on {host}:{port}: {exc}") from exc
    try:
        if os.name != "nt":
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(address)
        listener.listen(2048)
        listener.setblocking(False)
    except OSError as exc:
        listener.close()
        raise CommandError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    return listener
