"""The exceptions ai_chat raises.

Every error derives from :class:`AIChatError`; none is more than two levels deep::

    AIChatError
    ├── ConfigurationError     an argument is out of its documented range (also a
    │                          ValueError)
    ├── ValidationError        input is not valid JSON or has the wrong shape (raised
    │                          before any adapter starts; also a ValueError)
    ├── LimitExceededError     a configured limit was hit (depth, value count, size,
    │                          total response size)
    ├── ProtocolError          an adapter broke the event protocol (bad event, out of
    │                          order, missing finish, events after finish)
    ├── StreamFormatError      bytes from a server are not a well-formed event stream
    │                          (not UTF-8, cut off inside a line or an event)
    ├── ProviderError          a model provider failed: an HTTP error status, an error
    │   │                      inside the stream, a dropped or reset connection, a
    │   │                      malformed line; carries provider, status, error type,
    │   │                      request id and retry-after
    │   ├── TruncatedStreamError  the provider's stream ended before its terminal signal
    │   └── RemoteStreamError     a UI message stream server sent an ``error`` chunk
    ├── AdapterError           an adapter raised something that is not an AIChatError;
    │                          the original is ``__cause__``
    ├── StreamClosedError      you stopped the stream (``aclose()``, ``abort()``, a
    │                          cancelled read) and then read from it again
    ├── StreamBusyError        a read overlapped another pending read of the same stream
    └── StoreError             a conversation store operation failed (ai_chat.store)
        ├── ConversationNotFoundError  no conversation has this id
        ├── ConversationExistsError    create was given an id that is already taken
        ├── VersionConflictError       ``expected_version`` is not the current version
        ├── DuplicateMessageError      a message id is stored with other content
        ├── InvalidRatingError         a rating that is not an int from 1 to 5 (also a
        │                              ValueError)
        ├── AppendError                an append failed in the backend (``__cause__``)
        └── SchemaVersionError         the database was migrated by a newer ai_chat

"You closed it" (:class:`StreamClosedError`) and "it broke" (:class:`ProtocolError`,
:class:`ProviderError`, :class:`AdapterError`) are different exceptions. Cancellation is
never wrapped in any of them.

Every message is bounded, whatever the input: at most 1,000 characters, in which a value
from the input (a key, a role, an id) is shown in at most 200 characters and a JSON path
in at most 200, and always encodable as UTF-8 (lone surrogates are escaped). The
attributes keep the values whole (``path`` is the complete path, ``value`` the object
given); only the message shortens them.
"""

from __future__ import annotations

from ._describe import (
    MAX_DETAIL_CHARS,
    MAX_MESSAGE_CHARS,
    clip,
    clip_path,
    shown,
)

__all__ = [
    "AIChatError",
    "AdapterError",
    "AppendError",
    "ConfigurationError",
    "ConversationExistsError",
    "ConversationNotFoundError",
    "DuplicateMessageError",
    "InvalidRatingError",
    "LimitExceededError",
    "ProtocolError",
    "ProviderError",
    "RemoteStreamError",
    "SchemaVersionError",
    "StoreError",
    "StreamBusyError",
    "StreamClosedError",
    "StreamFormatError",
    "TruncatedStreamError",
    "ValidationError",
    "VersionConflictError",
]


# Labels in a message (an event type, a provider's error type and request id) are short
# when honest, so a long one is cut early, leaving room for the rest of the message.
_LABEL_CHARS = 100
# A provider's detail: what adapters pass is already cut to 500 characters of the
# provider's text plus a few words of their own.
_PROVIDER_DETAIL_CHARS = MAX_DETAIL_CHARS + 100


class AIChatError(Exception):
    """The base of every error raised by ai_chat.

    The message is at most :data:`MAX_MESSAGE_CHARS` (1,000) characters and encodes as
    UTF-8: a longer one is cut here, ending with ``...`` and its length, so that no input
    can make an error flood a log or a response. (The subclasses show input values in
    at most 200 characters, so their messages are not cut in practice.)
    """

    def __init__(self, message: str = "") -> None:
        super().__init__(clip(message, MAX_MESSAGE_CHARS))


class ConfigurationError(AIChatError, ValueError):
    """An argument given to ai_chat is outside its documented range.

    Attributes:
        parameter: the argument's name.
        value: the value given.
        expected: the allowed values, in words.
    """

    def __init__(self, parameter: str, value: object, expected: str) -> None:
        self.parameter = parameter
        self.value = value
        self.expected = expected
        super().__init__(f"{parameter} must be {expected}, got {shown(value)}")


class ValidationError(AIChatError, ValueError):
    """A value is not valid JSON, or has the wrong shape for a message, part or request.

    Attributes:
        path: where, as a JSON path such as ``$[3].parts[0].input.items[2]`` (whole; the
            message shortens a path over 200 characters in its middle).
        reason: what is wrong, in words.
    """

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{clip_path(path)}: {reason}")


