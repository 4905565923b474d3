"""The rules :func:`~ai_chat.history.check` applies: the general one, and each provider's.

Each provider's rules read the messages a request takes (streaming ones left out) as the
provider's adapter lays them out:

* ``openai`` (Chat Completions; one tool message per result, assistant messages as they
  are): a call must be answered in the run of tool messages right after its assistant
  message. The API's words: "An assistant message with 'tool_calls' must be followed by
  tool messages responding to each 'tool_call_id'", and "messages with role 'tool' must
  be a response to a preceding message with 'tool_calls'". An order of the tool messages
  within the run is not documented, and not checked.
* ``anthropic`` (Messages; leading system messages become ``system``, tool results are
  ``tool_result`` blocks of a user turn, and the API merges consecutive turns of one role
  as the SDK's ``messages`` documentation says, so alternation itself is never an
  error): every ``tool_use`` of an assistant turn needs its ``tool_result`` in the very
  next user turn ("tool_use ids were found without tool_result blocks immediately after";
  "Each tool_result block must have a corresponding tool_use block in the previous
  message"); the ``tool_result`` blocks come first in that turn (a user message before
  them is a user message between call and result: the general rule); no system message
  after the conversation started.
* ``gemini`` (``generateContent``; one ``functionResponse`` content per run of tool
  messages, model contents not merged): a function call turn comes right after a user
  turn or a function response turn ("Please ensure that function call turn comes
  immediately after a user turn or after a function response turn"); its calls are all
  answered by the very next content, a function response turn ("the number of function
  response parts is equal to the number of function call parts of the function call
  turn"); no late system message.

A result in the wrong place always leaves its call unanswered where the provider looks,
so each rule reports the call (once), never the result as well; a call the general rule
reported is not reported again.
"""

# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping
from itertools import compress, count, repeat
from operator import sub
from typing import Any, Final

from .._types import Message
from ._bookkeeping import BOOKKEEPING_KEY
from ._report import Problem, Provider

__all__ = ["RULES", "Facts", "Found", "general_rules", "is_exported"]

# A problem with where it is, for sorting: (message index, part index or -1, problem).
Found = tuple[int, int, Problem]

_USER_SYSTEM: Final = frozenset({"user", "system"})
_NOT_TOOL: Final = frozenset({"user", "system", "assistant"})
_USER_TOOL: Final = frozenset({"user", "tool"})
_ASSISTANT: Final = frozenset({"assistant"})
_CONTENT: Final = frozenset({"user", "tool", "assistant"})
_USER_ASSISTANT: Final = frozenset({"user", "assistant"})
_SYSTEM: Final = frozenset({"system"})
_NOT_BEFORE_CALL: Final = frozenset({"system", "assistant", ""})


def is_exported(message: Message) -> bool:
    """Whether a request takes ``message`` (it is not streaming)."""
    metadata: Any = message.get("metadata")
    if metadata is None or not isinstance(metadata, Mapping):
        return True
    own: Any = metadata.get(BOOKKEEPING_KEY)
    if own is None:
        return True
    return not (isinstance(own, Mapping) and own.get("streaming") is True)


