"""Repairing tool pairing: :func:`repair` returns a history every provider accepts.

What it does, when :func:`~ai_chat.history.check` finds a problem (with the same
``provider`` rules); a history without problems comes back as it is:

* a message whose id was already used is dropped (the first one stays);
* a tool call whose id was already used is dropped (the first call stays);
* a tool result whose call is not earlier in the history, or that is a second result,
  is dropped: a result without its call means nothing to a model;
* a result naming another tool than its call is renamed to the call's tool;
* every result is moved right after its call's assistant message (tool messages whose
  results all belong there move whole and keep their ids; a tool message answering
  several assistant messages is split, the split-off results getting a new id);
* a call that has no result although the conversation went on is answered with an
  explicit error result (``isError``, :data:`UNANSWERED_OUTPUT`), rather than dropped:
  dropping a call would rewrite what the assistant said (and, at Anthropic, the signed
  reasoning next to it), while an error result tells the model the call never returned;
* a call with nothing after it but its tool messages is pending, and left alone.

Streaming messages stay where they are, untouched. What no reordering of results can
fix (a system message after the conversation started, a Gemini function call right
after another model turn) is left and listed in :attr:`Repair.remaining`.
"""

# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias, cast

from .._errors import ConfigurationError
from .._types import Message
from ..limits import FrozenDict
from ._bookkeeping import BOOKKEEPING_KEY
from ._check import check, facts_of
from ._env import HistoryEnv, format_time
from ._history import History
from ._report import Problem, Provider
from ._rules import is_exported
from ._sequence import Seq
from ._validate import check_new

__all__ = ["UNANSWERED_OUTPUT", "Change", "Repair", "repair"]

UNANSWERED_OUTPUT: Final = (
    "No result: this tool call was never answered (the conversation went on without it)."
)
"""The output of the error result :func:`repair` gives a call that was never answered."""

Action: TypeAlias = Literal[
    "dropped-message", "dropped-part", "renamed-part", "moved-message", "moved-part", "added-result"
]


@dataclass(frozen=True, slots=True)
class Change:
    """One change :func:`repair` made.

    Attributes:
        action: ``dropped-message``, ``dropped-part``, ``renamed-part``,
            ``moved-message`` (a tool message moved whole), ``moved-part`` (a result moved
            into a new tool message) or ``added-result`` (an error result for an
            unanswered call).
        path: where in the input (``$[3]``, ``$[3].parts[1]``); for ``added-result``, the
            call's path.
        message_id: the message concerned (for ``moved-part`` and ``added-result``, the
            new tool message's id).
        tool_call_id: the tool call concerned, if any.
    """

    action: Action
    path: str
    message_id: str
    tool_call_id: str | None = None


@dataclass(frozen=True, slots=True)
class Repair:
    """What :func:`repair` returns.

    Attributes:
        history: the repaired history (the input itself when nothing needed repair).
        changes: what was changed, in the order of the input.
        remaining: the problems :func:`check` still finds (what repair cannot fix).
    """

    history: History
    changes: tuple[Change, ...]
    remaining: tuple[Problem, ...]

    @property
    def changed(self) -> bool:
        """Whether anything was changed."""
        return bool(self.changes)


def repair(
    history_or_messages: History | Sequence[object],
    *,
    provider: Provider | Literal["all"] | None = None,
    env: HistoryEnv | None = None,
) -> Repair:
    """The history with its tool pairing repaired, and what changed (see the module).

    ``provider`` chooses the rules that decide whether anything needs repair (as in
    :func:`check`); the repaired layout satisfies every provider's pairing rules. A list
    of messages becomes a new history (``env`` gives its id and times; a history keeps
    its own env unless ``env`` is given). Pure: the input is not changed.

    Raises:
        ValidationError: as :func:`check` does, and for a message of a list that is not
            a valid normalized message.
    """
    report = check(history_or_messages, provider=provider)
    if isinstance(history_or_messages, History):
        source = history_or_messages if env is None else history_or_messages.with_env(env)
    else:
        source = History.create(env=env)
        if report.ok:
            whole = source.extend(history_or_messages)
            return Repair(whole, (), ())
    if report.ok:
        return Repair(source, (), ())
    messages = facts_of(history_or_messages).messages
    rebuilt, changes = _Rebuild(messages, source.env).run()
    if not changes and isinstance(history_or_messages, History):
        return Repair(source, (), report.problems)  # nothing it can fix
    if isinstance(history_or_messages, History):
        checked = check_new(Seq.of(()), rebuilt, source.limits, "$", None)
        result = source._changed(Seq.of(checked))  # pyright: ignore[reportPrivateUsage]
    else:
        result = source.extend(rebuilt)
    return Repair(result, tuple(changes), check(result, provider=provider).problems)


