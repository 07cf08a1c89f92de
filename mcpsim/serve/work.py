"""CPU-bound work off the event loop, a few threads at a time.

Creating, grading, recording, snapshotting and forking episodes is pure Python and SQLite: under
the GIL, more worker threads do not run it faster, and dozens of them (anyio's default limiter
allows 40) contending for the GIL cost more CPU than the work itself. Measured with the in-process
runner: a graded episode's CPU at concurrency 64 and 256 was about 30% above concurrency 1 with
anyio's default, 4-7% with one thread. The event loop stays free either way (tool calls run on it).

No work run here waits for other work run here (a token holder waits at most for an episode's or
the manager's lock, which the event loop or another token holder releases), so the limit cannot
deadlock. Waits on events or other threads do not belong here: they would hold a token meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.to_thread
from anyio.lowlevel import RunVar

T = TypeVar("T")

WORK_THREADS = 1  # worker threads for this work, per event loop
_LIMITER: RunVar[anyio.CapacityLimiter] = RunVar("mcpsim_work_limiter")


def work_limiter() -> anyio.CapacityLimiter:
    """This event loop's limiter for the work (made on first use: a limiter belongs to one loop)."""
    try:
        return _LIMITER.get()
    except LookupError:
        limiter = anyio.CapacityLimiter(WORK_THREADS)
        _LIMITER.set(limiter)
        return limiter


async def off_the_loop(fn: Callable[[], T]) -> T:
    """`fn()` in a worker thread, at most WORK_THREADS at a time in this event loop."""
    return await anyio.to_thread.run_sync(fn, limiter=work_limiter())
