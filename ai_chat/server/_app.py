"""The chat endpoint (``POST /api/chat``) and the ASGI app around it."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, cast

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from .._adapter import AIChatAdapter
from .._errors import ConfigurationError, LimitExceededError, ValidationError
from .._stream import (
    DEFAULT_CLOSE_TIMEOUT,
    DEFAULT_MAX_RESPONSE_CHARS,
    ChatStream,
    create_chat_stream,
)
from ..limits import JSONLimits
from ..limits._parse import reject_constant
from ._encode import new_message_id
from ._http import JSONError, read_body
from ._limits import (
    AnswerLimiter,
    AnswerLimits,
    MemoryAnswerLimiter,
    ReleasingResponse,
    rate_limited,
    release,
)
from ._page import chat_page_html
from ._persist import Persistence
from ._response import DEFAULT_KEEP_ALIVE, UIMessageStreamResponse, check_keep_alive
from ._security import ALL_METHODS, AuthCallback, Guard, Identity, admitted_subject, guarded
from ._ui_messages import convert_ui_messages

if TYPE_CHECKING:
    from ..store import ConversationStore

__all__ = ["DEFAULT_MAX_BODY_BYTES", "chat_endpoint", "create_chat_app"]

DEFAULT_MAX_BODY_BYTES: Final = 4 * 1024 * 1024
_TRIGGERS: Final = ("submit-message", "regenerate-message")
_DEFAULT_LIMITS: Final = JSONLimits()
_DEFAULT_ANSWER_LIMITS: Final = AnswerLimits()
_PAGE_HEADERS: Final = {
    "content-security-policy": "frame-ancestors 'none'",
    "x-frame-options": "DENY",
}

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
    allowed_origins: Sequence[str] = (),
    allowed_hosts: Sequence[str] = (),
    token: str | None = None,
    auth: AuthCallback | None = None,
    secret: str | bytes | None = None,
    subject_header: bool = False,
    answer_limits: AnswerLimits | AnswerLimiter | None = _DEFAULT_ANSWER_LIMITS,
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
    another method, and the security answers below.

    Security, on by default (``docs/deploying.md`` says what each protects), checked in
    this order before the body is read: a ``Host`` that is not the bound address, a
    loopback address, ``localhost`` or one of ``allowed_hosts`` answers 421
    ``unknown_host`` (DNS rebinding); a cross-site request (an ``Origin`` of another host
    that is not in ``allowed_origins``, or ``Sec-Fetch-Site`` ``cross-site`` or
    ``same-site``) 403 ``cross_origin``; without the ``token`` 401 ``unauthorized``; a
    subject ``auth`` refuses 401, a tampered visitor cookie 403 ``invalid_session``; a
    body that is not ``Content-Type: application/json`` 415 ``unsupported_media_type``.
    Past ``answer_limits``, 429 ``rate_limited`` with ``Retry-After``, before anything is
    stored or the adapter starts. Requests from ``allowed_origins`` get CORS headers
    (with credentials), preflights included (route ``OPTIONS`` to the endpoint too).

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
        allowed_origins: origins (``https://app.example.com``) of front ends on other
            origins that may call the endpoint, with CORS.
        allowed_hosts: host names the server answers to besides its own address and
            ``localhost`` (the public name behind a reverse proxy); ``"*"`` turns the
            ``Host`` check off.
        token: require ``Authorization: Bearer <token>`` (at least 16 characters).
        auth: ``auth(request) -> str | None`` (or an awaitable of one): the
            authenticated subject (the owner of the conversations and the key of the
            answer limits), or ``None`` to refuse with 401. Without it, each browser is
            its own subject, named by a signed visitor cookie.
        secret: signs the visitor cookies (at least 16 bytes; keep it with the store,
            see :func:`load_secret`). Without one a random secret is used, and visitors
            are new after a restart.
        subject_header: honour the ``x-ai-chat-subject`` header as the subject (any
            client can send any header: for development only).
        answer_limits: answers per subject (:class:`AnswerLimits`, counted in this
            process), another :class:`AnswerLimiter`, or ``None`` for no limits.

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
    guard, answer = _guarded_answer(
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
        allowed_origins=allowed_origins,
        allowed_hosts=allowed_hosts,
        token=token,
        auth=_checked_auth(auth),
        secret=secret,
        subject_header=subject_header,
        answer_limits=answer_limits,
    )
    return guarded(guard, answer, ("POST",), json_body=True)


def _guarded_answer(
    adapter: AIChatAdapter,
    *,
    allowed_origins: Sequence[str],
    allowed_hosts: Sequence[str],
    token: str | None,
    auth: AuthCallback | None,
    secret: str | bytes | None,
    subject_header: bool,
    answer_limits: object,
    **answering: Any,
) -> tuple[Guard, Callable[[Request, Identity], Awaitable[Response]]]:
    """The security settings (checked) and the chat endpoint's work behind them."""
    guard = Guard(
        allowed_origins=allowed_origins,
        allowed_hosts=allowed_hosts,
        token=token,
        auth=auth,
        secret=secret,
        subject_header=subject_header,
    )
    return guard, _answering(adapter, limiter=_limiter_of(answer_limits), **answering)


def _checked_auth(auth: AuthCallback | None) -> AuthCallback | None:
    if auth is not None and not callable(auth):
        raise ConfigurationError("auth", auth, "None or a function of the request")
    return auth


def _limiter_of(limits: object) -> AnswerLimiter | None:
    if limits is None:
        return None
    if isinstance(limits, AnswerLimits):
        return MemoryAnswerLimiter(limits)
    if callable(getattr(limits, "acquire", None)) and callable(getattr(limits, "release", None)):
        return cast(AnswerLimiter, limits)
    raise ConfigurationError("answer_limits", limits, "None, an AnswerLimits or an AnswerLimiter")


