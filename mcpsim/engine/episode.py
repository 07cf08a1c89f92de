"""An episode: one private copy of a world's database, and the tool calls made against it.

Each call runs in one transaction: a business error (`WorldError`) or a bug rolls back
everything the call did, so a failed call changes nothing. A successful call's row changes are
captured by triggers and returned with the result. An unexpected exception inside a tool is a
simulator bug: it is logged with its traceback, the agent gets a generic message, and the
episode is flagged so it can never be graded as a pass.
"""

from __future__ import annotations

import random
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import structlog
from pydantic import TypeAdapter, ValidationError
from pydantic_core import to_jsonable_python
from sqlalchemy import Table
from sqlmodel import Session

from mcpsim.engine import query, store
from mcpsim.engine.faults import FaultProfile, FaultRecord
from mcpsim.engine.templates import TemplateCache, engine_for, process_templates
from mcpsim.engine.textsafe import lone_surrogate, scrub
from mcpsim.world import PartialFailure, ToolContext, ToolSpec, World, WorldError
from mcpsim.world.seeding import IdGenerator, derive_seed

log = structlog.get_logger("mcpsim.engine.episode")

FAULT_MESSAGES = {
    "transient": "503 Service Unavailable: {tool} is temporarily unavailable. Nothing was changed; retry the call.",
    "rate_limit": "429 Too Many Requests: the rate limit for {tool} is exceeded. Nothing was changed; "
    "retry after {retry_after} seconds.",
    "timeout": "504 Gateway Timeout: {tool} did not answer in time. The request may or may not have been "
    "applied: check its effect before retrying.",
}


def _truncate(spec: ToolSpec, value: Any, limit: int) -> Any:
    """The result with every string longer than `limit` cut short (still of the declared type)."""

    def cut(data: Any) -> Any:
        if isinstance(data, str) and len(data) > limit:
            return data[: limit - 1] + "…"
        if isinstance(data, list):
            return [cut(x) for x in data]
        if isinstance(data, dict):
            return {k: cut(v) for k, v in data.items()}
        return data

    return TypeAdapter(spec.return_annotation).validate_python(cut(to_jsonable_python(value)))


BUG_MESSAGE = (
    "Internal error in the simulator while running {tool}. This is not caused by your request; "
    "the incident has been logged."
)


@dataclass
class CallResult:
    tool: str
    value: Any = None
    error: str | None = None
    bug: bool = False  # the error is the simulator's fault, not the agent's
    changes: list[store.Change] = field(default_factory=list)
    call_seq: int | None = None  # set for calls that ran (committed or rolled back)
    fault: FaultRecord | None = None  # what the fault profile injected, if anything
    delay_s: float = 0.0  # real time the server should wait before answering (real_delay profiles)

    @property
    def is_error(self) -> bool:
        return self.error is not None


class EpisodeClosed(LookupError):
    """The episode was closed (deleted, expired, or its server shut down) and does no more work.
    A LookupError: to a caller it is an episode that no longer exists."""

    def __init__(self, episode_id: str, reason: str = "closed") -> None:
        super().__init__(f"episode {episode_id} was {reason}; it no longer exists")
        self.episode_id, self.reason = episode_id, reason


def _database_bytes(conn: sqlite3.Connection) -> int:
    """The size of a database: its page count times its page size."""
    return conn.execute("PRAGMA page_count").fetchone()[0] * conn.execute("PRAGMA page_size").fetchone()[0]


def snapshot_world(data: bytes) -> str:
    """The world name recorded in a snapshot's bytes (ValueError if they are not an episode)."""
    conn = store.connect(data)
    try:
        world: str = store.meta_value(conn, "world")
    except sqlite3.Error as exc:
        raise ValueError(f"not an mcpsim episode database ({exc})") from None
    finally:
        conn.close()
    return world


