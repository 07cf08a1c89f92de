"""Signed snapshots and trustless restore.

An episode's snapshot (`GET /episodes/{id}/snapshot`) is its SQLite database followed by a
trailer that authenticates it:

    <database bytes> <claims: UTF-8 JSON> <claims length: 4 bytes, big-endian> <HMAC: 32 bytes> b"MCPSIMS1"

The claims name what the database holds and what grading depends on: `world`, `world_version`,
`task`, `ended`, `flags`, `seed`, `scale`, and the database's `sha256` and size. The HMAC is
HMAC-SHA256(server key, b"mcpsim-snapshot-v1\\0" + claims), so it covers the content (through
its digest) together with the flags, the freeze, the task and the world version. The server's
key comes from `mcpsim serve --snapshot-key` / `MCPSIM_SNAPSHOT_KEY`; without one, a key is
generated per process (snapshots then restore only on the server that made them).

SQLite ignores bytes past the end of the database its header declares, so a signed snapshot
still opens as a plain database (`sqlite3 snap.sqlite`, `mcpsim verify --snapshot`); `split`
gives the database alone.

Restoring from bytes an untrusted client uploaded (`load_untrusted`) checks, before SQLite parses
anything of the upload: the trailer, the HMAC, the digest of the database. Then, over the
database: exactly the world's schema (its tables, columns and indexes, mcpsim's bookkeeping
tables and change-capture triggers, nothing else: no extra trigger, view or table; compared with
`sqlite_master` of a template built from the world's own metadata), UTF-8, the claims equal to
the database's metadata, the world and its version equal to the server's. The episode is then
re-stamped (`restamped`): its rows are copied into a new database built from the server's own DDL
and metadata, so nothing of the upload but its rows survives. Any failure is a `SnapshotError` with
the reason (the control plane answers 422).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import sqlite3
import struct
import threading
from collections.abc import Callable
from functools import cache
from typing import Any

from mcpsim.engine import _store as store
from mcpsim.engine._episode import Episode
from mcpsim.engine._templates import engine_for
from mcpsim.world import World

MAGIC = b"MCPSIMS1"
_DOMAIN = b"mcpsim-snapshot-v1\0"
_MAC_BYTES = 32
_LEN = struct.Struct(">I")
_TAIL = _LEN.size + _MAC_BYTES + len(MAGIC)
MAX_CLAIMS_BYTES = 1024 * 1024
MIN_KEY_CHARS = 16
KEY_ENV = "MCPSIM_SNAPSHOT_KEY"


class SnapshotError(ValueError):
    """An uploaded snapshot that must not be restored; the message says why."""


# -- the key ------------------------------------------------------------------------------------


@cache
def _generated_key() -> bytes:
    return secrets.token_bytes(32)


_KEY_LOCK = threading.Lock()


def process_key() -> bytes:
    """This process's key when the operator gave none: restores work within the process only.
    Made once, under a lock: the server signs and restores in worker threads."""
    with _KEY_LOCK:
        return _generated_key()


def snapshot_key(text: str | bytes | None = None) -> bytes:
    """The signing key: `text` (e.g. --snapshot-key), else $MCPSIM_SNAPSHOT_KEY, else the process's
    generated key. A configured key must have at least MIN_KEY_CHARS characters."""
    if text is None:
        text = os.environ.get(KEY_ENV) or None
    if text is None:
        return process_key()
    key = text.encode() if isinstance(text, str) else bytes(text)
    if len(key) < MIN_KEY_CHARS:
        raise ValueError(f"a snapshot key needs at least {MIN_KEY_CHARS} characters")
    return key


# -- signing ------------------------------------------------------------------------------------


def _mac(key: bytes, claims: bytes) -> bytes:
    return hmac.new(key, _DOMAIN + claims, hashlib.sha256).digest()


def claims_of(db: bytes) -> dict[str, Any]:
    """What a signature vouches for, read from a (trusted) database's metadata."""
    conn = store.connect(db)
    try:
        meta = store.read_meta(conn)
    finally:
        conn.close()
    return {"format": 1, **_claimed(meta), "sha256": hashlib.sha256(db).hexdigest(), "bytes": len(db)}


def _claimed(meta: store.EpisodeMeta) -> dict[str, Any]:
    """The labels of an episode a signature vouches for, as they are signed."""
    return {
        "world": meta.world,
        "world_version": meta.version,
        "task": meta.task,
        "ended": meta.ended,
        "flags": list(meta.flags),
        "seed": meta.seed,
        "scale": meta.scale,
    }


