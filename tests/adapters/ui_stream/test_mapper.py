"""The sans-IO chunk mapper on its own: the inline fast path agrees with the general one."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai_chat import ProviderError, RemoteStreamError, TruncatedStreamError
from ai_chat.adapters.ui_stream._events import PASSED_THROUGH, UNSUPPORTED, UIChunkMapper
from ai_chat.sse import SSEEvent

KINDS = [*sorted(PASSED_THROUGH | set(UNSUPPORTED)), "finish", "error", "abort", "data-x", "x"]
FIELDS = ["id", "delta", "errorText", "finishReason", "data", "messageMetadata"]


def _containers(inner: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    return st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    )


def _chunk(kind: str, fields: dict[str, object]) -> dict[str, object]:
    return {"type": kind, **fields}


def _padded(chunk: dict[str, object]) -> str:
    return " " + json.dumps(chunk) + " "


json_values: st.SearchStrategy[object] = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5)),
    _containers,
    max_leaves=8,
)
chunks: st.SearchStrategy[dict[str, object]] = st.builds(
    _chunk,
    st.sampled_from(KINDS),
    st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=3),
)
datas: st.SearchStrategy[str] = st.one_of(
    chunks.map(json.dumps),
    chunks.map(_padded),
    st.just("[DONE]"),
    st.text(max_size=20),
    json_values.map(json.dumps),
)


def outcome(run: Any) -> tuple[str, object]:
    try:
        return "ok", run()
    except (ProviderError, TruncatedStreamError, RemoteStreamError) as exc:
        return type(exc).__name__, str(exc)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(datas, max_size=6))
def test_feed_events_is_feed_for_each(data: list[str]) -> None:
    one, many = UIChunkMapper(), UIChunkMapper()

    def each() -> list[object]:
        return [e for d in data if (e := one.feed(d)) is not None]

    assert outcome(lambda: many.feed_events([SSEEvent(d) for d in data])) == outcome(each)
    assert (one.done, one.finished, one.sse_events) == (many.done, many.finished, many.sse_events)


def test_the_end_checks() -> None:
    mapper = UIChunkMapper("req-1")
    with pytest.raises(TruncatedStreamError) as caught:
        mapper.end()
    assert caught.value.request_id == "req-1" and "without a finish chunk" in caught.value.detail
    assert mapper.feed('{"type":"finish","finishReason":"stop"}') == {
        "type": "finish",
        "finishReason": "stop",
    }
    assert mapper.feed("[DONE]") is None
    mapper.end()
