"""``ai-chat export`` and ``ai-chat import``: a conversation between a store and a file.

``export`` reads one conversation (``--id``, or the subject's most recently active one)
from the store ``--store`` names and writes it as Markdown, a snapshot or the public
projection; ``import`` reads Markdown or a snapshot and stores it as a new conversation.

A stored conversation becomes a :class:`~ai_chat.history.History` with the
conversation's id, metadata and times and every stored message, in sequence order. The
store has no title field: import keeps the title in the conversation's metadata as
``aiChat.title``, and export reads it back from there. The store assigns its own times
to what it stores, so an imported conversation has the time of its import; the messages'
own times (``metadata.aiChat.createdAt``) are kept as they are.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast

import anyio

from .._errors import LimitExceededError, ValidationError
from .._types import Message
from ..history import (
    History,
    from_markdown,
    from_snapshot,
    public_projection,
    to_markdown,
    to_snapshot,
)
from ..history._env import format_time
from ..store import ConversationExistsError
from .provider import CommandError
from .serve import DEFAULT_STORE, StoreSpec, store_spec
from .serve import _open_store as open_store  # pyright: ignore[reportPrivateUsage]

if TYPE_CHECKING:
    from ..store import Conversation, ConversationStore, StoredMessage

__all__ = [
    "COMMANDS",
    "add_commands",
    "history_of",
    "load_history",
    "parse",
    "render",
    "store_history",
    "transfer",
]

T = TypeVar("T")

COMMANDS: Final = ("export", "import")
EXPORT_FORMATS: Final = ("markdown", "snapshot", "public")
OWN_KEY: Final = "aiChat"
DEFAULT_CONTEXT: Final = "chat"  # create_chat_app's default context
# The subject export reads and import writes when none is named. ai-chat serve gives each
# browser a subject of its own (a visitor cookie), so its conversations are found by id.
DEFAULT_SUBJECT: Final = "anonymous"
_BATCH: Final = 1_000


def add_commands(commands: Any) -> None:
    """Add ``export`` and ``import`` to the command line's subcommands (the object
    ``ArgumentParser.add_subparsers`` returned)."""
    export = cast(
        argparse.ArgumentParser,
        commands.add_parser(
            "export",
            help="write a stored conversation as Markdown, a snapshot or its public projection",
            description="Read a conversation from a store and write it to stdout or a file: "
            "lossless Markdown, a snapshot (JSON sealed with a SHA-256 digest) or the public "
            "projection (user and assistant text, redacted, as JSON).",
        ),
    )
    export.add_argument(
        "--format",
        choices=EXPORT_FORMATS,
        default="markdown",
        help="what to write (default: %(default)s)",
    )
    export.add_argument(
        "--id", help="the conversation (default: the subject's most recently active one)"
    )
    export.add_argument("--output", metavar="FILE", help="write to FILE instead of stdout")
    _store_options(export)
    imported = cast(
        argparse.ArgumentParser,
        commands.add_parser(
            "import",
            help="store a conversation read from Markdown or a snapshot",
            description="Read a history written by export (Markdown or a snapshot) and store "
            "it as a new conversation of the subject.",
        ),
    )
    imported.add_argument("file", metavar="FILE", help="the file to read, - for stdin")
    imported.add_argument(
        "--format",
        choices=("markdown", "snapshot"),
        help="what FILE holds (default: told by its first characters)",
    )
    imported.add_argument("--id", help="store it under this id (default: the history's own)")
    imported.add_argument(
        "--append",
        action="store_true",
        help="if the conversation exists, add the messages it does not hold yet (those it "
        "holds must be identical) instead of refusing",
    )
    _store_options(imported)


def _store_options(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--store",
        default=DEFAULT_STORE,
        metavar="STORE",
        help="the store, as serve takes it: sqlite:PATH or a postgresql:// URL (needs the "
        "postgres extra) (default: %(default)s)",
    )
    command.add_argument(
        "--context",
        default=DEFAULT_CONTEXT,
        help="the store context of the conversation (default: %(default)s, the server's)",
    )
    command.add_argument(
        "--subject",
        default=DEFAULT_SUBJECT,
        help="the conversation's owner (default: %(default)s, the server's for requests "
        "without a subject header)",
    )
    command.add_argument(
        "--key-file",
        metavar="FILE",
        help="an HMAC key of at least 16 bytes: export signs the snapshot with it, import "
        "requires the snapshot's signature",
    )


def transfer(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Run ``export`` or ``import``; returns the exit status (failures raise)."""
    spec = store_spec(parser, cast(str, args.store))
    if spec.kind in ("memory", "none"):
        parser.error(
            f"--store {spec.kind} keeps nothing between commands: {args.command} needs "
            "sqlite:PATH or a postgresql:// URL"
        )
    key = _key(cast("str | None", args.key_file))
    context, subject = cast(str, args.context), cast(str, args.subject)
    wanted = cast("str | None", args.id)
    if args.command == "export":

        async def export(store: ConversationStore) -> History:
            return await load_history(store, wanted, context, subject)

        history = anyio.run(_with_store, spec, export)
        _write(render(history, cast(str, args.format), key), cast("str | None", args.output))
        return 0
    history = parse(_read(cast(str, args.file)), cast("str | None", args.format), key)
    append = cast(bool, args.append)

    async def store(store: ConversationStore) -> tuple[str, int]:
        return await store_history(
            store, history, conversation_id=wanted, context=context, subject=subject, append=append
        )

    target, stored = anyio.run(_with_store, spec, store)
    print(
        f"ai-chat: stored {stored} of {len(history)} messages in conversation {target}",
        file=sys.stderr,
    )
    return 0


