"""The answer fold and the projection: incremental folding equals a full rebuild."""

from __future__ import annotations

from typing import Any, cast

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai_chat import LimitExceededError, ProtocolError, create_chat_stream
from ai_chat.adapters import ScriptedAdapter
from ai_chat.history import (
    AnswerFold,
    DuplicateIdError,
    History,
    Projection,
    bookkeeping,
    check,
    project,
)
from ai_chat.limits import JSONLimits
from tests.server.scripts import EVERY_EVENT

from .strategies import PROPERTY, START, event_logs, fresh, view


def seed() -> History:
    return fresh().append_user("Hello")


def projection(history: History | None = None) -> Projection:
    return Projection(seed() if history is None else history, message_id="answer", created_at=START)


def rebuild(events: list[dict[str, object]]) -> History:
    return project(seed(), events, message_id="answer", created_at=START)


@settings(PROPERTY, max_examples=200)
@given(event_logs(finish=False) | event_logs())
def test_folding_one_event_at_a_time_equals_a_rebuild_at_every_prefix(
    log: list[dict[str, object]],
) -> None:
    incremental = projection()
    assert incremental.snapshot() == rebuild([])
    for k, event in enumerate(log, start=1):
        incremental.apply([event])
        assert incremental.snapshot() == rebuild(log[:k]), k
        assert incremental.processed == k
    if log and log[-1]["type"] == "finish":
        assert incremental.state == "finished"
        assert check(incremental.snapshot()).ok


@settings(PROPERTY, max_examples=150)
@given(event_logs(), st.data())
def test_syncing_growing_logs_folds_only_the_tail_and_equals_a_rebuild(
    log: list[dict[str, object]], data: st.DataObject
) -> None:
    incremental = projection()
    cut = 0
    while cut < len(log):
        cut = data.draw(st.integers(cut + 1, len(log)))
        before = incremental.processed
        incremental.sync(log[:cut])
        assert incremental.processed == cut and before <= cut
        assert incremental.snapshot() == rebuild(log[:cut])
    # A reconnect with another log (or a log that does not extend this one) refolds.
    other: list[dict[str, object]] = [
        {"type": "text-start", "id": "x"},
        {"type": "text-delta", "id": "x", "delta": "other"},
    ]
    incremental.sync(other)
    assert incremental.snapshot() == rebuild(other) and incremental.processed == 2


def test_sync_compares_the_first_and_last_folded_events() -> None:
    log: list[dict[str, object]] = [
        {"type": "text-start", "id": "t"},
        {"type": "text-delta", "id": "t", "delta": "a"},
    ]
    incremental = projection()
    incremental.sync(log)
    # Fresh copies of the same events extend the log (equal by value by default).
    incremental.sync([dict(e) for e in log] + [{"type": "text-delta", "id": "t", "delta": "b"}])
    assert incremental.processed == 3
    assert view(incremental.snapshot())[-1]["parts"][0]["text"] == "ab"
    # A log whose last folded event differs is another log: refolded from the seed.
    changed = [log[0], {"type": "text-delta", "id": "t", "delta": "X"}, log[1]]
    incremental.sync(changed)
    assert incremental.processed == 3
    assert view(incremental.snapshot())[-1]["parts"][0]["text"] == "Xa"
    # With identify, events equal by identity count as the same.
    by_kind = projection()
    by_kind.sync(log, identify=lambda event: cast(Any, event)["type"])
    by_kind.sync(
        [log[0], {"type": "text-delta", "id": "t", "delta": "z"}, log[1]],
        identify=lambda event: cast(Any, event)["type"],
    )
    assert view(by_kind.snapshot())[-1]["parts"][0]["text"] == "aa"  # only the tail was folded
    shorter = projection()
    shorter.sync(log)
    shorter.sync(log[:1])
    assert shorter.processed == 1 and shorter.snapshot() == rebuild(log[:1])


