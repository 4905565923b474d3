"""A sans-IO Server-Sent Events decoder with bounds: bytes in, events out.

It follows the WHATWG event-stream parsing rules (LF, CR and CRLF line ends, split
anywhere; UTF-8 split anywhere; a leading BOM; ``data`` lines joined with LF; comments
and unknown fields ignored; ``event``, ``id`` and ``retry``, a ``retry`` of anything but
ASCII digits ignored, one over 2**64 - 1 ms clamped to that), with two differences that
make a truncated or hostile stream an error instead of a silent success: every line,
event and the whole body are bounded, and :meth:`SSEDecoder.close` raises when the body
ends inside an event. It does no I/O and imports neither anyio nor httpx; the caller
applies the idle timeout between reads.
"""

from __future__ import annotations

import codecs
from typing import Final, NamedTuple

from ._errors import ConfigurationError, LimitExceededError, StreamFormatError

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_EVENT_CHARS",
    "DEFAULT_MAX_LINE_CHARS",
    "SSEDecoder",
    "SSEEvent",
]

DEFAULT_MAX_LINE_CHARS: Final = 4 * 1024 * 1024
DEFAULT_MAX_EVENT_CHARS: Final = 8 * 1024 * 1024
DEFAULT_MAX_BODY_BYTES: Final = 256 * 1024 * 1024
MAX_RETRY: Final = 2**64 - 1
"""The largest ``retry`` an event carries (milliseconds); a larger value becomes this."""
_RETRY_DIGITS: Final = len(str(MAX_RETRY))


class SSEEvent(NamedTuple):
    """One dispatched event. ``event`` is ``"message"`` when the stream names none.

    A named tuple rather than a frozen dataclass: one is made per event, and creating a
    tuple costs a fraction of what a dataclass does.
    """

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None
    """The event's ``retry`` field in milliseconds, when it had one. As the standard
    says, only ASCII digits count (anything else is ignored); a value over
    2**64 - 1 (half a billion years) is clamped to it."""


