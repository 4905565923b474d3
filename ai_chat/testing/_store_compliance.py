"""The conversation store compliance suite: pytest checks every store must pass."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from .._errors import AIChatError, ConfigurationError, LimitExceededError, ValidationError
from ..limits import FrozenDict
from ..store import (
    AppendError,
    Conversation,
    ConversationExistsError,
    ConversationNotFoundError,
    ConversationStore,
    DuplicateMessageError,
    InvalidRatingError,
    StoredMessage,
    StoreError,
    VersionConflictError,
    messages_of,
)

__all__ = ["ConversationStoreCompliance", "PersistentStoreCompliance", "StoreFactory"]

StoreFactory = Callable[[], ConversationStore]
"""Returns a store over the test's storage: empty at first, the same data on each call."""

# A guard against hangs, not a performance assertion: every check finishes in well
# under a second on a conforming store.
_HANG_GUARD = 30.0


def _user(message_id: str, text: str) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}


def _batch(prefix: str, size: int) -> list[dict[str, Any]]:
    return [_user(f"{prefix}-{n}", f"{prefix} message {n}") for n in range(size)]


def _plain(value: object) -> Any:
    """Frozen JSON as plain JSON (arrays as lists), to compare with what was given."""
    return json.loads(json.dumps(value))


def _is_utc(moment: datetime) -> bool:
    return moment.tzinfo is not None and moment.utcoffset() == timedelta(0)


def _check_log(stored: Sequence[StoredMessage], batch_size: int | None = None) -> None:
    """Sequence numbers run 1, 2, 3... and (with ``batch_size``) no batch is split."""
    assert [m.seq for m in stored] == list(range(1, len(stored) + 1)), "seq has gaps"
    ids = [m.message["id"] for m in stored]
    assert len(set(ids)) == len(ids), "a message is stored twice"
    if batch_size is not None:
        batches = Counter(i.rsplit("-", 1)[0] for i in ids)
        half = {b: n for b, n in batches.items() if n != batch_size}
        assert not half, f"incomplete batches visible: {half}"
        for index in range(0, len(ids), batch_size):
            group = {i.rsplit("-", 1)[0] for i in ids[index : index + batch_size]}
            assert len(group) == 1, "a batch's messages are not contiguous"