class Facts:
    """What the rules read: roles, streaming positions and the calls with their results.

    Attributes:
        messages: the messages.
        roles: each message's role.
        streaming: the positions of streaming messages.
        call_ids, call_at, answer_at: each call's id, its message's position and its
            result's message's position (-1 for none), in call order.
        problems: problems already found (the invariants of a list of messages).
        flagged: calls with a general problem (not reported again).
    """

    __slots__ = (
        "_exported",
        "_positions",
        "_slow",
        "answer_at",
        "call_at",
        "call_ids",
        "flagged",
        "messages",
        "problems",
        "roles",
        "streaming",
    )

    def __init__(
        self,
        messages: tuple[Message, ...],
        roles: list[str],
        streaming: set[int],
        calls: tuple[list[str], list[int], list[int]],
        problems: list[Found],
        flagged: set[str],
    ) -> None:
        self.messages = messages
        self.roles = roles
        self.streaming = streaming
        self.call_ids, self.call_at, self.answer_at = calls
        self.problems = problems
        self.flagged = flagged
        self._exported: list[str] | None = None
        self._positions: dict[tuple[frozenset[str], bool], list[int]] = {}
        self._slow: list[tuple[str, int, int | None]] | None = None

    def exported(self) -> list[str]:
        """The roles as a request sees them: ``""`` for a streaming message."""
        found = self._exported
        if found is None:
            found = self.roles
            if self.streaming:
                found = list(found)
                for position in self.streaming:
                    found[position] = ""
            self._exported = found
        return found

    def positions(self, roles: frozenset[str], exported: bool = True) -> list[int]:
        """The positions of the messages with one of ``roles``, in order (built at C speed)."""
        key = (roles, exported)
        found = self._positions.get(key)
        if found is None:
            source = self.exported() if exported else self.roles
            found = self._positions[key] = list(
                compress(range(len(source)), map(roles.__contains__, source))
            )
        return found

    def slow_pairs(self) -> list[tuple[str, int, int | None]]:
        """The calls that need a closer look, as (id, position, result position or None).

        A call answered by the very next message is fine by every rule (no message comes
        between them), so only the others are looked at; they are picked at C speed.
        Streaming messages make their calls and results need a closer look too.
        """
        found = self._slow
        if found is None:
            at, answer = self.call_at, self.answer_at
            picked = compress(count(), map((1).__ne__, map(sub, answer, at)))
            indexes = set(picked)
            streaming = self.streaming
            if streaming:
                indexes.update(
                    i for i, p in enumerate(at) if p in streaming or answer[i] in streaming
                )
            ids = self.call_ids
            found = self._slow = [
                (ids[i], at[i], answer[i] if answer[i] >= 0 else None) for i in sorted(indexes)
            ]
        return found

    def exported_pairs(self) -> list[tuple[str, int, int | None]]:
        """The slow pairs a provider sees, those of the general problems left out: no
        call of a streaming message, and no result from one."""
        flagged, streaming = self.flagged, self.streaming
        return [
            (call_id, at, None if answer in streaming else answer)
            for call_id, at, answer in self.slow_pairs()
            if call_id not in flagged and at not in streaming
        ]

    def call_turns(self) -> list[int]:
        """The positions of the messages with calls that a request takes, in order."""
        streaming = self.streaming
        return sorted(
            {p for p in self.call_at if p not in streaming} if streaming else set(self.call_at)
        )

    def call_part(self, position: int, call_id: str) -> int:
        """The index of the part holding call ``call_id`` in message ``position``."""
        for number, part in enumerate(self.messages[position]["parts"]):
            fields: Any = part
            if fields["type"] == "tool-call" and fields["toolCallId"] == call_id:
                return number
        return -1  # pragma: no cover

    def at_call(
        self, code: str, reason: str, call_id: str, position: int, provider: Provider | None
    ) -> Found:
        number = self.call_part(position, call_id)
        path = f"$[{position}].parts[{number}]"
        return (
            position,
            number,
            Problem(code, reason, path, self.messages[position]["id"], call_id, provider),
        )

    def at_message(self, code: str, reason: str, position: int, provider: Provider | None) -> Found:
        return (
            position,
            -1,
            Problem(code, reason, f"$[{position}]", self.messages[position]["id"], None, provider),
        )


def _next(positions: list[int], after: int) -> int | None:
    index = bisect_right(positions, after)
    return positions[index] if index < len(positions) else None


def general_rules(facts: Facts) -> list[Found]:
    """The invariant problems found so far, and ``unanswered-tool-call``: a user or system
    message between a call and its result (or after a call without one)."""
    found = list(facts.problems)
    flagged = facts.flagged
    user_system: list[int] | None = None
    for call_id, at, answer in facts.slow_pairs():
        if answer == at + 1 or call_id in flagged:
            continue  # answered by the very next message
        if user_system is None:
            user_system = facts.positions(_USER_SYSTEM, exported=False)
        interrupt = _next(user_system, at)
        if interrupt is not None and (answer is None or interrupt < answer):
            flagged.add(call_id)
            found.append(
                facts.at_call(
                    "unanswered-tool-call",
                    f"tool call {call_id!r} has no result before the {facts.roles[interrupt]} "
                    f"message {facts.messages[interrupt]['id']!r} ($[{interrupt}]); every "
                    "provider refuses that: answer the call first, or repair the history",
                    call_id,
                    at,
                    None,
                )
            )
    return found


