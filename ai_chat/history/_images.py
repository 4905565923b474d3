"""The pixel size of an image in a ``data:`` URL, read from its header (PNG, GIF, JPEG,
WebP), and what a model charges for an image of that size.

Only the first bytes are decoded (at most :data:`_SCAN` for JPEG, whose size marker may
follow the metadata), so a large image costs no more than a small one. Anything else,
or a malformed header, has no known size.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct
from typing import Final

__all__ = ["IMAGE_LONG_EDGE", "PIXELS_PER_TOKEN", "image_size", "image_tokens"]

PIXELS_PER_TOKEN: Final = 750
"""Pixels per token, after scaling: Anthropic's documented price (width  x  height / 750);
OpenAI's tiles (170 tokens per 512x512 tile, 85 more) and Gemini's (258 per 768x768
tile) come to 1,500 and 2,300 pixels a token, so this errs on the high side."""

IMAGE_LONG_EDGE: Final = 1568
"""The long edge an image is scaled down to before it is priced (Anthropic's; OpenAI
scales to 2048 then 768 on the short edge), so no image costs more than about 1,600
tokens."""

_SCAN: Final = 65_536  # bytes of a JPEG searched for its size marker
_SOF: Final = frozenset(
    {*range(0xC0, 0xC4), *range(0xC5, 0xC8), *range(0xC9, 0xCC), *range(0xCD, 0xD0)}
)


def image_tokens(width: int, height: int) -> int:
    """The tokens of an image of ``width``  x  ``height`` pixels (see the constants)."""
    longest = max(width, height)
    if longest > IMAGE_LONG_EDGE:
        scale = IMAGE_LONG_EDGE / longest
        width, height = max(1, round(width * scale)), max(1, round(height * scale))
    return max(1, math.ceil(width * height / PIXELS_PER_TOKEN))


def image_size(url: str) -> tuple[int, int] | None:
    """``(width, height)`` of the image in a base64 ``data:`` URL, or ``None``."""
    header, comma, data = url.partition(",")
    if not comma or not header.endswith(";base64"):
        return None
    head = _decode(data, 32)
    if head is None:
        return None
    if head.startswith(b"\x89PNG\r\n\x1a\n") and head[12:16] == b"IHDR":
        return _checked(*struct.unpack(">II", head[16:24]))
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return _checked(*struct.unpack("<HH", head[6:10]))
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return _webp(head)
    if head[:2] == b"\xff\xd8":
        scanned = _decode(data, _SCAN)
        return None if scanned is None else _jpeg(scanned)
    return None


def _decode(data: str, size: int) -> bytes | None:
    """The first ``size`` bytes (about) of base64 ``data``."""
    chunk = data[: (size // 3 + 1) * 4]
    try:
        return base64.b64decode(chunk + "=" * (-len(chunk) % 4))
    except (binascii.Error, ValueError):
        return None


def _checked(width: int, height: int) -> tuple[int, int] | None:
    return (width, height) if width > 0 and height > 0 else None


def _webp(head: bytes) -> tuple[int, int] | None:
    kind = head[12:16]
    if kind == b"VP8 " and len(head) >= 30:
        width, height = struct.unpack("<HH", head[26:30])
        return _checked(width & 0x3FFF, height & 0x3FFF)
    if kind == b"VP8L" and len(head) >= 25:
        bits = int.from_bytes(head[21:25], "little")
        return _checked((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    if kind == b"VP8X" and len(head) >= 30:
        width = int.from_bytes(head[24:27], "little") + 1
        height = int.from_bytes(head[27:30], "little") + 1
        return _checked(width, height)
    return None


def _jpeg(data: bytes) -> tuple[int, int] | None:
    """Walk the JPEG segments to the first start-of-frame marker."""
    position = 2
    while position + 9 <= len(data):
        if data[position] != 0xFF:
            return None
        marker = data[position + 1]
        if marker == 0xFF:  # fill byte
            position += 1
            continue
        if marker in _SOF:
            height, width = struct.unpack(">HH", data[position + 5 : position + 9])
            return _checked(width, height)
        if marker == 0xD8 or 0xD0 <= marker <= 0xD7:  # markers without a length
            position += 2
            continue
        (length,) = struct.unpack(">H", data[position + 2 : position + 4])
        if length < 2:
            return None
        position += 2 + length
    return None
