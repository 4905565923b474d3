"""Fitting a history into a context window: :func:`fit_to_tokens`.

The unit dropped is a *turn*: a user message and everything up to the next one (the
assistant's answer, its tool calls and their results, its signed reasoning). Dropping
whole turns, oldest first, keeps every tool call with its result and every signed
thinking block with the turn it belongs to (Anthropic refuses a thinking block whose
turn was cut), and the fitted conversation starts with a user message, as Anthropic
requires ("messages: first message must use the \\"user\\" role") and Gemini's function
call turns assume. A tool pair that straddles a user message (a history
:func:`~ai_chat.history.check` already flags) joins the turns around it.

How it stays fast: the estimator's counts are cached per message; the turn starts are
picked from the roles at C speed, the kept tokens for each cut come from prefix sums,
and the cut is found by bisection over them; the fitted history shares the kept
messages and shifts the history's indexes instead of rebuilding them.
"""

# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate, compress
from operator import itemgetter, sub
from typing import TYPE_CHECKING, Literal

from .._errors import ConfigurationError
from ._check import check
from ._errors import ContextOverflowError
from ._estimate import DEFAULT_ESTIMATOR, AsyncTokenEstimator, TokenEstimator
from ._report import Provider

if TYPE_CHECKING:
    from ._history import History

__all__ = ["FitReport", "afit_to_tokens", "fit_to_tokens", "turn_starts"]

_role = itemgetter("role")
_id = itemgetter("id")


@dataclass(frozen=True, slots=True)
class FitReport:
    """What :func:`fit_to_tokens` did.

    Attributes:
        dropped: the ids of the messages dropped, in order (empty: the history fit).
        tokens_before: the estimated tokens of the history's request messages.
        tokens_after: those of the fitted history's (at most ``max_tokens``).
        max_tokens: the budget.
    """

    dropped: tuple[str, ...]
    tokens_before: int
    tokens_after: int
    max_tokens: int


def turn_starts(history: History, roles: list[str] | None = None) -> list[int]:
    """Where the history may be cut so that it starts a turn: 0, the position of every
    user message that no tool pair straddles, and the end (``len(history)``).
    ``roles`` are the messages' roles, when the caller has them."""
    seq = history._seq  # pyright: ignore[reportPrivateUsage]
    if roles is None:
        roles = list(map(_role, seq.messages()))
    size = len(roles)
    users = list(compress(range(size), map("user".__eq__, roles)))
    _, calls, answers = seq.tool_pairs()
    # A call answered further than the next message may have a user message between.
    far = [
        (calls[i], answers[i])
        for i in compress(range(len(calls)), map((1).__lt__, map(sub, answers, calls)))
    ]
    blocked: set[int] = set()
    for call, answer in far:
        blocked.update(users[bisect_right(users, call) : bisect_right(users, answer)])
    if blocked:
        users = [u for u in users if u not in blocked]
    starts = users if users and users[0] == 0 else [0, *users]
    if starts[-1] != size:
        starts.append(size)
    return starts


def fit_to_tokens(
    history: History,
    max_tokens: int,
    *,
    keep_system: bool = True,
    keep_last: int = 0,
    estimator: TokenEstimator = DEFAULT_ESTIMATOR,
    provider: Provider | Literal["all"] | None = "all",
) -> tuple[History, FitReport]:
    """``history`` cut to at most ``max_tokens`` by dropping its oldest turns, and what
    was dropped.

    The tokens are those of the messages a request takes (streaming ones count 0), by
    ``estimator``. Kept whatever the budget: with ``keep_system`` every system message
    (moved no further than before the kept turns), the last ``keep_last`` messages and
    any streaming message, each with the turn it is in. A history that fits comes back
    as itself. The result is checked by :func:`~ai_chat.history.check` for ``provider``
    (every provider's rules by default; ``None``: not checked): cutting at turns adds no
    problem, so it holds one only if ``history`` did, and then it is refused.

    Raises:
        ContextOverflowError: what must be kept does not fit (never an over-budget
            result).
        IntegrityError: the fitted history holds a problem for ``provider`` (that
            ``history`` held: :func:`~ai_chat.history.repair` it first).
        ConfigurationError: ``max_tokens`` or ``keep_last`` is not an int of 0 or more,
            or the estimator gave not one count per message.
    """
    return _fit(
        history, estimator.count(history.messages), max_tokens, keep_system, keep_last, provider
    )


