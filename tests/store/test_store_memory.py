"""The in-memory reference store passes the compliance suite."""

import pytest

from ai_chat.store import MemoryConversationStore
from ai_chat.testing import ConversationStoreCompliance, StoreFactory


class TestMemoryStore(ConversationStoreCompliance):
    @pytest.fixture
    def store_factory(self) -> StoreFactory:
        return MemoryConversationStore