def sign(data: bytes, key: bytes) -> bytes:
    """A database (from `Episode.snapshot`, which the server trusts) with its signed trailer."""
    db = split(data)[0]
    claims = json.dumps(claims_of(db), sort_keys=True, separators=(",", ":")).encode()
    return b"".join((db, claims, _LEN.pack(len(claims)), _mac(key, claims), MAGIC))


def sign_episode(episode: Episode, key: bytes | None = None) -> bytes:
    """The episode's snapshot signed with `key` (None: this process's generated key)."""
    return sign(episode.snapshot(), key if key is not None else process_key())


def split(data: bytes) -> tuple[bytes, bytes | None, bytes | None]:
    """(database, claims, mac) of a signed snapshot; (data, None, None) for one without a trailer."""
    if len(data) < _TAIL or not data.endswith(MAGIC):
        return data, None, None
    end = len(data) - _TAIL
    (size,) = _LEN.unpack_from(data, end)
    if size > MAX_CLAIMS_BYTES or size > end:
        return data, None, None
    mac = data[end + _LEN.size : end + _LEN.size + _MAC_BYTES]
    return data[: end - size], data[end - size : end], mac


def verify(data: bytes, key: bytes) -> tuple[bytes, dict[str, Any]]:
    """The database and its claims, once the trailer's HMAC and the database's digest check out."""
    db, claims_bytes, mac = split(data)
    if claims_bytes is None or mac is None:
        raise SnapshotError(
            "not a signed mcpsim snapshot (no signature trailer): only snapshots from "
            "GET /episodes/{id}/snapshot of a server with the same snapshot key can be restored"
        )
    if not hmac.compare_digest(mac, _mac(key, claims_bytes)):
        raise SnapshotError(
            "the snapshot's signature does not match: it was signed with another key (set the "
            "same --snapshot-key / MCPSIM_SNAPSHOT_KEY on both servers) or its signed labels "
            "were edited"
        )
    try:
        claims = json.loads(claims_bytes)
    except ValueError:  # signed by us, so this cannot happen short of a leaked key
        raise SnapshotError("the snapshot's signed labels are unreadable") from None
    if not isinstance(claims, dict) or claims.get("format") != 1:
        raise SnapshotError("the snapshot's signature format is not one this server reads")
    if len(db) != claims.get("bytes") or not hmac.compare_digest(
        hashlib.sha256(db).hexdigest(), str(claims.get("sha256"))
    ):
        raise SnapshotError(
            f"the database was edited after it was signed (signed as world {claims.get('world')!r}, task "
            f"{claims.get('task')!r}, ended {claims.get('ended')}, {len(claims.get('flags') or [])} flags): "
            "its content no longer matches the signature"
        )
    return db, claims


# -- the schema ---------------------------------------------------------------------------------

_SchemaRow = tuple[str, str, str, str | None]
_schema_lock = threading.Lock()
_schemas: dict[tuple[str, str], frozenset[_SchemaRow]] = {}