class _Rebuild:
    """The canonical layout: every result right after its call's assistant message."""

    def __init__(self, messages: tuple[Message, ...], env: HistoryEnv) -> None:
        self.messages = messages
        self.env = env
        self.changes: list[Change] = []
        self.kept: list[int] = []  # indexes of the messages kept
        self.calls: dict[str, tuple[int, str]] = {}  # call id -> (its message, tool name)
        self.owner: dict[int, list[tuple[int, int, Any]]] = {}  # call message -> results
        self.answered: set[str] = set()
        self.taken: set[str] = set()  # the ids in use, once a new one is needed
        self.home: dict[int, int] = {}  # tool message -> the call message keeping its id
        self.dropped: dict[int, set[int]] = {}  # assistant message -> its dropped calls

    def _change(
        self, action: Action, path: str, message_id: str, call_id: str | None = None
    ) -> None:
        self.changes.append(Change(action, path, message_id, call_id))

    def run(self) -> tuple[list[Message], list[Change]]:
        self._collect()
        laid_out = self._lay_out()
        self.changes.sort(key=_where)
        return laid_out, self.changes

    def _collect(self) -> None:
        """Keep the first of each id, and give each kept result to its call's message."""
        ids: set[str] = set()
        calls, owner = self.calls, self.owner
        for index, message in enumerate(self.messages):
            if message["id"] in ids:
                self._change("dropped-message", f"$[{index}]", message["id"])
                continue
            ids.add(message["id"])
            self.kept.append(index)
            role = message["role"]
            for number, part in enumerate(message["parts"]):
                fields: Any = part
                kind = fields["type"]
                call_id = fields.get("toolCallId")
                path = f"$[{index}].parts[{number}]"
                if kind == "tool-call":
                    if call_id in calls:
                        self._change("dropped-part", path, message["id"], call_id)
                        self.dropped.setdefault(index, set()).add(number)
                    else:
                        calls[call_id] = (index, fields["toolName"])
                elif kind == "tool-result" and role == "tool":
                    call = calls.get(call_id)
                    if call is None or call_id in self.answered:
                        self._change("dropped-part", path, message["id"], call_id)
                        continue
                    self.answered.add(call_id)
                    if fields["toolName"] != call[1]:
                        fields = FrozenDict({**fields, "toolName": call[1]})
                        self._change("renamed-part", path, message["id"], call_id)
                    owner.setdefault(call[0], []).append((index, number, fields))
                    # The tool message keeps its id with the last assistant message it answers.
                    self.home[index] = max(self.home.get(index, -1), call[0])

    def _lay_out(self) -> list[Message]:
        messages = self.messages
        out: list[Message] = []
        last_turn = max(
            (i for i in self.kept if messages[i]["role"] != "tool"), default=-1
        )  # after it, calls are pending
        for index in self.kept:
            message = messages[index]
            role = message["role"]
            if role == "tool" and is_exported(message):
                continue  # its results are placed after their calls
            dropped = self.dropped.get(index)
            if dropped:
                kept = tuple(p for n, p in enumerate(message["parts"]) if n not in dropped)
                if not kept:  # it held nothing but calls made twice
                    self._change("dropped-message", f"$[{index}]", message["id"])
                    continue
                message = cast(Message, FrozenDict({**message, "parts": kept}))
            out.append(message)
            if role == "assistant":  # a streaming one's calls are never answered here
                pending = index >= last_turn or not is_exported(message)
                self._answer(index, out, pending=pending)
        return out

    def _answer(self, index: int, out: list[Message], pending: bool) -> None:
        """Emit the tool messages answering the calls of message ``index``."""
        messages = self.messages
        results = self.owner.get(index, [])
        by_message: dict[int, list[tuple[int, Any]]] = {}
        for at, number, part in results:
            by_message.setdefault(at, []).append((number, part))
        for at, parts in by_message.items():
            source = messages[at]
            if not is_exported(source):
                continue  # a streaming tool message stays where it is
            if self.home[at] == index:
                kept = tuple(part for _, part in parts)
                same = kept == tuple(source["parts"])
                out.append(source if same else cast(Message, FrozenDict({**source, "parts": kept})))
                if not self._in_place(at, index):
                    self._change("moved-message", f"$[{at}]", source["id"])
                continue
            new_id = self._new_id()
            out.append(self._tool_message(new_id, [part for _, part in parts]))
            for number, part in parts:
                self._change("moved-part", f"$[{at}].parts[{number}]", new_id, part["toolCallId"])
        missing = [
            (number, fields)
            for number, fields in enumerate(messages[index]["parts"])
            if cast(Any, fields)["type"] == "tool-call"
            and self.calls.get(cast(Any, fields)["toolCallId"], (-1,))[0] == index
            and cast(Any, fields)["toolCallId"] not in self.answered
        ]
        if missing and not pending:
            new_id = self._new_id()
            errors = []
            for number, call in missing:
                fields: Any = call
                errors.append(
                    FrozenDict(
                        type="tool-result",
                        toolCallId=fields["toolCallId"],
                        toolName=fields["toolName"],
                        output=UNANSWERED_OUTPUT,
                        isError=True,
                    )
                )
                self._change(
                    "added-result", f"$[{index}].parts[{number}]", new_id, fields["toolCallId"]
                )
            out.append(self._tool_message(new_id, errors))

    def _in_place(self, at: int, call_index: int) -> bool:
        """Whether tool message ``at`` already sits in the run of tool messages right
        after the message ``call_index``."""
        return all(self.messages[i]["role"] == "tool" for i in range(call_index + 1, at))

    def _new_id(self) -> str:
        """A new message id from the env, unused in the history."""
        taken = self.taken
        if not taken:
            taken.update(m["id"] for m in self.messages)
        candidate = ""
        for _ in range(100):
            candidate = self.env.identifier()
            if candidate not in taken:
                taken.add(candidate)
                return candidate
        raise ConfigurationError("env.new_id()", candidate, "new ids, not ids the history holds")

    def _tool_message(self, message_id: str, parts: list[Any]) -> Message:
        stamp = FrozenDict({BOOKKEEPING_KEY: FrozenDict(createdAt=format_time(self.env.time()))})
        return cast(
            Message, FrozenDict(id=message_id, role="tool", parts=tuple(parts), metadata=stamp)
        )


def _where(change: Change) -> tuple[int, int]:
    """A change's place in the input: (message index, part index or -1)."""
    head, _, rest = change.path[2:].partition("]")
    part = rest[len(".parts[") : -1] if rest else ""
    return int(head), int(part) if part else -1
