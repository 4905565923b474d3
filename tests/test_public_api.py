"""The public names, what importing ai_chat loads, and the exception tree."""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import json
import pkgutil
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

import ai_chat
import ai_chat._adapter
import ai_chat._errors
import ai_chat._messages
import ai_chat._narrow
import ai_chat._sse
import ai_chat._stream
import ai_chat._types
import ai_chat._version
import ai_chat.adapters
import ai_chat.adapters._anthropic_chat
import ai_chat.adapters._anthropic_request
import ai_chat.adapters._gemini_chat
import ai_chat.adapters._openai_chat
import ai_chat.adapters._scripted
import ai_chat.adapters._ui_stream
import ai_chat.adapters.anthropic
import ai_chat.adapters.gemini
import ai_chat.adapters.openai
import ai_chat.adapters.ui_stream
import ai_chat.limits
import ai_chat.limits._frozen
import ai_chat.limits._limits
import ai_chat.limits._walk
import ai_chat.server
import ai_chat.server._app
import ai_chat.server._response
import ai_chat.server._ui_messages
import ai_chat.sse
import ai_chat.store
import ai_chat.store._compliance
import ai_chat.store._memory
import ai_chat.store._postgres
import ai_chat.store._protocol
import ai_chat.store._records
import ai_chat.store._sqlite
import ai_chat.store.testing
import ai_chat.testing
import ai_chat.testing._conformance
import ai_chat.types
from ai_chat import AIChatError

ROOT = Path(__file__).resolve().parent.parent

