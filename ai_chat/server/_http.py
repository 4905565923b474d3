"""What the server's endpoints share: JSON error answers and the bounded body read."""

from __future__ import annotations

import re
from collections.abc import Mapping
from contextlib import aclosing
from typing import Final

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse

from .._errors import AIChatError

__all__ = ["JSONError", "read_body"]

# A content-length the server believes: ASCII digits, short enough to be a real size.
_LENGTH: Final = re.compile(r"[0-9]{1,19}")


class _JSONError(AIChatError):
    """A JSON error answer ``{"error": {"type", "message", "path"?, ...}}`` with ``status``.

    ``fields`` are further facts about the error, added to the error object under their
    own (camelCase) names, such as ``messageId``; ``headers`` go on the response (such as
    ``retry-after``). Raised inside an endpoint and turned
    into its :meth:`response` there; it never leaves the server (hence the private class,
    used under the name :data:`JSONError`).
    """

    def __init__(
        self,
        status: int,
        kind: str,
        message: str,
        path: str | None = None,
        fields: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message
        self.path = path
        self.fields: Mapping[str, str] = dict(fields or {})
        self.headers: Mapping[str, str] = dict(headers or {})

    def response(self) -> JSONResponse:
        error: dict[str, object] = {"type": self.kind, "message": self.message}
        if self.path is not None:
            error["path"] = self.path
        error.update(self.fields)
        return JSONResponse({"error": error}, status_code=self.status, headers=self.headers)


JSONError = _JSONError


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, never read past ``limit`` bytes.

    A ``content-length`` over the limit is refused before reading (413); one that is not
    a plain number is a 400; a chunked body is counted as it arrives and cut at the limit.
    """
    declared = request.headers.get("content-length")
    if declared is not None:
        if _LENGTH.fullmatch(declared) is None:
            raise JSONError(400, "invalid_request", "the content-length header is not a number")
        if int(declared) > limit:
            raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    try:
        async with aclosing(request.stream()) as pieces:
            async for chunk in pieces:
                size += len(chunk)
                if size > limit:
                    raise _too_large(limit)
                chunks.append(chunk)
    except ClientDisconnect:
        raise JSONError(400, "invalid_request", "the client disconnected") from None
    return b"".join(chunks)


def _too_large(limit: int) -> _JSONError:
    return JSONError(
        413,
        "body_too_large",
        f"the request body is larger than max_body_bytes={limit:,} bytes",
    )
