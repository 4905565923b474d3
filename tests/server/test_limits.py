"""Answer limits per subject: the pure limiter over an injected clock, and the server's
429 answers over real uvicorn on loopback (the window moved by the clock, never by sleeping)."""

from __future__ import annotations

import json
import secrets
import threading
from collections import Counter
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.to_thread
import httpx
import pytest

from ai_chat import AbortSignal, ConfigurationError
from ai_chat.server import (
    AnswerLimiter,
    AnswerLimits,
    LimitRefusal,
    MemoryAnswerLimiter,
    create_chat_app,
)
from ai_chat.store import MemoryConversationStore
from ai_chat.types import ChatRequest

from .harness import HANG_GUARD, running, sse_chunks

pytestmark = pytest.mark.anyio


@dataclass
class Clock:
    """Seconds that move only when the test says so (read from the server's thread)."""

    now: float = 1000.0

    def __call__(self) -> float:
        return self.now


# --------------------------------------------------------------------------------------
# The limiter alone
# --------------------------------------------------------------------------------------


async def test_the_window_slides_with_the_clock() -> None:
    clock = Clock(0.0)
    limiter = MemoryAnswerLimiter(AnswerLimits(concurrent=None, per_minute=3), clock=clock)
    for at in (0.0, 10.0, 20.0):
        clock.now = at
        assert await limiter.acquire("a") is None
        await limiter.release("a")
    clock.now = 30.0
    assert await limiter.acquire("a") == LimitRefusal("per_minute", 3, 30.0)
    assert await limiter.acquire("b") is None  # another key has its own window
    clock.now = 59.5
    refusal = await limiter.acquire("a")
    assert refusal is not None and refusal.retry_after == 1.0  # at least a second
    clock.now = 60.0  # the first start has left the window
    assert await limiter.acquire("a") is None
    assert await limiter.acquire("a") == LimitRefusal("per_minute", 3, 10.0)
    clock.now = 80.0
    assert await limiter.acquire("a") is None


async def test_concurrent_answers_are_counted_until_released() -> None:
    limiter = MemoryAnswerLimiter(AnswerLimits(concurrent=2, per_minute=None), clock=Clock())
    assert await limiter.acquire("a") is None
    assert await limiter.acquire("a") is None
    assert await limiter.acquire("a") == LimitRefusal("concurrent", 2, 1.0)
    await limiter.release("a")
    assert await limiter.acquire("a") is None
    # A release without an acquire (a bug elsewhere) never makes room that is not there.
    await limiter.release("unknown")
    for _ in range(2):
        await limiter.release("a")
    await limiter.release("a")
    assert await limiter.acquire("a") is None
    assert await limiter.acquire("a") is None
    assert await limiter.acquire("a") is not None


async def test_a_refused_answer_is_not_counted() -> None:
    clock = Clock(0.0)
    limiter = MemoryAnswerLimiter(AnswerLimits(concurrent=1, per_minute=2), clock=clock)
    assert await limiter.acquire("a") is None
    for _ in range(5):
        assert await limiter.acquire("a") == LimitRefusal("concurrent", 1, 1.0)
    await limiter.release("a")
    assert await limiter.acquire("a") is None  # the second start: the refusals took none
    await limiter.release("a")
    assert await limiter.acquire("a") == LimitRefusal("per_minute", 2, 60.0)


async def test_many_keys_are_forgotten_once_idle() -> None:
    clock = Clock(0.0)
    limiter = MemoryAnswerLimiter(AnswerLimits(concurrent=1, per_minute=1), clock=clock)
    for n in range(1000):
        assert await limiter.acquire(f"k{n}") is None
        await limiter.release(f"k{n}")
    clock.now = 61.0
    # Past the window every key starts afresh (and the sweep dropped the idle ones).
    assert await limiter.acquire("k0") is None
    assert await limiter.acquire("k999") is None
    assert await limiter.acquire("k0") is not None


@pytest.mark.parametrize("value", [0, -1, True, 1.5, "3"])
def test_limits_must_be_positive_ints(value: object) -> None:
    with pytest.raises(ConfigurationError, match="positive int"):
        AnswerLimits(concurrent=value)  # pyright: ignore[reportArgumentType]
    with pytest.raises(ConfigurationError, match="positive int"):
        AnswerLimits(per_minute=value)  # pyright: ignore[reportArgumentType]


def test_the_documented_defaults() -> None:
    assert AnswerLimits() == AnswerLimits(concurrent=4, per_minute=30)
    assert MemoryAnswerLimiter().limits == AnswerLimits()


# --------------------------------------------------------------------------------------
# Over the wire
# --------------------------------------------------------------------------------------


