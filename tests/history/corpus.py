"""The redaction corpus: labelled samples, and precision and recall per label.

Each line of ``redaction_corpus/*.jsonl`` is ``{"text", "expect", "note"?}``, where
``expect`` lists the ``[label, value]`` pairs a perfect redactor would find in ``text``
(the truth). A line the default detectors get wrong says so: ``actual`` lists what they
find instead and ``reason`` says why, so every miss is documented and counted.

``handwritten.jsonl`` is written by hand; ``generated.jsonl`` by
``make_redaction_corpus.py`` with fixed seeds. ``benchmarks/redaction.py`` prints the
table, the tests assert every line.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from ai_chat.history import Redactor

__all__ = ["CORPUS", "Sample", "Score", "found", "load", "markdown_table", "score"]

CORPUS = Path(__file__).resolve().with_name("redaction_corpus")

Pair = tuple[str, str]


@dataclass(frozen=True)
class Sample:
    where: str  # file:line
    text: str
    expect: tuple[Pair, ...]
    actual: tuple[Pair, ...] | None
    reason: str | None

    @property
    def classified_as(self) -> tuple[Pair, ...]:
        """What the default detectors are documented to find."""
        return self.expect if self.actual is None else self.actual


def _pairs(raw: object) -> tuple[Pair, ...]:
    assert isinstance(raw, list)
    pairs: list[Pair] = []
    for item in cast("list[object]", raw):
        assert isinstance(item, list)
        label, value = cast("list[object]", item)
        assert isinstance(label, str) and isinstance(value, str)
        pairs.append((label, value))
    return tuple(sorted(pairs))


def load() -> list[Sample]:
    samples: list[Sample] = []
    for path in sorted(CORPUS.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            entry = cast("dict[str, object]", json.loads(line))
            assert isinstance(entry, dict)
            where = f"{path.name}:{number}"
            actual = entry.get("actual")
            reason = entry.get("reason")
            assert (actual is None) == (reason is None), f"{where}: actual needs a reason"
            text = entry["text"]
            assert isinstance(text, str)
            samples.append(
                Sample(
                    where,
                    text,
                    _pairs(entry["expect"]),
                    None if actual is None else _pairs(actual),
                    reason if isinstance(reason, str) else None,
                )
            )
    return samples


def found(redactor: Redactor, text: str) -> tuple[Pair, ...]:
    return tuple(
        sorted(
            (finding.label, text[finding.start : finding.end]) for finding in redactor.find(text)
        )
    )


@dataclass
class Score:
    true_positives: int = 0
    false_positives: int = 0
    false_negatives: int = 0

    @property
    def precision(self) -> float:
        taken = self.true_positives + self.false_positives
        return self.true_positives / taken if taken else 1.0

    @property
    def recall(self) -> float:
        present = self.true_positives + self.false_negatives
        return self.true_positives / present if present else 1.0


def score(samples: list[Sample], redactor: Redactor) -> dict[str, Score]:
    """Precision and recall per label of what ``redactor`` finds, against the truth."""
    scores: dict[str, Score] = {}
    for sample in samples:
        truth = Counter(sample.expect)
        seen = Counter(found(redactor, sample.text))
        for label in {label for label, _ in truth} | {label for label, _ in seen}:
            entry = scores.setdefault(label, Score())
            want = Counter({pair: n for pair, n in truth.items() if pair[0] == label})
            got = Counter({pair: n for pair, n in seen.items() if pair[0] == label})
            entry.true_positives += sum((want & got).values())
            entry.false_positives += sum((got - want).values())
            entry.false_negatives += sum((want - got).values())
    return dict(sorted(scores.items()))


def markdown_table(samples: list[Sample], scores: dict[str, Score]) -> str:
    negatives = sum(1 for sample in samples if not sample.expect)
    rows = [
        f"Corpus: {len(samples)} lines ({negatives} with nothing to redact).",
        "",
        "| label | in the corpus | found | wrongly found | missed | precision | recall |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for label, entry in scores.items():
        present = entry.true_positives + entry.false_negatives
        rows.append(
            f"| {label} | {present} | {entry.true_positives} | {entry.false_positives} | "
            f"{entry.false_negatives} | {entry.precision:.3f} | {entry.recall:.3f} |"
        )
    return "\n".join(rows)
