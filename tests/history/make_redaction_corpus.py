"""Regenerate redaction_corpus/generated.jsonl, the seeded half of the redaction corpus.

Run from the project root::

    uv run python tests/history/make_redaction_corpus.py

Every label comes from how the sample was made (a Luhn-completed number in an issuer's
range is a card; a date is not a phone number), never from the detectors. International
phone numbers are libphonenumber's own example numbers for each region, valid by that
definition. ``test_redaction_corpus.py`` checks the file is what this script writes.
"""

from __future__ import annotations

import base64
import json
import random
import string
import sys
from collections.abc import Callable
from pathlib import Path

import phonenumbers

OUTPUT = Path(__file__).resolve().with_name("redaction_corpus") / "generated.jsonl"
SEED = 20240305

Line = dict[str, object]
BASE62 = string.ascii_letters + string.digits


def line(text: str, *expect: tuple[str, str]) -> Line:
    return {"text": text, "expect": [list(pair) for pair in expect]}


def token(rng: random.Random, size: int, alphabet: str = BASE62) -> str:
    """Random characters with at least one digit and one letter, as generated keys have."""
    while True:
        value = "".join(rng.choice(alphabet) for _ in range(size))
        if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
            return value


def emails(rng: random.Random) -> list[Line]:
    first = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy"]
    last = ["smith", "jones", "garcia", "miller", "davis", "lopez", "wilson", "moore"]
    tlds = ["com", "org", "net", "io", "dev", "co.uk", "de", "fr", "ai", "app", "edu", "com.au"]
    templates = [
        "Please email {} about the invoice.",
        "contact: {}",
        "I forwarded it to {}, cc the team.",
        '{{"to": "{}", "subject": "hello"}}',
        "My address changed to {} last week",
    ]
    out: list[Line] = []
    for _ in range(40):
        local = rng.choice(
            [
                f"{rng.choice(first)}.{rng.choice(last)}",
                f"{rng.choice(first)}{rng.randint(1, 999)}",
                f"{rng.choice(first)}+{rng.choice(['news', 'work', 'shop'])}",
                f"{rng.choice(first)[0]}_{rng.choice(last)}",
            ]
        )
        domain = f"{rng.choice(last)}-{rng.choice(['labs', 'mail', 'corp'])}.{rng.choice(tlds)}"
        address = f"{local}@{domain}"
        out.append(line(rng.choice(templates).format(address), ("EMAIL", address)))
    for _ in range(20):
        name = rng.choice(first)
        out.append(
            line(
                rng.choice(
                    [
                        f"asset {name}@{rng.randint(2, 4)}x.png is missing",
                        f"pin {name}@{rng.randint(1, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}",
                        f"ping @{name} on the channel",
                        f"write to {name} at example dot com",
                    ]
                )
            )
        )
    return out


def nanp_phones(rng: random.Random) -> list[Line]:
    areas = [201, 202, 206, 212, 213, 303, 305, 312, 404, 415, 503, 512, 617, 646, 702, 713, 801]
    formats: list[Callable[[int, int, int], str]] = [
        lambda a, e, s: f"({a}) {e}-{s:04d}",
        lambda a, e, s: f"{a}-{e}-{s:04d}",
        lambda a, e, s: f"{a}.{e}.{s:04d}",
        lambda a, e, s: f"+1 {a} {e} {s:04d}",
        lambda a, e, s: f"+1-{a}-{e}-{s:04d}",
        lambda a, e, s: f"1-{a}-{e}-{s:04d}",
    ]
    templates = ["Call {} after 5pm.", "phone: {}", "Reach the office at {} or by mail.", "{}"]
    out: list[Line] = []
    for _ in range(50):
        exchange = rng.randint(200, 999)
        while exchange % 100 == 11:  # N11 codes are services, not exchanges
            exchange = rng.randint(200, 999)
        number = rng.choice(formats)(rng.choice(areas), exchange, rng.randint(0, 9999))
        out.append(line(rng.choice(templates).format(number), ("PHONE", number)))
    return out


def international_phones(rng: random.Random) -> list[Line]:
    regions = ["GB", "FR", "DE", "ES", "IT", "NL", "SE", "CH", "JP", "CN", "IN", "BR", "AU", "MX"]
    kinds = [phonenumbers.PhoneNumberType.FIXED_LINE, phonenumbers.PhoneNumberType.MOBILE]
    out: list[Line] = []
    for region in regions:
        for kind in kinds:
            example = phonenumbers.example_number_for_type(region, kind)
            assert example is not None, region
            for style in (
                phonenumbers.PhoneNumberFormat.INTERNATIONAL,
                phonenumbers.PhoneNumberFormat.E164,
            ):
                number = phonenumbers.format_number(example, style)
                text = rng.choice(["Our {} office: {}.", "({}) tel {}", "{} number {} works"])
                out.append(line(text.format(region, number), ("PHONE", number)))
    return out