class Gated:
    """Answers at once, or, for the text "hold", waits until ``go`` is set.

    Counts the answers it started; ``holding`` is set while one waits.
    """

    def __init__(self) -> None:
        self.started = 0
        self.holding = threading.Event()
        self.go = threading.Event()

    async def stream(
        self, request: ChatRequest, signal: AbortSignal
    ) -> AsyncIterator[Mapping[str, object]]:
        self.started += 1
        said = request["messages"][-1]["parts"][0].get("text")
        yield {"type": "start"}
        yield {"type": "text-start", "id": "t"}
        yield {"type": "text-delta", "id": "t", "delta": "ok"}
        if said == "hold":
            self.holding.set()
            # Abandoned on cancel: a client that leaves ends the answer at once.
            await anyio.to_thread.run_sync(self.go.wait, HANG_GUARD, abandon_on_cancel=True)
        if said == "fail":
            raise RuntimeError("the provider failed")
        yield {"type": "text-end", "id": "t"}
        yield {"type": "finish", "finishReason": "stop"}


class Watched(MemoryAnswerLimiter):
    """The memory limiter, telling the test (across threads) each time a slot is released."""

    def __init__(self, limits: AnswerLimits, clock: Clock) -> None:
        super().__init__(limits, clock=clock)
        self.released = threading.Semaphore(0)

    async def release(self, key: str) -> None:
        await super().release(key)
        self.released.release()

    async def wait_released(self) -> None:
        assert await anyio.to_thread.run_sync(self.released.acquire, True, HANG_GUARD)


@dataclass
class Served:
    url: str
    adapter: Gated
    store: MemoryConversationStore
    clock: Clock = field(default_factory=Clock)


@contextmanager
def serving(limiter: AnswerLimiter | AnswerLimits | None, clock: Clock) -> Generator[Served]:
    adapter = Gated()
    store = MemoryConversationStore()
    app = create_chat_app(adapter, store=store, answer_limits=limiter)
    with running(app) as url:
        yield Served(url, adapter, store, clock)


def body(chat_id: str, text: str = "Hello") -> str:
    message = {"id": f"{chat_id}-u", "role": "user", "parts": [{"type": "text", "text": text}]}
    return json.dumps({"id": chat_id, "messages": [message], "trigger": "submit-message"})


def headers_for(url: str) -> dict[str, str]:
    return {"origin": url, "sec-fetch-site": "same-origin", "content-type": "application/json"}


async def ask(client: httpx.AsyncClient, served: Served, text: str = "Hello") -> httpx.Response:
    chat_id = f"chat-{secrets.token_hex(4)}"
    with anyio.fail_after(HANG_GUARD):
        return await client.post(
            served.url + "/api/chat", content=body(chat_id, text), headers=headers_for(served.url)
        )


@asynccontextmanager
async def browser(served: Served) -> AsyncGenerator[httpx.AsyncClient]:
    """A client with a cookie jar that loaded the page (and so got its visitor cookie)."""
    async with httpx.AsyncClient() as client:
        with anyio.fail_after(HANG_GUARD):
            assert (await client.get(served.url + "/")).status_code == 200
        yield client


def assert_limited(response: httpx.Response, limit: str, retry_after: str) -> None:
    assert response.status_code == 429, response.text
    assert response.headers["content-type"] == "application/json"
    assert response.headers["retry-after"] == retry_after
    error = response.json()["error"]
    assert error["type"] == "rate_limited" and error["limit"] == limit
    assert f"retry in {retry_after} s" in error["message"]


async def test_past_the_per_minute_limit_429_until_the_window_moves_on() -> None:
    clock = Clock()
    limiter = MemoryAnswerLimiter(AnswerLimits(concurrent=None, per_minute=3), clock=clock)
    with serving(limiter, clock) as served:
        async with browser(served) as alice, browser(served) as bob:
            for _ in range(3):
                assert (await ask(alice, served)).status_code == 200
            refused = await ask(alice, served)
            assert_limited(refused, "per_minute", "60")
            assert served.adapter.started == 3
            # Nothing of the refused request was stored: only the three chats exist.
            listed = (await alice.get(served.url + "/api/chats")).json()["chats"]
            assert len(listed) == 3
            # Another visitor is not starved by alice.
            assert (await ask(bob, served)).status_code == 200
            clock.now += 30
            assert_limited(await ask(alice, served), "per_minute", "30")
            clock.now += 30  # a minute after the first answer: it left the window
            answer = await ask(alice, served)
            assert answer.status_code == 200
            assert sse_chunks(answer.text)[-1]["type"] == "finish"
            assert served.adapter.started == 5


async def test_past_the_concurrency_limit_429_until_an_answer_ends() -> None:
    clock = Clock()
    limiter = Watched(AnswerLimits(concurrent=1, per_minute=None), clock)
    with serving(limiter, clock) as served:
        async with (
            browser(served) as alice,
            browser(served) as bob,
            browser(served) as carol,
        ):
            held: list[httpx.Response] = []

            async def hold() -> None:
                held.append(await ask(alice, served, "hold"))

            async with anyio.create_task_group() as tg:
                tg.start_soon(hold)
                assert await anyio.to_thread.run_sync(served.adapter.holding.wait, HANG_GUARD)
                assert_limited(await ask(alice, served), "concurrent", "1")
                assert served.adapter.started == 1
                assert (await ask(bob, served)).status_code == 200
                await limiter.wait_released()  # bob's answer
                served.adapter.go.set()
                await limiter.wait_released()  # alice's held answer
            assert held[0].status_code == 200
            assert (await ask(carol, served)).status_code == 200
            assert (await ask(alice, served)).status_code == 200


