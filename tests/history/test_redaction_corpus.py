"""Every line of the redaction corpus is classified as it is labelled."""

from __future__ import annotations

import pytest

from ai_chat.history import Redactor

from .corpus import CORPUS, Sample, found, load
from .make_redaction_corpus import render

SAMPLES = load()
REDACTOR = Redactor()


@pytest.mark.parametrize("sample", SAMPLES, ids=[sample.where for sample in SAMPLES])
def test_each_line_is_classified_as_labelled(sample: Sample) -> None:
    assert found(REDACTOR, sample.text) == sample.classified_as


def test_each_documented_miss_is_a_real_difference_with_a_reason() -> None:
    misses = [sample for sample in SAMPLES if sample.actual is not None]
    assert misses
    for sample in misses:
        assert sample.actual != sample.expect, sample.where
        assert sample.reason and len(sample.reason) > 20, sample.where


def test_the_generated_half_is_what_the_generator_writes() -> None:
    committed = (CORPUS / "generated.jsonl").read_text(encoding="utf-8")
    assert committed == render(), "run: uv run python tests/history/make_redaction_corpus.py"


def test_the_corpus_is_large_and_mostly_hard_negatives() -> None:
    negatives = [sample for sample in SAMPLES if not sample.expect]
    assert len(SAMPLES) >= 700
    assert len(negatives) >= 300


def test_every_default_label_is_in_the_corpus() -> None:
    every = {
        "ANTHROPIC_KEY",
        "AWS_ACCESS_KEY",
        "AWS_SECRET_KEY",
        "BASIC_AUTH",
        "BEARER_TOKEN",
        "CARD",
        "EMAIL",
        "GITHUB_TOKEN",
        "GOOGLE_API_KEY",
        "IP_ADDRESS",
        "JWT",
        "OPENAI_KEY",
        "PHONE",
        "PRIVATE_KEY",
        "SLACK_TOKEN",
        "SSN",
    }
    assert {label for sample in SAMPLES for label, _ in sample.expect} == every
    for label in every:
        positives = sum(1 for sample in SAMPLES if any(name == label for name, _ in sample.expect))
        assert positives >= 2, label
