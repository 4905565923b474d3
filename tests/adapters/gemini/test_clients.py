"""Which google-genai clients the Gemini adapter takes: any ``genai.Client``.

A client built as the google-genai documentation shows (``genai.Client(api_key=...,
http_options=types.HttpOptions(base_url=...))``) sends through one of the SDK's own
transports: aiohttp whenever it is importable, else a per-event-loop httpx2 pool (an
httpx one with ``GOOGLE_GENAI_HTTP_CLIENT=httpx``). All three run on asyncio only, so the
adapter sends through an httpx2 client of its own built from the client's configuration;
a client given an httpx2 transport (the docs' way for trio) is used as it is. Each test
here drives the genuine SDK against the loopback server in :mod:`.._support.fake_server`,
on asyncio and trio, and checks that the caller's client is never closed or broken.

The SDK picks aiohttp by a flag it sets at import (``has_aiohttp``: whether ``import
aiohttp`` worked) and reads on every request; the dev environment has aiohttp, so the
"no aiohttp" cases (the client most installs have: google-genai without its ``aiohttp``
extra) clear that flag, exactly what an environment without aiohttp gives.
"""

from __future__ import annotations

import gc
import json
import ssl
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any, ClassVar

import aiohttp
import anyio
import httpx
import httpx2
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from google import genai
from google.genai import _api_client as sdk_api_client
from google.genai import types as genai_types
from google.oauth2.credentials import Credentials

from ai_chat import AIChatAdapter, ConfigurationError, ProviderError
from ai_chat.adapters.gemini import GeminiChatAdapter
from ai_chat.adapters.gemini._sdk_shim import transport_arguments

from .._support.common import (
    HANG_GUARD,
    ServedConformance,
    StreamChecks,
    collect,
    stream_failure,
    text_of,
)
from .._support.fake_server import FakeServer, Request, Response, Step, serve
from .._support.release import ReleaseOnStop, released
from .test_adapter import (
    MODEL,
    SLOW,
    SSE_HEADERS,
    chunk,
    conformance_handler,
    text,
    text_answer,
)

pytestmark = [
    pytest.mark.anyio,
    # google-genai's own aiohttp session (the caller's async calls here) subclasses
    # aiohttp.ClientSession, which aiohttp warns about; nothing of the adapter's.
    pytest.mark.filterwarnings(
        "ignore:Inheritance class AiohttpClientSession from ClientSession:DeprecationWarning"
    ),
]

PLAIN = {
    "candidates": [
        {"content": {"parts": [{"text": "plain"}], "role": "model"}, "finishReason": "STOP"}
    ],
    "usageMetadata": {"promptTokenCount": 1, "totalTokenCount": 2},
}


def answering(steps: Sequence[Step] = ()) -> Callable[[Request], Response]:
    """Streams ``steps`` (by default "ok") to ``streamGenerateContent``, and answers a
    plain ``generateContent`` (the caller's own SDK calls) with "plain"."""
    stream = list(steps) or text_answer("ok")

    def handler(request: Request) -> Response:
        if ":streamGenerateContent" in request.path:
            return Response(200, SSE_HEADERS, stream)
        return Response(200, {"content-type": "application/json"}, [json.dumps(PLAIN).encode()])

    return handler


# --- the SDK's own transports -----------------------------------------------------------------

TRANSPORTS = ["httpx2-pool", "aiohttp", "httpx-pool"]


