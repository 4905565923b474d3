"""``ai-chat export`` and ``ai-chat import`` against real stores.

The commands' store functions run against the memory store, SQLite and PostgreSQL (the
throwaway server of conftest.py); the command line itself through ``main()`` with
captured output against SQLite and PostgreSQL (a memory store lives only as long as one
command, so the command line refuses it), and once as a real subprocess.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.parse
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import anyio
import psycopg.conninfo
import pytest
from server.harness import HANG_GUARD, call_asgi

from ai_chat._cli import main
from ai_chat._cli.provider import CommandError
from ai_chat._cli.transfer import history_of, load_history, store_history
from ai_chat.adapters import ScriptedAdapter
from ai_chat.history import (
    History,
    HistoryEnv,
    from_markdown,
    from_snapshot,
    to_markdown,
    to_snapshot,
)
from ai_chat.server import create_chat_app
from ai_chat.store import (
    ConversationStore,
    DuplicateMessageError,
    MemoryConversationStore,
    PostgresConversationStore,
    SQLiteConversationStore,
)

TIMEOUT = 120  # a hang guard for the subprocess, not a performance bound


def conversation(
    conversation_id: str = "conv-1", *, title: str | None = "Order support"
) -> History:
    env = HistoryEnv.deterministic()
    history = History.create(
        title=title, metadata={"orderId": "ord_1", "aiChat": {"x": 1}}, id=conversation_id, env=env
    )
    history = history.append_user("Where is my order? I'm alice@example.com")
    history = history.append_assistant(
        "Looking.", tool_calls=[{"toolCallId": "c1", "toolName": "lookup", "input": {"id": 1}}]
    )
    history = history.append_tool_result("c1", {"status": "shipped"})
    return history.append_assistant("It has shipped.\n### Assistant\n```")


def same_content(a: History, b: History) -> None:
    """Equal but for the history's own times, which the store assigns."""
    assert (a.id, a.title, a.metadata, a.messages) == (b.id, b.title, b.metadata, b.messages)


def postgres_url(dsn: str) -> str:
    """The conninfo DSN as the postgresql:// URL that --store takes."""
    fields = psycopg.conninfo.conninfo_to_dict(dsn)
    query = urllib.parse.urlencode(
        {k: str(v) for k, v in fields.items() if k in ("host", "port", "options")},
        quote_via=urllib.parse.quote,
    )
    return f"postgresql://{fields['user']}@/{fields['dbname']}?{query}"


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.slow)])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[ConversationStore]:
    kind = cast(str, request.param)
    if kind == "memory":
        opened: ConversationStore = MemoryConversationStore()
    elif kind == "sqlite":
        opened = SQLiteConversationStore(tmp_path / "chats.db")
    else:
        opened = PostgresConversationStore(cast(str, request.getfixturevalue("postgres_dsn")))
    try:
        yield opened
    finally:
        await opened.aclose()


# --- the store functions, on every store -----------------------------------------------------


@pytest.mark.anyio
async def test_a_stored_history_loads_back(store: ConversationStore) -> None:
    history = conversation()
    target, stored = await store_history(
        store, history, conversation_id=None, context="chat", subject="alice", append=False
    )
    assert (target, stored) == ("conv-1", 4)
    record = await store.find_by_id("conv-1")
    assert record is not None
    assert record.metadata == {"orderId": "ord_1", "aiChat": {"x": 1, "title": "Order support"}}
    loaded = await load_history(store, None, "chat", "alice")
    same_content(loaded, history)
    assert loaded.created_at == record.created_at
    assert await load_history(store, "conv-1", "other", "bob") == loaded  # --id: any subject