class SSEDecoder:
    """Incremental decoder: :meth:`feed` bytes as they arrive, :meth:`close` at the end.

    Args:
        max_line_chars: the longest line allowed (characters, line end excluded).
        max_event_chars: the most data one event may carry (characters).
        max_body_bytes: the most bytes the whole body may have.

    Raises (from :meth:`feed` and :meth:`close`):
        LimitExceededError: a bound was exceeded (``limit`` names it); nothing buffered
            grows past its bound first.
        StreamFormatError: the body is not UTF-8, or ended inside a line or an event.
    """

    __slots__ = (
        "_bytes_seen",
        "_cr_pending",
        "_data",
        "_data_chars",
        "_decoder",
        "_event",
        "_id",
        "_in_event",
        "_last_id",
        "_line",
        "_line_chars",
        "_max_body_bytes",
        "_max_event_chars",
        "_max_line_chars",
        "_retry",
        "_started",
    )

    def __init__(
        self,
        *,
        max_line_chars: int = DEFAULT_MAX_LINE_CHARS,
        max_event_chars: int = DEFAULT_MAX_EVENT_CHARS,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    ) -> None:
        for name, value in (
            ("max_line_chars", max_line_chars),
            ("max_event_chars", max_event_chars),
            ("max_body_bytes", max_body_bytes),
        ):
            if type(value) is not int or value < 1:
                raise ConfigurationError(name, value, "a positive int")
        self._max_line_chars = max_line_chars
        self._max_event_chars = max_event_chars
        self._max_body_bytes = max_body_bytes
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="strict")
        self._bytes_seen = 0
        self._started = False  # the BOM check happens on the first decoded character
        self._cr_pending = False  # the last chunk ended with CR: a following LF is its partner
        self._line: list[str] = []  # the current, unfinished line, in pieces
        self._line_chars = 0
        self._in_event = False  # a field line came since the last blank line
        self._data: list[str] = []
        self._data_chars = 0
        self._event = ""
        self._id: str | None = None
        self._last_id: str | None = None
        self._retry: int | None = None

    @property
    def bytes_seen(self) -> int:
        """How many bytes have been fed so far."""
        return self._bytes_seen

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Decode ``chunk`` and return the events it completed (often none or one)."""
        self._bytes_seen += len(chunk)
        if self._bytes_seen > self._max_body_bytes:
            raise LimitExceededError("$", "max_body_bytes", self._max_body_bytes, self._bytes_seen)
        try:
            text = self._decoder.decode(chunk)
        except UnicodeDecodeError as exc:
            raise StreamFormatError(
                f"the event stream is not valid UTF-8 (byte {self._bytes_seen - len(chunk) + exc.start})"
            ) from None
        return self._text(text) if text else []

    def close(self) -> list[SSEEvent]:
        """Finish: raise if the body ended inside a line or an event, else return ``[]``.

        The WHATWG rules drop such a trailing event silently; a truncated stream must not
        look complete, so here it is an error.
        """
        try:
            rest = self._decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            raise StreamFormatError("the event stream ended inside a UTF-8 character") from None
        events = self._text(rest) if rest else []
        if self._line:
            raise StreamFormatError("the event stream ended in the middle of a line (no line end)")
        if self._in_event:
            raise StreamFormatError(
                "the event stream ended in the middle of an event (no blank line after it)"
            )
        return events

    def _text(self, text: str) -> list[SSEEvent]:
        if not self._started:
            self._started = True
            if text[0] == "\ufeff":
                text = text[1:]
                if not text:
                    return []
        if self._cr_pending:
            self._cr_pending = False
            if text[0] == "\n":
                text = text[1:]
                if not text:
                    return []
        if "\r" in text:
            if text[-1] == "\r":
                self._cr_pending = True
            lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        else:
            lines = text.split("\n")
        # The last piece is the start of a line that has not ended yet.
        tail = lines.pop()
        events: list[SSEEvent] = []
        if lines:
            pending = self._line
            if pending:
                pending.append(lines[0])
                lines[0] = "".join(pending)
                pending.clear()
                self._line_chars = 0
            for line in lines:
                if len(line) > self._max_line_chars:
                    raise LimitExceededError("$", "max_line_chars", self._max_line_chars, len(line))
                if line:
                    self._field(line)
                elif self._in_event:
                    event = self._dispatch()
                    if event is not None:
                        events.append(event)
        if tail:
            self._line_chars += len(tail)
            if self._line_chars > self._max_line_chars:
                raise LimitExceededError(
                    "$", "max_line_chars", self._max_line_chars, self._line_chars
                )
            self._line.append(tail)
        return events

    def _field(self, line: str) -> None:
        if line[0] == ":":
            return  # a comment (keep-alives)
        self._in_event = True
        name, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data_chars += len(value) + 1
            if self._data_chars > self._max_event_chars + 1:
                raise LimitExceededError(
                    "$", "max_event_chars", self._max_event_chars, self._data_chars - 1
                )
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
        elif name == "retry" and value.isdigit() and value.isascii():
            # Digits only, as the standard says. A value past 64 bits means "never" just
            # as well: it is clamped without converting its digits (int() of thousands
            # of digits raises ValueError, and a line may hold millions).
            digits = value.lstrip("0")
            if len(digits) > _RETRY_DIGITS:
                self._retry = MAX_RETRY
            else:
                self._retry = min(int(digits or "0"), MAX_RETRY)
        # Any other field is ignored, as the standard says.

    def _dispatch(self) -> SSEEvent | None:
        """End the current event at a blank line; one without data dispatches nothing."""
        if self._id is not None:
            self._last_id = self._id
        event = None
        if self._data:
            event = SSEEvent(
                "\n".join(self._data), self._event or "message", self._last_id, self._retry
            )
        self._data = []
        self._data_chars = 0
        self._event = ""
        self._id = None
        self._retry = None
        self._in_event = False
        return event
