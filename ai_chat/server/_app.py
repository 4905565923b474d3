"""The chat endpoint (``POST /api/chat``) and the ASGI app around it."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, cast

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from .._adapter import AIChatAdapter
from .._errors import ConfigurationError, LimitExceededError, ValidationError
from .._stream import (
    DEFAULT_CLOSE_TIMEOUT,
    DEFAULT_MAX_RESPONSE_CHARS,
    create_chat_stream,
)
from ..limits import JSONLimits
from ..limits._parse import reject_constant
from ._encode import new_message_id
from ._http import JSONError, read_body
from ._page import CHAT_PAGE_HTML, chat_page_html
from ._persist import Persistence, SubjectResolver, default_subject
from ._response import DEFAULT_KEEP_ALIVE, UIMessageStreamResponse, check_keep_alive
from ._ui_messages import convert_ui_messages

if TYPE_CHECKING:
    from ..store import ConversationStore

__all__ = ["DEFAULT_MAX_BODY_BYTES", "chat_endpoint", "create_chat_app"]

DEFAULT_MAX_BODY_BYTES: Final = 4 * 1024 * 1024
_TRIGGERS: Final = ("submit-message", "regenerate-message")
_DEFAULT_LIMITS: Final = JSONLimits()
_ALL_METHODS: Final = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

Endpoint = Callable[[Request], Awaitable[Response]]


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
    store: ConversationStore | None = None,
    context: str = "chat",
    subject: SubjectResolver = default_subject,
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
        store: keep conversations in this :class:`~ai_chat.store.ConversationStore`
            (see below); ``None`` keeps nothing.
        context: the store context of the conversations (the agent use case).
        subject: ``subject(request) -> str`` (or an awaitable of one): the owner of the
            conversation, such as the authenticated user's id. The default reads the
            ``x-ai-chat-subject`` header (``"anonymous"`` without one), which any client
            can set: it is for development only.

    With a ``store``, the request's ``id`` names the conversation: a new id creates it
    (for the context and the request's subject), a known id continues it, and an id
    that belongs to another subject or context is refused (403 ``forbidden``); a
    request without an id is refused (422). The request's new message (its last one,
    or the pieces of the assistant message it continues) is stored before the adapter
    runs; storing it again (a retry) changes nothing, and a stored message sent again
    with other content (what the AI SDK sends when a user edits a sent message) is
    refused: 409 ``edit_unsupported``, whose error names the message (``messageId``),
    since editing needs branches in the store, which the server does not have yet. The
    answer is assembled from its events and stored once the stream has ended after
    ``finish``, before the response ends; an answer that failed or was aborted is not
    stored at all. The server names each new answer (``msg-<16 hex digits>``, in the
    ``start`` chunk) instead of the adapter, so that a retried or regenerated answer
    never collides with a stored one. The adapter is answered from the client's history, as without a
    store. A store failure answers 503 ``store_unavailable`` before the answer starts,
    and an ``error`` chunk after it.

    Raises:
        ConfigurationError: an argument is out of range (checked here, not per request).
        ValidationError: ``tools`` or ``parameters`` are invalid.
    """
    persistence = None if store is None else Persistence(store, context, subject)
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
            body = await read_body(request, max_body_bytes)
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
        except JSONError as exc:
            return exc.response()
        except ValidationError as exc:
            return JSONError(422, "invalid_request", exc.reason, exc.path).response()
        except LimitExceededError as exc:
            return JSONError(413, "limit_exceeded", str(exc), exc.path).response()
        recorder = None
        if persistence is not None:
            try:
                recorder = await persistence.begin(
                    request,
                    payload.get("id"),
                    cast("list[dict[str, Any]]", list(stream.request["messages"])),
                    conversation.message_id,
                )
            except JSONError as exc:
                await stream.aclose()
                return exc.response()
            except BaseException:
                await stream.aclose()
                raise
        answer_id = conversation.message_id
        if recorder is not None and answer_id is None:
            # The server names each new answer, so that ids never collide in the log
            # (an adapter may reuse its ids, for a regenerated or retried answer).
            answer_id = new_message_id()
        response = UIMessageStreamResponse(
            stream,
            message_id=answer_id,
            on_error=on_error,
            keep_alive=keep_alive,
        )
        response.recorder = recorder
        return response

    return endpoint


