"""An existing Starlette app that also serves chat answers to the AI SDK's ``useChat``.

Needs the server extra (pip install "ai_chat[server]"). Run:

    uv run python examples/server_app.py              # http://127.0.0.1:8000/assistant/
    uv run python examples/server_app.py --smoke      # start, send one message, stop

It shows three ways in, all answered by the offline ScriptedAdapter (swap in
``OpenAIChatAdapter(model=...)`` or any other adapter):

* ``POST /api/chat``: :func:`~ai_chat.server.chat_endpoint` mounted as a route, which is
  what a React app's ``useChat()`` (``DefaultChatTransport``) posts to by default;
* ``/assistant/``: a whole :func:`~ai_chat.server.create_chat_app` mounted under a
  prefix: the chat page at ``/assistant/`` and its endpoint at ``/assistant/api/chat``;
* ``POST /api/custom``: your own endpoint that builds the stream itself and returns a
  :class:`~ai_chat.server.UIMessageStreamResponse` (here, to set a parameter per request).
"""

from __future__ import annotations

import argparse
import json
import socket

import anyio
import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route

from ai_chat import (
    AIChatError,
    ProviderError,
    ValidationError,
    create_chat_stream,
)
from ai_chat.adapters import ScriptedAdapter
from ai_chat.server import (
    UIMessageStreamResponse,
    chat_endpoint,
    convert_ui_messages,
    create_chat_app,
)

adapter = ScriptedAdapter()


def describe(exc: Exception) -> str:
    """What a user may see of a failure (everything else is only logged)."""
    if isinstance(exc, ProviderError) and exc.status == 429:
        return "The model is busy; try again in a moment."
    return "Something went wrong while answering."


async def health(request: Request) -> Response:
    return JSONResponse({"ok": True})


async def custom(request: Request) -> Response:
    # chat_endpoint also bounds the body and answers bad JSON with a 400; keep it for
    # public endpoints. This shows the pieces it is made of.
    body = await request.json()
    try:
        converted = convert_ui_messages(
            body.get("messages"),
            trigger=body.get("trigger", "submit-message"),
            message_id=body.get("messageId"),
        )
        stream = create_chat_stream(
            adapter, {"messages": converted.messages, "parameters": {"temperature": 0.2}}
        )
    except AIChatError as exc:
        status = 422 if isinstance(exc, ValidationError) else 413
        return JSONResponse({"error": {"message": str(exc)}}, status_code=status)
    return UIMessageStreamResponse(stream, message_id=converted.message_id, on_error=describe)


app = Starlette(
    routes=[
        Route("/health", health),
        Route("/api/chat", chat_endpoint(adapter, on_error=describe), methods=["POST"]),
        Route("/api/custom", custom, methods=["POST"]),
        Mount("/assistant", app=create_chat_app(adapter, on_error=describe)),
    ]
)


async def smoke() -> None:
    """Serve on an ephemeral port, send one message to each endpoint, print the answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_level="warning"))
    body = {
        "id": "chat-1",
        "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Hi"}]}],
        "trigger": "submit-message",
    }
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: server.serve(sockets=[sock]))
        while not server.started:  # noqa: ASYNC110 - uvicorn exposes a flag, not an event
            await anyio.sleep(0.01)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            for path in ("/api/chat", "/assistant/api/chat", "/api/custom"):
                response = await client.post(path, json=body)
                chunks = [
                    json.loads(line[6:])
                    for line in response.text.split("\n\n")
                    if line.startswith("data: {")
                ]
                text = "".join(c["delta"] for c in chunks if c["type"] == "text-delta")
                print(f"{path}: {response.status_code} {text[:40]!r}... {chunks[-1]['type']}")
            page = await client.get("/assistant/")
            print(f"/assistant/: {page.status_code} {page.headers['content-type']}")
        server.should_exit = True
    sock.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Serve chat answers to the AI SDK.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--smoke", action="store_true", help="send one message and stop")
    arguments = parser.parse_args()
    if arguments.smoke:
        anyio.run(smoke)  # uvicorn runs on asyncio
    else:
        uvicorn.run(app, host=arguments.host, port=arguments.port)