async def _with_store(spec: StoreSpec, job: Callable[[ConversationStore], Awaitable[T]]) -> T:
    store = open_store(spec)
    assert store is not None  # memory and none were refused
    try:
        return await job(store)
    finally:
        with anyio.CancelScope(shield=True):
            await store.aclose()


# --- the conversation and the history ---------------------------------------------------


def history_of(conversation: Conversation, stored: Sequence[StoredMessage]) -> History:
    """The history a stored conversation holds (see the module).

    Raises:
        CommandError: the stored messages are not a valid history (the store checks each
            message, not the history's invariants, such as unique tool call ids).
    """
    metadata: dict[str, object] = dict(conversation.metadata)
    title: str | None = None
    own = metadata.get(OWN_KEY)
    if isinstance(own, Mapping) and type(cast("Mapping[str, object]", own).get("title")) is str:
        rest = {k: v for k, v in cast("Mapping[str, object]", own).items() if k != "title"}
        title = cast(str, cast("Mapping[str, object]", own)["title"])
        if rest:
            metadata[OWN_KEY] = rest
        else:
            del metadata[OWN_KEY]
    data: dict[str, object] = {
        "id": conversation.id,
        "metadata": metadata,
        "createdAt": format_time(conversation.created_at),
        "updatedAt": format_time(conversation.updated_at),
        "messages": [item.message for item in stored],
    }
    if title is not None:
        data["title"] = title
    try:
        return History.from_json(data)
    except (ValidationError, LimitExceededError) as exc:
        raise CommandError(
            f"conversation {conversation.id} in the store is not a valid history: {exc}"
        ) from exc


def conversation_metadata(history: History) -> dict[str, object]:
    """The metadata to create ``history``'s conversation with: its own, and its title.

    Raises:
        CommandError: the metadata's ``aiChat`` key is not an object or already holds a
            title (it would come back as the history's title).
    """
    metadata: dict[str, object] = dict(history.metadata)
    own = metadata.get(OWN_KEY)
    if own is not None and not isinstance(own, Mapping):
        raise CommandError(
            f"the history's metadata.{OWN_KEY} is not an object; the store keeps the title "
            "there: rename that key"
        )
    fields = dict(cast("Mapping[str, object]", own or {}))
    if "title" in fields:
        raise CommandError(
            f"the history's metadata.{OWN_KEY}.title would be read back as its title: "
            "rename that key"
        )
    if history.title is not None:
        fields["title"] = history.title
        metadata[OWN_KEY] = fields
    return metadata


async def load_history(
    store: ConversationStore, conversation_id: str | None, context: str, subject: str
) -> History:
    """The conversation ``conversation_id`` (any subject's), or else the subject's most
    recently active one in ``context``, as a history.

    Raises:
        CommandError: no such conversation, or not a valid history.
        StoreError: the store failed.
    """
    if conversation_id is None:
        conversation = await store.find_latest(context, subject)
        if conversation is None:
            raise CommandError(
                f"the store holds no conversation of subject {subject!r} in context "
                f"{context!r}: pass --id (ai-chat serve gives each browser a subject of its "
                "own; the page shows a conversation's id in its address, after #), or "
                "--subject and --context"
            )
    else:
        conversation = await store.find_by_id(conversation_id)
        if conversation is None:
            raise CommandError(f"the store holds no conversation {conversation_id!r}")
    return history_of(conversation, await store.load_messages(conversation.id))


