"""Token estimation: a small protocol, a fast offline default, and calibration.

An estimator counts the tokens of each message (:class:`TokenEstimator`, or
:class:`AsyncTokenEstimator` for a provider's count API); a history's total is the sum
over the messages a request takes (streaming ones left out).

:class:`HeuristicEstimator`, the default, works offline on every part:

* text and reasoning: a quarter token per ASCII character, a third per UTF-8 byte of
  other text (CJK is about one token a character);
* tool calls: the tool's name and the input's JSON text, plus ``tool_overhead``; tool
  results: the output's text (a non-string output as its JSON), plus ``tool_overhead``;
  data parts: their JSON text;
* images: priced from their pixel size when a ``data:`` URL's header gives it
  (width x height / 750 after scaling the long edge to 1,568: Anthropic's documented
  price, above OpenAI's and Gemini's), ``unknown_image_tokens`` otherwise (an image by
  URL);
* PDFs: ``pdf_page_tokens`` a page (the pages counted in the file), audio and video by
  their size (``audio_tokens_per_kib``, ``video_tokens_per_kib``), other files as text;
  a file by URL ``unknown_file_tokens``;
* ``message_overhead`` per message (the role and the framing every API adds).

Provider metadata (signatures, encrypted reasoning) is not counted: what a provider
charges for it is not documented. :func:`calibrate` scales any estimator to what the
provider last counted.
"""

# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol, cast

from .._errors import ConfigurationError
from .._types import Message, Usage
from ..formats._export import compact_json, output_text
from ._bookkeeping import bookkeeping, is_streaming
from ._images import image_size, image_tokens

if TYPE_CHECKING:
    from ._history import History

__all__ = [
    "DEFAULT_ESTIMATOR",
    "AsyncTokenEstimator",
    "CalibratedEstimator",
    "HeuristicEstimator",
    "TokenEstimator",
    "aestimate_tokens",
    "calibrate",
    "estimate_tokens",
    "request_of",
]

_PAGE: Final = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")


class TokenEstimator(Protocol):
    """Counts tokens, offline and at once (the default is :class:`HeuristicEstimator`)."""

    def count(self, messages: Sequence[Message], /) -> Sequence[int]:
        """The tokens of each message, in order (one count per message)."""
        ...


class AsyncTokenEstimator(Protocol):
    """Counts tokens asynchronously: a provider's count API (Anthropic's
    ``messages.count_tokens``, Gemini's ``countTokens``) behind the same shape."""

    async def count(self, messages: Sequence[Message], /) -> Sequence[int]:
        """The tokens of each message, in order (one count per message)."""
        ...


class HeuristicEstimator:
    """The offline default: every part counted by the rules in the module docstring.

    Counts are cached per message (messages are immutable, so a message counted once
    is never counted again while the cache holds it; ``cache_size`` messages at most).
    Thread-safe. Subclasses change how text is counted by overriding :meth:`text`.
    """

    def __init__(
        self,
        *,
        message_overhead: int = 4,
        tool_overhead: int = 8,
        unknown_image_tokens: int = 1600,
        pdf_page_tokens: int = 2000,
        audio_tokens_per_kib: float = 2.0,
        video_tokens_per_kib: float = 1.0,
        unknown_file_tokens: int = 2000,
        cache_size: int = 200_000,
    ) -> None:
        for name, value in (
            ("message_overhead", message_overhead),
            ("tool_overhead", tool_overhead),
            ("unknown_image_tokens", unknown_image_tokens),
            ("pdf_page_tokens", pdf_page_tokens),
            ("unknown_file_tokens", unknown_file_tokens),
            ("cache_size", cache_size),
        ):
            if type(value) is not int or value < 0:
                raise ConfigurationError(name, value, "an int of 0 or more")
        for name, rate in (
            ("audio_tokens_per_kib", audio_tokens_per_kib),
            ("video_tokens_per_kib", video_tokens_per_kib),
        ):
            if type(rate) not in (int, float) or not 0 <= rate < math.inf:
                raise ConfigurationError(name, rate, "a finite number of 0 or more")
        self.message_overhead = message_overhead
        self.tool_overhead = tool_overhead
        self.unknown_image_tokens = unknown_image_tokens
        self.pdf_page_tokens = pdf_page_tokens
        self.audio_tokens_per_kib = audio_tokens_per_kib
        self.video_tokens_per_kib = video_tokens_per_kib
        self.unknown_file_tokens = unknown_file_tokens
        self._cache_size = cache_size
        # id(message) -> (message, tokens): the message is held so that its id stays its own.
        self._cache: dict[int, tuple[Message, int]] = {}

    def count(self, messages: Sequence[Message], /) -> list[int]:
        """The tokens of each message (cached per message)."""
        cache = self._cache
        out: list[int] = []
        for message in messages:
            hit = cache.get(id(message))
            if hit is not None and hit[0] is message:
                out.append(hit[1])
                continue
            tokens = self.message(message)
            if len(cache) >= self._cache_size:
                cache.clear()
            cache[id(message)] = (message, tokens)
            out.append(tokens)
        return out

    def message(self, message: Message) -> int:
        """The tokens of one message (not cached)."""
        total = self.message_overhead
        part: Any
        for part in message["parts"]:
            kind = part["type"]
            if kind == "text" or kind == "reasoning":
                total += self.text(part["text"])
            elif kind == "tool-call":
                total += self.tool_overhead + self.text(part["toolName"])
                total += self.text(compact_json(part["input"]))
            elif kind == "tool-result":
                total += self.tool_overhead + self.text(output_text(part["output"]))
            elif kind == "file":
                total += self.file(part["mediaType"], part["url"])
            else:
                total += self.text(compact_json(part.get("data")))
        return total

    def text(self, text: str) -> int:
        """The tokens of ``text``."""
        if text.isascii():
            return (len(text) + 3) // 4
        return (len(text.encode("utf-8", "surrogatepass")) + 2) // 3

    def file(self, media_type: str, url: str) -> int:
        """The tokens of a file part."""
        media = media_type.lower()
        inline = url.startswith("data:")
        if media.startswith("image/"):
            size = image_size(url) if inline else None
            return image_tokens(*size) if size is not None else self.unknown_image_tokens
        if not inline:
            return self.unknown_file_tokens
        header, _, payload = url.partition(",")
        encoded = header.endswith(";base64")
        padding = payload.endswith("=") + payload.endswith("==")
        size = len(payload) * 3 // 4 - padding if encoded else len(payload)
        if media == "application/pdf":
            return max(1, _pages(payload) if encoded else 1) * self.pdf_page_tokens
        if media.startswith("audio/"):
            return math.ceil(size / 1024 * self.audio_tokens_per_kib)
        if media.startswith("video/"):
            return math.ceil(size / 1024 * self.video_tokens_per_kib)
        return (size + 3) // 4


