"""Test kits (require pytest): for adapter authors and for store authors.

* :class:`AdapterConformance` is a pytest class to subclass: it checks that an adapter's
  stream ends with finish, that its events pass the boundary, and that every way of
  stopping aborts and closes it promptly without leaking tasks.
* :class:`ConversationStoreCompliance` (or :class:`PersistentStoreCompliance` for a store
  that persists data) is a pytest class to subclass in a test module that provides a
  ``store_factory`` fixture (a :data:`StoreFactory`): pytest then runs every check of the
  :class:`~ai_chat.store.ConversationStore` contract against your store.

Importing this module loads pytest, but neither psycopg nor any provider SDK.
"""

from ._conformance import AdapterConformance
from ._store_compliance import ConversationStoreCompliance, PersistentStoreCompliance, StoreFactory

__all__ = [
    "AdapterConformance",
    "ConversationStoreCompliance",
    "PersistentStoreCompliance",
    "StoreFactory",
]
