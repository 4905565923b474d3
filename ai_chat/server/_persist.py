"""The chat endpoint's conversation store wiring: who asks, which conversation, what is kept.

* :class:`Persistence` finds or creates the request's conversation, stores the request's
  new message before the adapter runs, and hands out a :class:`Recorder` that stores
  the assembled answer once the stream has ended after ``finish``.
* The ``GET`` endpoints (list, messages) and ``POST`` rating live here too.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, cast

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .._errors import ConfigurationError, InvalidRatingError
from .._types import ChatEvent, Message
from ..store import (
    Conversation,
    ConversationExistsError,
    ConversationStore,
    DuplicateMessageError,
    StoreError,
    messages_of,
)
from ..store._records import iso8601
from ._assemble import AnswerAssembler
from ._history import SERVER_KEY, title_of, ui_history
from ._http import JSONError, read_body

__all__ = [
    "Persistence",
    "Recorder",
    "SubjectResolver",
]

logger = logging.getLogger("ai_chat.server")

MAX_ID_CHARS: Final = 256
# How many of the latest stored messages are checked for the ids of a continued answer.
_RECENT: Final = 64
# How long storing a finished answer may take once the client has gone.
_SAVE_TIMEOUT: Final = 30.0
_TITLE_MESSAGES: Final = 8
_MAX_RATING_BODY: Final = 8192

SubjectResolver = Callable[[Request], "str | Awaitable[str]"]
JSONDict = dict[str, Any]


def _not_found() -> JSONError:
    # The same answer for an unknown id and another subject's: existence is not leaked.
    return JSONError(404, "not_found", "no conversation with this id")


def _edit_unsupported(message_id: str) -> JSONError:
    # What the AI SDK sends after a user edits a sent message: the history up to that
    # message, with its id and the new text. The log keeps one line of messages, so the
    # edit cannot be kept beside the original yet; until branches exist, say so.
    return JSONError(
        409,
        "edit_unsupported",
        f"message {json.dumps(message_id)} was already sent with other content: editing a sent "
        "message needs branch support in the conversation store, which this server does "
        "not have yet (a later release adds branches); send the change as a new message "
        "or start a new chat",
        fields={"messageId": message_id},
    )


def _store_failed(exc: Exception) -> JSONError:
    logger.error("the conversation store failed: %s: %s", type(exc).__name__, exc, exc_info=exc)
    return JSONError(503, "store_unavailable", "the conversation store is unavailable")


class Recorder:
    """Collects one answer's events and stores the assembled answer after ``finish``."""

    __slots__ = ("_assembler", "_conversation_id", "_parent", "_store")

    def __init__(
        self, store: ConversationStore, conversation_id: str, parent: str, first_step: int
    ) -> None:
        self._store = store
        self._conversation_id = conversation_id
        self._parent = parent
        self._assembler = AnswerAssembler(first_step)

    def feed(self, event: ChatEvent) -> None:
        """Take the next event, as the response sends it."""
        self._assembler.feed(event)

    async def complete(self, message_id: str | None) -> bool:
        """Store the answer (the stream ended after ``finish``); ``False`` if that failed.

        Runs shielded (bounded by a timeout), so that an answer the client received
        whole is kept even if the client disconnects at the last moment.
        """
        if not self._assembler.finished or message_id is None:
            return False
        messages = self._assembler.messages(message_id, {SERVER_KEY: {"parentId": self._parent}})
        if not messages:
            return True
        with anyio.move_on_after(_SAVE_TIMEOUT, shield=True) as scope:
            try:
                await self._store.append_messages(self._conversation_id, messages)
            except Exception as exc:
                logger.error(
                    "storing the answer %s of conversation %s failed: %s: %s",
                    message_id,
                    self._conversation_id,
                    type(exc).__name__,
                    exc,
                    exc_info=exc,
                )
                return False
        if scope.cancelled_caught:
            logger.error(
                "storing the answer %s of conversation %s timed out",
                message_id,
                self._conversation_id,
            )
            return False
        return True


