"""compact: the oldest turns summarized by the caller's summarizer, safely."""

from __future__ import annotations

import copy
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ai_chat import ConfigurationError
from ai_chat.history import History, bookkeeping, check, compact, is_summary
from ai_chat.types import Message

from .strategies import PROPERTY, build_history, fresh

pytestmark = pytest.mark.anyio


def conversation(turns: int) -> History:
    history = fresh().append_system("Be brief.")
    for turn in range(turns):
        history = history.append_user(f"question {turn}")
        calls = [{"toolCallId": f"c{turn}", "toolName": "lookup", "input": {"n": turn}}]
        history = history.append_assistant("looking", tool_calls=calls)
        history = history.append_tool_result(f"c{turn}", {"n": turn})
        history = history.append_assistant(f"answer {turn}")
    return history


def text_of(message: Message) -> str:
    part: Any = message["parts"][0]
    return part["text"]


def tool_ids(messages: tuple[Message, ...]) -> set[str]:
    parts: list[Any] = [p for m in messages for p in m["parts"]]
    return {p["toolCallId"] for p in parts if "toolCallId" in p}


class Summarizer:
    def __init__(self, text: Any = "the summary") -> None:
        self.text = text
        self.seen: list[tuple[Message, ...]] = []

    async def __call__(self, messages: tuple[Message, ...]) -> str:
        self.seen.append(messages)
        return self.text


async def test_the_oldest_turns_become_one_tagged_summary() -> None:
    history = conversation(4)
    summarize = Summarizer()
    result = await compact(history, summarize, keep_last=6)
    # The last 6 messages start inside turn 2: turns 2 and 3 are kept whole.
    [seen] = summarize.seen
    assert [m["id"] for m in seen] == [m["id"] for m in history.messages[1:9]]
    assert result.compacted and result.summarized == tuple(m["id"] for m in seen)
    messages = result.history.messages
    assert messages[0] == history.messages[0]
    summary = messages[1]
    assert result.summary == summary and is_summary(summary)
    assert summary["role"] == "system" and summary["parts"] == (
        {"type": "text", "text": "the summary"},
    )
    assert bookkeeping(summary).created_at is not None
    assert messages[2:] == history.messages[9:]
    assert check(result.history, provider="all").ok


async def test_system_messages_and_earlier_summaries_are_never_summarized() -> None:
    first = (await compact(conversation(4), Summarizer("first"), keep_last=4)).history
    longer = first.append_user("next").append_assistant("sure").append_system("late rule")
    longer = longer.append_user("last").append_assistant("done")
    summarize = Summarizer("second")
    second = await compact(longer, summarize, keep_last=2)
    assert all(m["role"] != "system" for m in summarize.seen[0])
    texts = [text_of(m) for m in second.history.messages if m["role"] == "system"]
    assert texts == ["Be brief.", "first", "second", "late rule"]
    assert sum(is_summary(m) for m in second.history.messages) == 2


async def test_nothing_to_summarize_calls_nothing() -> None:
    history = conversation(2)
    summarize = Summarizer()
    result = await compact(history, summarize, keep_last=100)
    assert result.history is history and not result.compacted and summarize.seen == []


async def test_a_streaming_message_and_what_follows_it_are_kept() -> None:
    history, live = conversation(3).append_user("more").start_streaming()
    summarize = Summarizer()
    result = await compact(history, summarize, keep_last=0)
    assert all(m["id"] != live for m in summarize.seen[0])
    assert result.history.messages[-2:] == history.messages[-2:]


async def test_a_failing_summarizer_leaves_the_history_as_it_was() -> None:
    history = conversation(3)
    before = copy.deepcopy(history.to_json())

    async def failing(messages: tuple[Message, ...]) -> str:
        raise RuntimeError("model down")

    with pytest.raises(RuntimeError, match="model down"):
        await compact(history, failing, keep_last=2)
    assert history.to_json() == before


async def test_a_cancelled_summarizer_leaves_the_history_as_it_was() -> None:
    history = conversation(3)
    before = copy.deepcopy(history.to_json())
    started = anyio.Event()

    async def slow(messages: tuple[Message, ...]) -> str:
        started.set()
        await anyio.sleep_forever()
        raise AssertionError("not reached")

    results: list[object] = []
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:

            async def run() -> None:
                results.append(await compact(history, slow, keep_last=2))

            group.start_soon(run)
            await started.wait()
            group.cancel_scope.cancel()
    assert results == [] and history.to_json() == before


@pytest.mark.parametrize("text", ["", 42, None])
async def test_a_summary_must_be_text(text: Any) -> None:
    with pytest.raises(ConfigurationError) as caught:
        await compact(conversation(3), Summarizer(text), keep_last=2)
    assert caught.value.parameter == "summarize()"


async def test_a_bad_keep_last() -> None:
    with pytest.raises(ConfigurationError):
        await compact(conversation(3), Summarizer(), keep_last=-1)


@PROPERTY
@given(st.data(), st.integers(0, 6))
def test_tool_pairs_are_never_split(data: st.DataObject, keep_last: int) -> None:
    history = build_history(data, well_behaved=True)
    summarize = Summarizer()
    result = anyio.run(lambda: compact(history, summarize, keep_last=keep_last))
    assert check(result.history, provider="all").ok
    if summarize.seen:
        assert tool_ids(summarize.seen[0]) & tool_ids(result.history.messages) == set()
