"""Who is asking: a visitor's signed cookie, a bearer token, or the application's callback.

* :class:`VisitorCookie` gives each browser its own subject: a random id in an HttpOnly,
  ``SameSite=Lax`` cookie, signed with HMAC-SHA256 under the server's secret, so that a
  client can neither choose nor change its id. Signed with the standard library's
  :mod:`hmac` and :mod:`secrets` rather than ``itsdangerous``: the value is one random id
  with no payload, expiry or serialization to manage, which is a dozen lines, and the
  server gains no dependency.
* :class:`BearerToken` checks ``Authorization: Bearer <token>`` in constant time.
* :func:`load_secret` reads the secret kept in a file (creating it, mode 0600).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import os
import re
import secrets
from pathlib import Path
from typing import Final

from .._errors import ConfigurationError

__all__ = [
    "MIN_SECRET_BYTES",
    "MIN_TOKEN_CHARS",
    "BearerToken",
    "VisitorCookie",
    "check_secret",
    "load_secret",
]

MIN_SECRET_BYTES: Final = 16
MIN_TOKEN_CHARS: Final = 16
# Browsers cap a cookie's lifetime at 400 days (RFC 6265bis); ask for that.
_MAX_AGE: Final = 400 * 24 * 60 * 60
_ID: Final = re.compile(r"[A-Za-z0-9_-]{22}")
_MAC_CHARS: Final = 43  # 32 bytes in unpadded base64url
# Visible ASCII: what fits in a header (RFC 9110 token68 is narrower; any of these is fine).
_TOKEN: Final = re.compile(r"[\x21-\x7e]+")
_BEARER: Final = re.compile(r"[Bb][Ee][Aa][Rr][Ee][Rr] +(\S+) *")


def check_secret(secret: object) -> bytes:
    """``secret`` as bytes (a str is UTF-8 encoded); at least 16 bytes.

    Raises:
        ConfigurationError: not a str or bytes, or shorter than 16 bytes.
    """
    if isinstance(secret, str):
        secret = secret.encode("utf-8")
    if not isinstance(secret, bytes) or len(secret) < MIN_SECRET_BYTES:
        raise ConfigurationError(
            "secret", "<hidden>", f"a str or bytes of at least {MIN_SECRET_BYTES} bytes"
        )
    return secret


def load_secret(path: str | os.PathLike[str]) -> bytes:
    """The secret kept in the file at ``path``, which is created if it does not exist.

    A new file holds 32 random bytes as hex and is created with mode 0600 (readable by its
    owner only), atomically: two servers starting at once read the same secret. An
    existing file's text (stripped) is the secret; on POSIX it must not be readable by the
    group or others, as ssh insists for its keys. Keep the file beside the conversation
    store: whoever has it can sign any visitor's cookie.

    Raises:
        ConfigurationError: the file cannot be read or created, is readable by others, or
            holds fewer than 16 bytes.
    """
    target = Path(path)
    try:
        return _read_secret(target)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise ConfigurationError(
            "secret file", str(target), f"a readable file ({exc.strerror or exc})"
        ) from exc
    fresh = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    try:
        descriptor = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="ascii") as file:
            file.write(secrets.token_hex(32) + "\n")
            file.flush()
            os.fsync(file.fileno())
        # A hard link never replaces an existing file: the first server to get here wins.
        with contextlib.suppress(FileExistsError):
            os.link(fresh, target)
        return _read_secret(target)
    except OSError as exc:
        raise ConfigurationError(
            "secret file", str(target), f"a file that can be created ({exc.strerror or exc})"
        ) from exc
    finally:
        fresh.unlink(missing_ok=True)


def _read_secret(path: Path) -> bytes:
    with path.open("rb") as file:
        if os.name == "posix" and os.fstat(file.fileno()).st_mode & 0o077:
            raise ConfigurationError(
                "secret file", str(path), f"readable by its owner only (chmod 600 {path})"
            )
        text = file.read().strip()
    if len(text) < MIN_SECRET_BYTES:
        raise ConfigurationError(
            "secret file", str(path), f"a file holding at least {MIN_SECRET_BYTES} bytes"
        )
    return text


class VisitorCookie:
    """The signed cookie that names a visitor: ``<id>.<signature>``.

    The id is 16 random bytes (base64url); the signature is HMAC-SHA256 of the id under a
    key derived from the secret. The cookie's name is derived from the secret too
    (``ai_chat_<12 hex digits>``): cookies do not tell ports apart, so two servers on one
    host with different secrets would otherwise overwrite each other's cookie on every
    visit, and each visitor would lose its conversations.

    Args:
        secret: the signing secret (at least 16 bytes).
        persistent: ``True`` when the secret outlives the process (given, or kept in a
            file): the cookie then lasts 400 days; otherwise it is a session cookie, since
            it cannot be verified after a restart anyway.
    """

    __slots__ = ("_key", "max_age", "name")

    def __init__(self, secret: bytes, *, persistent: bool) -> None:
        self._key = hmac.new(secret, b"ai_chat visitor cookie key", hashlib.sha256).digest()
        label = hmac.new(secret, b"ai_chat visitor cookie name", hashlib.sha256).hexdigest()
        self.name: str = "ai_chat_" + label[:12]
        self.max_age: int | None = _MAX_AGE if persistent else None

    def mint(self) -> tuple[str, str]:
        """A new visitor: ``(subject, cookie value)``."""
        visitor = secrets.token_urlsafe(16)
        return _subject(visitor), f"{visitor}.{self._sign(visitor)}"

    def verify(self, value: str) -> str | None:
        """The subject a cookie value names, or ``None`` if it was not signed here."""
        visitor, dot, signature = value.partition(".")
        if not dot or _ID.fullmatch(visitor) is None or len(signature) != _MAC_CHARS:
            return None
        if not hmac.compare_digest(
            signature.encode("ascii", "replace"), self._sign(visitor).encode()
        ):
            return None
        return _subject(visitor)

    def _sign(self, visitor: str) -> str:
        mac = hmac.new(self._key, visitor.encode("ascii"), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(mac).rstrip(b"=").decode("ascii")


def _subject(visitor: str) -> str:
    return "visitor:" + visitor


class BearerToken:
    """The token the API requires, checked in constant time.

    Raises:
        ConfigurationError: the token is shorter than 16 characters or holds a character
            that is not visible ASCII (it must fit in a header).
    """

    __slots__ = ("_digest",)

    def __init__(self, token: object) -> None:
        if (
            not isinstance(token, str)
            or len(token) < MIN_TOKEN_CHARS
            or _TOKEN.fullmatch(token) is None
        ):
            raise ConfigurationError(
                "token",
                "<hidden>",
                f"a str of at least {MIN_TOKEN_CHARS} visible ASCII characters (python -c "
                '"import secrets; print(secrets.token_urlsafe())" makes one)',
            )
        self._digest = hashlib.sha256(token.encode("ascii")).digest()

    def matches(self, authorization: str | None) -> bool:
        """Whether an ``Authorization`` header value carries the token."""
        if authorization is None:
            return False
        found = _BEARER.fullmatch(authorization)
        if found is None:
            return False
        # Digests of equal length: the comparison's time tells nothing, not even the length.
        presented = hashlib.sha256(found[1].encode("utf-8", "replace")).digest()
        return hmac.compare_digest(presented, self._digest)
