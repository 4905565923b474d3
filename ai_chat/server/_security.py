"""The checks every API request passes before the server does anything for it.

In this order, each answered with a JSON error (see ``docs/deploying.md``):

1. ``Host`` (DNS rebinding): the bound address, a loopback address, ``localhost`` or an
   allowed host, else 421 ``unknown_host``. As Jupyter Server's ``check_host``: a page
   whose own name resolves to 127.0.0.1 still sends that name.
2. A CORS preflight (``OPTIONS`` with ``Access-Control-Request-Method``): 204 with the CORS
   headers for an allowed origin, 403 ``cross_origin`` for any other.
3. The method, else 405 ``method_not_allowed``.
4. ``Origin`` and ``Sec-Fetch-Site`` (cross-site requests), as Go's
   ``http.CrossOriginProtection`` decides: an allowed origin passes; else
   ``Sec-Fetch-Site`` ``same-origin`` or ``none`` passes and any other value is refused;
   without it, a request without ``Origin`` (not from a browser) passes, and one whose
   ``Origin`` names another host than ``Host`` is refused: 403 ``cross_origin``. This runs
   on reads of stored conversations too, not only on writes.
5. The token, when one is required: 401 ``unauthorized``.
6. The subject (:meth:`Guard.identify`): the application's ``auth`` callback, or the
   visitor cookie (a tampered one: 403 ``invalid_session``).
7. ``Content-Type: application/json`` on endpoints that read a JSON body, before the body
   is read: 415 ``unsupported_media_type``.
"""

from __future__ import annotations

import inspect
import ipaddress
import re
import secrets
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final, cast
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import Response

from .._errors import ConfigurationError
from ._http import JSONError
from ._subjects import BearerToken, VisitorCookie, check_secret

__all__ = [
    "ALL_METHODS",
    "SUBJECT_HEADER",
    "AuthCallback",
    "Guard",
    "Handler",
    "Identity",
    "admitted_subject",
    "guarded",
]

SUBJECT_HEADER: Final = "x-ai-chat-subject"
MAX_SUBJECT_CHARS: Final = 256
ALL_METHODS: Final = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
_SCOPE_KEY: Final = "ai_chat.subject"
_PREFLIGHT_MAX_AGE: Final = "600"
_EXPOSED: Final = "retry-after, x-vercel-ai-ui-message-stream"
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}
# A Host header: a name or an IPv4 address, or a bracketed IPv6 address; then a port.
_HOST: Final = re.compile(
    r"(?:\[(?P<ip6>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9_.-]+))(?::[0-9]{1,5})?"
)
_NAME: Final = re.compile(r"[a-z0-9_.-]+")
_LOCAL: Final = frozenset({"localhost", "127.0.0.1", "::1"})
_HEADER_NAMES: Final = re.compile(
    r"[!#$%&'*+.^_`|~0-9A-Za-z-]+(?: *, *[!#$%&'*+.^_`|~0-9A-Za-z-]+)*"
)
_WWW_AUTHENTICATE: Final = {"www-authenticate": 'Bearer realm="ai_chat"'}

AuthCallback = Callable[[Request], "str | Awaitable[str | None] | None"]


@dataclass(frozen=True, slots=True)
class Identity:
    """Who a request is from.

    Attributes:
        subject: the owner of its conversations.
        limit_key: what the answer limits count it under: the subject, or the client's
            address for a client that came without a cookie (a new visitor per request).
        cookie: a new visitor cookie value to set on the response, if any.
    """

    subject: str
    limit_key: str
    cookie: str | None = None


Handler = Callable[[Request, Identity], Awaitable[Response]]


class _SessionRefused(JSONError):
    """403 ``invalid_session``, with the fresh cookie the response sets."""

    def __init__(self, cookie: str) -> None:
        super().__init__(
            403,
            "invalid_session",
            "the visitor cookie is not valid (it was changed, or signed with another "
            "secret); a new one was set: send the request again",
        )
        self.cookie = cookie


