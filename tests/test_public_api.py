"""The public names, what importing ai_chat loads, and the exception tree.

Each public module's ``__all__`` is pinned here with the module that defines each name,
and every name has exactly one public home: the lifecycle and its errors in ``ai_chat``,
the static types in ``ai_chat.types``, the store errors in ``ai_chat.store``, the test kits
in ``ai_chat.testing``.
"""

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
import ai_chat.adapters._scripted
import ai_chat.adapters.anthropic
import ai_chat.adapters.anthropic._adapter
import ai_chat.adapters.anthropic._request
import ai_chat.adapters.gemini
import ai_chat.adapters.gemini._adapter
import ai_chat.adapters.openai
import ai_chat.adapters.openai._adapter
import ai_chat.adapters.ui_stream
import ai_chat.adapters.ui_stream._adapter
import ai_chat.formats
import ai_chat.formats._anthropic
import ai_chat.formats._errors
import ai_chat.formats._export
import ai_chat.formats._gemini
import ai_chat.formats._openai_chat
import ai_chat.formats._openai_responses
import ai_chat.history
import ai_chat.history._bookkeeping
import ai_chat.history._check
import ai_chat.history._compact
import ai_chat.history._composition
import ai_chat.history._detector
import ai_chat.history._env
import ai_chat.history._errors
import ai_chat.history._estimate
import ai_chat.history._fit
import ai_chat.history._fold
import ai_chat.history._history
import ai_chat.history._markdown
import ai_chat.history._markdown_read
import ai_chat.history._projection
import ai_chat.history._public
import ai_chat.history._queries
import ai_chat.history._redaction
import ai_chat.history._repair
import ai_chat.history._report
import ai_chat.history._snapshot
import ai_chat.history._templates
import ai_chat.history._tokenizer
import ai_chat.history._validate
import ai_chat.limits
import ai_chat.limits._frozen
import ai_chat.limits._limits
import ai_chat.limits._walk
import ai_chat.server
import ai_chat.server._app
import ai_chat.server._limits
import ai_chat.server._response
import ai_chat.server._subjects
import ai_chat.server._ui_messages
import ai_chat.sse
import ai_chat.store
import ai_chat.store._memory
import ai_chat.store._postgres
import ai_chat.store._protocol
import ai_chat.store._records
import ai_chat.store._sqlite
import ai_chat.testing
import ai_chat.testing._conformance
import ai_chat.testing._store_compliance
import ai_chat.types
from ai_chat import AIChatError

STORE_ERRORS = [
    "AppendError",
    "ConversationExistsError",
    "ConversationNotFoundError",
    "DuplicateMessageError",
    "InvalidRatingError",
    "SchemaVersionError",
    "StoreError",
    "VersionConflictError",
]

ROOT = Path(__file__).resolve().parent.parent

