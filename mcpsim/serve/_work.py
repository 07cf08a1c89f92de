"""CPU-bound work off the event loop, a few threads at a time.

Creating, grading, recording, snapshotting and forking episodes is pure Python and SQLite: under
the GIL, more worker threads do not run it faster, and dozens of them (anyio's default limiter
allows 40) contending for the GIL cost more CPU than the work itself. Measured with the in-process
runner (3 sweeps): episodes per CPU-second at concurrency 64 and 256 were about 68% of concurrency
1's with anyio's default, 93-96% with one thread. The event loop stays free either way (tool calls run on it).

On a server (many tenants) grading runs in a lane of its own ("grade"), so a long grade (a
stalled one is cut off by the grader's own timeout) never holds up creating, deleting, reaping or
snapshotting episodes, which share the other lane ("work"); two lanes mean two threads that may
contend, which the benchmarks show as a somewhat lower rate at high concurrency over HTTP. The
in-process runner (one tenant: a run) puts all of its work in one lane.

No work run here waits for other work run here (a token holder waits at most for an episode's or
the manager's lock, which the event loop or another token holder releases), so the limit cannot
deadlock. Waits on events or other threads do not belong here: they would hold a token meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, TypeVar

import anyio
import anyio.to_thread
from anyio.lowlevel import RunVar

T = TypeVar("T")

WORK_THREADS = 1  # worker threads per lane, per event loop
Lane = Literal["work", "grade"]  # grading has a lane of its own: a long grade never holds up a create or a delete
_LIMITERS: RunVar[dict[str, anyio.CapacityLimiter]] = RunVar("mcpsim_work_limiters")


def work_limiter(lane: Lane = "work") -> anyio.CapacityLimiter:
    """This event loop's limiter for a lane of work (made on first use: a limiter belongs to one loop)."""
    try:
        limiters = _LIMITERS.get()
    except LookupError:
        limiters = {}
        _LIMITERS.set(limiters)
    limiter = limiters.get(lane)
    if limiter is None:
        limiter = limiters[lane] = anyio.CapacityLimiter(WORK_THREADS)
    return limiter


async def off_the_loop(fn: Callable[[], T], *, lane: Lane = "work") -> T:
    """`fn()` in a worker thread, at most WORK_THREADS at a time per lane in this event loop."""
    return await anyio.to_thread.run_sync(fn, limiter=work_limiter(lane))
