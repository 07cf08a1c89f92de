"""Templates: a world's seeded database, built once per (world version, seed, scale) and cloned
for every episode. Generating data costs seconds; cloning bytes costs about a millisecond."""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path

import structlog
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.pool import StaticPool
from sqlmodel import Session, create_engine

from mcpsim import sqlite
from mcpsim.seeding import IdGenerator, SeedContext, derive_seed
from mcpsim.world import World

log = structlog.get_logger("mcpsim.templates")


def engine_for(conn: object) -> Engine:
    """A SQLAlchemy engine over one existing sqlite3 connection. The driver is left in
    autocommit mode and SQLAlchemy emits BEGIN itself, so a rollback undoes every statement
    of a call, SELECTs and trigger writes included (the pysqlite recipe in SQLAlchemy's docs)."""
    engine = create_engine("sqlite://", creator=lambda: conn, poolclass=StaticPool)

    @event.listens_for(engine, "begin")
    def _begin(connection: object) -> None:
        connection.exec_driver_sql("BEGIN")  # type: ignore[attr-defined]

    return engine


def build_template(world: World, seed: int, scale: str) -> bytes:
    """Generate a world's data from scratch and return the database bytes."""
    params = world.scale_params(scale)
    conn = sqlite.connect()
    engine = engine_for(conn)
    world.metadata.create_all(engine)
    ids = IdGenerator(seed)
    with Session(engine) as session:
        world.seed(SeedContext(session=session, seed=seed, scale=scale, params=params, now=world.epoch, ids=ids))
        session.commit()
    sqlite.install_bookkeeping(
        conn,
        world.metadata,
        {"world": world.name, "version": world.version, "seed": seed, "scale": scale,
         "call_seq": 0, "clock": world.epoch.isoformat(), "ids": ids.counters},
    )
    sqlite.rebase(conn, world.metadata)
    data = conn.serialize()
    engine.dispose()
    conn.close()
    return data


def add_edge_data(world: World, data: bytes, seed: int, scale: str) -> bytes:
    """A copy of a template after the world's edge-case hook (unicode, long strings, empty
    optional fields), with its own seeded sources."""
    conn = sqlite.connect(data)
    engine = engine_for(conn)
    meta = sqlite.read_meta(conn)
    ids = IdGenerator(seed, meta["ids"])
    with Session(engine) as session:
        world.add_edge_data(SeedContext(session=session, seed=derive_seed(seed, "edge"), scale=scale,
                                        params=world.scale_params(scale), now=world.epoch, ids=ids))
        session.commit()
    sqlite.write_meta(conn, {"ids": ids.counters, "edge_data": True})
    sqlite.rebase(conn, world.metadata)  # the hook's writes are the base, not an episode's changes
    out = conn.serialize()
    engine.dispose()
    conn.close()
    return out


class TemplateCache:
    """Template bytes per (world, version, seed, scale): built at most once per process, and kept
    on disk under `cache_dir` when one is given (written atomically, keyed by world version, so
    a changed world never reuses stale data). Safe to call from many threads."""

    def __init__(self, cache_dir: Path | str | None = None) -> None:
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.builds = 0  # how many templates this cache generated (not loaded from disk)
        self._bytes: dict[tuple[object, ...], bytes] = {}
        self._locks: dict[tuple[object, ...], threading.Lock] = {}
        self._guard = threading.Lock()

    def get(self, world: World, seed: int, scale: str, *, edge_data: bool = False) -> bytes:
        """The template; with `edge_data`, the same world after its edge-case hook ran."""
        world.scale_params(scale)  # a clear error for an unknown scale, before any lock
        if edge_data and world.has_edge_data:
            return self.get_or_build(("edge", world.name, world.version, seed, scale),
                                     lambda: add_edge_data(world, self.get(world, seed, scale), seed, scale))
        return self.get_or_build(("world", world.name, world.version, seed, scale),
                                 lambda: self._load_or_build(world, seed, scale))

    def get_or_build(self, key: tuple[object, ...], build: Callable[[], bytes]) -> bytes:
        """Database bytes under `key`, built by `build` at most once per process, even when
        many threads ask at once (task templates use this too)."""
        if (data := self._bytes.get(key)) is not None:
            return data
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if (data := self._bytes.get(key)) is None:
                data = build()
                self._bytes[key] = data
        return data

    def _path(self, world: World, seed: int, scale: str) -> Path | None:
        if self.cache_dir is None:
            return None
        return self.cache_dir / f"{world.name}-{world.version}-f{sqlite.FORMAT}-{scale}-{seed}.sqlite"

    def _load_or_build(self, world: World, seed: int, scale: str) -> bytes:
        path = self._path(world, seed, scale)
        if path is not None and path.exists():
            return path.read_bytes()
        started = time.perf_counter()
        data = build_template(world, seed, scale)
        self.builds += 1
        log.info("template built", world=world.name, seed=seed, scale=scale, bytes=len(data),
                 seconds=round(time.perf_counter() - started, 3))
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        return data


@cache
def process_templates() -> TemplateCache:
    """The process's shared cache, created on first use (in memory; the CLI adds a disk cache)."""
    return TemplateCache(os.environ.get("MCPSIM_CACHE_DIR") or None)
