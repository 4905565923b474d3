"""The conversation store compliance suite, for store authors (requires pytest).

Subclass :class:`ConversationStoreCompliance` (or :class:`PersistentStoreCompliance`
for a store that persists data) in a test module and provide a ``store_factory``
fixture: pytest then runs every check of the contract against your store.
"""

from ._compliance import ConversationStoreCompliance, PersistentStoreCompliance, StoreFactory

__all__ = ["ConversationStoreCompliance", "PersistentStoreCompliance", "StoreFactory"]
