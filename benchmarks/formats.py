"""Provider formats benchmark: each ``to_*`` against a JSON round trip of the same history.

Run with ``uv run python benchmarks/formats.py`` (``--messages N`` to change the size).

One normalized history of 10,000 messages, as a tool-using assistant builds it: a system
message, then turns of a user question (now and then with an image), an assistant
answer with signed reasoning and one or two tool calls, their results, and a final
answer. Measured, in the same run, with the rounds interleaved and the best round of
each kept (the least disturbed by other work on the machine):

* the baseline: ``json.loads(json.dumps(history))``, a copy of the history through
  the C JSON codec;
* ``to_openai_chat`` (reasoning left out: Chat Completions takes none back),
  ``to_openai_responses``, ``to_anthropic`` and ``to_gemini`` of the same history.

The target (issue 14): each of ``to_openai_chat``, ``to_anthropic`` and ``to_gemini`` at
most 1.5x the baseline.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai_chat import normalize_messages
from ai_chat.formats import to_anthropic, to_gemini, to_openai_chat, to_openai_responses
from ai_chat.limits import JSONLimits
from ai_chat.types import Message
from benchmarks._timing import interleaved_best

TARGET = 1.5
UNBOUNDED = JSONLimits(max_depth=64, max_values=100_000_000, max_chars=1_000_000_000)
QUESTION = "What is the weather like in {city} today, and should I take an umbrella? "
ANSWER = "It is {sky} and {temp} degrees in {city}; {advice}. " * 2
PNG = "data:image/png;base64," + "iVBORw0KGgo" * 40 + "="


def history(size: int) -> tuple[Message, ...]:
    """A tool-using conversation of ``size`` messages (about)."""
    messages: list[dict[str, Any]] = [
        {"id": "s", "role": "system", "parts": [{"type": "text", "text": "Be brief. " * 20}]}
    ]
    turn = 0
    while len(messages) < size:
        city = ["Zürich", "Bern", "Genève", "Lugano"][turn % 4]
        user: list[dict[str, Any]] = [{"type": "text", "text": QUESTION.format(city=city) * 2}]
        if turn % 10 == 0:
            user.append({"type": "file", "mediaType": "image/png", "url": PNG})
        signature = f"EqQBCkgIARABGAIiQL{turn:08d}" + "x" * 200
        metadata = {
            "anthropic": {"signature": signature},
            "openai": {"itemId": f"rs_{turn}", "reasoningEncryptedContent": signature},
            "gemini": {"thoughtSignature": signature},
        }
        calls = [
            {
                "type": "tool-call",
                "toolCallId": f"call_{turn}_{n}",
                "toolName": "get_weather",
                "input": {"city": city, "unit": "celsius", "day": n},
            }
            for n in range(1 + turn % 2)
        ]
        messages += [
            {"id": f"u{turn}", "role": "user", "parts": user},
            {
                "id": f"a{turn}",
                "role": "assistant",
                "parts": [
                    {
                        "type": "reasoning",
                        "text": "The user wants the weather; look it up. " * 3,
                        "providerMetadata": metadata,
                    },
                    {"type": "text", "text": "Let me look that up."},
                    *calls,
                ],
            },
            {
                "id": f"t{turn}",
                "role": "tool",
                "parts": [
                    {
                        "type": "tool-result",
                        "toolCallId": call["toolCallId"],
                        "toolName": "get_weather",
                        "output": {"temp": 21.5, "sky": "clear", "wind": [3, 5, 8]},
                    }
                    for call in calls
                ],
            },
            {
                "id": f"b{turn}",
                "role": "assistant",
                "parts": [
                    {
                        "type": "text",
                        "text": ANSWER.format(
                            sky="clear", temp=21, city=city, advice="no umbrella needed"
                        ),
                    }
                ],
            },
        ]
        turn += 1
    return normalize_messages(messages[:size], limits=UNBOUNDED)


def main() -> None:
    parser = argparse.ArgumentParser(description="Provider formats benchmark")
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    messages = history(args.messages)
    subjects: dict[str, Callable[[], object]] = {
        "json.loads(json.dumps(...))": lambda: json.loads(json.dumps(messages)),
        "to_openai_chat": lambda: to_openai_chat(messages, reasoning_parts="omit"),
        "to_openai_responses": lambda: to_openai_responses(messages),
        "to_anthropic": lambda: to_anthropic(messages),
        "to_gemini": lambda: to_gemini(messages),
    }
    times = interleaved_best(subjects, args.rounds)
    baseline = times["json.loads(json.dumps(...))"]
    size = len(json.dumps(messages))
    print(f"{len(messages):,} messages, {size / 1e6:.1f} MB of JSON, best of {args.rounds}")
    print(f"{'':30} {'ms':>8} {'x baseline':>11}")
    failed = False
    for name, seconds in times.items():
        ratio = seconds / baseline
        targeted = name in ("to_openai_chat", "to_anthropic", "to_gemini")
        verdict = "" if not targeted else ("ok" if ratio <= TARGET else f"over {TARGET}x")
        failed |= targeted and ratio > TARGET
        print(f"{name:30} {seconds * 1000:8.1f} {ratio:10.2f}x {verdict}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
