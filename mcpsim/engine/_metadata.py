"""An episode's own records in its database, beside the world's rows: its clock and call counter,
the flags (simulator bugs), the `ended` freeze and the stored verdict; and its SQL console (the
world's tables, one write statement outside any tool, read-only queries). Functions of the
episode's connection: the episode holds its lock around each call.

Flags, the freeze and the verdict live in the episode's database, like everything else, so a
snapshot, a restore or a fork keeps them: a restored flagged episode never passes."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Any

from sqlalchemy import Table

from mcpsim.engine import _store as store
from mcpsim.world import World


def clock(conn: sqlite3.Connection) -> datetime:
    clock: datetime = store.meta_value(conn, "clock")
    return clock


def calls(conn: sqlite3.Connection) -> int:
    calls: int = store.meta_value(conn, "call_seq")
    return calls


def end(conn: sqlite3.Connection) -> None:
    """Freeze the episode: from now on write tools are refused, reads still answer."""
    store.write_meta(conn, {"ended": True})


def is_ended(conn: sqlite3.Connection) -> bool:
    return bool(store.meta_value(conn, "ended"))


def flags(conn: sqlite3.Connection) -> list[str]:
    """Why this episode must not be graded as a pass (simulator bugs), oldest first."""
    return list(store.meta_value(conn, "flags"))


def add_flag(conn: sqlite3.Connection, reason: str) -> None:
    """Record a simulator bug (the caller holds the lock; outside the call's transaction)."""
    store.write_meta(conn, {"flags": [*store.meta_value(conn, "flags"), reason]})


def verdict(conn: sqlite3.Connection) -> dict[str, Any] | None:
    """The verdict of the latest grading as stored (JSON), if graded."""
    verdict: dict[str, Any] | None = store.meta_value(conn, "verdict")
    return verdict


def store_verdict(conn: sqlite3.Connection, value: dict[str, Any] | None) -> None:
    store.write_meta(conn, {"verdict": value})


# -- the SQL console -------------------------------------------------------------------------


def world_table(world: World, name: str) -> Table:
    try:
        return world.metadata.tables[name]
    except KeyError:
        raise ValueError(f"world {world.name} has no table {name!r}") from None


def dump_tables(
    conn: sqlite3.Connection, world: World, names: list[str] | None, limit: int | None
) -> dict[str, list[dict[str, Any]]]:
    """The world's tables (those in `names`, if given), each as its rows (at most `limit`)."""
    return {
        t.name: store.dump_table(conn, t, limit)
        for t in store.world_tables(world.metadata)
        if names is None or t.name in names
    }


def edit(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> int:
    """Run one write statement outside any tool; returns the number of rows it changed. Logged
    like a call's changes, under call number 0."""
    saved = store.meta_value(conn, "call_seq")
    conn.execute("BEGIN")
    try:
        store.write_meta(conn, {"call_seq": 0})
        count = conn.execute(sql, tuple(params)).rowcount
        store.write_meta(conn, {"call_seq": saved})
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return count


def query(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...] | dict[str, Any] = ()) -> list[dict[str, Any]]:
    """Read-only SQL over the episode's database."""
    conn.execute("PRAGMA query_only = ON")
    try:
        cur = conn.execute(sql, params)
        names = [d[0] for d in cur.description or ()]
        return [dict(zip(names, row, strict=True)) for row in cur]
    finally:
        conn.execute("PRAGMA query_only = OFF")