def _answering(
    adapter: AIChatAdapter,
    *,
    tools: Sequence[Mapping[str, object]],
    parameters: Mapping[str, object] | None,
    limits: JSONLimits,
    max_body_bytes: int,
    max_response_chars: int,
    close_timeout: float,
    keep_alive: float | None,
    on_error: Callable[[Exception], str] | None,
    store: ConversationStore | None,
    context: str,
    limiter: AnswerLimiter | None,
) -> Callable[[Request, Identity], Awaitable[Response]]:
    """The chat endpoint's work once the request was admitted (see :func:`chat_endpoint`)."""
    persistence = None if store is None else Persistence(store, context, admitted_subject)
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

    async def answer(request: Request, identity: Identity) -> Response:
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
        if limiter is not None:
            refusal = await limiter.acquire(identity.limit_key)
            if refusal is not None:
                await stream.aclose()
                return rate_limited(refusal).response()
        try:
            response = await _respond(stream, request, payload, conversation.message_id)
        except BaseException as exc:
            if limiter is not None:
                await release(limiter, identity.limit_key)
            if isinstance(exc, JSONError):
                return exc.response()
            raise
        if limiter is None:
            return response
        return ReleasingResponse(response, limiter, identity.limit_key)

    async def _respond(
        stream: ChatStream, request: Request, payload: dict[str, object], continued: str | None
    ) -> Response:
        recorder = None
        if persistence is not None:
            try:
                recorder = await persistence.begin(
                    request,
                    payload.get("id"),
                    cast("list[dict[str, Any]]", list(stream.request["messages"])),
                    continued,
                )
            except BaseException:
                await stream.aclose()
                raise
        answer_id = continued
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

    return answer


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
    allowed_origins: Sequence[str] = (),
    allowed_hosts: Sequence[str] = (),
    token: str | None = None,
    auth: AuthCallback | None = None,
    secret: str | bytes | None = None,
    subject_header: bool = False,
    answer_limits: AnswerLimits | AnswerLimiter | None = _DEFAULT_ANSWER_LIMITS,
    chats_path: str = "/api/chats",
) -> Starlette:
    """An ASGI app serving ``POST {path}`` (the chat endpoint) and, with ``page``, ``GET /``.

    ``GET /`` serves the dependency-free chat page, which talks to ``/api/chat``. Every
    keyword after ``path`` except ``chats_path`` is passed to :func:`chat_endpoint`,
    whose security checks guard every endpoint of the app (one ``Host`` check, one
    visitor cookie, one token for all of them). Run it with any ASGI server:
    ``uvicorn.run(create_chat_app(adapter))``.

    With a ``store``, the app also serves the subject's conversations (the same
    subject decides whose), as JSON:

    * ``GET {chats_path}``: ``{"chats": [{"id", "title", "createdAt", "updatedAt",
      "rating", "ratingComment"}]}``, the 50 most recently active first; the title is
      the first user text (at most 80 characters);
    * ``GET {chats_path}/{id}``: ``{"chat": {...}, "messages": UIMessage[]}``, the stored
      conversation as the AI SDK client shows it (``useChat({messages})`` takes it);
    * ``POST {chats_path}/{id}/rating`` with ``{"rating": 1..5, "comment"?}``.

    An unknown id and another subject's id both answer 404 ``not_found``. The page then
    lists the conversations and restores one on reload; without a store it keeps none.
    The page sets the visitor cookie, and asks for the ``token`` (once per browser tab)
    when the server requires one.

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
    guard, answer = _guarded_answer(
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
        allowed_origins=allowed_origins,
        allowed_hosts=allowed_hosts,
        token=token,
        auth=_checked_auth(auth),
        secret=secret,
        subject_header=subject_header,
        answer_limits=answer_limits,
    )
    # Every method reaches each endpoint, so that a wrong one gets a JSON 405 too.
    routes = [Route(path, guarded(guard, answer, ("POST",), json_body=True), methods=ALL_METHODS)]
    chats = chats_path.rstrip("/")
    if store is not None:
        persistence = Persistence(store, context, admitted_subject)
        for route, handler, method in (
            (chats, persistence.list_chats, "GET"),
            (chats + "/{chat_id}", persistence.get_chat, "GET"),
            (chats + "/{chat_id}/rating", persistence.rate, "POST"),
        ):
            endpoint = guarded(
                guard, _ignoring_identity(handler), (method,), json_body=method == "POST"
            )
            routes.append(Route(route, endpoint, methods=ALL_METHODS))
    if page:
        # The page uses relative URLs, so it also works under a mount prefix.
        html = chat_page_html(
            path[1:], chats[1:] if store is not None else None, token=guard.token_required
        )
        routes.append(Route("/", _page(guard, html), methods=["GET"]))
    return Starlette(routes=routes)


def _ignoring_identity(
    handler: Callable[[Request], Awaitable[Response]],
) -> Callable[[Request, Identity], Awaitable[Response]]:
    # The stored-conversation endpoints read the admitted subject from the request.
    async def endpoint(request: Request, identity: Identity) -> Response:
        return await handler(request)

    return endpoint


def _page(guard: Guard, html: str) -> Endpoint:
    async def chat_page(request: Request) -> Response:
        try:
            guard.check_host(request)
        except JSONError as exc:
            return exc.response()
        # No page of another site may frame this one (clickjacking): a header, since a
        # meta tag cannot say it.
        response = HTMLResponse(html, headers=_PAGE_HEADERS)
        guard.decorate(request, response, None, guard.page_cookie(request))
        return response

    return chat_page
