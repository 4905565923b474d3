"""Each attack on the server, against a real uvicorn on loopback, and the answer it gets.

Every attack is answered with its documented status and a JSON error, stores nothing,
starts no adapter (counted), and leaves the server answering a legitimate request.
A "visitor" is an httpx client with its own cookie jar that sends what a browser sends
from the server's own page (``Origin`` on a POST, ``Sec-Fetch-Site: same-origin``).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pytest
from starlette.exceptions import HTTPException
from starlette.requests import Request

from ai_chat import AbortSignal, ConfigurationError
from ai_chat.server import AnswerLimits, create_chat_app
from ai_chat.store import MemoryConversationStore
from ai_chat.types import ChatRequest

from .harness import HANG_GUARD, call_asgi, running, sse_chunks

pytestmark = pytest.mark.anyio

EVIL = "http://evil.example"
TOKEN = "t0ken-for-the-tests-only-0123456789"
SECRET = "a secret for the tests, 32 bytes."


class Counting:
    """Answers every request with one text and counts the answers it started.

    It runs in the server's thread; the test reads ``started`` between requests.
    """

    def __init__(self) -> None:
        self.started = 0

    async def stream(
        self, request: ChatRequest, signal: AbortSignal
    ) -> AsyncIterator[Mapping[str, object]]:
        self.started += 1
        yield {"type": "start"}
        yield {"type": "text-start", "id": "t"}
        yield {"type": "text-delta", "id": "t", "delta": "ok"}
        yield {"type": "text-end", "id": "t"}
        yield {"type": "finish", "finishReason": "stop"}


@dataclass
class Site:
    url: str
    adapter: Counting
    store: MemoryConversationStore

    @property
    def host(self) -> str:
        return self.url.removeprefix("http://")


def fresh_id(prefix: str) -> str:
    """A chat id no other test (nor the other backend's run) uses."""
    return f"{prefix}-{secrets.token_hex(4)}"


def chat_body(chat_id: str, text: str = "Hello") -> dict[str, Any]:
    message = {"id": f"{chat_id}-u", "role": "user", "parts": [{"type": "text", "text": text}]}
    return {"id": chat_id, "messages": [message], "trigger": "submit-message"}


def page_headers(site: Site) -> dict[str, str]:
    """What a browser sends with a fetch POST from the server's own page."""
    return {
        "origin": site.url,
        "sec-fetch-site": "same-origin",
        "content-type": "application/json",
    }


@asynccontextmanager
async def visitor(site: Site) -> AsyncGenerator[httpx.AsyncClient]:
    """A browser that loaded the page (and got its visitor cookie)."""
    async with httpx.AsyncClient(base_url=site.url) as client:
        with anyio.fail_after(HANG_GUARD):
            page = await client.get("/", headers={"sec-fetch-site": "none"})
        assert page.status_code == 200
        yield client


async def ask(client: httpx.AsyncClient, site: Site, chat_id: str) -> httpx.Response:
    with anyio.fail_after(HANG_GUARD):
        return await client.post(
            "/api/chat", content=json.dumps(chat_body(chat_id)), headers=page_headers(site)
        )


@contextmanager
def site_of(**options: Any) -> Generator[Site]:
    """``create_chat_app`` with a memory store and ``options``, on uvicorn."""
    adapter = Counting()
    store = MemoryConversationStore()
    app = create_chat_app(adapter, store=store, **options)
    with running(app) as url:
        yield Site(url, adapter, store)


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    # Generous limits: this server answers every health check of the module.
    with site_of(answer_limits=AnswerLimits(concurrent=8, per_minute=10_000)) as served:
        yield served


def with_cookie(name: str, value: str) -> dict[str, str]:
    """A Cookie header holding exactly this cookie (httpx then adds none from its jar)."""
    return {"cookie": f"{name}={value}"}


def assert_json_error(response: httpx.Response, status: int, kind: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    error: dict[str, Any] = response.json()["error"]
    assert error["type"] == kind
    assert isinstance(error["message"], str) and error["message"]
    return error


async def assert_healthy(site: Site) -> None:
    """A legitimate visitor still gets an answer (the adapter starts exactly once)."""
    before = site.adapter.started
    async with visitor(site) as client:
        response = await ask(client, site, fresh_id("healthy"))
    assert response.status_code == 200
    assert sse_chunks(response.text)[-1]["type"] == "finish"
    assert site.adapter.started == before + 1


# --------------------------------------------------------------------------------------
# Cross-site requests and DNS rebinding, on the chat endpoint
# --------------------------------------------------------------------------------------

FORM = "messages=%5B%5D&trigger=submit-message"

ATTACKS: list[Any] = [
    pytest.param(
        {"origin": EVIL, "sec-fetch-site": "cross-site", "content-type": "text/plain"},
        None,
        403,
        "cross_origin",
        id="cross-site text/plain POST",
    ),
    pytest.param(
        {"origin": EVIL, "content-type": "text/plain;charset=UTF-8"},
        None,
        403,
        "cross_origin",
        id="cross-site text/plain POST from a browser without Fetch Metadata",
    ),
    pytest.param(
        {
            "origin": EVIL,
            "sec-fetch-site": "cross-site",
            "content-type": "application/x-www-form-urlencoded",
        },
        FORM,
        403,
        "cross_origin",
        id="cross-site form POST",
    ),
    pytest.param(
        {"origin": "null", "content-type": "application/x-www-form-urlencoded"},
        FORM,
        403,
        "cross_origin",
        id="form POST from a sandboxed frame (Origin: null)",
    ),
    pytest.param(
        {"origin": EVIL, "content-type": "application/json"},
        None,
        403,
        "cross_origin",
        id="forged Origin",
    ),
    pytest.param(
        {"sec-fetch-site": "cross-site", "content-type": "application/json"},
        None,
        403,
        "cross_origin",
        id="Sec-Fetch-Site cross-site",
    ),
    pytest.param(
        {"sec-fetch-site": "same-site", "content-type": "application/json"},
        None,
        403,
        "cross_origin",
        id="Sec-Fetch-Site same-site (a sibling subdomain)",
    ),
    pytest.param(
        {
            "host": "rebound.evil.example:{port}",
            "origin": "http://rebound.evil.example:{port}",
            "sec-fetch-site": "same-origin",
            "content-type": "application/json",
        },
        None,
        421,
        "unknown_host",
        id="DNS rebinding (the browser believes it is same-origin)",
    ),
    pytest.param(
        {"content-type": "text/plain"},
        None,
        415,
        "unsupported_media_type",
        id="text/plain without an Origin",
    ),
    pytest.param({}, None, 415, "unsupported_media_type", id="no Content-Type"),
    pytest.param(
        {"content-type": "application/json; charset=latin-1"},
        None,
        415,
        "unsupported_media_type",
        id="JSON in another charset",
    ),
]


@pytest.mark.parametrize(("headers", "content", "status", "kind"), ATTACKS)
async def test_an_attack_on_the_chat_endpoint_is_refused_before_anything_runs(
    site: Site, headers: dict[str, str], content: str | None, status: int, kind: str
) -> None:
    port = site.url.rsplit(":", 1)[1]
    sent = {name: value.format(port=port) for name, value in headers.items()}
    chat_id = fresh_id("attack")
    before = site.adapter.started
    async with visitor(site) as victim:
        # The victim's own cookie goes along, as if the browser ignored SameSite.
        with anyio.fail_after(HANG_GUARD):
            response = await victim.post(
                "/api/chat", content=content or json.dumps(chat_body(chat_id)), headers=sent
            )
    assert_json_error(response, status, kind)
    assert "access-control-allow-origin" not in response.headers
    assert site.adapter.started == before
    assert await site.store.find_by_id(chat_id) is None
    await assert_healthy(site)


READS: list[Any] = [
    pytest.param({"origin": EVIL}, 403, "cross_origin", id="cross-origin fetch"),
    pytest.param({"sec-fetch-site": "cross-site"}, 403, "cross_origin", id="script include"),
    pytest.param({"host": "rebound.evil.example"}, 421, "unknown_host", id="DNS rebinding"),
]


@pytest.mark.parametrize(("headers", "status", "kind"), READS)
async def test_reading_stored_conversations_cross_site_is_refused(
    site: Site, headers: dict[str, str], status: int, kind: str
) -> None:
    chat_id = fresh_id("secret")
    async with visitor(site) as victim:
        assert (await ask(victim, site, chat_id)).status_code == 200
        with anyio.fail_after(HANG_GUARD):
            listed = await victim.get("/api/chats", headers=headers)
            shown = await victim.get(f"/api/chats/{chat_id}", headers=headers)
            rated = await victim.post(
                f"/api/chats/{chat_id}/rating",
                content=json.dumps({"rating": 1}),
                headers={**headers, "content-type": "application/json"},
            )
            # The victim's own page still reads them.
            own = await victim.get("/api/chats", headers={"sec-fetch-site": "same-origin"})
    for response in (listed, shown, rated):
        error = assert_json_error(response, status, kind)
        assert "Hello" not in json.dumps(error)
    assert [chat["id"] for chat in own.json()["chats"]] == [chat_id]
    conversation = await site.store.find_by_id(chat_id)
    assert conversation is not None and conversation.rating is None


async def test_a_rating_that_is_not_json_is_415(site: Site) -> None:
    chat_id = fresh_id("rated")
    async with visitor(site) as client:
        assert (await ask(client, site, chat_id)).status_code == 200
        with anyio.fail_after(HANG_GUARD):
            response = await client.post(
                f"/api/chats/{chat_id}/rating",
                content='{"rating": 5}',
                headers={"origin": site.url, "content-type": "text/plain"},
            )
    assert_json_error(response, 415, "unsupported_media_type")
    conversation = await site.store.find_by_id(chat_id)
    assert conversation is not None and conversation.rating is None


async def test_the_page_is_refused_to_a_rebound_host_and_never_framed(site: Site) -> None:
    async with httpx.AsyncClient(base_url=site.url) as client:
        with anyio.fail_after(HANG_GUARD):
            rebound = await client.get("/", headers={"host": "rebound.evil.example"})
            page = await client.get("/", headers={"host": f"localhost:{site.url.rsplit(':')[-1]}"})
    assert_json_error(rebound, 421, "unknown_host")
    assert "set-cookie" not in rebound.headers
    assert page.status_code == 200
    assert page.headers["x-frame-options"] == "DENY"
    assert page.headers["content-security-policy"] == "frame-ancestors 'none'"


async def test_a_wrong_method_is_a_json_405_on_every_endpoint(site: Site) -> None:
    async with visitor(site) as client:
        with anyio.fail_after(HANG_GUARD):
            answers = [
                await client.get("/api/chat"),
                await client.delete("/api/chats"),
                await client.put("/api/chats/x/rating"),
            ]
    for response, allow in zip(answers, ["POST", "GET", "POST"], strict=True):
        assert_json_error(response, 405, "method_not_allowed")
        assert response.headers["allow"] == allow


# --------------------------------------------------------------------------------------
# Host names
# --------------------------------------------------------------------------------------


async def test_the_server_answers_its_own_address_localhost_and_allowed_hosts() -> None:
    app = create_chat_app(Counting(), allowed_hosts=["chat.example.com"])
    body = json.dumps(chat_body("c")).encode()

    async def status(host: str, server: tuple[str, int] = ("10.0.0.5", 8000)) -> int:
        headers = [("host", host), ("content-type", "application/json")]
        with anyio.fail_after(HANG_GUARD):
            return (await call_asgi(app, body, headers=headers, server=server)).status

    # The address the connection came in on (a LAN address when bound to 0.0.0.0).
    assert await status("10.0.0.5:8000") == 200
    assert await status("10.0.0.6:8000") == 421
    assert await status("localhost:8000") == 200
    assert await status("LOCALHOST") == 200
    assert await status("127.0.0.1:9999") == 200  # loopback, through a port forward
    assert await status("[::1]:8000") == 200
    assert await status("chat.example.com") == 200
    assert await status("Chat.Example.Com:443") == 200
    assert await status("[fe80::1]:8000", server=("fe80::1", 8000)) == 200
    for hostile in ("evil.example", "localhost.evil.example", "10.0.0.5.nip.io", "a b", "x@y"):
        assert await status(hostile) == 421, hostile
    anything = create_chat_app(Counting(), allowed_hosts=["*"])
    with anyio.fail_after(HANG_GUARD):
        result = await call_asgi(
            anything,
            body,
            headers=[("host", "proxied.example"), ("content-type", "application/json")],
        )
    assert result.status == 200


async def test_an_allowed_host_is_its_own_origin() -> None:
    app = create_chat_app(Counting(), allowed_hosts=["chat.example.com"])
    body = json.dumps(chat_body("c")).encode()
    headers = [
        ("host", "chat.example.com"),
        ("origin", "https://chat.example.com"),
        ("content-type", "application/json"),
    ]
    with anyio.fail_after(HANG_GUARD):
        ok = await call_asgi(app, body, headers=headers)
        other = await call_asgi(
            app, body, headers=[*headers[:1], ("origin", "https://other.example.com"), headers[2]]
        )
    assert ok.status == 200
    assert other.status == 403


# --------------------------------------------------------------------------------------
# The token
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def token_site() -> Iterator[Site]:
    with site_of(token=TOKEN) as served:
        yield served


@pytest.mark.parametrize(
    ("authorization", "words"),
    [
        (None, "requires a token"),
        (f"Bearer {TOKEN[:-1]}x", "not valid"),
        (f"Bearer {TOKEN}extra", "not valid"),
        (f"Basic {TOKEN}", "not valid"),
        (TOKEN, "not valid"),
        ("Bearer", "not valid"),
    ],
    ids=["missing", "wrong", "longer", "another scheme", "no scheme", "empty"],
)
async def test_a_missing_or_wrong_token_is_401(
    token_site: Site, authorization: str | None, words: str
) -> None:
    site = token_site
    locked = fresh_id("locked")
    before = site.adapter.started
    headers = page_headers(site)
    if authorization is not None:
        headers["authorization"] = authorization
    async with visitor(site) as client:
        with anyio.fail_after(HANG_GUARD):
            chat = await client.post(
                "/api/chat", content=json.dumps(chat_body(locked)), headers=headers
            )
            listed = await client.get("/api/chats", headers=headers)
    for response in (chat, listed):
        error = assert_json_error(response, 401, "unauthorized")
        assert words in error["message"]
        assert response.headers["www-authenticate"] == 'Bearer realm="ai_chat"'
    assert site.adapter.started == before
    assert await site.store.find_by_id(locked) is None
    async with visitor(site) as client:
        headers = {**page_headers(site), "authorization": f"bearer  {TOKEN}"}
        with anyio.fail_after(HANG_GUARD):
            ok = await client.post(
                "/api/chat", content=json.dumps(chat_body(fresh_id("open"))), headers=headers
            )
    assert ok.status_code == 200
    assert site.adapter.started == before + 1


async def test_the_page_itself_needs_no_token_and_asks_for_it(token_site: Site) -> None:
    async with httpx.AsyncClient(base_url=token_site.url) as client:
        with anyio.fail_after(HANG_GUARD):
            page = await client.get("/")
    assert page.status_code == 200
    assert '<meta name="ai-chat-token" content="required">' in page.text
    assert TOKEN not in page.text


# --------------------------------------------------------------------------------------
# Visitor cookies
# --------------------------------------------------------------------------------------


def cookie_of(response: httpx.Response) -> tuple[str, str, str]:
    """The visitor cookie a response sets: name, value, and the whole header."""
    [header] = response.headers.get_list("set-cookie")
    name, _, rest = header.partition("=")
    return name, rest.split(";", 1)[0], header


async def test_the_visitor_cookie_is_httponly_samesite_lax_and_signed(site: Site) -> None:
    async with httpx.AsyncClient(base_url=site.url) as client:
        with anyio.fail_after(HANG_GUARD):
            first = await client.get("/")
            again = await client.get("/")
    name, value, header = cookie_of(first)
    assert name.startswith("ai_chat_")
    attributes = {part.strip().lower() for part in header.split(";")[1:]}
    assert {"httponly", "samesite=lax", "path=/"} <= attributes
    assert "secure" not in attributes  # plain http on loopback; https adds it
    assert not any(a.startswith("max-age") for a in attributes)  # a random secret: a session cookie
    visitor_id, _, signature = value.partition(".")
    assert len(visitor_id) == 22 and len(signature) == 43
    # A browser that has a valid cookie keeps it.
    assert "set-cookie" not in again.headers


def tampered(value: str) -> str:
    last = value[-1]
    return value[:-1] + ("A" if last != "A" else "B")


async def test_a_tampered_cookie_is_refused_and_replaced() -> None:
    with site_of(secret=SECRET) as site:
        async with visitor(site) as client:
            assert (await ask(client, site, "mine")).status_code == 200
            [(name, value)] = client.cookies.items()
        visitor_id = value.split(".")[0]
        forged = [
            tampered(value),  # the signature changed
            ("B" if value[0] != "B" else "C") + value[1:],  # another id, the same signature
            visitor_id,  # no signature
            value + ".x",
            "",
            "x" * 4000,
        ]
        before = site.adapter.started
        fresh = ""
        async with httpx.AsyncClient(base_url=site.url) as client:
            for bad in forged:
                with anyio.fail_after(HANG_GUARD):
                    response = await client.post(
                        "/api/chat",
                        content=json.dumps(chat_body("forged")),
                        headers={**page_headers(site), **with_cookie(name, bad)},
                    )
                    listed = await client.get("/api/chats", headers=with_cookie(name, bad))
                assert_json_error(response, 403, "invalid_session")
                assert_json_error(listed, 403, "invalid_session")
                fresh_name, fresh, header = cookie_of(response)
                assert fresh_name == name and fresh not in (bad, value)
                assert "Max-Age=34560000" in header  # a given secret: 400 days
            assert site.adapter.started == before
            assert await site.store.find_by_id("forged") is None
            with anyio.fail_after(HANG_GUARD):
                # The fresh cookie set by the refusal is a new visitor, who sees nothing;
                # the original one still names its visitor.
                new = await client.get("/api/chats", headers=with_cookie(name, fresh))
                mine = await client.get("/api/chats", headers=with_cookie(name, value))
        assert new.status_code == 200 and new.json() == {"chats": []}
        assert [c["id"] for c in mine.json()["chats"]] == ["mine"]
        await assert_healthy(site)


async def test_a_cookie_signed_with_another_secret_is_refused() -> None:
    with site_of(secret="another secret of 32 bytes......") as theirs:
        async with visitor(theirs) as client:
            [(their_name, their_value)] = client.cookies.items()
    with site_of(secret=SECRET) as ours:
        async with visitor(ours) as client:
            [(name, _)] = client.cookies.items()
        assert name != their_name  # servers with other secrets do not share a cookie
        before = ours.adapter.started
        async with httpx.AsyncClient(base_url=ours.url) as client:
            with anyio.fail_after(HANG_GUARD):
                refused = await client.post(
                    "/api/chat",
                    content=json.dumps(chat_body("foreign")),
                    headers={**page_headers(ours), **with_cookie(name, their_value)},
                )
                # Their cookie under their own name means nothing here: a new visitor.
                ignored = await client.get(
                    "/api/chats", headers=with_cookie(their_name, their_value)
                )
        assert_json_error(refused, 403, "invalid_session")
        assert ignored.status_code == 200 and cookie_of(ignored)[0] == name
        assert ours.adapter.started == before
        assert await ours.store.find_by_id("foreign") is None
        await assert_healthy(ours)


async def test_two_visitors_never_see_each_others_chats(site: Site) -> None:
    chat_id = fresh_id("alice")
    async with visitor(site) as alice, visitor(site) as mallory:
        assert (await ask(alice, site, chat_id)).status_code == 200
        before = site.adapter.started
        with anyio.fail_after(HANG_GUARD):
            listed = await mallory.get("/api/chats")
            shown = await mallory.get(f"/api/chats/{chat_id}")
            rated = await mallory.post(
                f"/api/chats/{chat_id}/rating",
                content=json.dumps({"rating": 1}),
                headers=page_headers(site),
            )
        continued = await ask(mallory, site, chat_id)
        with anyio.fail_after(HANG_GUARD):
            own = await alice.get(f"/api/chats/{chat_id}")
    assert listed.json() == {"chats": []}
    assert_json_error(shown, 404, "not_found")
    assert_json_error(rated, 404, "not_found")
    assert_json_error(continued, 403, "forbidden")
    assert site.adapter.started == before
    assert [m["role"] for m in own.json()["messages"]] == ["user", "assistant"]
    conversation = await site.store.find_by_id(chat_id)
    assert conversation is not None and conversation.rating is None
    assert conversation.subject_id.startswith("visitor:")


async def test_the_subject_header_is_ignored_unless_switched_on(site: Site) -> None:
    chat_id = fresh_id("header")
    async with visitor(site) as alice, visitor(site) as mallory:
        assert (await ask(alice, site, chat_id)).status_code == 200
        owner = await site.store.find_by_id(chat_id)
        assert owner is not None
        with anyio.fail_after(HANG_GUARD):
            listed = await mallory.get(
                "/api/chats", headers={"x-ai-chat-subject": owner.subject_id}
            )
    assert listed.json() == {"chats": []}


# --------------------------------------------------------------------------------------
# An application's own authentication
# --------------------------------------------------------------------------------------


async def test_the_auth_callback_names_the_subject_or_refuses() -> None:
    users = {"Bearer t-alice": "alice"}

    async def auth(request: Request) -> str | None:
        await anyio.lowlevel.checkpoint()
        if request.headers.get("x-banned"):
            raise HTTPException(403, "banned")  # the application's own answer
        return users.get(request.headers.get("authorization", ""))

    adapter = Counting()
    store = MemoryConversationStore()
    app = create_chat_app(adapter, store=store, auth=auth)
    with running(app) as url:
        site = Site(url, adapter, store)
        async with httpx.AsyncClient(base_url=url) as client:
            headers = page_headers(site)
            with anyio.fail_after(HANG_GUARD):
                page = await client.get("/")
                refused = await client.post(
                    "/api/chat", content=json.dumps(chat_body("a")), headers=headers
                )
                banned = await client.post(
                    "/api/chat",
                    content=json.dumps(chat_body("a")),
                    headers={**headers, "x-banned": "1", "authorization": "Bearer t-alice"},
                )
                ok = await client.post(
                    "/api/chat",
                    content=json.dumps(chat_body("a")),
                    headers={**headers, "authorization": "Bearer t-alice"},
                )
    assert "set-cookie" not in page.headers  # the application decides who is who
    assert_json_error(refused, 401, "unauthorized")
    assert banned.status_code == 403
    assert ok.status_code == 200 and "set-cookie" not in ok.headers
    assert adapter.started == 1
    conversation = await store.find_by_id("a")
    assert conversation is not None and conversation.subject_id == "alice"


# --------------------------------------------------------------------------------------
# CORS for a front end on another origin
# --------------------------------------------------------------------------------------

FRONT = "http://front.example:5173"


@pytest.fixture(scope="module")
def cors_site() -> Iterator[Site]:
    with site_of(allowed_origins=[FRONT]) as served:
        yield served


async def test_a_preflight_from_an_allowed_origin_gets_exactly_its_cors_headers(
    cors_site: Site,
) -> None:
    before = cors_site.adapter.started
    async with httpx.AsyncClient(base_url=cors_site.url) as client:
        with anyio.fail_after(HANG_GUARD):
            allowed = await client.options(
                "/api/chat",
                headers={
                    "origin": FRONT,
                    "access-control-request-method": "POST",
                    "access-control-request-headers": "content-type, authorization",
                    "sec-fetch-site": "cross-site",
                },
            )
            refused = await client.options(
                "/api/chat",
                headers={"origin": EVIL, "access-control-request-method": "POST"},
            )
            reads = await client.options(
                "/api/chats", headers={"origin": FRONT, "access-control-request-method": "GET"}
            )
    assert allowed.status_code == 204
    assert allowed.headers["access-control-allow-origin"] == FRONT
    assert allowed.headers["access-control-allow-credentials"] == "true"
    assert allowed.headers["access-control-allow-methods"] == "POST"
    assert allowed.headers["access-control-allow-headers"] == "content-type, authorization"
    assert allowed.headers["access-control-max-age"] == "600"
    assert "Origin" in allowed.headers["vary"]
    assert reads.headers["access-control-allow-methods"] == "GET"
    assert_json_error(refused, 403, "cross_origin")
    assert "access-control-allow-origin" not in refused.headers
    assert cors_site.adapter.started == before


async def test_a_request_from_an_allowed_origin_is_answered_with_cors_headers(
    cors_site: Site,
) -> None:
    headers = {"origin": FRONT, "sec-fetch-site": "cross-site", "content-type": "application/json"}
    async with httpx.AsyncClient(base_url=cors_site.url) as client:
        with anyio.fail_after(HANG_GUARD):
            answer = await client.post(
                "/api/chat", content=json.dumps(chat_body(fresh_id("front"))), headers=headers
            )
            bad = await client.post("/api/chat", content=b"{}", headers=headers)
            listed = await client.get("/api/chats", headers={"origin": FRONT})
            own = await client.get("/api/chats", headers={"sec-fetch-site": "same-origin"})
    for response in (answer, bad, listed):
        assert response.headers["access-control-allow-origin"] == FRONT
        assert response.headers["access-control-allow-credentials"] == "true"
        assert response.headers["vary"] == "Origin"
    assert "retry-after" in answer.headers["access-control-expose-headers"]
    assert answer.status_code == 200
    assert_json_error(bad, 422, "invalid_request")  # the front end can read the error
    assert "access-control-allow-origin" not in own.headers
    assert own.headers["vary"] == "Origin"


# --------------------------------------------------------------------------------------
# Settings
# --------------------------------------------------------------------------------------


BAD_SETTINGS: list[tuple[dict[str, object], str]] = [
    ({"allowed_origins": ["front.example"]}, "allowed_origins"),
    ({"allowed_origins": ["https://front.example/app"]}, "allowed_origins"),
    ({"allowed_origins": ["*"]}, "allowed_origins"),
    ({"allowed_origins": ["null"]}, "allowed_origins"),
    ({"allowed_origins": ["ftp://front.example"]}, "allowed_origins"),
    ({"allowed_origins": "https://front.example"}, "allowed_origins"),
    ({"allowed_hosts": ["chat.example.com:443"]}, "allowed_hosts"),
    ({"allowed_hosts": ["https://chat.example.com"]}, "allowed_hosts"),
    ({"allowed_hosts": [""]}, "allowed_hosts"),
    ({"token": "short"}, "token"),
    ({"token": "x" * 20 + " space"}, "token"),
    ({"token": "é" * 20}, "token"),
    ({"secret": "short"}, "secret"),
    ({"secret": 12345}, "secret"),
    ({"auth": "alice"}, "auth"),
    ({"subject_header": "yes"}, "subject_header"),
    ({"answer_limits": 5}, "answer_limits"),
]


@pytest.mark.parametrize(("options", "parameter"), BAD_SETTINGS)
def test_bad_security_settings_are_configuration_errors(
    options: dict[str, Any], parameter: str
) -> None:
    with pytest.raises(ConfigurationError) as raised:
        create_chat_app(Counting(), **options)
    assert raised.value.parameter == parameter
    # A secret or a token is never repeated in the message.
    for secret in (options.get("token"), options.get("secret")):
        if isinstance(secret, str) and len(secret) > 3:
            assert secret not in str(raised.value)