class Episode:
    """One world instance. Create with `Episode.create(world, seed, scale)`."""

    def __init__(self, world: World, conn: sqlite3.Connection, *, id: str = "default") -> None:
        self.world = world
        self.id = id
        self.conn = conn
        self.engine = engine_for(conn)
        meta = store.read_meta(conn)
        if meta.world != world.name:
            raise ValueError(f"database belongs to world {meta.world!r}, not {world.name!r}")
        self.seed: int = meta.seed
        self.scale: str = meta.scale
        self.template_version: str = meta.version
        self.task_id: str | None = meta.task
        self.faults: FaultProfile | None = meta.faults
        # (state before the latest write, reads left that may see it); kept in memory only
        self._stale: tuple[bytes, int] | None = None
        self.last_used = 0.0  # set by the EpisodeManager that hosts it (its own clock)
        self._lock = threading.Lock()
        self._closed: str | None = None  # why the episode was closed (deleted, expired...), once it is
        self._page_size: int = conn.execute("PRAGMA page_size").fetchone()[0]  # fixed for a database
        self.size_bytes = _database_bytes(conn)  # its database's size, kept current by `_open`
        self.log = log.bind(world=world.name, episode=id)

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
        data = (templates or process_templates()).get(world, seed, scale)
        return cls(world, store.connect(data), id=id)

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
        episode = cls(world, store.connect(templates.get(world, seed, scale, edge_data=edge)), id=id)
        if faults is not None:
            episode.set_faults(faults)
        return episode

    @classmethod
    def restore(cls, world: World, snapshot: bytes, *, id: str = "default") -> Episode:
        return cls(world, store.connect(snapshot), id=id)

    # -- tool calls -------------------------------------------------------------------------

    def call(self, tool: str, arguments: dict[str, Any] | None = None) -> CallResult:
        """Validate raw (JSON-like) arguments and run the tool."""
        spec = self.world.tools.get(tool)
        if spec is None:
            known = ", ".join(sorted(self.world.tools))
            return self.refuse(tool, arguments, f"Unknown tool {tool!r}. Available tools: {known}")
        if (where := lone_surrogate(arguments)) is not None:  # SQLite and UTF-8 JSON cannot hold it
            return self.refuse(
                tool,
                arguments,
                f"Invalid arguments for {tool}: {where} holds a lone surrogate "
                "(such as \\udcff), which is not valid Unicode; nothing was done",
            )
        try:
            args = spec.args_model.model_validate(arguments or {})
        except ValidationError as exc:
            return self.refuse(tool, arguments, f"Invalid arguments for {tool}: {exc}")
        return self.run(spec, {name: getattr(args, name) for name in type(args).model_fields})

    def refuse(self, tool: str, arguments: Any, error: str) -> CallResult:
        """Record a call that never ran (unknown tool, invalid arguments) and return its error.
        Invalid Unicode in what the client sent is stored as U+FFFD, so the transcript, the
        trajectory and the journal always encode."""
        spec = self.world.tools.get(tool)
        tool, error = scrub(tool), scrub(error)
        with self._open():
            clock = self._clock_text()
            store.record_call(
                self.conn,
                None,
                tool,
                to_jsonable_python(scrub(arguments), fallback=str),
                ok=False,
                error=error,
                bug=False,
                result=None,
                clock=clock,
                writes=bool(spec and spec.writes),
            )
        return CallResult(tool, error=error)

    def run(self, spec: ToolSpec, kwargs: dict[str, Any]) -> CallResult:
        """Run a tool with already-validated arguments in one transaction, after the fault
        profile (if any) had its say."""
        with self._open():
            if spec.writes and store.meta_value(self.conn, "ended"):
                error = "This episode has ended; its state is frozen and no longer changes."
                self._record_failure(spec, kwargs, error, bug=False)
                return CallResult(spec.name, error=error)
            if self.faults is None:
                return self._execute(spec, kwargs)
            return self._run_with_faults(spec, kwargs, self.faults)

    def _run_with_faults(self, spec: ToolSpec, kwargs: dict[str, Any], profile: FaultProfile) -> CallResult:
        attempts = dict(store.meta_value(self.conn, "fault_attempts"))
        attempt = attempts.get(spec.name, 0) + 1
        attempts[spec.name] = attempt
        store.write_meta(self.conn, {"fault_attempts": attempts})  # counted even if the call fails
        kind = profile.decide(
            self.seed,
            spec.name,
            attempt,
            writes=spec.writes,
            partial_ok=spec.partial_failures,
            has_limit=spec.has_limit,
            after_write=self._stale is not None,
        )
        latency = profile.latency(self.seed, spec.name, attempt)
        detail: FaultRecord | None = {"kind": kind, "attempt": attempt} if kind else None
        if kind in ("transient", "rate_limit"):
            assert detail is not None
            if kind == "rate_limit":
                detail["retry_after_s"] = profile.retry_after_s
            error = FAULT_MESSAGES[kind].format(tool=spec.name, retry_after=profile.retry_after_s)
            self._record_failure(spec, kwargs, error, bug=False, fault=detail)
            return CallResult(spec.name, error=error, fault=detail)
        if kind == "paginate" and detail is not None:
            capped = min(kwargs["limit"], profile.page_size)
            detail["limit"] = [kwargs["limit"], capped]
            kwargs = {**kwargs, "limit": capped}
        transform = None
        if kind == "stale" and self._stale is not None:
            stale_state = self._stale[0]
            transform = lambda value: self._stale_value(spec, kwargs, stale_state, value)  # noqa: E731
        elif kind == "truncate":
            transform = lambda value: _truncate(spec, value, profile.truncate_at)  # noqa: E731
        before = self.conn.serialize() if spec.writes and profile.can_be_stale else None
        result = self._execute(
            spec,
            kwargs,
            partial=kind == "partial",
            latency=latency,
            fault=detail,
            transform=transform,
            timeout=kind == "timeout",
        )
        if result.call_seq is not None and not result.bug:  # it committed (fully, partly, or unanswered)
            if spec.writes:
                self._stale = (before, profile.stale_window) if before is not None else None
            elif self._stale is not None:
                left = self._stale[1] - 1
                self._stale = (self._stale[0], left) if left > 0 else None
        if profile.real_delay:
            result.delay_s = latency
        return result

    def _stale_value(self, spec: ToolSpec, kwargs: dict[str, Any], state: bytes, fresh: Any) -> Any:
        """What the read would have answered before the latest write."""
        copy = Episode.restore(self.world, state, id=f"{self.id}-stale")
        try:
            old = copy._execute(spec, kwargs)
        finally:
            copy.close()
        return fresh if old.is_error else old.value

    def _execute(
        self,
        spec: ToolSpec,
        kwargs: dict[str, Any],
        *,
        partial: bool = False,
        latency: float = 0.0,
        fault: FaultRecord | None = None,
        transform: Callable[[Any], Any] | None = None,
        timeout: bool = False,
    ) -> CallResult:
        """The call's transaction: the tool, the clock, ids, the transcript, the change log."""
        with Session(self.engine, expire_on_commit=False) as session:
            db = session.connection()  # BEGIN: the bookkeeping below is part of the call
            # three fields, not the whole record: a call should not decode the profile and verdict
            call_seq = store.meta_value(self.conn, "call_seq") + 1
            clock: datetime = store.meta_value(self.conn, "clock")
            now = clock + self.world.tick + timedelta(seconds=latency)
            counters = store.meta_value(self.conn, "ids")
            ids = IdGenerator(self.seed, counters, record=True, formats=self.world.id_formats)
            store.write_meta(self.conn, {"call_seq": call_seq})
            ctx = ToolContext(
                session=session,
                now=now,
                ids=ids,
                rng=random.Random(derive_seed(self.seed, call_seq)),
                call_seq=call_seq,
                fault="partial" if partial else None,
            )
            error: str | None = None
            try:
                try:
                    value = spec.fn(ctx, **kwargs)
                except PartialFailure as exc:  # a documented intermediate state: kept
                    value, error = None, str(exc)
                session.flush()
                if transform is not None and error is None:
                    value = transform(value)
                result = to_jsonable_python(value)
            except WorldError as exc:
                session.rollback()
                self._record_failure(spec, kwargs, str(exc), bug=False, fault=fault)
                return CallResult(spec.name, error=str(exc), call_seq=call_seq, fault=fault)
            except Exception as exc:  # a bug in the simulator, never the agent's fault
                session.rollback()
                reason = f"call {call_seq} to {spec.name} raised {type(exc).__name__}: {exc}"
                self._add_flag(reason)
                self.log.exception("tool bug", tool=spec.name, call_seq=call_seq, arguments=repr(kwargs)[:2000])
                error = BUG_MESSAGE.format(tool=spec.name)
                self._record_failure(spec, kwargs, error, bug=True, fault=fault)
                return CallResult(spec.name, error=error, bug=True, call_seq=call_seq, fault=fault)
            if timeout:  # applied, but the answer is lost
                value, result, error = None, None, FAULT_MESSAGES["timeout"].format(tool=spec.name, retry_after=0)
            store.write_meta(self.conn, {"clock": now.isoformat(), "ids": ids.counters})
            store.record_ids(self.conn, call_seq, ids.drawn)
            store.record_call(
                self.conn,
                call_seq,
                spec.name,
                to_jsonable_python(kwargs),
                ok=error is None,
                error=error,
                bug=False,
                result=result,
                clock=now.isoformat(),
                writes=spec.writes,
                fault=fault,
            )
            changes = store.read_changes(self.conn, call_seq)
            del db
            session.commit()
        return CallResult(spec.name, value=value, error=error, changes=changes, call_seq=call_seq, fault=fault)

    def _record_failure(
        self, spec: ToolSpec, kwargs: dict[str, Any], error: str, *, bug: bool, fault: FaultRecord | None = None
    ) -> None:
        """Log a call that changed nothing in the transcript, outside its rolled-back transaction
        (it consumed no call number)."""
        clock = self._clock_text()
        store.record_call(
            self.conn,
            None,
            spec.name,
            to_jsonable_python(kwargs, fallback=str),
            ok=False,
            error=error,
            bug=bug,
            result=None,
            clock=clock,
            writes=spec.writes,
            fault=fault,
        )

    # -- lifecycle ---------------------------------------------------------------------------

    def set_faults(self, profile: FaultProfile | None) -> None:
        """Inject faults from now on (stored in the database: snapshots keep the profile)."""
        with self._open():
            store.write_meta(self.conn, {"faults": profile})
            self.faults = profile

    # Flags, the freeze and the verdict live in the episode's database, like everything else, so
    # a snapshot, a restore or a fork keeps them: a restored flagged episode never passes.

    def end(self) -> None:
        """Freeze the episode: from now on write tools are refused, reads still answer."""
        with self._open():
            store.write_meta(self.conn, {"ended": True})

    @property
    def ended(self) -> bool:
        with self._open():
            return bool(store.meta_value(self.conn, "ended"))

    @property
    def flags(self) -> list[str]:
        """Why this episode must not be graded as a pass (simulator bugs), oldest first."""
        with self._open():
            return list(store.meta_value(self.conn, "flags"))

    @property
    def flagged(self) -> bool:
        return bool(self.flags)

    def _add_flag(self, reason: str) -> None:
        """Record a simulator bug (the caller holds the lock; outside the call's transaction)."""
        store.write_meta(self.conn, {"flags": [*store.meta_value(self.conn, "flags"), reason]})

    @property
    def verdict(self) -> dict[str, Any] | None:
        """The verdict of the latest grading as stored (JSON), if graded. The engine keeps it
        opaque: `mcpsim.grading.verdict.load_verdict` reads it as a `Verdict` or a `VerdictSummary`."""
        with self._open():
            return store.meta_value(self.conn, "verdict")

    @verdict.setter
    def verdict(self, value: dict[str, Any] | None) -> None:
        with self._open():
            store.write_meta(self.conn, {"verdict": value})

    def close(self, reason: str = "closed") -> None:
        """Free the database, for good. Takes the episode's lock, so it waits for the operation in
        progress and a connection is never closed under a running statement (which crashed the
        process in SQLite); every later operation raises `EpisodeClosed` with `reason` ("deleted",
        "expired"...). Closing twice is harmless."""
        with self._lock:
            if self._closed is not None:
                return
            self._closed = reason
            self.engine.dispose()
            self.conn.close()

    @property
    def closed(self) -> bool:
        return self._closed is not None

    @contextmanager
    def _open(self) -> Iterator[None]:
        """Hold the episode's lock for one operation on its database, refusing a closed episode.
        Every use of `self.conn` outside `__init__` and `close` goes through this."""
        with self._lock:
            if self._closed is not None:
                raise EpisodeClosed(self.id, self._closed)
            try:
                yield
            finally:  # one cheap pragma: the page count (the page size never changes)
                self.size_bytes = self.conn.execute("PRAGMA page_count").fetchone()[0] * self._page_size

    def set_progress_handler(self, handler: Callable[[], int] | None, n: int) -> None:
        """Install (or, with None, remove) a SQLite progress handler (the grader's work budget).
        Removing one from a closed episode is a no-op."""
        if handler is None and self._closed is not None:
            return
        with self._open():
            self.conn.set_progress_handler(handler, n)

    def snapshot(self) -> bytes:
        """The database bytes: world rows, clock, id counters and change log."""
        with self._open():
            return self.conn.serialize()

    def fork(self, id: str = "default") -> Episode:
        """A new, independent episode starting from this one's current state."""
        return Episode.restore(self.world, self.snapshot(), id=id)

    # -- reading state -----------------------------------------------------------------------

    def state_hash(self) -> str:
        with self._open():
            return store.state_hash(self.conn, self.world.metadata)

    def tables(self, names: list[str] | None = None, limit: int | None = None) -> dict[str, list[dict[str, Any]]]:
        with self._open():
            return {
                t.name: store.dump_table(self.conn, t, limit)
                for t in store.world_tables(self.world.metadata)
                if names is None or t.name in names
            }

    def transcript(self) -> list[store.CallRecord]:
        """Every call this episode saw, in order, refused and failed ones included."""
        with self._open():
            return store.read_calls(self.conn)

    def changes(self) -> list[store.Change]:
        with self._open():
            return store.read_changes(self.conn)

    def net_changes(self) -> store.NetChanges:
        """Net row changes, with the ids the episode's calls drew (which grading renames)."""
        with self._open():
            return store.net_changes(store.read_changes(self.conn), store.read_ids(self.conn))

    def clock(self) -> datetime:
        with self._open():
            clock: datetime = store.meta_value(self.conn, "clock")
            return clock

    def _clock_text(self) -> str:
        """The clock as transcripts record it (the caller holds the lock)."""
        clock: datetime = store.meta_value(self.conn, "clock")
        return clock.isoformat()

    @property
    def calls(self) -> int:
        with self._open():
            calls: int = store.meta_value(self.conn, "call_seq")
            return calls

    def meta(self) -> store.EpisodeMeta:
        """The episode's whole metadata record, read at once (identity, clock, freeze, flags...)."""
        with self._open():
            return store.read_meta(self.conn)

    def table(self, name: str) -> Table:
        try:
            return self.world.metadata.tables[name]
        except KeyError:
            raise ValueError(f"world {self.world.name} has no table {name!r}") from None

    def select(self, table: str, where: dict[str, Any]) -> list[dict[str, Any]]:
        """Rows of `table` matching `where` (see `mcpsim.engine.query`)."""
        clause, params = query.where_sql(self.table(table), where)
        return self.query(f'SELECT * FROM "{table}" WHERE {clause}', tuple(params))

    def edit(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> int:
        """Run one write statement outside any tool (task setup, never an agent's path); returns
        the number of rows it changed. Logged like a call's changes, under call number 0."""
        with self._open():
            saved = store.meta_value(self.conn, "call_seq")
            self.conn.execute("BEGIN")
            try:
                store.write_meta(self.conn, {"call_seq": 0})
                count = self.conn.execute(sql, tuple(params)).rowcount
                store.write_meta(self.conn, {"call_seq": saved})
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")
            return count

    def query(self, sql: str, params: tuple[Any, ...] | dict[str, Any] = ()) -> list[dict[str, Any]]:
        """Read-only SQL over the episode's database (tests, graders, debugging)."""
        with self._open():
            self.conn.execute("PRAGMA query_only = ON")
            try:
                cur = self.conn.execute(sql, params)
                names = [d[0] for d in cur.description or ()]
                return [dict(zip(names, row, strict=True)) for row in cur]
            finally:
                self.conn.execute("PRAGMA query_only = OFF")