@pytest.fixture(params=TRANSPORTS)
def sdk_transport(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Which of its own async transports the SDK builds for a default client."""
    kind = str(request.param)
    if kind != "aiohttp":
        monkeypatch.setattr(sdk_api_client, "has_aiohttp", False)
    if kind == "httpx-pool":
        monkeypatch.setenv("GOOGLE_GENAI_HTTP_CLIENT", "httpx")
    else:
        monkeypatch.delenv("GOOGLE_GENAI_HTTP_CLIENT", raising=False)
    return kind


def transport_of(client: genai.Client) -> str:
    """The async transport the SDK sends the client's streaming requests through."""
    api: Any = client._api_client  # pyright: ignore[reportPrivateUsage]
    if api._use_aiohttp():
        return "aiohttp"
    http = api._async_httpx_client
    if getattr(http, "_per_loop", False):
        return "httpx2-pool" if isinstance(http, httpx2.AsyncClient) else "httpx-pool"
    return "httpx2" if isinstance(http, httpx2.AsyncClient) else type(http).__module__


@asynccontextmanager
async def default_client(base_url: str, **settings: Any) -> AsyncGenerator[genai.Client]:
    """``genai.Client(api_key=..., http_options=types.HttpOptions(base_url=...))`` as the
    google-genai docs build one, closed by its owner (the test) at the end."""
    http_options = genai_types.HttpOptions.model_validate(
        {"base_url": base_url, **settings.pop("http_options", {})}
    )
    settings.setdefault("api_key", "test")
    client = genai.Client(http_options=http_options, **settings)
    try:
        yield client
    finally:
        client.close()
        await client.aio.aclose()


@asynccontextmanager
async def default_adapter(
    handler: Callable[[Request], Response], **http_options: Any
) -> AsyncGenerator[tuple[FakeServer, GeminiChatAdapter]]:
    """A server and an adapter on a default client pointed at it, the adapter closed at
    the end (the caller's client too, by its owner)."""
    async with (
        serve(handler) as server,
        default_client(server.url(), http_options=http_options) as client,
        GeminiChatAdapter(client, model=MODEL) as adapter,
    ):
        yield server, adapter


def sync_answer(client: genai.Client) -> str | None:
    """The caller's own blocking SDK call (run it in a worker thread)."""
    models = client.models
    answer = models.generate_content(model=MODEL, contents="hi")  # pyright: ignore[reportUnknownMemberType]
    return answer.text


async def async_answer(client: genai.Client) -> str | None:
    """The caller's own async SDK call, through the client's own async transport."""
    models = client.aio.models
    answer = await models.generate_content(model=MODEL, contents="hi")  # pyright: ignore[reportUnknownMemberType]
    return answer.text


async def plain_calls(client: genai.Client, anyio_backend: str) -> list[str | None]:
    """The caller's own SDK calls: the sync API (in a worker thread, as a trio program
    would call it) and, on asyncio, the async API through the SDK's own transport."""
    with anyio.fail_after(HANG_GUARD):
        answers = [await anyio.to_thread.run_sync(sync_answer, client)]
        if anyio_backend == "asyncio":  # the SDK's own transports run on asyncio only
            answers.append(await async_answer(client))
    return answers


async def test_a_default_client_streams_and_stays_the_callers(
    sdk_transport: str, anyio_backend: str
) -> None:
    async with serve(answering()) as server, default_client(server.url()) as client:
        assert transport_of(client) == sdk_transport
        api: Any = client._api_client  # pyright: ignore[reportPrivateUsage]
        own_transport = api._async_httpx_client
        before = await plain_calls(client, anyio_backend)  # its sessions exist, and stay
        sessions = dict(api._aiohttp_sessions)  # on asyncio, the aiohttp one it just made
        assert bool(sessions) == (sdk_transport == "aiohttp" and anyio_backend == "asyncio")
        adapter = GeminiChatAdapter(client, model=MODEL)
        assert adapter.client is client
        assert "adapter's transport" in repr(adapter)
        for _ in range(2):  # one connection of the adapter's own, reused
            assert text_of(await collect(adapter)) == "ok"
        streamed = [r for r in server.requests if ":streamGenerateContent" in r.path]
        # The SDK's default API version.
        assert [r.path for r in streamed] == [
            f"/v1/models/{MODEL}:streamGenerateContent?alt=sse"
        ] * 2
        assert streamed[0].headers["x-goog-api-key"] == "test"
        opened = server.connections
        await adapter.aclose()
        with anyio.fail_after(HANG_GUARD):  # the adapter's connection went with it
            await server.wait_until(lambda s: s.closed == 1)
        await adapter.aclose()  # idempotent
        # The caller's client is as it was, and works: its transport was neither used
        # nor closed, and the adapter's copy of its API client closed nothing when dropped.
        gc.collect()
        assert api._async_httpx_client is own_transport and not own_transport.is_closed
        assert api._http_options.httpx_async_client is None
        assert await plain_calls(client, anyio_backend) == before == ["plain"] * len(before)
        assert api._aiohttp_sessions == sessions  # the same sessions, still open
        assert not any(session.closed for session in sessions.values())
        # A stream after aclose() opens a new transport of the adapter's.
        assert text_of(await collect(adapter)) == "ok"
        await adapter.aclose()
    assert server.connections > opened


async def test_the_clients_settings_carry_over(sdk_transport: str) -> None:
    http_options = {
        "api_version": "v1alpha",
        "timeout": 30_000,
        "headers": {"x-gateway-key": "g-1"},
    }
    async with (
        serve(answering()) as server,
        default_client(server.url(), http_options=http_options) as client,
    ):
        async with GeminiChatAdapter(client, model=MODEL) as adapter:
            assert text_of(await collect(adapter)) == "ok"
        with anyio.fail_after(HANG_GUARD):  # the SDK's own request, for comparison
            await anyio.to_thread.run_sync(sync_answer, client)
    streamed, plain = server.requests
    assert streamed.path == f"/v1alpha/models/{MODEL}:streamGenerateContent?alt=sse"
    assert plain.path == f"/v1alpha/models/{MODEL}:generateContent"
    configured = ["x-goog-api-key", "x-gateway-key", "x-server-timeout", "user-agent"]
    configured += ["x-goog-api-client", "content-type"]
    assert {name: streamed.headers.get(name) for name in configured} == {
        name: plain.headers.get(name) for name in configured
    }
    assert streamed.headers["x-gateway-key"] == "g-1"
    assert streamed.headers["x-server-timeout"] == "30"


async def test_the_clients_timeout_applies(sdk_transport: str) -> None:
    steps: list[Step] = [chunk(text("Hi")), "hang"]
    async with default_adapter(answering(steps), timeout=200) as (server, adapter):
        error, _events = await stream_failure(adapter, ProviderError)
        await released(server)
    assert isinstance(error.__cause__, httpx2.ReadTimeout)
    assert "stalled" in str(error)


async def test_the_clients_retry_options_apply(sdk_transport: str) -> None:
    busy = {"error": {"code": 503, "message": "Busy.", "status": "UNAVAILABLE"}}
    answers = [
        Response(503, {"content-type": "application/json"}, [json.dumps(busy).encode()]),
        Response(200, SSE_HEADERS, text_answer("ok")),
    ]
    retry = {"attempts": 2, "initial_delay": 0.0, "max_delay": 0.0, "jitter": 0.0}
    async with default_adapter(lambda r: answers.pop(0), retry_options=retry) as (server, adapter):
        assert text_of(await collect(adapter)) == "ok"
    assert len(server.requests) == 2


@pytest.fixture
def no_google_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_GENAI_USE_ENTERPRISE",
        "GOOGLE_GENAI_API_VERSION",
        "GOOGLE_APPLICATION_CREDENTIALS",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.usefixtures("no_google_environment")
async def test_a_vertex_ai_client_with_an_api_key(sdk_transport: str) -> None:
    async with (
        serve(answering()) as server,
        default_client(server.url(), vertexai=True, api_key="vk") as client,
        GeminiChatAdapter(client, model=MODEL) as adapter,
    ):
        assert text_of(await collect(adapter)) == "ok"
    [request] = server.requests
    assert (
        request.path == f"/v1beta1/publishers/google/models/{MODEL}:streamGenerateContent?alt=sse"
    )
    assert request.headers["x-goog-api-key"] == "vk"


@pytest.mark.usefixtures("no_google_environment")
async def test_a_vertex_ai_client_with_google_credentials(sdk_transport: str) -> None:
    # Genuine google-auth OAuth credentials holding a token that has not expired: the SDK
    # sends it without asking Google for one (a refresh would need Google's token
    # endpoint, and runs on asyncio only in the SDK).
    credentials = Credentials(token="ya29.local", quota_project_id="billing-p")
    settings = {"api_key": None, "credentials": credentials, "project": "proj-1"}
    async with (
        serve(answering()) as server,
        default_client(server.url(), vertexai=True, location="europe-west4", **settings) as client,
        GeminiChatAdapter(client, model=MODEL) as adapter,
    ):
        assert text_of(await collect(adapter)) == "ok"
    [request] = server.requests
    assert request.path == (
        "/v1beta1/projects/proj-1/locations/europe-west4/publishers/google/models/"
        f"{MODEL}:streamGenerateContent?alt=sse"
    )
    assert request.headers["authorization"] == "Bearer ya29.local"
    assert request.headers["x-goog-user-project"] == "billing-p"
    assert "x-goog-api-key" not in request.headers


TOKEN = {"access_token": "ya29.fresh", "expires_in": 3600, "token_type": "Bearer"}


def with_a_token_endpoint(handler: Callable[[Request], Response]) -> Callable[[Request], Response]:
    """``handler``, and an OAuth token endpoint at ``/token`` (where the test credentials
    get their access token) that hands out :data:`TOKEN`."""

    def both(request: Request) -> Response:
        if request.path == "/token":
            assert request.method == "POST" and b"grant_type=" in request.body
            return Response(200, {"content-type": "application/json"}, [json.dumps(TOKEN).encode()])
        return handler(request)

    return both


def vertex_requests(server: FakeServer) -> list[Request]:
    """The streaming requests, after the one token request."""
    token, *requests = server.requests
    assert token.path == "/token"
    assert {request.path for request in requests} == {
        "/v1beta1/projects/proj-1/locations/europe-west4/publishers/google/models/"
        f"{MODEL}:streamGenerateContent?alt=sse"
    }
    return requests


@pytest.mark.usefixtures("no_google_environment")
async def test_expired_google_credentials_are_refreshed_on_any_backend(
    sdk_transport: str,
) -> None:
    # The SDK refreshes through asyncio; the adapter does it first, in a worker thread.
    async with serve(with_a_token_endpoint(answering())) as server:
        credentials = Credentials(
            token=None,
            refresh_token="r-1",
            client_id="c",
            client_secret="s",
            token_uri=server.url("/token"),
        )
        settings = {"api_key": None, "credentials": credentials, "project": "proj-1"}
        async with (
            default_client(
                server.url(), vertexai=True, location="europe-west4", **settings
            ) as client,
            GeminiChatAdapter(client, model=MODEL) as adapter,
        ):
            for _ in range(2):  # the second stream reuses the fresh token
                assert text_of(await collect(adapter)) == "ok"
    token: object = credentials.token  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    assert token == "ya29.fresh"  # the caller's credentials object, refreshed
    first, second = vertex_requests(server)
    assert first.headers["authorization"] == second.headers["authorization"] == "Bearer ya29.fresh"


def service_account(token_uri: str) -> dict[str, str]:
    """A service account key file's fields, with a new RSA key and ``token_uri``."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return {
        "type": "service_account",
        "project_id": "proj-1",
        "private_key_id": "k-1",
        "private_key": pem.decode(),
        "client_email": "chat@proj-1.iam.gserviceaccount.com",
        "client_id": "1",
        "token_uri": token_uri,
    }


@pytest.mark.usefixtures("no_google_environment")
async def test_application_default_credentials_are_loaded_on_any_backend(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sdk_transport: str
) -> None:
    # The commonest Vertex AI client: a project and a location, and the application
    # default credentials (here a service account key whose token endpoint is the test
    # server), which the SDK loads on the first request.
    async with serve(with_a_token_endpoint(answering())) as server:
        key_file = tmp_path / "service-account.json"
        key_file.write_text(json.dumps(service_account(server.url("/token"))), encoding="utf-8")
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(key_file))
        settings = {"api_key": None, "project": "proj-1", "location": "europe-west4"}
        async with (
            default_client(server.url(), vertexai=True, **settings) as client,
            GeminiChatAdapter(client, model=MODEL) as adapter,
        ):
            assert text_of(await collect(adapter)) == "ok"
    [request] = vertex_requests(server)
    assert request.headers["authorization"] == "Bearer ya29.fresh"
    assert b"assertion=" in server.requests[0].body  # a JWT signed with the key


# --- a client with an httpx2 transport of the caller's ------------------------------------


async def test_the_docs_trio_client_is_used_as_it_is() -> None:
    # As docs/adapters/gemini.md shows: an httpx2 client of the caller's, which the
    # adapter reads on any backend; its connection stays in the caller's pool.
    async with serve(answering()) as server:
        async with httpx2.AsyncClient() as http:
            options = genai_types.HttpOptions(base_url=server.url(), httpx_async_client=http)
            client = genai.Client(api_key="test", http_options=options)
            assert transport_of(client) == "httpx2"
            async with GeminiChatAdapter(client, model=MODEL) as adapter:
                assert "adapter's transport" not in repr(adapter)
                assert text_of(await collect(adapter)) == "ok"
            assert server.closed == 0 and not http.is_closed
            assert await async_answer(client) == "plain"
            assert server.connections == 1  # the same pooled connection
            client.close()
        with anyio.fail_after(HANG_GUARD):
            await server.wait_until(lambda s: s.closed == 1)


async def test_a_client_around_an_httpx2_transport_of_the_callers_is_used_as_it_is() -> None:
    async with serve(answering()) as server:
        transport = httpx2.AsyncHTTPTransport()
        args = {"transport": transport}
        async with default_client(server.url(), http_options={"async_client_args": args}) as client:
            assert transport_of(client) == "httpx2"
            async with GeminiChatAdapter(client, model=MODEL) as adapter:
                assert "adapter's transport" not in repr(adapter)
                assert text_of(await collect(adapter)) == "ok"
            assert server.closed == 0  # the connection stays in the client's pool
        with anyio.fail_after(HANG_GUARD):  # until the client's owner closes it
            await server.wait_until(lambda s: s.closed == 1)


# --- clients whose transport the adapter cannot take ---------------------------------------


def refusal(client: genai.Client) -> ConfigurationError:
    try:
        with pytest.raises(ConfigurationError) as caught:
            GeminiChatAdapter(client, model=MODEL)
    finally:
        client.close()
    return caught.value


def test_a_callers_httpx_client_is_refused() -> None:
    # httpx (not httpx2) responses, and settings that cannot be carried over.
    options = genai_types.HttpOptions(
        base_url="http://127.0.0.1:9", httpx_async_client=httpx.AsyncClient()
    )
    error = refusal(genai.Client(api_key="k", http_options=options))
    assert error.parameter == "http_options.httpx_async_client"
    assert "httpx2.AsyncClient" in error.expected


def test_an_httpx_transport_in_the_client_args_is_refused() -> None:
    args = {"transport": httpx.AsyncHTTPTransport(retries=1)}
    options = genai_types.HttpOptions(base_url="http://127.0.0.1:9", async_client_args=args)
    error = refusal(genai.Client(api_key="k", http_options=options))
    assert error.parameter == "http_options.async_client_args"
    assert "transport" in error.expected and "httpx objects" in error.expected


def test_aiohttp_only_client_args_are_refused() -> None:
    options = genai_types.HttpOptions(
        base_url="http://127.0.0.1:9", async_client_args={"read_bufsize": 1 << 16}
    )
    client = genai.Client(api_key="k", http_options=options)
    assert transport_of(client) == "aiohttp"
    error = refusal(client)
    assert error.parameter == "http_options.async_client_args"
    assert "read_bufsize" in error.expected


def test_a_callers_aiohttp_session_is_refused() -> None:
    # An aiohttp session can only be made on asyncio.
    anyio.run(_refuse_an_aiohttp_session, backend="asyncio")


async def _refuse_an_aiohttp_session() -> None:
    async with aiohttp.ClientSession() as session:
        options = genai_types.HttpOptions(base_url="http://127.0.0.1:9", aiohttp_client=session)
        error = refusal(genai.Client(api_key="k", http_options=options))
        assert not session.closed
    assert error.parameter == "http_options.aiohttp_client"
    assert "httpx_async_client=httpx2.AsyncClient" in error.expected


def test_aiohttps_ssl_setting_becomes_the_transports_verify() -> None:
    context = ssl.create_default_context()
    for value, verify in ((False, False), (context, context)):
        options = genai_types.HttpOptions(async_client_args={"ssl": value})
        client = genai.Client(api_key="k", http_options=options)
        try:
            api: Any = client._api_client  # pyright: ignore[reportPrivateUsage]
            arguments = transport_arguments(api)
        finally:
            client.close()
        assert arguments is not None and arguments["verify"] is verify
    client = genai.Client(api_key="k", http_options={"async_client_args": {"ssl": b"pin"}})
    error = refusal(client)
    assert error.parameter == "http_options.async_client_args.ssl"


def test_the_sdks_tls_context_is_the_transports(sdk_transport: str) -> None:
    client = genai.Client(api_key="k", http_options={"async_client_args": {"trust_env": False}})
    try:
        api: Any = client._api_client  # pyright: ignore[reportPrivateUsage]
        arguments = transport_arguments(api)
    finally:
        client.close()
    assert arguments is not None
    assert arguments["verify"] is api._async_httpx_client_args["verify"]
    assert isinstance(arguments["verify"], ssl.SSLContext)
    assert arguments["trust_env"] is False and arguments["follow_redirects"] is True


# --- the shared suites, on the SDK's own transports --------------------------------------------


class OnTheSDKsTransports:
    """A shared suite on an adapter over a default client, on each of the SDK's transports."""

    @pytest.fixture(autouse=True)
    def _transport(self, sdk_transport: str) -> None:
        del sdk_transport

    def serve_adapter(
        self, handler: Callable[[Request], Response]
    ) -> AbstractAsyncContextManager[tuple[FakeServer, AIChatAdapter]]:
        return default_adapter(handler)


class TestReleaseOnStop(OnTheSDKsTransports, ReleaseOnStop):
    slow: ClassVar[Sequence[Step]] = SLOW
    headers: ClassVar[Mapping[str, str]] = SSE_HEADERS
    small_response_chars: ClassVar[int] = 100


class TestStreamChecks(OnTheSDKsTransports, StreamChecks):
    headers: ClassVar[Mapping[str, str]] = SSE_HEADERS
    answer: ClassVar[Sequence[Step]] = text_answer("ok")
    eol: ClassVar[bytes] = b"\r\n"


class TestConformance(ServedConformance):
    @pytest.fixture(autouse=True)
    def _transport(self, sdk_transport: str) -> None:
        del sdk_transport

    def handler(self, request: Request) -> Response:
        return conformance_handler(request)

    def client(self, server: FakeServer) -> AbstractAsyncContextManager[genai.Client]:
        return default_client(server.url())

    def make_adapter(
        self, client: genai.Client, server: FakeServer, *, slow: bool
    ) -> GeminiChatAdapter:
        return GeminiChatAdapter(client, model="slow" if slow else MODEL)
