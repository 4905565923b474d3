"""Token estimation: every part counted, images priced from their size, calibration to
a provider's count, and the exact offline tokenizer against known counts."""

from __future__ import annotations

import base64
import math
import struct
import zlib
from collections.abc import Sequence
from typing import Any

import pytest

from ai_chat import ConfigurationError, normalize_messages
from ai_chat.history import (
    BPETokenEstimator,
    HeuristicEstimator,
    aestimate_tokens,
    calibrate,
    estimate_tokens,
)
from ai_chat.history._images import image_size, image_tokens
from ai_chat.types import Message

from .strategies import fresh

ESTIMATOR = HeuristicEstimator()


def one(*parts: dict[str, Any], role: str = "assistant") -> Message:
    return normalize_messages([{"id": "m", "role": role, "parts": list(parts)}])[0]


def data_url(media_type: str, data: bytes) -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode()}"


def png(width: int, height: int) -> bytes:
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + header
    return (
        b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + chunk + struct.pack(">I", zlib.crc32(chunk))
    )


def jpeg(width: int, height: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00" + b"\x00" * 9
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + sof + b"\xff\xd9"


def gif(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x00" * 10


def webp(width: int, height: int) -> bytes:
    vp8x = b"VP8X" + struct.pack("<I", 10) + b"\x00" * 4
    vp8x += (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return b"RIFF" + struct.pack("<I", 4 + len(vp8x)) + b"WEBP" + vp8x


@pytest.mark.parametrize("make", [png, jpeg, gif, webp])
def test_image_sizes_come_from_the_header(make: Any) -> None:
    assert image_size(data_url("image/x", make(640, 480))) == (640, 480)


@pytest.mark.parametrize(
    "url",
    ["data:image/png;base64,%%%", "data:image/png,raw", "data:image/png;base64,AAAA", "https://x"],
)
def test_an_unknown_size_is_none(url: str) -> None:
    assert image_size(url) is None


def test_image_prices() -> None:
    assert image_tokens(750, 1) == 1
    assert image_tokens(1000, 1000) == math.ceil(1_000_000 / 750)
    assert image_tokens(4000, 4000) == image_tokens(1568, 1568)  # scaled down first
    small = one(
        {"type": "file", "mediaType": "image/png", "url": data_url("image/png", png(200, 150))}
    )
    assert ESTIMATOR.count([small]) == [4 + 40]
    by_url = one({"type": "file", "mediaType": "image/png", "url": "https://x/a.png"})
    assert ESTIMATOR.count([by_url]) == [4 + 1600]


def test_every_part_counts() -> None:
    text = one({"type": "text", "text": "a" * 40})
    assert ESTIMATOR.count([text]) == [4 + 10]
    cjk = one({"type": "text", "text": "漢字" * 10})  # 60 UTF-8 bytes
    assert ESTIMATOR.count([cjk]) == [4 + 20]
    call = one(
        {"type": "tool-call", "toolCallId": "c", "toolName": "lookup", "input": {"q": "x" * 30}}
    )
    assert ESTIMATOR.count([call]) == [4 + 8 + 2 + 10]  # name, '{"q":"xxx..."}' (38 chars)
    result = one(
        {"type": "tool-result", "toolCallId": "c", "toolName": "lookup", "output": {"r": 1}},
        role="tool",
    )
    assert ESTIMATOR.count([result]) == [4 + 8 + 2]
    reasoning = one({"type": "reasoning", "text": "b" * 8})
    assert ESTIMATOR.count([reasoning]) == [4 + 2]
    data = one({"type": "data-x", "data": [1, 2, 3]})
    assert ESTIMATOR.count([data]) == [4 + 2]


def test_files_by_kind() -> None:
    pdf = (
        b"%PDF-1.4\n1 0 obj << /Type /Pages >>\n2 0 obj << /Type /Page >>\n3 0 obj << /Type/Page >>"
    )
    two_pages = one(
        {"type": "file", "mediaType": "application/pdf", "url": data_url("application/pdf", pdf)},
        role="user",
    )
    assert ESTIMATOR.count([two_pages]) == [4 + 2 * 2000]
    audio = one(
        {"type": "file", "mediaType": "audio/wav", "url": data_url("audio/wav", b"\0" * 10240)},
        role="user",
    )
    assert ESTIMATOR.count([audio]) == [4 + 20]
    text = one(
        {"type": "file", "mediaType": "text/plain", "url": data_url("text/plain", b"x" * 400)},
        role="user",
    )
    assert ESTIMATOR.count([text]) == [4 + 100]
    remote = one(
        {"type": "file", "mediaType": "application/pdf", "url": "https://x/a.pdf"}, role="user"
    )
    assert ESTIMATOR.count([remote]) == [4 + 2000]


def test_a_history_total_leaves_streaming_messages_out() -> None:
    history = fresh().append_user("a" * 40)
    streaming, _ = history.start_streaming(parts=[{"type": "text", "text": "b" * 400}])
    assert estimate_tokens(streaming) == estimate_tokens(history) == 14
    assert estimate_tokens(list(streaming.messages)) == 14


@pytest.mark.parametrize(
    ("options", "parameter"),
    [
        ({"message_overhead": -1}, "message_overhead"),
        ({"tool_overhead": 1.5}, "tool_overhead"),
        ({"audio_tokens_per_kib": math.inf}, "audio_tokens_per_kib"),
        ({"cache_size": "big"}, "cache_size"),
    ],
)
def test_bad_estimator_settings(options: dict[str, Any], parameter: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        HeuristicEstimator(**options)
    assert caught.value.parameter == parameter


def test_the_cache_is_bounded_and_never_confuses_messages() -> None:
    estimator = HeuristicEstimator(cache_size=2)
    messages = [one({"type": "text", "text": "x" * (4 * n)}) for n in range(1, 6)]
    assert estimator.count(messages) == [5, 6, 7, 8, 9]
    assert estimator.count(messages[::-1]) == [9, 8, 7, 6, 5]
    assert len(estimator._cache) <= 2  # pyright: ignore[reportPrivateUsage]


def test_calibration_from_a_reported_usage() -> None:
    history = fresh().append_user("a" * 400)  # 104 by the estimate
    calibrated = calibrate(history, {"inputTokens": 208})
    assert calibrated.scale == 2.0
    assert estimate_tokens(history, estimator=calibrated) == 208


def test_calibration_from_the_last_answer_recorded() -> None:
    history = fresh().append_user("a" * 400)
    history, answer = history.start_streaming(parts=[{"type": "text", "text": "ok"}])
    history = history.finish_streaming(answer, usage={"inputTokens": 52, "outputTokens": 1})
    history = history.append_user("more")
    assert calibrate(history).scale == 0.5
    assert calibrate(fresh().append_user("no answer yet")).scale == 1.0


def test_a_usage_without_input_tokens_cannot_calibrate() -> None:
    with pytest.raises(ConfigurationError):
        calibrate(fresh().append_user("x"), {"outputTokens": 3})


class Remote:
    """A provider count API, stood in by a function of the messages."""

    async def count(self, messages: Sequence[Message], /) -> list[int]:
        return [100 for _ in messages]


@pytest.mark.anyio
async def test_an_async_estimator() -> None:
    assert (
        await aestimate_tokens(fresh().append_user("a").append_user("b"), estimator=Remote()) == 200
    )


# Known counts: the OpenAI cookbook's "tiktoken is great!" (cl100k_base: 6 tokens,
# [83, 1609, 5963, 374, 2294, 0]) and tiktoken's README "hello world" (o200k_base:
# [24912, 2375]).
@pytest.mark.parametrize(
    ("encoding", "text", "tokens"),
    [
        ("cl100k_base", "tiktoken is great!", 6),
        ("o200k_base", "hello world", 2),
        ("cl100k_base", "hello world", 2),
        ("o200k_base", "", 0),
    ],
)
def test_the_exact_tokenizer_gives_known_counts(encoding: str, text: str, tokens: int) -> None:
    estimator = BPETokenEstimator(encoding)
    assert estimator.text(text) == tokens
    assert estimator.count([one({"type": "text", "text": text})]) == [3 + tokens]


def test_the_exact_tokenizer_counts_long_text_in_pieces() -> None:
    estimator = BPETokenEstimator()
    text = "hello world " * 100_000  # 1.2 million characters: more than one piece
    # "hello", " world", then " hello" " world" 99,999 times, and the last " ": split at
    # spaces, the pieces tokenize as the whole text does.
    assert estimator.text(text) == 2 * 100_000 + 1


def test_an_unknown_encoding() -> None:
    with pytest.raises(ConfigurationError) as caught:
        BPETokenEstimator("nope")
    assert caught.value.parameter == "encoding"
