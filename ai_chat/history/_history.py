"""The :class:`History` value: a conversation's messages and its own fields, immutable.

Helpers are methods that return a new :class:`History` (as ``str.replace`` or
``datetime.replace`` do) rather than free functions: a value's operations are found on
it, calls chain (``History.create().append_user("Hi").append_assistant("Hello")``), and
the public surface stays a handful of names. This module holds the value, its JSON and
its queries; the helper methods are in ``_helpers``, the code behind them by concept in
``_edits``, ``_streaming`` and ``_queries``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from .._errors import ConfigurationError, ValidationError
from .._shape import describe
from .._types import Message, Role, ToolCallPart
from ..limits import FrozenDict, JSONLimits, JSONObject, JSONValue, freeze_json
from ._env import HistoryEnv, format_time, parse_time
from ._helpers import Helpers
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


class History(Helpers):
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


def _metadata(value: object, limits: JSONLimits, path: str) -> JSONObject:
    if not isinstance(value, Mapping):
        raise ValidationError(path, f"expected a JSON object, got {describe(value)}")
    frozen: JSONValue = freeze_json(dict(cast("Mapping[str, object]", value)), limits, root=path)
    return cast(JSONObject, frozen)


def _from_json_and_limits(data: object, limits: JSONLimits) -> History:
    return History.from_json(data, limits=limits)
