"""create_chat_app with a conversation store: real stores (memory, SQLite in a temporary
folder, PostgreSQL on a throwaway server), the app called over ASGI in the test's own
event loop (asyncio and trio)."""

from __future__ import annotations

import copy
import json
import os
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import Any, cast

import anyio
import psycopg
import psycopg.conninfo
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from store.postgres_server import throwaway_postgres

from ai_chat import AbortSignal, AIChatAdapter, ConfigurationError
from ai_chat.adapters import ScriptedAdapter
from ai_chat.server import convert_ui_messages, create_chat_app
from ai_chat.server._response import ANSWER_NOT_SAVED
from ai_chat.store import (
    ConversationStore,
    MemoryConversationStore,
    PostgresConversationStore,
    SQLiteConversationStore,
    messages_of,
)
from ai_chat.types import ChatRequest

from .harness import HANG_GUARD, ASGIResult, Recorder, call_asgi, sse_chunks
from .scripts import EVERY_EVENT
from .test_js_client import EXPECTED_MESSAGE

pytestmark = pytest.mark.anyio

DSN_VARIABLE = "AI_CHAT_TEST_POSTGRES_DSN"
ANY_NOT_FOUND = {"error": {"type": "not_found", "message": "no conversation with this id"}}


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    given = os.environ.get(DSN_VARIABLE)
    if given:
        yield given
        return
    with throwaway_postgres() as dsn:
        yield dsn


@pytest.fixture(
    params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.needs("postgresql"))]
)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[ConversationStore]:
    kind = cast(str, request.param)
    if kind == "memory":
        opened: ConversationStore = MemoryConversationStore()
        schema = None
    elif kind == "sqlite":
        opened = SQLiteConversationStore(tmp_path / "chats.db")
        schema = None
    else:
        server = cast(str, request.getfixturevalue("postgres_url"))
        schema = f"test_{uuid.uuid4().hex}"
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{schema}"'.encode())
        dsn = psycopg.conninfo.make_conninfo(server, options=f"-c search_path={schema}")
        opened = PostgresConversationStore(dsn, max_connections=4)
    try:
        yield opened
    finally:
        await opened.aclose()
        if schema is not None:
            server = cast(str, request.getfixturevalue("postgres_url"))
            with psycopg.connect(server, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA "{schema}" CASCADE'.encode())


def app_of(adapter: AIChatAdapter, store: ConversationStore, **options: Any) -> Starlette:
    """The app over ``store``, whose subject is the ``x-ai-chat-subject`` header.

    These tests are about what is stored for whom, so each request names its subject with
    the development header, switched on explicitly here (the default, a signed visitor
    cookie, and its attacks are tested in test_security.py).
    """
    return create_chat_app(adapter, store=store, subject_header=True, **options)


def user(message_id: str, text: str) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}


def body(messages: list[dict[str, Any]], chat_id: str | None = "chat-1", **extra: Any) -> bytes:
    payload: dict[str, Any] = {"messages": messages, "trigger": "submit-message", **extra}
    if chat_id is not None:
        payload["id"] = chat_id
    return json.dumps(payload).encode()


async def post(
    app: Any, payload: bytes, subject: str | None = "alice", **kwargs: Any
) -> ASGIResult:
    headers = [("content-type", "application/json")]
    if subject is not None:
        headers.append(("x-ai-chat-subject", subject))
    with anyio.fail_after(HANG_GUARD):
        return await call_asgi(app, payload, headers=headers, **kwargs)


async def get(app: Any, path: str, subject: str | None = "alice") -> tuple[int, Any]:
    headers = [] if subject is None else [("x-ai-chat-subject", subject)]
    with anyio.fail_after(HANG_GUARD):
        result = await call_asgi(app, b"", method="GET", path=path, headers=headers)
    return result.status, json.loads(result.body)


async def stored(store: ConversationStore, chat_id: str = "chat-1") -> list[dict[str, Any]]:
    return cast("list[dict[str, Any]]", plain(messages_of(await store.load_messages(chat_id))))


def plain(value: object) -> Any:
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in cast("Mapping[str, object]", value).items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in cast("list[object]", value)]
    return value