def _schema(conn: sqlite3.Connection) -> frozenset[_SchemaRow]:
    return frozenset(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"))


def reference_schema(world: World) -> frozenset[_SchemaRow]:
    """`sqlite_master` of an empty template of `world`: its tables, indexes, mcpsim's bookkeeping
    tables and change-capture triggers (built once per world version)."""
    key = (world.name, world.version)
    with _schema_lock:
        if key not in _schemas:
            conn = store.connect()
            engine = engine_for(conn)
            try:
                world.metadata.create_all(engine)
                store.install_bookkeeping(conn, world.metadata, None)
                _schemas[key] = _schema(conn)
            finally:
                engine.dispose()
                conn.close()
        return _schemas[key]


def check_schema(world: World, conn: sqlite3.Connection) -> None:
    """Exactly the world's schema, nothing more or less (SnapshotError naming the difference)."""
    encoding = conn.execute("PRAGMA encoding").fetchone()[0]
    if encoding != "UTF-8":
        raise SnapshotError(f"the database's text encoding is {encoding}, not UTF-8")
    got, want = _schema(conn), reference_schema(world)
    if got == want:
        return
    extra = sorted({(t, n) for t, n, _, _ in got - want})
    missing = sorted({(t, n) for t, n, _, _ in want - got})
    parts = []
    if extra:
        parts.append("not in the world's schema (or changed): " + ", ".join(f"{t} {n}" for t, n in extra[:10]))
    if missing:
        parts.append("missing (or changed): " + ", ".join(f"{t} {n}" for t, n in missing[:10]))
    raise SnapshotError(f"the database's schema is not world {world.name}'s: " + "; ".join(parts))


# -- restore ------------------------------------------------------------------------------------

_CLAIMED_META = {"world": "world", "world_version": "version", "task": "task", "seed": "seed", "scale": "scale"}


def load_untrusted(
    world: World | Callable[[str], World], data: bytes, key: bytes | None = None, *, id: str = "default"
) -> Episode:
    """An episode from uploaded bytes, refused (SnapshotError) unless this server signed them with
    `key` (None: this process's generated key) and they hold exactly an episode of `world` (or of
    the world `world(name)` returns, LookupError for a world this server does not have) at the
    version this server runs."""
    db, claims = verify(data, key if key is not None else process_key())
    if not isinstance(world, World):
        world = world(str(claims.get("world")))
    if claims.get("world") != world.name:
        raise SnapshotError(f"the snapshot is an episode of world {claims.get('world')!r}, not {world.name!r}")
    if claims.get("world_version") != world.version:
        raise SnapshotError(
            f"the snapshot was taken of {world.name} version {claims.get('world_version')}; this "
            f"server runs version {world.version} (restore it on a server with that version)"
        )
    conn = store.connect(db)
    try:
        check_schema(world, conn)
        held = _claimed(store.read_meta(conn))
        for claim, field in _CLAIMED_META.items():
            if held[claim] != claims.get(claim):
                raise SnapshotError(f"the database's {field} {held[claim]!r} is not the signed {claims.get(claim)!r}")
        if held["ended"] != claims.get("ended") or held["flags"] != claims.get("flags"):
            raise SnapshotError("the database's freeze or flags are not the signed ones")
        rebuilt = restamped(world, conn)
    except (sqlite3.Error, ValueError, KeyError, TypeError) as exc:
        raise SnapshotError(f"not a usable mcpsim episode of {world.name}: {exc}") from None
    finally:
        conn.close()
    return Episode(world, rebuilt, id=id)


def _full_text_indexes(tables: list[tuple[str, str | None]]) -> list[str]:
    """The world's FTS5 tables (a full-text index over its rows, such as the research world's)."""
    return [
        name
        for name, sql in tables
        if re.match(r"\s*CREATE\s+VIRTUAL\s+TABLE\b.*\bUSING\s+fts5\b", sql or "", re.I | re.S)
    ]


def _rebuilt(table: str, indexes: list[str]) -> bool:
    """Whether `table` is an FTS5 table or one of its shadow tables other than its content (which
    holds rows): those are rebuilt from the rows, not copied."""
    return any(table == index or (table.startswith(f"{index}_") and table != f"{index}_content") for index in indexes)


def restamped(world: World, upload: sqlite3.Connection) -> sqlite3.Connection:
    """A new database built from the server's own DDL for `world` (tables, indexes, bookkeeping
    tables, change-capture triggers), holding the upload's rows and nothing else of it: no page,
    header field (user_version, application_id, page size, auto-vacuum), free page or schema text
    of the upload survives, and the metadata names the server's world and version. Rows keep their
    rowids, so the state hash and every change-log sequence number are the upload's. A full-text
    (FTS5) index is rebuilt from the copied rows, never taken from the upload."""
    conn = store.connect()
    try:
        world.metadata.create_all(engine_for(conn))  # not disposed: that would close `conn`
        store.install_bookkeeping(conn, world.metadata, None)
        triggers = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall()
        for name, _ in triggers:  # the copy must not log itself as changes
            conn.execute(f'DROP TRIGGER "{name}"')
        tables = conn.execute(  # sqlite_sequence last: copying rows into AUTOINCREMENT tables writes it
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name = 'sqlite_sequence', name"
        ).fetchall()
        indexes = _full_text_indexes(tables)
        conn.execute("PRAGMA foreign_keys = OFF")  # rows arrive table by table
        conn.execute("BEGIN")
        for table, sql in tables:
            if _rebuilt(table, indexes):
                continue
            columns = [row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')]
            keyed = "WITHOUT ROWID" not in (sql or "").upper() and table != "sqlite_sequence"
            names = (["rowid"] if keyed else []) + [f'"{c}"' for c in columns]
            select = f'SELECT {", ".join(names)} FROM "{table}"'
            insert = f'INSERT INTO "{table}" ({", ".join(names)}) VALUES ({", ".join("?" * len(names))})'
            if table == "sqlite_sequence":  # the copies above already wrote it; the upload's counters win
                conn.execute("DELETE FROM sqlite_sequence")
            conn.executemany(insert, upload.execute(select))
        for index in indexes:  # from the rows just copied, never from the upload's index pages
            conn.execute(f'INSERT INTO "{index}"("{index}") VALUES (\'rebuild\')')
        conn.execute("COMMIT")
        conn.execute("PRAGMA foreign_keys = ON")
        for _, sql in triggers:
            conn.execute(sql)
        # Re-stamped from the server's own metadata, not the upload's.
        store.write_meta(conn, {"world": world.name, "version": world.version})
    except BaseException:
        conn.close()
        raise
    return conn
