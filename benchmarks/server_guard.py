"""What the server's security checks cost per request, against the request they guard.

Run with ``uv run python benchmarks/server_guard.py`` (``--quick`` for a short smoke run).

Both are measured in this run, in rounds that alternate (the median of each is printed):

* **the checks**: what every chat request from a returning browser goes through before
  the body is read: ``Host``, ``Origin``/``Sec-Fetch-Site``, the visitor cookie's HMAC,
  ``Content-Type``, and the response headers, on a Starlette ``Request`` of the same
  headers;
* **the request**: one whole ``POST /api/chat`` through ``create_chat_app`` (with those
  checks and the answer limits) by direct ASGI calls, answered by a five-event
  ``ScriptedAdapter`` answer: the cheapest real request there is.

The ratio is the share of the cheapest request the checks take; with a real model the
answer takes seconds and the share is nil.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Mapping
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message

from ai_chat.adapters import ScriptedAdapter
from ai_chat.server import AnswerLimits, create_chat_app
from ai_chat.server._security import Guard

EVENTS: list[Mapping[str, object]] = [
    {"type": "start"},
    {"type": "text-start", "id": "t"},
    {"type": "text-delta", "id": "t", "delta": "ok"},
    {"type": "text-end", "id": "t"},
    {"type": "finish", "finishReason": "stop"},
]
BODY = json.dumps(
    {
        "id": "c",
        "messages": [{"id": "u", "role": "user", "parts": [{"type": "text", "text": "Hi"}]}],
    }
).encode()
SECRET = b"the benchmark's secret, 32 bytes"


def scope_of(headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/api/chat",
        "raw_path": b"/api/chat",
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }


def browser_headers(cookie: str) -> list[tuple[bytes, bytes]]:
    return [
        (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"),
        (b"origin", b"http://127.0.0.1:8000"),
        (b"sec-fetch-site", b"same-origin"),
        (b"cookie", cookie.encode()),
        (b"content-length", str(len(BODY)).encode()),
    ]


async def visitor_cookie(app: ASGIApp) -> str:
    """The cookie the page sets for a new browser."""
    found: list[str] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            for name, value in message["headers"]:
                if name == b"set-cookie":
                    found.append(value.decode().split(";", 1)[0])

    scope = scope_of([(b"host", b"127.0.0.1:8000")])
    await app({**scope, "method": "GET", "path": "/", "raw_path": b"/"}, receive, send)
    return found[0]


async def one_request(app: ASGIApp, headers: list[tuple[bytes, bytes]]) -> None:
    delivered = False

    async def receive() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": BODY, "more_body": False}
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start" and message["status"] != 200:
            raise AssertionError(f"status {message['status']}")

    await app(scope_of(headers), receive, send)


async def requests_round(app: ASGIApp, headers: list[tuple[bytes, bytes]], n: int) -> float:
    started = time.perf_counter()
    for _ in range(n):
        await one_request(app, headers)
    return (time.perf_counter() - started) / n


async def checks_round(guard: Guard, headers: list[tuple[bytes, bytes]], n: int) -> float:
    scope = scope_of(headers)
    started = time.perf_counter()
    for _ in range(n):
        request = Request(scope)
        guard.check_host(request)
        origin = guard.check_origin(request)
        guard.check_token(request)
        identity = await guard.identify(request)
        guard.decorate(request, Response(), origin, identity.cookie)
    return (time.perf_counter() - started) / n


async def main(rounds: int, n: int) -> None:
    limits = AnswerLimits(per_minute=None)  # every round reuses one visitor
    app = create_chat_app(ScriptedAdapter(EVENTS), secret=SECRET, answer_limits=limits)
    headers = browser_headers(await visitor_cookie(app))
    guard = Guard(secret=SECRET)
    await requests_round(app, headers, n // 10)  # warm up
    checks: list[float] = []
    whole: list[float] = []
    for _ in range(rounds):
        checks.append(await checks_round(guard, headers, n))
        whole.append(await requests_round(app, headers, n))
    check, request = statistics.median(checks), statistics.median(whole)
    print(f"the checks, per request:              {check * 1e6:8.1f} us")
    print(f"one POST /api/chat (5 events), whole: {request * 1e6:8.1f} us")
    print(f"ratio checks / request: {check / request:.3f} (the share of the cheapest request)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="What the security checks cost per request.")
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    arguments = parser.parse_args()
    anyio.run(main, 3 if arguments.quick else 9, 200 if arguments.quick else 2000)
