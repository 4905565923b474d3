"""The ai-chat command line, in process and as a real subprocess."""

from __future__ import annotations

import contextlib
import json
import os
import re
import selectors
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from adapters._support.fake_server import FakeServer, Request, Response, serve, sse
from anyio.from_thread import start_blocking_portal

from ai_chat._cli import main
from ai_chat._cli.command import parser
from ai_chat._cli.provider import DEFAULT_MODELS
from ai_chat._cli.security import exposure_warning, security_settings
from ai_chat._cli.serve import DEFAULT_STORE, is_loopback, store_spec
from ai_chat.server import AnswerLimits
from ai_chat.server._page import chat_page_html

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


@pytest.mark.slow
@pytest.mark.parametrize(
    "command", [pytest.param(PYTHON_M, id="python-m"), pytest.param([str(SCRIPT)], id="script")]
)
def test_subprocess_send(command: list[str]) -> None:
    result = run([*command, "send", "Hello", "--delay", "0"])
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert '[tool call search {"query": "Hello"}]' in result.stdout
    assert result.stdout.splitlines()[-1].startswith("[finish: tool-calls")


@pytest.mark.slow
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


@pytest.mark.slow
def test_subprocess_system_message() -> None:
    result = run(
        [*PYTHON_M, "send", "Hello there", "--system", "a b c d e", "--json", "--delay", "0"]
    )
    assert result.returncode == 0, result.stderr
    assert usage_of(lines_as_json(result.stdout))["inputTokens"] == 7


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


# --------------------------------------------------------------------------------------
# Provider options
# --------------------------------------------------------------------------------------

NO_KEYS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_APPLICATION_CREDENTIALS",
    # ai-chat serve's own: a token or secret in the developer's shell changes no test.
    "AI_CHAT_TOKEN",
    "AI_CHAT_SECRET",
)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--model", "m"], "--model needs a model provider"),
        (["--base-url", "http://x"], "--base-url needs --provider"),
        (["--provider", "openai", "--delay", "0"], "--delay applies only to --provider demo"),
        (["--provider", "ui-stream"], "--provider ui-stream needs --base-url"),
        (
            ["--provider", "ui-stream", "--base-url", "http://x/api/chat", "--model", "m"],
            "--model does not apply to --provider ui-stream",
        ),
        (["--provider", "openai", "--model", ""], "--model must not be empty"),
        (["--provider", "nobody"], "invalid choice: 'nobody'"),
    ],
)
@pytest.mark.parametrize("command", ["send", "serve"])
def test_options_that_do_not_fit_the_provider_are_usage_errors(
    capsys: pytest.CaptureFixture[str], command: str, options: list[str], message: str
) -> None:
    argv = [command, *(["Hello"] if command == "send" else []), *options]
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert message in err
    assert "usage: ai-chat" in err


