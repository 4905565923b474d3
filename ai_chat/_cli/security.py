"""``ai-chat serve``'s security options: what they mean for ``create_chat_app``.

Kept apart from the command line itself so that the options are one small piece: the
serve command adds them (:func:`add_security_options`), turns them into
``create_chat_app`` keywords (:func:`security_settings`), and prints
:func:`exposure_warning` when the server is reachable from other machines. Nothing here
imports the server extra until the server starts.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
from pathlib import Path
from typing import Any, Final, cast

__all__ = [
    "SECRET_VARIABLE",
    "TOKEN_VARIABLE",
    "add_security_options",
    "count",
    "exposure_warning",
    "security_settings",
]

TOKEN_VARIABLE: Final = "AI_CHAT_TOKEN"
SECRET_VARIABLE: Final = "AI_CHAT_SECRET"
# ai_chat.server.AnswerLimits' defaults (not imported: that needs the server extra); a
# test keeps them equal.
CONCURRENT_ANSWERS: Final = 4
ANSWERS_PER_MINUTE: Final = 30


def count(text: str) -> int:
    """A limit's value: 0 (no limit) or more (argparse names it in its errors)."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 (no limit) or more, got {value}")
    return value


def add_security_options(serve: argparse.ArgumentParser) -> None:
    """Add ``--token``, ``--allow-origin``, ``--allow-host``, ``--secret``, the limits and
    ``--subject-header`` to the serve command."""
    group = serve.add_argument_group(
        "security options (docs/deploying.md)",
        "By default cross-site requests, unknown Host names and non-JSON bodies are refused, "
        "each browser sees only its own conversations (a signed cookie), and the answers "
        "per visitor are limited.",
    )
    group.add_argument(
        "--token",
        default=os.environ.get(TOKEN_VARIABLE),
        help="require Authorization: Bearer TOKEN on the API (the page asks for it once); "
        f"default: ${TOKEN_VARIABLE}, which keeps it out of the process list",
    )
    group.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a front end on another origin (https://app.example.com) that may call the API, "
        "with CORS; repeatable",
    )
    group.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name the server answers to besides its own address and localhost (the "
        'public name behind a reverse proxy); repeatable; "*" turns the Host check off',
    )
    group.add_argument(
        "--secret",
        default=os.environ.get(SECRET_VARIABLE),
        help=f"signs the visitor cookies (default: ${SECRET_VARIABLE}, else a file beside the "
        "store, created with mode 0600: PATH.secret for sqlite:PATH, ai-chat.secret for "
        "PostgreSQL, a random secret for memory and none)",
    )
    group.add_argument(
        "--max-concurrent-answers",
        type=count,
        default=CONCURRENT_ANSWERS,
        metavar="N",
        help="answers one visitor may have running at once, 0 for no limit (default: %(default)s)",
    )
    group.add_argument(
        "--max-answers-per-minute",
        type=count,
        default=ANSWERS_PER_MINUTE,
        metavar="N",
        help="answers one visitor may start per minute, 0 for no limit (default: %(default)s)",
    )
    group.add_argument(
        "--subject-header",
        action="store_true",
        help="development only: name the visitor by the x-ai-chat-subject header, which any "
        "client can set",
    )


def security_settings(
    args: argparse.Namespace, host: str, store_kind: str, store_target: str | None
) -> dict[str, Any]:
    """The ``create_chat_app`` keywords for the parsed options.

    Reads (or creates) the secret file beside a SQLite or PostgreSQL store.

    Raises:
        ConfigurationError: the secret file cannot be read or created, or is readable by
            others.
    """
    from ..server import AnswerLimits, load_secret

    hosts = list(cast("list[str]", args.allow_host))
    if host and not _is_ip(host):
        hosts.append(host)  # the name the server was bound with is its own
    secret: str | bytes | None = cast("str | None", args.secret) or None
    if secret is None and store_kind == "sqlite":
        # In a folder that does not exist the store fails first, with its own message.
        if Path(cast(str, store_target)).parent.is_dir():
            secret = load_secret(f"{store_target}.secret")
    elif secret is None and store_kind == "postgres":
        secret = load_secret("ai-chat.secret")
    concurrent = cast(int, args.max_concurrent_answers)
    per_minute = cast(int, args.max_answers_per_minute)
    return {
        "allowed_origins": list(cast("list[str]", args.allow_origin)),
        "allowed_hosts": hosts,
        "token": cast("str | None", args.token) or None,
        "secret": secret,
        "subject_header": cast(bool, args.subject_header),
        "answer_limits": AnswerLimits(concurrent or None, per_minute or None),
    }


def exposure_warning(
    address: str, *, loopback: bool, provider: str, store: bool, token: bool
) -> str | None:
    """What serving on ``address`` leaves open to other machines, or ``None``."""
    if loopback:
        return None
    if token:
        return (
            f"{address} is reachable from other machines and the token crosses the network "
            "in clear text over http: serve it behind TLS (docs/deploying.md)"
        )
    uses: list[str] = []
    if provider != "demo":
        uses.append(f"spend your {provider} quota")
    if store:
        uses.append("keep conversations in your store")
    if not uses:
        return None
    return (
        f"no --token: anyone who can reach {address} can {' and '.join(uses)} (each browser "
        "sees only its own conversations and the answers per visitor are limited, but a "
        f"client can always come back as a new visitor); set --token (or ${TOKEN_VARIABLE}) "
        "and serve it behind TLS (docs/deploying.md)"
    )


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]").partition("%")[0])
    except ValueError:
        return False
    return True