# Each public module's __all__, and where each name is defined.
DOCUMENTED: dict[ModuleType, dict[str, ModuleType]] = {
    ai_chat: {
        "AIChatAdapter": ai_chat._adapter,
        "AIChatError": ai_chat._errors,
        "AbortSignal": ai_chat._adapter,
        "AdapterError": ai_chat._errors,
        "AppendError": ai_chat._errors,
        "ChatEvent": ai_chat._types,
        "ChatRequest": ai_chat._types,
        "ChatStream": ai_chat._stream,
        "ConfigurationError": ai_chat._errors,
        "ConversationExistsError": ai_chat._errors,
        "ConversationNotFoundError": ai_chat._errors,
        "DataPart": ai_chat._types,
        "DuplicateMessageError": ai_chat._errors,
        "FilePart": ai_chat._types,
        "FinishEvent": ai_chat._types,
        "FinishReason": ai_chat._types,
        "InvalidRatingError": ai_chat._errors,
        "LimitExceededError": ai_chat._errors,
        "Message": ai_chat._types,
        "Part": ai_chat._types,
        "ProtocolError": ai_chat._errors,
        "ProviderError": ai_chat._errors,
        "ReasoningPart": ai_chat._types,
        "RemoteStreamError": ai_chat._errors,
        "Role": ai_chat._types,
        "SchemaVersionError": ai_chat._errors,
        "StoreError": ai_chat._errors,
        "StreamBusyError": ai_chat._errors,
        "StreamClosedError": ai_chat._errors,
        "StreamFormatError": ai_chat._errors,
        "TextPart": ai_chat._types,
        "ToolCallPart": ai_chat._types,
        "ToolDefinition": ai_chat._types,
        "ToolResultPart": ai_chat._types,
        "TruncatedStreamError": ai_chat._errors,
        "Usage": ai_chat._types,
        "ValidationError": ai_chat._errors,
        "VersionConflictError": ai_chat._errors,
        "__version__": ai_chat._version,
        "create_chat_stream": ai_chat._stream,
        "is_data": ai_chat._narrow,
        "is_event": ai_chat._narrow,
        "is_part": ai_chat._narrow,
        "normalize_messages": ai_chat._messages,
        "stream_chat": ai_chat._stream,
    },
    ai_chat.limits: {
        "FrozenDict": ai_chat.limits._frozen,
        "JSONLimits": ai_chat.limits._limits,
        "JSONObject": ai_chat.limits._walk,
        "JSONValue": ai_chat.limits._walk,
        "freeze_json": ai_chat.limits._walk,
        "js_number": ai_chat.limits._walk,
        "json_size": ai_chat.limits._walk,
    },
    ai_chat.adapters: {
        "ScriptedAdapter": ai_chat.adapters._scripted,
        "default_script": ai_chat.adapters._scripted,
    },
    ai_chat.testing: {
        "AdapterConformance": ai_chat.testing._conformance,
    },
    ai_chat.sse: {
        "DEFAULT_MAX_BODY_BYTES": ai_chat._sse,
        "DEFAULT_MAX_EVENT_CHARS": ai_chat._sse,
        "DEFAULT_MAX_LINE_CHARS": ai_chat._sse,
        "SSEDecoder": ai_chat._sse,
        "SSEEvent": ai_chat._sse,
    },
    ai_chat.types: dict.fromkeys(ai_chat._types.__all__, ai_chat._types),
    ai_chat.adapters.openai: {"OpenAIChatAdapter": ai_chat.adapters._openai_chat},
    ai_chat.adapters.anthropic: {
        "AnthropicChatAdapter": ai_chat.adapters._anthropic_chat,
        "DEFAULT_MAX_TOKENS": ai_chat.adapters._anthropic_request,
    },
    ai_chat.adapters.gemini: {"GeminiChatAdapter": ai_chat.adapters._gemini_chat},
    ai_chat.adapters.ui_stream: {
        "DEFAULT_IDLE_TIMEOUT": ai_chat.adapters._ui_stream,
        "DEFAULT_MAX_BODY_BYTES": ai_chat.adapters._ui_stream,
        "DEFAULT_MAX_ERROR_BODY_BYTES": ai_chat.adapters._ui_stream,
        "RemoteStreamError": ai_chat._errors,
        "UIMessageStreamAdapter": ai_chat.adapters._ui_stream,
    },
    ai_chat.server: {
        "ConvertedMessages": ai_chat.server._ui_messages,
        "DEFAULT_KEEP_ALIVE": ai_chat.server._response,
        "DEFAULT_MAX_BODY_BYTES": ai_chat.server._app,
        "MASKED_ERROR": ai_chat.server._response,
        "UIMessageStreamResponse": ai_chat.server._response,
        "chat_endpoint": ai_chat.server._app,
        "convert_ui_messages": ai_chat.server._ui_messages,
        "create_chat_app": ai_chat.server._app,
    },
    ai_chat.store: {
        "AppendError": ai_chat._errors,
        "AppendResult": ai_chat.store._records,
        "Conversation": ai_chat.store._records,
        "ConversationExistsError": ai_chat._errors,
        "ConversationNotFoundError": ai_chat._errors,
        "ConversationStore": ai_chat.store._protocol,
        "DuplicateMessageError": ai_chat._errors,
        "InvalidRatingError": ai_chat._errors,
        "MemoryConversationStore": ai_chat.store._memory,
        "PostgresConversationStore": ai_chat.store._postgres,
        "SQLiteConversationStore": ai_chat.store._sqlite,
        "SchemaVersionError": ai_chat._errors,
        "StoreError": ai_chat._errors,
        "StoredMessage": ai_chat.store._records,
        "VersionConflictError": ai_chat._errors,
        "messages_of": ai_chat.store._records,
    },
    ai_chat.store.testing: {
        "ConversationStoreCompliance": ai_chat.store._compliance,
        "PersistentStoreCompliance": ai_chat.store._compliance,
        "StoreFactory": ai_chat.store._compliance,
    },
}

PUBLIC = [pytest.param(module, id=module.__name__) for module in DOCUMENTED]


@pytest.mark.parametrize("module", PUBLIC)
def test_all_is_sorted_and_unique(module: ModuleType) -> None:
    names: list[str] = list(module.__all__)
    # Sorted the way ruff's RUF022 sorts: CONSTANTS, then Classes, then functions.
    assert names == sorted(
        names, key=lambda n: (0 if n.isupper() else 1 if n[0].isupper() else 2, n)
    )
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("module", PUBLIC)
def test_all_lists_exactly_the_documented_names(module: ModuleType) -> None:
    assert set(module.__all__) == set(DOCUMENTED[module])


@pytest.mark.parametrize("module", PUBLIC)
def test_each_name_is_the_documented_object(module: ModuleType) -> None:
    for name in module.__all__:
        public = getattr(module, name)
        defining = DOCUMENTED[module][name]
        assert public is getattr(defining, name), name
        assert name in defining.__all__, name
        # `from module import *` gives the same object.
        namespace: dict[str, object] = {}
        exec(f"from {module.__name__} import *", namespace)
        assert namespace[name] is public