async def store_history(
    store: ConversationStore,
    history: History,
    *,
    conversation_id: str | None,
    context: str,
    subject: str,
    append: bool,
) -> tuple[str, int]:
    """Store ``history`` as conversation ``conversation_id`` (default: its own id) of
    ``subject`` in ``context``; returns the id and how many messages were stored.

    An existing conversation is refused unless ``append``: then the messages it does not
    hold yet are appended (the store's appends are idempotent by message id, so running
    the same import again stores nothing). Messages go in batches (an interrupted import
    leaves the first ones stored: run it again with ``append``).

    Raises:
        CommandError: the conversation exists (and not ``append``, or it belongs to
            another subject or context), or the metadata cannot hold the title.
        DuplicateMessageError: with ``append``, a stored message has another content.
        StoreError, ValidationError, LimitExceededError: the store refused or failed.
    """
    target = history.id if conversation_id is None else conversation_id
    metadata = conversation_metadata(history)
    try:
        await store.create_conversation(context, subject, metadata, conversation_id=target)
    except ConversationExistsError:
        if not append:
            raise CommandError(
                f"conversation {target!r} is already in the store: pass --append to add the "
                "messages it does not hold yet, or --id to store a copy under another id"
            ) from None
        existing = await store.find_by_id(target)
        if existing is None or (existing.context, existing.subject_id) != (context, subject):
            raise CommandError(
                f"conversation {target!r} belongs to another subject or context; --append "
                "adds only to a conversation of --subject in --context"
            ) from None
    messages = history.messages
    stored = 0
    for start in range(0, len(messages), _BATCH):
        stored += await _append(store, target, messages[start : start + _BATCH])
    return target, stored


async def _append(store: ConversationStore, target: str, batch: Sequence[Message]) -> int:
    """Append ``batch``, halving it while it is over the store's bound on one batch."""
    try:
        return (await store.append_messages(target, batch)).stored
    except LimitExceededError:
        if len(batch) == 1:
            raise
    middle = len(batch) // 2
    first = await _append(store, target, batch[:middle])
    return first + await _append(store, target, batch[middle:])


# --- the formats -------------------------------------------------------------------------


def render(history: History, fmt: str, key: bytes | None) -> str:
    """``history`` as ``fmt`` (markdown, snapshot or public), ending with a newline."""
    if fmt == "markdown":
        return to_markdown(history)
    if fmt == "snapshot":
        return to_snapshot(history, key=key) + "\n"
    projection = public_projection(history)
    return json.dumps(projection, ensure_ascii=False, separators=(",", ":")) + "\n"


def parse(text: str, fmt: str | None, key: bytes | None) -> History:
    """The history in ``text``: a snapshot or Markdown (``fmt``, or told by its start).

    Raises:
        CommandError: the format cannot be told.
        SnapshotError, MarkdownError: not a valid snapshot or Markdown.
    """
    if fmt is None:
        start = text.lstrip("\ufeff \t\r\n")
        if start.startswith("{"):
            fmt = "snapshot"
        elif start.startswith("---"):
            fmt = "markdown"
        else:
            raise CommandError(
                "cannot tell what the file holds: expected a snapshot (a JSON object) or a "
                "history's Markdown (starting with '---'); pass --format"
            )
    if fmt == "snapshot":
        return from_snapshot(text, key=key)
    if key is not None:
        raise CommandError("--key-file checks snapshots; Markdown has no signature")
    return from_markdown(text)


# --- files ---------------------------------------------------------------------------------


def _key(path: str | None) -> bytes | None:
    if path is None:
        return None
    try:
        key = Path(path).read_bytes().strip()
    except OSError as exc:
        raise CommandError(f"cannot read --key-file {path}: {exc.strerror or exc}") from exc
    if len(key) < 16:
        raise CommandError(
            f"--key-file {path} holds {len(key)} bytes; a key needs at least 16 (such as "
            "the output of: openssl rand -hex 32)"
        )
    return key


def _read(path: str) -> str:
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CommandError(f"{path} is not UTF-8 text (byte {exc.start})") from None


def _write(text: str, path: str | None) -> None:
    data = text.encode("utf-8")
    if path is None:
        # Bytes, so that the terminal's encoding cannot change what is written.
        sys.stdout.flush()
        raw = getattr(sys.stdout, "buffer", None)
        if raw is None:
            sys.stdout.write(text)
        else:
            raw.write(data)
            raw.flush()
        return
    try:
        Path(path).write_bytes(data)
    except OSError as exc:
        raise CommandError(f"cannot write {path}: {exc.strerror or exc}") from exc
