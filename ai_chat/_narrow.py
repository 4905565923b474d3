"""Type guards that narrow events and parts for pyright, by their ``type``.

(``TypeGuard``, not ``TypeIs``: the typed dicts are not final, so ``TypeIs`` would narrow
to intersections; a guard narrows the true branch to exactly the named type.)

``data-<name>`` events and parts have a free-form ``type``, so comparing ``event["type"]``
alone cannot narrow the ``ChatEvent`` or ``Part`` unions; these guards can::

    if is_event(event, "text-delta"):
        print(event["delta"])          # event is a TextDeltaEvent here
"""

from __future__ import annotations

from typing import Literal, TypeGuard, overload

from ._types import (
    ChatEvent,
    DataEvent,
    DataPart,
    FileEvent,
    FilePart,
    FinishEvent,
    FinishStepEvent,
    MessageMetadataEvent,
    Part,
    ReasoningDeltaEvent,
    ReasoningEndEvent,
    ReasoningPart,
    ReasoningStartEvent,
    SourceDocumentEvent,
    SourceUrlEvent,
    StartEvent,
    StartStepEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextPart,
    TextStartEvent,
    ToolCallPart,
    ToolInputAvailableEvent,
    ToolInputDeltaEvent,
    ToolInputErrorEvent,
    ToolInputStartEvent,
    ToolOutputAvailableEvent,
    ToolOutputErrorEvent,
    ToolResultPart,
)

__all__ = ["is_data", "is_event", "is_part"]


@overload
def is_event(event: ChatEvent, kind: Literal["start"]) -> TypeGuard[StartEvent]: ...


@overload
def is_event(event: ChatEvent, kind: Literal["start-step"]) -> TypeGuard[StartStepEvent]: ...


@overload
def is_event(event: ChatEvent, kind: Literal["finish-step"]) -> TypeGuard[FinishStepEvent]: ...


@overload
def is_event(event: ChatEvent, kind: Literal["text-start"]) -> TypeGuard[TextStartEvent]: ...


@overload
def is_event(event: ChatEvent, kind: Literal["text-delta"]) -> TypeGuard[TextDeltaEvent]: ...


@overload
def is_event(event: ChatEvent, kind: Literal["text-end"]) -> TypeGuard[TextEndEvent]: ...


@overload
def is_event(
    event: ChatEvent, kind: Literal["reasoning-start"]
) -> TypeGuard[ReasoningStartEvent]: ...


@overload
def is_event(
    event: ChatEvent, kind: Literal["reasoning-delta"]
) -> TypeGuard[ReasoningDeltaEvent]: ...


@overload
def is_event(event: ChatEvent, kind: Literal["reasoning-end"]) -> TypeGuard[ReasoningEndEvent]: ...


@overload
def is_event(
    event: ChatEvent, kind: Literal["tool-input-start"]
) -> TypeGuard[ToolInputStartEvent]: ...


@overload
def is_event(
    event: ChatEvent, kind: Literal["tool-input-delta"]
) -> TypeGuard[ToolInputDeltaEvent]: ...


@overload
def is_event(
    event: ChatEvent, kind: Literal["tool-input-available"]
) -> TypeGuard[ToolInputAvailableEvent]: ...


@overload
def is_event(
    event: ChatEvent, kind: Literal["tool-input-error"]
) -> TypeGuard[ToolInputErrorEvent]: ...


@overload
def is_event(
    event: ChatEvent, kind: Literal["tool-output-available"]
) -> TypeGuard[ToolOutputAvailableEvent]: ...


@overload
def is_event(
    event: ChatEvent, kind: Literal["tool-output-error"]
) -> TypeGuard[ToolOutputErrorEvent]: ...


@overload
def is_event(event: ChatEvent, kind: Literal["source-url"]) -> TypeGuard[SourceUrlEvent]: ...


@overload
def is_event(
    event: ChatEvent, kind: Literal["source-document"]
) -> TypeGuard[SourceDocumentEvent]: ...


@overload
def is_event(event: ChatEvent, kind: Literal["file"]) -> TypeGuard[FileEvent]: ...


@overload
def is_event(
    event: ChatEvent, kind: Literal["message-metadata"]
) -> TypeGuard[MessageMetadataEvent]: ...


@overload
def is_event(event: ChatEvent, kind: Literal["finish"]) -> TypeGuard[FinishEvent]: ...


def is_event(event: ChatEvent, kind: str) -> bool:
    """Whether ``event`` has the given ``type`` (narrowing it to that event's type)."""
    return event["type"] == kind


@overload
def is_part(part: Part, kind: Literal["text"]) -> TypeGuard[TextPart]: ...


@overload
def is_part(part: Part, kind: Literal["reasoning"]) -> TypeGuard[ReasoningPart]: ...


@overload
def is_part(part: Part, kind: Literal["file"]) -> TypeGuard[FilePart]: ...


@overload
def is_part(part: Part, kind: Literal["tool-call"]) -> TypeGuard[ToolCallPart]: ...


@overload
def is_part(part: Part, kind: Literal["tool-result"]) -> TypeGuard[ToolResultPart]: ...


def is_part(part: Part, kind: str) -> bool:
    """Whether ``part`` has the given ``type`` (narrowing it to that part's type)."""
    return part["type"] == kind


@overload
def is_data(item: ChatEvent, name: str | None = None) -> TypeGuard[DataEvent]: ...
@overload
def is_data(item: Part, name: str | None = None) -> TypeGuard[DataPart]: ...


def is_data(item: ChatEvent | Part, name: str | None = None) -> bool:
    """Whether ``item`` is a ``data-<name>`` event or part (of ``name``, when given)."""
    kind = item["type"]
    if name is None:
        return kind.startswith("data-") and len(kind) > 5
    return kind == f"data-{name}"
