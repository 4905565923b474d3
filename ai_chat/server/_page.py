"""The chat page served at ``/``: one self-contained HTML document, no build step.

It speaks the same protocol as the AI SDK's ``DefaultChatTransport``: it POSTs ``{id,
messages, trigger: "submit-message"}`` (the whole history as ``UIMessage[]``) to the
``api/chat`` endpoint next to the page (another with :func:`chat_page_html`), reads the UI
message stream with ``fetch`` and a ``ReadableStream``, and renders the parts as they
arrive: text, reasoning (collapsed), tool calls with their input and output, sources,
files, data parts, and errors. The stop button aborts the request, so the server sees the
client disconnect and cancels the answer.

When the server requires a token, the page asks for it once (a form above the log), keeps
it in ``sessionStorage`` (this tab only, gone when it closes), sends it with every request
as ``Authorization: Bearer <token>``, and asks again when the server answers 401.

When the server keeps conversations (:func:`chat_page_html` given ``chats``), the page
shows the subject's recent conversations above the log with a "New chat" button, keeps
the chat id in the URL fragment (``#<id>``), and on load (or when the fragment changes)
restores the conversation from ``GET api/chats/<id>``. Without it the page keeps
nothing.

The page is three package data files in ``ai_chat/server/static/``: ``index.html`` (the
document, with ``{{name}}`` slots), ``chat.css`` and ``chat.js`` (a classic script). They
are read once, at import, through :mod:`importlib.resources`, so the page works from a
wheel or a zip. The style and the script are inlined, and the page's
``Content-Security-Policy`` (a meta tag) allows exactly those two, by the SHA-256 hash of
their text, and connections to the page's own origin: no ``'unsafe-inline'``.

Model text only ever reaches the page through ``textContent`` and text nodes, never as
markup; links and images accept only ``http(s):`` URLs (and ``data:image/`` for images).
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from importlib.resources import files
from typing import Final

__all__ = ["CHAT_PAGE_HTML", "chat_page_html"]

_STATIC: Final = files("ai_chat.server").joinpath("static")
_SLOT: Final = re.compile(r"\{\{([a-z]+)\}\}")
_DEFAULT_API: Final = "api/chat"


def _read(name: str) -> str:
    # Universal newlines: the text hashed is then the text the browser's HTML parser
    # keeps (it turns CR and CRLF into LF), even from a checkout with CRLF line ends.
    return _STATIC.joinpath(name).read_text(encoding="utf-8")


def _csp_hash(source: str) -> str:
    digest = hashlib.sha256(source.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


_STYLE: Final = _read("chat.css")
_SCRIPT: Final = _read("chat.js")
# index.html split at its slots: literal text at even indexes, slot names at odd ones.
_PIECES: Final = tuple(_SLOT.split(_read("index.html")))
_CSP: Final = (
    "default-src 'none'; "
    f"script-src {_csp_hash(_SCRIPT)}; "
    f"style-src {_csp_hash(_STYLE)}; "
    "connect-src 'self'; "
    "img-src 'self' data: https: http:; "
    "base-uri 'none'; "
    "form-action 'none'"
)


def chat_page_html(
    api: str = _DEFAULT_API, chats: str | None = None, *, token: bool = False
) -> str:
    """The chat page, posting to ``api``: a URL resolved against the page's own URL.

    The default, ``"api/chat"``, is ``/api/chat`` for a page served at ``/`` and
    ``/chat/api/chat`` for one served at ``/chat/`` (an app mounted under ``/chat``).
    A server whose endpoint has another path passes it relative, without the leading
    slash (``"v1/chat"``), or absolute. ``chats`` is where a server that keeps
    conversations serves them (``"api/chats"``: ``GET chats``, ``GET chats/<id>``),
    resolved the same way; ``None`` (a server without a store) shows no history.
    Both are HTML-escaped into attributes, so any string is safe. With ``token``, the
    page asks for the server's token before its first request and sends it as
    ``Authorization: Bearer`` (kept in ``sessionStorage``: this tab only).
    """
    values = {
        "csp": _CSP,
        "api": html.escape(api, quote=True),
        "chats": html.escape(chats or "", quote=True),
        "token": "required" if token else "",
        "style": _STYLE,
        "script": _SCRIPT,
    }
    # One pass over the slots: an inserted value is never searched for slots itself.
    return "".join(values[piece] if index % 2 else piece for index, piece in enumerate(_PIECES))


CHAT_PAGE_HTML: Final[str] = chat_page_html()
"""The chat page posting to ``api/chat``: HTML with its style and script inline (no external
resources)."""
