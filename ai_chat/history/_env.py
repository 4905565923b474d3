"""The environment of a history: its clock and its id source, injectable for tests."""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from .._errors import ConfigurationError, ValidationError

__all__ = ["HistoryEnv", "format_time", "parse_time"]


def _system_now() -> datetime:
    return datetime.now(UTC)


def _random_ids() -> Callable[[], str]:
    # 80 random bits name the source, a counter the id: unique without a system call per
    # id (uuid4 costs more than the rest of an append).
    prefix = secrets.token_hex(10)
    counter = itertools.count(1)
    return lambda: f"{prefix}-{next(counter):x}"


@dataclass(frozen=True, slots=True)
class HistoryEnv:
    """Where a history gets its times and its new ids.

    Every helper that stamps a time (a new history, an appended message, ``updated_at``)
    calls ``now``, and every one that names something new calls ``new_id``; nothing else
    in ``ai_chat.history`` reads a clock or a random source. A history keeps the env it
    was created with (``History.create(env=...)``, ``History.from_json(..., env=...)``,
    ``History.with_env``); it is not part of its value (not compared, not serialized).

    Attributes:
        now: returns the current time, timezone-aware (UTC by default).
        new_id: returns a new id, a non-empty string unique within what it names (by
            default a random 20-hex-digit prefix per env and a counter).
    """

    now: Callable[[], datetime] = _system_now
    new_id: Callable[[], str] = field(default_factory=_random_ids)

    @classmethod
    def deterministic(
        cls,
        *,
        start: datetime = datetime(2030, 1, 1, tzinfo=UTC),
        step: timedelta = timedelta(seconds=1),
        prefix: str = "id-",
    ) -> HistoryEnv:
        """A reproducible env for tests: ids ``id-1``, ``id-2``... and a clock that starts
        at ``start`` and moves ``step`` further at each reading (``timedelta(0)``: frozen).

        Two envs made with the same arguments give the same sequence, so two runs of the
        same code build equal histories (ids, times and all). Thread-safe.

        Raises:
            ConfigurationError: ``start`` is not timezone-aware, or ``step`` is negative.
        """
        if start.tzinfo is None or start.utcoffset() is None:
            raise ConfigurationError("start", start, "a timezone-aware datetime")
        if step < timedelta(0):
            raise ConfigurationError("step", step, "a timedelta of 0 or more")
        ticks = itertools.count()
        ids = itertools.count(1)
        return cls(
            now=lambda: start + step * next(ticks),
            new_id=lambda: f"{prefix}{next(ids)}",
        )

    def time(self) -> datetime:
        """``now()``, checked: raises :class:`~ai_chat.ConfigurationError` unless it is a
        timezone-aware datetime."""
        moment = self.now()
        if type(moment) is not datetime or (
            moment.tzinfo is not UTC and moment.utcoffset() is None
        ):
            raise ConfigurationError("env.now()", moment, "a timezone-aware datetime")
        return moment

    def identifier(self) -> str:
        """``new_id()``, checked: raises :class:`~ai_chat.ConfigurationError` unless it is
        a non-empty str."""
        value = self.new_id()
        if type(value) is not str or not value:
            raise ConfigurationError("env.new_id()", value, "a non-empty str")
        return value


def format_time(moment: datetime) -> str:
    """A time as ISO 8601 in UTC with microseconds and ``Z`` (what JavaScript's ``Date``
    reads, and what the stores write)."""
    if moment.tzinfo is not UTC:
        moment = moment.astimezone(UTC)
    return moment.isoformat(timespec="microseconds")[:-6] + "Z"  # "+00:00" -> "Z"


def parse_time(value: object, path: str) -> datetime:
    """An ISO 8601 string with a UTC offset (or ``Z``) as an aware datetime.

    Raises:
        ValidationError: not a string, not ISO 8601, or without an offset.
    """
    if type(value) is not str:
        raise ValidationError(path, "expected an ISO 8601 time string")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise ValidationError(path, f"expected an ISO 8601 time, got {value[:40]!r}") from None
    if moment.utcoffset() is None:
        raise ValidationError(path, "expected a time with a UTC offset (such as Z)")
    return moment
