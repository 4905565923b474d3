"""The chat page in headless Chromium against a real server on loopback.

A uvicorn server (in a thread) serves ``create_chat_app`` over an adapter that records
every request and how each answer ended. ``tests/js/browser_chat.mjs`` drives the page
through playwright-core and reports what the page showed; the assertions are here.
"""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Generator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
import uvicorn

from ai_chat import AbortSignal
from ai_chat.adapters import ScriptedAdapter, default_script
from ai_chat.server import create_chat_app
from ai_chat.store import MemoryConversationStore
from ai_chat.types import ChatRequest

ROOT = Path(__file__).resolve().parents[2]
DRIVER = ROOT / "tests" / "js" / "browser_chat.mjs"
# Hang guards, never performance assertions.
DRIVER_TIMEOUT = 120
SERVER_TIMEOUT = 10.0

TOOL_OUTPUT = {"results": [{"title": "ai_chat", "url": "https://example.com/ai_chat"}]}
SLOW_WORDS = [f"word{index}" for index in range(400)]
SLOW_TEXT = " ".join(SLOW_WORDS)
SLOW_DELAY = 0.05  # 20 s for the whole slow answer: it must be stopped long before
SECRET = "secret internal detail 42"
MAX_BODY = 64 * 1024
XSS = '<img src=x onerror="window.__xss = 1"><b>bold</b>'


def with_tool_output(request: ChatRequest) -> list[Mapping[str, object]]:
    """The scripted default answer, with the tool call's output added (as a provider-run tool's)."""
    events: list[Mapping[str, object]] = []
    for event in default_script(request):
        events.append(event)
        if event["type"] == "tool-input-available":
            events.append(
                {
                    "type": "tool-output-available",
                    "toolCallId": event["toolCallId"],
                    "output": TOOL_OUTPUT,
                    "providerExecuted": True,
                }
            )
    return events


def slow_script() -> list[Mapping[str, object]]:
    words = [w + " " for w in SLOW_WORDS[:-1]] + [SLOW_WORDS[-1]]
    return [
        {"type": "start"},
        {"type": "text-start", "id": "t"},
        *({"type": "text-delta", "id": "t", "delta": word} for word in words),
        {"type": "text-end", "id": "t"},
        {"type": "finish", "finishReason": "stop"},
    ]


async def failing(request: ChatRequest, signal: AbortSignal) -> AsyncIterator[Mapping[str, object]]:
    yield {"type": "start"}
    yield {"type": "text-start", "id": "t"}
    yield {"type": "text-delta", "id": "t", "delta": "Partial answer"}
    raise RuntimeError(SECRET)


@dataclass
class Ending:
    said: str
    outcome: str  # "completed" or the exception that ended the adapter
    reason: str | None  # the abort signal's reason at that moment


class ObservedAdapter:
    """Answers by the last user text (see tests/js/browser_chat.mjs) and records endings.

    It runs in the server's thread; the test reads what it recorded once ``slow_ended``
    is set or the driver is done.
    """

    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []
        self.endings: list[Ending] = []
        self.slow_ended = threading.Event()

    async def stream(
        self, request: ChatRequest, signal: AbortSignal
    ) -> AsyncIterator[Mapping[str, object]]:
        self.requests.append(request)
        said = " ".join(
            cast(str, part.get("text", ""))
            for part in request["messages"][-1]["parts"]
            if part["type"] == "text"
        )
        if said.startswith("slow"):
            inner = ScriptedAdapter(slow_script(), delay=SLOW_DELAY).stream(request, signal)
        elif said == "fail":
            inner = failing(request, signal)
        else:
            inner = ScriptedAdapter(with_tool_output(request), delay=0.01).stream(request, signal)
        outcome = "completed"
        try:
            async for event in inner:
                yield event
        except BaseException as exc:
            outcome = type(exc).__name__
            raise
        finally:
            self.endings.append(Ending(said, outcome, signal.reason))
            if said.startswith("slow"):
                self.slow_ended.set()