def phone_like_negatives(rng: random.Random) -> list[Line]:
    out: list[Line] = []
    for _ in range(60):
        year = rng.randint(1990, 2030)
        month, day = rng.randint(1, 12), rng.randint(1, 28)
        hour, minute, second = rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59)
        out.append(
            line(
                rng.choice(
                    [
                        f"order {year}-{rng.randint(0, 9999999):07d} has shipped",
                        f"started at {rng.randint(1_000_000_000, 1_999_999_999)}",
                        f"on {year}-{month:02d}-{day:02d} at {hour:02d}:{minute:02d}:{second:02d}",
                        f"logged {year}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}Z",
                        f"ticket {rng.randint(1_000_000_000, 9_999_999_999)} was closed",
                        f"SKU {rng.randint(100, 999)}-{rng.randint(100, 999)}-{rng.randint(10000, 99999)}",
                        f"release {rng.randint(1, 20)}.{rng.randint(0, 30)}.{rng.randint(0, 200)}",
                        f"dated {day:02d}/{month:02d}/{year} and {month:02d}.{day:02d}.{year}",
                        f"case {rng.randint(100, 199)}-{rng.randint(200, 999)}-{rng.randint(0, 9999):04d}",
                        f"total ${rng.randint(1, 999)},{rng.randint(0, 999):03d}.{rng.randint(0, 99):02d}",
                    ]
                )
            )
        )
    return out


def luhn_complete(body: str) -> str:
    for check in "0123456789":
        digits = body + check
        total = 0
        for position, char in enumerate(reversed(digits)):
            value = int(char)
            if position % 2:
                value = value * 2 - 9 if value > 4 else value * 2
            total += value
        if total % 10 == 0:
            return digits
    raise AssertionError("unreachable")


def grouped(digits: str, sizes: list[int], separator: str) -> str:
    groups: list[str] = []
    position = 0
    for size in sizes:
        groups.append(digits[position : position + size])
        position += size
    return separator.join(groups)


def cards(rng: random.Random) -> list[Line]:
    brands = [("4", 16), ("51", 16), ("55", 16), ("2221", 16), ("34", 15), ("37", 15)]
    brands += [("6011", 16), ("65", 16), ("3528", 16), ("36", 14), ("62", 16), ("4", 13)]
    out: list[Line] = []
    for index in range(60):
        prefix, size = rng.choice(brands)
        body = prefix + "".join(rng.choice(string.digits) for _ in range(size - len(prefix) - 1))
        digits = luhn_complete(body)
        valid = index % 2 == 0
        if not valid:  # the same number with a wrong check digit
            digits = digits[:-1] + str((int(digits[-1]) + rng.randint(1, 9)) % 10)
        sizes = {15: [4, 6, 5], 14: [4, 6, 4], 13: [4, 4, 4, 1]}.get(size, [4, 4, 4, 4])
        written = rng.choice([digits, grouped(digits, sizes, " "), grouped(digits, sizes, "-")])
        text = rng.choice(["paid with {}", "card number: {} (exp 09/28)", '{{"pan": "{}"}}'])
        out.append(line(text.format(written), *([("CARD", written)] if valid else [])))
    return out


def ssns(rng: random.Random) -> list[Line]:
    out: list[Line] = []
    for _ in range(25):
        area = rng.choice([n for n in range(1, 900) if n != 666])
        number = f"{area:03d}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}"
        out.append(line(f"SSN {number} on file", ("SSN", number)))
    for _ in range(25):
        number = rng.choice(
            [
                f"000-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}",
                f"666-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}",
                f"{rng.randint(900, 999)}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}",
                f"{rng.randint(1, 899):03d}-00-{rng.randint(1, 9999):04d}",
                f"{rng.randint(1, 665):03d}-{rng.randint(1, 99):02d}-0000",
            ]
        )
        out.append(line(f"SSN {number} is not a valid number"))
    return out


def ips(rng: random.Random) -> list[Line]:
    out: list[Line] = []
    for _ in range(25):
        address = ".".join(str(rng.randint(1, 223)) for _ in range(4))
        if address.startswith("127."):
            continue
        out.append(line(f"connection from {address} refused", ("IP_ADDRESS", address)))
    for _ in range(15):
        groups = [f"{rng.randint(0, 0xFFFF):x}" for _ in range(3)]
        address = f"2001:db8:{groups[0]}:{groups[1]}::{rng.randint(1, 99)}"
        out.append(line(f"client [{address}] connected", ("IP_ADDRESS", address)))
    for _ in range(20):
        octets = [str(rng.randint(0, 255)) for _ in range(4)]
        octets[rng.randint(0, 3)] = str(rng.randint(256, 999))
        out.append(line(f"not an address: {'.'.join(octets)}"))
    return out


