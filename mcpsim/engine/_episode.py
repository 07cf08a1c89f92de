"""An episode: one private copy of a world's database, and the tool calls made against it.

Each call runs in one transaction: a business error (`WorldError`) or a bug rolls back
everything the call did, so a failed call changes nothing. A successful call's row changes are
captured by triggers and returned with the result. An unexpected exception inside a tool is a
simulator bug: it is logged with its traceback, the agent gets a generic message, and the
episode is flagged so it can never be graded as a pass.

`Episode` is a facade over its collaborators: the database connection, its lock and its parking
(`_parking`), the call transaction (`_transaction`), fault injection (`_fault_injection`), and the
episode's own records and SQL console (`_metadata`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any

import structlog
from sqlalchemy import Table

from mcpsim.engine import _metadata as metadata
from mcpsim.engine import _query as query
from mcpsim.engine import _store as store
from mcpsim.engine._fault_injection import FaultInjection
from mcpsim.engine._faults import FaultProfile
from mcpsim.engine._parking import ParkableConnection, count_calls
from mcpsim.engine._templates import Template, TemplateCache, process_templates
from mcpsim.engine._textsafe import scrub
from mcpsim.engine._transaction import (
    CallResult,
    CallTarget,
    CallTransaction,
    check_call,
    record_failure,
    record_refusal,
)
from mcpsim.world import ToolSpec, World

log = structlog.get_logger("mcpsim.engine._episode")


def _replay(episode: CallTarget, state: bytes, spec: ToolSpec, kwargs: dict[str, Any]) -> CallResult:
    """The call run on a copy of `episode` restored from `state`, an earlier state of its database
    (what a stale read answers; `FaultInjection` is handed this)."""
    copy = Episode.restore(episode.world, state, id=f"{episode.id}-stale")
    try:
        return copy._transaction.execute(copy, spec, kwargs)
    finally:
        copy.close()


def _run_open(episode: Episode, spec: ToolSpec, kwargs: dict[str, Any]) -> CallResult:
    """`Episode.run`'s work, under the episode's lock: refused if frozen, else one transaction."""
    if spec.writes and store.meta_value(episode.conn, "ended"):
        error = "This episode has ended; its state is frozen and no longer changes."
        record_failure(episode.conn, spec, kwargs, error, bug=False)
        return CallResult(spec.name, error=error)
    if episode.faults is None:
        return episode._transaction.execute(episode, spec, kwargs)
    return episode._injection.run(episode, spec, kwargs, episode.faults)


def _refused(conn: sqlite3.Connection, tool: str, arguments: Any, error: str, writes: bool, role: str | None) -> None:
    after = store.last_position(conn)
    record_refusal(conn, tool, arguments, error, writes=writes)
    if role is not None:
        store.label_calls(conn, after, role)


class Episode:
    """One world instance. Create with `Episode.create(world, seed, scale)`.

    Its database lives in a private in-memory SQLite connection while it is in use. An idle
    episode can be parked (`park`): it keeps only the pages that differ from its base, the
    template bytes it was cloned from, and its next operation rebuilds the connection from them,
    transparently to every caller."""

    def __init__(
        self,
        world: World,
        conn: sqlite3.Connection,
        *,
        id: str = "default",
        base: bytes | None = None,
        meta: store.EpisodeMeta | None = None,
    ) -> None:
        self.world = world
        self._transaction = CallTransaction()
        # A clone of a `Template` takes the meta the template read once: creating it runs no query,
        # so SQLite parses the schema (most of a clone's cost) on the first call, not here.
        meta = meta or store.read_meta(conn)
        if meta.world != world.name:
            raise ValueError(f"database belongs to world {meta.world!r}, not {world.name!r}")
        self.seed: int = meta.seed
        self.scale: str = meta.scale
        self.template_version: str = meta.version
        self.task_id: str | None = meta.task
        self.faults: FaultProfile | None = meta.faults
        self._injection = FaultInjection(self._transaction, _replay)
        self.last_used = 0.0  # set by the EpisodeManager that hosts it (its own clock)
        self._db = ParkableConnection(id, conn, base, self._transaction)
        self._lock = self._db.lock  # the episode's lock: every operation on its database takes it
        self.log = log.bind(world=world.name, episode=id)

    @property
    def id(self) -> str:
        return self._db.episode_id

    @id.setter
    def id(self, value: str) -> None:
        self._db.episode_id = value

    @property
    def size_bytes(self) -> int:
        """Its database's size (parked: the pages it keeps), kept current by every operation."""
        return self._db.size_bytes

    def limit_storage(self, max_bytes: int | None) -> None:
        """Cap its database at `max_bytes` (None: none): a write past it is rolled back, with the reason."""
        self._db.limit_storage(max_bytes)

    @property
    def base(self) -> bytes | None:
        """The template bytes this episode was cloned from and keeps alive (None: restored from
        bytes of unknown origin)."""
        return self._db.base

    @classmethod
    def clone(cls, world: World, data: bytes, *, id: str = "default") -> Episode:
        """An episode starting from template bytes that outlive it (a `TemplateCache`'s): they
        stay its base, so parking it keeps only what it changed."""
        meta = data.meta if isinstance(data, Template) else None
        return cls(world, store.connect(data), id=id, base=data, meta=meta)

    @classmethod
    def create(
        cls,
        world: World,
        seed: int = 0,
        scale: str = "default",
        *,
        id: str = "default",
        templates: TemplateCache | None = None,
    ) -> Episode:
        return cls.clone(world, (templates or process_templates()).get(world, seed, scale), id=id)

    @classmethod
    def create_with_faults(
        cls,
        world: World,
        seed: int,
        scale: str,
        faults: FaultProfile | None,
        *,
        id: str = "default",
        templates: TemplateCache | None = None,
    ) -> Episode:
        """An episode with a fault profile (edge-case data included when the profile asks)."""
        templates = templates or process_templates()
        edge = bool(faults and faults.edge_data)
        episode = cls.clone(world, templates.get(world, seed, scale, edge_data=edge), id=id)
        if faults is not None:
            episode.set_faults(faults)
        return episode

    @classmethod
    def restore(cls, world: World, snapshot: bytes, *, id: str = "default", base: bytes | None = None) -> Episode:
        """An episode from database bytes. Template bytes (a `TemplateCache`'s, a task's) become
        its base; for other bytes, `base` may name the template they came from (a fork's)."""
        if isinstance(snapshot, Template):
            return cls.clone(world, snapshot, id=id)
        episode = cls(world, store.connect(snapshot), id=id, base=base)
        episode._db.size_bytes = len(snapshot)
        return episode

    # -- tool calls (`_transaction`, `_fault_injection`) ------------------------------------
    def call(self, tool: str, arguments: dict[str, Any] | None = None, role: str | None = None) -> CallResult:
        """Validate raw (JSON-like) arguments and run the tool (on behalf of `role`, if given)."""
        checked = check_call(self.world, tool, arguments)
        if isinstance(checked, str):
            return self.refuse(tool, arguments, checked, role)
        spec, args = checked
        return self.run(spec, {name: getattr(args, name) for name in type(args).model_fields}, role)

    def argument_error(self, tool: str, arguments: Any) -> str | None:
        """Why a call of `tool` with `arguments` would be refused before running, as the agent
        reads it (the unknown tool, or which argument is wrong and how); None if it would run."""
        checked = check_call(self.world, tool, arguments)
        return checked if isinstance(checked, str) else None

    def refuse(self, tool: str, arguments: Any, error: str, role: str | None = None) -> CallResult:
        """Record a call that never ran (unknown tool, invalid arguments, outside `role`'s tools)
        and return its error. Invalid Unicode in what the client sent is stored as U+FFFD, so the
        transcript, the trajectory and the journal always encode."""
        spec = self.world.tools.get(tool)
        tool, error = scrub(tool), scrub(error)
        self._db.apply(_refused, tool, arguments, error, bool(spec and spec.writes), role)
        return CallResult(tool, error=error)

    def run(self, spec: ToolSpec, kwargs: dict[str, Any], role: str | None = None) -> CallResult:
        """Run a tool with already-validated arguments in one transaction, after the fault
        profile (if any) had its say; `role` (a task's role) is recorded as its maker (`meta().roles`)."""
        with self._open():
            after = store.last_position(self.conn) if role is not None else 0
            result = _run_open(self, spec, kwargs)
            if role is not None:
                store.label_calls(self.conn, after, role)
            return result

    # -- its records (`_metadata`) -------------------------------------------------------------
    def set_faults(self, profile: FaultProfile | None) -> None:
        """Inject faults from now on (stored in the database: snapshots keep the profile)."""
        self._db.apply_lifted(store.write_meta, {"faults": profile})
        self.faults = profile

    def end(self) -> None:
        """Freeze the episode: from now on write tools are refused, reads still answer."""
        self._db.apply_lifted(metadata.end)

    @property
    def ended(self) -> bool:
        return self._db.apply(metadata.is_ended)

    @property
    def flags(self) -> list[str]:
        """Why this episode must not be graded as a pass (simulator bugs), oldest first."""
        return self._db.apply(metadata.flags)

    @property
    def flagged(self) -> bool:
        return bool(self.flags)

    @property
    def verdict(self) -> dict[str, Any] | None:
        """The verdict of the latest grading as stored (JSON), if graded. The engine keeps it
        opaque: `mcpsim.grading._verdict.load_verdict` reads it as a `Verdict` or a `VerdictSummary`."""
        return self._db.apply(metadata.verdict)

    @verdict.setter
    def verdict(self, value: dict[str, Any] | None) -> None:
        self._db.apply_lifted(metadata.store_verdict, value)

    # -- its database, its lock and its parking (`_parking`) -----------------------------------
    def close(self, reason: str = "closed") -> None:
        """Free the database, for good: every later operation raises `EpisodeClosed` with `reason`
        ("deleted", "expired"...). Waits for the operation in progress; closing twice is harmless."""
        self._db.close(reason)

    def _reload(self, data: bytes) -> None:
        """Replace the database's content with `data` in place (another process's writes to a
        shared episode; the caller holds the lock)."""
        self._db.reload(data)

    @property
    def parked(self) -> bool:
        return self._db.parked is not None

    @property
    def parkable(self) -> bool:
        """Whether the episode can be parked at all (it knows its base bytes)."""
        return self._db.base is not None

    def park(self) -> bool:
        """Keep this idle episode as its pages that differ from its base and close its connection;
        False (and nothing done) when it cannot be (see `ParkableConnection.park`)."""
        return self._db.park()

    @property
    def conn(self) -> sqlite3.Connection:
        """The episode's sqlite3 connection, rebuilt first if parked (use it under `_open`)."""
        return self._db.conn

    def pinned(self) -> AbstractContextManager[None]:
        """Keep the episode unparked for a while (grading: several operations, one progress handler)."""
        return self._db.pinned()

    @property
    def closed(self) -> bool:
        return self._db.closed is not None

    def _open(self) -> AbstractContextManager[None]:
        """Hold the episode's lock for one operation on its database (`ParkableConnection.open`)."""
        return self._db.open()

    def set_progress_handler(self, handler: Callable[[], int] | None, n: int) -> None:
        """Install (or, with None, remove) a SQLite progress handler (the grader's work budget).
        Removing one from a closed episode is a no-op."""
        self._db.set_progress_handler(handler, n)

    def snapshot(self) -> bytes:
        """The database bytes: world rows, clock, id counters and change log."""
        return self._db.apply(sqlite3.Connection.serialize)

    def fork(self, id: str = "default") -> Episode:
        """A new, independent episode starting from this one's current state (and storage limit)."""
        copy = Episode.restore(self.world, self.snapshot(), id=id, base=self._db.base)
        copy.limit_storage(limit.max_bytes if (limit := self._db.limit) else None)
        return copy

    # -- reading state -----------------------------------------------------------------------
    def state_hash(self) -> str:
        return self._db.apply(store.state_hash, self.world.metadata)

    def tables(self, names: list[str] | None = None, limit: int | None = None) -> dict[str, list[dict[str, Any]]]:
        return self._db.apply(metadata.dump_tables, self.world, names, limit)

    def transcript(self, after: int = 0) -> list[store.CallRecord]:
        """Every call this episode saw, in order, refused and failed ones included (`after`: only
        those past that transcript position)."""
        return self._db.apply(store.read_calls, after)

    def call_counts(self) -> tuple[int, int]:
        """How many calls this episode saw, and how many of them failed (refused before running,
        a business error, a fault, a bug): the transcript's totals, without reading it whole."""
        if (summary := self._db.parked_summary()) is not None:
            return summary[1]
        return self._db.apply(count_calls)

    def changes(self, call_seq: int | None = None, through: int | None = None) -> list[store.Change]:
        """The change log: every entry, those of the call numbered `call_seq`, or with `through`
        those of the calls numbered `call_seq` to `through`."""
        return self._db.apply(store.read_changes, call_seq, through)

    def changes_by_role(self) -> list[tuple[store.Change, str | None]]:
        """The change log, each entry with the task role whose call made it (None: no role's)."""
        return self._db.apply(store.read_changes_by_role)

    def net_changes(self) -> store.NetChanges:
        """Net row changes, with the ids the episode's calls drew (which grading renames)."""
        with self._open():
            return store.net_changes(store.read_changes(self.conn), store.read_ids(self.conn))

    def clock(self) -> datetime:
        return self._db.apply(metadata.clock)

    @property
    def calls(self) -> int:
        return self._db.apply(metadata.calls)

    def meta(self) -> store.EpisodeMeta:
        """The episode's whole metadata record, read at once (identity, clock, freeze, flags...)."""
        if (summary := self._db.parked_summary()) is not None:
            return summary[0]  # immutable: its flags are a tuple
        return self._db.apply(store.read_meta)

    # -- the SQL console (`_metadata`) ---------------------------------------------------------
    def table(self, name: str) -> Table:
        return metadata.world_table(self.world, name)

    def select(self, table: str, where: dict[str, Any]) -> list[dict[str, Any]]:
        """Rows of `table` matching `where` (see `mcpsim.engine._query`)."""
        clause, params = query.where_sql(self.table(table), where)
        return self.query(f'SELECT * FROM "{table}" WHERE {clause}', tuple(params))

    def edit(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> int:
        """Run one write statement outside any tool (task setup, never an agent's path); returns
        the number of rows it changed. Logged like a call's changes, under call number 0."""
        return self._db.apply_lifted(metadata.edit, sql, params)

    def query(self, sql: str, params: tuple[Any, ...] | dict[str, Any] = ()) -> list[dict[str, Any]]:
        """Read-only SQL over the episode's database (tests, graders, debugging)."""
        return self._db.apply(metadata.query, sql, params)
