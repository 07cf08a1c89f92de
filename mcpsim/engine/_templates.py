"""Templates: a world's seeded database, built once per (world version, seed, scale) and cloned
for every episode. Generating data costs seconds; cloning bytes costs about a millisecond."""

from __future__ import annotations

import os
import sqlite3
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from functools import cache, cached_property
from pathlib import Path

import structlog
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import NullPool, StaticPool
from sqlmodel import Session, create_engine

from mcpsim._sizes import DEFAULT_TEMPLATE_BYTES, format_size, parse_size  # noqa: F401 (re-exported)
from mcpsim.engine import _store as store
from mcpsim.world import IdGenerator, SeedContext, World, derive_seed

log = structlog.get_logger("mcpsim.engine._templates")

COMPILED_CACHE_SIZE = 5000  # compiled statements kept for all worlds' tools (SQLAlchemy's default: 500)


class _Pending(threading.local):
    conn: sqlite3.Connection | None = None


_pending = _Pending()  # the sqlite3 connection `orm_connection` is wrapping, for the shared engine's creator


def _take_pending() -> sqlite3.Connection:
    conn, _pending.conn = _pending.conn, None
    if conn is None:
        raise RuntimeError("the shared episode engine only wraps connections given to orm_connection()")
    return conn


# One engine for every episode of the process: one SQLite dialect (initialized once) and one
# compiled-statement cache, so a statement a tool runs is compiled once per process, not once per
# episode (an engine per episode compiled each ORM statement again, about 0.5 ms each, and kept
# its own copies). It owns no connections: `orm_connection` wraps an episode's own sqlite3 connection.
ENGINE: Engine = create_engine(
    "sqlite://", creator=_take_pending, poolclass=NullPool, query_cache_size=COMPILED_CACHE_SIZE
)


@event.listens_for(ENGINE, "begin")
def _begin(connection: Connection) -> None:
    # The driver is left in autocommit mode and SQLAlchemy emits BEGIN itself, so a rollback
    # undoes every statement of a call, SELECTs and trigger writes included (the pysqlite
    # recipe in SQLAlchemy's docs). Sent on the driver connection: no statement compiled. An
    # episode's call begins its transaction itself; SQLAlchemy then joins it.
    driver = connection.connection.driver_connection
    if not driver.in_transaction:  # type: ignore[union-attr]
        driver.execute("BEGIN")  # type: ignore[union-attr]


def engine_for(conn: object) -> Engine:
    """An engine of its own over one sqlite3 connection, for one-off work (DDL on a fresh
    database); disposing of it closes `conn`. Episodes and templates use `orm_connection`."""
    engine = create_engine("sqlite://", creator=lambda: conn, poolclass=StaticPool)
    event.listen(engine, "begin", _begin)
    return engine


def orm_connection(conn: sqlite3.Connection) -> Connection:
    """A SQLAlchemy connection over one existing sqlite3 connection, through the shared engine.
    Keep it as long as the sqlite3 connection: closing it closes that too."""
    _pending.conn = conn
    try:
        return ENGINE.connect()
    finally:
        _pending.conn = None


class Template(bytes):
    """Template bytes, kept by a `TemplateCache` and cloned by many episodes, which also keep them
    as the base their parked pages are relative to. Its metadata is read once (`meta`), so a
    clone runs no query when it is created."""

    @cached_property
    def meta(self) -> store.EpisodeMeta:
        conn = store.connect(self)
        try:
            return store.read_meta(conn)
        finally:
            conn.close()


def build_template(world: World, seed: int, scale: str) -> bytes:
    """Generate a world's data from scratch and return the database bytes."""
    params = world.scale_params(scale)
    conn = store.connect()
    connection = orm_connection(conn)
    world.metadata.create_all(connection)
    connection.commit()
    ids = IdGenerator(seed, formats=world.id_formats)
    with Session(bind=connection) as session:
        world.seed(SeedContext(session=session, seed=seed, scale=scale, params=params, now=world.epoch, ids=ids))
        session.commit()
    store.install_bookkeeping(
        conn,
        world.metadata,
        store.EpisodeMeta(
            world=world.name,
            version=world.version,
            seed=seed,
            scale=scale,
            call_seq=0,
            clock=world.epoch,
            ids=ids.counters,
        ),
    )
    store.rebase(conn, world.metadata)
    data = conn.serialize()
    connection.close()
    return data


def add_edge_data(world: World, data: bytes, seed: int, scale: str) -> bytes:
    """A copy of a template after the world's edge-case hook (unicode, long strings, empty
    optional fields), with its own seeded sources."""
    conn = store.connect(data)
    connection = orm_connection(conn)
    ids = IdGenerator(seed, store.meta_value(conn, "ids"), formats=world.id_formats)
    with Session(bind=connection) as session:
        world.add_edge_data(
            SeedContext(
                session=session,
                seed=derive_seed(seed, "edge"),
                scale=scale,
                params=world.scale_params(scale),
                now=world.epoch,
                ids=ids,
            )
        )
        session.commit()
    store.write_meta(conn, {"ids": ids.counters, "edge_data": True})
    store.rebase(conn, world.metadata)  # the hook's writes are the base, not an episode's changes
    out = conn.serialize()
    connection.close()
    return out