def credentials(rng: random.Random) -> list[Line]:
    upper32 = string.ascii_uppercase + "234567"
    url_safe = BASE62 + "_-"
    header = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').rstrip(b"=").decode()
    makers: list[tuple[str, Callable[[], str]]] = [
        ("OPENAI_KEY", lambda: "sk-proj-" + token(rng, 64, url_safe)),
        ("OPENAI_KEY", lambda: "sk-" + token(rng, 48)),
        ("ANTHROPIC_KEY", lambda: "sk-ant-api03-" + token(rng, 93, url_safe) + "AA"),
        ("GITHUB_TOKEN", lambda: rng.choice(["ghp_", "gho_", "ghu_", "ghs_"]) + token(rng, 36)),
        ("GITHUB_TOKEN", lambda: "github_pat_" + token(rng, 22) + "_" + token(rng, 59)),
        ("AWS_ACCESS_KEY", lambda: rng.choice(["AKIA", "ASIA"]) + token(rng, 16, upper32)),
        ("SLACK_TOKEN", lambda: f"xoxb-{rng.randint(10**11, 10**12)}-{token(rng, 24)}"),
        ("GOOGLE_API_KEY", lambda: "AIza" + token(rng, 35, url_safe)),
        (
            "JWT",
            lambda: ".".join(
                [
                    header,
                    base64.urlsafe_b64encode(
                        json.dumps({"sub": str(rng.randint(1, 10**6))}).encode()
                    )
                    .rstrip(b"=")
                    .decode(),
                    token(rng, 43, url_safe),
                ]
            ),
        ),
    ]
    templates = ["export SECRET={}", "the key is {} (rotate it)", '{{"token": "{}"}}', "{}"]
    out: list[Line] = []
    for _ in range(6):
        for label, make in makers:
            value = make()
            out.append(line(rng.choice(templates).format(value), (label, value)))
    for _ in range(10):
        value = token(rng, 32)
        out.append(line(f"Authorization: Bearer {value}", ("BEARER_TOKEN", value)))
    for _ in range(20):
        out.append(
            line(
                rng.choice(
                    [
                        f"prefix sk-{token(rng, 8)} is too short",
                        f"ghp_{token(rng, 12)} is truncated",
                        f"AKIA{token(rng, 8, upper32)} is truncated",
                        f"sk-{'-'.join(rng.choice(['alpha', 'beta', 'gamma', 'delta']) for _ in range(5))}",
                        f"Bearer {''.join(rng.choice(string.ascii_lowercase) for _ in range(20))}",
                    ]
                )
            )
        )
    return out


def general_negatives(rng: random.Random) -> list[Line]:
    out: list[Line] = []
    hexdigits = "0123456789abcdef"
    for _ in range(60):
        uuid = "-".join(
            "".join(rng.choice(hexdigits) for _ in range(size)) for size in (8, 4, 4, 4, 12)
        )
        digest = "".join(rng.choice(hexdigits) for _ in range(rng.choice([32, 40, 64])))
        out.append(
            line(
                rng.choice(
                    [
                        f"request {uuid} failed",
                        f"checksum {digest}",
                        f"commit {digest[:7]} on main",
                        f"version {rng.randint(0, 9)}.{rng.randint(0, 99)}.{rng.randint(0, 99)}-rc.{rng.randint(1, 9)}",
                        f"costs {rng.randint(1, 999)}.{rng.randint(0, 99):02d} EUR",
                        f"{rng.randint(1, 99)}% of {rng.randint(100, 100000)} requests",
                        f"at {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}",
                        f"order #{rng.choice(string.ascii_uppercase)}-{rng.randint(100000, 999999)}",
                    ]
                )
            )
        )
    return out


def generate() -> list[Line]:
    rng = random.Random(SEED)
    return [
        *emails(rng),
        *nanp_phones(rng),
        *international_phones(rng),
        *phone_like_negatives(rng),
        *cards(rng),
        *ssns(rng),
        *ips(rng),
        *credentials(rng),
        *general_negatives(rng),
    ]


def render() -> str:
    return "".join(json.dumps(entry, ensure_ascii=False) + "\n" for entry in generate())


def main() -> None:
    OUTPUT.write_text(render(), encoding="utf-8")
    print(f"wrote {len(generate())} lines to {OUTPUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
