"""Integrity of a history, in general and for each provider: :func:`check`.

The general rules hold for every provider. A history value never breaks the first six
(its helpers refuse to); a list of messages from elsewhere may:

``duplicate-id``            two messages share an id
``duplicate-tool-call``     two tool calls share a ``toolCallId``
``orphan-tool-result``      a result whose call is not in the history
``result-before-call``      a result that comes before its call
``duplicate-tool-result``   a second result for one call
``tool-name-mismatch``      a result naming another tool than its call
``unanswered-tool-call``    a user or system message comes after a call and before its
                            result: every provider refuses the next request

A call with no result and nothing but tool messages after it is *pending*, not a problem
(:meth:`History.pending_tool_calls`): answer it before the next request. The provider
rules are in ``_rules``.

How it stays fast: for a :class:`History`, the positions of every call and result come
from the history's own indexes and the roles are read at C speed; a call answered by the
very next message is fine by every rule, and those are picked out at C speed too, so the
rules look in Python only at the others. A list of messages is scanned once in Python.
"""

# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import itemgetter
from typing import Any, Final, Literal, cast

from .._errors import ConfigurationError, ValidationError
from .._shape import describe
from .._types import Message
from ..limits import FrozenDict
from ._history import History
from ._report import PROVIDERS, CheckReport, Problem, Provider
from ._rules import RULES, Facts, general_rules, is_exported

__all__ = ["check", "facts_of"]

_ROLES: Final = frozenset({"system", "user", "assistant", "tool"})
_TOOL_ROLE: Final = {"tool-call": "assistant", "tool-result": "tool"}
_role_of = itemgetter("role")


def check(
    history_or_messages: History | Sequence[object],
    *,
    provider: Provider | Literal["all"] | None = None,
) -> CheckReport:
    """Every problem in a history (or a list of normalized messages), in order.

    With ``provider=None`` the general rules; with a provider's name those and the
    provider's own; with ``"all"`` every provider's (the rules and their sources are in
    the guide, docs/history/checks.md). Nothing is changed.

    A list is read only where the checks look (ids, roles, part types, tool call ids
    and names, the streaming flag); the rest of each message is not validated
    (:func:`~ai_chat.normalize_messages` does that).

    Raises:
        ConfigurationError: an unknown provider.
        ValidationError: not a history or a list, or a message malformed where the
            checks read it (``path`` names it).
    """
    if provider is None:
        enabled: tuple[Provider, ...] = ()
    elif provider == "all":
        enabled = PROVIDERS
    elif provider in PROVIDERS:
        enabled = (provider,)
    else:
        raise ConfigurationError(
            "provider", provider, 'None, "openai", "anthropic", "gemini" or "all"'
        )
    facts = facts_of(history_or_messages)
    found = general_rules(facts)
    for name in enabled:
        found.extend(RULES[name](facts))
    found.sort(key=itemgetter(0, 1))
    return CheckReport(tuple(problem for _, _, problem in found), provider)


def facts_of(history_or_messages: object) -> Facts:
    """What the rules read: from a history's indexes, or from one scan of a list."""
    if isinstance(history_or_messages, History):
        seq = history_or_messages._seq  # pyright: ignore[reportPrivateUsage]
        messages = seq.messages()
        roles: list[str] = list(map(_role_of, messages))
        streaming = seq.streaming_positions()
        return Facts(messages, roles, streaming, seq.tool_pairs(), [], set())
    if isinstance(history_or_messages, (str, bytes)) or not isinstance(
        history_or_messages, Sequence
    ):
        raise ValidationError(
            "$", f"expected a History or a list of messages, got {describe(history_or_messages)}"
        )
    messages = cast("tuple[Message, ...]", tuple(history_or_messages))
    for index, message in enumerate(messages):
        _check_read_fields(message, index)
    return _scan(messages)