def without_server_key(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = copy.deepcopy(messages)
    for message in out:
        metadata = message.get("metadata")
        if metadata is not None:
            metadata.pop("aiChat", None)
            if not metadata:
                del message["metadata"]
    return out


class Peeking:
    """Reads the store while answering: what the conversation held when it was called."""

    def __init__(self, store: ConversationStore, *, fail: bool = False) -> None:
        self.store = store
        self.fail = fail
        self.seen: list[list[str]] = []
        self.requests: list[ChatRequest] = []

    async def stream(
        self, request: ChatRequest, signal: AbortSignal
    ) -> AsyncIterator[Mapping[str, object]]:
        self.requests.append(request)
        held = await self.store.load_messages("chat-1")
        self.seen.append([item.message["id"] for item in held])
        yield {"type": "start", "messageId": "answer-1"}
        yield {"type": "text-start", "id": "t"}
        yield {"type": "text-delta", "id": "t", "delta": "so far"}
        if self.fail:
            raise RuntimeError("the provider failed")
        yield {"type": "text-end", "id": "t"}
        yield {"type": "finish", "finishReason": "stop"}


async def test_the_user_message_is_stored_before_the_adapter_runs(
    store: ConversationStore,
) -> None:
    adapter = Peeking(store)
    app = app_of(adapter, store)
    result = await post(app, body([user("u1", "Hello")]))
    assert result.status == 200
    assert adapter.seen == [["u1"]]
    answer_id = sse_chunks(result.body.decode())[0]["messageId"]
    assert answer_id != "answer-1" and answer_id.startswith("msg-")  # the server names it
    conversation = await store.find_by_id("chat-1")
    assert conversation is not None
    assert (conversation.context, conversation.subject_id) == ("chat", "alice")
    assert await stored(store) == [
        user("u1", "Hello"),
        {
            "id": answer_id,
            "role": "assistant",
            "parts": [{"type": "text", "text": "so far"}],
            "metadata": {"finishReason": "stop", "aiChat": {"parentId": "u1"}},
        },
    ]


async def test_a_failed_answer_is_not_stored_but_the_user_message_is(
    store: ConversationStore,
) -> None:
    app = app_of(Peeking(store, fail=True), store)
    result = await post(app, body([user("u1", "Hello")]))
    chunks = sse_chunks(result.body.decode())
    assert chunks[-1]["type"] == "error"
    assert await stored(store) == [user("u1", "Hello")]


async def test_an_aborted_answer_is_not_stored(store: ConversationStore) -> None:
    adapter = Recorder()
    app = app_of(adapter, store)
    disconnect = anyio.Event()

    def on_body(result: ASGIResult) -> None:
        if b"partial" in result.body:
            disconnect.set()

    await post(app, body([user("u1", "Hello")]), disconnect=disconnect, on_body=on_body)
    assert adapter.log == ["cancelled", "closed, aborted=True"]
    assert await stored(store) == [user("u1", "Hello")]


async def test_every_event_is_stored_as_the_ai_sdk_client_built_it(
    store: ConversationStore,
) -> None:
    app = app_of(ScriptedAdapter(EVERY_EVENT), store)
    result = await post(app, body([user("u1", "Hello")]))
    chunks = sse_chunks(result.body.decode())
    assert chunks[-1]["type"] == "finish"
    answer = {**EXPECTED_MESSAGE, "id": chunks[0]["messageId"]}
    held = await stored(store)
    # EXPECTED_MESSAGE is what the genuine AI SDK client assembled from this answer
    # (test_js_client.py): the store keeps its normalized form, text, reasoning, tool
    # calls with inputs and results, data parts, and the finish metadata.
    client = convert_ui_messages(
        [user("u1", "Hello"), answer], trigger="submit-message", message_id=None
    )
    assert without_server_key(held) == plain(client.messages)
    assert held[1]["metadata"]["aiChat"] == {"parentId": "u1"}
    kinds = [p["type"] for m in held[1:] for p in m["parts"]]
    for kind in ("reasoning", "text", "tool-call", "tool-result", "data-weather", "file"):
        assert kind in kinds
    assert held[1]["metadata"]["usage"]["totalTokens"] == 46


async def test_a_retry_of_the_same_request_stores_nothing_twice(store: ConversationStore) -> None:
    adapter = Peeking(store)
    app = app_of(adapter, store)
    first = await post(app, body([user("u1", "Hello")]))
    again = await post(app, body([user("u1", "Hello")]))
    assert first.status == again.status == 200
    answers = [sse_chunks(r.body.decode())[0]["messageId"] for r in (first, again)]
    # The user message is stored once; the retried answer is a new answer to it, which
    # replaces the first one in the conversation shown.
    assert adapter.seen == [["u1"], ["u1", answers[0]]]
    assert [m["id"] for m in await stored(store)] == ["u1", *answers]
    _, restored = await get(app, "/api/chats/chat-1")
    assert [m["id"] for m in restored["messages"]] == ["u1", answers[1]]


async def test_the_next_turn_appends_only_the_new_message(store: ConversationStore) -> None:
    app = app_of(ScriptedAdapter(), store)
    await post(app, body([user("u1", "Hello")]))
    status, restored = await get(app, "/api/chats/chat-1")
    assert status == 200
    history = [*restored["messages"], user("u2", "More")]
    result = await post(app, body(history))
    assert result.status == 200
    ids = [m["id"] for m in await stored(store)]
    assert ids[0] == "u1" and ids[2] == "u2" and len(ids) == 4


async def test_another_subjects_conversation_is_refused_and_never_shown(
    store: ConversationStore,
) -> None:
    app = app_of(ScriptedAdapter(), store)
    assert (await post(app, body([user("u1", "Secret")]))).status == 200
    refused = await post(app, body([user("u2", "Let me in")]), subject="mallory")
    assert refused.status == 403
    assert json.loads(refused.body)["error"]["type"] == "forbidden"
    assert "Secret" not in refused.body.decode()
    foreign = await get(app, "/api/chats/chat-1", subject="mallory")
    unknown = await get(app, "/api/chats/no-such-chat", subject="mallory")
    assert foreign == unknown == (404, foreign[1])
    assert foreign[1]["error"]["type"] == "not_found"
    assert await get(app, "/api/chats", subject="mallory") == (200, {"chats": []})
    # Nothing of mallory's reached the store.
    held = await stored(store)
    assert held[0]["id"] == "u1" and len(held) == 2


async def test_another_context_is_another_conversation_space(store: ConversationStore) -> None:
    support = app_of(ScriptedAdapter(), store, context="support")
    sales = app_of(ScriptedAdapter(), store, context="sales")
    assert (await post(support, body([user("u1", "Hi")]))).status == 200
    assert (await post(sales, body([user("u1", "Hi")]))).status == 403
    assert (await get(sales, "/api/chats/chat-1"))[0] == 404
    assert len((await get(support, "/api/chats"))[1]["chats"]) == 1


async def test_list_and_restore_round_trip(store: ConversationStore) -> None:
    app = app_of(ScriptedAdapter(EVERY_EVENT), store)
    await post(app, body([user("u1", "First question")], chat_id="chat-a"))
    await post(app, body([user("u1", "Second question\nwith two lines")], chat_id="chat-b"))
    status, listed = await get(app, "/api/chats")
    assert status == 200
    chats = listed["chats"]
    assert [c["id"] for c in chats] == ["chat-b", "chat-a"]  # most recently active first
    assert [c["title"] for c in chats] == ["Second question with two lines", "First question"]
    for chat in chats:
        assert chat["createdAt"].endswith("Z") and chat["updatedAt"].endswith("Z")
        assert chat["rating"] is None
    status, restored = await get(app, "/api/chats/chat-a")
    assert status == 200
    assert restored["chat"]["id"] == "chat-a"
    held_ids = [m["id"] for m in await stored(store, "chat-a")]
    ui = restored["messages"]
    assert [m["id"] for m in ui] == ["u1", held_ids[1]]
    assert "aiChat" not in ui[1]["metadata"]
    assert ui[1]["metadata"] == EXPECTED_MESSAGE["metadata"]
    # The restored messages are a request the server takes back as the stored history.
    again = convert_ui_messages(ui, trigger="submit-message", message_id=None)
    assert plain(again.messages) == without_server_key(await stored(store, "chat-a"))


async def test_regenerate_appends_a_new_answer_that_replaces_the_old_one(
    store: ConversationStore,
) -> None:
    app = app_of(ScriptedAdapter(), store)
    await post(app, body([user("u1", "Hello")]))
    _, restored = await get(app, "/api/chats/chat-1")
    old_answer = restored["messages"][1]["id"]
    regenerate = body(restored["messages"], trigger="regenerate-message", messageId=old_answer)
    result = await post(app, regenerate)
    new_answer = sse_chunks(result.body.decode())[0]["messageId"]
    assert new_answer != old_answer
    # The log keeps both (it is append-only); the conversation shows the new one.
    assert [m["id"] for m in await stored(store)] == ["u1", old_answer, new_answer]
    _, restored = await get(app, "/api/chats/chat-1")
    assert [m["id"] for m in restored["messages"]] == ["u1", new_answer]


async def test_continuing_an_answer_after_a_client_side_tool_result(
    store: ConversationStore,
) -> None:
    app = app_of(ScriptedAdapter(), store)  # ends with a tool call
    await post(app, body([user("u1", "Hello")]))
    _, restored = await get(app, "/api/chats/chat-1")
    answer = restored["messages"][1]
    tool = next(p for p in answer["parts"] if p["type"] == "tool-search")
    tool.update(state="output-available", output={"hits": 3})
    result = await post(app, body(restored["messages"], messageId=answer["id"]))
    assert result.status == 200
    ids = [m["id"] for m in await stored(store)]
    base = answer["id"]
    assert ids == ["u1", base, f"{base}:tool", f"{base}:1"]
    _, restored = await get(app, "/api/chats/chat-1")
    [_, continued] = restored["messages"]
    kinds = [p["type"] for p in continued["parts"]]
    assert continued["id"] == base and kinds.count("step-start") == 1
    assert next(p for p in continued["parts"] if p["type"] == "tool-search")["output"] == {
        "hits": 3
    }


def edit_refused(message_id: str) -> dict[str, Any]:
    """The 409 answer to an edit of the sent message ``message_id`` (until branches exist)."""
    return {
        "error": {
            "type": "edit_unsupported",
            "message": f"message {json.dumps(message_id)} was already sent with other "
            "content: editing a sent message needs branch support in the conversation "
            "store, which this server does not have yet (a later release adds branches); "
            "send the change as a new message or start a new chat",
            "messageId": message_id,
        }
    }


async def test_editing_a_sent_message_is_refused_until_the_store_has_branches(
    store: ConversationStore,
) -> None:
    adapter = Peeking(store)
    app = app_of(adapter, store)
    second = 'u2 "quoted" \u2713'
    assert (await post(app, body([user("u1", "Hello")]))).status == 200
    _, restored = await get(app, "/api/chats/chat-1")
    history = [*restored["messages"], user(second, "More")]
    assert (await post(app, body(history))).status == 200
    before = await stored(store)
    _, shown = await get(app, "/api/chats/chat-1")
    # What the AI SDK sends after an edit (sendMessage({text, messageId})): the history
    # up to the edited user message, with its id and the new text.
    for index, message_id in ((0, "u1"), (2, second)):
        edited = [*shown["messages"][:index], user(message_id, "Edited")]
        result = await post(app, body(edited, messageId=message_id))
        assert result.status == 409
        assert result.headers["content-type"] == "application/json"
        assert json.loads(result.body) == edit_refused(message_id)
    # Nothing was stored and the adapter never ran for an edit.
    assert await stored(store) == before
    assert len(adapter.requests) == 2
    # The same messages sent again unchanged are a retry, not an edit.
    retry = await post(app, body(history))
    assert retry.status == 200


async def test_a_request_without_a_chat_id_is_refused(store: ConversationStore) -> None:
    app = app_of(ScriptedAdapter(), store)
    result = await post(app, body([user("u1", "Hello")], chat_id=None))
    assert result.status == 422
    assert "id" in json.loads(result.body)["error"]["message"]
    assert await store.find_latest("chat", "alice") is None


async def test_an_answer_that_cannot_be_saved_ends_with_an_error_chunk(
    store: ConversationStore,
) -> None:
    class ClosesTheStore:
        async def stream(
            self, request: ChatRequest, signal: AbortSignal
        ) -> AsyncIterator[Mapping[str, object]]:
            yield {"type": "text-start", "id": "t"}
            yield {"type": "text-delta", "id": "t", "delta": "answer"}
            yield {"type": "text-end", "id": "t"}
            await store.aclose()  # the store goes away before the answer is saved
            yield {"type": "finish", "finishReason": "stop"}

    app = app_of(ClosesTheStore(), store)
    result = await post(app, body([user("u1", "Hello")]))
    chunks = sse_chunks(result.body.decode())
    assert chunks[-2]["type"] == "finish"
    assert chunks[-1] == {"type": "error", "errorText": ANSWER_NOT_SAVED}


async def test_an_async_subject_callback_decides_the_owner(store: ConversationStore) -> None:
    async def from_token(request: Request) -> str:
        await anyio.lowlevel.checkpoint()
        token = request.headers.get("authorization", "")
        return {"Bearer t-alice": "alice", "Bearer t-bob": "bob"}.get(token, "")

    app = create_chat_app(ScriptedAdapter(), store=store, auth=from_token)
    alice = [("content-type", "application/json"), ("authorization", "Bearer t-alice")]
    with anyio.fail_after(HANG_GUARD):
        ok = await call_asgi(app, body([user("u1", "Hi")]), headers=alice)
        # The header the default reads means nothing here.
        spoofed = await call_asgi(
            app,
            body([user("u2", "Hi")]),
            headers=[("content-type", "application/json"), ("x-ai-chat-subject", "alice")],
        )
    assert ok.status == 200
    assert spoofed.status == 400
    assert json.loads(spoofed.body)["error"]["type"] == "invalid_subject"
    conversation = await store.find_by_id("chat-1")
    assert conversation is not None and conversation.subject_id == "alice"


async def test_the_subject_header_means_nothing_unless_switched_on(
    store: ConversationStore,
) -> None:
    app = create_chat_app(ScriptedAdapter(), store=store)
    assert (await post(app, body([user("u1", "Hi")]), subject="alice")).status == 200
    conversation = await store.find_by_id("chat-1")
    assert conversation is not None and conversation.subject_id.startswith("visitor:")
    assert await get(app, "/api/chats", subject="alice") == (200, {"chats": []})
    # Switched on, a request without the header is a visitor of its own: no one shares
    # a subject such as "anonymous" any more.
    dev = app_of(ScriptedAdapter(), store, context="dev")
    assert (await post(dev, body([user("u1", "Hi")], chat_id="chat-2"), subject=None)).status == 200
    assert await get(dev, "/api/chats", subject=None) == (200, {"chats": []})
    assert await get(dev, "/api/chats/chat-2", subject=None) == (404, ANY_NOT_FOUND)


async def test_rating_a_conversation(store: ConversationStore) -> None:
    app = app_of(ScriptedAdapter(), store)
    await post(app, body([user("u1", "Hi")]))

    async def rate(payload: object, subject: str = "alice") -> tuple[int, Any]:
        with anyio.fail_after(HANG_GUARD):
            result = await call_asgi(
                app,
                json.dumps(payload).encode(),
                path="/api/chats/chat-1/rating",
                headers=[("content-type", "application/json"), ("x-ai-chat-subject", subject)],
            )
        return result.status, json.loads(result.body)

    status, answer = await rate({"rating": 5, "comment": "Great"})
    assert status == 200 and answer["chat"]["rating"] == 5
    assert (await rate({"rating": 6}))[0] == 422
    assert (await rate({"rating": True}))[0] == 422
    assert (await rate({"rating": 1}, subject="mallory"))[0] == 404
    assert (await rate({"rating": 1, "comment": "x" * 10_000}))[0] == 413
    assert (await rate(["not", "an", "object"]))[0] == 422
    with anyio.fail_after(HANG_GUARD):
        deep = await call_asgi(
            app,
            b"[" * 5000,
            path="/api/chats/chat-1/rating",
            headers=[("content-type", "application/json"), ("x-ai-chat-subject", "alice")],
        )
    assert deep.status == 400
    listed = (await get(app, "/api/chats"))[1]["chats"]
    assert listed[0]["rating"] == 5 and listed[0]["ratingComment"] == "Great"


async def test_without_a_store_there_are_no_chat_endpoints() -> None:
    app = create_chat_app(ScriptedAdapter())
    with anyio.fail_after(HANG_GUARD):
        result = await call_asgi(app, b"", method="GET", path="/api/chats")
    assert result.status == 404


def test_bad_store_settings_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match="store"):
        create_chat_app(ScriptedAdapter(), store=cast(Any, object()))
    with pytest.raises(ConfigurationError, match="context"):
        create_chat_app(ScriptedAdapter(), store=MemoryConversationStore(), context="")
    with pytest.raises(ConfigurationError, match="auth"):
        create_chat_app(ScriptedAdapter(), store=MemoryConversationStore(), auth=cast(Any, 1))
    with pytest.raises(ConfigurationError, match="chats_path"):
        create_chat_app(ScriptedAdapter(), chats_path="/api/chat")