async def test_a_failed_or_abandoned_answer_gives_its_slot_back() -> None:
    clock = Clock()
    limiter = Watched(AnswerLimits(concurrent=1, per_minute=None), clock)
    with serving(limiter, clock) as served:
        async with browser(served) as alice:
            failed = await ask(alice, served, "fail")
            assert sse_chunks(failed.text)[-1] == {
                "type": "error",
                "errorText": "An error occurred.",
            }
            await limiter.wait_released()
            # The client leaves in the middle of an answer (a plain socket, so that the
            # test decides when the connection closes), with alice's cookie.
            [(name, value)] = alice.cookies.items()
            payload = body("left", "hold").encode()
            request = (
                f"POST /api/chat HTTP/1.1\r\nhost: {served.url[7:]}\r\n"
                f"origin: {served.url}\r\ncontent-type: application/json\r\n"
                f"cookie: {name}={value}\r\ncontent-length: {len(payload)}\r\n\r\n"
            ).encode() + payload
            host, port = served.url[7:].rsplit(":", 1)
            with anyio.fail_after(HANG_GUARD):
                async with await anyio.connect_tcp(host, int(port)) as connection:
                    await connection.send(request)
                    seen = b""
                    while b'"ok"' not in seen:
                        seen += await connection.receive()
            assert seen.startswith(b"HTTP/1.1 200 OK")
            await limiter.wait_released()
            served.adapter.go.set()
            assert (await ask(alice, served)).status_code == 200


async def test_clients_without_a_cookie_are_counted_by_address() -> None:
    clock = Clock()
    limiter = MemoryAnswerLimiter(AnswerLimits(concurrent=None, per_minute=2), clock=clock)
    with serving(limiter, clock) as served:
        answers: list[httpx.Response] = []
        for _ in range(3):
            # A new client each time: no cookie jar, so a new visitor per request.
            async with httpx.AsyncClient() as client:
                answers.append(await ask(client, served))
        assert [a.status_code for a in answers] == [200, 200, 429]
        async with browser(served) as visitor:
            assert (await ask(visitor, served)).status_code == 200


async def test_a_bad_request_uses_no_answer() -> None:
    clock = Clock()
    limiter = MemoryAnswerLimiter(AnswerLimits(concurrent=None, per_minute=1), clock=clock)
    with serving(limiter, clock) as served:
        async with browser(served) as alice:
            with anyio.fail_after(HANG_GUARD):
                bad = await alice.post(
                    served.url + "/api/chat", content=b"{}", headers=headers_for(served.url)
                )
            assert bad.status_code == 422
            assert (await ask(alice, served)).status_code == 200
            assert_limited(await ask(alice, served), "per_minute", "60")


class Ledger:
    """An AnswerLimiter of its own (as a Redis one would be): refuses key "full" and
    records every call, so the test sees each acquire matched by one release."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    async def acquire(self, key: str) -> LimitRefusal | None:
        self.calls.append(("acquire", key))
        return LimitRefusal("concurrent", 7, 2.5) if key.endswith("full") else None

    async def release(self, key: str) -> None:
        self.calls.append(("release", key))


async def test_another_limiter_plugs_in_and_sees_balanced_calls() -> None:
    ledger = Ledger()
    store = MemoryConversationStore()
    users = {"Bearer a": "someone", "Bearer f": "full"}

    def auth(request: Any) -> str | None:
        return users.get(request.headers.get("authorization", ""))

    app = create_chat_app(Gated(), store=store, auth=auth, answer_limits=ledger)
    with running(app) as url:
        served = Served(url, Gated(), store)
        async with httpx.AsyncClient(headers={"authorization": "Bearer a"}) as client:
            ok = await ask(client, served)
            failed = await ask(client, served, "fail")
        async with httpx.AsyncClient(headers={"authorization": "Bearer f"}) as client:
            refused = await ask(client, served)
    assert ok.status_code == 200 and failed.status_code == 200
    assert_limited(refused, "concurrent", "3")  # 2.5 s, rounded up
    # (A release may come just after the client read the end of its answer.)
    assert Counter(ledger.calls) == {
        ("acquire", "subject:someone"): 2,
        ("release", "subject:someone"): 2,
        ("acquire", "subject:full"): 1,
    }


async def test_no_limits_at_all() -> None:
    clock = Clock()
    with serving(None, clock) as served:
        async with browser(served) as alice:
            answers = [await ask(alice, served) for _ in range(40)]
    assert {a.status_code for a in answers} == {200}