@pytest.mark.anyio
async def test_an_existing_conversation_is_refused_unless_appending(
    store: ConversationStore,
) -> None:
    history = conversation()
    options: dict[str, Any] = {"conversation_id": None, "context": "chat", "subject": "alice"}
    shorter = History.from_json({**history.to_json(), "messages": history.messages[:2]})
    await store_history(store, shorter, append=False, **options)
    with pytest.raises(CommandError, match="already in the store: pass --append"):
        await store_history(store, history, append=False, **options)
    assert await store_history(store, history, append=True, **options) == ("conv-1", 2)
    assert await store_history(store, history, append=True, **options) == ("conv-1", 0)
    same_content(await load_history(store, "conv-1", "chat", "alice"), history)
    changed = history.update_message(
        history.messages[0]["id"], parts=[{"type": "text", "text": "edited"}]
    )
    with pytest.raises(DuplicateMessageError):
        await store_history(store, changed, append=True, **options)
    with pytest.raises(CommandError, match="another subject or context"):
        await store_history(store, history, append=True, **{**options, "subject": "bob"})


@pytest.mark.anyio
async def test_a_copy_goes_under_another_id(store: ConversationStore) -> None:
    history = conversation(title=None)
    await store_history(
        store, history, conversation_id="copy", context="chat", subject="alice", append=False
    )
    loaded = await load_history(store, "copy", "chat", "alice")
    assert (loaded.id, loaded.title, loaded.messages) == ("copy", None, history.messages)
    assert loaded.metadata == history.metadata


@pytest.mark.anyio
async def test_nothing_to_export_is_one_clear_error(store: ConversationStore) -> None:
    with pytest.raises(CommandError, match="no conversation of subject 'alice' in context 'chat'"):
        await load_history(store, None, "chat", "alice")
    with pytest.raises(CommandError, match="no conversation 'nope'"):
        await load_history(store, "nope", "chat", "alice")


@pytest.mark.anyio
async def test_a_stored_log_that_is_no_history_is_one_clear_error(
    store: ConversationStore,
) -> None:
    await store.create_conversation("chat", "alice", conversation_id="bad")
    call: dict[str, object] = {
        "type": "tool-call",
        "toolCallId": "c1",
        "toolName": "t",
        "input": {},
    }
    messages = [
        {"id": f"a{n}", "role": "assistant", "parts": [call]} for n in (1, 2)
    ]  # a store checks each message, not that tool call ids are unique
    await store.append_messages("bad", messages)
    with pytest.raises(CommandError, match=r"not a valid history: \$\.messages\[1\]"):
        await load_history(store, "bad", "chat", "alice")


@pytest.mark.anyio
async def test_the_title_key_must_be_free(store: ConversationStore) -> None:
    options: dict[str, Any] = {
        "conversation_id": None,
        "context": "chat",
        "subject": "alice",
        "append": False,
    }
    taken = History.create(metadata={"aiChat": {"title": "x"}})
    with pytest.raises(CommandError, match="would be read back as its title"):
        await store_history(store, taken, **options)
    not_an_object = History.create(title="t", metadata={"aiChat": 1})
    with pytest.raises(CommandError, match="is not an object"):
        await store_history(store, not_an_object, **options)


@pytest.mark.anyio
async def test_a_demo_server_conversation_exports(store: ConversationStore) -> None:
    # Two turns through the chat server with the offline demo adapter, as the page sends
    # them: each answer calls a tool, and each call has an id of its own.
    app = create_chat_app(ScriptedAdapter(), store=store, auth=lambda request: "anonymous")
    headers = [("content-type", "application/json")]

    async def send(messages: list[dict[str, Any]]) -> None:
        body = json.dumps({"id": "chat-1", "messages": messages, "trigger": "submit-message"})
        with anyio.fail_after(HANG_GUARD):
            result = await call_asgi(app, body.encode(), headers=headers)
        assert result.status == 200

    first = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Hello"}]}
    await send([first])
    with anyio.fail_after(HANG_GUARD):
        shown = await call_asgi(app, b"", method="GET", path="/api/chats/chat-1", headers=headers)
    earlier = cast("list[dict[str, Any]]", json.loads(shown.body)["messages"])
    await send(
        [*earlier, {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "More"}]}]
    )
    history = await load_history(store, None, "chat", "anonymous")
    assert [m["role"] for m in history.messages] == ["user", "assistant", "user", "assistant"]
    calls = [call.call["toolCallId"] for call in history.tool_interactions()]
    assert len(calls) == len(set(calls)) == 2
    assert from_markdown(to_markdown(history)) == history