class ConversationStoreCompliance:
    """Subclass this in a test module to check a store against the contract.

    Provide one fixture, ``store_factory``: a callable returning a store over storage
    that is empty when the test starts (a fresh database, schema or file per test).
    The suite closes every store it gets. Your ``conftest.py`` must provide the
    ``anyio_backend`` fixture; parametrize it over ``asyncio`` and ``trio``.

    ``max_stall`` is the longest the event loop may go without running another task
    during contended writes (0.1 s by default): a correctness bound (a store that does
    blocking I/O in the loop exceeds it by far), not a benchmark. It is measured
    ``stall_attempts`` times at most (3); one attempt under the bound passes, since a
    store that blocks the loop stalls it every time (see
    :meth:`assert_loop_keeps_running`).

    Example::

        class TestMyStore(ConversationStoreCompliance):
            @pytest.fixture
            def store_factory(self, tmp_path: Path) -> StoreFactory:
                return lambda: MyStore(tmp_path / "chats.db")

    Stores that persist data subclass :class:`PersistentStoreCompliance` instead, which
    adds checks across close and reopen and of backend failures.
    """

    max_stall: float = 0.1
    stall_attempts: int = 3

    @pytest.fixture
    async def store(self, store_factory: StoreFactory) -> AsyncIterator[ConversationStore]:
        """A store from ``store_factory``, closed after the test."""
        store = store_factory()
        try:
            yield store
        finally:
            await store.aclose()

    # --- records and messages --------------------------------------------------------

    @pytest.mark.anyio
    async def test_is_a_conversation_store(self, store: ConversationStore) -> None:
        assert isinstance(store, ConversationStore)

    @pytest.mark.anyio
    async def test_round_trip_of_every_field(self, store: ConversationStore) -> None:
        metadata = {
            "userId": "ü-42",
            "org": {"name": "Ωmega 組織 🚀", "tags": ["a", ["b", {"c": None}]], "n": 1.5},
            "flags": [True, False, None, 0, -7, 1e21],
            "empty": {},
        }
        with anyio.fail_after(_HANG_GUARD):
            before = datetime.now(UTC) - timedelta(seconds=5)
            created = await store.create_conversation("admin_assistant", "org-Ω", metadata)
            assert created.context == "admin_assistant"
            assert created.subject_id == "org-Ω"
            assert _plain(created.metadata) == metadata
            assert type(created.metadata) is FrozenDict
            assert created.rating is None and created.comment is None
            assert created.version == 0
            assert _is_utc(created.created_at) and _is_utc(created.updated_at)
            assert created.updated_at == created.created_at
            assert before <= created.created_at <= datetime.now(UTC) + timedelta(seconds=5)
            assert await store.find_by_id(created.id) == created

            big = "x" * 999_000 + "é😀" * 500  # about 1 MB of content
            messages: list[dict[str, Any]] = [
                {"id": "m-system", "role": "system", "parts": [{"type": "text", "text": "Be 簡潔."}]},
                {
                    "id": "m-user",
                    "role": "user",
                    "parts": [
                        {"type": "text", "text": "Show me bookings for tomorrow 📅 \u202e ✓ \x00"},
                        {"type": "file", "mediaType": "image/png", "url": "data:image/png;base64,AA=="},
                        {"type": "data-form", "data": {"fields": [1, [2, [3]]]}, "id": "form-1"},
                    ],
                    "metadata": {"client": {"version": "1.2", "lang": "de-CH"}},
                },
                {
                    "id": "m-assistant",
                    "role": "assistant",
                    "parts": [
                        {"type": "reasoning", "text": "They want bookings.", "providerMetadata": {"anthropic": {"signature": "sig=="}}},
                        {"type": "text", "text": "Let me look that up for you."},
                        {"type": "tool-call", "toolCallId": "tc-001", "toolName": "getBookings", "input": {"date": "2026-06-13", "limit": None}},
                    ],
                    "x-unknown": {"kept": True},
                },
                {
                    "id": "m-tool",
                    "role": "tool",
                    "parts": [
                        {"type": "tool-result", "toolCallId": "tc-001", "toolName": "getBookings", "output": {"success": True, "data": []}, "isError": False}
                    ],
                },
                {"id": "m-big", "role": "assistant", "parts": [{"type": "text", "text": big}]},
            ]  # fmt: skip
            result = await store.append_messages(created.id, messages)
            assert result.seqs == (1, 2, 3, 4, 5)
            assert result.version == 5 and result.stored == 5
            stored = await store.load_messages(created.id)
            assert [m.seq for m in stored] == [1, 2, 3, 4, 5]
            assert _plain(messages_of(stored)) == messages
            for item in stored:
                assert type(item.message) is FrozenDict
                assert type(item.message["parts"]) is tuple
                assert _is_utc(item.created_at)
                assert _plain(item.to_json())["message"] == _plain(item.message)
            assert stored[4].message["parts"][0] == {"type": "text", "text": big}

            found = await store.find_by_id(created.id)
            assert found is not None
            assert found.version == 5
            assert found.created_at == created.created_at
            assert found.updated_at >= created.updated_at
            assert _plain(found.metadata) == metadata
            wire = json.loads(json.dumps(found.to_json()))
            assert wire["subjectId"] == "org-Ω" and wire["version"] == 5
            for key in ("createdAt", "updatedAt"):
                assert wire[key].endswith("Z")
                assert datetime.fromisoformat(wire[key].replace("Z", "+00:00")) == getattr(
                    found, "created_at" if key == "createdAt" else "updated_at"
                )

    @pytest.mark.anyio
    async def test_given_conversation_id(self, store: ConversationStore) -> None:
        with anyio.fail_after(_HANG_GUARD):
            created = await store.create_conversation("ctx", "subj", conversation_id="chat-1")
            assert created.id == "chat-1"
            assert await store.find_by_id("chat-1") == created
            with pytest.raises(ConversationExistsError) as caught:
                await store.create_conversation("other", "other", conversation_id="chat-1")
            assert caught.value.conversation_id == "chat-1"
            assert await store.find_by_id("chat-1") == created
            first = await store.create_conversation("ctx", "subj")
            second = await store.create_conversation("ctx", "subj")
            assert first.id != second.id

    # --- lookups -----------------------------------------------------------------------

    @pytest.mark.anyio
    async def test_lookups_are_isolated_by_context_and_subject(
        self, store: ConversationStore
    ) -> None:
        with anyio.fail_after(_HANG_GUARD):
            a1 = await store.create_conversation("support", "user-1")
            a2 = await store.create_conversation("support", "user-2")
            b1 = await store.create_conversation("sales", "user-1")
            assert await store.find_latest("support", "user-1") == a1
            assert await store.find_latest("support", "user-2") == a2
            assert await store.find_latest("sales", "user-1") == b1
            assert await store.find_latest("sales", "user-2") is None
            assert await store.find_latest("support", "user-3") is None
            assert await store.find_latest("Support", "user-1") is None
            assert await store.list_conversations("support", "user-1") == (a1,)
            assert await store.list_conversations("sales", "user-2") == ()
            assert await store.find_by_id("no-such-id") is None
            await store.append_messages(a2.id, _batch("a2", 1))
            assert await store.find_latest("support", "user-1") == a1

    @pytest.mark.anyio
    async def test_find_latest_follows_activity_not_rating(self, store: ConversationStore) -> None:
        with anyio.fail_after(_HANG_GUARD):
            first = await store.create_conversation("ctx", "subj")
            second = await store.create_conversation("ctx", "subj")
            assert await store.find_latest("ctx", "subj") == second
            await store.append_messages(first.id, _batch("first", 1))
            latest = await store.find_latest("ctx", "subj")
            assert latest is not None and latest.id == first.id
            rated = await store.rate(second.id, 5, "Very helpful!")
            assert rated.updated_at == second.updated_at and rated.version == 0
            latest = await store.find_latest("ctx", "subj")
            assert latest is not None and latest.id == first.id
            await store.append_messages(second.id, _batch("second", 1))
            # A replay stores nothing, so it is not activity either.
            await store.append_messages(first.id, _batch("first", 1))
            latest = await store.find_latest("ctx", "subj")
            assert latest is not None and latest.id == second.id
            listed = await store.list_conversations("ctx", "subj")
            assert [c.id for c in listed] == [second.id, first.id]
            assert (await store.list_conversations("ctx", "subj", limit=1))[0].id == second.id
            assert await store.list_conversations("ctx", "subj", limit=0) == ()

    @pytest.mark.anyio
    async def test_find_latest_breaks_ties_deterministically(
        self, store: ConversationStore
    ) -> None:
        with anyio.fail_after(_HANG_GUARD):
            async with anyio.create_task_group() as tg:
                for _ in range(20):
                    tg.start_soon(store.create_conversation, "ctx", "subj")
            listed = await store.list_conversations("ctx", "subj", limit=100)
            assert len(listed) == 20 and len({c.id for c in listed}) == 20
            for _ in range(3):
                assert await store.list_conversations("ctx", "subj", limit=100) == listed
                assert await store.find_latest("ctx", "subj") == listed[0]
            oldest = listed[-1]
            await store.append_messages(oldest.id, _batch("oldest", 1))
            latest = await store.find_latest("ctx", "subj")
            assert latest is not None and latest.id == oldest.id

    # --- appends -----------------------------------------------------------------------

    @pytest.mark.anyio
    async def test_sequence_numbers_are_contiguous(self, store: ConversationStore) -> None:
        with anyio.fail_after(_HANG_GUARD):
            conversation = await store.create_conversation("ctx", "subj")
            results = [
                await store.append_messages(conversation.id, _batch(f"b{i}", size))
                for i, size in enumerate([1, 3, 2])
            ]
            assert [r.seqs for r in results] == [(1,), (2, 3, 4), (5, 6)]
            assert [r.version for r in results] == [1, 4, 6]
            assert [r.stored for r in results] == [1, 3, 2]
            empty = await store.append_messages(conversation.id, [])
            assert empty.seqs == () and empty.version == 6 and empty.stored == 0
            _check_log(await store.load_messages(conversation.id))
            found = await store.find_by_id(conversation.id)
            assert found is not None and found.version == 6

    @pytest.mark.anyio
    async def test_a_batch_is_atomic(self, store: ConversationStore) -> None:
        with anyio.fail_after(_HANG_GUARD):
            conversation = await store.create_conversation("ctx", "subj")
            bad_role: list[dict[str, Any]] = [
                *_batch("ok", 2),
                {"id": "bad", "role": "robot", "parts": []},
            ]
            with pytest.raises(ValidationError) as caught:
                await store.append_messages(conversation.id, bad_role)
            assert caught.value.path == "$[2].role"
            bad_part = [
                _user("fine", "fine"),
                {"id": "x", "role": "user", "parts": [{"type": "tool-call"}]},
            ]
            with pytest.raises(ValidationError):
                await store.append_messages(conversation.id, bad_part)
            with pytest.raises(DuplicateMessageError) as duplicate:
                await store.append_messages(
                    conversation.id, [_user("same", "a"), _user("same", "a")]
                )
            assert duplicate.value.message_id == "same"
            assert await store.load_messages(conversation.id) == ()
            await store.append_messages(conversation.id, [_user("kept", "original")])
            # The second message conflicts with a stored one: the first is not stored either.
            with pytest.raises(DuplicateMessageError):
                await store.append_messages(
                    conversation.id, [_user("new", "new"), _user("kept", "changed")]
                )
            stored = await store.load_messages(conversation.id)
            assert [m.message["id"] for m in stored] == ["kept"]
            found = await store.find_by_id(conversation.id)
            assert found is not None and found.version == 1  # fmt: skip

    @pytest.mark.anyio
    async def test_replay_is_idempotent(self, store: ConversationStore) -> None:
        with anyio.fail_after(_HANG_GUARD):
            conversation = await store.create_conversation("ctx", "subj")
            first = await store.append_messages(conversation.id, _batch("a", 2))
            await store.append_messages(conversation.id, _batch("b", 1))
            replay = await store.append_messages(conversation.id, _batch("a", 2))
            assert replay.seqs == first.seqs == (1, 2)
            assert replay.stored == 0 and replay.version == 3
            # Same content with other key order, and with a stale expected version.
            reordered = [
                {"parts": [{"text": m["parts"][0]["text"], "type": "text"}], "role": "user", "id": m["id"]}
                for m in _batch("a", 2)
            ]  # fmt: skip
            again = await store.append_messages(conversation.id, reordered, expected_version=0)
            assert again.seqs == (1, 2) and again.stored == 0
            # Partly stored: the stored one keeps its seq, the new one is appended.
            mixed = await store.append_messages(
                conversation.id, [*_batch("b", 1), _user("c-0", "c")]
            )
            assert mixed.seqs == (3, 4) and mixed.stored == 1 and mixed.version == 4
            with pytest.raises(DuplicateMessageError) as caught:
                await store.append_messages(conversation.id, [_user("a-0", "different text")])
            assert caught.value.message_id == "a-0"
            assert caught.value.conversation_id == conversation.id
            stored = await store.load_messages(conversation.id)
            _check_log(stored)
            assert [m.message["id"] for m in stored] == ["a-0", "a-1", "b-0", "c-0"]
            # Message ids are per conversation.
            other = await store.create_conversation("ctx", "subj")
            assert (await store.append_messages(other.id, _batch("a", 2))).seqs == (1, 2)

    @pytest.mark.anyio
    async def test_unknown_conversations_are_not_found_and_never_created(
        self, store: ConversationStore
    ) -> None:
        with anyio.fail_after(_HANG_GUARD):
            calls: list[Callable[[], Any]] = [
                lambda: store.append_messages("missing", _batch("m", 1)),
                lambda: store.append_messages("missing", []),
                lambda: store.load_messages("missing"),
                lambda: store.load_messages("missing", after=3, limit=2),
                lambda: store.load_recent_messages("missing", 5),
                lambda: store.rate("missing", 4),
            ]
            for call in calls:
                with pytest.raises(ConversationNotFoundError) as caught:
                    await call()
                assert caught.value.conversation_id == "missing"
                assert "missing" in str(caught.value)
            assert await store.find_by_id("missing") is None

    @pytest.mark.anyio
    async def test_version_races_have_exactly_one_winner(self, store: ConversationStore) -> None:
        with anyio.fail_after(_HANG_GUARD):
            conversation = await store.create_conversation("ctx", "subj")
            version = 0

            async def write(
                writer: int,
                expected: int,
                round_number: int,
                won: list[int],
                conflicts: list[VersionConflictError],
            ) -> None:
                try:
                    await store.append_messages(
                        conversation.id,
                        _batch(f"r{round_number}w{writer}", 2),
                        expected_version=expected,
                    )
                    won.append(writer)
                except VersionConflictError as exc:
                    conflicts.append(exc)

            for round_number in range(3):
                won: list[int] = []
                conflicts: list[VersionConflictError] = []
                async with anyio.create_task_group() as tg:
                    for writer in range(10):
                        tg.start_soon(write, writer, version, round_number, won, conflicts)
                assert len(won) == 1, f"{len(won)} writers won round {round_number}"
                assert len(conflicts) == 9
                for conflict in conflicts:
                    assert conflict.expected == version and conflict.actual == version + 2
                    assert conflict.conversation_id == conversation.id
                version += 2
            _check_log(await store.load_messages(conversation.id), batch_size=2)  # fmt: skip

    @pytest.mark.anyio
    async def test_fifty_concurrent_appenders(self, store: ConversationStore) -> None:
        with anyio.fail_after(_HANG_GUARD):
            conversation = await store.create_conversation("ctx", "subj")
            returned: dict[str, tuple[int, ...]] = {}

            async def write(writer: int) -> None:
                for batch in range(3):
                    prefix = f"w{writer}b{batch}"
                    result = await store.append_messages(conversation.id, _batch(prefix, 3))
                    returned[prefix] = result.seqs

            async with anyio.create_task_group() as tg:
                for writer in range(50):
                    tg.start_soon(write, writer)
            stored = await store.load_messages(conversation.id)
            assert len(stored) == 450
            _check_log(stored, batch_size=3)
            by_id = {m.message["id"]: m.seq for m in stored}
            for prefix, seqs in returned.items():
                assert seqs == tuple(by_id[f"{prefix}-{n}"] for n in range(3))
                assert seqs == tuple(range(seqs[0], seqs[0] + 3))
            found = await store.find_by_id(conversation.id)
            assert found is not None and found.version == 450

    @pytest.mark.anyio
    async def test_readers_never_see_half_a_batch(self, store: ConversationStore) -> None:
        with anyio.fail_after(_HANG_GUARD):
            conversation = await store.create_conversation("ctx", "subj")
            writing = True
            observations = 0

            async def write(writer: int) -> None:
                for batch in range(5):
                    await store.append_messages(conversation.id, _batch(f"w{writer}b{batch}", 4))

            async def read() -> None:
                nonlocal observations
                while writing:
                    _check_log(await store.load_messages(conversation.id), batch_size=4)
                    recent = [m.seq for m in await store.load_recent_messages(conversation.id, 6)]
                    assert recent == list(
                        range(recent[0], recent[0] + len(recent)) if recent else []
                    )
                    observations += 1
                    await anyio.lowlevel.checkpoint()

            async with anyio.create_task_group() as tg:
                tg.start_soon(read)
                async with anyio.create_task_group() as writers:
                    for writer in range(10):
                        writers.start_soon(write, writer)
                writing = False
            assert observations > 0
            final = await store.load_messages(conversation.id)
            assert len(final) == 200
            _check_log(final, batch_size=4)

    @pytest.mark.anyio
    async def test_cancelled_appends_are_whole_or_absent_and_retries_converge(
        self, store: ConversationStore
    ) -> None:
        rng = random.Random(20260613)
        with anyio.fail_after(_HANG_GUARD):
            conversation = await store.create_conversation("ctx", "subj")
            cancelled = 0

            async def write(writer: int) -> None:
                nonlocal cancelled
                for batch in range(4):
                    messages = _batch(f"w{writer}b{batch}", 3)
                    # A deadline of 0 cancels at the call's first checkpoint; the others
                    # land anywhere, in the thread, the lock wait or the transaction.
                    deadline = rng.choice([0.0, rng.uniform(0, 0.004), rng.uniform(0, 0.004)])
                    with anyio.move_on_after(deadline) as scope:
                        await store.append_messages(conversation.id, messages)
                    if scope.cancelled_caught:
                        cancelled += 1
                        stored = await store.load_messages(conversation.id)
                        present = [
                            m for m in stored if m.message["id"].startswith(f"w{writer}b{batch}-")
                        ]
                        assert len(present) in (0, 3), "a cancelled batch is half stored"
                        # The retry: stores it once, or finds it already stored.
                        result = await store.append_messages(conversation.id, messages)
                        assert len(result.seqs) == 3
                        if present:
                            assert result.stored == 0
                            assert result.seqs == tuple(m.seq for m in present)

            async with anyio.create_task_group() as tg:
                for writer in range(10):
                    tg.start_soon(write, writer)
            stored = await store.load_messages(conversation.id)
            assert len(stored) == 120, "a retried batch is missing or doubled"
            _check_log(stored, batch_size=3)
            assert cancelled > 0, "no append was cancelled: the check checked nothing"

    # --- loads -------------------------------------------------------------------------

    @pytest.mark.anyio
    async def test_paging_equals_a_full_load(self, store: ConversationStore) -> None:
        with anyio.fail_after(_HANG_GUARD):
            conversation = await store.create_conversation("ctx", "subj")
            for batch in range(5):
                await store.append_messages(conversation.id, _batch(f"b{batch}", 5))
            full = await store.load_messages(conversation.id)
            assert len(full) == 25
            for size in (1, 7, 25, 100):
                pages: list[StoredMessage] = []
                after = 0
                while True:
                    page = await store.load_messages(conversation.id, after=after, limit=size)
                    assert len(page) <= size
                    if not page:
                        break
                    pages.extend(page)
                    after = page[-1].seq
                assert pages == list(full)
            assert await store.load_messages(conversation.id, after=25) == ()
            assert await store.load_messages(conversation.id, after=1000) == ()
            assert await store.load_messages(conversation.id, limit=0) == ()
            assert await store.load_messages(conversation.id, after=20) == full[20:]
            assert await store.load_recent_messages(conversation.id, 5) == full[-5:]
            assert await store.load_recent_messages(conversation.id, 100) == full
            assert await store.load_recent_messages(conversation.id, 0) == ()
            empty = await store.create_conversation("ctx", "subj")
            assert await store.load_messages(empty.id) == ()
            assert await store.load_recent_messages(empty.id, 3) == ()

    # --- ratings -----------------------------------------------------------------------

    @pytest.mark.anyio
    async def test_rating(self, store: ConversationStore) -> None:
        with anyio.fail_after(_HANG_GUARD):
            conversation = await store.create_conversation("ctx", "subj")
            rated = await store.rate(conversation.id, 5, "Very helpful! 👍")
            assert rated.rating == 5 and rated.comment == "Very helpful! 👍"
            assert rated.version == conversation.version
            assert await store.find_by_id(conversation.id) == rated
            again = await store.rate(conversation.id, 1)
            assert again.rating == 1 and again.comment is None
            assert await store.find_by_id(conversation.id) == again
            for good in (1, 2, 3, 4, 5):
                assert (await store.rate(conversation.id, good)).rating == good

    @pytest.mark.anyio
    async def test_invalid_ratings_are_refused_before_any_io(
        self, store: ConversationStore
    ) -> None:
        with anyio.fail_after(_HANG_GUARD):
            conversation = await store.create_conversation("ctx", "subj")
            await store.rate(conversation.id, 3, "fine")
            invalid: list[object] = [0, 6, -1, 10**100, 3.0, 4.5, True, False, "5", None, [5]]
            for rating in invalid:
                for target in (conversation.id, "missing"):
                    with pytest.raises(InvalidRatingError) as caught:
                        await store.rate(target, rating)  # pyright: ignore[reportArgumentType]
                    assert caught.value.rating is rating
                    assert isinstance(caught.value, ValueError)
            for comment in (42, b"bytes", "x" * 10_001):
                with pytest.raises(InvalidRatingError):
                    await store.rate(conversation.id, 4, comment)  # pyright: ignore[reportArgumentType]
            found = await store.find_by_id(conversation.id)
            assert found is not None and found.rating == 3 and found.comment == "fine"

    # --- arguments and errors ----------------------------------------------------------

    @pytest.mark.anyio
    async def test_bad_arguments_are_refused_before_any_io(self, store: ConversationStore) -> None:
        with anyio.fail_after(_HANG_GUARD):
            conversation = await store.create_conversation("ctx", "subj")
            await store.aclose()
            await store.aclose()  # idempotent
            deep: Any = 1
            for _ in range(100):
                deep = [deep]
            # On a closed store, I/O would raise StoreError: these must fail first.
            bad: list[tuple[type[AIChatError], Callable[[], Any]]] = [
                (ConfigurationError, lambda: store.create_conversation("", "subj")),
                (ConfigurationError, lambda: store.create_conversation("ctx", 42)),  # pyright: ignore[reportArgumentType]
                (ConfigurationError, lambda: store.create_conversation("c" * 257, "subj")),
                (ValidationError, lambda: store.create_conversation("ctx", "subj", [1])),  # pyright: ignore[reportArgumentType]
                (ValidationError, lambda: store.create_conversation("ctx", "subj", {"x": float("nan")})),
                (ConfigurationError, lambda: store.find_by_id(None)),  # pyright: ignore[reportArgumentType]
                (ConfigurationError, lambda: store.find_latest("ctx", "")),
                (ConfigurationError, lambda: store.list_conversations("ctx", "subj", limit=-1)),
                (ValidationError, lambda: store.append_messages(conversation.id, "hello")),
                (ValidationError, lambda: store.append_messages(conversation.id, [{"id": "", "role": "user", "parts": []}])),
                (LimitExceededError, lambda: store.append_messages(conversation.id, [_user("deep", "x") | {"metadata": {"a": deep}}])),
                (ConfigurationError, lambda: store.append_messages(conversation.id, [], expected_version=True)),
                (ConfigurationError, lambda: store.append_messages(conversation.id, [], expected_version=-1)),
                (ConfigurationError, lambda: store.load_messages(conversation.id, after=-1)),
                (ConfigurationError, lambda: store.load_messages(conversation.id, limit=1.5)),  # pyright: ignore[reportArgumentType]
                (ConfigurationError, lambda: store.load_recent_messages(conversation.id, False)),
                (InvalidRatingError, lambda: store.rate(conversation.id, 0)),
            ]  # fmt: skip
            for expected, call in bad:
                with pytest.raises(expected):
                    await call()
            with pytest.raises(StoreError):
                await store.find_by_id(conversation.id)
            with pytest.raises(StoreError):
                await store.append_messages(conversation.id, _batch("late", 1))

    # --- the event loop ----------------------------------------------------------------

    async def assert_loop_keeps_running(
        self, work: Callable[[int], Awaitable[None]], during: str
    ) -> None:
        """Run ``work(attempt)`` while a task ticks every 5 ms; fail if the longest gap
        between ticks reaches ``max_stall`` in each of ``stall_attempts`` attempts.

        The best of a few attempts is the store's own stall: a store that blocks the
        loop stalls it in every attempt, while a busy machine (other processes taking
        the CPU) stalls one attempt, not all of them.
        """
        stalls: list[float] = []
        for attempt in range(self.stall_attempts):
            gaps: list[float] = []
            done = anyio.Event()

            async def tick(gaps: list[float] = gaps, done: anyio.Event = done) -> None:
                last = anyio.current_time()
                while not done.is_set():
                    await anyio.sleep(0.005)
                    now = anyio.current_time()
                    gaps.append(now - last)
                    last = now

            async with anyio.create_task_group() as tg:
                tg.start_soon(tick)
                await anyio.sleep(0.02)
                await work(attempt)
                await anyio.sleep(0.02)
                done.set()
            assert len(gaps) >= 3
            if max(gaps) < self.max_stall:
                return
            stalls.append(max(gaps))
        shown = ", ".join(f"{stall * 1000:.0f} ms" for stall in stalls)
        pytest.fail(f"the event loop stalled {during} (longest gap per attempt: {shown})")

    @pytest.mark.anyio
    async def test_the_event_loop_never_stalls_during_contended_writes(
        self, store: ConversationStore
    ) -> None:
        async def write(conversation: Conversation, writer: int) -> None:
            for batch in range(3):
                await store.append_messages(conversation.id, _batch(f"w{writer}b{batch}", 5))
                await store.load_recent_messages(conversation.id, 20)

        async def contend(attempt: int) -> None:
            shared = await store.create_conversation("ctx", f"shared-{attempt}")
            others = [await store.create_conversation("ctx", f"s{n}") for n in range(5)]
            async with anyio.create_task_group() as writers:
                for writer in range(50):
                    writers.start_soon(write, shared, writer)
                for number, other in enumerate(others):
                    writers.start_soon(write, other, 100 + number)
            _check_log(await store.load_messages(shared.id), batch_size=5)

        with anyio.fail_after(_HANG_GUARD):
            await self.assert_loop_keeps_running(contend, "during contended writes")


