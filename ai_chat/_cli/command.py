"""The ``ai-chat`` entry point: parse the command line, run the command, report failures.

A failure ends the command with a one-line message on stderr and exit status 1, never a
traceback; Ctrl+C ends it with 130.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import cast

import anyio

from .._errors import AIChatError
from .provider import CommandError, provider_options, read_provider
from .security import add_security_options
from .send import messages, send
from .serve import DEFAULT_STORE, serve, store_spec
from .transfer import COMMANDS as TRANSFER_COMMANDS
from .transfer import add_commands, transfer

__all__ = ["main", "parser"]


def parser() -> argparse.ArgumentParser:
    """The command line's parser: ``send`` and ``serve``, with the provider options, and
    ``export`` and ``import``."""
    top = argparse.ArgumentParser(
        prog="ai-chat", description="Stream chat answers through ai_chat's send lifecycle."
    )
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    options = provider_options()
    send_command = commands.add_parser(
        "send",
        parents=[options],
        help="send one user message and stream the answer",
        description="Send one user message and print the answer as it streams. Without a "
        "provider option the built-in offline scripted adapter answers: no key, no network.",
    )
    send_command.add_argument("text", help="the user message")
    send_command.add_argument("--system", help="a system message to send first")
    send_command.add_argument(
        "--json", action="store_true", help="print one normalized event per line"
    )
    serve_command = commands.add_parser(
        "serve",
        parents=[options],
        help="serve POST /api/chat and a chat page at /",
        description="Serve the UI message stream endpoint POST /api/chat (what the AI SDK's "
        "useChat talks to) and a chat page at /. Without a provider option the offline "
        "scripted adapter answers. Stop with Ctrl+C.",
    )
    serve_command.add_argument(
        "--host", default="127.0.0.1", help="interface (default: %(default)s)"
    )
    serve_command.add_argument(
        "--port", type=int, default=8000, help="port, 0 for any free one (default: %(default)s)"
    )
    serve_command.add_argument(
        "--store",
        default=DEFAULT_STORE,
        metavar="STORE",
        help="where conversations are kept: memory, sqlite:PATH, a postgresql:// URL (needs "
        "the postgres extra) or none (default: %(default)s, in the working directory)",
    )
    add_security_options(serve_command)
    add_commands(commands)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 failed, 130 interrupted)."""
    command_line = parser()
    args = command_line.parse_args(argv)
    provider = None if args.command in TRANSFER_COMMANDS else read_provider(command_line, args)
    # A terminal that cannot show a character gets an escape, not a traceback.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    try:
        if provider is None:
            return transfer(command_line, args)
        if args.command == "serve":
            store = store_spec(command_line, cast(str, args.store))
            return serve(provider, cast(str, args.host), cast(int, args.port), store, args)
        anyio.run(send, provider, messages(args), args.json, sys.stdout)
    except CommandError as exc:
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


if __name__ == "__main__":
    sys.exit(main())