@contextmanager
def running(app: Any) -> Generator[str]:
    """Serve ``app`` with uvicorn on a free loopback port, in a thread; yields the base URL."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = cast("tuple[str, int]", listener.getsockname())[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + SERVER_TIMEOUT
        while not server.started and thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert server.started, "uvicorn did not start"
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(SERVER_TIMEOUT)
        listener.close()
        assert not thread.is_alive(), "uvicorn did not stop"


def drive(
    node: str, chromium: str, base: str, scenario: str = "page", *extra: str
) -> dict[str, Any]:
    result = subprocess.run(
        [node, str(DRIVER), base, chromium, scenario, *extra],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=DRIVER_TIMEOUT,
        check=False,
    )
    if result.returncode != 0:
        pytest.fail(f"the browser driver failed ({result.returncode}):\n{result.stderr}")
    return cast("dict[str, Any]", json.loads(result.stdout))


@pytest.fixture(scope="module")
def session(
    node: str, chromium: str, playwright_core: Path
) -> tuple[dict[str, Any], ObservedAdapter]:
    """One browser session through every scenario; the tests below check its parts."""
    adapter = ObservedAdapter()
    with running(create_chat_app(adapter, max_body_bytes=MAX_BODY)) as base:
        seen = drive(node, chromium, base)
        # The stop reached the server: the slow answer's adapter ended (bounded wait).
        assert adapter.slow_ended.wait(SERVER_TIMEOUT), "the server never stopped the slow answer"
    return seen, adapter


def test_the_page_loads_without_console_errors(
    session: tuple[dict[str, Any], ObservedAdapter],
) -> None:
    seen, _ = session
    assert seen["pageStatus"] == 200
    assert seen["contentType"].startswith("text/html")
    # No CSP violation or script error was logged; the one failed request is the refused one.
    [problem] = seen["problems"]
    assert problem.startswith("Failed to load resource: the server responded with a status of 413")


def test_an_answer_streams_into_the_page(session: tuple[dict[str, Any], ObservedAdapter]) -> None:
    seen, _ = session
    hello = seen["hello"]
    assert hello["status"] == "ready"
    assert hello["text"].startswith('You said: "Hello". This answer comes from the offline')
    final = len(hello["text"])
    # The text grew in many steps while it streamed, not in one piece at the end.
    partial = {length for length in hello["lengths"] if 0 < length < final}
    assert len(partial) >= 5, hello["lengths"]
    assert hello["finish"].startswith("finish: tool-calls · tokens: 1 in, ")


def test_reasoning_is_shown_collapsed(session: tuple[dict[str, Any], ObservedAdapter]) -> None:
    hello = session[0]["hello"]
    assert hello["reasoningOpen"] is False
    assert hello["reasoningVisible"] is False
    assert hello["reasoningSummary"] == "Reasoning"
    assert hello["reasoningText"].startswith("The user wrote 1 word. I will answer, then look")


def test_a_tool_call_shows_its_input_and_output(
    session: tuple[dict[str, Any], ObservedAdapter],
) -> None:
    hello = session[0]["hello"]
    assert hello["toolName"] == "search"
    assert hello["toolState"] == "output-available"
    assert json.loads(hello["toolInput"]) == {"query": "Hello"}
    assert json.loads(hello["toolOutput"]) == TOOL_OUTPUT
    assert hello["toolOutputVisible"] is True


def test_stop_aborts_the_request_and_the_server_cancels_the_answer(
    session: tuple[dict[str, Any], ObservedAdapter],
) -> None:
    seen, adapter = session
    slow = seen["slow"]
    assert slow["stopEnabledWhileStreaming"] is True
    assert slow["status"] == "stopped"
    assert slow["notice"] == "Stopped."
    assert slow["stopEnabledAfter"] is False
    assert slow["sendEnabledAfter"] is True
    # Stopped mid-way: part of the answer, and nothing more after the stop.
    shown = slow["textAtStop"]
    assert len(shown.split()) >= 5
    assert SLOW_TEXT.startswith(shown)
    assert len(shown) < len(SLOW_TEXT)
    assert slow["textLater"] == shown
    # The server saw the disconnect: the adapter was aborted and cancelled, not completed.
    [ending] = [e for e in adapter.endings if e.said.startswith("slow")]
    assert ending.outcome in ("CancelledError", "GeneratorExit")
    assert ending.reason is not None


def test_an_error_is_shown_masked(session: tuple[dict[str, Any], ObservedAdapter]) -> None:
    seen, adapter = session
    error = seen["error"]
    assert error["status"] == "error"
    assert error["text"] == "Partial answer"
    assert error["alert"] == "The server reported an error: An error occurred."
    assert SECRET not in json.dumps(seen)
    [ending] = [e for e in adapter.endings if e.said == "fail"]
    assert ending.outcome == "RuntimeError"


def test_a_refused_request_shows_the_servers_reason(
    session: tuple[dict[str, Any], ObservedAdapter],
) -> None:
    seen, adapter = session
    refused = seen["tooLarge"]
    assert refused["status"] == "error"
    assert refused["text"] is None
    assert refused["alert"] == (
        "Request failed: HTTP 413: the request body is larger than max_body_bytes=65,536 bytes"
    )
    assert refused["parts"] == 0
    # The adapter never saw it: 4 answers for 5 posts.
    assert len(adapter.requests) == 4
    assert len(seen["requests"][4]["body"]) > MAX_BODY


def test_markup_in_messages_is_text(session: tuple[dict[str, Any], ObservedAdapter]) -> None:
    markup = session[0]["markup"]
    assert markup["status"] == "ready"
    assert markup["userText"] == XSS
    assert markup["answerText"].startswith(f'You said: "{XSS}".')
    assert json.loads(markup["toolInput"]) == {"query": XSS}
    assert markup["elements"] == 0
    assert markup["xss"] is False


def test_each_turn_posts_the_whole_history_as_default_chat_transport_does(
    session: tuple[dict[str, Any], ObservedAdapter],
) -> None:
    seen, adapter = session
    posts = seen["requests"][:4]
    assert [p["url"] for p in seen["requests"]] == [posts[0]["url"]] * 5
    assert posts[0]["url"].endswith("/api/chat")
    assert all(p["headers"]["content-type"] == "application/json" for p in posts)
    bodies = [json.loads(p["body"]) for p in posts]
    assert all(set(body) == {"id", "messages", "trigger"} for body in bodies)
    assert all(body["trigger"] == "submit-message" for body in bodies)
    assert len({body["id"] for body in bodies}) == 1
    assert [len(body["messages"]) for body in bodies] == [1, 3, 5, 7]
    last = bodies[-1]["messages"]
    assert [m["role"] for m in last] == ["user", "assistant"] * 3 + ["user"]
    assert len({m["id"] for m in last}) == 7
    assert last[-1]["parts"] == [{"type": "text", "text": XSS}]
    # The first answer went back whole: its id from the server, reasoning, text, the tool.
    first = last[1]
    assert first["id"].startswith("msg-")
    kinds = [part["type"] for part in first["parts"]]
    assert kinds == ["step-start", "reasoning", "text", "tool-search"]
    tool = first["parts"][3]
    assert tool["state"] == "output-available"
    assert tool["input"] == {"query": "Hello"}
    assert tool["output"] == TOOL_OUTPUT
    # The stopped answer went back as far as it had got.
    stopped = [part for part in last[3]["parts"] if part["type"] == "text"]
    assert [part["text"] for part in stopped] == [seen["slow"]["textAtStop"]]
    # ... and the server handed that history to the adapter.
    history = adapter.requests[-1]["messages"]
    assistant_texts = [
        cast(str, part.get("text"))
        for message in history
        if message["role"] == "assistant"
        for part in message["parts"]
        if part["type"] == "text"
    ]
    assert seen["slow"]["textAtStop"] in assistant_texts
    assert "Partial answer" in assistant_texts
    assert [e.outcome for e in adapter.endings if e.said in ("Hello", XSS)] == [
        "completed",
        "completed",
    ]


def test_the_endpoint_url_is_an_escaped_attribute() -> None:
    from ai_chat.server._page import CHAT_PAGE_HTML, chat_page_html

    assert '<meta name="ai-chat-api" content="api/chat">' in CHAT_PAGE_HTML
    hostile = chat_page_html('x"><script>alert(1)</script>')
    assert (
        '<meta name="ai-chat-api" content="x&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;">'
        in (hostile)
    )
    assert hostile.count("<script>") == 1


# --------------------------------------------------------------------------------------
# With a conversation store: reload, list, new chat, switch back
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stored(node: str, chromium: str, playwright_core: Path) -> dict[str, Any]:
    store = MemoryConversationStore()
    with running(create_chat_app(ObservedAdapter(), store=store)) as base:
        return drive(node, chromium, base, "store")


def test_only_a_server_with_a_store_gives_the_page_its_chats_url() -> None:
    from ai_chat.server._page import CHAT_PAGE_HTML

    # Without one the page never asks (no 404 in the console: see the first session).
    assert '<meta name="ai-chat-chats" content="">' in CHAT_PAGE_HTML
    store = MemoryConversationStore()
    app = create_chat_app(ScriptedAdapter(), store=store, chats_path="/v1/chats")
    with running(app) as base:
        page = httpx.get(base + "/", timeout=SERVER_TIMEOUT).text
    assert '<meta name="ai-chat-chats" content="v1/chats">' in page


def test_the_store_page_loads_cleanly_with_an_empty_list(stored: dict[str, Any]) -> None:
    assert stored["problems"] == []
    empty = stored["empty"]
    assert empty["listHidden"] is False
    assert empty["chats"] == [] and empty["messages"] == [] and empty["hash"] == ""


def test_a_reload_restores_the_conversation(stored: dict[str, Any]) -> None:
    sent, reloaded = stored["sent"], stored["reloaded"]
    chat_id = stored["requests"][0]["id"]
    assert sent["hash"] == "#" + chat_id
    assert reloaded["hash"] == sent["hash"]
    # What was shown while streaming is shown again after the reload.
    assert reloaded["messages"] == sent["messages"]
    user, answer = reloaded["messages"]
    assert user == {"role": "user", "texts": ["Hello"], "reasoning": [], "tools": []}
    assert answer["texts"][0].startswith('You said: "Hello". This answer comes from the offline')
    assert answer["reasoning"][0].startswith("The user wrote 1 word.")
    [tool] = answer["tools"]
    assert tool["name"] == "search" and tool["state"] == "output-available"
    assert json.loads(tool["input"]) == {"query": "Hello"}
    assert json.loads(tool["output"]) == TOOL_OUTPUT
    assert reloaded["chats"] == [{"title": "Hello", "href": sent["hash"], "current": "page"}]


def test_new_chat_starts_another_conversation_and_the_list_shows_both(
    stored: dict[str, Any],
) -> None:
    fresh, second = stored["fresh"], stored["second"]
    assert fresh["messages"] == [] and fresh["hash"] == ""
    first_id, second_id = stored["requests"][0]["id"], stored["requests"][1]["id"]
    assert first_id != second_id
    assert second["hash"] == "#" + second_id
    assert [c["title"] for c in second["chats"]] == ["Second chat", "Hello"]
    assert stored["requests"][1]["messages"][0]["parts"] == [
        {"type": "text", "text": "Second chat"}
    ]
    assert len(stored["requests"][1]["messages"]) == 1


def test_switching_back_and_continuing_a_restored_chat(stored: dict[str, Any]) -> None:
    switched, continued = stored["switched"], stored["continued"]
    assert switched["messages"] == stored["reloaded"]["messages"]
    first_id = stored["requests"][0]["id"]
    follow_up = stored["requests"][2]
    # The restored history went back with the new message, under the first chat's id.
    assert follow_up["id"] == first_id
    assert [m["role"] for m in follow_up["messages"]] == ["user", "assistant", "user"]
    assert follow_up["messages"][2]["parts"] == [{"type": "text", "text": "And more"}]
    assert [m["role"] for m in continued["messages"]] == ["user", "assistant"] * 2
    assert continued["messages"][2]["texts"] == ["And more"]
    assert continued["messages"][3]["texts"][0].startswith('You said: "And more".')
    assert [c["title"] for c in continued["chats"]] == ["Hello", "Second chat"]


# --------------------------------------------------------------------------------------
# With a token: the page asks for it once per tab
# --------------------------------------------------------------------------------------

TOKEN = "the-page-test-token-0123456789"


@pytest.fixture(scope="module")
def with_token(
    node: str, chromium: str, playwright_core: Path
) -> tuple[dict[str, Any], ObservedAdapter]:
    adapter = ObservedAdapter()
    app = create_chat_app(adapter, store=MemoryConversationStore(), token=TOKEN)
    with running(app) as base:
        return drive(node, chromium, base, "token", TOKEN), adapter


def test_the_page_asks_for_the_token_before_any_request(
    with_token: tuple[dict[str, Any], ObservedAdapter],
) -> None:
    asked = with_token[0]["asked"]
    assert asked == {"visible": True, "note": "", "status": "token", "calls": 0}


def test_a_wrong_token_is_refused_and_asked_again(
    with_token: tuple[dict[str, Any], ObservedAdapter],
) -> None:
    seen, adapter = with_token
    wrong = seen["wrong"]
    assert wrong["visible"] is True
    assert wrong["note"] == "The server did not accept the token: enter it again."
    first = seen["calls"][0]
    assert first == {
        "method": "GET",
        "path": "/api/chats",
        "authorization": "Bearer a-wrong-token-0000000000",
    }
    # The one failed request is the refused one; the adapter never saw it.
    [problem] = seen["problems"]
    assert "status of 401" in problem
    assert [e.said for e in adapter.endings] == ["Hello"]


def test_with_the_right_token_the_page_answers_and_keeps_it_in_this_tab_only(
    with_token: tuple[dict[str, Any], ObservedAdapter],
) -> None:
    seen, _ = with_token
    assert seen["answered"]["status"] == "ready"
    assert seen["answered"]["text"].startswith('You said: "Hello".')
    assert seen["kept"] == {"session": TOKEN, "local": 0, "cookie": ""}
    # Every request after the right token carried it.
    after = seen["calls"][1:]
    assert after and all(call["authorization"] == f"Bearer {TOKEN}" for call in after)
    assert {call["path"] for call in after} >= {"/api/chat", "/api/chats"}
    reloaded = seen["reloaded"]
    assert reloaded["visible"] is False and reloaded["status"] == "ready"
    assert [m["role"] for m in reloaded["shown"]["messages"]] == ["user", "assistant"]
    assert seen["otherTab"]["visible"] is True and seen["otherTab"]["session"] is None


def test_the_visitor_cookie_is_httponly_and_lax_in_the_browser(
    with_token: tuple[dict[str, Any], ObservedAdapter],
) -> None:
    [cookie] = with_token[0]["cookies"]
    assert cookie["name"].startswith("ai_chat_")
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Lax" and cookie["path"] == "/"
