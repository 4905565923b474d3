"""The examples and the README's main command run as documented."""

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each test runs an example in a new interpreter

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_basic_stream(backend: str) -> None:
    result = run("examples/basic_stream.py", backend)
    assert result.returncode == 0, result.stderr
    assert 'You said: "What is ai_chat?"' in result.stdout
    assert '-> the model asks to call search with {"query": "What is ai_chat?"}' in result.stdout
    assert "finish: tool-calls" in result.stdout


def test_custom_adapter() -> None:
    result = run("examples/custom_adapter.py")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "nuf era stressed desserts"


def test_stop_early() -> None:
    result = run("examples/stop_early.py")
    assert result.returncode == 0, result.stderr
    assert (
        'signal: AbortSignal(aborted=True, reason="the consumer\'s read was cancelled")'
        in result.stdout
    )
    assert "after break, adapter running: False" in result.stdout
    assert "stopped: the user pressed stop" in result.stdout


def test_the_readme_main_command() -> None:
    result = run("-m", "ai_chat", "send", "Hello", "--delay", "0")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("[reasoning] The user wrote 1 word.")
    assert lines[1].startswith('You said: "Hello".')
    assert lines[2] == '[tool call search {"query": "Hello"}]'
    assert lines[3].startswith("[finish: tool-calls · tokens: 1 in,")