class Guard:
    """One server's security settings, checked once (see the module docstring).

    Raises:
        ConfigurationError: a setting is invalid (an origin that is not
            ``scheme://host[:port]``, a host with a port or a path, a short token or
            secret, an ``auth`` that is not callable).
    """

    __slots__ = ("_any_host", "_auth", "_cookie", "_hosts", "_origins", "_subject_header", "_token")

    def __init__(
        self,
        *,
        allowed_origins: Sequence[str] = (),
        allowed_hosts: Sequence[str] = (),
        token: str | None = None,
        auth: AuthCallback | None = None,
        secret: str | bytes | None = None,
        subject_header: bool = False,
    ) -> None:
        self._origins = frozenset(
            _origin(value) for value in _sequence("allowed_origins", allowed_origins)
        )
        hosts = [_host_setting(value) for value in _sequence("allowed_hosts", allowed_hosts)]
        self._any_host = "*" in hosts
        self._hosts = frozenset(hosts)
        self._token = None if token is None else BearerToken(token)
        if auth is not None and not callable(auth):
            raise ConfigurationError("auth", auth, "None or a function of the request")
        self._auth = auth
        if type(subject_header) is not bool:
            raise ConfigurationError("subject_header", subject_header, "a bool")
        self._subject_header = subject_header
        persistent = secret is not None
        key = check_secret(secret) if secret is not None else secrets.token_bytes(32)
        self._cookie = None if auth is not None else VisitorCookie(key, persistent=persistent)

    @property
    def token_required(self) -> bool:
        """Whether the API requires a bearer token (the page then asks for it)."""
        return self._token is not None

    # --- the checks, in order ------------------------------------------------------------

    def check_host(self, request: Request) -> None:
        """Refuse (421) a ``Host`` this server does not answer to."""
        if self._any_host:
            return
        header = request.headers.get("host")
        if header is None:
            return  # HTTP/1.0 without Host: not a browser (every browser sends one)
        match = _HOST.fullmatch(header)
        if match is not None:
            host = (match["ip6"] or match["name"]).lower()
            if host in _LOCAL or host in self._hosts:
                return  # the common cases, without parsing an address
            host = _canonical(host)
            if host in self._hosts or _is_bound(host, request):
                return
        raise JSONError(
            421,
            "unknown_host",
            f"this server does not answer to the host {header!r}: it answers to its own "
            "address, localhost and the allowed hosts (allowed_hosts, ai-chat serve "
            "--allow-host NAME)",
        )

    def check_origin(self, request: Request) -> str | None:
        """Refuse (403) a cross-site request; return the ``Origin`` to grant CORS, if any."""
        origin = request.headers.get("origin")
        if origin is not None and self._origins and _normalized(origin) in self._origins:
            return origin
        site = request.headers.get("sec-fetch-site")
        if site is not None:
            if site in ("same-origin", "none"):
                return None
            raise _cross_origin(f"Sec-Fetch-Site: {site}")
        if origin is None:
            return None
        parts = urlsplit(origin)
        if parts.scheme in _DEFAULT_PORTS and parts.netloc.lower() == _host_header(request):
            return None
        raise _cross_origin(f"Origin: {origin}")

    def check_token(self, request: Request) -> None:
        """Refuse (401) a request without the required token."""
        token = self._token
        if token is None:
            return
        authorization = request.headers.get("authorization")
        if token.matches(authorization):
            return
        message = (
            "this server requires a token: send Authorization: Bearer <token>"
            if authorization is None
            else "the token is not valid"
        )
        raise JSONError(401, "unauthorized", message, headers=_WWW_AUTHENTICATE)

    async def identify(self, request: Request) -> Identity:
        """The request's subject; raises 401 (``auth`` said no), 400 or 403 (a bad cookie)."""
        auth = self._auth
        if auth is not None:
            value = auth(request)
            if inspect.isawaitable(value):
                value = await value
            if value is None:
                raise JSONError(
                    401, "unauthorized", "authentication required", headers=_WWW_AUTHENTICATE
                )
            subject = _checked_subject(value)
            return Identity(subject, "subject:" + subject)
        if self._subject_header:
            header = request.headers.get(SUBJECT_HEADER, "").strip()
            if header:
                subject = _checked_subject(header)
                return Identity(subject, "subject:" + subject)
        cookie = cast(VisitorCookie, self._cookie)
        value = request.cookies.get(cookie.name)
        if value is None:
            subject, fresh = cookie.mint()
            client = request.client
            return Identity(subject, "address:" + (client.host if client else "unknown"), fresh)
        subject = cookie.verify(value)
        if subject is None:
            raise _SessionRefused(cookie.mint()[1])
        return Identity(subject, "subject:" + subject)

    def page_cookie(self, request: Request) -> str | None:
        """A visitor cookie for the page's response, unless the browser has a valid one."""
        cookie = self._cookie
        if cookie is None:
            return None
        value = request.cookies.get(cookie.name)
        if value is not None and cookie.verify(value) is not None:
            return None
        return cookie.mint()[1]

    # --- responses -----------------------------------------------------------------------

    def preflight(self, request: Request, methods: Iterable[str]) -> Response:
        """The answer to a CORS preflight: 204 for an allowed origin, else 403."""
        origin = request.headers.get("origin")
        if origin is None or _normalized(origin) not in self._origins:
            raise _cross_origin(f"Origin: {origin}" if origin else "no Origin")
        requested = request.headers.get("access-control-request-headers", "").strip()
        allowed = requested if _HEADER_NAMES.fullmatch(requested) else "content-type, authorization"
        headers = {
            "access-control-allow-methods": ", ".join(methods),
            "access-control-allow-headers": allowed,
            "access-control-max-age": _PREFLIGHT_MAX_AGE,
        }
        response = Response(status_code=204, headers=headers)
        self.decorate(request, response, origin, None)
        response.headers["vary"] = "Origin, Access-Control-Request-Headers"
        return response

    def decorate(
        self, request: Request, response: Response, origin: str | None, cookie: str | None
    ) -> None:
        """Add the CORS headers (for an allowed ``origin``) and a new visitor ``cookie``."""
        if self._origins:
            response.headers["vary"] = "Origin"
        if origin is not None:
            response.headers["access-control-allow-origin"] = origin
            response.headers["access-control-allow-credentials"] = "true"
            response.headers["access-control-expose-headers"] = _EXPOSED
        if cookie is not None and self._cookie is not None:
            response.set_cookie(
                self._cookie.name,
                cookie,
                max_age=self._cookie.max_age,
                path="/",
                secure=request.url.scheme == "https",
                httponly=True,
                samesite="lax",
            )


