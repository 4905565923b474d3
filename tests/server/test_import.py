"""The server extra stays optional: ai_chat never imports Starlette, and ai_chat.server
without it names the extra to install."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_importing_ai_chat_does_not_import_starlette() -> None:
    result = run(
        """
        import sys
        import ai_chat, ai_chat.adapters, ai_chat.types
        assert not any(n.split(".")[0] in ("starlette", "uvicorn") for n in sys.modules)
        """
    )
    assert result.returncode == 0, result.stderr


def test_without_starlette_the_error_names_the_extra() -> None:
    result = run(
        """
        import sys
        sys.modules["starlette"] = None  # as if it were not installed
        try:
            import ai_chat.server
        except ImportError as exc:
            print(exc)
            print(exc.name)
        """
    )
    assert result.returncode == 0, result.stderr
    message, name = result.stdout.splitlines()
    assert message == (
        'ai_chat.server needs Starlette: pip install "ai_chat[server]" '
        '(or uv add "ai_chat[server]")'
    )
    assert name == "starlette"
