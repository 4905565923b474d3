"""The golden files (tests/history/golden/) load as the history they were written from.

They are what released versions of the formats wrote: a change that stops one of them
loading, or that makes the writers write other bytes for the same history, fails here.
A new format version keeps these files (they must keep loading, through a migration for
snapshots) and adds its own, written by make_golden.py.
"""

from __future__ import annotations

import json

import pytest

from ai_chat.history import SnapshotError, from_markdown, from_snapshot

from .make_golden import GOLDEN, GOLDEN_KEY, golden_history, render

SNAPSHOTS = ["history-v1.snapshot.json", "history-v1-signed.snapshot.json"]


def read(name: str) -> str:
    return (GOLDEN / name).read_bytes().decode("utf-8")


@pytest.mark.parametrize("name", SNAPSHOTS)
def test_a_golden_snapshot_loads_as_its_history(name: str) -> None:
    loaded = from_snapshot(read(name), key=GOLDEN_KEY if "signed" in name else None)
    assert loaded == golden_history()
    assert loaded.to_json() == golden_history().to_json()


def test_the_golden_markdown_reads_as_its_history() -> None:
    assert from_markdown(read("history-v1.md")) == golden_history()


def test_the_signed_golden_snapshot_needs_its_key() -> None:
    with pytest.raises(SnapshotError) as caught:
        from_snapshot(read("history-v1-signed.snapshot.json"), key=b"another-key-0123456789")
    assert caught.value.problem == "hmac"
    with pytest.raises(SnapshotError) as caught:
        from_snapshot(read("history-v1.snapshot.json"), key=GOLDEN_KEY)
    assert caught.value.problem == "hmac"


def test_the_writers_still_write_the_golden_bytes() -> None:
    for name, text in render().items():
        assert read(name) == text, f"{name}: the format changed; add a version, keep this file"


def test_the_golden_files_cover_what_a_history_holds() -> None:
    payload = json.loads(read("history-v1.snapshot.json"))["payload"]
    kinds = {part["type"] for message in payload["messages"] for part in message["parts"]}
    assert kinds == {"text", "reasoning", "file", "tool-call", "tool-result", "data-cart"}
    own = [m.get("metadata", {}).get("aiChat", {}) for m in payload["messages"]]
    assert {key for fields in own for key in fields} >= {
        "createdAt",
        "hidden",
        "streaming",
        "usage",
        "finishReason",
    }
    assert payload["title"] and payload["metadata"]
