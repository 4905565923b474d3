"""The README's Python examples run as written (pyright checks them via tests/readme_check)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)


def test_the_readme_has_its_examples() -> None:
    assert len(BLOCKS) >= 3


@pytest.mark.slow
def test_the_readme_examples_run_and_the_quickstart_streams() -> None:
    program = "\n\n".join(BLOCKS)
    result = subprocess.run(
        [sys.executable, "-c", program],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert 'You said: "Hello".' in result.stdout
    assert "[tool-calls]" in result.stdout