class LimitExceededError(AIChatError):
    """A limit was exceeded; nothing was truncated.

    Attributes:
        path: the JSON path where the walk stopped (``$`` for whole-stream limits).
        limit: the name of the limit (``max_depth``, ``max_values``, ``max_chars``,
            ``max_response_chars``).
        limit_value: the configured value of that limit.
        observed: what was seen when the walk stopped: a lower bound of the real amount,
            since the walk stops at the first violation.
    """

    def __init__(self, path: str, limit: str, limit_value: int, observed: int) -> None:
        self.path = path
        self.limit = limit
        self.limit_value = limit_value
        self.observed = observed
        super().__init__(
            f"{clip_path(path)}: {limit}={limit_value} exceeded (reached {observed}); "
            f"send less, or raise {limit} if the input is legitimate"
        )


class ProtocolError(AIChatError):
    """An adapter broke the event protocol.

    Attributes:
        reason: what is wrong, in words.
        event_index: the 0-based index of the offending event in the adapter's output,
            or ``None`` when the problem is the end of the stream.
        event_type: the ``type`` of the offending event, when it has one.
        path: a JSON path inside the event (``$`` is the event itself), or ``None``.
    """

    def __init__(
        self,
        reason: str,
        *,
        event_index: int | None = None,
        event_type: str | None = None,
        path: str | None = None,
    ) -> None:
        self.reason = reason
        self.event_index = event_index
        self.event_type = event_type
        self.path = path
        where: list[str] = []
        if event_index is not None:
            where.append(f"event #{event_index}")
        if event_type is not None:
            where.append(f"({clip(event_type, _LABEL_CHARS)})")
        if path is not None and path != "$":
            where.append(f"at {clip_path(path)}")
        prefix = " ".join(where)
        super().__init__(f"{prefix}: {reason}" if prefix else reason)


class StreamFormatError(AIChatError):
    """Bytes received from a server are not a well-formed event stream.

    Raised by the SSE decoder: the body is not UTF-8, or it ended inside a line or an
    event (a truncated stream is never taken for a complete one).

    Attributes:
        reason: what is wrong, in words.
    """

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class ProviderError(AIChatError):
    """A model provider failed, as seen by a provider adapter (raised from its stream).

    Raised for an HTTP error status (401, 403, 404, 400, 429, 5xx...), an error object
    inside a streamed response, a connection that could not be made, timed out, dropped
    or was reset, and a malformed line in the provider's stream. The provider SDK's or
    the transport's exception is ``__cause__``. Cancellation is never turned into one.

    Attributes:
        provider: which provider (``"openai"``, ...).
        status: the HTTP status of an error response; ``None`` when there was no
            response, or when the failure came inside a stream that started with 200.
        error_type: the provider's name for the kind of error (``"rate_limit_exceeded"``,
            ``"server_error"``...), when it gave one.
        request_id: the provider's request id (quote it to their support), when known.
        retry_after: seconds the provider asked to wait before retrying
            (``retry-after`` / ``retry-after-ms``), when it said.
        detail: the failure in words, as the provider or the transport described it.
    """

    def __init__(
        self,
        provider: str,
        detail: str,
        *,
        status: int | None = None,
        error_type: str | None = None,
        request_id: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.provider = provider
        self.detail = detail
        self.status = status
        self.error_type = error_type
        self.request_id = request_id
        self.retry_after = retry_after
        head = provider if status is None else f"{provider} HTTP {status}"
        if error_type is not None:
            head += f" ({clip(error_type, _LABEL_CHARS)})"
        message = f"{head}: {clip(detail, _PROVIDER_DETAIL_CHARS)}"
        if retry_after is not None:
            message += f"; retry after {retry_after:g} s"
        if request_id is not None:
            message += f" [request id {clip(request_id, _LABEL_CHARS)}]"
        super().__init__(message)


class TruncatedStreamError(ProviderError):
    """The provider's stream ended before its terminal signal.

    The HTTP body ended (or a terminal sentinel such as ``[DONE]`` came) without the
    signal that the answer is complete (a Chat Completions ``finish_reason``, for
    example). Provider SDKs treat this as a normal end; ai_chat never takes a cut-off
    answer for a finished one. Retrying the request is usually the remedy.
    """


class RemoteStreamError(ProviderError):
    """The server reported a failure inside the stream: an ``error`` chunk.

    The AI SDK's client turns the same chunk into its chat's error state; here it ends
    the stream with this exception, after the events that came before it. AI SDK
    servers mask the text as ``"An error occurred."`` unless the application formats
    errors itself (``onError``), so it is often all there is to know.

    Attributes:
        error_text: the chunk's ``errorText``, whole (bounded by the adapter's
            ``max_event_chars``); the message shows at most 500 characters of it.
    """

    def __init__(
        self, error_text: str, *, provider: str = "ui-stream", request_id: str | None = None
    ) -> None:
        self.error_text = error_text
        super().__init__(
            provider,
            f"the server reported an error in the stream: {clip(error_text)}",
            error_type="error",
            request_id=request_id,
        )


class AdapterError(AIChatError):
    """The adapter raised an exception that is not an :class:`AIChatError`.

    The original exception is ``__cause__``. Errors that already derive from
    :class:`AIChatError` (a provider adapter's typed errors, for example) reach the
    consumer unwrapped.

    Attributes:
        adapter: the adapter's class name.
    """

    def __init__(self, adapter: str, message: str) -> None:
        self.adapter = adapter
        super().__init__(f"adapter {adapter} failed: {message}")


class StreamClosedError(AIChatError):
    """The stream was stopped by its consumer and cannot be read any more.

    Raised by a read after ``aclose()``, after ``abort(reason)`` (also by a read that was
    pending when ``abort`` was called from another task) and after a cancelled read.

    Attributes:
        reason: why the stream was stopped.
    """

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"the chat stream was stopped: {clip(reason)}")