def test_help_names_the_providers_and_default_models(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("send", "serve"):
        with pytest.raises(SystemExit) as caught:
            main([command, "--help"])
        assert caught.value.code == 0
        out = " ".join(capsys.readouterr().out.split())
        assert "{demo,openai,anthropic,gemini,ui-stream}" in out
        for provider, model in DEFAULT_MODELS.items():
            assert f"{provider} {model}" in out


@pytest.mark.parametrize(
    ("provider", "variable"),
    [
        ("openai", "OPENAI_API_KEY"),
        ("anthropic", "ANTHROPIC_API_KEY"),
        ("gemini", "GEMINI_API_KEY (or GOOGLE_API_KEY)"),
    ],
)
@pytest.mark.parametrize("command", ["send", "serve"])
def test_a_missing_key_is_one_clear_line(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    command: str,
    provider: str,
    variable: str,
) -> None:
    for name in NO_KEYS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no credentials profile either
    argv = [command, *(["Hello"] if command == "send" else ["--port", "0"])]
    assert main([*argv, "--provider", provider]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"ai-chat: --provider {provider} needs an API key: set {variable}\n"


def test_send_with_the_demo_provider_named_is_the_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["send", "Hello", "--json", "--delay", "0"]) == 0
    default = capsys.readouterr().out
    assert main(["send", "Hello", "--json", "--delay", "0", "--provider", "demo"]) == 0
    assert capsys.readouterr().out == default


BLOCKED = (
    "import sys\n"
    "for name in sys.argv[1].split(','):\n"
    "    sys.modules[name] = None  # import name raises ImportError\n"
    "from ai_chat._cli import main\n"
    "sys.exit(main(sys.argv[2:]))\n"
)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("blocked", "argv", "message"),
    [
        (
            "openai",
            ["send", "hi", "--provider", "openai"],
            'ai-chat: --provider openai needs the openai extra: pip install "ai_chat[openai]" '
            '(or uv add "ai_chat[openai]")',
        ),
        (
            "anthropic",
            ["serve", "--port", "0", "--provider", "anthropic"],
            'ai-chat: --provider anthropic needs the anthropic extra: pip install "ai_chat[anthropic]" '
            '(or uv add "ai_chat[anthropic]")',
        ),
        (
            "google,google.genai",
            ["send", "hi", "--provider", "gemini"],
            'ai-chat: --provider gemini needs the gemini extra: pip install "ai_chat[gemini]" '
            '(or uv add "ai_chat[gemini]")',
        ),
        (
            "starlette,uvicorn",
            ["serve", "--port", "0"],
            'ai-chat: serve needs the server extra: pip install "ai_chat[server]" '
            '(or uv add "ai_chat[server]")',
        ),
    ],
    ids=["openai", "anthropic", "gemini", "server"],
)
def test_a_missing_extra_is_one_clear_line(blocked: str, argv: list[str], message: str) -> None:
    result = run([sys.executable, "-c", BLOCKED, blocked, *argv])
    assert result.returncode == 1, result.stderr
    assert result.stdout == ""
    assert result.stderr == message + "\n"


# --------------------------------------------------------------------------------------
# Providers over loopback HTTP: the genuine SDKs against a fake provider server
# --------------------------------------------------------------------------------------

SSE_HEADERS = {"content-type": "text/event-stream"}
OPENAI_USAGE = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}


def openai_chunk(
    delta: dict[str, Any] | None = None, finish: str | None = None, *, usage: Any = None
) -> bytes:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return sse(
        {
            "id": "chatcmpl-cli",
            "object": "chat.completion.chunk",
            "created": 1_760_000_000,
            "model": "whatever-the-server-says",
            "choices": choices,
            "usage": usage,
        }
    )


def openai_answer(request: Request) -> Response:
    return Response(
        200,
        SSE_HEADERS,
        [
            openai_chunk({"role": "assistant", "content": ""}),
            openai_chunk({"content": "Hi "}),
            openai_chunk({"content": "there"}),
            openai_chunk({}, "stop"),
            openai_chunk(usage=OPENAI_USAGE),
            sse("[DONE]"),
        ],
    )


def anthropic_event(kind: str, **fields: Any) -> bytes:
    return sse({"type": kind, **fields}, event=kind)


def anthropic_answer(request: Request) -> Response:
    message: dict[str, Any] = {
        "id": "msg_cli",
        "type": "message",
        "role": "assistant",
        "model": "whatever-the-server-says",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 1},
    }
    return Response(
        200,
        SSE_HEADERS,
        [
            anthropic_event("message_start", message=message),
            anthropic_event(
                "content_block_start", index=0, content_block={"type": "text", "text": ""}
            ),
            anthropic_event(
                "content_block_delta", index=0, delta={"type": "text_delta", "text": "Hi "}
            ),
            anthropic_event(
                "content_block_delta", index=0, delta={"type": "text_delta", "text": "there"}
            ),
            anthropic_event("content_block_stop", index=0),
            anthropic_event(
                "message_delta",
                delta={"stop_reason": "end_turn", "stop_sequence": None},
                usage={"output_tokens": 2},
            ),
            anthropic_event("message_stop"),
        ],
    )