def openai_rules(facts: Facts) -> list[Found]:
    found: list[Found] = []
    not_tool: list[int] | None = None
    for call_id, at, answer in facts.exported_pairs():
        if answer == at + 1:
            continue
        if not_tool is None:
            not_tool = facts.positions(_NOT_TOOL)
        after = _next(not_tool, at)
        if after is None or (answer is not None and answer < after):
            continue  # pending, or answered in the tool messages right after the call
        found.append(
            facts.at_call(
                "unanswered-tool-call",
                f"tool call {call_id!r} is not answered by the tool messages right after its "
                "assistant message (OpenAI: \"An assistant message with 'tool_calls' must be "
                "followed by tool messages responding to each 'tool_call_id'\")",
                call_id,
                at,
                "openai",
            )
        )
    return found


def _late_system(facts: Facts, provider: Provider, name: str) -> list[Found]:
    exported = facts.exported()
    first = next((i for i, role in enumerate(exported) if role in _CONTENT), None)
    try:
        exported.index("system", first or 0)  # a scan at C speed
    except ValueError:
        return []
    if first is None:
        return []
    systems = facts.positions(_SYSTEM)
    return [
        facts.at_message(
            "late-system-message",
            f"{name} takes system instructions only before the conversation; move this "
            "system message to the start (collapse_system) or make it a user message",
            position,
            provider,
        )
        for position in systems[bisect_right(systems, first) :]
    ]


def anthropic_rules(facts: Facts) -> list[Found]:
    found = _late_system(facts, "anthropic", "Anthropic")
    user_tool: list[int] | None = None
    assistant: list[int] = []
    for call_id, at, answer in facts.exported_pairs():
        if answer == at + 1:
            continue
        if user_tool is None:
            user_tool = facts.positions(_USER_TOOL)
            assistant = facts.positions(_ASSISTANT)
        turn = _next(user_tool, at)  # the user turn after the call's assistant turn
        if turn is None:
            continue  # pending
        end = _next(assistant, turn)
        if end is None or (answer is not None and turn <= answer < end):
            continue  # pending (that user turn is the last so far), or answered in it
        found.append(
            facts.at_call(
                "unanswered-tool-call",
                f"tool call {call_id!r} has no tool_result in the next user turn (Anthropic: "
                '"tool_use ids were found without tool_result blocks immediately after")',
                call_id,
                at,
                "anthropic",
            )
        )
    return found


def gemini_rules(facts: Facts) -> list[Found]:
    found = _late_system(facts, "gemini", "Gemini")
    exported = facts.exported()
    content: list[int] = []
    turns = facts.call_turns()
    # Right after a user or a response turn is fine; the others get a closer look.
    before = map(exported.__getitem__, map(sub, turns, repeat(1)))
    doubtful = list(compress(turns, map(_NOT_BEFORE_CALL.__contains__, before)))
    if turns and turns[0] == 0 and (not doubtful or doubtful[0] != 0):
        doubtful.insert(0, 0)  # the first message: [-1] read the last one
    for at in doubtful:
        if at and (exported[at - 1] == "user" or exported[at - 1] == "tool"):
            continue
        if not content:
            content = facts.positions(_CONTENT)
        index = bisect_left(content, at) - 1
        if index < 0 or exported[content[index]] not in _USER_TOOL:
            found.append(
                facts.at_message(
                    "function-call-position",
                    "Gemini takes a function call turn only right after a user turn or a "
                    'function response turn ("Please ensure that function call turn comes '
                    'immediately after a user turn or after a function response turn"); make '
                    "the calls part of the assistant message that follows the user message or "
                    "the tool results",
                    at,
                    "gemini",
                )
            )
    user_assistant: list[int] = []
    for call_id, at, answer in facts.exported_pairs():
        if answer == at + 1:
            continue
        if not content:
            content = facts.positions(_CONTENT)
        following = _next(content, at)
        if following is None:
            continue  # pending
        if exported[following] == "tool":
            if not user_assistant:
                user_assistant = facts.positions(_USER_ASSISTANT)
            end = _next(user_assistant, following)
            if end is None or (answer is not None and following <= answer < end):
                continue  # pending (nothing after the responses yet), or answered there
        found.append(
            facts.at_call(
                "unanswered-tool-call",
                f"tool call {call_id!r} is not answered in the function response turn right "
                'after its function call turn (Gemini: "Please ensure that the number of '
                "function response parts is equal to the number of function call parts of "
                'the function call turn")',
                call_id,
                at,
                "gemini",
            )
        )
    return found


RULES: Final[dict[Provider, Callable[[Facts], list[Found]]]] = {
    "openai": openai_rules,
    "anthropic": anthropic_rules,
    "gemini": gemini_rules,
}
