"""``ai-chat send``: one user message, the answer printed as it streams."""

from __future__ import annotations

import argparse
from typing import TextIO

from .._stream import create_chat_stream
from .printer import print_stream
from .provider import Provider, close_adapter, create_adapter

__all__ = ["messages", "send"]


def messages(args: argparse.Namespace) -> list[dict[str, object]]:
    """The history the command line gives: ``--system`` (if any), then the user's text."""
    history: list[dict[str, object]] = []
    if args.system is not None:
        history.append(
            {"id": "system-1", "role": "system", "parts": [{"type": "text", "text": args.system}]}
        )
    history.append({"id": "user-1", "role": "user", "parts": [{"type": "text", "text": args.text}]})
    return history


async def send(
    provider: Provider, history: list[dict[str, object]], as_json: bool, out: TextIO
) -> None:
    """Stream the answer to ``history`` from ``provider`` to ``out``."""
    adapter = create_adapter(provider)
    try:
        await print_stream(create_chat_stream(adapter, {"messages": history}), as_json, out)
    finally:
        await close_adapter(adapter)
