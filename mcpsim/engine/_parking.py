"""An episode's database connection and the lock every operation on it takes
(`ParkableConnection`): open while the episode is in use, parked while it is idle (`Parked`: the
pages that differ from its base), closed for good with the episode (`EpisodeClosed`)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Concatenate, ParamSpec, TypeVar

from mcpsim.engine import _store as store
from mcpsim.engine._storage import UNLIMITED_PAGES, StorageLimit, lifted
from mcpsim.engine._transaction import CallTransaction

P = ParamSpec("P")
T = TypeVar("T")


class EpisodeClosed(LookupError):
    """The episode was closed (deleted, expired, or its server shut down) and does no more work.
    A LookupError: to a caller it is an episode that no longer exists."""

    def __init__(self, episode_id: str, reason: str = "closed") -> None:
        super().__init__(f"episode {episode_id} was {reason}; it no longer exists")
        self.episode_id, self.reason = episode_id, reason


def page_size(data: bytes) -> int:
    """The page size a database's header declares (bytes 16-17, big-endian; 1 means 65536)."""
    size = int.from_bytes(data[16:18], "big")
    return 65536 if size == 1 else size


def count_calls(conn: sqlite3.Connection) -> tuple[int, int]:
    """How many calls the transcript holds, and how many of them failed."""
    counts = f"SELECT COUNT(*), COUNT(*) - COALESCE(SUM(ok), 0) FROM {store.CALLS}"
    total, failed = conn.execute(counts).fetchone()
    return int(total), int(failed)


@dataclass(frozen=True)
class Parked:
    """An idle episode's database kept as the pages that differ from its base (the template it
    was cloned from, shared by every episode of that template): kilobytes for an episode that
    made a few calls, instead of a private copy of the whole template. `restore` rebuilds the
    same bytes, so the rebuilt episode is the same database: same rows, rowids, change log,
    transcript, clock and counters, hence the same state hash and the same answers."""

    base: bytes
    size: int  # bytes of the whole database
    page_size: int
    pages: dict[int, bytes]  # offset -> the page at that offset, where it differs from `base`

    @classmethod
    def of(cls, data: bytes, base: bytes, page_size: int) -> Parked:
        pages = {
            offset: data[offset : offset + page_size]
            for offset in range(0, len(data), page_size)
            if data[offset : offset + page_size] != base[offset : offset + page_size]
        }
        return cls(base, len(data), page_size, pages)

    @property
    def held_bytes(self) -> int:
        """What parking keeps of this episode's own (its pages; the base is shared)."""
        return len(self.pages) * self.page_size

    def restore(self) -> bytearray:
        data = bytearray(self.base[: self.size])
        data.extend(bytes(self.size - len(data)))  # pages past the base's end (all in `pages`)
        for offset, page in self.pages.items():
            data[offset : offset + len(page)] = page
        return data