def _pages(payload: str) -> int:
    try:
        data = base64.b64decode(payload)
    except (binascii.Error, ValueError):
        return 1
    return len(_PAGE.findall(data))


DEFAULT_ESTIMATOR: Final = HeuristicEstimator()
"""The estimator the history's functions use unless given another."""


class CalibratedEstimator:
    """Another estimator's counts scaled by ``scale`` (rounded up): what
    :func:`calibrate` returns.

    Attributes:
        base: the estimator scaled.
        scale: the factor, ``provider count / estimate`` when calibrated.
    """

    def __init__(self, base: TokenEstimator, scale: float) -> None:
        if type(scale) not in (int, float) or not 0 < scale < math.inf:
            raise ConfigurationError("scale", scale, "a finite number above 0")
        self.base = base
        self.scale = float(scale)

    def count(self, messages: Sequence[Message], /) -> list[int]:
        scale = self.scale
        return [math.ceil(tokens * scale) for tokens in self.base.count(messages)]


def request_of(messages: Sequence[Message]) -> tuple[Message, ...]:
    """The messages a request takes: all but the streaming ones."""
    return tuple(m for m in messages if "metadata" not in m or not is_streaming(m))


def _messages(history_or_messages: History | Sequence[Message]) -> tuple[Message, ...]:
    request = getattr(history_or_messages, "request_messages", None)
    if callable(request):
        return cast("tuple[Message, ...]", request())
    return request_of(cast("Sequence[Message]", history_or_messages))


def estimate_tokens(
    history_or_messages: History | Sequence[Message],
    *,
    estimator: TokenEstimator = DEFAULT_ESTIMATOR,
) -> int:
    """The tokens a request with these messages takes, by ``estimator`` (streaming
    messages left out: a request never takes them)."""
    return sum(estimator.count(_messages(history_or_messages)))


async def aestimate_tokens(
    history_or_messages: History | Sequence[Message], *, estimator: AsyncTokenEstimator
) -> int:
    """:func:`estimate_tokens` with an asynchronous estimator (a provider's count API).
    Cancellation propagates from the estimator."""
    return sum(await estimator.count(_messages(history_or_messages)))


def calibrate(
    history_or_messages: History | Sequence[Message],
    usage: Usage | None = None,
    *,
    estimator: TokenEstimator = DEFAULT_ESTIMATOR,
) -> CalibratedEstimator:
    """``estimator`` scaled to what the provider last counted.

    With ``usage`` (a ``finish`` event's), the messages are the request it counted and
    the scale is ``usage["inputTokens"]`` over their estimate. Without, the history's
    last answer that recorded a usage with ``inputTokens`` (its bookkeeping) is taken,
    with the messages before it as its request; a history without one gives a scale of
    1. The provider's count includes what the messages do not hold (tool definitions,
    instructions), which the scale then spreads over the messages: estimate with the
    same tools as the request counted.

    Raises:
        ConfigurationError: ``usage`` has no non-negative ``inputTokens``.
    """
    messages = _messages(history_or_messages)
    if usage is None:
        for position in range(len(messages) - 1, -1, -1):
            recorded = bookkeeping(messages[position]).usage
            if recorded is not None and "inputTokens" in recorded:
                usage, messages = recorded, messages[:position]
                break
        else:
            return CalibratedEstimator(estimator, 1.0)
    counted = usage.get("inputTokens")
    if type(counted) is not int or counted < 0:
        raise ConfigurationError("usage", usage, "a usage with inputTokens, an int of 0 or more")
    estimate = sum(estimator.count(messages))
    if estimate == 0 or counted == 0:
        return CalibratedEstimator(estimator, 1.0)
    return CalibratedEstimator(estimator, counted / estimate)
