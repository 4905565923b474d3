"""Test helpers for adapter authors (requires pytest).

:class:`AdapterConformance` is a pytest class to subclass: it checks that an adapter's
stream ends with finish, that its events pass the boundary, and that every way of
stopping aborts and closes it promptly without leaking tasks.
"""

from ._conformance import AdapterConformance

__all__ = ["AdapterConformance"]
