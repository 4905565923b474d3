"""The secret file beside the store, and a server that keeps its visitors across a restart."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import anyio
import httpx
import pytest
from starlette.applications import Starlette

from ai_chat import ConfigurationError
from ai_chat.adapters import ScriptedAdapter
from ai_chat.server import create_chat_app, load_secret
from ai_chat.store import MemoryConversationStore

from .harness import HANG_GUARD, HELLO, running

pytestmark = pytest.mark.anyio


def test_a_new_secret_file_is_random_and_only_its_owner_can_read_it(tmp_path: Path) -> None:
    path = tmp_path / "chats.db.secret"
    secret = load_secret(path)
    assert len(secret) == 64 and int(secret, 16) >= 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_secret(path) == secret  # read back, not replaced
    assert load_secret(tmp_path / "other.secret") != secret
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chats.db.secret", "other.secret"]


def test_servers_starting_at_once_read_the_same_secret(tmp_path: Path) -> None:
    path = tmp_path / "race.secret"
    found: list[bytes] = []
    start = threading.Barrier(8)

    def read() -> None:
        start.wait(HANG_GUARD)
        found.append(load_secret(path))

    threads = [threading.Thread(target=read) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(HANG_GUARD)
    assert len(found) == 8 and len(set(found)) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["race.secret"]  # no temporary left


def test_a_secret_file_others_can_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "open.secret"
    path.write_text("x" * 64)
    path.chmod(0o644)
    with pytest.raises(ConfigurationError, match=r"chmod 600"):
        load_secret(path)


@pytest.mark.parametrize("text", ["", "short", "   \n"])
def test_a_secret_file_that_holds_too_little_is_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "thin.secret"
    path.write_text(text)
    path.chmod(0o600)
    with pytest.raises(ConfigurationError, match="at least 16 bytes"):
        load_secret(path)


def test_a_secret_file_that_cannot_be_created_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="can be created"):
        load_secret(tmp_path / "no-such-folder" / "x.secret")
    folder = tmp_path / "a-folder.secret"
    folder.mkdir()
    with pytest.raises(ConfigurationError, match="readable file"):
        load_secret(folder)


def test_a_secret_the_user_wrote_is_used_as_written(tmp_path: Path) -> None:
    path = tmp_path / "mine.secret"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    with os.fdopen(fd, "w") as file:
        file.write("  my own secret of enough length  \n")
    assert load_secret(path) == b"my own secret of enough length"


async def test_visitors_keep_their_conversations_across_a_restart(tmp_path: Path) -> None:
    store = MemoryConversationStore()  # what a database keeps across the restart
    secret_file = tmp_path / "chats.db.secret"
    headers = {"content-type": "application/json", "sec-fetch-site": "same-origin"}

    def start() -> Starlette:
        return create_chat_app(ScriptedAdapter(), store=store, secret=load_secret(secret_file))

    async with httpx.AsyncClient() as browser, httpx.AsyncClient() as stranger:
        with running(start()) as url:
            with anyio.fail_after(HANG_GUARD):
                page = await browser.get(url + "/")
                answer = await browser.post(
                    url + "/api/chat", content=json.dumps(HELLO), headers=headers
                )
            assert answer.status_code == 200
            assert "Max-Age=34560000" in page.headers["set-cookie"]
        with running(start()) as url:  # a new process would read the same file
            with anyio.fail_after(HANG_GUARD):
                listed = await browser.get(url + "/api/chats")
                other = await stranger.get(url + "/api/chats")
    assert [chat["id"] for chat in listed.json()["chats"]] == ["chat-1"]
    assert other.json() == {"chats": []}
    # Without the file the server would use a random secret: the visitor is a stranger.
    with running(create_chat_app(ScriptedAdapter(), store=store)) as url:
        async with httpx.AsyncClient(cookies=browser.cookies) as again:
            with anyio.fail_after(HANG_GUARD):
                forgotten = await again.get(url + "/api/chats")
    assert forgotten.json() == {"chats": []}
