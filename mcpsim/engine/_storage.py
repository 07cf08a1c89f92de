"""An episode's storage limit: a cap on its database's size, enforced by SQLite itself
(`PRAGMA max_page_count`), so a tool writing as much as it may cannot grow an episode (and its
server's memory) without bound.

A call of a write tool may grow the database up to the limit (`tight`: SQLite refuses the page
past it, the call's transaction is rolled back and the agent reads `FULL_MESSAGE`). Above the
limit lies a small reserve (`wide`, the cap between calls) for what still has to be written when
the limit is reached: read-only calls' transcript entries (an agent can still look around), and
the records of calls that changed nothing (a refused or failed call's entry, at most a few KB
each), which are dropped once the reserve is full too rather than failing the call. The
operator's own writes (task setup, the freeze, the stored verdict, the fault profile) are never
refused (`lifted`).

SQLite forgets `max_page_count` when a connection is opened or deserialized, so the episode's
connection applies the limit again each time it is (re)built (`mcpsim.engine._parking`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

FULL_MESSAGE = "the episode's storage limit of {limit} bytes is reached; nothing was changed"
RESERVE_MAX = 1024 * 1024  # the reserve above the limit: a sixteenth of it, at most 1 MiB...
RESERVE_MIN_PAGES = 8  # ...and at least 8 pages
UNLIMITED_PAGES = 4_294_967_294  # SQLite's largest max_page_count


def is_full(exc: BaseException) -> bool:
    """Whether an exception is SQLite's "database or disk is full" (SQLITE_FULL), raised by
    sqlite3 or wrapped by SQLAlchemy (its `orig`) or another exception (its cause)."""
    seen: BaseException | None = exc
    for _ in range(8):  # a short chain: orig, __cause__
        if seen is None:
            return False
        if (
            isinstance(seen, sqlite3.OperationalError)
            and getattr(seen, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL
        ):
            return True
        seen = getattr(seen, "orig", None) or seen.__cause__
    return False


@dataclass(frozen=True)
class StorageLimit:
    """At most `max_bytes` of database for an episode whose pages are `page_size` bytes."""

    max_bytes: int
    page_size: int

    def __post_init__(self) -> None:
        if isinstance(self.max_bytes, bool) or not isinstance(self.max_bytes, int) or self.max_bytes < 1:
            raise ValueError(f"an episode's storage limit must be a positive number of bytes, not {self.max_bytes!r}")

    @property
    def pages(self) -> int:
        """The pages a tool call may fill (at least one: SQLite needs one to exist)."""
        return max(1, self.max_bytes // self.page_size)

    @property
    def reserve_pages(self) -> int:
        return max(RESERVE_MIN_PAGES, min(self.max_bytes // 16, RESERVE_MAX) // self.page_size)

    @property
    def message(self) -> str:
        return FULL_MESSAGE.format(limit=self.max_bytes)

    def tight(self, conn: sqlite3.Connection) -> None:
        """For a tool call: the limit itself. SQLite keeps a database already past it at its
        size (it never lowers the cap below the page count), so such a call can only reuse free
        pages."""
        conn.execute(f"PRAGMA max_page_count = {self.pages}")

    def wide(self, conn: sqlite3.Connection) -> None:
        """Between calls: the limit and its reserve (for the records of calls that changed nothing)."""
        conn.execute(f"PRAGMA max_page_count = {self.pages + self.reserve_pages}")


@contextmanager
def lifted(conn: sqlite3.Connection, limit: StorageLimit | None) -> Iterator[None]:
    """No limit for the block (the operator's writes), the wide one after it."""
    if limit is None:
        yield
        return
    conn.execute(f"PRAGMA max_page_count = {UNLIMITED_PAGES}")
    try:
        yield
    finally:
        limit.wide(conn)