def guarded(
    guard: Guard, handler: Handler, methods: Sequence[str], *, json_body: bool
) -> Callable[[Request], Awaitable[Response]]:
    """``handler`` behind ``guard``'s checks, as a Starlette endpoint of ``methods``.

    Route every method to it (:data:`ALL_METHODS`), so that a wrong one gets a JSON 405
    after the ``Host`` check. ``json_body`` adds the ``Content-Type`` check.
    """
    accepted = frozenset(methods) | ({"HEAD"} if "GET" in methods else set[str]())
    allow = ", ".join(methods)

    async def endpoint(request: Request) -> Response:
        origin: str | None = None
        try:
            guard.check_host(request)
            if request.method == "OPTIONS" and "access-control-request-method" in request.headers:
                return guard.preflight(request, methods)
            if request.method not in accepted:
                raise JSONError(405, "method_not_allowed", f"use {allow}", headers={"allow": allow})
            origin = guard.check_origin(request)
            guard.check_token(request)
            identity = await guard.identify(request)
            if json_body:
                _check_json(request.headers.get("content-type"))
        except JSONError as exc:
            response = exc.response()
            cookie = exc.cookie if isinstance(exc, _SessionRefused) else None
            guard.decorate(request, response, origin, cookie)
            return response
        request.scope[_SCOPE_KEY] = identity.subject
        response = await handler(request, identity)
        guard.decorate(request, response, origin, identity.cookie)
        return response

    return endpoint


def admitted_subject(request: Request) -> str:
    """The subject :func:`guarded` admitted the request as."""
    return cast(str, request.scope[_SCOPE_KEY])


def _check_json(content_type: str | None) -> None:
    media, _, parameters = (content_type or "").partition(";")
    charset = ""
    for parameter in parameters.split(";"):
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset":
            charset = value.strip().strip('"').lower()
    if media.strip().lower() == "application/json" and charset in ("", "utf-8"):
        return
    raise JSONError(
        415,
        "unsupported_media_type",
        "send the body as Content-Type: application/json (UTF-8), got "
        + (repr(content_type) if content_type else "no Content-Type"),
    )


def _cross_origin(seen: str) -> JSONError:
    return JSONError(
        403,
        "cross_origin",
        f"cross-site request refused ({seen}): this endpoint answers its own pages and "
        "the allowed origins only (allowed_origins, ai-chat serve --allow-origin ORIGIN)",
    )


def _checked_subject(value: object) -> str:
    if type(value) is not str or not 0 < len(value) <= MAX_SUBJECT_CHARS:
        raise JSONError(
            400,
            "invalid_subject",
            f"the subject must be a non-empty string of at most {MAX_SUBJECT_CHARS} chars",
        )
    return value


def _host_header(request: Request) -> str:
    return request.headers.get("host", "").lower()


def _canonical(host: str) -> str:
    """A host name lowercased, or an IP address in its canonical text form."""
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host.lower()


def _is_bound(host: str, request: Request) -> bool:
    """Whether ``host`` is a loopback address or the address the connection came in on."""
    try:
        if ipaddress.ip_address(host).is_loopback:
            return True
    except ValueError:
        pass
    server = request.scope.get("server")
    return server is not None and server[0] is not None and _canonical(str(server[0])) == host


def _normalized(origin: str) -> str | None:
    parts = urlsplit(origin.strip())
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname or parts.path or parts.query:
        return None
    if parts.username is not None or parts.password is not None or parts.fragment:
        return None
    try:
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    if port is None or port == _DEFAULT_PORTS[scheme]:
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def _sequence(name: str, value: object) -> Sequence[object]:
    if isinstance(value, str) or not isinstance(value, (list, tuple, frozenset, set)):
        raise ConfigurationError(name, value, "a list of strings")
    return list(cast("Iterable[object]", value))


def _origin(value: object) -> str:
    normalized = _normalized(value) if isinstance(value, str) else None
    if normalized is None:
        raise ConfigurationError(
            "allowed_origins", value, "origins like https://app.example.com[:port] (no path)"
        )
    return normalized


def _host_setting(value: object) -> str:
    if value == "*":
        return "*"
    if isinstance(value, str):
        text = value.strip().lower()
        if text.startswith("[") and text.endswith("]"):
            text = text[1:-1]
        try:
            return str(ipaddress.ip_address(text))
        except ValueError:
            if _NAME.fullmatch(text) is not None:
                return text
    raise ConfigurationError(
        "allowed_hosts", value, 'host names without a port, such as chat.example.com, or "*"'
    )