def test_history_of_reads_the_title_from_the_metadata() -> None:
    from datetime import UTC, datetime

    from ai_chat.store import Conversation

    moment = datetime(2030, 1, 1, tzinfo=UTC)
    record = Conversation(
        "c", "chat", "s", moment, moment, cast(Any, {"aiChat": {"title": "T"}}), None, None, 0
    )
    history = history_of(record, ())
    assert (history.title, history.metadata, history.created_at) == ("T", {}, moment)


# --- the command line --------------------------------------------------------------------------


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def test_import_then_export_every_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = f"sqlite:{tmp_path / 'chats.db'}"
    source = tmp_path / "in.md"
    source.write_text(to_markdown(conversation()), encoding="utf-8")
    status, out, err = run(["import", str(source), "--store", store], capsys)
    assert (status, out) == (0, "")
    assert err == "ai-chat: stored 4 of 4 messages in conversation conv-1\n"

    status, out, err = run(["export", "--store", store], capsys)
    assert (status, err) == (0, "")
    same_content(from_markdown(out), conversation())

    status, out, _ = run(["export", "--store", store, "--format", "snapshot"], capsys)
    assert status == 0 and out.endswith("}\n") and out.count("\n") == 1
    same_content(from_snapshot(out), conversation())

    status, out, _ = run(
        ["export", "--store", store, "--format", "public", "--id", "conv-1"], capsys
    )
    assert status == 0
    assert json.loads(out) == [
        {
            "id": "m1",
            "role": "user",
            "parts": [{"type": "text", "text": "Where is my order? I'm [EMAIL_1]"}],
        },
        {"id": "m2", "role": "assistant", "parts": [{"type": "text", "text": "Looking."}]},
        {
            "id": "m3",
            "role": "assistant",
            "parts": [{"type": "text", "text": "It has shipped.\n### Assistant\n```"}],
        },
    ]

    target = tmp_path / "out.md"
    status, out, _ = run(["export", "--store", store, "--output", str(target)], capsys)
    assert (status, out) == (0, "")
    same_content(from_markdown(target.read_text(encoding="utf-8")), conversation())