def _env_bytes(name: str, default: int | None) -> int | None:
    """A byte budget from the environment (`0` or `none`: unlimited)."""
    text = os.environ.get(name)
    if not text:
        return default
    if text.strip().lower() in ("0", "none", "unlimited"):
        return None
    return parse_size(text)


class TemplateCache:
    """Template bytes per (world, version, seed, scale): built at most once while cached, and kept
    on disk under `cache_dir` when one is given (written atomically, keyed by world version, so
    a changed world never reuses stale data). Safe to call from many threads.

    Memory is bounded by `max_bytes` (None: unbounded): past it, the least recently used templates
    are dropped from memory (a later request reloads them from disk or rebuilds them, with the
    same bytes). A template larger than the whole budget is served but not kept."""

    def __init__(self, cache_dir: Path | str | None = None, *, max_bytes: int | None = DEFAULT_TEMPLATE_BYTES) -> None:
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.max_bytes = max_bytes
        self.builds = 0  # how many templates this cache generated (not loaded from disk)
        self.evictions = 0  # how many templates the budget dropped from memory
        self._bytes: OrderedDict[tuple[object, ...], bytes] = OrderedDict()  # least recently used first
        self._size = 0
        self._locks: dict[tuple[object, ...], threading.Lock] = {}
        self._guard = threading.Lock()

    @property
    def size_bytes(self) -> int:
        """The bytes of the templates held in memory."""
        return self._size

    def set_max_bytes(self, max_bytes: int | None) -> None:
        """Change the budget, evicting at once what no longer fits."""
        with self._guard:
            self.max_bytes = max_bytes
            self._evict()

    def _cached(self, key: tuple[object, ...]) -> bytes | None:
        with self._guard:
            data = self._bytes.get(key)
            if data is not None:
                self._bytes.move_to_end(key)
            return data

    def _keep(self, key: tuple[object, ...], data: bytes) -> None:
        with self._guard:
            if self.max_bytes is not None and len(data) > self.max_bytes:
                log.warning(
                    "template larger than the template cache's budget; not kept in memory",
                    bytes=len(data),
                    max_bytes=self.max_bytes,
                )
                return
            if key not in self._bytes:
                self._bytes[key] = data
                self._size += len(data)
            self._evict()

    def _evict(self) -> None:
        """Drop least recently used templates until the budget holds (caller holds the guard)."""
        while self.max_bytes is not None and self._size > self.max_bytes and self._bytes:
            key, data = self._bytes.popitem(last=False)
            self._size -= len(data)
            self._locks.pop(key, None)
            self.evictions += 1
            log.info("template evicted from memory", key=key[:5], bytes=len(data))

    def get(self, world: World, seed: int, scale: str, *, edge_data: bool = False) -> bytes:
        """The template; with `edge_data`, the same world after its edge-case hook ran."""
        world.scale_params(scale)  # a clear error for an unknown scale, before any lock
        if edge_data and world.has_edge_data:
            return self.get_or_build(
                ("edge", world.name, world.version, seed, scale),
                lambda: add_edge_data(world, self.get(world, seed, scale), seed, scale),
            )
        return self.get_or_build(
            ("world", world.name, world.version, seed, scale), lambda: self._load_or_build(world, seed, scale)
        )

    def get_or_build(self, key: tuple[object, ...], build: Callable[[], bytes]) -> bytes:
        """Database bytes under `key`, built by `build` at most once per process, even when
        many threads ask at once (task templates use this too)."""
        if (data := self._cached(key)) is not None:
            return data
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if (data := self._cached(key)) is None:
                data = Template(build())
                self._keep(key, data)
        return data

    def _path(self, world: World, seed: int, scale: str) -> Path | None:
        if self.cache_dir is None:
            return None
        return self.cache_dir / f"{world.name}-{world.version}-f{store.FORMAT}-{scale}-{seed}.sqlite"

    def _load_or_build(self, world: World, seed: int, scale: str) -> bytes:
        path = self._path(world, seed, scale)
        if path is not None and path.exists():
            return path.read_bytes()
        started = time.perf_counter()
        data = build_template(world, seed, scale)
        self.builds += 1
        log.info(
            "template built",
            world=world.name,
            seed=seed,
            scale=scale,
            bytes=len(data),
            seconds=round(time.perf_counter() - started, 3),
        )
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        return data


@cache
def process_templates() -> TemplateCache:
    """The process's shared cache, created on first use (in memory; the CLI adds a disk cache).
    Its memory budget is MCPSIM_TEMPLATE_CACHE_BYTES (e.g. `512MiB`; `0`: unlimited; default 1 GiB),
    or `process_templates().set_max_bytes(n)`."""
    return TemplateCache(
        os.environ.get("MCPSIM_CACHE_DIR") or None,
        max_bytes=_env_bytes("MCPSIM_TEMPLATE_CACHE_BYTES", DEFAULT_TEMPLATE_BYTES),
    )
