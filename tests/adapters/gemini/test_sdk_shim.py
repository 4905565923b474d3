"""The private google-genai API the adapter drives is all in one shim, and still there.

When a google-genai release moves one of those pieces, the first test here fails naming
the installed version and what moved, before any adapter test fails in a puzzling way.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from google.genai import _api_client as sdk_api_client
from google.genai import _transformers

from ai_chat import ConfigurationError
from ai_chat.adapters.gemini import _sdk_shim
from ai_chat.adapters.gemini._sdk_shim import SDK_VERSION, api_client, missing

GEMINI = Path(_sdk_shim.__file__).parent


def test_the_installed_sdk_has_every_private_piece_the_adapter_uses() -> None:
    moved = missing()
    if moved:
        pytest.fail(
            f"google-genai {SDK_VERSION} moved private API the Gemini adapter uses: "
            f"{', '.join(moved)}; update ai_chat/adapters/gemini/_sdk_shim.py (or the "
            "gemini extra's version bounds)",
            pytrace=False,
        )


def test_a_removed_method_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(sdk_api_client.BaseApiClient, "_build_request")
    assert missing() == ["BaseApiClient._build_request"]


def test_a_changed_signature_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    async def moved(self: Any, request: Any, *, streaming: bool = False) -> None:
        del self, request, streaming

    monkeypatch.setattr(sdk_api_client.BaseApiClient, "_async_request", moved)
    assert missing() == ["BaseApiClient._async_request(http_request, http_options, stream)"]


def test_a_moved_transformer_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(_transformers, "t_model")
    assert missing() == ["google.genai._transformers.t_model(client, model)"]


def test_a_missing_response_stream_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    class Moved:
        def __init__(self, headers: Any = None, stream: Any = None) -> None:
            del headers, stream

    monkeypatch.setattr(sdk_api_client, "HttpResponse", Moved)
    assert missing() == ["google.genai._api_client.HttpResponse(response_stream=...)"]


def test_a_removed_mtls_choice_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(sdk_api_client.BaseApiClient, "_use_mtls_endpoint")
    monkeypatch.delattr(sdk_api_client, "_has_client_cert")
    assert missing() == [
        "BaseApiClient._use_mtls_endpoint",
        "google.genai._api_client._has_client_cert(ctx)",
    ]


def test_a_moved_credentials_loader_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    def moved(*, project_id: str | None) -> None:
        del project_id

    monkeypatch.setattr(sdk_api_client, "load_auth", moved)
    assert missing() == ["google.genai._api_client.load_auth(project)"]


def test_attributes_the_constructor_no_longer_sets_are_seen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def moved(self: Any, **settings: Any) -> None:
        self._http_options = settings
        self._async_httpx_client = self._httpx_client = None

    monkeypatch.setattr(sdk_api_client.BaseApiClient, "__init__", moved)
    assert missing() == [
        "BaseApiClient._async_httpx_client_args",
        "BaseApiClient._aiohttp_sessions",
        "BaseApiClient._async_httpx_use_mtls_endpoint",
        "BaseApiClient._credentials",
    ]


def test_a_close_that_would_close_the_callers_transport_is_seen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The adapter drops its copy of a caller's API client unclosed; the copy's close()
    # and __del__ must still leave alone a client named in the options.
    def moved(self: Any) -> None:
        self._httpx_client.close()

    monkeypatch.setattr(sdk_api_client.BaseApiClient, "close", moved)
    monkeypatch.setattr(sdk_api_client.BaseApiClient, "__del__", moved)
    assert missing() == [
        "BaseApiClient.close (guarded by self._http_options.httpx_client)",
        "BaseApiClient.__del__ (guarded by self._http_options.httpx_client)",
    ]


def test_a_client_without_the_api_client_names_the_installed_version() -> None:
    with pytest.raises(ConfigurationError) as caught:
        api_client(object())
    assert caught.value.parameter == "client"
    assert f"google-genai {SDK_VERSION}" in caught.value.expected


def private_uses(path: Path) -> list[str]:
    """The private names of other objects a module touches (its own ``self._x`` aside)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("google"):
            names = [node.module, *(alias.name for alias in node.names)]
            found += [name for name in names if any(p.startswith("_") for p in name.split("."))]
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if "._" in a.name and a.name.startswith("google")]
        elif isinstance(node, ast.Attribute):
            name = node.attr
            own = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
            if name.startswith("_") and not name.startswith("__") and not own:
                found.append(f"{ast.unparse(node.value)}.{name}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) >= 2
        ):
            key = node.args[1]
            if isinstance(key, ast.Constant) and str(key.value).startswith("_"):
                found.append(f"getattr(..., {key.value!r})")
    return found


def test_only_the_shim_touches_private_sdk_api() -> None:
    modules = sorted(GEMINI.glob("*.py"))
    assert GEMINI / "_sdk_shim.py" in modules and len(modules) >= 5
    touching = {
        path.name: uses
        for path in modules
        if path.name != "_sdk_shim.py" and (uses := private_uses(path))
    }
    assert touching == {}


def test_the_scan_sees_private_use() -> None:
    assert private_uses(GEMINI / "_sdk_shim.py")  # the probe can fail