def test_a_snapshot_imports_and_a_signed_one_needs_its_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = f"sqlite:{tmp_path / 'chats.db'}"
    key = tmp_path / "key"
    key.write_text("0123456789abcdef0123456789abcdef\n")
    signed = tmp_path / "signed.json"
    signed.write_text(to_snapshot(conversation(), key=b"0123456789abcdef0123456789abcdef"))
    status, _, err = run(["import", str(signed), "--store", store, "--key-file", str(key)], capsys)
    assert status == 0, err
    status, out, _ = run(
        ["export", "--store", store, "--format", "snapshot", "--key-file", str(key)], capsys
    )
    assert status == 0
    same_content(from_snapshot(out, key=b"0123456789abcdef0123456789abcdef"), conversation())

    unsigned = tmp_path / "unsigned.json"
    unsigned.write_text(to_snapshot(conversation("other")))
    status, _, err = run(
        ["import", str(unsigned), "--store", store, "--key-file", str(key)], capsys
    )
    assert status == 1
    assert (
        err
        == "\nai-chat: SnapshotError: $.hmac: the snapshot is not signed, and a key was given to check it\n"
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"hello", "cannot tell what the file holds"),
        (b"\xff\xfe", "is not UTF-8 text"),
        (b"---\n{}\n---\n", "MarkdownError: line 2: expected format 'ai_chat.markdown'"),
        (
            b'{"format": "ai_chat.snapshot", "version": 9',
            "SnapshotError: $: the snapshot is cut off",
        ),
    ],
)
def test_a_bad_file_is_one_line_and_status_1(
    content: bytes, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "in"
    source.write_bytes(content)
    status, out, err = run(
        ["import", str(source), "--store", f"sqlite:{tmp_path / 'c.db'}"], capsys
    )
    assert (status, out) == (1, "")
    assert message in err
    assert len(err.strip().splitlines()) == 1


def test_command_line_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = f"sqlite:{tmp_path / 'chats.db'}"
    status, _, err = run(["export", "--store", store], capsys)
    assert status == 1
    assert err == (
        "ai-chat: the store holds no conversation of subject 'anonymous' in context 'chat': "
        "pass --id (ai-chat serve gives each browser a subject of its own; the page shows a "
        "conversation's id in its address, after #), or --subject and --context\n"
    )
    status, _, err = run(["import", str(tmp_path / "missing.md"), "--store", store], capsys)
    assert status == 1 and err.startswith("ai-chat: cannot read ") and err.count("\n") == 1
    source = tmp_path / "in.md"
    source.write_text(to_markdown(conversation()))
    assert run(["import", str(source), "--store", store], capsys)[0] == 0
    status, _, err = run(["import", str(source), "--store", store], capsys)
    assert status == 1 and "already in the store: pass --append" in err
    status, _, err = run(["import", str(source), "--store", store, "--append"], capsys)
    assert status == 0 and "stored 0 of 4" in err
    status, _, err = run(
        ["import", str(source), "--store", store, "--key-file", str(source)], capsys
    )
    assert status == 1 and "Markdown has no signature" in err
    short = tmp_path / "short"
    short.write_text("abc")
    status, _, err = run(["export", "--store", store, "--key-file", str(short)], capsys)
    assert status == 1 and "holds 3 bytes; a key needs at least 16" in err
    status, _, err = run(
        ["export", "--store", store, "--output", str(tmp_path / "no" / "x")], capsys
    )
    assert status == 1 and err.startswith("ai-chat: cannot write ")


@pytest.mark.parametrize("value", ["memory", "none"])
def test_a_store_that_keeps_nothing_is_a_usage_error(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["export", "--store", value])
    assert exited.value.code == 2
    assert f"--store {value} keeps nothing between commands" in capsys.readouterr().err


@pytest.mark.slow
def test_the_command_line_with_postgres(
    postgres_dsn: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = postgres_url(postgres_dsn)
    source = tmp_path / "in.json"
    source.write_text(to_snapshot(conversation()))
    status, _, err = run(["import", str(source), "--store", store, "--subject", "alice"], capsys)
    assert status == 0, err
    status, out, err = run(
        ["export", "--store", store, "--subject", "alice", "--format", "snapshot"], capsys
    )
    assert status == 0, err
    same_content(from_snapshot(out), conversation())


@pytest.mark.slow
def test_the_real_entry_point_round_trips(tmp_path: Path) -> None:
    store = f"sqlite:{tmp_path / 'chats.db'}"
    text = to_markdown(conversation())
    imported = subprocess.run(
        [sys.executable, "-m", "ai_chat", "import", "-", "--store", store],
        input=text.encode(),
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert imported.returncode == 0, imported.stderr
    exported = subprocess.run(
        [sys.executable, "-m", "ai_chat", "export", "--store", store],
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert exported.returncode == 0, exported.stderr
    same_content(from_markdown(exported.stdout.decode("utf-8")), conversation())
    failed = subprocess.run(
        [sys.executable, "-m", "ai_chat", "export", "--store", store, "--id", "nope"],
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert failed.returncode == 1
    assert failed.stderr == b"ai-chat: the store holds no conversation 'nope'\n"
