"""Adapter implementations.

The offline :class:`ScriptedAdapter` is always available. Provider adapters live in
their own modules (``ai_chat.adapters.openai`` and friends), each behind its extra, and
are imported explicitly: importing this package loads no provider SDK.
"""

from ._scripted import ScriptedAdapter, default_script

__all__ = ["ScriptedAdapter", "default_script"]
