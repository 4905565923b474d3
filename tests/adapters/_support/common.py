"""What the adapter test modules share: running an adapter against the fake server and
reading its events, and the checks every SDK adapter passes the same way.

A module binds the runners to its own adapter factory (``serve_adapter``: a handler in,
a server and an adapter pointed at it out)::

    async def run(steps, request=HELLO):
        return await run_with(openai_adapter, streaming(steps), request)

and subclasses the shared suites (:class:`SDKImports`, :class:`CallerOwnedClient`,
:class:`ServedConformance`) with what differs: names, settings, answers.
"""

from __future__ import annotations

import os
import ssl
import subprocess
import sys
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, ClassVar, TypeAlias, cast

import anyio
import pytest

from ai_chat import AIChatAdapter, LimitExceededError, create_chat_stream
from ai_chat.testing import AdapterConformance
from ai_chat.types import ChatEvent

from .fake_server import FakeServer, Request, Response, Step, serve
from .release import HANG_GUARD, HELLO, released

__all__ = [
    "HANG_GUARD",
    "HELLO",
    "ROOT",
    "TLS",
    "CallerOwnedClient",
    "Handler",
    "SDKImports",
    "ServeAdapter",
    "ServedConformance",
    "StreamChecks",
    "close_adapter",
    "collect",
    "failure_with",
    "finish_of",
    "of_type",
    "python",
    "run_example",
    "run_with",
    "stream_failure",
    "text_of",
    "types",
    "with_message",
    "with_parameters",
]

ROOT = Path(__file__).resolve().parents[3]
# Loading the CA bundle is most of what creating a client costs; the loopback server
# never uses TLS, so the tests share one context.
TLS = ssl.create_default_context()

Handler: TypeAlias = Callable[[Request], Response]
# A handler in; a running server and an adapter pointed at it out.
ServeAdapter: TypeAlias = Callable[
    [Handler], AbstractAsyncContextManager[tuple[FakeServer, AIChatAdapter]]
]


# --- running an adapter ---------------------------------------------------------------------


async def collect(adapter: AIChatAdapter, request: Mapping[str, Any] = HELLO) -> list[ChatEvent]:
    """Every event of one complete stream (bounded by the hang guard)."""
    with anyio.fail_after(HANG_GUARD):
        async with create_chat_stream(adapter, request) as stream:
            return [event async for event in stream]


async def stream_failure(
    adapter: AIChatAdapter, expected: type[BaseException], request: Mapping[str, Any] = HELLO
) -> tuple[Any, list[ChatEvent]]:
    """The error the stream raised and the events delivered before it."""
    events: list[ChatEvent] = []
    with anyio.fail_after(HANG_GUARD), pytest.raises(expected) as caught:
        async with create_chat_stream(adapter, request) as stream:
            async for event in stream:
                events.append(event)
    return caught.value, events


async def run_with(
    serve_adapter: ServeAdapter, handler: Handler, request: Mapping[str, Any] = HELLO
) -> list[ChatEvent]:
    """Every event of one stream from an adapter served by ``serve_adapter``."""
    async with serve_adapter(handler) as (_server, adapter):
        return await collect(adapter, request)


async def failure_with(
    serve_adapter: ServeAdapter,
    handler: Handler,
    expected: type[BaseException],
    request: Mapping[str, Any] = HELLO,
    *,
    closed: bool = False,
) -> tuple[Any, list[ChatEvent], FakeServer]:
    """The error the stream raised, the events delivered before it, and the server.

    With ``closed``, also wait (bounded) until the server saw the connection closed
    while the adapter's client is still open: the adapter closed the response itself.
    """
    async with serve_adapter(handler) as (server, adapter):
        error, events = await stream_failure(adapter, expected, request)
        if closed:
            with anyio.fail_after(HANG_GUARD):
                await server.wait_until(lambda s: s.connections == s.closed == 1)
    return error, events, server


async def close_adapter(adapter: AIChatAdapter) -> None:
    """``adapter.aclose()``, when it has one: what it holds besides a caller's client (a
    transport of its own) is released before the test's event loop ends."""
    aclose = getattr(adapter, "aclose", None)
    if aclose is not None:
        await aclose()


# --- reading events -------------------------------------------------------------------------