class PersistentStoreCompliance(ConversationStoreCompliance):
    """:class:`ConversationStoreCompliance` plus the checks for stores that persist data.

    ``store_factory`` must return, on each call, a new store over the same storage, so
    that data written through one is read through the next after it was closed. Also
    override :meth:`break_backend` and :meth:`hold_lock`.
    """

    async def break_backend(self, store: ConversationStore) -> None:
        """Make the store's backend fail its next append for real (for example, drop the
        messages table through another connection). Required."""
        raise NotImplementedError("override break_backend() to make the backend fail")

    def hold_lock(
        self, store: ConversationStore, conversation_id: str
    ) -> AbstractAsyncContextManager[None]:
        """An async context manager that, while entered, makes appends to the
        conversation wait for a lock held by another connection (SQLite's write lock,
        a PostgreSQL row lock...), released on exit. Required."""
        raise NotImplementedError("override hold_lock() to hold a lock from elsewhere")

    @pytest.mark.anyio
    async def test_data_survives_close_and_reopen(self, store_factory: StoreFactory) -> None:
        with anyio.fail_after(_HANG_GUARD):
            first = store_factory()
            try:
                conversation = await first.create_conversation("ctx", "subj", {"k": ["v", 1]})
                await first.append_messages(conversation.id, _batch("a", 3))
                rated = await first.rate(conversation.id, 4, "good")
                stored = await first.load_messages(conversation.id)
            finally:
                await first.aclose()
            second = store_factory()
            try:
                found = await second.find_by_id(conversation.id)
                assert found == rated
                assert await second.find_latest("ctx", "subj") == rated
                assert await second.load_messages(conversation.id) == stored
                replay = await second.append_messages(conversation.id, _batch("a", 3))
                assert replay.seqs == (1, 2, 3) and replay.stored == 0
                more = await second.append_messages(conversation.id, _batch("b", 2))
                assert more.seqs == (4, 5)
            finally:
                await second.aclose()

    @pytest.mark.anyio
    async def test_a_backend_failure_is_an_append_error_with_its_cause(
        self, store: ConversationStore
    ) -> None:
        with anyio.fail_after(_HANG_GUARD):
            conversation = await store.create_conversation("ctx", "subj")
            await store.append_messages(conversation.id, _batch("a", 1))
            await self.break_backend(store)
            with pytest.raises(AppendError) as caught:
                await store.append_messages(conversation.id, _batch("b", 2))
            error = caught.value
            assert error.conversation_id == conversation.id
            assert error.__cause__ is not None
            assert not isinstance(error.__cause__, AIChatError)
            assert isinstance(error, StoreError)

    @pytest.mark.anyio
    async def test_the_event_loop_runs_while_appends_wait_for_a_lock(
        self, store: ConversationStore
    ) -> None:
        async def wait_for_lock(attempt: int) -> None:
            conversation = await store.create_conversation("ctx", f"subj-{attempt}")
            await store.append_messages(conversation.id, _batch("first", 1))
            stored = 0

            async def append(writer: int) -> None:
                nonlocal stored
                await store.append_messages(conversation.id, _batch(f"w{writer}", 2))
                stored += 1

            async with anyio.create_task_group() as tg, self.hold_lock(store, conversation.id):
                for writer in range(5):
                    tg.start_soon(append, writer)
                await anyio.sleep(0.3)
                assert stored == 0, "an append went through the lock"
            assert stored == 5
            _check_log(await store.load_messages(conversation.id))

        with anyio.fail_after(_HANG_GUARD):
            await self.assert_loop_keeps_running(wait_for_lock, "while appends waited for a lock")