def gemini_answer(request: Request) -> Response:
    def chunk(text: str, finish: str | None = None) -> bytes:
        candidate: dict[str, Any] = {
            "content": {"parts": [{"text": text}], "role": "model"},
            "index": 0,
        }
        if finish is not None:
            candidate["finishReason"] = finish
        usage = {"promptTokenCount": 5, "candidatesTokenCount": 2, "totalTokenCount": 7}
        return sse({"candidates": [candidate], "usageMetadata": usage}, eol="\r\n")

    return Response(200, SSE_HEADERS, [chunk("Hi "), chunk("there"), chunk("", "STOP")])


def cli_env(**variables: str) -> dict[str, str]:
    """The environment for a subprocess: no provider keys or base URLs unless given."""
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in NO_KEYS and not name.endswith("_BASE_URL")
    }
    return {**env, "PYTHONIOENCODING": "utf-8", **variables}


@contextmanager
def provider_server(handler: Callable[[Request], Response]) -> Generator[FakeServer]:
    """The loopback fake provider, running in a thread so that the command runs here."""
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(serve(handler)) as server,
    ):
        yield server


@pytest.fixture
def provider_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No provider key or base URL from the machine's environment."""
    for name in [*NO_KEYS, *(n for n in os.environ if n.endswith("_BASE_URL"))]:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.mark.parametrize("model", [None, "gpt-test"], ids=["default-model", "model"])
def test_send_with_openai(
    capsys: pytest.CaptureFixture[str], provider_env: pytest.MonkeyPatch, model: str | None
) -> None:
    provider_env.setenv("OPENAI_API_KEY", "test-key")
    with provider_server(openai_answer) as server:
        argv = ["send", "Hello", "--json", "--provider", "openai", "--base-url", server.url("/v1")]
        assert main([*argv, *(["--model", model] if model else [])]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    events = lines_as_json(out)
    assert "".join(e["delta"] for e in events if e["type"] == "text-delta") == "Hi there"
    assert events[-1] == {
        "type": "finish",
        "finishReason": "stop",
        "usage": {"inputTokens": 5, "outputTokens": 2, "totalTokens": 7},
    }
    [request] = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer test-key"
    body = request.json()
    assert body["model"] == (model or DEFAULT_MODELS["openai"])
    assert body["stream"] is True
    assert body["messages"] == [{"role": "user", "content": "Hello"}]


def test_send_with_anthropic_prints_text_and_usage(
    capsys: pytest.CaptureFixture[str], provider_env: pytest.MonkeyPatch
) -> None:
    provider_env.setenv("ANTHROPIC_API_KEY", "test-key")
    with provider_server(anthropic_answer) as server:
        argv = ["send", "Hello", "--system", "Be brief", "--provider", "anthropic"]
        assert main([*argv, "--base-url", server.url()]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out.splitlines() == ["Hi there", "[finish: stop · tokens: 5 in, 2 out, 7 total]"]
    [request] = server.requests
    assert request.path == "/v1/messages"
    assert request.headers["authorization"] == "Bearer test-key"
    body = request.json()
    assert body["model"] == DEFAULT_MODELS["anthropic"]
    assert body["system"] == [{"type": "text", "text": "Be brief"}]
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Hello"}]}]


@pytest.mark.parametrize("variable", ["GEMINI_API_KEY", "GOOGLE_API_KEY"])
def test_send_with_gemini(
    capsys: pytest.CaptureFixture[str], provider_env: pytest.MonkeyPatch, variable: str
) -> None:
    provider_env.setenv(variable, "test-key")
    with provider_server(gemini_answer) as server:
        argv = ["send", "Hello", "--json", "--provider", "gemini", "--base-url", server.url()]
        assert main(argv) == 0
    out, err = capsys.readouterr()
    assert err == ""
    events = lines_as_json(out)
    assert "".join(e["delta"] for e in events if e["type"] == "text-delta") == "Hi there"
    assert events[-1]["type"] == "finish"
    assert events[-1]["finishReason"] == "stop"
    assert events[-1]["usage"]["totalTokens"] == 7
    [request] = server.requests
    model = DEFAULT_MODELS["gemini"]
    assert request.path.endswith(f"/models/{model}:streamGenerateContent?alt=sse")
    assert request.headers["x-goog-api-key"] == "test-key"
    assert request.json()["contents"] == [{"role": "user", "parts": [{"text": "Hello"}]}]


def test_a_provider_error_is_one_line_and_status_1(
    capsys: pytest.CaptureFixture[str], provider_env: pytest.MonkeyPatch
) -> None:
    def refuse(request: Request) -> Response:
        body = json.dumps({"error": {"message": "Incorrect API key", "type": "auth"}})
        return Response(401, {"content-type": "application/json"}, [body.encode()])

    provider_env.setenv("OPENAI_API_KEY", "wrong")
    with provider_server(refuse) as server:
        assert main(["send", "Hello", "--provider", "openai", "--base-url", server.url("/v1")]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("\nai-chat: ProviderError: ")
    assert "401" in err
    assert "Incorrect API key" in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


# --------------------------------------------------------------------------------------
# ai-chat serve, as a real subprocess
# --------------------------------------------------------------------------------------

HELLO_BODY = {
    "id": "chat-1",
    "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Hello"}]}],
    "trigger": "submit-message",
}
SERVING = re.compile(r"^ai-chat: serving (.+) at (http://\S+/) \(Ctrl\+C to stop\)\n$")


