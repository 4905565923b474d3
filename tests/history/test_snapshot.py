"""Snapshots: round trips, and every kind of damage refused with its problem named."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ai_chat import ConfigurationError, LimitExceededError
from ai_chat.history import (
    SNAPSHOT_VERSION,
    DuplicateIdError,
    History,
    HistoryEnv,
    SnapshotError,
    from_snapshot,
    to_snapshot,
)
from ai_chat.history._snapshot import canonical_json, seal, unseal
from ai_chat.limits import JSONLimits

from .rich import rich_histories
from .strategies import PROPERTY

KEY = b"k" * 32


def sample() -> History:
    history = History.create(title="t", metadata={"a": 1}, env=HistoryEnv.deterministic())
    history = history.append_user("Hello")
    history = history.append_assistant(
        "Looking.", tool_calls=[{"toolCallId": "c1", "toolName": "find", "input": {"q": "é"}}]
    )
    return history.append_tool_result("c1", [1, 2.5, None, True])


def problem_of(data: str | bytes, **options: Any) -> SnapshotError:
    with pytest.raises(SnapshotError) as caught:
        from_snapshot(data, **options)
    return caught.value


def resealed(envelope: dict[str, Any], *, key: bytes | None = None) -> str:
    """The envelope with a digest (and HMAC) recomputed over what it now holds: what
    someone who changed a snapshot and knows the format (but not the key) can do."""
    sealed = f"ai_chat.snapshot\n{envelope['version']}\n{envelope['kind']}\n".encode()
    sealed += canonical_json(envelope["payload"]).encode()
    envelope["digest"] = "sha256:" + hashlib.sha256(sealed).hexdigest()
    if key is not None:
        envelope["hmac"] = "hmac-sha256:" + hmac.new(key, sealed, hashlib.sha256).hexdigest()
    return json.dumps(envelope)


# --- round trips ----------------------------------------------------------------------------


@PROPERTY
@given(rich_histories())
def test_a_snapshot_loads_as_the_history(history: History) -> None:
    text = to_snapshot(history)
    assert from_snapshot(text) == history
    assert from_snapshot(text.encode()) == history
    signed = to_snapshot(history, key=KEY)
    assert from_snapshot(signed, key=KEY) == history
    assert from_snapshot(signed) == history  # the digest is still checked


@PROPERTY
@given(rich_histories())
def test_a_reformatted_snapshot_still_loads(history: History) -> None:
    envelope = json.loads(to_snapshot(history, key=KEY))
    for text in (json.dumps(envelope, indent=2), json.dumps(envelope, sort_keys=True)):
        assert from_snapshot(text, key=KEY) == history


@PROPERTY
@given(rich_histories(), st.data())
def test_every_cut_is_refused_as_truncated(history: History, data: st.DataObject) -> None:
    text = to_snapshot(history)
    end = data.draw(st.integers(0, len(text) - 1))
    assert problem_of(text[:end]).problem == "truncated"


@PROPERTY
@given(rich_histories(), st.data())
def test_every_changed_character_is_refused(history: History, data: st.DataObject) -> None:
    text = to_snapshot(history)
    start = text.index('"payload":') + len('"payload":')
    where = data.draw(st.integers(start, len(text) - 2))
    replacement = data.draw(st.sampled_from('aZ0 :,{}[]"\\é'))
    if text[where] == replacement:
        return
    changed = text[:where] + replacement + text[where + 1 :]
    try:
        same = json.loads(changed) == json.loads(text)
    except ValueError:
        same = False
    if same:  # insignificant whitespace: the same value, which loads
        assert from_snapshot(changed) == history
        return
    with pytest.raises(SnapshotError) as caught:
        from_snapshot(changed)
    assert caught.value.problem in ("digest", "malformed", "truncated")


def test_the_same_history_gives_the_same_bytes() -> None:
    assert to_snapshot(sample()) == to_snapshot(sample())
    reordered = History.from_json(json.loads(json.dumps(sample().to_json(), sort_keys=True)))
    assert to_snapshot(reordered) == to_snapshot(sample())


def test_the_envelope_reads_as_documented() -> None:
    text = to_snapshot(sample(), key=KEY)
    assert "\n" not in text
    assert text.startswith(
        '{"format":"ai_chat.snapshot","version":1,"kind":"history","digest":"sha256:'
    )
    envelope = json.loads(text)
    assert list(envelope) == ["format", "version", "kind", "digest", "hmac", "payload"]
    assert envelope["payload"] == json.loads(json.dumps(sample().to_json()))
    assert SNAPSHOT_VERSION == 1
    payload = canonical_json(sample().to_json())
    assert text.endswith(f',"payload":{payload}}}')
    assert '"q":"é"' in payload  # UTF-8 as it is, no spaces, keys sorted


def test_loading_takes_env_and_limits() -> None:
    env = HistoryEnv.deterministic(prefix="new-")
    loaded = from_snapshot(to_snapshot(sample()), env=env)
    assert loaded.env is env
    error = problem_of(to_snapshot(sample()), limits=JSONLimits(max_chars=50))
    assert error.problem == "invalid"
    assert isinstance(error.__cause__, LimitExceededError)


# --- what is refused --------------------------------------------------------------------------


def envelope_of(history: History | None = None, *, key: bytes | None = None) -> dict[str, Any]:
    return json.loads(to_snapshot(history or sample(), key=key))


def test_a_changed_payload_fails_its_digest() -> None:
    envelope = envelope_of()
    envelope["payload"]["messages"][0]["parts"][0]["text"] = "Goodbye"
    error = problem_of(json.dumps(envelope))
    assert (error.problem, error.path) == ("digest", "$.digest")


def test_a_changed_version_or_kind_fails_the_digest() -> None:
    # Both are sealed with the payload; a version that is read needs a registered
    # migration, so the check is on unseal's own terms (current=2, one migration).
    envelope = envelope_of()
    envelope["kind"] = "tree"
    assert problem_of(json.dumps(envelope)).problem == "kind"
    with pytest.raises(SnapshotError) as caught:
        unseal(json.dumps(envelope), "tree")
    assert caught.value.problem == "digest"
    envelope = envelope_of()
    envelope["version"] = 2  # to skip a migration
    with pytest.raises(SnapshotError) as caught:
        unseal(json.dumps(envelope), "history", current=2, migrations={1: lambda k, p: p})
    assert caught.value.problem == "digest"


def test_a_resealed_change_passes_the_digest_but_not_the_hmac() -> None:
    envelope = envelope_of(key=KEY)
    envelope["payload"]["title"] = "changed"
    text = resealed(envelope)
    assert from_snapshot(text).title == "changed"  # without a key: only intact
    error = problem_of(text, key=KEY)
    assert (error.problem, error.path) == ("hmac", "$.hmac")


def test_the_wrong_key_and_a_missing_signature_are_refused() -> None:
    assert problem_of(to_snapshot(sample(), key=KEY), key=b"x" * 32).problem == "hmac"
    error = problem_of(to_snapshot(sample()), key=KEY)
    assert error.problem == "hmac"
    assert "not signed" in str(error)


def test_an_intact_but_invalid_history_is_refused_with_its_path() -> None:
    envelope = envelope_of()
    messages = envelope["payload"]["messages"]
    messages[1]["id"] = messages[0]["id"]
    error = problem_of(resealed(envelope))
    assert error.problem == "invalid"
    assert error.path == "$.payload.messages[1].id"
    assert isinstance(error.__cause__, DuplicateIdError)


REMOVE = object()


@pytest.mark.parametrize(
    ("field", "value", "problem", "path"),
    [
        ("version", 2, "version", "$.version"),
        ("version", 0, "version", "$.version"),
        ("version", "1", "malformed", "$.version"),
        ("version", True, "malformed", "$.version"),
        ("format", "other", "format", "$.format"),
        ("format", REMOVE, "malformed", "$"),
        ("digest", REMOVE, "malformed", "$"),
        ("payload", REMOVE, "malformed", "$"),
        ("digest", "md5:00", "malformed", "$.digest"),
        ("digest", "sha256:" + "0" * 64, "digest", "$.digest"),
        ("hmac", "nope", "malformed", "$.hmac"),
        ("kind", "Tree!", "malformed", "$.kind"),
        ("extra", 1, "malformed", "$"),
    ],
)
def test_a_bad_envelope_field_is_named(field: str, value: object, problem: str, path: str) -> None:
    envelope = envelope_of()
    if value is REMOVE:
        del envelope[field]
    else:
        envelope[field] = value
    error = problem_of(json.dumps(envelope))
    assert (error.problem, error.path) == (problem, path), str(error)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "truncated"),
        ("   ", "truncated"),
        ("[1, 2]", "malformed"),
        ("not json}", "malformed"),
        ('{"format": NaN}', "malformed"),
        ("[" * 100_000 + "]" * 100_000 + "}", "malformed"),
        ('{"a": 1}}', "malformed"),
    ],
)
def test_text_that_is_no_envelope_is_refused(text: str, problem: str) -> None:
    assert problem_of(text).problem == problem


def test_bytes_that_are_not_utf8_are_refused() -> None:
    error = problem_of(b'{"format": "\xff"}')
    assert error.problem == "malformed"
    assert "UTF-8" in str(error)


def test_a_payload_no_writer_produces_fails_its_digest() -> None:
    envelope = envelope_of()
    text = json.dumps(envelope).replace('"Hello"', '"\\ud800"')
    assert problem_of(text).problem == "digest"


def test_arguments_are_checked() -> None:
    for key in (b"short", "k" * 32, 123):
        with pytest.raises(ConfigurationError) as caught:
            to_snapshot(sample(), key=key)  # type: ignore[arg-type]
        assert "k" * 32 not in str(caught.value)  # the key is never shown
    with pytest.raises(ConfigurationError):
        from_snapshot(to_snapshot(sample()), key=b"short")
    with pytest.raises(ConfigurationError):
        from_snapshot(123)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError):
        to_snapshot("history")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError):
        seal("Not A Kind", {})


def test_error_messages_are_bounded() -> None:
    envelope = envelope_of()
    envelope["format"] = "x" * 1_000_000
    assert len(str(problem_of(json.dumps(envelope)))) < 400


# --- versions and migrations ------------------------------------------------------------------


def test_an_older_version_is_migrated_by_its_registered_function() -> None:
    # As ai_chat with format version 2 would read a version 1 snapshot.
    calls: list[tuple[str, int]] = []

    def one_to_two(kind: str, payload: Any) -> Any:
        calls.append((kind, len(payload["messages"])))
        return {**payload, "title": "migrated"}

    text = to_snapshot(sample())
    payload = unseal(text, "history", current=2, migrations={1: one_to_two})
    assert calls == [("history", 3)]
    assert payload["title"] == "migrated"


def test_a_missing_migration_is_refused() -> None:
    with pytest.raises(SnapshotError) as caught:
        unseal(to_snapshot(sample()), "history", current=3, migrations={1: lambda k, p: p})
    assert caught.value.problem == "version"
    assert "no migration from snapshot format version 2 to 3" in str(caught.value)


def test_a_migration_runs_only_after_the_digest_is_checked() -> None:
    envelope = envelope_of()
    envelope["payload"]["title"] = "changed"
    ran: list[int] = []
    with pytest.raises(SnapshotError) as caught:
        unseal(
            json.dumps(envelope), "history", current=2, migrations={1: lambda k, p: ran.append(1)}
        )
    assert caught.value.problem == "digest"
    assert ran == []


def test_no_migration_is_registered_below_the_floor() -> None:
    from ai_chat.history._snapshot import MIGRATIONS

    assert dict(MIGRATIONS) == {}
    with pytest.raises(TypeError):
        MIGRATIONS[0] = lambda k, p: p  # type: ignore[index]
