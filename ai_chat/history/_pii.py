"""Detectors for personal data: e-mail addresses, payment cards, US social security
numbers and IP addresses (phone numbers have their own module, _phones.py).

Each is a cheap, bounded regular expression that finds candidates and a validator that
decides: the e-mail's domain shape, the Luhn checksum and issuer ranges, the SSA's
never-issued SSN ranges, the standard library's :mod:`ipaddress`.

Every quantifier is bounded and the candidates cannot start inside a longer run (a
look-behind excludes word characters), so each pattern runs in time linear in the text,
whatever the text (``tests/history/test_redaction_hostile.py`` holds them to it).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator

from ._detector import Finding, PatternDetector

__all__ = [
    "CARD",
    "EMAIL",
    "IPV4",
    "IPV6",
    "SSN",
    "CardDetector",
    "EmailDetector",
]

# --- e-mail ----------------------------------------------------------------------------

_ATOM = r"[\w!#$%&'*+/=?^`{|}~-]"
_EMAIL = re.compile(
    rf"(?<![\w.!#$%&'*+/=?^`{{|}}~-])({_ATOM}{{1,64}}(?:\.{_ATOM}{{1,64}}){{0,8}})"
    r"@((?:[^\W_](?:[\w-]{0,61}[^\W_])?\.){1,8}(?:[^\W\d_]{2,63}|xn--[a-z0-9-]{1,59}))"
    r"(?![\w-]|\.[^\W_])"
)
# File names such as icon@2x.png have an address's shape; these endings are not
# top-level domains (md, so, py, rs, sh... are country codes, so they stay addresses).
_FILE_ENDINGS = frozenset(
    {
        "png",
        "jpg",
        "jpeg",
        "gif",
        "svg",
        "webp",
        "bmp",
        "ico",
        "tif",
        "tiff",
        "heic",
        "avif",
        "pdf",
        "psd",
        "css",
        "scss",
        "html",
        "htm",
        "js",
        "mjs",
        "cjs",
        "jsx",
        "tsx",
        "json",
        "yaml",
        "yml",
        "toml",
        "ini",
        "cfg",
        "conf",
        "log",
        "txt",
        "csv",
        "tsv",
        "xml",
        "wasm",
        "map",
        "woff",
        "woff2",
        "ttf",
        "otf",
        "eot",
        "mp3",
        "wav",
        "ogg",
        "flac",
        "mp4",
        "webm",
        "mkv",
        "avi",
        "wmv",
        "exe",
        "dll",
        "dylib",
        "lock",
        "gz",
        "tgz",
        "bz2",
        "xz",
        "zip",
        "rar",
        "whl",
        "jar",
        "pyc",
    }
)


# The longest domain inside a rejected one that ends where a name may end: the address
# in alice@example.com.pdf or alice@example.com-passport.pdf is alice@example.com.
_DOMAIN_PREFIX = re.compile(
    r"(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.){1,8}(?:[^\W\d_]{2,63}|xn--[a-z0-9-]{1,59})(?=[-.])"
)


def _domain_end(domain: str) -> int:
    """How much of ``domain`` is an address's domain: all, part, or 0 for none."""
    if len(domain) > 253:
        return 0
    if domain.rsplit(".", 1)[1].lower() not in _FILE_ENDINGS:
        return len(domain)
    shorter = _DOMAIN_PREFIX.match(domain)
    if shorter is None or shorter.group().rsplit(".", 1)[1].lower() in _FILE_ENDINGS:
        return 0
    return shorter.end()


class EmailDetector:
    """E-mail addresses: a local part of at most 64 characters, ``@``, and a domain of
    labels ending in an alphabetic (or punycode) top-level domain.

    File names with an address's shape (``icon@2x.png``) are not addresses: a domain
    ending in a file extension that is no top-level domain is cut back to a real one
    (``alice@example.com.pdf``) or rejected.
    """

    __slots__ = ()
    name = "email"

    def find(self, text: str, /) -> Iterator[Finding]:
        """Each address, keyed in lower case."""
        if "@" not in text:
            return
        for match in _EMAIL.finditer(text):
            if len(match.group(1)) > 64:
                continue
            end = _domain_end(match.group(2))
            if end:
                stop = match.start(2) + end
                yield Finding(match.start(), stop, "EMAIL", text[match.start() : stop].lower())

    def __repr__(self) -> str:
        return "EmailDetector()"


EMAIL = EmailDetector()

# --- payment cards ---------------------------------------------------------------------

_CARD = re.compile(r"(?<![\w.+\-/])[0-9](?:[ \-]?[0-9]){12,18}(?![\w]|[.,\-][0-9])")