def _parse(body: bytes) -> dict[str, object]:
    try:
        payload: object = json.loads(body.decode("utf-8"), parse_constant=reject_constant)
    except UnicodeDecodeError as exc:
        raise JSONError(400, "invalid_json", f"the body is not UTF-8 (byte {exc.start})") from None
    except RecursionError:
        raise JSONError(400, "invalid_json", "the body is nested too deeply") from None
    except ValueError as exc:
        raise JSONError(400, "invalid_json", f"the body is not JSON: {exc}") from None
    if type(payload) is not dict:
        raise JSONError(422, "invalid_request", "expected a JSON object", "$")
    return cast("dict[str, object]", payload)


def _envelope(payload: dict[str, object]) -> tuple[str, str | None]:
    if "messages" not in payload:
        raise JSONError(422, "invalid_request", 'missing required field "messages"', "$")
    trigger = payload.get("trigger", "submit-message")
    if trigger not in _TRIGGERS:
        raise JSONError(
            422,
            "invalid_request",
            f'expected "submit-message" or "regenerate-message", got {json.dumps(trigger)}',
            "$.trigger",
        )
    message_id = payload.get("messageId")
    if message_id is not None and (type(message_id) is not str or not message_id):
        raise JSONError(
            422, "invalid_request", "expected a non-empty string or no field", "$.messageId"
        )
    chat_id = payload.get("id")
    if chat_id is not None and type(chat_id) is not str:
        raise JSONError(422, "invalid_request", "expected a string", "$.id")
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
    store: ConversationStore | None = None,
    context: str = "chat",
    subject: SubjectResolver = default_subject,
    chats_path: str = "/api/chats",
) -> Starlette:
    """An ASGI app serving ``POST {path}`` (the chat endpoint) and, with ``page``, ``GET /``.

    ``GET /`` serves the dependency-free chat page, which talks to ``/api/chat``. Every
    keyword after ``path`` except ``chats_path`` is passed to :func:`chat_endpoint`. Run
    it with any ASGI server: ``uvicorn.run(create_chat_app(adapter))``.

    With a ``store``, the app also serves the subject's conversations (the same
    ``subject`` resolver decides whose), as JSON:

    * ``GET {chats_path}``: ``{"chats": [{"id", "title", "createdAt", "updatedAt",
      "rating", "ratingComment"}]}``, the 50 most recently active first; the title is
      the first user text (at most 80 characters);
    * ``GET {chats_path}/{id}``: ``{"chat": {...}, "messages": UIMessage[]}``, the stored
      conversation as the AI SDK client shows it (``useChat({messages})`` takes it);
    * ``POST {chats_path}/{id}/rating`` with ``{"rating": 1..5, "comment"?}``.

    An unknown id and another subject's id both answer 404 ``not_found``. The page then
    lists the conversations and restores one on reload; without a store it keeps none.

    Raises:
        ConfigurationError: an argument is out of range.
        ValidationError: ``tools`` or ``parameters`` are invalid.
    """
    if type(path) is not str or not path.startswith("/"):
        raise ConfigurationError("path", path, 'a URL path starting with "/"')
    if type(chats_path) is not str or not chats_path.startswith("/") or chats_path == path:
        raise ConfigurationError(
            "chats_path", chats_path, 'a URL path starting with "/", other than path'
        )
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
        store=store,
        context=context,
        subject=subject,
    )
    # Every method reaches the endpoint, so that a wrong one gets a JSON 405 too.
    routes = [Route(path, endpoint, methods=_ALL_METHODS)]
    if store is not None:
        persistence = Persistence(store, context, subject)
        chats = chats_path.rstrip("/")
        routes += [
            Route(chats, persistence.list_chats, methods=["GET"]),
            Route(chats + "/{chat_id}", persistence.get_chat, methods=["GET"]),
            Route(chats + "/{chat_id}/rating", persistence.rate, methods=["POST"]),
        ]
    if page:
        # The page uses relative URLs, so it also works under a mount prefix.
        if store is not None:
            html = chat_page_html(path[1:], chats_path.rstrip("/")[1:])
        elif path == "/api/chat":
            html = CHAT_PAGE_HTML
        else:
            html = chat_page_html(path[1:])

        async def chat_page(request: Request) -> Response:
            return HTMLResponse(html)

        routes.append(Route("/", chat_page, methods=["GET"]))
    return Starlette(routes=routes)
