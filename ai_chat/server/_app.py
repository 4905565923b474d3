"""The chat endpoint (``POST /api/chat``) and the ASGI app around it."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import aclosing
from typing import Final, cast

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from .._adapter import AIChatAdapter
from .._errors import AIChatError, ConfigurationError, LimitExceededError, ValidationError
from .._stream import (
    DEFAULT_CLOSE_TIMEOUT,
    DEFAULT_MAX_RESPONSE_CHARS,
    create_chat_stream,
)
from ..limits import JSONLimits
from ._page import CHAT_PAGE_HTML, chat_page_html
from ._response import DEFAULT_KEEP_ALIVE, UIMessageStreamResponse, check_keep_alive
from ._ui_messages import convert_ui_messages

__all__ = ["DEFAULT_MAX_BODY_BYTES", "chat_endpoint", "create_chat_app"]

DEFAULT_MAX_BODY_BYTES: Final = 4 * 1024 * 1024
_TRIGGERS: Final = ("submit-message", "regenerate-message")
_DEFAULT_LIMITS: Final = JSONLimits()
_ALL_METHODS: Final = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

Endpoint = Callable[[Request], Awaitable[Response]]


class _BadRequest(AIChatError):
    def __init__(self, status: int, kind: str, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message
        self.path = path

    def response(self) -> JSONResponse:
        error: dict[str, object] = {"type": self.kind, "message": self.message}
        if self.path is not None:
            error["path"] = self.path
        return JSONResponse({"error": error}, status_code=self.status)


def chat_endpoint(
    adapter: AIChatAdapter,
    *,
    tools: Sequence[Mapping[str, object]] = (),
    parameters: Mapping[str, object] | None = None,
    limits: JSONLimits = _DEFAULT_LIMITS,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_response_chars: int = DEFAULT_MAX_RESPONSE_CHARS,
    close_timeout: float = DEFAULT_CLOSE_TIMEOUT,
    keep_alive: float | None = DEFAULT_KEEP_ALIVE,
    on_error: Callable[[Exception], str] | None = None,
) -> Endpoint:
    """The ``POST /api/chat`` endpoint as a Starlette endpoint function.

    Mount it in any Starlette or FastAPI app (``app.add_route("/api/chat",
    chat_endpoint(adapter), methods=["POST"])``); :func:`create_chat_app` is an app with
    just this endpoint (and the chat page). Each request is answered by ``adapter``.

    The body is what the AI SDK's ``DefaultChatTransport`` sends: ``{"id", "messages":
    UIMessage[], "trigger", "messageId"?}``; other keys are ignored (an app's extra
    ``body`` never reaches the adapter). Tools and parameters are the server's: the
    ``tools`` and ``parameters`` given here.

    Answers: a UI message stream (:class:`UIMessageStreamResponse`), or a JSON error
    ``{"error": {"type", "message", "path"?}}``: 400 ``invalid_json`` (not UTF-8 JSON),
    413 ``body_too_large`` (over ``max_body_bytes``; the body is never read past it) or
    ``limit_exceeded`` (the messages exceed ``limits``), 422 ``invalid_request`` (the
    wrong shape; ``path`` names the place, such as ``$.messages[0].role``), 405 for
    another method.

    Args:
        adapter: answers every request.
        tools: tool definitions offered to the model (``{name, inputSchema,
            description?}``).
        parameters: request parameters (``model``, ``temperature``...).
        limits: JSON limits for the normalized history, tools, parameters and events.
        max_body_bytes: the largest request body accepted, in bytes.
        max_response_chars: see :func:`ai_chat.create_chat_stream`.
        close_timeout: see :func:`ai_chat.create_chat_stream`.
        keep_alive: see :class:`UIMessageStreamResponse`.
        on_error: see :class:`UIMessageStreamResponse`.

    Raises:
        ConfigurationError: an argument is out of range (checked here, not per request).
        ValidationError: ``tools`` or ``parameters`` are invalid.
    """
    if type(max_body_bytes) is not int or max_body_bytes < 1:
        raise ConfigurationError("max_body_bytes", max_body_bytes, "a positive int")
    if not callable(getattr(adapter, "stream", None)):
        raise ConfigurationError(
            "adapter", adapter, "an AIChatAdapter (an object with a stream(request, signal) method)"
        )
    # Check (and freeze) the server's own configuration once, with an empty history.
    checked = create_chat_stream(
        adapter,
        {"messages": [], "tools": list(tools), "parameters": dict(parameters or {})},
        limits=limits,
        max_response_chars=max_response_chars,
        close_timeout=close_timeout,
    ).request
    base: dict[str, object] = {"tools": checked["tools"], "parameters": checked["parameters"]}
    check_keep_alive(keep_alive)

    async def endpoint(request: Request) -> Response:
        if request.method != "POST":
            return JSONResponse(
                {"error": {"type": "method_not_allowed", "message": "use POST"}},
                status_code=405,
                headers={"allow": "POST"},
            )
        try:
            body = await _read_body(request, max_body_bytes)
            payload = _parse(body)
            trigger, message_id = _envelope(payload)
            conversation = convert_ui_messages(
                payload["messages"], trigger=trigger, message_id=message_id
            )
            stream = create_chat_stream(
                adapter,
                {"messages": conversation.messages, **base},
                limits=limits,
                max_response_chars=max_response_chars,
                close_timeout=close_timeout,
            )
        except _BadRequest as exc:
            return exc.response()
        except ValidationError as exc:
            return _BadRequest(422, "invalid_request", exc.reason, exc.path).response()
        except LimitExceededError as exc:
            return _BadRequest(413, "limit_exceeded", str(exc), exc.path).response()
        except ClientDisconnect:
            return Response(status_code=400)
        return UIMessageStreamResponse(
            stream,
            message_id=conversation.message_id,
            on_error=on_error,
            keep_alive=keep_alive,
        )

    return endpoint


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise _BadRequest(400, "invalid_request", "the content-length header is not a number")
        if int(declared) > limit:
            raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    async with aclosing(request.stream()) as pieces:
        async for chunk in pieces:
            size += len(chunk)
            if size > limit:
                raise _too_large(limit)
            chunks.append(chunk)
    return b"".join(chunks)


def _too_large(limit: int) -> _BadRequest:
    return _BadRequest(
        413, "body_too_large", f"the request body is larger than max_body_bytes={limit:,} bytes"
    )


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _parse(body: bytes) -> dict[str, object]:
    try:
        payload: object = json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
    except UnicodeDecodeError as exc:
        raise _BadRequest(
            400, "invalid_json", f"the body is not UTF-8 (byte {exc.start})"
        ) from None
    except RecursionError:
        raise _BadRequest(400, "invalid_json", "the body is nested too deeply") from None
    except ValueError as exc:
        raise _BadRequest(400, "invalid_json", f"the body is not JSON: {exc}") from None
    if type(payload) is not dict:
        raise _BadRequest(422, "invalid_request", "expected a JSON object", "$")
    return cast("dict[str, object]", payload)


def _envelope(payload: dict[str, object]) -> tuple[str, str | None]:
    if "messages" not in payload:
        raise _BadRequest(422, "invalid_request", 'missing required field "messages"', "$")
    trigger = payload.get("trigger", "submit-message")
    if trigger not in _TRIGGERS:
        raise _BadRequest(
            422,
            "invalid_request",
            f'expected "submit-message" or "regenerate-message", got {json.dumps(trigger)}',
            "$.trigger",
        )
    message_id = payload.get("messageId")
    if message_id is not None and (type(message_id) is not str or not message_id):
        raise _BadRequest(
            422, "invalid_request", "expected a non-empty string or no field", "$.messageId"
        )
    chat_id = payload.get("id")
    if chat_id is not None and type(chat_id) is not str:
        raise _BadRequest(422, "invalid_request", "expected a string", "$.id")
    return cast(str, trigger), message_id


def create_chat_app(
    adapter: AIChatAdapter,
    *,
    page: bool = True,
    path: str = "/api/chat",
    tools: Sequence[Mapping[str, object]] = (),
    parameters: Mapping[str, object] | None = None,
    limits: JSONLimits = _DEFAULT_LIMITS,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_response_chars: int = DEFAULT_MAX_RESPONSE_CHARS,
    close_timeout: float = DEFAULT_CLOSE_TIMEOUT,
    keep_alive: float | None = DEFAULT_KEEP_ALIVE,
    on_error: Callable[[Exception], str] | None = None,
) -> Starlette:
    """An ASGI app serving ``POST {path}`` (the chat endpoint) and, with ``page``, ``GET /``.

    ``GET /`` serves the dependency-free chat page, which talks to ``/api/chat``. Every
    keyword after ``path`` is passed to :func:`chat_endpoint`. Run it with any ASGI
    server: ``uvicorn.run(create_chat_app(adapter))``.

    Raises:
        ConfigurationError: an argument is out of range.
        ValidationError: ``tools`` or ``parameters`` are invalid.
    """
    if type(path) is not str or not path.startswith("/"):
        raise ConfigurationError("path", path, 'a URL path starting with "/"')
    endpoint = chat_endpoint(
        adapter,
        tools=tools,
        parameters=parameters,
        limits=limits,
        max_body_bytes=max_body_bytes,
        max_response_chars=max_response_chars,
        close_timeout=close_timeout,
        keep_alive=keep_alive,
        on_error=on_error,
    )
    # Every method reaches the endpoint, so that a wrong one gets a JSON 405 too.
    routes = [Route(path, endpoint, methods=_ALL_METHODS)]
    if page:
        # The page posts to a relative URL, so it also works under a mount prefix.
        html = CHAT_PAGE_HTML if path == "/api/chat" else chat_page_html(path[1:])

        async def chat_page(request: Request) -> Response:
            return HTMLResponse(html)

        routes.append(Route("/", chat_page, methods=["GET"]))
    return Starlette(routes=routes)