class StreamBusyError(AIChatError):
    """A read of a chat stream overlapped another read of it that was still pending.

    Any task may read a stream, one read at a time (reading the first event in an
    endpoint and the rest in the response's body task is fine). A second read that
    starts while the first waits for the adapter is refused with this error and changes
    nothing: the pending read, and later reads, get every event.
    """

    def __init__(self) -> None:
        super().__init__(
            "another read of this chat stream is still pending: read a stream from one "
            "task at a time (hand events to other tasks through a memory object stream "
            "if several need them)"
        )


# --- the conversation store (ai_chat.store re-exports these) ---------------------------


class StoreError(AIChatError):
    """A conversation store operation failed.

    Raised as is when the store is closed, and when a backend fails unexpectedly outside
    an append (the backend's exception is ``__cause__``); the subclasses name the
    expected failures.

    Attributes:
        reason: what went wrong, in words.
    """

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class ConversationNotFoundError(StoreError):
    """No conversation has this id. Stores never create a conversation implicitly.

    Attributes:
        conversation_id: the id that was looked up.
    """

    def __init__(self, conversation_id: str) -> None:
        self.conversation_id = conversation_id
        super().__init__(
            f"conversation {shown(conversation_id)} does not exist; create it with "
            "create_conversation() (stores never create one implicitly)"
        )


class ConversationExistsError(StoreError):
    """``create_conversation`` was given an id that another conversation already has.

    Attributes:
        conversation_id: the id that is taken.
    """

    def __init__(self, conversation_id: str) -> None:
        self.conversation_id = conversation_id
        super().__init__(
            f"conversation {shown(conversation_id)} already exists; load it with find_by_id()"
        )


class VersionConflictError(StoreError):
    """An append's ``expected_version`` is not the conversation's current version.

    Someone else appended since you read the conversation: reload it (or its newest
    messages), decide, and retry with the new version. Nothing was stored.

    Attributes:
        conversation_id: the conversation.
        expected: the version the caller expected.
        actual: the conversation's version when the append was tried.
    """

    def __init__(self, conversation_id: str, expected: int, actual: int) -> None:
        self.conversation_id = conversation_id
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"conversation {shown(conversation_id)} is at version {shown(actual)}, not the "
            f"expected {shown(expected)}: another writer appended first; reload and retry"
        )


class DuplicateMessageError(StoreError):
    """A message id is already used, by a message with different content.

    Replaying a message with the same id and the same content is not an error (it
    returns the original sequence number); this is raised when the content differs, or
    when one batch holds the same id twice. Nothing of the batch was stored.

    Attributes:
        conversation_id: the conversation.
        message_id: the message id in conflict.
        reason: what is wrong, in words.
    """

    def __init__(self, conversation_id: str, message_id: str, reason: str) -> None:
        self.conversation_id = conversation_id
        self.message_id = message_id
        super().__init__(
            f"conversation {shown(conversation_id)}, message {shown(message_id)}: {reason}"
        )


class InvalidRatingError(StoreError, ValueError):
    """A rating is not an ``int`` from 1 to 5 (``bool`` excluded), or its comment is
    not a ``str`` of at most 10,000 characters. Checked before any I/O.

    Attributes:
        rating: the rating given.
        detail: what is wrong, in words.
    """

    def __init__(self, rating: object, detail: str) -> None:
        self.rating = rating
        self.detail = detail
        super().__init__(detail)


class AppendError(StoreError):
    """The backend failed unexpectedly during an append; nothing of the batch was stored.

    The backend's exception (``sqlite3.OperationalError``, ``psycopg.Error``...) is
    ``__cause__``. Appends are idempotent by message id, so retrying the same batch is
    safe.

    Attributes:
        conversation_id: the conversation.
        backend: the store class that failed.
    """

    def __init__(self, conversation_id: str, backend: str, detail: str) -> None:
        self.conversation_id = conversation_id
        self.backend = backend
        super().__init__(
            f"{backend} could not append to conversation {shown(conversation_id)}: "
            f"{clip(detail)}; "
            "the batch was not stored, retrying it is safe"
        )


class SchemaVersionError(StoreError):
    """The database's schema is newer than this version of ai_chat understands.

    It was migrated by a newer ai_chat; upgrade ai_chat rather than risk writing rows an
    older schema does not describe.

    Attributes:
        found: the database's schema version.
        supported: the newest version this code knows.
    """

    def __init__(self, found: int, supported: int) -> None:
        self.found = found
        self.supported = supported
        super().__init__(
            f"the database schema is version {found}, newer than the {supported} this "
            "ai_chat supports: upgrade ai_chat"
        )
