"""Provider message formats, both ways: normalized messages as each provider's request
messages, and each provider's messages (and SDK answers) as normalized messages.

Pure functions over values; no provider SDK is imported. ``to_*`` returns what the
provider's official Python SDK takes as its request argument (``messages``, ``input``,
``system`` and ``messages``, ``contents`` and ``systemInstruction``); ``from_*`` reads
those, and what the SDKs return, back. Provider-private data (signatures, redacted
thinking, encrypted reasoning, item ids, thought signatures) travels in each part's
``providerMetadata.<provider>`` byte for byte and goes back only to that provider; what
a format cannot express is a :class:`FormatError` naming the message and part. The
provider adapters build their requests' messages with these functions. See the guide,
docs/formats.md.
"""

from ._anthropic import AnthropicPayload, from_anthropic, to_anthropic
from ._errors import FORMATS, Format, FormatError
from ._export import ReasoningParts
from ._gemini import GENERATED_ID_PREFIX, GeminiPayload, from_gemini, to_gemini
from ._openai_chat import from_openai_chat, to_openai_chat
from ._openai_responses import from_openai_responses, to_openai_responses

__all__ = [
    "FORMATS",
    "GENERATED_ID_PREFIX",
    "AnthropicPayload",
    "Format",
    "FormatError",
    "GeminiPayload",
    "ReasoningParts",
    "from_anthropic",
    "from_gemini",
    "from_openai_chat",
    "from_openai_responses",
    "to_anthropic",
    "to_gemini",
    "to_openai_chat",
    "to_openai_responses",
]
