"""The built-in scripted adapter, and a hand-written one, pass the conformance kit."""

from collections.abc import AsyncIterator, Mapping

import anyio
import pytest

from ai_chat import AbortSignal
from ai_chat.adapters import ScriptedAdapter
from ai_chat.testing import AdapterConformance
from ai_chat.types import ChatRequest


class TestScriptedAdapter(AdapterConformance):
    @pytest.fixture
    def adapter(self) -> ScriptedAdapter:
        return ScriptedAdapter()

    @pytest.fixture
    def slow_adapter(self) -> ScriptedAdapter:
        return ScriptedAdapter(delay=30.0)


class EchoAdapter:
    """A user's own adapter: echoes the last text, then (when slow) waits for its abort."""

    def __init__(self, *, slow: bool) -> None:
        self.slow = slow
        self.closed = False

    async def stream(
        self, request: ChatRequest, signal: AbortSignal
    ) -> AsyncIterator[Mapping[str, object]]:
        try:
            yield {"type": "start"}
            yield {"type": "text-start", "id": "t"}
            if self.slow:
                await signal.wait()
                return
            yield {"type": "text-delta", "id": "t", "delta": "echo"}
            yield {"type": "text-end", "id": "t"}
            yield {"type": "finish", "finishReason": "stop"}
        finally:
            self.closed = True


class TestHandWrittenAdapter(AdapterConformance):
    @pytest.fixture
    def adapter(self) -> EchoAdapter:
        return EchoAdapter(slow=False)

    @pytest.fixture
    def slow_adapter(self) -> EchoAdapter:
        return EchoAdapter(slow=True)

    async def assert_released(self, adapter: object) -> None:
        assert isinstance(adapter, EchoAdapter)
        await anyio.lowlevel.checkpoint()
        assert adapter.closed