class ParkableConnection:
    """An episode's sqlite3 connection, and the lock every operation on it takes (`open`).

    An idle episode can be parked (`park`): it keeps only the pages that differ from its base,
    the template bytes it was cloned from, and its next operation rebuilds the connection from
    them. Closed (`close`), it does no more work: every operation raises `EpisodeClosed`. The
    SQLAlchemy connection of the episode's `CallTransaction` wraps this one: it closes with it."""

    def __init__(
        self, episode_id: str, conn: sqlite3.Connection, base: bytes | None, transaction: CallTransaction
    ) -> None:
        self.episode_id = episode_id  # the episode's id (its host may give it another), for `EpisodeClosed`
        self.transaction = transaction
        self._conn: sqlite3.Connection | None = conn
        self.base = base  # the long-lived bytes the database was cloned from (parking keeps the difference)
        self.parked: Parked | None = None
        self._parked_summary: tuple[store.EpisodeMeta, tuple[int, int]] | None = None
        self._pinned = 0  # operations that span several locked sections: never parked meanwhile
        self._handler = False  # a progress handler is installed (grading): never parked meanwhile
        self.lock = threading.Lock()
        self.closed: str | None = None  # why the episode was closed (deleted, expired...), once it is
        if base is not None:  # read from the template's header: no query, so no schema parse yet
            self._page_size: int = page_size(base)  # fixed for a database
            self.size_bytes = len(base)  # its database's size (parked: the pages it keeps), kept current by `open`
        else:
            self._page_size = conn.execute("PRAGMA page_size").fetchone()[0]
            self.size_bytes = conn.execute("PRAGMA page_count").fetchone()[0] * self._page_size

    @property
    def conn(self) -> sqlite3.Connection:
        """The sqlite3 connection (rebuilt first if the episode was parked). Take the lock
        (`open`) to use it while other threads may."""
        if self._conn is None:
            if self.parked is None:
                raise EpisodeClosed(self.episode_id, self.closed or "closed")
            self._conn = store.connect(self.parked.restore())
            self.parked = None
            if self.limit is not None:  # a new connection starts without it
                self.limit.wide(self._conn)
        return self._conn

    @contextmanager
    def open(self) -> Iterator[None]:
        """Hold the episode's lock for one operation on its database, refusing a closed episode.
        Every use of `conn` outside the episode's `__init__` and `close` goes through this."""
        with self.lock:
            if self.closed is not None:
                raise EpisodeClosed(self.episode_id, self.closed)
            try:
                yield
            finally:  # one cheap pragma: the page count (the page size never changes)
                self.size_bytes = self.conn.execute("PRAGMA page_count").fetchone()[0] * self._page_size

    def apply(self, fn: Callable[Concatenate[sqlite3.Connection, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`fn(conn, *args, **kwargs)` as one operation on the database (under `open`)."""
        with self.open():
            return fn(self.conn, *args, **kwargs)

    @property
    def limit(self) -> StorageLimit | None:
        """The cap on the database's size (`limit_storage`), which the call transaction applies."""
        return self.transaction.limit

    def apply_lifted(self, fn: Callable[Concatenate[sqlite3.Connection, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`apply` without the storage limit: the operator's writes (setup, freeze, verdict)."""
        with self.open(), lifted(self.conn, self.limit):
            return fn(self.conn, *args, **kwargs)

    def limit_storage(self, max_bytes: int | None) -> None:
        """Cap the database at `max_bytes` (None: no cap) from now on (`mcpsim.engine._storage`)."""
        with self.open():
            self.transaction.limit = None if max_bytes is None else StorageLimit(max_bytes, self._page_size)
            if self.limit is not None:
                self.limit.wide(self.conn)
            else:
                self.conn.execute(f"PRAGMA max_page_count = {UNLIMITED_PAGES}")

    def park(self) -> bool:
        """Keep this idle episode as its pages that differ from its base and close its
        connection; its next operation rebuilds it. False (and nothing done) when it cannot be:
        it has no base (restored from foreign bytes), is in use, pinned, closed or parked."""
        if self.base is None or not self.lock.acquire(blocking=False):
            return False
        try:
            if self.closed is not None or self._conn is None or self._pinned or self._handler:
                return False
            # what listings read, kept so that a listing does not rebuild every parked episode
            self._parked_summary = (store.read_meta(self._conn), count_calls(self._conn))
            self.parked = Parked.of(self._conn.serialize(), self.base, self._page_size)
            self.disconnect()
            self.size_bytes = self.parked.held_bytes
            return True
        finally:
            self.lock.release()

    def parked_summary(self) -> tuple[store.EpisodeMeta, tuple[int, int]] | None:
        """A parked episode's metadata and call counts as of parking (it cannot change while
        parked), so listing episodes leaves them parked (takes the lock)."""
        with self.lock:
            if self.closed is not None:
                raise EpisodeClosed(self.episode_id, self.closed)
            return self._parked_summary if self.parked is not None and self._conn is None else None

    @contextmanager
    def pinned(self) -> Iterator[None]:
        """Keep the episode unparked for a while (grading: several operations, one progress handler)."""
        with self.lock:
            self._pinned += 1
        try:
            yield
        finally:
            with self.lock:
                self._pinned -= 1

    def set_progress_handler(self, handler: Callable[[], int] | None, n: int) -> None:
        """Install (or, with None, remove) a SQLite progress handler (the grader's work budget).
        Removing one from a closed episode is a no-op."""
        if handler is None and self.closed is not None:
            return
        with self.open():
            self.conn.set_progress_handler(handler, n)
            self._handler = handler is not None  # grading in progress: not parked meanwhile

    def close(self, reason: str) -> None:
        """Free the database, for good. Takes the episode's lock, so it waits for the operation in
        progress and a connection is never closed under a running statement (which crashed the
        process in SQLite); every later operation raises `EpisodeClosed` with `reason` ("deleted",
        "expired"...). Closing twice is harmless."""
        with self.lock:
            if self.closed is not None:
                return
            self.closed = reason
            self.disconnect()
            self.parked = None

    def reload(self, data: bytes) -> None:
        """Replace the database's content with `data` in place (the caller holds the lock). What
        the transaction kept of the old content goes: SQLite's changed-row count does not move on
        a deserialize, so the counters a call kept from its commit would otherwise be used again."""
        self.conn.deserialize(data)
        self.conn.execute("PRAGMA foreign_keys = ON")
        if self.limit is not None:  # deserializing forgets it
            self.limit.wide(self.conn)
        self.transaction.forget()

    def disconnect(self) -> None:
        """Close the connections (the caller holds the lock)."""
        self.transaction.close()  # its SQLAlchemy connection closes the sqlite3 connection too
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self.transaction.forget()
