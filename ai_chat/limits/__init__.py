"""The JSON boundary: validate, measure and deep-freeze JSON values within limits.

Pure code over values: it imports neither anyio nor httpx.
"""

from ._frozen import FrozenDict
from ._limits import JSONLimits
from ._walk import JSONObject, JSONValue, freeze_json, js_number, json_size

__all__ = [
    "FrozenDict",
    "JSONLimits",
    "JSONObject",
    "JSONValue",
    "freeze_json",
    "js_number",
    "json_size",
]