STORE_LINE = re.compile(r"^ai-chat: keeping conversations in (.+)\n$")


@dataclass
class Served:
    description: str
    url: str
    process: subprocess.Popen[str]
    store: str | None

    def stop(self) -> tuple[int, str]:
        """Ctrl+C: the exit status and the rest of stderr."""
        self.process.send_signal(signal.SIGINT)
        _, rest = self.process.communicate(timeout=TIMEOUT)
        return self.process.returncode, rest


@contextmanager
def serving(
    *options: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> Generator[Served]:
    """``ai-chat serve --port 0 OPTIONS`` in a subprocess, until the block ends.

    It runs in ``cwd``, by default a temporary folder (where the default SQLite store
    goes).
    """
    with contextlib.ExitStack() as stack:
        if cwd is None:
            cwd = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        process = stack.enter_context(
            subprocess.Popen(
                [*PYTHON_M, "serve", "--port", "0", *options],
                env=env or cli_env(),
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
            )
        )
        try:
            assert process.stderr is not None
            with selectors.DefaultSelector() as selector:
                selector.register(process.stderr, selectors.EVENT_READ)
                assert selector.select(TIMEOUT), "ai-chat serve printed nothing"
            line = process.stderr.readline()
            store = None
            kept = STORE_LINE.match(line)
            if kept is not None:
                store = kept[1]
                line = process.stderr.readline()
            match = SERVING.match(line)
            assert match is not None, line + process.stderr.read()
            yield Served(match[1], match[2], process, store)
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate()


def sse_chunks(body: str) -> list[Any]:
    """The data of each event of a UI message stream body, ``[DONE]`` kept as a string."""
    assert body.endswith("\n\n")
    events = body[:-2].split("\n\n")
    assert all(event.startswith("data: ") for event in events), body
    return [e[6:] if e == "data: [DONE]" else json.loads(e[6:]) for e in events]


def chat(url: str, browser: httpx.Client | None = None) -> list[Any]:
    post = httpx.post if browser is None else browser.post
    response = post(url + "api/chat", json=HELLO_BODY, timeout=TIMEOUT)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    return sse_chunks(response.text)


def text_of(chunks: list[Any]) -> str:
    return "".join(
        cast(str, c["delta"]) for c in chunks if isinstance(c, dict) and c["type"] == "text-delta"
    )


@pytest.mark.slow
def test_serve_with_no_options_serves_the_page_and_the_demo_adapter() -> None:
    with serving("--delay", "0") as served:
        assert served.description == "the offline demo adapter"
        assert served.url.startswith("http://127.0.0.1:")
        page = httpx.get(served.url, timeout=TIMEOUT)
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        assert page.text == chat_page_html("api/chat", "api/chats")  # with the store
        chunks = chat(served.url)
        status, rest = served.stop()
    assert chunks[0]["type"] == "start"
    assert chunks[-2]["type"] == "finish"
    assert chunks[-2]["finishReason"] == "tool-calls"
    assert chunks[-1] == "[DONE]"
    assert text_of(chunks).startswith('You said: "Hello". This answer comes from the offline')
    assert status == 0
    assert rest == "ai-chat: stopped\n"


@pytest.mark.slow
def test_serve_with_openai_streams_from_the_provider() -> None:
    with provider_server(openai_answer) as provider:
        env = cli_env(OPENAI_API_KEY="test-key")
        options = ("--provider", "openai", "--base-url", provider.url("/v1"), "--model", "m-1")
        with serving(*options, env=env) as served:
            assert served.description == f"openai m-1 at {provider.url('/v1')}"
            chunks = chat(served.url)
            status, rest = served.stop()
    assert status == 0, rest
    assert rest == "ai-chat: stopped\n"
    assert text_of(chunks) == "Hi there"
    assert chunks[-2]["messageMetadata"]["usage"]["totalTokens"] == 7
    [request] = provider.requests
    assert request.json()["model"] == "m-1"
    assert request.headers["authorization"] == "Bearer test-key"


@pytest.mark.slow
def test_send_and_serve_through_another_ui_message_stream_endpoint(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with serving("--delay", "0") as demo:
        endpoint = demo.url + "api/chat"
        assert (
            main(["send", "Hello", "--json", "--provider", "ui-stream", "--base-url", endpoint])
            == 0
        )
        out, err = capsys.readouterr()
        assert err == ""
        events = lines_as_json(out)
        assert "".join(e["delta"] for e in events if e["type"] == "text-delta").startswith(
            'You said: "Hello".'
        )
        call = next(e for e in events if e["type"] == "tool-input-available")
        assert call["input"] == {"query": "Hello"}
        assert events[-1]["type"] == "finish"
        assert events[-1]["finishReason"] == "tool-calls"

        # A server whose answers come from the demo server.
        with serving("--provider", "ui-stream", "--base-url", endpoint) as proxy:
            assert proxy.description == f"the UI message stream endpoint {endpoint}"
            chunks = chat(proxy.url)
            assert proxy.stop()[0] == 0
        assert demo.stop()[0] == 0
    assert text_of(chunks).startswith('You said: "Hello".')
    assert chunks[-1] == "[DONE]"


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("::1", True),
        ("0.0.0.0", False),
        ("::", False),
        ("fe80::1%eth0", False),
    ],
)
def test_only_loopback_addresses_skip_the_no_authentication_warning(
    host: str, loopback: bool
) -> None:
    assert is_loopback(host) is loopback