class Persistence:
    """The store, the context and the subject resolver of one endpoint."""

    __slots__ = ("context", "store", "subject")

    def __init__(self, store: object, context: object, subject: object) -> None:
        if not isinstance(store, ConversationStore):
            raise ConfigurationError("store", store, "None or a ConversationStore")
        if type(context) is not str or not 0 < len(context) <= MAX_ID_CHARS:
            raise ConfigurationError("context", context, "a non-empty str of at most 256 chars")
        if not callable(subject):
            raise ConfigurationError("subject", subject, "a function of the request")
        self.store: ConversationStore = store
        self.context: str = context
        self.subject = cast(SubjectResolver, subject)

    async def subject_of(self, request: Request) -> str:
        """The request's subject, checked; raises :class:`JSONError` 400 for a bad one."""
        value = self.subject(request)
        if inspect.isawaitable(value):
            value = await value
        if type(value) is not str or not 0 < len(value) <= MAX_ID_CHARS:
            raise JSONError(
                400,
                "invalid_subject",
                "the subject must be a non-empty string of at most 256 chars",
            )
        return value

    async def owned(self, conversation_id: str, subject: str) -> Conversation:
        """The subject's conversation in this context; 404 for any other."""
        if not 0 < len(conversation_id) <= MAX_ID_CHARS:
            raise _not_found()
        try:
            found = await self.store.find_by_id(conversation_id)
        except StoreError as exc:
            raise _store_failed(exc) from exc
        if found is None or found.context != self.context or found.subject_id != subject:
            raise _not_found()
        return found

    async def begin(
        self,
        request: Request,
        chat_id: object,
        messages: list[JSONDict],
        continued: str | None,
    ) -> Recorder:
        """Find or create the conversation and store the request's new messages.

        ``messages`` are the request's normalized history (after the trigger's cut);
        ``continued`` is the id of the assistant message the answer continues, if any.
        """
        if type(chat_id) is not str or not 0 < len(chat_id) <= MAX_ID_CHARS:
            raise JSONError(
                422,
                "invalid_request",
                "this server keeps conversations: the request needs an id (a non-empty "
                "string of at most 256 chars) naming the chat",
            )
        subject = await self.subject_of(request)
        store = self.store
        try:
            conversation = await store.find_by_id(chat_id)
            if conversation is None:
                try:
                    conversation = await store.create_conversation(
                        self.context, subject, conversation_id=chat_id
                    )
                except ConversationExistsError:  # a concurrent first request won
                    conversation = await store.find_by_id(chat_id)
            if (
                conversation is None
                or conversation.context != self.context
                or conversation.subject_id != subject
            ):
                raise JSONError(
                    403,
                    "forbidden",
                    "this chat id belongs to another conversation; start a new chat",
                )
            pieces = _new_pieces(messages, continued)
            if continued is not None:
                recent = await store.load_recent_messages(conversation.id, _RECENT)
                seen = {item.message["id"] for item in recent}
                pieces = [m for m in pieces if m["id"] not in seen]
            if pieces:
                await store.append_messages(conversation.id, pieces)
        except DuplicateMessageError as exc:
            raise _edit_unsupported(exc.message_id) from exc
        except StoreError as exc:
            raise _store_failed(exc) from exc
        first_step = 0
        if continued is not None:
            first_step = sum(
                1
                for m in messages
                if m["role"] == "assistant"
                and (m["id"] == continued or m["id"].startswith(continued + ":"))
            )
        return Recorder(store, conversation.id, messages[-1]["id"], first_step)

    # --- GET /api/chats, GET /api/chats/{id}, POST /api/chats/{id}/rating ----------------

    async def list_chats(self, request: Request) -> Response:
        try:
            subject = await self.subject_of(request)
            try:
                found = await self.store.list_conversations(self.context, subject, limit=50)
                chats: list[JSONDict] = []
                for conversation in found:
                    first = await self.store.load_messages(conversation.id, limit=_TITLE_MESSAGES)
                    chats.append(_summary(conversation, title_of(messages_of(first))))
            except StoreError as exc:
                raise _store_failed(exc) from exc
        except JSONError as exc:
            return exc.response()
        return JSONResponse({"chats": chats})

    async def get_chat(self, request: Request) -> Response:
        try:
            subject = await self.subject_of(request)
            conversation = await self.owned(cast(str, request.path_params["chat_id"]), subject)
            try:
                stored = await self.store.load_messages(conversation.id)
            except StoreError as exc:
                raise _store_failed(exc) from exc
        except JSONError as exc:
            return exc.response()
        messages: tuple[Message, ...] = messages_of(stored)
        body = {
            "chat": _summary(conversation, title_of(messages)),
            "messages": ui_history(messages),
        }
        return JSONResponse(body)

    async def rate(self, request: Request) -> Response:
        try:
            subject = await self.subject_of(request)
            conversation = await self.owned(cast(str, request.path_params["chat_id"]), subject)
            body = await read_body(request, _MAX_RATING_BODY)
            try:
                payload: object = json.loads(body)
            except (ValueError, RecursionError):
                raise JSONError(400, "invalid_json", "the body is not JSON") from None
            if type(payload) is not dict:
                raise JSONError(422, "invalid_request", 'expected {"rating": 1..5, "comment"?}')
            fields = cast("Mapping[str, object]", payload)
            try:
                rated = await self.store.rate(
                    conversation.id,
                    cast(int, fields.get("rating")),
                    cast("str | None", fields.get("comment")),
                )
            except InvalidRatingError as exc:
                raise JSONError(422, "invalid_rating", str(exc)) from exc
            except StoreError as exc:
                raise _store_failed(exc) from exc
        except JSONError as exc:
            return exc.response()
        return JSONResponse({"chat": _summary(rated, None)})


def _new_pieces(messages: list[JSONDict], continued: str | None) -> list[JSONDict]:
    """The request's new messages: its last message, or the continued answer's pieces."""
    if continued is None:
        return [messages[-1]]
    prefix = continued + ":"
    pieces: list[JSONDict] = []
    for message in reversed(messages):
        if message["id"] != continued and not message["id"].startswith(prefix):
            break
        pieces.append(message)
    pieces.reverse()
    return pieces


def _summary(conversation: Conversation, title: str | None) -> JSONDict:
    summary: JSONDict = {
        "id": conversation.id,
        "createdAt": iso8601(conversation.created_at),
        "updatedAt": iso8601(conversation.updated_at),
        "rating": conversation.rating,
        "ratingComment": conversation.comment,
    }
    if title is not None:
        summary["title"] = title
    return summary
