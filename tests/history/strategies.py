"""Hypothesis strategies for the history tests, and a naive reference checker.

* :func:`build_history` drives a history through random helpers: ``well_behaved`` ones
  follow the chat protocol (every call answered before the next user turn, system
  messages first), the others may do anything the helpers allow.
* :func:`reference_problems` is the slow, obvious reading of the rules: it lays the
  messages out as each provider's adapter does (turns, contents) and looks for what the
  provider refuses there, written independently of ``ai_chat.history``'s checks.
* :func:`event_logs` makes valid UI message stream event logs for one answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, TypeVar, cast

from hypothesis import settings
from hypothesis import strategies as st

from ai_chat.history import PROVIDERS, History, HistoryEnv, Provider
from ai_chat.types import Message

T = TypeVar("T")

START = datetime(2030, 1, 1, tzinfo=UTC)
PROPERTY = settings(deadline=None, derandomize=True, database=None)

texts = st.text(alphabet=st.characters(codec="utf-8"), max_size=12)
json_scalars = st.none() | st.booleans() | st.integers(-1000, 1000) | texts
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=6,
)


def fresh() -> History:
    return History.create(title="t", metadata={"k": 1}, env=HistoryEnv.deterministic())


def two_call_messages_then_results() -> History:
    """Two assistant messages with a call each, then one tool message answering both:
    fine for Anthropic (the assistant turns merge), not for OpenAI or Gemini."""
    calls = [{"toolCallId": c, "toolName": "lookup", "input": {"id": 1}} for c in ("c1", "c2")]
    history = fresh().append_user("hi")
    history = history.append_assistant(tool_calls=calls[:1]).append_assistant(tool_calls=calls[1:])
    return history.append_tool_results(
        [{"toolCallId": "c1", "output": 1}, {"toolCallId": "c2", "output": 2}]
    )


def _streaming(message: Mapping[str, Any]) -> bool:
    own = message.get("metadata", {}).get("aiChat", {})
    return own.get("streaming") is True


class _Builder:
    """Applies random helpers to a history, remembering the calls it made."""

    def __init__(self, data: st.DataObject, well_behaved: bool) -> None:
        self.data = data
        self.well_behaved = well_behaved
        self.history: History = fresh()
        self.calls = 0
        self.started = False  # a non-system message was appended

    def draw(self, strategy: st.SearchStrategy[T]) -> T:
        return self.data.draw(strategy)

    def pending(self) -> list[str]:
        return [c["toolCallId"] for c in self.history.pending_tool_calls()]

    def new_calls(self, count: int) -> list[dict[str, object]]:
        out: list[dict[str, object]] = []
        for _ in range(count):
            self.calls += 1
            name = self.draw(st.sampled_from(["search", "weather", "add"]))
            out.append(
                {
                    "toolCallId": f"call-{self.calls}",
                    "toolName": name,
                    "input": self.draw(json_values),
                }
            )
        return out

    def answer_pending(self) -> None:
        """Answer every pending call, in one tool message or several, in any order."""
        pending = self.pending()
        order = self.draw(st.permutations(pending))
        if self.draw(st.booleans()):
            results = [{"toolCallId": c, "output": self.draw(json_values)} for c in order]
            self.history = self.history.append_tool_results(results)
        else:
            for call_id in order:
                error = self.draw(st.booleans())
                self.history = self.history.append_tool_result(
                    call_id, self.draw(json_values), is_error=error
                )

    def turn(self) -> None:
        """A user message and a complete answer (some steps with tool calls)."""
        self.history = self.history.append_user(self.draw(texts))
        self.started = True
        for _ in range(self.draw(st.integers(0, 2))):
            calls = self.new_calls(self.draw(st.integers(1, 3)))
            self.history = self.history.append_assistant(self.draw(texts), tool_calls=calls)
            if self.draw(st.integers(0, 4)) == 0:
                return  # pending: only as the last thing (the caller stops here)
            self.answer_pending()
        self.history = self.history.append_assistant(self.draw(texts))

    def mutate(self) -> None:
        """A helper that leaves a well-behaved history well-behaved."""
        history = self.history
        if not len(history):
            return
        message = history.messages[self.draw(st.integers(0, len(history) - 1))]
        action = self.draw(st.sampled_from(["hide", "update", "replace", "system", "collapse"]))
        if action == "hide":
            self.history = history.set_hidden(message["id"], self.draw(st.booleans()))
        elif (
            action == "update"
            and message["role"] in ("user", "assistant")
            and not _streaming(message)
        ):
            keep = [p for p in message["parts"] if p["type"] == "tool-call"]
            self.history = history.update_message(
                message["id"], parts=[{"type": "text", "text": self.draw(texts)}, *keep]
            )
        elif action == "replace":
            done = [i for i in history.tool_interactions() if i.result is not None]
            if done:
                chosen = self.draw(st.sampled_from(done))
                self.history = history.replace_tool_result(
                    chosen.call["toolCallId"],
                    self.draw(json_values),
                    is_error=self.draw(st.booleans()),
                )
        elif action == "system":
            self.history = history.replace_system(self.draw(texts))
        elif action == "collapse":
            self.history = history.collapse_system()

    def anything(self) -> None:
        """Any helper at all (the result may hold problems)."""
        history = self.history
        action = self.draw(
            st.sampled_from(
                [
                    "user",
                    "system",
                    "assistant",
                    "calls",
                    "result",
                    "results",
                    "remove",
                    "stream",
                    "mutate",
                ]
            )
        )
        if action == "user":
            self.history = history.append_user(self.draw(texts))
        elif action == "system":
            self.history = history.append_system(self.draw(texts))
        elif action == "assistant":
            self.history = history.append_assistant(self.draw(texts))
        elif action == "calls":
            calls = self.new_calls(self.draw(st.integers(1, 2)))
            self.history = history.append_assistant(self.draw(texts), tool_calls=calls)
        elif action in ("result", "results") and self.pending():
            chosen = self.draw(st.lists(st.sampled_from(self.pending()), min_size=1, unique=True))
            if action == "result":
                self.history = history.append_tool_result(chosen[0], self.draw(json_values))
            else:
                self.history = history.append_tool_results(
                    [{"toolCallId": c, "output": 1} for c in chosen]
                )
        elif action == "remove" and len(history):
            message = history.messages[self.draw(st.integers(0, len(history) - 1))]
            if not _streaming(message):
                self.history = history.remove_message(message["id"])
        elif action == "stream":
            self.stream()
        else:
            self.mutate()

    def stream(self) -> None:
        history = self.history
        streaming = [m for m in history.messages if _streaming(m)]
        if not streaming:
            parts = [{"type": "text", "text": self.draw(texts)}]
            self.history, _ = history.start_streaming(parts=parts)
            return
        message_id = streaming[0]["id"]
        action = self.draw(st.sampled_from(["update", "finish", "cancel"]))
        if action == "update":
            self.history = history.update_streaming(message_id, [{"type": "text", "text": "more"}])
        elif action == "finish":
            self.history = history.finish_streaming(message_id, usage={"outputTokens": 3})
        else:
            self.history = history.cancel_streaming(message_id)


def build_history(data: st.DataObject, *, well_behaved: bool) -> History:
    """A history built by random helpers (see the module)."""
    builder = _Builder(data, well_behaved)
    if data.draw(st.booleans()):
        builder.history = builder.history.prepend_system(data.draw(texts))
    for _ in range(data.draw(st.integers(0, 8))):
        if well_behaved:
            if builder.pending():
                break  # a pending answer ends the conversation
            if data.draw(st.integers(0, 2)):
                builder.turn()
            else:
                builder.mutate()
        else:
            builder.anything()
    return builder.history


# --- the reference checker ------------------------------------------------------------

Found = set[tuple[str, "Provider | None", "str | None", str]]


def _calls(message: Mapping[str, Any]) -> list[str]:
    return [p["toolCallId"] for p in message["parts"] if p["type"] == "tool-call"]


def _results(message: Mapping[str, Any]) -> list[str]:
    return [p["toolCallId"] for p in message["parts"] if p["type"] == "tool-result"]


def _general(messages: list[Mapping[str, Any]]) -> dict[str, str]:
    """Calls (id -> their message id) with a user or system message before their result."""
    found: dict[str, str] = {}
    for i, message in enumerate(messages):
        for call_id in _calls(message):
            end = next(
                (j for j in range(i + 1, len(messages)) if call_id in _results(messages[j])),
                len(messages),
            )
            if any(messages[k]["role"] in ("user", "system") for k in range(i + 1, end)):
                found[call_id] = message["id"]
    return found


def _openai(messages: list[Mapping[str, Any]]) -> tuple[dict[str, str], set[str]]:
    entries: list[tuple[str, Any, str]] = []  # (role, call ids or the result's id, message id)
    for message in messages:
        if message["role"] == "tool":
            entries += [("tool", call_id, message["id"]) for call_id in _results(message)]
        else:
            entries.append((message["role"], _calls(message), message["id"]))
    unanswered: dict[str, str] = {}
    for e, (role, calls, message_id) in enumerate(entries):
        if role != "assistant":
            continue
        end = e + 1
        while end < len(entries) and entries[end][0] == "tool":
            end += 1
        answered = {entries[k][1] for k in range(e + 1, end)}
        if end < len(entries):
            unanswered |= {c: message_id for c in calls if c not in answered}
    return unanswered, set()


def _anthropic(messages: list[Mapping[str, Any]]) -> tuple[dict[str, str], set[str]]:
    late: set[str] = set()
    turns: list[tuple[str, list[tuple[str, str]]]] = []  # role, [(call id, message id)]
    for message in messages:
        role = message["role"]
        if role == "system":
            if turns:
                late.add(message["id"])
            continue
        kind = "assistant" if role == "assistant" else "user"
        items = [
            (c, message["id"])
            for c in (_calls(message) if role == "assistant" else _results(message))
        ]
        if turns and turns[-1][0] == kind:
            turns[-1][1].extend(items)
        else:
            turns.append((kind, items))
    unanswered: dict[str, str] = {}
    for t, (kind, items) in enumerate(turns):
        if kind != "assistant" or t + 1 >= len(turns) - 1:
            continue  # pending: no turn after it, or only the user turn so far
        answered = {c for c, _ in turns[t + 1][1]}
        unanswered |= {c: m for c, m in items if c not in answered}
    return unanswered, late


def _gemini(messages: list[Mapping[str, Any]]) -> tuple[dict[str, str], set[str]]:
    late: set[str] = set()
    contents: list[tuple[str, list[str], str]] = []  # kind, call/result ids, message id
    for message in messages:
        role = message["role"]
        if role == "system":
            if contents:
                late.add(message["id"])
            continue
        if role == "tool":
            if contents and contents[-1][0] == "responses":
                contents[-1][1].extend(_results(message))
            else:
                contents.append(("responses", _results(message), message["id"]))
        elif role == "user":
            contents.append(("user", [], message["id"]))
        else:
            contents.append(("model", _calls(message), message["id"]))
    unanswered: dict[str, str] = {}
    position: set[str] = set()
    for k, (kind, ids, message_id) in enumerate(contents):
        if kind != "model" or not ids:
            continue
        if k == 0 or contents[k - 1][0] not in ("user", "responses"):
            position.add(message_id)
        if k == len(contents) - 1:
            continue
        following = contents[k + 1]
        if following[0] == "responses" and k + 1 == len(contents) - 1:
            continue  # pending: the responses are the last content so far
        answered: set[str] = set(following[1]) if following[0] == "responses" else set()
        unanswered |= {c: message_id for c in ids if c not in answered}
    return unanswered, late | {f"position:{m}" for m in position}


_RULES = {"openai": _openai, "anthropic": _anthropic, "gemini": _gemini}


def reference_problems(history: History, provider: Provider | None) -> Found:
    """What the rules say, as (code, provider, tool call id, message id) tuples."""
    messages = cast("list[Mapping[str, Any]]", list(history.messages))
    general = _general(messages)
    found: Found = {("unanswered-tool-call", None, c, m) for c, m in general.items()}
    if provider is None:
        return found
    exported = [m for m in messages if not _streaming(m)]
    unanswered, others = _RULES[provider](exported)
    found |= {
        ("unanswered-tool-call", provider, c, m) for c, m in unanswered.items() if c not in general
    }
    for other in others:
        if other.startswith("position:"):
            found.add(("function-call-position", provider, None, other[len("position:") :]))
        else:
            found.add(("late-system-message", provider, None, other))
    return found


def found_by_check(report: Any) -> Found:
    return {(p.code, p.provider, p.tool_call_id, p.message_id) for p in report.problems}


# --- event logs -------------------------------------------------------------------------


@st.composite
def event_logs(draw: st.DrawFn, *, finish: bool = True) -> list[dict[str, object]]:
    """A valid event log of one answer (what a ChatStream accepts)."""
    events: list[dict[str, object]] = []
    if draw(st.booleans()):
        start: dict[str, object] = {"type": "start"}
        if draw(st.booleans()):
            start["messageMetadata"] = {"a": draw(json_values)}
        events.append(start)
    counter = 0
    for _ in range(draw(st.integers(1, 3))):
        stepped = draw(st.booleans())
        if stepped:
            events.append({"type": "start-step"})
        open_parts: list[tuple[str, str]] = []
        calls: list[str] = []  # calls of this step with their input, no output yet
        for _ in range(draw(st.integers(0, 8))):
            counter += 1
            choice = draw(st.integers(0, 10))
            if choice <= 1:
                kind = draw(st.sampled_from(["text", "reasoning"]))
                event: dict[str, object] = {"type": f"{kind}-start", "id": f"p{counter}"}
                if draw(st.booleans()):
                    event["providerMetadata"] = {"test": {"n": counter}}
                events.append(event)
                open_parts.append((kind, f"p{counter}"))
            elif choice <= 4 and open_parts:
                kind, part_id = draw(st.sampled_from(open_parts))
                events.append({"type": f"{kind}-delta", "id": part_id, "delta": draw(texts)})
            elif choice == 5 and open_parts:
                kind, part_id = open_parts.pop(draw(st.integers(0, len(open_parts) - 1)))
                end: dict[str, object] = {"type": f"{kind}-end", "id": part_id}
                if draw(st.booleans()):
                    end["providerMetadata"] = {"test": {"end": True}}
                events.append(end)
            elif choice == 6:
                call_id = f"c{counter}"
                name = draw(st.sampled_from(["search", "add"]))
                if draw(st.booleans()):
                    events.append(
                        {"type": "tool-input-start", "toolCallId": call_id, "toolName": name}
                    )
                    events.append(
                        {"type": "tool-input-delta", "toolCallId": call_id, "inputTextDelta": "{"}
                    )
                if draw(st.integers(0, 4)):
                    events.append(
                        {
                            "type": "tool-input-available",
                            "toolCallId": call_id,
                            "toolName": name,
                            "input": draw(json_values),
                        }
                    )
                    calls.append(call_id)
                else:
                    events.append(
                        {
                            "type": "tool-input-error",
                            "toolCallId": call_id,
                            "toolName": name,
                            "input": None,
                            "errorText": "bad",
                        }
                    )
            elif choice == 7 and calls:
                call_id = calls.pop(draw(st.integers(0, len(calls) - 1)))
                if draw(st.booleans()):
                    events.append(
                        {
                            "type": "tool-output-available",
                            "toolCallId": call_id,
                            "output": 0,
                            "preliminary": True,
                        }
                    )
                if draw(st.booleans()):
                    events.append(
                        {
                            "type": "tool-output-available",
                            "toolCallId": call_id,
                            "output": draw(json_values),
                        }
                    )
                else:
                    events.append(
                        {
                            "type": "tool-output-error",
                            "toolCallId": call_id,
                            "errorText": draw(texts),
                        }
                    )
            elif choice == 8:
                data: dict[str, object] = {"type": "data-note", "data": draw(json_values)}
                if draw(st.booleans()):
                    data["id"] = draw(st.sampled_from(["d1", "d2"]))
                if draw(st.integers(0, 3)) == 0:
                    data["transient"] = True
                events.append(data)
            elif choice == 9:
                events.append(
                    draw(
                        st.sampled_from(
                            [
                                {
                                    "type": "file",
                                    "url": "https://example.com/a.png",
                                    "mediaType": "image/png",
                                },
                                {
                                    "type": "source-url",
                                    "sourceId": "s1",
                                    "url": "https://example.com",
                                },
                                {
                                    "type": "source-document",
                                    "sourceId": "s2",
                                    "mediaType": "text/plain",
                                    "title": "T",
                                },
                            ]
                        )
                    )
                )
            else:
                events.append({"type": "message-metadata", "messageMetadata": {"m": counter}})
        for kind, part_id in open_parts:
            events.append({"type": f"{kind}-end", "id": part_id})
        if stepped:
            events.append({"type": "finish-step"})
    if finish:
        done: dict[str, object] = {
            "type": "finish",
            "finishReason": draw(st.sampled_from(["stop", "tool-calls"])),
        }
        if draw(st.booleans()):
            done["usage"] = {"inputTokens": draw(st.integers(0, 99)), "outputTokens": 3}
        if draw(st.booleans()):
            done["messageMetadata"] = {"z": 1}
        events.append(done)
    return events


def messages_of(history: History) -> list[Message]:
    return list(history.messages)


def view(history: History) -> Any:
    """The messages, untyped: tests read any part's fields."""
    return history.messages


__all__ = [
    "PROPERTY",
    "PROVIDERS",
    "START",
    "build_history",
    "event_logs",
    "found_by_check",
    "fresh",
    "json_values",
    "messages_of",
    "reference_problems",
    "texts",
    "two_call_messages_then_results",
    "view",
]