def test_a_snapshot_while_streaming_is_marked_and_never_sent() -> None:
    incremental = projection()
    incremental.apply(
        [
            {"type": "start", "messageMetadata": {"model": "m"}},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "Hel"},
        ]
    )
    snapshot = incremental.snapshot()
    answer = view(snapshot)[-1]
    assert answer["id"] == "answer" and answer["parts"][0]["text"] == "Hel"
    assert bookkeeping(answer).streaming and bookkeeping(answer).created_at == START
    assert answer["metadata"]["model"] == "m"
    assert snapshot.request_messages() == seed().messages
    assert incremental.snapshot() is snapshot  # kept until the next event


def test_finish_records_usage_reason_and_sources_and_late_events_change_nothing() -> None:
    incremental = projection()
    incremental.apply(EVERY_EVENT)
    done = incremental.snapshot()
    assert incremental.state == "finished"
    assert [m["id"] for m in view(done)[1:]] == ["answer", "answer:tool", "answer:1"]
    first = bookkeeping(view(done)[1])
    assert first.finish_reason == "stop" and not first.streaming
    assert [s["type"] for s in first.sources] == ["source-url", "source-document"]
    assert not any(bookkeeping(m).streaming for m in done.messages)
    assert check(done, provider="all").ok
    incremental.apply([{"type": "text-delta", "id": "t1", "delta": "late"}])
    assert incremental.snapshot() is done and incremental.fold.ignored == 1


def test_finalize_keeps_the_partial_answer_and_cancel_drops_it() -> None:
    start = [
        {"type": "text-start", "id": "t"},
        {"type": "text-delta", "id": "t", "delta": "partial"},
    ]
    stopped = projection()
    stopped.apply(start)
    stopped.finalize()
    kept = stopped.snapshot()
    assert (
        view(kept)[-1]["parts"][0]["text"] == "partial"
        and not bookkeeping(view(kept)[-1]).streaming
    )
    stopped.apply([{"type": "text-delta", "id": "t", "delta": " more"}])
    assert stopped.snapshot() == kept and stopped.state == "finalized"
    stopped.finalize()
    cancelled = projection()
    cancelled.apply(start)
    cancelled.cancel()
    assert cancelled.snapshot() == seed() and cancelled.state == "cancelled"
    cancelled.apply(start)
    assert cancelled.snapshot() == seed()
    cancelled.reset()
    cancelled.apply(start)
    assert view(cancelled.snapshot())[-1]["parts"][0]["text"] == "partial"


def test_the_answer_id_comes_from_start_or_the_env() -> None:
    by_start = Projection(seed(), created_at=START)
    by_start.apply(
        [
            {"type": "start", "messageId": "from-start"},
            {"type": "text-start", "id": "t"},
            {"type": "text-end", "id": "t"},
        ]
    )
    assert view(by_start.snapshot())[-1]["id"] == "from-start"
    generated = Projection(seed())
    generated.apply([{"type": "text-start", "id": "t"}])
    assert view(generated.snapshot())[-1]["id"] == generated.message_id
    clash = Projection(seed(), message_id=view(seed())[0]["id"])
    clash.apply([{"type": "text-start", "id": "t"}])
    with pytest.raises(DuplicateIdError):
        clash.snapshot()


@pytest.mark.parametrize(
    ("events", "index"),
    [
        ([{"type": "text-delta", "id": "never", "delta": "x"}], 0),
        ([{"type": "text-start", "id": "t"}, {"type": "nonsense"}], 1),
        ([{"type": "text-start", "id": "t"}, {"type": "text-delta", "id": "t", "delta": 5}], 1),
        ([{"type": "tool-output-available", "toolCallId": "c", "output": 1}], 0),
        ([{"type": "data-x", "data": {1, 2}}], 0),
        (["not an event"], 0),
    ],
)
def test_a_bad_event_is_a_protocol_error_naming_it(events: list[Any], index: int) -> None:
    incremental = projection()
    with pytest.raises(ProtocolError) as caught:
        incremental.apply(events)
    assert caught.value.event_index == index