@pytest.mark.slow
def test_serve_on_a_port_in_use_fails_with_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run([*PYTHON_M, "serve", "--port", str(port)])
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == f"ai-chat: cannot listen on 127.0.0.1:{port}: Address already in use\n"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--port", "70000"], "ai-chat: --port must be between 0 and 65535, got 70000\n"),
        (["--port", "0", "--delay", "-1"], "ConfigurationError: delay must be"),
    ],
)
def test_serve_refuses_bad_settings(
    capsys: pytest.CaptureFixture[str], options: list[str], message: str
) -> None:
    assert main(["serve", *options]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert message in err
    assert "Traceback" not in err


# --------------------------------------------------------------------------------------
# ai-chat serve --store
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "kind", "target"),
    [
        ("memory", "memory", None),
        ("none", "none", None),
        ("sqlite:ai-chat.db", "sqlite", "ai-chat.db"),
        ("sqlite:/var/lib/chats/c.db", "sqlite", "/var/lib/chats/c.db"),
        ("postgresql://u:p@db/chats", "postgres", "postgresql://u:p@db/chats"),
        ("postgres://db/chats", "postgres", "postgres://db/chats"),
    ],
)
def test_store_option_values(value: str, kind: str, target: str | None) -> None:
    spec = store_spec(parser(), value)
    assert (spec.kind, spec.target) == (kind, target)
    assert "u:p" not in spec.describe()  # a PostgreSQL password is never printed