async def afit_to_tokens(
    history: History,
    max_tokens: int,
    *,
    estimator: AsyncTokenEstimator,
    keep_system: bool = True,
    keep_last: int = 0,
    provider: Provider | Literal["all"] | None = "all",
) -> tuple[History, FitReport]:
    """:func:`fit_to_tokens` with an asynchronous estimator (a provider's count API),
    awaited once for every message. Cancellation propagates from the estimator; the
    history is a value, so nothing is left half done."""
    counts = await estimator.count(history.messages)
    return _fit(history, counts, max_tokens, keep_system, keep_last, provider)


def _fit(
    history: History,
    counts: Sequence[int],
    max_tokens: int,
    keep_system: bool,
    keep_last: int,
    provider: Provider | Literal["all"] | None,
) -> tuple[History, FitReport]:
    for name, value in (("max_tokens", max_tokens), ("keep_last", keep_last)):
        if type(value) is not int or value < 0:
            raise ConfigurationError(name, value, "an int of 0 or more")
    seq = history._seq  # pyright: ignore[reportPrivateUsage]
    messages = seq.messages()
    size = len(messages)
    tokens = list(counts)
    streaming = seq.streaming_positions()
    prefix: list[int] = []
    if len(tokens) == size:
        for position in streaming:
            tokens[position] = 0  # a request never takes it
        try:
            prefix = [0, *accumulate(tokens)]
        except TypeError:
            prefix = []
    # A count that is not an int makes the sum another type, or fails it.
    if not prefix or type(prefix[-1]) is not int or (tokens and min(tokens) < 0):
        raise ConfigurationError(
            "estimator", counts, f"one count (an int of 0 or more) for each of {size} messages"
        )
    total = prefix[-1]
    if total <= max_tokens:
        if provider is not None:
            check(history, provider=provider).raise_for_problems()
        return history, FitReport((), total, total, max_tokens)
    roles = list(map(_role, messages))
    # The system messages are few: their tokens before each cut come from their own sums.
    kept_systems = list(compress(range(size), map("system".__eq__, roles))) if keep_system else []
    system_sums = [0, *accumulate(map(tokens.__getitem__, kept_systems))]

    def kept(cut: int) -> int:
        return system_sums[bisect_left(kept_systems, cut)] + total - prefix[cut]

    limit = min([size - min(keep_last, size), *streaming])
    starts = turn_starts(history, roles)
    allowed = starts[: bisect_right(starts, limit)]
    # Kept tokens fall as the cut moves later: the first cut that fits is the answer.
    index = bisect_left(allowed, True, key=lambda cut: kept(cut) <= max_tokens)
    if index == len(allowed):
        least = kept(allowed[-1])
        raise ContextOverflowError(
            max_tokens, least, _what_is_kept(keep_system, keep_last, bool(streaming))
        )
    cut = allowed[index]
    head = kept_systems[: bisect_left(kept_systems, cut)]
    ids = list(map(_id, messages[:cut]))
    for position in reversed(head):
        del ids[position]
    dropped = tuple(ids)
    fitted = history._changed(seq.keep(head, cut))  # pyright: ignore[reportPrivateUsage]
    if provider is not None:
        check(fitted, provider=provider).raise_for_problems()
    return fitted, FitReport(dropped, total, kept(cut), max_tokens)


def _what_is_kept(keep_system: bool, keep_last: int, streaming: bool) -> str:
    kept = ["the system messages"] if keep_system else []
    if keep_last:
        kept.append(f"the last {keep_last} messages")
    if streaming:
        kept.append("the streaming message")
    if not kept:
        return "the turns"
    return ", ".join(kept) + " with their turns"
