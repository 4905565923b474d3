"""Regenerate json_size_vectors.json, the JavaScript ground truth for json_size and js_number.

Run from the project root (needs Node.js on PATH)::

    uv run python tests/limits/make_json_size_vectors.py

Each vector is ``{"json": <json.dumps(value, ensure_ascii=True)>, "size":
<JSON.stringify(JSON.parse(json)).length>}``; vectors whose value is a number also carry
``"js": String(JSON.parse(json))``. Sizes come from node, never from ai_chat.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

OUTPUT = Path(__file__).with_name("json_size_vectors.json")

NODE_SCRIPT = r"""
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const out = JSON.parse(input).map((text) => {
    const value = JSON.parse(text);
    const entry = { json: text, size: JSON.stringify(value).length };
    if (typeof value === "number") entry.js = String(value);
    return entry;
  });
  process.stdout.write(JSON.stringify(out));
});
"""


def values() -> list[object]:
    out: list[object] = []
    # Strings: every control character, the other escapes, and characters that are not
    # escaped but are easy to mistake for ones that are.
    out += [chr(c) for c in range(0x20)]
    out += ['"', "\\", "/", "\u2028", "\u2029", "\x7f", "\x80", "\x9f", "\xa0"]
    out += ["", "a", "abc", "é", "中文", "\ufeff", "\ufffd", "\uffff", "\ud7ff", "\ue000"]
    out += ["\U0001f600", "\U00010000", "\U0010ffff", "\U0001f468\u200d\U0001f469"]
    out += ["".join(chr(c) for c in range(0x20)), 'a"b\\c\n\u0001\U0001f600\u2028z']
    out += ["\x00" * 10, "\b\f\n\r\t", "\x0b\x0e"]
    # Numbers, as JavaScript formats them.
    out += [0, 1, -1, 0.0, -0.0, 100.0, -100.0, 2.5, -1.25, 0.5]
    out += [1e21, 1e20, 123e19, 9.999999999999999e20, 1e22, 1e100, 1e308, -1e21]
    out += [1e-7, 1e-6, 1.5e-6, 1.2345e-7, 0.0001, 0.00001, 123e-20, 1e-300]
    out += [1e15, 1e16, 1e17, 123456789012345680.0, 1.5e16, 4.35e16, 1234567.0]
    out += [123456789.123, 0.1, 0.2, 0.1 + 0.2, 1 / 3, 2 / 3, 3.141592653589793]
    out += [5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308]
    out += [-1.7976931348623157e308, 9007199254740993.0, 4503599627370497.5]
    out += [2**53, 2**53 + 1, 2**53 + 2, -(2**53) - 1, 2**63, 2**64, 2**64 + 1, -(2**70)]
    out += [10**21, 10**21 - 1, 10**22, 12345678901234567890, 2**1023, 2**1024 - 2**971]
    out += [123456789, -123456789]
    out += [True, False, None]
    # Containers.
    out += [[], {}, [[]], [{}], {"a": {}}, {"a": []}, [[[[[[[[[[]]]]]]]]]]]
    out += [[1, "a", None, True, False, 1.5], [-0.0, 100.0, 1e21, 1e-7, 2**64]]
    out += [{"a": 1, "b": [1, 2, {"c": "d"}]}, {'k"ey': "v\\al", "\n": "\t"}]
    out += [{"é": 1, "\U0001f600": [], "\x00": "\n", "": "", "\u2028": "\u2029"}]
    out += [{"nested": {"deeper": {"deepest": [0.1, -0.0, {"x": None}]}}}]
    out += [[{"role": "user", "parts": [{"type": "text", "text": "hi \U0001f44b\n"}]}]]
    out += [[[], {}, "", 0, [0], {"": 0}]]
    return out


def main() -> int:
    node = shutil.which("node")
    if node is None:
        print("node (Node.js) is required to regenerate the vectors", file=sys.stderr)
        return 1
    texts = [json.dumps(value, ensure_ascii=True) for value in values()]
    if len(set(texts)) != len(texts):
        duplicates = sorted({t for t in texts if texts.count(t) > 1})
        print(f"duplicate vectors: {duplicates}", file=sys.stderr)
        return 1
    result = subprocess.run(
        [node, "-e", NODE_SCRIPT],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    vectors = json.loads(result.stdout)
    with OUTPUT.open("w", encoding="ascii") as f:
        f.write("[\n")
        f.write(",\n".join(json.dumps(v, ensure_ascii=True) for v in vectors))
        f.write("\n]\n")
    print(f"wrote {len(vectors)} vectors to {OUTPUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
