"""A server's ``retry:`` of thousands of digits, through the adapter's real HTTP path.

``int()`` of over 4,300 digits raises ``ValueError``; the decoder used to call it, so any
server could end a stream with ``AdapterError(cause=ValueError)`` (issue 22, point 3).
"""

from __future__ import annotations

import pytest

from .wire import plain, run, text_answer

pytestmark = pytest.mark.anyio


async def test_a_retry_of_five_thousand_digits_does_not_break_the_stream() -> None:
    steps = [b"retry: " + b"9" * 5_000 + b"\n\n", *text_answer("Hi")]
    events = plain(await run(steps))
    assert [e["type"] for e in events][-1] == "finish"
    assert {"type": "text-delta", "id": "t1", "delta": "Hi"} in events