def test_the_answer_is_bounded() -> None:
    fold = AnswerFold(max_chars=1_000)
    fold.feed({"type": "text-start", "id": "t"})
    with pytest.raises(LimitExceededError):
        for _ in range(100):
            fold.feed({"type": "text-delta", "id": "t", "delta": "x" * 50})
    with pytest.raises(LimitExceededError):
        AnswerFold(limits=JSONLimits(max_chars=100)).feed({"type": "data-x", "data": "y" * 200})


def test_the_fold_builds_steps_tool_messages_and_metadata() -> None:
    fold = AnswerFold(first_step=2)
    fold.feed_all(EVERY_EVENT)
    messages = fold.messages("m", {"aiChat": {"parentId": "u"}})
    assert [m["id"] for m in messages] == ["m:2", "m:tool:2", "m:3"]
    assert cast(Any, messages[0])["metadata"]["aiChat"] == {"parentId": "u"}
    assert fold.finished and fold.finish_reason == "stop" and fold.events == len(EVERY_EVENT)
    assert fold.metadata["model"] == "scripted-2"  # finish's metadata came last
    results: Any = messages[1]["parts"]
    assert [(r["toolCallId"], r.get("isError", False)) for r in results] == [
        ("c1", False),
        ("c2", True),
        ("c3", True),
        ("c4", False),
    ]
    open_fold = AnswerFold()
    open_fold.feed_all(
        [
            {"type": "tool-input-start", "toolCallId": "c", "toolName": "t"},
            {"type": "text-start", "id": "x"},
        ]
    )
    assert open_fold.messages("m") == ()
    (partial,) = open_fold.messages("m", partial=True)
    assert partial["parts"] == (
        {"type": "tool-call", "toolCallId": "c", "toolName": "t", "input": None},
        {"type": "text", "text": ""},
    )


@pytest.mark.anyio
async def test_a_chat_stream_folds_into_the_history() -> None:
    history = seed()
    incremental = Projection(history, checked=True)
    stream = create_chat_stream(ScriptedAdapter(), {"messages": history.request_messages()})
    seen = 0
    with anyio.fail_after(30):
        async with stream:
            async for event in stream:
                incremental.apply([event])
                seen += 1
                if seen == 5:
                    assert bookkeeping(view(incremental.snapshot())[-1]).streaming
    final = incremental.snapshot()
    assert incremental.state == "finished"
    answer = view(final)[-1]
    assert answer["role"] == "assistant" and not bookkeeping(answer).streaming
    assert [p["type"] for p in answer["parts"]] == ["reasoning", "text", "tool-call"]
    assert bookkeeping(answer).usage is not None
    assert [c["toolName"] for c in final.pending_tool_calls()] == ["search"]
    assert check(final, provider="all").ok


def test_after_a_bad_event_the_log_stays_broken_until_a_reset() -> None:
    incremental = projection()
    good = [{"type": "text-start", "id": "t"}, {"type": "text-delta", "id": "t", "delta": "ok"}]
    bad = {"type": "text-delta", "id": "unknown", "delta": "x"}
    with pytest.raises(ProtocolError) as first:
        incremental.apply([*good, bad])
    assert first.value.event_index == 2 and incremental.processed == 2
    assert view(incremental.snapshot())[-1]["parts"][0]["text"] == "ok"
    with pytest.raises(ProtocolError) as again:
        incremental.sync([*good, bad, {"type": "text-end", "id": "t"}])
    assert again.value is first.value
    with pytest.raises(ProtocolError):  # it extends what was folded: still broken
        incremental.sync([*good, {"type": "text-end", "id": "t"}])
    incremental.reset()
    incremental.sync([*good, {"type": "text-end", "id": "t"}])
    assert incremental.processed == 3
