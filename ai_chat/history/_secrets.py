"""Detectors for credentials: API keys with known prefixes, JWTs, ``Authorization``
header values and PEM private keys.

Keys are found by their documented prefixes and alphabets; where a prefix alone is
ambiguous the validator asks for what real keys have (a digit and a letter: ``sk-learn``
is not a key; a JWT header that decodes to a JSON object). Every repeat is bounded and
possessive where it can be, so each scan is linear in the text.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import json
import re
from collections.abc import Iterator

from ._detector import Finding, PatternDetector

__all__ = [
    "ANTHROPIC_KEY",
    "AWS_ACCESS_KEY",
    "AWS_SECRET_KEY",
    "BASIC_AUTH",
    "BEARER_TOKEN",
    "GITHUB_TOKEN",
    "GOOGLE_API_KEY",
    "JWT",
    "OPENAI_KEY",
    "PRIVATE_KEY",
    "SLACK_TOKEN",
]


def _mixed(token: str) -> bool:
    """Whether a token has a digit and a letter, as generated keys do and words do not."""
    return any(char.isdigit() for char in token) and any(char.isalpha() for char in token)


def _mixed_match(match: re.Match[str]) -> str | None:
    token = match.group()
    return token if _mixed(token) else None


def _whole(match: re.Match[str]) -> str:
    return match.group()


ANTHROPIC_KEY = PatternDetector(
    "anthropic_key",
    "ANTHROPIC_KEY",
    re.compile(r"(?<![\w-])sk-ant-[a-z]{2,8}[0-9]{2}-[A-Za-z0-9_\-]{20,1024}+"),
    _mixed_match,
    hints=("sk-ant-",),
)

# Legacy keys (sk- and 48 characters), project keys (sk-proj-), service account and
# admin keys; Anthropic's sk-ant- keys are their own.
OPENAI_KEY = PatternDetector(
    "openai_key",
    "OPENAI_KEY",
    re.compile(r"(?<![\w-])sk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,1024}+"),
    _mixed_match,
    hints=("sk-",),
)

# Classic tokens (ghp_ personal, gho_ OAuth, ghu_ user-to-server, ghs_ server-to-server,
# ghr_ refresh) are 36 base62 characters today; GitHub reserves the right to lengthen
# them, so longer runs count too. Fine-grained tokens start github_pat_.
GITHUB_TOKEN = PatternDetector(
    "github_token",
    "GITHUB_TOKEN",
    re.compile(r"(?<![\w-])(?:gh[pousr]_[A-Za-z0-9]{36,251}+|github_pat_[A-Za-z0-9_]{40,251}+)"),
    _mixed_match,
    hints=("gh", "github_pat_"),
)

# Access key ids (AKIA long-term, ASIA temporary, ABIA/ACCA service) are base32 upper
# case. A secret access key has no prefix: only one assigned to a name that says so.
AWS_ACCESS_KEY = PatternDetector(
    "aws_access_key",
    "AWS_ACCESS_KEY",
    re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}(?![A-Za-z0-9])"),
    _whole,
    hints=("AKIA", "ASIA", "ABIA", "ACCA"),
)

AWS_SECRET_KEY = PatternDetector(
    "aws_secret_key",
    "AWS_SECRET_KEY",
    re.compile(
        r"(?i:aws_?secret_?access_?key)[\"']?[ \t]{0,8}[:=][ \t]{0,8}[\"']?"
        r"([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
    ),
    lambda match: match.group(1),
    hints=("ecret", "ECRET"),
    group=1,
)

SLACK_TOKEN = PatternDetector(
    "slack_token",
    "SLACK_TOKEN",
    re.compile(
        r"(?<![\w-])(?:xox[abposr]-[A-Za-z0-9\-]{10,250}+|xapp-[0-9]-[A-Za-z0-9\-]{10,250}+)"
    ),
    _mixed_match,
    hints=("xox", "xapp-"),
)

GOOGLE_API_KEY = PatternDetector(
    "google_api_key",
    "GOOGLE_API_KEY",
    re.compile(r"(?<![\w-])AIza[0-9A-Za-z_\-]{35}(?![\w-])"),
    _whole,
    hints=("AIza",),
)

# --- JWT ---------------------------------------------------------------------------------

_JWT = re.compile(
    r"(?<![\w-])eyJ[A-Za-z0-9_\-]{2,8192}+\.[A-Za-z0-9_\-]{0,65536}+\.[A-Za-z0-9_\-]{0,8192}+"
)


def _jwt(match: re.Match[str]) -> str | None:
    token = match.group()
    header = token.split(".", 1)[0]
    try:
        decoded = json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))
    except (binascii.Error, ValueError):
        return None
    return token if isinstance(decoded, dict) else None


JWT = PatternDetector("jwt", "JWT", _JWT, _jwt, hints=("eyJ",))

# --- Authorization header values --------------------------------------------------------

# The token68 alphabet of RFC 7235; the validator asks for a digit and a letter, so the
# word after "the bearer of" is never taken for a token.
BEARER_TOKEN = PatternDetector(
    "bearer_token",
    "BEARER_TOKEN",
    re.compile(r"(?<![\w-])(?i:bearer)[ \t]{1,8}+(?P<token>[A-Za-z0-9\-._~+/]{16,4096}+={0,2}+)"),
    lambda match: match.group("token") if _mixed(match.group("token")) else None,
    hints=("earer", "EARER"),
    group=1,
)


def _basic(match: re.Match[str]) -> str | None:
    credentials = match.group("credentials")
    try:
        decoded = base64.b64decode(credentials, validate=True)
    except (binascii.Error, ValueError):
        return None
    return credentials if b":" in decoded else None


BASIC_AUTH = PatternDetector(
    "basic_auth",
    "BASIC_AUTH",
    re.compile(
        r"(?i:authorization)[\"']?[ \t]{0,8}[:=][ \t]{0,8}[\"']?(?i:basic)[ \t]{1,8}+"
        r"(?P<credentials>[A-Za-z0-9+/]{4,4096}+={0,2}+)"
    ),
    _basic,
    hints=("asic", "ASIC"),
    group=1,
)

# --- PEM private keys -------------------------------------------------------------------

_PEM_BEGIN = re.compile(r"-----BEGIN ((?:[A-Z0-9]{1,16} ){0,3})PRIVATE KEY( BLOCK)?-----")
# Lines of base64 (also with the "\\n" escapes of a key pasted from JSON): prose after a
# truncated key is not taken with it.
_PEM_BODY = re.compile(
    r"(?:(?:[ \t]{0,64}+(?:\r?\n|\\n)){1,64}+[ \t]{0,64}+[A-Za-z0-9+/=]{1,128}+"
    r"(?=[ \t]{0,64}+(?:\r?\n|\\n|\Z))){0,2048}+"
)
_PEM_REACH = 65536  # a 16,384-bit RSA key is about 12,000 characters of PEM


class PrivateKeyDetector:
    """PEM private keys (``-----BEGIN ... PRIVATE KEY-----``) through their END line.

    A BEGIN line without its END line within reach (a truncated paste) is redacted with
    the base64 lines that follow it: a partial key is still a secret.
    """

    __slots__ = ()
    name = "private_key"

    def find(self, text: str, /) -> Iterator[Finding]:
        """Each private key block, keyed by its text."""
        if "PRIVATE KEY" not in text:
            return
        # The END lines are located once, so many BEGIN lines without an END cost one
        # scan of the text, not one each.
        ends = [match.start() for match in re.finditer("-----END ", text)]
        position = 0
        for begin in _PEM_BEGIN.finditer(text):
            start, after = begin.span()
            if start < position:
                continue  # inside the block found before
            end_line = f"-----END {begin.group(1)}PRIVATE KEY{begin.group(2) or ''}-----"
            index = bisect.bisect_left(ends, after)
            if (
                index < len(ends)
                and ends[index] - after <= _PEM_REACH
                and text.startswith(end_line, ends[index])
            ):
                end = ends[index] + len(end_line)
            else:
                body = _PEM_BODY.match(text, after)
                end = after if body is None else body.end()
                while end > after and text[end - 1].isspace():
                    end -= 1
            position = end
            yield Finding(start, end, "PRIVATE_KEY", text[start:end])

    def __repr__(self) -> str:
        return "PrivateKeyDetector()"


PRIVATE_KEY = PrivateKeyDetector()
