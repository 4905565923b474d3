"""Adapters are a protocol plus, at most, one helper base: no class chain to learn."""

from __future__ import annotations

from typing import Generic

import pytest

from ai_chat import AIChatAdapter
from ai_chat.adapters import ScriptedAdapter
from ai_chat.adapters._base.client import ClientAdapter
from ai_chat.adapters.anthropic import AnthropicChatAdapter
from ai_chat.adapters.gemini import GeminiChatAdapter
from ai_chat.adapters.openai import OpenAIChatAdapter
from ai_chat.adapters.ui_stream import UIMessageStreamAdapter

ADAPTERS = [OpenAIChatAdapter, AnthropicChatAdapter, GeminiChatAdapter, UIMessageStreamAdapter]


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda cls: cls.__name__)
def test_a_provider_adapter_has_one_helper_base(adapter: type[object]) -> None:
    assert adapter.__mro__ == (adapter, ClientAdapter, Generic, object)
    assert "stream" in vars(adapter)  # each implements the protocol itself
    assert issubclass(adapter, AIChatAdapter)


def test_the_helper_base_is_no_adapter_and_has_no_base_of_its_own() -> None:
    assert ClientAdapter.__mro__ == (ClientAdapter, Generic, object)
    assert not issubclass(ClientAdapter, AIChatAdapter)


def test_the_scripted_adapter_needs_no_base() -> None:
    assert ScriptedAdapter.__mro__ == (ScriptedAdapter, object)
    assert isinstance(ScriptedAdapter(), AIChatAdapter)
