"""The :class:`History` value: a conversation's messages and its own fields, immutable.

Helpers are methods that return a new :class:`History` (as ``str.replace`` or
``datetime.replace`` do) rather than free functions: a value's operations are found on
it, calls chain (``History.create().append_user("Hi").append_assistant("Hello")``), and
the public surface stays a handful of names. The code behind each method lives in a
module by concept (``_edits``, ``_streaming``, ``_queries``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from .._errors import ConfigurationError, ValidationError
from .._shape import describe
from .._types import Message, Part, Role, ToolCallPart, Usage
from ..limits import FrozenDict, JSONLimits, JSONObject, JSONValue, freeze_json
from . import _edits, _streaming
from ._env import HistoryEnv, format_time, parse_time
from ._queries import (
    pending_tool_calls,
    request_messages,
    search,
    statistics,
    system_messages,
    tool_interactions,
    visible,
)
from ._sequence import Seq
from ._validate import MESSAGE_LIMITS, check_new

if TYPE_CHECKING:
    from ._queries import Statistics, ToolInteraction

__all__ = ["History"]

_DEFAULT_ENV = HistoryEnv()
_KEYS = ("id", "title", "metadata", "createdAt", "updatedAt", "messages")
_NO_METADATA: JSONObject = FrozenDict()


class History:
    """A conversation: its messages and its own fields, as one immutable, JSON-safe value.

    The messages are ai_chat's normalized messages (what
    :func:`~ai_chat.normalize_messages` returns), deep-frozen; a request takes them as
    they are (:meth:`request_messages`). Per-message bookkeeping (creation time, hidden,
    streaming, usage) lives in each message's ``metadata.aiChat``
    (:func:`~ai_chat.history.bookkeeping`).

    Every helper returns a new history and leaves this one as it was; an unknown message
    or tool call id returns this history itself. Appends check only what is new, in
    O(1) amortized time per message (the versions share their storage). Equality compares
    the value: ``id``, ``title``, ``metadata``, the times and the messages (not the
    ``env`` or ``limits``); the hash is cheap and consistent with it.

    A history always holds these invariants (the helpers raise rather than break them):
    unique message ids; one call per tool call id; every tool result answers an earlier
    call of the same tool, once. Orders a provider refuses are allowed and reported by
    :func:`~ai_chat.history.check`.

    Create one with :meth:`create` or :meth:`from_json`.
    """

    __slots__ = (
        "_created_at",
        "_env",
        "_id",
        "_limits",
        "_metadata",
        "_seq",
        "_title",
        "_updated_at",
    )

    _id: str
    _title: str | None
    _metadata: JSONObject
    _created_at: datetime
    _updated_at: datetime
    _seq: Seq
    _env: HistoryEnv
    _limits: JSONLimits

    def __init__(self) -> None:
        raise TypeError("create a History with History.create() or History.from_json()")

    @classmethod
    def _make(
        cls,
        id: str,
        title: str | None,
        metadata: JSONObject,
        created_at: datetime,
        updated_at: datetime,
        seq: Seq,
        env: HistoryEnv,
        limits: JSONLimits,
    ) -> History:
        self = object.__new__(cls)
        self._id = id
        self._title = title
        self._metadata = metadata
        self._created_at = created_at
        self._updated_at = updated_at
        self._seq = seq
        self._env = env
        self._limits = limits
        return self

    def _changed(self, seq: Seq, now: datetime | None = None) -> History:
        """This history with other messages, updated ``now`` (read from the env when not
        given); itself if nothing changed."""
        if seq is self._seq:
            return self
        return History._make(
            self._id,
            self._title,
            self._metadata,
            self._created_at,
            self._env.time() if now is None else now,
            seq,
            self._env,
            self._limits,
        )

    # --- construction and JSON --------------------------------------------------------

    @classmethod
    def create(
        cls,
        *,
        title: str | None = None,
        metadata: Mapping[str, object] | None = None,
        id: str | None = None,
        env: HistoryEnv | None = None,
        limits: JSONLimits = MESSAGE_LIMITS,
    ) -> History:
        """An empty history; ``id`` and both times come from ``env`` unless given.

        ``limits`` bound each message (and the metadata) on the way in.

        Raises:
            ConfigurationError: ``title`` is not a str or ``id`` not a non-empty str.
            ValidationError, LimitExceededError: ``metadata`` is not a JSON object within
                ``limits``.
        """
        env = _DEFAULT_ENV if env is None else env
        if title is not None and type(title) is not str:
            raise ConfigurationError("title", title, "a str or None")
        if id is not None and (type(id) is not str or not id):
            raise ConfigurationError("id", id, "a non-empty str or None")
        frozen = _NO_METADATA if metadata is None else _metadata(metadata, limits, "$.metadata")
        moment = env.time()
        return cls._make(
            env.identifier() if id is None else id,
            title,
            frozen,
            moment,
            moment,
            Seq.of(()),
            env,
            limits,
        )

    @classmethod
    def from_json(
        cls, data: object, *, env: HistoryEnv | None = None, limits: JSONLimits = MESSAGE_LIMITS
    ) -> History:
        """The history :meth:`to_json` returned (or its ``json.loads`` text), validated.

        Every message goes through the JSON boundary (held to ``limits`` each) and the
        history's invariants; the times are ISO 8601 with an offset.

        Raises:
            ValidationError: not such an object; ``path`` names what is wrong, such as
                ``$.messages[3].parts[0].toolCallId``; :class:`DuplicateIdError` and
                :class:`ToolPairingError` for ids and tool pairs.
            LimitExceededError: a message or the metadata exceeds ``limits``.
        """
        if not isinstance(data, Mapping):
            raise ValidationError("$", f"expected a history object, got {describe(data)}")
        fields = cast("Mapping[object, object]", data)
        for key in fields:
            if key not in _KEYS:
                raise ValidationError(
                    "$", f"unknown history field {key!r} (expected {', '.join(_KEYS)})"
                )
        for key in ("id", "metadata", "createdAt", "updatedAt", "messages"):
            if key not in fields:
                raise ValidationError("$", f'missing required field "{key}"')
        history_id = fields["id"]
        if type(history_id) is not str or not history_id:
            raise ValidationError(
                "$.id", f"expected a non-empty string, got {describe(history_id)}"
            )
        title = fields.get("title")
        if "title" in fields and type(title) is not str:
            raise ValidationError(
                "$.title", f"expected a string (or no title), got {describe(title)}"
            )
        metadata = _metadata(fields["metadata"], limits, "$.metadata")
        created_at = parse_time(fields["createdAt"], "$.createdAt")
        updated_at = parse_time(fields["updatedAt"], "$.updatedAt")
        messages = fields["messages"]
        if type(messages) is not list and type(messages) is not tuple:
            raise ValidationError("$.messages", f"expected an array, got {describe(messages)}")
        empty = Seq.of(())
        checked = check_new(empty, cast("Sequence[object]", messages), limits, "$.messages", None)
        return cls._make(
            history_id,
            cast("str | None", title),
            metadata,
            created_at,
            updated_at,
            Seq.of(checked),
            _DEFAULT_ENV if env is None else env,
            limits,
        )

    def to_json(self) -> JSONObject:
        """The history as a JSON object (frozen; ``json.dumps`` takes it as it is):
        ``{"id", "title"?, "metadata", "createdAt", "updatedAt", "messages"}``."""
        value: dict[str, object] = {"id": self._id}
        if self._title is not None:
            value["title"] = self._title
        value["metadata"] = self._metadata
        value["createdAt"] = format_time(self._created_at)
        value["updatedAt"] = format_time(self._updated_at)
        value["messages"] = self._seq.messages()
        return cast(JSONObject, FrozenDict(value))

    # --- fields -----------------------------------------------------------------------

    @property
    def id(self) -> str:
        """The conversation's id."""
        return self._id

    @property
    def title(self) -> str | None:
        """Its title, if it has one."""
        return self._title

    @property
    def metadata(self) -> JSONObject:
        """Its own JSON object (deep-frozen)."""
        return self._metadata

    @property
    def created_at(self) -> datetime:
        """When it was created (timezone-aware)."""
        return self._created_at

    @property
    def updated_at(self) -> datetime:
        """When a helper last changed it (timezone-aware)."""
        return self._updated_at

    @property
    def messages(self) -> tuple[Message, ...]:
        """Every message, in order (a tuple built on first access, then kept)."""
        return self._seq.messages()

    @property
    def env(self) -> HistoryEnv:
        """Where its helpers get times and new ids (not part of the value)."""
        return self._env

    @property
    def limits(self) -> JSONLimits:
        """The bounds on each message on the way in (not part of the value)."""
        return self._limits

    def with_env(self, env: HistoryEnv) -> History:
        """The same value with another env."""
        return History._make(
            self._id,
            self._title,
            self._metadata,
            self._created_at,
            self._updated_at,
            self._seq,
            env,
            self._limits,
        )

    def with_title(self, title: str | None) -> History:
        """This history with another title (updated now).

        Raises:
            ConfigurationError: ``title`` is not a str or None.
        """
        if title is not None and type(title) is not str:
            raise ConfigurationError("title", title, "a str or None")
        return History._make(
            self._id,
            title,
            self._metadata,
            self._created_at,
            self._env.time(),
            self._seq,
            self._env,
            self._limits,
        )

    def with_metadata(self, metadata: Mapping[str, object]) -> History:
        """This history with another metadata object (updated now).

        Raises:
            ValidationError, LimitExceededError: not a JSON object within ``limits``.
        """
        return History._make(
            self._id,
            self._title,
            _metadata(metadata, self._limits, "$.metadata"),
            self._created_at,
            self._env.time(),
            self._seq,
            self._env,
            self._limits,
        )

    # --- value semantics --------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, History):
            return NotImplemented
        if self is other:
            return True
        return (
            self._id == other._id
            and self._title == other._title
            and self._created_at == other._created_at
            and self._updated_at == other._updated_at
            and len(self._seq) == len(other._seq)
            and self._metadata == other._metadata
            and (self._seq.same_as(other._seq) or self._seq.messages() == other._seq.messages())
        )

    def __hash__(self) -> int:
        return hash((self._id, self._title, self._created_at, self._updated_at, len(self._seq)))

    def __len__(self) -> int:
        """The number of messages."""
        return len(self._seq)

    def __repr__(self) -> str:
        return f"History(id={self._id!r}, title={self._title!r}, messages={len(self._seq)})"

    def __copy__(self) -> History:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> History:
        return self  # immutable all the way down

    def __reduce__(self) -> tuple[Any, ...]:
        return (_from_json_and_limits, (self.to_json(), self._limits))

    # --- queries (see _queries) -------------------------------------------------------

    def message(self, message_id: str) -> Message | None:
        """The message with this id, or ``None``. O(1)."""
        position = self._seq.position(message_id)
        return None if position is None else self._seq.at(position)

    def position(self, message_id: str) -> int | None:
        """Where the message with this id is (0-based), or ``None``. O(1)."""
        return self._seq.position(message_id)

    def at(self, position: int) -> Message | None:
        """The message at ``position`` (negative counts from the end), or ``None``. O(1)."""
        size = len(self._seq)
        if type(position) is not int:
            raise ConfigurationError("position", position, "an int")
        if position < 0:
            position += size
        return self._seq.at(position) if 0 <= position < size else None

    def statistics(self) -> Statistics:
        """Counts per role, of tool calls, results and pending calls, hidden and
        streaming messages, files, and text and reasoning characters. O(n)."""
        return statistics(self._seq)

    def search(
        self,
        query: str | Callable[[Message], bool],
        *,
        roles: Iterable[Role] | None = None,
        case_sensitive: bool = False,
    ) -> tuple[Message, ...]:
        """The messages whose text or reasoning contains ``query`` (case-insensitive
        unless asked), or for which the predicate ``query`` is true; only of ``roles``
        when given. In order. O(n)."""
        return search(self._seq, query, roles, case_sensitive)

    def pending_tool_calls(self) -> tuple[ToolCallPart, ...]:
        """The tool calls without a result yet, in order. O(tool calls)."""
        return pending_tool_calls(self._seq)

    def tool_interactions(self) -> tuple[ToolInteraction, ...]:
        """Every tool call with its result (or ``None``), in call order. O(tool calls)."""
        return tool_interactions(self._seq)

    def visible(self) -> tuple[Message, ...]:
        """The messages a person sees: all but the hidden ones. O(n)."""
        return visible(self._seq)

    def request_messages(self) -> tuple[Message, ...]:
        """The messages a request takes: all but the streaming ones, which are never
        sent to a model until they end. Hidden messages are sent (hidden is about what
        people see; hiding a message from the model would break its tool pairs: remove
        it instead). O(n); the messages themselves unchanged."""
        return request_messages(self._seq)

    def system_messages(self) -> tuple[Message, ...]:
        """The system messages, in order. O(n)."""
        return system_messages(self._seq)

    # --- helpers returning a new history (see _edits) ---------------------------------

    def append(self, message: object, *, created_at: datetime | None = None) -> History:
        """This history with ``message`` (any normalized message, or JSON for one) at the
        end; see :meth:`extend`."""
        return _edits.extend(self, (message,), created_at)

    def extend(self, messages: Iterable[object], *, created_at: datetime | None = None) -> History:
        """This history with ``messages`` at the end, checked as one batch.

        Each goes through the JSON boundary and the invariants (only the new messages
        are checked); each without a creation time gets ``created_at`` (default: now).

        Raises:
            ValidationError: not a message; :class:`DuplicateIdError`,
                :class:`ToolPairingError` (paths are into the batch: ``$[1].id``).
            LimitExceededError: a message exceeds the history's ``limits``.
        """
        return _edits.extend(self, tuple(messages), created_at)

    def append_user(
        self,
        text: str,
        *,
        metadata: Mapping[str, object] | None = None,
        id: str | None = None,
        created_at: datetime | None = None,
    ) -> History:
        """This history with a user message of one text part at the end (``id`` from
        the env unless given). Raises as :meth:`extend` does."""
        return _edits.append_text(self, "user", text, metadata, id, created_at)

    def append_system(
        self,
        text: str,
        *,
        metadata: Mapping[str, object] | None = None,
        id: str | None = None,
        created_at: datetime | None = None,
    ) -> History:
        """This history with a system message at the end (see :meth:`prepend_system`
        for providers that take system messages only first)."""
        return _edits.append_text(self, "system", text, metadata, id, created_at)

    def append_assistant(
        self,
        text: str = "",
        *,
        tool_calls: Iterable[Mapping[str, object]] = (),
        metadata: Mapping[str, object] | None = None,
        id: str | None = None,
        created_at: datetime | None = None,
    ) -> History:
        """This history with an assistant message: a text part (unless ``text`` is
        empty), then one ``tool-call`` part per item of ``tool_calls``
        (``{"toolCallId", "toolName", "input"}``). Raises as :meth:`extend` does."""
        return _edits.append_assistant(self, text, tuple(tool_calls), metadata, id, created_at)

    def append_tool_result(
        self,
        tool_call_id: str,
        output: object,
        *,
        is_error: bool = False,
        id: str | None = None,
        created_at: datetime | None = None,
    ) -> History:
        """This history with a tool message answering call ``tool_call_id`` (the tool's
        name is the call's). Raises :class:`ToolPairingError` for an unknown or
        answered call, ValidationError for an output that is not JSON."""
        results = ({"toolCallId": tool_call_id, "output": output, "isError": is_error},)
        return _edits.append_tool_results(self, results, id, created_at)

    def append_tool_results(
        self,
        results: Iterable[Mapping[str, object]],
        *,
        id: str | None = None,
        created_at: datetime | None = None,
    ) -> History:
        """This history with one tool message answering several calls:
        ``{"toolCallId", "output", "isError"?}`` each. Raises as
        :meth:`append_tool_result` does."""
        return _edits.append_tool_results(self, tuple(results), id, created_at)

    def update_message(
        self,
        message_id: str,
        *,
        parts: Sequence[Part | Mapping[str, object]] | None = None,
        metadata: Mapping[str, object] | None = None,
    ) -> History:
        """This history with the message's parts and/or metadata replaced.

        Its id, role, position, bookkeeping (``metadata.aiChat``: creation time, hidden,
        usage) and tool call and result ids (with their tool names) are kept: the new
        parts must hold the same ones. An unknown id returns this history.

        Raises:
            ValidationError: the parts are not valid for the role, or ``metadata`` holds
                the reserved key ``aiChat``; :class:`ToolPairingError` for changed tool ids.
            StreamingMessageError: the message is streaming (use :meth:`update_streaming`).
        """
        return _edits.update_message(self, message_id, parts, metadata)

    def remove_message(self, message_id: str) -> History:
        """This history without the message; when it holds tool calls, their results go
        too (a tool message left empty goes), so no result is left without its call.
        An unknown id returns this history.

        Raises:
            StreamingMessageError: the message is streaming (use :meth:`cancel_streaming`).
        """
        return _edits.remove_message(self, message_id)

    def set_hidden(self, message_id: str, hidden: bool = True) -> History:
        """This history with the message hidden from people (or shown again). An unknown
        id, or no change, returns this history."""
        return _edits.set_hidden(self, message_id, hidden)

    def replace_tool_result(
        self, tool_call_id: str, output: object, *, is_error: bool = False
    ) -> History:
        """This history with the result of call ``tool_call_id`` replaced (in place: same
        message, same position). A call without a result, or an unknown one, returns
        this history.

        Raises:
            ValidationError: ``output`` is not JSON.
        """
        return _edits.replace_tool_result(self, tool_call_id, output, is_error)

    def prepend_system(
        self,
        text: str,
        *,
        metadata: Mapping[str, object] | None = None,
        id: str | None = None,
        created_at: datetime | None = None,
    ) -> History:
        """This history with a system message first. O(n)."""
        return _edits.prepend_system(self, text, metadata, id, created_at)

    def replace_system(self, text: str) -> History:
        """This history with the first system message's text replaced (id, position and
        bookkeeping kept), or with one prepended when there is none."""
        return _edits.replace_system(self, text)

    def collapse_system(self) -> History:
        """This history with every system message merged into the first: its text parts,
        then the others' parts not already there, in order; the others removed. With at
        most one system message, this history."""
        return _edits.collapse_system(self)

    # --- streaming messages (see _streaming) ------------------------------------------

    def start_streaming(
        self,
        *,
        role: Role = "assistant",
        parts: Sequence[Part | Mapping[str, object]] = (),
        metadata: Mapping[str, object] | None = None,
        id: str | None = None,
        created_at: datetime | None = None,
    ) -> tuple[History, str]:
        """This history with a new streaming message at the end, and the message's id.

        Until :meth:`finish_streaming` or :meth:`cancel_streaming`, the message is left
        out of :meth:`request_messages` and only the streaming helpers change it.
        Raises as :meth:`extend` does.
        """
        return _streaming.start(self, role, parts, metadata, id, created_at)

    def update_streaming(
        self,
        message_id: str,
        parts: Sequence[Part | Mapping[str, object]],
        *,
        metadata: Mapping[str, object] | None = None,
    ) -> History:
        """This history with the streaming message's parts (and metadata) replaced.

        A message that is not streaming (finished, cancelled or unknown) is left alone:
        a late delta after a stop is a no-op and returns this history.

        Raises:
            ValidationError: the parts are not valid for the role or break tool pairing.
        """
        return _streaming.update(self, message_id, parts, metadata)

    def finish_streaming(self, message_id: str, *, usage: Usage | None = None) -> History:
        """This history with the streaming message ended (kept as it is, with ``usage``
        recorded when given). Not streaming or unknown: this history."""
        return _streaming.finish(self, message_id, usage)

    def cancel_streaming(self, message_id: str) -> History:
        """This history without the streaming message (and the results of its calls).
        Not streaming or unknown: this history."""
        return _streaming.cancel(self, message_id)


def _metadata(value: object, limits: JSONLimits, path: str) -> JSONObject:
    if not isinstance(value, Mapping):
        raise ValidationError(path, f"expected a JSON object, got {describe(value)}")
    frozen: JSONValue = freeze_json(dict(cast("Mapping[str, object]", value)), limits, root=path)
    return cast(JSONObject, frozen)


def _from_json_and_limits(data: object, limits: JSONLimits) -> History:
    return History.from_json(data, limits=limits)
