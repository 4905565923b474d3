"""The limits every value crossing the JSON boundary is held to."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from .._errors import ConfigurationError

__all__ = ["PER_MESSAGE", "JSONLimits"]

# Upper bounds that keep a limit meaningful: the walk is iterative, so depth is bounded
# only so that a cycle is still reported in reasonable time.
_CAPS = {"max_depth": 100_000, "max_values": 100_000_000, "max_chars": 1_000_000_000}


@dataclass(frozen=True, slots=True)
class JSONLimits:
    """Bounds on one JSON value, checked by :func:`~ai_chat.limits.freeze_json`.

    Attributes:
        max_depth: nested containers allowed; the outermost container is depth 1, so the
            default lets 64 nested containers through and rejects 65.
        max_values: values visited (containers and scalars; object keys do not count).
        max_chars: length of the value's JSON text in UTF-16 code units, as JavaScript's
            ``JSON.stringify(value).length`` would report it.

    Raises:
        ConfigurationError: a limit is not an ``int`` from 1 to its cap (100,000 for
            depth, 100,000,000 for values, 1,000,000,000 for chars).
    """

    max_depth: int = 64
    max_values: int = 10_000
    max_chars: int = 1_000_000

    def __post_init__(self) -> None:
        for name, cap in _CAPS.items():
            value: object = getattr(self, name)
            if type(value) is not int or not 1 <= value <= cap:
                raise ConfigurationError(name, value, f"an int from 1 to {cap:,}")


PER_MESSAGE: Final = JSONLimits(max_depth=64, max_values=100_000, max_chars=16_000_000)
"""The bounds on one message of a conversation: the conversation stores' bounds on one
appended batch (``ai_chat.history.MESSAGE_LIMITS``, the default of ``from_*``)."""