def test_the_default_store_is_sqlite_in_the_working_directory() -> None:
    args = parser().parse_args(["serve"])
    assert args.store == DEFAULT_STORE == "sqlite:ai-chat.db"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("sqlite:", "--store sqlite:PATH needs a path"),
        ("redis://x", "--store must be memory, sqlite:PATH, a postgresql:// URL or none"),
        ("", "--store must be memory"),
    ],
)
def test_bad_store_values_are_usage_errors(
    capsys: pytest.CaptureFixture[str], value: str, message: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--port", "0", "--store", value])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.slow
def test_a_store_that_cannot_open_fails_with_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-folder" / "chats.db"
    result = run([*PYTHON_M, "serve", "--port", "0", "--store", f"sqlite:{missing}"])
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith("\nai-chat: StoreError: ") or result.stderr.startswith(
        "ai-chat: StoreError: "
    ), result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_serve_keeps_conversations_in_sqlite_across_a_restart(tmp_path: Path) -> None:
    # One browser (a cookie jar) visits both runs: the visitor cookie names it in both,
    # signed with the secret kept beside the database.
    browser = httpx.Client(timeout=TIMEOUT)
    with browser, serving("--delay", "0", cwd=tmp_path) as served:
        assert served.store == "the SQLite database ai-chat.db"
        chunks = chat(served.url, browser)
        assert served.stop()[0] == 0
    assert (tmp_path / "ai-chat.db").is_file()
    assert stat.S_IMODE((tmp_path / "ai-chat.db.secret").stat().st_mode) == 0o600
    answer_id = chunks[0]["messageId"]
    browser = httpx.Client(timeout=TIMEOUT, cookies=browser.cookies)
    with browser, serving("--delay", "0", cwd=tmp_path) as served:
        listed = browser.get(served.url + "api/chats")
        restored = browser.get(served.url + "api/chats/chat-1")
        # Another client, even one naming the owner in the development header, sees nothing.
        foreign = httpx.get(
            served.url + "api/chats/chat-1",
            headers={"x-ai-chat-subject": "someone-else"},
            timeout=TIMEOUT,
        )
        status, rest = served.stop()
    assert status == 0 and rest == "ai-chat: stopped\n"
    assert listed.status_code == 200
    [summary] = listed.json()["chats"]
    assert summary["id"] == "chat-1" and summary["title"] == "Hello"
    assert restored.status_code == 200
    user, assistant = restored.json()["messages"]
    assert user == HELLO_BODY["messages"][0]
    assert assistant["id"] == answer_id and assistant["role"] == "assistant"
    texts = [p["text"] for p in assistant["parts"] if p["type"] == "text"]
    assert "".join(texts) == text_of(chunks)
    tool = next(p for p in assistant["parts"] if p["type"] == "tool-search")
    assert tool["input"] == {"query": "Hello"} and tool["state"] == "input-available"
    assert assistant["metadata"]["finishReason"] == "tool-calls"
    assert foreign.status_code == 404


@pytest.mark.slow
@pytest.mark.parametrize(("value", "shown"), [("memory", "memory"), ("none", None)])
def test_serve_with_a_memory_store_or_none(tmp_path: Path, value: str, shown: str | None) -> None:
    with serving("--delay", "0", "--store", value, cwd=tmp_path) as served:
        assert (served.store or "").startswith(shown or "") and (served.store is None) == (
            shown is None
        )
        chat(served.url)
        listed = httpx.get(served.url + "api/chats", timeout=TIMEOUT)
        assert served.stop()[0] == 0
    assert listed.status_code == (200 if shown else 404)
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------------------
# ai-chat serve's security options
# --------------------------------------------------------------------------------------

SERVE_TOKEN = "a-token-for-the-cli-tests-0123456789"


def api_headers(url: str, **extra: str) -> dict[str, str]:
    """What the page sends from its own origin."""
    origin = url.rstrip("/")
    return {"origin": origin, "sec-fetch-site": "same-origin", **extra}


def test_serve_requires_the_token_from_the_environment(tmp_path: Path) -> None:
    env = cli_env(AI_CHAT_TOKEN=SERVE_TOKEN)
    with serving("--delay", "0", "--store", "memory", env=env, cwd=tmp_path) as served:
        page = httpx.get(served.url, timeout=TIMEOUT)
        refused = httpx.post(
            served.url + "api/chat", json=HELLO_BODY, headers=api_headers(served.url)
        )
        listed = httpx.get(served.url + "api/chats", timeout=TIMEOUT)
        answered = httpx.post(
            served.url + "api/chat",
            json=HELLO_BODY,
            headers=api_headers(served.url, authorization=f"Bearer {SERVE_TOKEN}"),
            timeout=TIMEOUT,
        )
        status, rest = served.stop()
    assert page.status_code == 200
    assert '<meta name="ai-chat-token" content="required">' in page.text
    assert SERVE_TOKEN not in page.text
    assert refused.status_code == listed.status_code == 401
    assert refused.json()["error"]["type"] == "unauthorized"
    assert answered.status_code == 200
    assert sse_chunks(answered.text)[-1] == "[DONE]"
    assert status == 0 and rest == "ai-chat: stopped\n"  # loopback: no warning


def test_serve_refuses_cross_site_requests_and_unknown_hosts(tmp_path: Path) -> None:
    front = "http://front.example:5173"
    options = ("--delay", "0", "--store", "none", "--allow-origin", front)
    with serving(*options, "--allow-host", "chat.example", cwd=tmp_path) as served:
        url = served.url + "api/chat"
        cross_site = httpx.post(
            url,
            content=json.dumps(HELLO_BODY),
            headers={"origin": "http://evil.example", "content-type": "text/plain"},
            timeout=TIMEOUT,
        )
        rebound = httpx.post(
            url, json=HELLO_BODY, headers={"host": "rebound.evil.example"}, timeout=TIMEOUT
        )
        named = httpx.post(url, json=HELLO_BODY, headers={"host": "chat.example"}, timeout=TIMEOUT)
        preflight = httpx.options(
            url,
            headers={"origin": front, "access-control-request-method": "POST"},
            timeout=TIMEOUT,
        )
        assert served.stop()[0] == 0
    assert cross_site.status_code == 403 and cross_site.json()["error"]["type"] == "cross_origin"
    assert rebound.status_code == 421 and rebound.json()["error"]["type"] == "unknown_host"
    assert named.status_code == 200
    assert preflight.status_code == 204
    assert preflight.headers["access-control-allow-origin"] == front


def test_serve_limits_the_answers_per_visitor(tmp_path: Path) -> None:
    options = ("--delay", "0", "--store", "none", "--max-answers-per-minute", "2")
    with serving(*options, cwd=tmp_path) as served, httpx.Client(timeout=TIMEOUT) as browser:
        browser.get(served.url)
        answers = [
            browser.post(served.url + "api/chat", json=HELLO_BODY, headers=api_headers(served.url))
            for _ in range(3)
        ]
        assert served.stop()[0] == 0
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert answers[2].headers["retry-after"] == "60"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--max-concurrent-answers", "-1"], "must be 0 (no limit) or more, got -1"),
        (["--max-answers-per-minute", "x"], "invalid count value: 'x'"),
    ],
)
def test_bad_limit_values_are_usage_errors(
    capsys: pytest.CaptureFixture[str], options: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--port", "0", *options])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (["--token", "short-token"], "token must be a str of at least 16"),
        (["--allow-origin", "front.example"], "allowed_origins must be origins like"),
        (["--allow-host", "chat.example:443"], "allowed_hosts must be host names"),
        (["--secret", "tiny"], "secret must be a str or bytes of at least 16 bytes"),
    ],
)
def test_bad_security_values_end_with_one_line(options: list[str], words: str) -> None:
    result = run([*PYTHON_M, "serve", "--port", "0", "--store", "none", *options])
    assert result.returncode == 1, result.stderr
    assert words in result.stderr
    assert "short-token" not in result.stderr and "tiny" not in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "options",
    [["--port", "70000"], ["--provider", "openai"]],
    ids=["bad port", "no key"],
)
def test_a_serve_that_cannot_start_leaves_no_secret_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in NO_KEYS:
        monkeypatch.delenv(name, raising=False)
    assert main(["serve", "--port", "0", *options]) == 1
    assert list(tmp_path.iterdir()) == []