def _check_read_fields(message: object, index: int) -> None:
    if type(message) is FrozenDict and _plain(message):
        return  # the common case, read without a word of error
    path = f"$[{index}]"
    if not isinstance(message, Mapping):
        raise ValidationError(path, f"expected a message object, got {describe(message)}")
    fields = cast("Mapping[str, Any]", message)
    if type(fields.get("id")) is not str or not fields["id"]:
        raise ValidationError(f"{path}.id", "expected a non-empty string")
    if fields.get("role") not in _ROLES:
        raise ValidationError(f"{path}.role", 'expected "system", "user", "assistant" or "tool"')
    parts = fields.get("parts")
    if not isinstance(parts, (list, tuple)):
        raise ValidationError(f"{path}.parts", "expected an array of parts")
    for number, part in enumerate(cast("Sequence[object]", parts)):
        where = f"{path}.parts[{number}]"
        if not isinstance(part, Mapping) or type(part.get("type")) is not str:
            raise ValidationError(where, "expected a part object with a type")
        kind = part["type"]
        if kind == "tool-call" or kind == "tool-result":
            if fields["role"] != _TOOL_ROLE[kind]:
                raise ValidationError(
                    f"{where}.type", f'a {fields["role"]} message cannot hold a "{kind}" part'
                )
            for name in ("toolCallId", "toolName"):
                if type(part.get(name)) is not str or not part[name]:
                    raise ValidationError(f"{where}.{name}", "expected a non-empty string")
    metadata = fields.get("metadata")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise ValidationError(f"{path}.metadata", "expected a JSON object")


def _plain(message: Any) -> bool:
    """Whether a frozen message is plainly fine where the checks read it (fast)."""
    message_id = message.get("id")
    role = message.get("role")
    parts = message.get("parts")
    if (
        type(message_id) is not str
        or not message_id
        or role not in _ROLES
        or type(parts) is not tuple
    ):
        return False
    metadata = message.get("metadata")
    if metadata is not None and type(metadata) is not FrozenDict:
        return False
    for part in parts:
        if type(part) is not FrozenDict:
            return False
        kind = part.get("type")
        if kind == "tool-call" or kind == "tool-result":
            if role != _TOOL_ROLE[kind]:
                return False
            call_id, name = part.get("toolCallId"), part.get("toolName")
            if type(call_id) is not str or not call_id or type(name) is not str or not name:
                return False
        elif type(kind) is not str:
            return False
    return True


def _scan(messages: tuple[Message, ...]) -> Facts:
    """The facts of a list, and the invariant problems a history could not hold."""
    problems: list[tuple[int, int, Problem]] = []
    flagged: set[str] = set()

    def problem(code: str, reason: str, index: int, number: int, call_id: str | None) -> None:
        path = f"$[{index}]" if number < 0 else f"$[{index}].parts[{number}]"
        problems.append(
            (index, number, Problem(code, reason, path, messages[index]["id"], call_id))
        )
        if call_id is not None:
            flagged.add(call_id)

    ids: set[str] = set()
    calls: dict[str, tuple[int, str]] = {}  # toolCallId -> (position, tool name)
    results: dict[str, int] = {}
    early: dict[str, tuple[int, int]] = {}  # results seen before any call of their id
    streaming: set[int] = set()
    for index, message in enumerate(messages):
        message_id = message["id"]
        if message_id in ids:
            problem("duplicate-id", f"message id {message_id!r} is used twice", index, -1, None)
        ids.add(message_id)
        if "metadata" in message and not is_exported(message):
            streaming.add(index)
        for number, part in enumerate(message["parts"]):
            fields: Any = part
            kind = fields["type"]
            if kind == "tool-call":
                call_id = fields["toolCallId"]
                if call_id in calls:
                    problem(
                        "duplicate-tool-call",
                        f"tool call id {call_id!r} is used by two calls",
                        index,
                        number,
                        call_id,
                    )
                    continue
                calls[call_id] = (index, fields["toolName"])
                if call_id in early:
                    at, place = early.pop(call_id)
                    problem(
                        "result-before-call",
                        f"the result of tool call {call_id!r} comes before the call",
                        at,
                        place,
                        call_id,
                    )
            elif kind == "tool-result":
                call_id = fields["toolCallId"]
                call = calls.get(call_id)
                if call_id in results or call_id in early:
                    problem(
                        "duplicate-tool-result",
                        f"tool call {call_id!r} has a second result",
                        index,
                        number,
                        call_id,
                    )
                elif call is None:
                    early[call_id] = (index, number)
                else:
                    results[call_id] = index
                    if fields["toolName"] != call[1]:
                        problem(
                            "tool-name-mismatch",
                            f"the result of tool call {call_id!r} names tool "
                            f"{fields['toolName']!r}, the call {call[1]!r}",
                            index,
                            number,
                            call_id,
                        )
    for call_id, (at, number) in early.items():
        problem(
            "orphan-tool-result",
            f"tool result for call {call_id!r}, which is not in the history; remove it "
            "(repair drops it)",
            at,
            number,
            call_id,
        )
    call_ids = list(calls)
    positions = [at for at, _ in calls.values()]
    answers = [results.get(call_id, -1) for call_id in call_ids]
    roles: list[str] = list(map(_role_of, messages))
    return Facts(messages, roles, streaming, (call_ids, positions, answers), problems, flagged)