def _luhn(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = ord(char) - 48
        if position % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _issuer_accepts(digits: str) -> bool:
    """Whether an issuer's range (the first digits) allows a card of this length."""
    n = len(digits)
    two, four, six = int(digits[:2]), int(digits[:4]), int(digits[:6])
    if digits[0] == "4":  # Visa
        return n in (13, 16, 19)
    if 51 <= two <= 55 or 2221 <= four <= 2720:  # Mastercard
        return n == 16
    if two in (34, 37):  # American Express
        return n == 15
    if 2200 <= four <= 2204:  # Mir
        return 16 <= n <= 19
    if four == 6011 or 644 <= int(digits[:3]) <= 649 or two == 65 or 622126 <= six <= 622925:
        return 16 <= n <= 19  # Discover
    if 3528 <= four <= 3589:  # JCB
        return 16 <= n <= 19
    if 300 <= int(digits[:3]) <= 305 or two in (36, 38, 39):  # Diners Club
        return 14 <= n <= 19
    if two == 62:  # UnionPay
        return 16 <= n <= 19
    if four in (5018, 5020, 5038, 5893, 6304, 6759, 6761, 6762, 6763):  # Maestro
        return 12 <= n <= 19
    return False


def _grouped_like_a_card(groups: list[str]) -> bool:
    sizes = [len(group) for group in groups]
    if sizes in ([4, 6, 5], [4, 6, 4]):  # American Express, Diners Club
        return True
    return all(size == 4 for size in sizes[:-1]) and 1 <= sizes[-1] <= 4


def _card_number(candidate: str) -> str | None:
    if candidate.isdigit():
        return candidate if _issuer_accepts(candidate) and _luhn(candidate) else None
    separator = " " if " " in candidate else "-"
    groups = candidate.split(separator)
    if "" in groups or any(not group.isdigit() for group in groups):
        return None  # mixed or doubled separators
    if not _grouped_like_a_card(groups):
        return None
    digits = "".join(groups)
    return digits if _issuer_accepts(digits) and _luhn(digits) else None


class CardDetector:
    """Payment card numbers: 12 to 19 digits in an issuer's range with a valid Luhn
    checksum, contiguous or in the groups cards are printed in (4-4-4-4, 4-6-5...).

    A grouped candidate that fails is tried again without its last groups, so a card
    followed by another number (``4111 1111 1111 1111 20``) is still found.
    """

    __slots__ = ()
    name = "card"

    def find(self, text: str, /) -> Iterator[Finding]:
        """Each card number, keyed by its digits."""
        for match in _CARD.finditer(text):
            candidate = match.group()
            start = match.start()
            while True:
                digits = _card_number(candidate)
                if digits is not None:
                    yield Finding(start, start + len(candidate), "CARD", digits)
                    break
                cut = max(candidate.rfind(" "), candidate.rfind("-"))
                if cut < 0:
                    break
                candidate = candidate[:cut]
                if sum(char.isdigit() for char in candidate) < 12:
                    break

    def __repr__(self) -> str:
        return "CardDetector()"


CARD = CardDetector()

# --- US social security numbers ---------------------------------------------------------

_SSN = re.compile(r"(?<![\w.+\-/])([0-9]{3})([ \-])([0-9]{2})\2([0-9]{4})(?![\w]|[.,\-][0-9])")
# Numbers the SSA voided after they were printed in advertising.
_VOIDED_SSNS = frozenset({"078051120", "219099999"})


def _ssn(match: re.Match[str]) -> str | None:
    area, group, serial = match.group(1), match.group(3), match.group(4)
    # Never issued: area 000, 666 or 900-999 (900-999 are ITINs), group 00, serial 0000.
    if area in ("000", "666") or area[0] == "9" or group == "00" or serial == "0000":
        return None
    digits = area + group + serial
    return None if digits in _VOIDED_SSNS else digits


SSN = PatternDetector("ssn", "SSN", _SSN, _ssn)

# --- IP addresses -----------------------------------------------------------------------

_IPV4 = re.compile(r"(?<![\w.])(?:[0-9]{1,3}\.){3}[0-9]{1,3}(?![\w]|\.[0-9])")
_MASK_OCTETS = frozenset({"0", "128", "192", "224", "240", "248", "252", "254", "255"})


def _ipv4(match: re.Match[str]) -> str | None:
    text = match.group()
    try:
        address = ipaddress.IPv4Address(text)  # rejects octets over 255 and leading zeros
    except ValueError:
        return None
    if address.is_loopback or address.is_unspecified:
        return None  # 127.0.0.1 and 0.0.0.0 identify no one
    octets = text.split(".")
    if octets[0] == "255" and _MASK_OCTETS.issuperset(octets):
        return None  # a netmask
    return str(address)


IPV4 = PatternDetector("ipv4", "IP_ADDRESS", _IPV4, _ipv4, hints=(".",))

_IPV6 = re.compile(
    r"(?<![\w:.])(?=[0-9A-Fa-f]{0,4}:[0-9A-Fa-f]{0,4}:)[0-9A-Fa-f:.]{1,44}[0-9A-Fa-f:]"
    r"(?:%[0-9A-Za-z]{1,15}+)?(?![\w:]|\.[0-9A-Fa-f])"
)


def _ipv6(match: re.Match[str]) -> str | None:
    text = match.group()
    # Hex words (dead::beef, Abc::Def in C++) are valid addresses that no one means:
    # ask for a decimal digit and two groups.
    if not any(char.isdigit() for char in text):
        return None
    if sum(1 for group in text.split("%")[0].split(":") if group) < 2:
        return None
    try:
        address = ipaddress.IPv6Address(text)
    except ValueError:
        return None
    if address.is_loopback or address.is_unspecified:
        return None
    return str(address)


IPV6 = PatternDetector("ipv6", "IP_ADDRESS", _IPV6, _ipv6, hints=(":",))