def test_the_secret_file_goes_beside_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AI_CHAT_SECRET", raising=False)
    args = parser().parse_args(["serve"])
    sqlite = security_settings(args, "127.0.0.1", "sqlite", "chats.db")
    assert sqlite["secret"] == (tmp_path / "chats.db.secret").read_bytes().strip()
    postgres = security_settings(args, "127.0.0.1", "postgres", "postgresql://u:p@db/chats")
    assert postgres["secret"] == (tmp_path / "ai-chat.secret").read_bytes().strip()
    for kind in ("memory", "none"):
        assert security_settings(args, "127.0.0.1", kind, None)["secret"] is None
    given = parser().parse_args(["serve", "--secret", "s" * 20])
    assert security_settings(given, "127.0.0.1", "sqlite", "other.db")["secret"] == "s" * 20
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ai-chat.secret", "chats.db.secret"]


def test_the_security_settings_the_options_make() -> None:
    defaults = security_settings(parser().parse_args(["serve"]), "127.0.0.1", "none", None)
    assert defaults == {
        "allowed_origins": [],
        "allowed_hosts": [],
        "token": None,
        "secret": None,
        "subject_header": False,
        "answer_limits": AnswerLimits(),  # the library's defaults, 4 and 30
    }
    args = parser().parse_args(
        [
            "serve",
            "--allow-host",
            "a.example",
            "--allow-origin",
            "https://b.example",
            "--max-concurrent-answers",
            "0",
            "--subject-header",
        ]
    )
    settings = security_settings(args, "chat.lan", "none", None)
    assert settings["allowed_hosts"] == ["a.example", "chat.lan"]  # the bound name too
    assert settings["allowed_origins"] == ["https://b.example"]
    assert settings["answer_limits"] == AnswerLimits(concurrent=None, per_minute=30)
    assert settings["subject_header"] is True
    for address in ("0.0.0.0", "::", "[::1]", "192.168.1.5"):
        assert security_settings(args, address, "none", None)["allowed_hosts"] == ["a.example"]


@pytest.mark.parametrize(
    ("loopback", "provider", "store", "token", "words"),
    [
        (True, "openai", True, False, None),
        (False, "demo", False, False, None),
        (False, "openai", True, False, "spend your openai quota and keep conversations"),
        (False, "demo", True, False, "anyone who can reach 0.0.0.0:8000 can keep conversations"),
        (False, "openai", True, True, "the token crosses the network in clear text"),
    ],
)
def test_the_warning_for_an_address_other_machines_reach(
    loopback: bool, provider: str, store: bool, token: bool, words: str | None
) -> None:
    warning = exposure_warning(
        "0.0.0.0:8000", loopback=loopback, provider=provider, store=store, token=token
    )
    if words is None:
        assert warning is None
    else:
        assert warning is not None and words in warning
        assert "TLS" in warning and "docs/deploying.md" in warning
        if not token:
            assert "set --token (or $AI_CHAT_TOKEN)" in warning
            assert "each browser sees only its own conversations" in warning
