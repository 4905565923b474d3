"""fit_to_tokens: the oldest whole turns dropped, what must be kept kept, never a history
that check flags, never over budget; against a naive reference on random histories."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ai_chat import ConfigurationError
from ai_chat.history import (
    ContextOverflowError,
    HeuristicEstimator,
    History,
    IntegrityError,
    afit_to_tokens,
    check,
    estimate_tokens,
    fit_to_tokens,
)
from ai_chat.history._sequence import Seq
from ai_chat.types import Message

from .strategies import PROPERTY, build_history, fresh


class Fixed:
    """Every message costs its ``tokens`` metadata, or 10: budgets a test can reason about."""

    def __init__(self) -> None:
        self.calls = 0

    def count(self, messages: Sequence[Message], /) -> list[int]:
        self.calls += 1
        return [10 + 5 * len(m["parts"]) for m in messages]


class AsyncFixed:
    async def count(self, messages: Sequence[Message], /) -> list[int]:
        return Fixed().count(messages)


def streaming(message: Any) -> bool:
    return message.get("metadata", {}).get("aiChat", {}).get("streaming") is True


def reference_fit(
    history: History, counts: list[int], max_tokens: int, keep_system: bool, keep_last: int
) -> int | None:
    """The cut the rules ask for, the slow obvious way: the earliest position that is
    the start of a turn (a user message no tool pair straddles, or 0 or the end), keeps
    what must be kept, and fits; ``None`` when none does."""
    messages: Any = history.messages
    size = len(messages)
    tokens = [0 if streaming(m) else c for m, c in zip(messages, counts, strict=True)]
    result_at = {
        p["toolCallId"]: i
        for i, m in enumerate(messages)
        for p in m["parts"]
        if p["type"] == "tool-result"
    }
    must = [i for i, m in enumerate(messages) if streaming(m)]
    must += list(range(max(0, size - keep_last), size))
    for cut in range(size + 1):
        if must and cut > min(must):
            return None
        if 0 < cut < size:
            if messages[cut]["role"] != "user":
                continue
            straddled = any(
                p["type"] == "tool-call" and result_at.get(p["toolCallId"], -1) >= cut
                for m in messages[:cut]
                for p in m["parts"]
            )
            if straddled:
                continue
        kept = sum(
            tokens[i]
            for i in range(size)
            if i >= cut or (keep_system and messages[i]["role"] == "system")
        )
        if kept <= max_tokens:
            return cut
    return None


@PROPERTY
@given(st.data(), st.integers(0, 300), st.booleans(), st.integers(0, 4))
def test_fit_matches_the_reference(
    data: st.DataObject, max_tokens: int, keep_system: bool, keep_last: int
) -> None:
    history = build_history(data, well_behaved=True)
    counts = Fixed().count(history.messages)
    expected = reference_fit(history, counts, max_tokens, keep_system, keep_last)
    if expected is None:
        with pytest.raises(ContextOverflowError) as caught:
            fit_to_tokens(
                history, max_tokens, keep_system=keep_system, keep_last=keep_last, estimator=Fixed()
            )
        assert caught.value.max_tokens == max_tokens and caught.value.required > max_tokens
        return
    fitted, report = fit_to_tokens(
        history, max_tokens, keep_system=keep_system, keep_last=keep_last, estimator=Fixed()
    )
    messages = history.messages
    kept = [
        m
        for i, m in enumerate(messages)
        if i >= expected or (keep_system and m["role"] == "system")
    ]
    assert list(fitted.messages) == kept
    assert report.dropped == tuple(m["id"] for m in messages if m not in kept)
    assert report.tokens_after == estimate_tokens(fitted, estimator=Fixed()) <= max_tokens
    assert report.tokens_before == estimate_tokens(history, estimator=Fixed())
    assert check(fitted, provider="all").ok
    if expected == 0:
        assert fitted is history


@PROPERTY
@given(st.data(), st.integers(0, 300), st.booleans(), st.integers(0, 3))
def test_fit_never_returns_a_flagged_history(
    data: st.DataObject, max_tokens: int, keep_system: bool, keep_last: int
) -> None:
    history = build_history(data, well_behaved=False)
    try:
        fitted, report = fit_to_tokens(
            history, max_tokens, keep_system=keep_system, keep_last=keep_last, estimator=Fixed()
        )
    except (ContextOverflowError, IntegrityError):
        return
    assert check(fitted, provider="all").ok
    assert report.tokens_after <= max_tokens
    assert not any(streaming(m) for m in history.messages if m["id"] in report.dropped)
    assert [m["id"] for m in fitted.messages[len(fitted) - min(keep_last, len(history)) :]] == [
        m["id"] for m in history.messages[len(history) - min(keep_last, len(history)) :]
    ]


def plain_text(message: Message) -> str:
    part: Any = message["parts"][0]
    return part["text"]


def conversation(turns: int) -> History:
    history = fresh().append_system("Be brief.")
    for turn in range(turns):
        history = history.append_user(f"question {turn}")
        calls = [{"toolCallId": f"c{turn}", "toolName": "lookup", "input": {"n": turn}}]
        history = history.append_assistant("looking", tool_calls=calls)
        history = history.append_tool_result(f"c{turn}", {"n": turn})
        history = history.append_assistant(f"answer {turn}")
    return history


def test_whole_turns_go_oldest_first_and_the_system_message_stays() -> None:
    history = conversation(4)
    per_turn = sum(Fixed().count(history.messages[1:5]))
    system = Fixed().count(history.messages[:1])[0]
    fitted, report = fit_to_tokens(history, system + 2 * per_turn, estimator=Fixed())
    assert [m["role"] for m in fitted.messages] == [
        "system",
        *["user", "assistant", "tool", "assistant"] * 2,
    ]
    assert plain_text(fitted.messages[1]) == "question 2"
    assert report.dropped == tuple(m["id"] for m in history.messages[1:9])
    assert (report.tokens_before, report.tokens_after) == (
        system + 4 * per_turn,
        system + 2 * per_turn,
    )
    assert history.messages[1]["id"] not in {m["id"] for m in fitted.messages}
    assert fitted.id == history.id and len(history) == 17  # the input is unchanged


def test_a_history_that_fits_comes_back_as_itself() -> None:
    history = conversation(2)
    fitted, report = fit_to_tokens(history, 10_000)
    assert fitted is history and report.dropped == ()


def test_what_must_be_kept_that_does_not_fit_is_an_error() -> None:
    history = conversation(3)
    with pytest.raises(ContextOverflowError, match="the last 2 messages") as caught:
        fit_to_tokens(history, 30, keep_last=2, estimator=Fixed())
    assert caught.value.required == sum(Fixed().count(history.messages[:1])) + sum(
        Fixed().count(history.messages[-4:])
    )


def test_a_streaming_message_is_never_dropped_and_counts_nothing() -> None:
    history, message_id = (
        conversation(3)
        .append_user("more?")
        .start_streaming(parts=[{"type": "text", "text": "Stream" * 1000}])
    )
    fitted, report = fit_to_tokens(history, 100, estimator=HeuristicEstimator())
    assert fitted.messages[-1]["id"] == message_id and message_id not in report.dropped
    assert report.tokens_after == estimate_tokens(fitted) <= 100


def test_a_tool_pair_across_a_user_message_keeps_its_turns_together() -> None:
    history = fresh().append_user("one")
    history = history.append_assistant(
        tool_calls=[{"toolCallId": "c", "toolName": "f", "input": {}}]
    )
    history = history.append_user("interrupting").append_tool_result("c", 1)
    history = history.append_assistant("done").append_user("two").append_assistant("ok")
    fitted, report = fit_to_tokens(history, 60, estimator=Fixed(), provider=None)
    assert [m["role"] for m in fitted.messages] == ["user", "assistant"]  # "two", "ok"
    assert len(report.dropped) == 5  # not cut between the call and its result


def test_a_flagged_history_is_refused_rather_than_returned() -> None:
    history = fresh().append_user("a").append_assistant("b").append_user("c")
    history = history.append_system("a late system message").append_user("d")
    fitted, _ = fit_to_tokens(history, 45, estimator=Fixed(), keep_system=False, provider="openai")
    assert [m["role"] for m in fitted.messages] == ["user", "system", "user"]
    with pytest.raises(IntegrityError, match="system instructions only before"):
        fit_to_tokens(history, 45, keep_system=False, estimator=Fixed())


@pytest.mark.parametrize(
    ("options", "parameter"),
    [
        ({"max_tokens": -1}, "max_tokens"),
        ({"max_tokens": 1.5}, "max_tokens"),
        ({"max_tokens": 10, "keep_last": -1}, "keep_last"),
    ],
)
def test_bad_arguments(options: dict[str, Any], parameter: str) -> None:
    history = conversation(3)
    with pytest.raises(ConfigurationError) as caught:
        fit_to_tokens(history, **options)
    assert caught.value.parameter == parameter


class Liar:
    def __init__(self, counts: list[Any]) -> None:
        self.counts = counts

    def count(self, messages: Sequence[Message], /) -> list[Any]:
        return self.counts


@pytest.mark.parametrize("counts", [[], [1], [-1] * 17, ["1"] * 17, [1.0] * 17])
def test_an_estimator_that_does_not_give_one_count_per_message(counts: list[Any]) -> None:
    with pytest.raises(ConfigurationError) as caught:
        fit_to_tokens(conversation(4), 10, estimator=Liar(counts))
    assert caught.value.parameter == "estimator"


@pytest.mark.anyio
async def test_an_async_estimator() -> None:
    history = conversation(4)
    fitted, report = fit_to_tokens(history, 100, estimator=Fixed())
    async_fitted, async_report = await afit_to_tokens(history, 100, estimator=AsyncFixed())
    assert (async_fitted.messages, async_report) == (fitted.messages, report)


def test_estimates_are_cached_per_message() -> None:
    class Counting(HeuristicEstimator):
        def __init__(self) -> None:
            super().__init__()
            self.seen = 0

        def message(self, message: Message) -> int:
            self.seen += 1
            return super().message(message)

    estimator = Counting()
    history = conversation(10)
    fit_to_tokens(history, 200, estimator=estimator)
    fit_to_tokens(history.append_user("again"), 200, estimator=estimator)
    assert estimator.seen == len(history) + 1  # each message counted once


@PROPERTY
@given(st.data(), st.integers(0, 200), st.integers(0, 30))
def test_a_cut_history_indexes_its_messages_as_a_rebuilt_one_would(
    data: st.DataObject, max_tokens: int, position: int
) -> None:
    history = build_history(data, well_behaved=False)
    try:
        fitted, _ = fit_to_tokens(history, max_tokens, estimator=Fixed(), provider=None)
    except ContextOverflowError:
        fitted = history
    for cut in (fitted, history.truncate_from_position(position)):
        seq: Any = cut._seq  # pyright: ignore[reportPrivateUsage]
        rebuilt = Seq.of(cut.messages)
        assert seq.tool_pairs() == rebuilt.tool_pairs()
        assert seq.streaming_positions() == rebuilt.streaming_positions()
        for index, message in enumerate(cut.messages):
            assert cut.position(message["id"]) == index
        for call in cut.pending_tool_calls():  # the kept calls can still be answered
            answered = cut.append_tool_result(call["toolCallId"], "late")
            last: Any = answered.messages[-1]["parts"][0]
            assert last["toolCallId"] == call["toolCallId"]
