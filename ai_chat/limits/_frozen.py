"""The immutable mapping that frozen JSON objects become."""

from __future__ import annotations

from typing import Any, NoReturn, TypeVar

__all__ = ["FrozenDict"]

_K = TypeVar("_K")
_V = TypeVar("_V")


def _immutable(name: str) -> NoReturn:
    raise TypeError(f"FrozenDict is immutable: {name}() is not supported; copy it with dict()")


class FrozenDict(dict[_K, _V]):
    """A ``dict`` whose mutating methods raise ``TypeError``.

    It subclasses ``dict`` so that frozen values serialize with plain ``json.dumps`` and
    compare equal to ordinary dicts; ``dict(frozen)`` gives a mutable shallow copy. Every
    value inside one produced by :func:`~ai_chat.limits.freeze_json` is itself immutable
    (``str``, ``int``, ``float``, ``bool``, ``None``, ``tuple`` or ``FrozenDict``), so
    the whole tree is hashable.

    Like any Python object it can be forced (``dict.__setitem__(frozen, ...)``, calling
    ``__init__`` again); the guarantee is against accidental mutation, not against intent.
    """

    __slots__ = ()

    def __setitem__(self, key: _K, value: _V) -> NoReturn:
        _immutable("__setitem__")

    def __delitem__(self, key: _K) -> NoReturn:
        _immutable("__delitem__")

    def __ior__(self, other: Any) -> NoReturn:
        _immutable("__ior__")

    def clear(self) -> NoReturn:
        _immutable("clear")

    def pop(self, *args: Any) -> NoReturn:
        _immutable("pop")

    def popitem(self) -> NoReturn:
        _immutable("popitem")

    def setdefault(self, *args: Any) -> NoReturn:
        _immutable("setdefault")

    def update(self, *args: Any, **kwargs: Any) -> NoReturn:
        _immutable("update")

    def __hash__(self) -> int:  # pyright: ignore[reportIncompatibleVariableOverride]
        return hash(frozenset(self.items()))

    def __copy__(self) -> FrozenDict[_K, _V]:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (dict(self),))

    def __repr__(self) -> str:
        return f"FrozenDict({super().__repr__()})"
