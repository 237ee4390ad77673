"""Out-of-memory back-off: run planned batches, halve the budget and re-plan on OOM.

Never crash and never lose work on an out-of-memory error: the failed batch
and everything after it are planned again under half the budget, and only a
batch of one row that still does not fit is an error. Batches are planned
over every job, done or not, and batches whose jobs are all done are
skipped, so a resumed run rebuilds the batches of the first one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from folkscope.errors import BackendError

__all__ = ["AdaptiveBudget", "Planned", "is_out_of_memory", "run_with_backoff"]

log = logging.getLogger(__name__)
T = TypeVar("T")
B = TypeVar("B")


def is_out_of_memory(exc: BaseException) -> bool:
    """True for ``torch.cuda.OutOfMemoryError`` and RuntimeErrors saying "out of memory".

    >>> is_out_of_memory(RuntimeError("CUDA out of memory. Tried to allocate 2 GiB"))
    True
    >>> is_out_of_memory(ValueError("out of range"))
    False
    """
    if type(exc).__name__ == "OutOfMemoryError":
        return True
    return isinstance(exc, (RuntimeError, MemoryError)) and (
        "out of memory" in str(exc).lower() or isinstance(exc, MemoryError)
    )


@dataclass
class AdaptiveBudget:
    """A token budget that halves on out-of-memory errors (and never grows back by itself).

    Parameters
    ----------
    tokens : int
        Current budget.
    minimum : int, default 16
        The budget never drops below this.

    Examples
    --------
    >>> b = AdaptiveBudget(1000)
    >>> b.shrink(800), b.tokens
    (True, 400)
    """

    tokens: int
    minimum: int = 16
    shrinks: int = field(default=0)

    def shrink(self, failed_cost: int) -> bool:
        """Lower the budget below a failed batch's cost; False when it cannot go lower."""
        target = max(self.minimum, min(self.tokens, failed_cost) // 2)
        if target >= failed_cost:
            return False
        self.tokens = target
        self.shrinks += 1
        return True


@dataclass(frozen=True)
class Planned(Generic[B]):
    """A planned batch as :func:`run_with_backoff` sees it."""

    batch: B
    jobs: tuple[int, ...]
    cost: int
    rows: int


def run_with_backoff(
    jobs: Sequence[int],
    *,
    plan: Callable[[Sequence[int], int], list[Planned[B]]],
    execute: Callable[[B], T],
    budget: AdaptiveBudget,
    done: Callable[[int], bool] = lambda job: False,
    on_oom: Callable[[], None] = lambda: None,
) -> Iterator[tuple[B, T]]:
    """Run planned batches in order; on out-of-memory, halve the budget and re-plan the rest.

    Parameters
    ----------
    jobs : sequence of int
        All jobs, including those already done: the plan is made over all of
        them so that a resumed run rebuilds exactly the batches of the first.
    plan : callable
        ``plan(jobs, budget_tokens)`` returns :class:`Planned` batches.
    execute : callable
        Runs one batch. Raising an out-of-memory error (:func:`is_out_of_memory`)
        triggers back-off; any other error propagates.
    budget : AdaptiveBudget
    done : callable, optional
        Batches all of whose jobs are done are skipped.
    on_oom : callable, optional
        Called after an out-of-memory error, e.g. to empty the CUDA cache.

    Yields
    ------
    (batch, result) pairs, in plan order.

    Raises
    ------
    BackendError
        A single-row batch still runs out of memory.
    """
    queue = list(plan(list(jobs), budget.tokens))
    pos = 0
    while pos < len(queue):
        item = queue[pos]
        if item.jobs and all(done(j) for j in item.jobs):
            pos += 1
            continue
        try:
            result = execute(item.batch)
        except Exception as exc:
            if not is_out_of_memory(exc):
                raise
            on_oom()
            old = budget.tokens
            if item.rows <= 1 or not budget.shrink(item.cost):
                raise BackendError(
                    f"out of memory on a batch of {item.rows} row(s) and {item.cost} tokens that cannot be split "
                    f"further (batch_tokens is down to {budget.tokens}). Use a smaller model or dtype, shorter "
                    "prompts, or a device with more memory"
                ) from exc
            log.info(
                "out of memory on a %d-token batch; batch_tokens %d -> %d, re-planning", item.cost, old, budget.tokens
            )
            rest: list[int] = []
            seen: set[int] = set()
            for later in queue[pos:]:
                for j in later.jobs:
                    if j not in seen:
                        seen.add(j)
                        rest.append(j)
            queue = queue[:pos] + list(plan(rest, budget.tokens))
            continue
        pos += 1
        yield item.batch, result