@pytest.mark.parametrize("module", PUBLIC)
def test_classes_and_functions_are_defined_where_documented(module: ModuleType) -> None:
    for name in module.__all__:
        value = getattr(module, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert value.__module__ == DOCUMENTED[module][name].__name__, name
            assert value.__name__ == name
            assert inspect.getdoc(value), f"{name} has no docstring"


def test_module_docstrings() -> None:
    for module in DOCUMENTED:
        assert module.__doc__, module.__name__


def test_entry_point_is_the_cli_main() -> None:
    from ai_chat._cli import main

    assert callable(main)
    assert main.__module__ == "ai_chat._cli"


def test_version_is_the_installed_distributions() -> None:
    # The one source is pyproject.toml; the installed metadata carries it to __version__.
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert ai_chat.__version__ == declared["project"]["version"]
    assert ai_chat.__version__ == importlib.metadata.version("ai_chat")


# --------------------------------------------------------------------------------------
# What `import ai_chat` loads
# --------------------------------------------------------------------------------------

FORBIDDEN = ["openai", "anthropic", "google.genai", "starlette", "uvicorn", "pytest", "trio"]


def loaded_modules(code: str) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        timeout=120,  # a hang guard
        check=False,
    )
    assert result.returncode == 0, result.stderr
    modules: list[str] = json.loads(result.stdout)
    return modules


@pytest.mark.slow
@pytest.mark.parametrize(
    "code",
    [
        "import ai_chat",
        "import ai_chat.limits",
        "import ai_chat.adapters",
        "from ai_chat import *",
        "from ai_chat.adapters import ScriptedAdapter",
        "import ai_chat._cli",
    ],
)
def test_importing_ai_chat_loads_no_provider_sdk_server_or_test_tool(code: str) -> None:
    modules = loaded_modules(code)
    assert "ai_chat" in modules
    for name in FORBIDDEN:
        loaded = [m for m in modules if m == name or m.startswith(name + ".")]
        assert loaded == [], f"{code!r} imported {loaded}"


@pytest.mark.slow
def test_the_check_itself_sees_forbidden_imports() -> None:
    # The probe must be able to fail: importing the pytest helpers does load pytest.
    assert "pytest" in loaded_modules("import ai_chat.testing")


# --------------------------------------------------------------------------------------
# The exception tree
# --------------------------------------------------------------------------------------


def ai_chat_modules() -> list[ModuleType]:
    modules: list[ModuleType] = [ai_chat]
    for info in pkgutil.walk_packages(ai_chat.__path__, "ai_chat."):
        if info.name.endswith("__main__"):
            continue  # running it is the CLI
        modules.append(importlib.import_module(info.name))
    return modules


def exception_classes() -> set[type[BaseException]]:
    found: set[type[BaseException]] = set()
    for module in ai_chat_modules():
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__.startswith("ai_chat")
            ):
                found.add(value)
    return found


def levels_below_base(cls: type[BaseException]) -> int:
    """How many classes lie between ``cls`` and AIChatError, ``cls`` included."""
    return sum(1 for c in cls.__mro__ if c is not AIChatError and issubclass(c, AIChatError))


def test_every_exception_derives_from_aichaterror_at_most_two_levels_down() -> None:
    classes = exception_classes()
    expected = {getattr(ai_chat._errors, name) for name in ai_chat._errors.__all__}
    assert expected <= classes
    assert AIChatError in classes
    for cls in classes:
        assert issubclass(cls, AIChatError), cls
        assert levels_below_base(cls) <= 2, cls
    assert issubclass(AIChatError, Exception)
    assert AIChatError.__bases__ == (Exception,)


def test_every_exception_is_public() -> None:
    for cls in exception_classes():
        if cls.__name__.startswith("_"):
            continue  # an internal signal (the fast JSON walk's bail-out) that never escapes
        assert getattr(ai_chat, cls.__name__) is cls
        assert cls.__name__ in ai_chat.__all__


def test_value_errors_are_the_input_errors() -> None:
    assert issubclass(ai_chat.ValidationError, ValueError)
    assert issubclass(ai_chat.ConfigurationError, ValueError)
    for cls in (
        ai_chat.LimitExceededError,
        ai_chat.ProtocolError,
        ai_chat.AdapterError,
        ai_chat.StreamClosedError,
        ai_chat.StreamBusyError,
    ):
        assert not issubclass(cls, ValueError), cls


def test_levels_are_counted_correctly() -> None:
    class Child(ai_chat.ProtocolError):
        pass

    class Grandchild(Child):
        pass

    assert levels_below_base(ai_chat.ProtocolError) == 1
    assert levels_below_base(Child) == 2
    assert levels_below_base(Grandchild) == 3
