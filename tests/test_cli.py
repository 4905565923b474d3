"""The ai-chat command line, in process and as a real subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest

from ai_chat._cli import main

# Hang guard for subprocesses, not a performance assertion.
TIMEOUT = 120

PYTHON_M = [sys.executable, "-m", "ai_chat"]
SCRIPT = Path(sys.executable).parent / ("ai-chat.exe" if os.name == "nt" else "ai-chat")


def lines_as_json(text: str) -> list[dict[str, Any]]:
    return [cast("dict[str, Any]", json.loads(line)) for line in text.splitlines()]


def usage_of(events: list[dict[str, Any]]) -> dict[str, int]:
    assert events[-1]["type"] == "finish"
    return cast("dict[str, int]", events[-1]["usage"])


# --------------------------------------------------------------------------------------
# In process
# --------------------------------------------------------------------------------------


def test_send_prints_the_answer(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["send", "Hello", "--delay", "0"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    lines = out.splitlines()
    assert lines[0].startswith("[reasoning] The user wrote 1 word.")
    assert 'You said: "Hello".' in out
    assert '[tool call search {"query": "Hello"}]' in lines
    finish = lines[-1]
    assert finish.startswith("[finish: tool-calls")
    assert "1 in" in finish
    assert "out" in finish
    assert "total" in finish
    assert finish.endswith("]")
    # Every line is complete: reasoning, text, tool call and finish each start a line.
    assert len(lines) == 4


def test_send_counts_words_in_the_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["send", "one two three", "--delay", "0"]) == 0
    out = capsys.readouterr().out
    assert "[reasoning] The user wrote 3 words." in out
    assert '[tool call search {"query": "one two three"}]' in out
    assert "3 in" in out.splitlines()[-1]


def test_send_keeps_non_ascii_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["send", "Grüße 😀", "--delay", "0"]) == 0
    out = capsys.readouterr().out
    assert 'You said: "Grüße 😀".' in out
    assert '[tool call search {"query": "Grüße 😀"}]' in out


def test_json_prints_one_event_per_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["send", "Hello", "--json", "--delay", "0"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    events = lines_as_json(out)
    assert events[0]["type"] == "start"
    assert events[-1] == {
        "type": "finish",
        "finishReason": "tool-calls",
        "usage": usage_of(events),
    }
    types = [e["type"] for e in events]
    assert types.count("finish") == 1
    assert {"reasoning-delta", "text-delta", "tool-input-delta", "tool-input-available"} <= set(
        types
    )
    call = next(e for e in events if e["type"] == "tool-input-available")
    assert call["input"] == {"query": "Hello"}
    text = "".join(e["delta"] for e in events if e["type"] == "text-delta")
    assert text.startswith('You said: "Hello".')
    usage = usage_of(events)
    assert usage["inputTokens"] == 1
    assert usage["totalTokens"] == usage["inputTokens"] + usage["outputTokens"]


def test_system_adds_a_system_message(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["send", "Hello", "--json", "--delay", "0"]) == 0
    without = lines_as_json(capsys.readouterr().out)
    assert main(["send", "Hello", "--json", "--delay", "0", "--system", "Be very brief"]) == 0
    with_system = lines_as_json(capsys.readouterr().out)

    # The answer counts the system message's three words as input ...
    assert usage_of(without)["inputTokens"] == 1
    assert usage_of(with_system)["inputTokens"] == 4
    # ... but still answers the user's message.
    reasoning = "".join(e["delta"] for e in with_system if e["type"] == "reasoning-delta")
    assert reasoning.startswith("The user wrote 1 word.")
    # A different history gives a different message id.
    assert without[0]["messageId"] != with_system[0]["messageId"]


def test_output_is_deterministic(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["send", "Hello", "--json", "--delay", "0"]) == 0
    first = capsys.readouterr().out
    assert main(["send", "Hello", "--json", "--delay", "0"]) == 0
    assert capsys.readouterr().out == first


@pytest.mark.parametrize("delay", ["-1", "nan", "inf"])
def test_a_bad_delay_fails_with_status_1(capsys: pytest.CaptureFixture[str], delay: str) -> None:
    assert main(["send", "Hello", f"--delay={delay}"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert "ai-chat: ConfigurationError" in err
    assert "delay" in err
    assert "Traceback" not in err


def test_usage_errors_exit_with_status_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main([])
    assert caught.value.code == 2
    with pytest.raises(SystemExit) as caught:
        main(["send"])
    assert caught.value.code == 2
    with pytest.raises(SystemExit) as caught:
        main(["send", "x", "--delay", "soon"])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert "usage: ai-chat" in err


# --------------------------------------------------------------------------------------
# As a real subprocess
# --------------------------------------------------------------------------------------


def run(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=TIMEOUT,
        check=False,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        **kwargs,
    )


@pytest.mark.parametrize(
    "command", [pytest.param(PYTHON_M, id="python-m"), pytest.param([str(SCRIPT)], id="script")]
)
def test_subprocess_send(command: list[str]) -> None:
    result = run([*command, "send", "Hello", "--delay", "0"])
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert '[tool call search {"query": "Hello"}]' in result.stdout
    assert result.stdout.splitlines()[-1].startswith("[finish: tool-calls")


@pytest.mark.parametrize(
    "command", [pytest.param(PYTHON_M, id="python-m"), pytest.param([str(SCRIPT)], id="script")]
)
def test_subprocess_json(command: list[str]) -> None:
    result = run([*command, "send", "Hello", "--json", "--delay", "0"])
    assert result.returncode == 0, result.stderr
    events = lines_as_json(result.stdout)
    assert len(events) > 10
    assert events[0]["type"] == "start"
    assert events[-1]["type"] == "finish"
    assert result.stdout.endswith("}\n")


def test_subprocess_system_message() -> None:
    result = run(
        [*PYTHON_M, "send", "Hello there", "--system", "a b c d e", "--json", "--delay", "0"]
    )
    assert result.returncode == 0, result.stderr
    assert usage_of(lines_as_json(result.stdout))["inputTokens"] == 7


def test_subprocess_with_the_default_delay() -> None:
    result = run([*PYTHON_M, "send", "Hi", "--json"])
    assert result.returncode == 0, result.stderr
    assert lines_as_json(result.stdout)[-1]["type"] == "finish"


def test_subprocess_bad_delay() -> None:
    result = run([*PYTHON_M, "send", "Hello", "--delay", "-1"])
    assert result.returncode == 1
    assert result.stdout == ""
    assert "ai-chat: ConfigurationError" in result.stderr
    assert "delay" in result.stderr
    assert "Traceback" not in result.stderr


def test_subprocess_usage_error() -> None:
    result = run([*PYTHON_M, "send"])
    assert result.returncode == 2
    assert "usage: ai-chat" in result.stderr
    assert "Traceback" not in result.stderr


# A message long enough that the answer overflows any pipe buffer, under the default
# max_response_chars: the writer must meet a closed pipe.
LONG = "x" * 80_000


@pytest.mark.parametrize("as_json", [True, False], ids=["json", "text"])
def test_reader_closing_early_exits_0_without_a_traceback(as_json: bool) -> None:
    head = shutil.which("head")
    assert head is not None, "the test needs head(1)"
    command = [*PYTHON_M, "send", LONG, "--delay", "0", *(["--json"] if as_json else [])]
    with (
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as writer,
        subprocess.Popen([head, "-1"], stdin=writer.stdout, stdout=subprocess.PIPE) as reader,
    ):
        assert writer.stdout is not None
        assert writer.stderr is not None
        writer.stdout.close()  # only head holds the read end now, as in a shell pipeline
        try:
            first, _ = reader.communicate(timeout=TIMEOUT)
            err = writer.stderr.read()
            status = writer.wait(timeout=TIMEOUT)
        finally:
            for process in (writer, reader):
                if process.poll() is None:
                    process.kill()
    assert status == 0, err
    assert b"Traceback" not in err
    assert err == b""
    assert reader.returncode == 0
    if as_json:
        assert json.loads(first)["type"] == "start"
    else:
        assert first.startswith(b"[reasoning] The user wrote 1 word.")


@pytest.mark.parametrize("as_json", [True, False], ids=["json", "text"])
def test_reader_gone_before_the_first_write(as_json: bool) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run(
            [*PYTHON_M, "send", "Hello", "--delay", "0", *(["--json"] if as_json else [])],
            stdout=write_end,
            stderr=subprocess.PIPE,
            timeout=TIMEOUT,
            check=False,
        )
    finally:
        os.close(write_end)
    assert result.returncode == 0, result.stderr
    assert result.stderr == b""


def test_cli_survives_a_terminal_that_cannot_encode_its_output() -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    result = subprocess.run(
        [sys.executable, "-m", "ai_chat", "send", "héllo wörld", "--delay", "0"],
        capture_output=True,
        text=True,
        encoding="ascii",
        errors="replace",
        env=env,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "[finish: tool-calls" in result.stdout
