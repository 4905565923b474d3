"""JSON text read strictly: ``NaN``, ``Infinity`` and ``-Infinity`` are not JSON.

Python's :mod:`json` reads them by default (JavaScript's ``JSON.parse`` does not);
:func:`reject_constant` as ``parse_constant`` refuses them wherever ai_chat reads JSON
text from the network: request bodies, UI message stream chunks, tool-call arguments.
"""

from __future__ import annotations

__all__ = ["reject_constant"]


def reject_constant(name: str) -> object:
    """A ``parse_constant`` for :func:`json.loads` and :class:`json.JSONDecoder`.

    Raises:
        ValueError: always (``"NaN is not JSON"``), which :mod:`json` reports as a parse
            error of the text.
    """
    raise ValueError(f"{name} is not JSON")