def types(events: Sequence[ChatEvent]) -> list[str]:
    return [event["type"] for event in events]


def of_type(events: Sequence[ChatEvent], kind: str) -> list[Mapping[str, Any]]:
    return [cast("Mapping[str, Any]", e) for e in events if e["type"] == kind]


def text_of(events: Sequence[ChatEvent], kind: str = "text") -> str:
    return "".join(e["delta"] for e in of_type(events, f"{kind}-delta"))


def finish_of(events: Sequence[ChatEvent]) -> Mapping[str, Any]:
    assert events[-1]["type"] == "finish"
    return cast("Mapping[str, Any]", events[-1])


# --- requests -------------------------------------------------------------------------------


def with_message(*parts: Mapping[str, Any], role: str = "user") -> dict[str, Any]:
    """:data:`HELLO` and one more message of ``parts``."""
    return {"messages": [*HELLO["messages"], {"id": "m", "role": role, "parts": list(parts)}]}


def with_parameters(**parameters: Any) -> dict[str, Any]:
    """:data:`HELLO` with the request ``parameters``."""
    return {**HELLO, "parameters": parameters}


# --- subprocesses ---------------------------------------------------------------------------


def python(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` run by a fresh interpreter (nothing imported yet)."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )


async def run_example(
    *arguments: str, env_prefixes: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[bytes]:
    """``python *arguments`` from the repository root, without the environment variables
    that start with ``env_prefixes`` (so that the example sees only its arguments)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(env_prefixes)}
    with anyio.fail_after(60):  # a hang guard: a subprocess that may import an SDK
        return await anyio.run_process([sys.executable, *arguments], cwd=ROOT, check=False, env=env)


# --- suites every SDK adapter passes --------------------------------------------------------


@pytest.mark.slow  # each test starts an interpreter that imports the SDK
class SDKImports:
    """The SDK is imported by the adapter's module only, and its absence names the extra.

    Subclasses set :attr:`extra` (``ai_chat[<extra>]``, also the adapter module's name
    in ``ai_chat.adapters``), :attr:`sdk` (the SDK's top module) and :attr:`loaded` (a
    Python expression over a module name ``m``: is it one the SDK brings in).
    """

    extra: ClassVar[str]
    sdk: ClassVar[str]
    loaded: ClassVar[str]

    def test_importing_ai_chat_does_not_import_the_sdk(self) -> None:
        result = python(
            "import sys, ai_chat, ai_chat.adapters, ai_chat.testing\n"
            f"print(sorted(m for m in sys.modules if {self.loaded}))\n"
            "print('ai_chat.adapters._scripted' in sys.modules)"  # the probe can see imports
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.split() == ["[]", "True"]

    def test_importing_the_adapter_without_the_sdk_names_the_extra(self) -> None:
        result = python(
            f"import sys\nsys.modules[{self.sdk!r}] = None\nimport ai_chat.adapters.{self.extra}"
        )
        assert result.returncode == 1
        assert f'pip install "ai_chat[{self.extra}]"' in result.stderr
        assert "ImportError" in result.stderr


class CallerOwnedClient:
    """An adapter built from settings owns its SDK client and closes it; a caller's
    client is used and never closed.

    Subclasses implement :meth:`owned`, :meth:`callers_client` and :meth:`adapter_for`;
    :attr:`answer` is a complete streamed answer of ``"ok"``.
    The SDK clients here have ``is_closed()`` (openai, anthropic).
    """

    answer: ClassVar[Sequence[Step]]
    headers: ClassVar[Mapping[str, str]]
    # The request header that carries the owned client's key ``sk-owned``.
    key_header: ClassVar[tuple[str, str]] = ("authorization", "Bearer sk-owned")

    def owned(self, **settings: Any) -> Any:
        """An adapter that creates its own client from ``settings``."""
        raise NotImplementedError

    def callers_client(self) -> Any:
        """An SDK client the test owns (an async context manager)."""
        raise NotImplementedError

    def adapter_for(self, client: Any) -> Any:
        """An adapter on the caller's ``client``."""
        raise NotImplementedError

    def base_url(self, server: FakeServer) -> str:
        return server.url()

    async def test_an_owned_client_is_created_from_settings_and_closed_by_aclose(self) -> None:
        response = Response(200, self.headers, list(self.answer))
        async with serve(lambda request: response) as server:
            adapter = self.owned(api_key="sk-owned", base_url=self.base_url(server), max_retries=0)
            assert text_of(await collect(adapter)) == "ok"
            name, value = self.key_header
            assert server.requests[0].headers[name] == value
            assert not adapter.client.is_closed()
            await adapter.aclose()
            assert adapter.client.is_closed()
            with anyio.fail_after(HANG_GUARD):  # the pooled connection went with the client
                await server.wait_until(lambda s: s.closed == 1)

    async def test_an_owned_client_is_closed_by_async_with(self) -> None:
        async with self.owned(api_key="k") as adapter:
            client = adapter.client
            assert not client.is_closed()
        assert client.is_closed()

    async def test_a_callers_client_is_never_closed(self) -> None:
        async with self.callers_client() as client:
            async with self.adapter_for(client) as adapter:
                assert adapter.client is client
            await adapter.aclose()
            assert not client.is_closed()


class StreamChecks:
    """What every SSE adapter does alike with a served answer: it returns the connection
    to the pool after a complete answer, and the SSE decoder's bounds reach the consumer.

    Subclasses set :attr:`headers`, :attr:`answer` (a complete answer whose text is
    :attr:`answer_text`) and :attr:`eol`, and implement :meth:`serve_adapter`.
    """

    headers: ClassVar[Mapping[str, str]]
    answer: ClassVar[Sequence[Step]]
    answer_text: ClassVar[str] = "ok"
    # The provider's line ending in its SSE framing.
    eol: ClassVar[bytes] = b"\n"

    def serve_adapter(
        self, handler: Handler
    ) -> AbstractAsyncContextManager[tuple[FakeServer, AIChatAdapter]]:
        """A server running ``handler`` and an adapter pointed at it, without retries."""
        raise NotImplementedError

    async def test_a_complete_stream_returns_its_connection_to_the_pool(self) -> None:
        response = Response(200, self.headers, list(self.answer))
        async with self.serve_adapter(lambda request: response) as (server, adapter):
            for _ in range(3):
                assert text_of(await collect(adapter)) == self.answer_text
        assert server.connections == 1 and server.disconnects == 0

    async def test_sse_limits_pass_through(self) -> None:
        huge = b"data: " + b"x" * (4 * 1024 * 1024 + 1) + self.eol * 2
        response = Response(200, self.headers, [huge])
        error, _events, _server = await failure_with(
            self.serve_adapter, lambda request: response, LimitExceededError
        )
        assert error.limit == "max_line_chars"


class ServedConformance(AdapterConformance):
    """The conformance kit with adapters talking to the fake server.

    Subclasses implement :meth:`handler` (a slow answer for the slow adapter's requests),
    :meth:`client` (a caller-owned client pointed at the server) and :meth:`make_adapter`.
    """

    _server: FakeServer

    def handler(self, request: Request) -> Response:
        raise NotImplementedError

    def client(self, server: FakeServer) -> AbstractAsyncContextManager[Any]:
        raise NotImplementedError

    def make_adapter(self, client: Any, server: FakeServer, *, slow: bool) -> AIChatAdapter:
        raise NotImplementedError

    @pytest.fixture
    async def server(self) -> AsyncGenerator[FakeServer]:
        async with serve(self.handler) as server:
            self._server = server
            yield server

    @pytest.fixture
    async def adapter(self, server: FakeServer) -> AsyncGenerator[AIChatAdapter]:
        async with self.client(server) as client:
            adapter = self.make_adapter(client, server, slow=False)
            try:
                # One request up front, so the pooled keep-alive connection (and the server
                # task that serves it) exists before the kit counts tasks.
                await collect(adapter)
                yield adapter
            finally:
                await close_adapter(adapter)

    @pytest.fixture
    async def slow_adapter(self, server: FakeServer) -> AsyncGenerator[AIChatAdapter]:
        async with self.client(server) as client:
            adapter = self.make_adapter(client, server, slow=True)
            try:
                yield adapter
            finally:
                await close_adapter(adapter)

    async def assert_released(self, adapter: AIChatAdapter) -> None:
        await released(self._server)