# Each public module's __all__, and where each name is defined.
DOCUMENTED: dict[ModuleType, dict[str, ModuleType]] = {
    ai_chat: {
        "AIChatAdapter": ai_chat._adapter,
        "AIChatError": ai_chat._errors,
        "AbortSignal": ai_chat._adapter,
        "AdapterError": ai_chat._errors,
        "ChatStream": ai_chat._stream,
        "ConfigurationError": ai_chat._errors,
        "LimitExceededError": ai_chat._errors,
        "ProtocolError": ai_chat._errors,
        "ProviderError": ai_chat._errors,
        "RemoteStreamError": ai_chat._errors,
        "StreamBusyError": ai_chat._errors,
        "StreamClosedError": ai_chat._errors,
        "StreamFormatError": ai_chat._errors,
        "TruncatedStreamError": ai_chat._errors,
        "ValidationError": ai_chat._errors,
        "__version__": ai_chat._version,
        "create_chat_stream": ai_chat._stream,
        "is_data": ai_chat._narrow,
        "is_event": ai_chat._narrow,
        "is_part": ai_chat._narrow,
        "normalize_messages": ai_chat._messages,
        "stream_chat": ai_chat._stream,
    },
    ai_chat.types: dict.fromkeys(ai_chat._types.__all__, ai_chat._types),
    ai_chat.limits: {
        "FrozenDict": ai_chat.limits._frozen,
        "JSONLimits": ai_chat.limits._limits,
        "JSONObject": ai_chat.limits._walk,
        "JSONValue": ai_chat.limits._walk,
        "freeze_json": ai_chat.limits._walk,
        "js_number": ai_chat.limits._walk,
        "json_size": ai_chat.limits._walk,
    },
    ai_chat.sse: {
        "DEFAULT_MAX_BODY_BYTES": ai_chat._sse,
        "DEFAULT_MAX_EVENT_CHARS": ai_chat._sse,
        "DEFAULT_MAX_LINE_CHARS": ai_chat._sse,
        "SSEDecoder": ai_chat._sse,
        "SSEEvent": ai_chat._sse,
    },
    ai_chat.adapters: {
        "ScriptedAdapter": ai_chat.adapters._scripted,
        "default_script": ai_chat.adapters._scripted,
    },
    ai_chat.adapters.openai: {"OpenAIChatAdapter": ai_chat.adapters.openai._adapter},
    ai_chat.adapters.anthropic: {
        "AnthropicChatAdapter": ai_chat.adapters.anthropic._adapter,
        "DEFAULT_MAX_TOKENS": ai_chat.adapters.anthropic._request,
    },
    ai_chat.adapters.gemini: {"GeminiChatAdapter": ai_chat.adapters.gemini._adapter},
    ai_chat.adapters.ui_stream: {
        "DEFAULT_IDLE_TIMEOUT": ai_chat.adapters.ui_stream._adapter,
        "DEFAULT_MAX_BODY_BYTES": ai_chat.adapters.ui_stream._adapter,
        "DEFAULT_MAX_ERROR_BODY_BYTES": ai_chat.adapters.ui_stream._adapter,
        "UIMessageStreamAdapter": ai_chat.adapters.ui_stream._adapter,
    },
    ai_chat.server: {
        "ConvertedMessages": ai_chat.server._ui_messages,
        "DEFAULT_KEEP_ALIVE": ai_chat.server._response,
        "DEFAULT_MAX_BODY_BYTES": ai_chat.server._app,
        "MASKED_ERROR": ai_chat.server._response,
        "AnswerLimiter": ai_chat.server._limits,
        "AnswerLimits": ai_chat.server._limits,
        "LimitRefusal": ai_chat.server._limits,
        "MemoryAnswerLimiter": ai_chat.server._limits,
        "UIMessageStreamResponse": ai_chat.server._response,
        "chat_endpoint": ai_chat.server._app,
        "convert_ui_messages": ai_chat.server._ui_messages,
        "create_chat_app": ai_chat.server._app,
        "load_secret": ai_chat.server._subjects,
    },
    ai_chat.store: {
        **dict.fromkeys(STORE_ERRORS, ai_chat._errors),
        "AppendResult": ai_chat.store._records,
        "Conversation": ai_chat.store._records,
        "ConversationStore": ai_chat.store._protocol,
        "MemoryConversationStore": ai_chat.store._memory,
        "PostgresConversationStore": ai_chat.store._postgres,
        "SQLiteConversationStore": ai_chat.store._sqlite,
        "StoredMessage": ai_chat.store._records,
        "messages_of": ai_chat.store._records,
    },
    ai_chat.formats: {
        **dict.fromkeys(
            ["AnthropicPayload", "from_anthropic", "to_anthropic"], ai_chat.formats._anthropic
        ),
        **dict.fromkeys(["FORMATS", "Format", "FormatError"], ai_chat.formats._errors),
        "ReasoningParts": ai_chat.formats._export,
        **dict.fromkeys(
            ["GENERATED_ID_PREFIX", "GeminiPayload", "from_gemini", "to_gemini"],
            ai_chat.formats._gemini,
        ),
        **dict.fromkeys(["from_openai_chat", "to_openai_chat"], ai_chat.formats._openai_chat),
        **dict.fromkeys(
            ["from_openai_responses", "to_openai_responses"], ai_chat.formats._openai_responses
        ),
    },
    ai_chat.history: {
        **dict.fromkeys(
            ["BOOKKEEPING_KEY", "Bookkeeping", "bookkeeping"], ai_chat.history._bookkeeping
        ),
        **dict.fromkeys(["check"], ai_chat.history._check),
        **dict.fromkeys(["HistoryEnv"], ai_chat.history._env),
        **dict.fromkeys(
            [
                "ContextOverflowError",
                "DuplicateIdError",
                "HistoryError",
                "IntegrityError",
                "MarkdownError",
                "SnapshotError",
                "StreamingMessageError",
                "ToolPairingError",
            ],
            ai_chat.history._errors,
        ),
        **dict.fromkeys(["Compaction", "compact", "is_summary"], ai_chat.history._compact),
        **dict.fromkeys(
            [
                "DEFAULT_ESTIMATOR",
                "AsyncTokenEstimator",
                "CalibratedEstimator",
                "HeuristicEstimator",
                "TokenEstimator",
                "aestimate_tokens",
                "calibrate",
                "estimate_tokens",
            ],
            ai_chat.history._estimate,
        ),
        **dict.fromkeys(["FitReport", "afit_to_tokens", "fit_to_tokens"], ai_chat.history._fit),
        **dict.fromkeys(["BPETokenEstimator"], ai_chat.history._tokenizer),
        **dict.fromkeys(["AnswerFold"], ai_chat.history._fold),
        **dict.fromkeys(["History"], ai_chat.history._history),
        **dict.fromkeys(["Projection", "project"], ai_chat.history._projection),
        **dict.fromkeys(
            ["Statistics", "ToolInteraction", "message_text"], ai_chat.history._queries
        ),
        **dict.fromkeys(
            ["UNANSWERED_OUTPUT", "Change", "Repair", "repair"], ai_chat.history._repair
        ),
        **dict.fromkeys(
            ["PROVIDERS", "CheckReport", "Problem", "Provider"], ai_chat.history._report
        ),
        **dict.fromkeys(["MESSAGE_LIMITS"], ai_chat.history._validate),
        **dict.fromkeys(["to_markdown"], ai_chat.history._markdown),
        **dict.fromkeys(["from_markdown"], ai_chat.history._markdown_read),
        **dict.fromkeys(["public_projection"], ai_chat.history._public),
        **dict.fromkeys(
            ["SNAPSHOT_VERSION", "from_snapshot", "to_snapshot"], ai_chat.history._snapshot
        ),
        **dict.fromkeys(
            [
                "Condition",
                "InstructionComposer",
                "InstructionContext",
                "InstructionSection",
                "create_test_instruction_context",
                "when_any_tool_available",
                "when_metadata",
                "when_metadata_present",
                "when_step",
                "when_tools_available",
            ],
            ai_chat.history._composition,
        ),
        **dict.fromkeys(["Detector", "Finding", "Rule"], ai_chat.history._detector),
        **dict.fromkeys(
            [
                "RedactionSession",
                "Redactor",
                "default_detectors",
                "redact_message",
                "redact_messages",
                "redact_text",
            ],
            ai_chat.history._redaction,
        ),
        **dict.fromkeys(
            [
                "InstructionTemplate",
                "MissingVariable",
                "MissingVariableError",
                "TemplateSyntaxError",
                "extract_template_variables",
                "render_template",
            ],
            ai_chat.history._templates,
        ),
    },
    ai_chat.testing: {
        "AdapterConformance": ai_chat.testing._conformance,
        "ConversationStoreCompliance": ai_chat.testing._store_compliance,
        "PersistentStoreCompliance": ai_chat.testing._store_compliance,
        "StoreFactory": ai_chat.testing._store_compliance,
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


def all_modules() -> list[ModuleType]:
    """ai_chat and every module under it (``__main__`` aside: running it is the CLI)."""
    modules: list[ModuleType] = [ai_chat]
    for info in pkgutil.walk_packages(ai_chat.__path__, "ai_chat."):
        if not info.name.endswith("__main__"):
            modules.append(importlib.import_module(info.name))
    return modules


def test_the_public_modules_are_the_documented_ones() -> None:
    public = {
        module.__name__
        for module in all_modules()
        if not any(part.startswith("_") for part in module.__name__.split("."))
    }
    assert public == {module.__name__ for module in DOCUMENTED}


def test_each_public_name_has_one_public_home() -> None:
    homes: dict[int, list[str]] = {}
    for module in DOCUMENTED:
        for name in module.__all__:
            value = getattr(module, name)
            if isinstance(value, int | float | str | bytes):
                continue  # a constant: two modules may each have one of the same value
            homes.setdefault(id(value), []).append(f"{module.__name__}.{name}")
    assert [places for places in homes.values() if len(places) > 1] == []


def test_ai_chat_exports_the_lifecycle_and_its_errors_only() -> None:
    assert len(ai_chat.__all__) <= 30
    for name in ai_chat._types.__all__:
        assert not hasattr(ai_chat, name), f"ai_chat.{name}: types live in ai_chat.types"
    for name in STORE_ERRORS:
        assert not hasattr(ai_chat, name), f"ai_chat.{name}: store errors live in ai_chat.store"
    assert not hasattr(ai_chat.adapters.ui_stream, "RemoteStreamError")


def test_there_is_one_testing_namespace() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("ai_chat.store.testing")


def test_no_lazy_module_attributes_but_the_one_that_keeps_postgres_optional() -> None:
    lazy = [module.__name__ for module in all_modules() if "__getattr__" in vars(module)]
    assert lazy == ["ai_chat.store"]
    store_getattr = vars(ai_chat.store)["__getattr__"]
    assert (
        store_getattr("PostgresConversationStore")
        is ai_chat.store._postgres.PostgresConversationStore
    )
    with pytest.raises(AttributeError):
        store_getattr("MySQLConversationStore")


def test_entry_point_is_the_cli_main() -> None:
    import ai_chat._cli
    import ai_chat._cli.command

    assert ai_chat._cli.main is ai_chat._cli.command.main  # the entry point ai_chat._cli:main
    assert ai_chat._cli.main.__module__ == "ai_chat._cli.command"


def test_version_is_the_installed_distributions() -> None:
    # The one source is pyproject.toml; the installed metadata carries it to __version__.
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert ai_chat.__version__ == declared["project"]["version"]
    assert ai_chat.__version__ == importlib.metadata.version("ai_chat")


# --------------------------------------------------------------------------------------
# What `import ai_chat` loads
# --------------------------------------------------------------------------------------

SDKS = ["openai", "anthropic", "google.genai", "httpx2"]
FORBIDDEN = [*SDKS, "starlette", "uvicorn", "psycopg", "psycopg_pool", "pytest", "trio"]


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


def loaded_of(modules: list[str], names: list[str]) -> list[str]:
    return [m for m in modules if any(m == name or m.startswith(name + ".") for name in names)]


@pytest.mark.parametrize(
    "code",
    [
        "import ai_chat",
        "import ai_chat.types",
        "import ai_chat.limits",
        "import ai_chat.sse",
        "import ai_chat.adapters",
        "import ai_chat.adapters.ui_stream",
        "import ai_chat.store",
        "import ai_chat.formats",
        "from ai_chat import *",
        "from ai_chat.adapters import ScriptedAdapter",
        "import ai_chat._cli",
    ],
)
def test_importing_ai_chat_loads_no_provider_sdk_server_database_or_test_tool(code: str) -> None:
    modules = loaded_modules(code)
    assert "ai_chat" in modules
    assert loaded_of(modules, FORBIDDEN) == [], code


@pytest.mark.slow
def test_the_testing_namespace_loads_pytest_but_no_sdk_server_or_database() -> None:
    # The probe must be able to fail: importing the test kits does load pytest.
    modules = loaded_modules("import ai_chat.testing")
    assert "pytest" in modules
    assert loaded_of(modules, [*SDKS, "starlette", "uvicorn", "psycopg", "psycopg_pool"]) == []


# --------------------------------------------------------------------------------------
# The exception tree
# --------------------------------------------------------------------------------------


def exception_classes() -> set[type[BaseException]]:
    found: set[type[BaseException]] = set()
    for module in all_modules():
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


def test_every_exception_has_one_public_home() -> None:
    for cls in exception_classes():
        if cls.__name__.startswith("_"):
            continue  # an internal signal (the fast JSON walk's bail-out) that never escapes
        if cls.__module__.startswith("ai_chat._cli."):
            continue  # the command line's own failure, printed as one line, never raised out
        homes = [module for module in DOCUMENTED if getattr(module, cls.__name__, None) is cls]
        if cls.__name__ in STORE_ERRORS:
            expected = ai_chat.store
        elif cls.__module__.startswith("ai_chat.history."):
            expected = ai_chat.history
        elif cls.__module__.startswith("ai_chat.formats."):
            expected = ai_chat.formats
        else:
            expected = ai_chat
        assert homes == [expected], cls
        assert cls.__name__ in expected.__all__


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
