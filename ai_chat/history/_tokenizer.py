"""An exact offline tokenizer for the estimate: OpenAI's BPE encodings, tables included.

:class:`BPETokenEstimator` counts text with the encoding a model uses (``o200k_base``
for GPT-4o and later, ``cl100k_base`` for GPT-4 and GPT-3.5), through the
``bpe-openai`` package, whose wheels carry the encodings' tables: it works offline from
the first call (tiktoken downloads its tables at first use). Needs the ``tokenizer``
extra: ``pip install "ai_chat[tokenizer]"``.

Text and reasoning are counted exactly; the rest is priced as :class:`HeuristicEstimator`
prices it, with the per-message framing of OpenAI's chat format (3 tokens a message,
as the OpenAI cookbook counts it). Other providers' tokenizers differ: calibrate
(:func:`~ai_chat.history.calibrate`) to the provider's reported counts.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any, Final

from .._errors import ConfigurationError
from ._estimate import HeuristicEstimator

__all__ = ["BPETokenEstimator"]

# bpe-openai refuses a text of a million characters or more: longer ones are counted in
# pieces split at a space, where the encodings' pre-tokenizer splits too.
_PIECE: Final = 500_000


class BPETokenEstimator(HeuristicEstimator):
    """Exact token counts of text for an OpenAI encoding, offline.

    ``encoding`` is ``"o200k_base"`` (the default) or ``"cl100k_base"`` (and the other
    encodings bpe-openai ships); the keyword arguments are :class:`HeuristicEstimator`'s.

    Raises:
        ImportError: the ``tokenizer`` extra is not installed (naming the install
            command).
        ConfigurationError: an unknown encoding.
    """

    def __init__(
        self, encoding: str = "o200k_base", *, message_overhead: int = 3, **options: Any
    ) -> None:
        super().__init__(message_overhead=message_overhead, **options)
        with warnings.catch_warnings():
            # bpe-openai 0.1.4 reads its tables (on import, and per encoding) with
            # importlib.resources.open_binary, deprecated since Python 3.11: its warning,
            # not the caller's to act on.
            warnings.simplefilter("ignore", DeprecationWarning)
            try:
                bpe_openai: Any = importlib.import_module("bpe_openai")  # no type stubs
            except ImportError as exc:  # pragma: no cover - exercised without the extra
                raise ImportError(
                    'BPETokenEstimator needs bpe-openai: pip install "ai_chat[tokenizer]" '
                    '(or uv add "ai_chat[tokenizer]")',
                    name=exc.name,
                ) from exc
            names = bpe_openai.list_encoding_names()
            if encoding not in names:
                raise ConfigurationError("encoding", encoding, f"one of {', '.join(names)}")
            self._encode = bpe_openai.get_encoding(encoding).encode_ordinary
        self.encoding = encoding

    def text(self, text: str) -> int:
        """The exact number of tokens of ``text`` in the encoding."""
        encode = self._encode
        if len(text) < _PIECE:
            return len(encode(text))
        total, start = 0, 0
        while start < len(text):
            end = min(len(text), start + _PIECE)
            if end < len(text):
                space = text.rfind(" ", start + 1, end)
                end = space if space > start else end
            total += len(encode(text[start:end]))
            start = end
        return total
