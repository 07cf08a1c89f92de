"""An episode: one private copy of a world's database, and the tool calls made against it.

Each call runs in one transaction: a business error (`WorldError`) or a bug rolls back
everything the call did, so a failed call changes nothing. A successful call's row changes are
captured by triggers and returned with the result. An unexpected exception inside a tool is a
simulator bug: it is logged with its traceback, the agent gets a generic message, and the
episode is flagged so it can never be graded as a pass.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import structlog
from pydantic import TypeAdapter, ValidationError
from pydantic_core import PydanticSerializationError, to_json, to_jsonable_python
from sqlalchemy import Connection, Table
from sqlmodel import Session

from mcpsim.engine import _query as query
from mcpsim.engine import _store as store
from mcpsim.engine._faults import FaultProfile, FaultRecord
from mcpsim.engine._templates import Template, TemplateCache, orm_connection, process_templates
from mcpsim.engine._textsafe import lone_surrogate, scrub
from mcpsim.world import IdGenerator, PartialFailure, ToolContext, ToolSpec, World, WorldError, derive_seed

log = structlog.get_logger("mcpsim.engine._episode")

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


def argument_problems(spec: ToolSpec, exc: ValidationError) -> str:
    """What is wrong with which argument, one clause per problem: pydantic's messages without its
    model names, input echoes and documentation URLs (an agent reads this, not a developer)."""
    problems = []
    for error in exc.errors(include_url=False, include_context=False):
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        if error["type"] == "missing":
            problems.append(f"{where} is required")
        elif error["type"] == "extra_forbidden":
            known = ", ".join(spec.args_model.model_fields) or "none"
            problems.append(f"{where} is not an argument of {spec.name} (its arguments: {known})")
        elif error["type"] in ("model_type", "dict_type") and not error["loc"]:
            problems.append("the arguments must be a JSON object")
        else:
            problems.append(f"{where}: {error['msg']} (got {to_json(error['input'], fallback=str).decode()[:80]})")
    return "; ".join(problems)


def _result_json(value: Any) -> Any:
    """A result as the transcript stores it: serialized once by pydantic-core; text it cannot
    encode as UTF-8 (a lone surrogate an argument carried) goes the slower way, escaped."""
    try:
        return store.JsonText(to_json(value).decode())
    except PydanticSerializationError:
        return to_jsonable_python(value)


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


def _page_size(data: bytes) -> int:
    """The page size a database's header declares (bytes 16-17, big-endian; 1 means 65536)."""
    size = int.from_bytes(data[16:18], "big")
    return 65536 if size == 1 else size


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
        self.id = id
        self._conn: sqlite3.Connection | None = conn
        self._orm: Connection | None = None  # the SQLAlchemy connection tool calls run on, opened by the first
        # (changed-row count, call_seq, clock, id counters) as the last call committed them (`_call_meta`)
        self._meta: tuple[int, int, datetime, dict[str, int]] | None = None
        self._base = base  # the long-lived bytes the database was cloned from (parking keeps the difference)
        self._parked: Parked | None = None
        self._parked_summary: tuple[store.EpisodeMeta, tuple[int, int]] | None = None
        self._pinned = 0  # operations that span several locked sections: never parked meanwhile
        self._handler = False  # a progress handler is installed (grading): never parked meanwhile
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
        # (state before the latest write, reads left that may see it); kept in memory only
        self._stale: tuple[bytes, int] | None = None
        self.last_used = 0.0  # set by the EpisodeManager that hosts it (its own clock)
        self._lock = threading.Lock()
        self._closed: str | None = None  # why the episode was closed (deleted, expired...), once it is
        if base is not None:  # read from the template's header: no query, so no schema parse yet
            self._page_size: int = _page_size(base)  # fixed for a database
            self.size_bytes = len(base)  # its database's size (parked: the pages it keeps), kept current by `_open`
        else:
            self._page_size = conn.execute("PRAGMA page_size").fetchone()[0]
            self.size_bytes = conn.execute("PRAGMA page_count").fetchone()[0] * self._page_size
        self.log = log.bind(world=world.name, episode=id)

    @property
    def base(self) -> bytes | None:
        """The template bytes this episode was cloned from and keeps alive (None: restored from
        bytes of unknown origin)."""
        return self._base

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
        episode.size_bytes = len(snapshot)
        return episode

    # -- tool calls -------------------------------------------------------------------------

    def call(self, tool: str, arguments: dict[str, Any] | None = None) -> CallResult:
        """Validate raw (JSON-like) arguments and run the tool."""
        checked = self._check(tool, arguments)
        if isinstance(checked, str):
            return self.refuse(tool, arguments, checked)
        spec, args = checked
        return self.run(spec, {name: getattr(args, name) for name in type(args).model_fields})

    def argument_error(self, tool: str, arguments: Any) -> str | None:
        """Why a call of `tool` with `arguments` would be refused before running, as the agent
        reads it (the unknown tool, or which argument is wrong and how); None if it would run."""
        checked = self._check(tool, arguments)
        return checked if isinstance(checked, str) else None

    def _check(self, tool: str, arguments: Any) -> str | tuple[ToolSpec, Any]:
        spec = self.world.tools.get(tool)
        if spec is None:
            known = ", ".join(sorted(self.world.tools))
            return f"Unknown tool {tool!r}. Available tools: {known}"
        if (where := lone_surrogate(arguments)) is not None:  # SQLite and UTF-8 JSON cannot hold it
            return (
                f"Invalid arguments for {tool}: {where} holds a lone surrogate "
                "(such as \\udcff), which is not valid Unicode; nothing was done"
            )
        try:
            return spec, spec.args_model.model_validate(arguments or {})
        except ValidationError as exc:
            return f"Invalid arguments for {tool}: {argument_problems(spec, exc)}"

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
        """The call's transaction: the tool, the clock, ids, the transcript, the change log.

        BEGIN and COMMIT go straight to SQLite; the SQLAlchemy session joins the transaction
        only if the tool uses it (a tool reading with plain SQL never pays the ORM's transaction
        machinery). A rollback undoes everything either of them did."""
        conn = self.conn
        if self._orm is None:  # one SQLAlchemy connection for the episode's life (no pool per call)
            self._orm = orm_connection(conn)
        orm = self._orm
        conn.execute("BEGIN")  # the bookkeeping below is part of the call
        session: Session | None = None
        ctx: ToolContext | None = None
        try:
            call_seq, clock, counters = self._call_meta(conn)
            call_seq += 1
            now = clock + self.world.tick + timedelta(seconds=latency)
            ids = IdGenerator(self.seed, counters, record=True, formats=self.world.id_formats)
            store.write_call_meta(conn, call_seq, now)  # the change log's triggers read call_seq
            written = conn.total_changes  # rows changed so far, triggers included
            ctx = ToolContext(
                open_session=lambda: Session(bind=orm, expire_on_commit=False),
                connection=conn,
                now=now,
                ids=ids,
                seed=derive_seed(self.seed, call_seq),
                call_seq=call_seq,
                fault="partial" if partial else None,
            )
            error: str | None = None
            try:
                try:
                    value = spec.fn(ctx, **kwargs)
                except PartialFailure as exc:  # a documented intermediate state: kept
                    value, error = None, str(exc)
                session = ctx.opened_session
                if session is not None:
                    session.flush()
                # the change log has rows of this call only if the tool changed rows (or a fault is logged)
                logged = conn.total_changes != written or fault is not None
                if transform is not None and error is None:
                    value = transform(value)
                result = _result_json(value)
            except WorldError as exc:
                self._rollback(ctx.opened_session)
                self._record_failure(spec, kwargs, str(exc), bug=False, fault=fault)
                return CallResult(spec.name, error=str(exc), call_seq=call_seq, fault=fault)
            except Exception as exc:  # a bug in the simulator, never the agent's fault
                self._rollback(ctx.opened_session)
                reason = f"call {call_seq} to {spec.name} raised {type(exc).__name__}: {exc}"
                self._add_flag(reason)
                self.log.exception("tool bug", tool=spec.name, call_seq=call_seq, arguments=repr(kwargs)[:2000])
                error = BUG_MESSAGE.format(tool=spec.name)
                self._record_failure(spec, kwargs, error, bug=True, fault=fault)
                return CallResult(spec.name, error=error, bug=True, call_seq=call_seq, fault=fault)
            if timeout:  # applied, but the answer is lost
                value, result, error = None, None, FAULT_MESSAGES["timeout"].format(tool=spec.name, retry_after=0)
            if ids.counters != counters:  # the call drew ids
                store.write_meta(conn, {"ids": ids.counters})
                store.record_ids(conn, call_seq, ids.drawn)
            store.record_call(
                conn,
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
            changes = store.read_changes(conn, call_seq) if logged else []
            if session is not None and session.in_transaction():
                session.commit()  # commits the connection's transaction (SQLAlchemy joined it)
            if conn.in_transaction:
                conn.execute("COMMIT")
            # what the next call would read back: kept while nothing else writes to the database
            self._meta = (conn.total_changes, call_seq, now, ids.counters)
        finally:  # an exception that escaped (not a tool's: those are handled above) leaves nothing open
            made = ctx.opened_session if ctx is not None else None
            if made is not None:
                made.close()
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        return CallResult(spec.name, value=value, error=error, changes=changes, call_seq=call_seq, fault=fault)

    def _call_meta(self, conn: sqlite3.Connection) -> tuple[int, datetime, dict[str, int]]:
        """The call counter, the clock and the id counters, as the metadata holds them. The values
        the last call committed are used as they are while the connection has changed no row
        since (SQLite's count of changed rows on it has not moved: no other write, no rollback of
        one); else they are read, three fields in one query (a call never decodes the profile or
        the verdict)."""
        if self._meta is not None and self._meta[0] == conn.total_changes:
            return self._meta[1], self._meta[2], self._meta[3]
        meta = store.meta_values(conn, ("call_seq", "clock", "ids"))
        return meta["call_seq"], meta["clock"], meta["ids"]

    def _rollback(self, session: Session | None) -> None:
        """Undo everything the failed call did, through the session if the tool made one."""
        if session is not None:
            session.rollback()
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

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
        opaque: `mcpsim.grading._verdict.load_verdict` reads it as a `Verdict` or a `VerdictSummary`."""
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
            self._disconnect()
            self._parked = None

    def _reload(self, data: bytes) -> None:
        """Replace the database's content with `data` in place (another process's writes to a
        shared episode; the caller holds the lock). What the episode kept of the old content goes:
        SQLite's changed-row count does not move on a deserialize, so the counters a call kept
        from its commit would otherwise be used again."""
        self.conn.deserialize(data)
        self.conn.execute("PRAGMA foreign_keys = ON")
        self._meta = None

    def _disconnect(self) -> None:
        """Close the connections (the caller holds the lock)."""
        if self._orm is not None:
            self._orm.close()  # closes the sqlite3 connection too
            self._orm = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._meta = None

    # -- parking -------------------------------------------------------------------------------

    @property
    def parked(self) -> bool:
        return self._parked is not None

    @property
    def parkable(self) -> bool:
        """Whether the episode can be parked at all (it knows its base bytes)."""
        return self._base is not None

    def park(self) -> bool:
        """Keep this idle episode as its pages that differ from its base and close its
        connection; its next operation rebuilds it. False (and nothing done) when it cannot be:
        it has no base (restored from foreign bytes), is in use, pinned, closed or parked."""
        if self._base is None or not self._lock.acquire(blocking=False):
            return False
        try:
            if self._closed is not None or self._conn is None or self._pinned or self._handler:
                return False
            # what listings read, kept so that a listing does not rebuild every parked episode
            self._parked_summary = (store.read_meta(self._conn), self._count_calls(self._conn))
            self._parked = Parked.of(self._conn.serialize(), self._base, self._page_size)
            self._disconnect()
            self.size_bytes = self._parked.held_bytes
            return True
        finally:
            self._lock.release()

    @property
    def conn(self) -> sqlite3.Connection:
        """The episode's sqlite3 connection (rebuilt first if the episode was parked). Take the
        lock (`_open`) to use it while other threads may."""
        if self._conn is None:
            if self._parked is None:
                raise EpisodeClosed(self.id, self._closed or "closed")
            self._conn = store.connect(self._parked.restore())
            self._parked = None
        return self._conn

    @contextmanager
    def pinned(self) -> Iterator[None]:
        """Keep the episode unparked for a while (grading: several operations, one progress handler)."""
        with self._lock:
            self._pinned += 1
        try:
            yield
        finally:
            with self._lock:
                self._pinned -= 1

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
            self._handler = handler is not None  # grading in progress: not parked meanwhile

    def snapshot(self) -> bytes:
        """The database bytes: world rows, clock, id counters and change log."""
        with self._open():
            return self.conn.serialize()

    def fork(self, id: str = "default") -> Episode:
        """A new, independent episode starting from this one's current state."""
        return Episode.restore(self.world, self.snapshot(), id=id, base=self._base)

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

    def transcript(self, after: int = 0) -> list[store.CallRecord]:
        """Every call this episode saw, in order, refused and failed ones included (`after`: only
        those past that transcript position)."""
        with self._open():
            return store.read_calls(self.conn, after)

    def call_counts(self) -> tuple[int, int]:
        """How many calls this episode saw, and how many of them failed (refused before running,
        a business error, a fault, a bug): the transcript's totals, without reading it whole."""
        with self._lock:
            if (summary := self._summary_if_parked()) is not None:
                return summary[1]
        with self._open():
            return self._count_calls(self.conn)

    @staticmethod
    def _count_calls(conn: sqlite3.Connection) -> tuple[int, int]:
        counts = f"SELECT COUNT(*), COUNT(*) - COALESCE(SUM(ok), 0) FROM {store.CALLS}"
        total, failed = conn.execute(counts).fetchone()
        return int(total), int(failed)

    def _summary_if_parked(self) -> tuple[store.EpisodeMeta, tuple[int, int]] | None:
        """A parked episode's metadata and call counts as of parking (it cannot change while
        parked), so listing episodes leaves them parked (the caller holds the lock)."""
        if self._closed is not None:
            raise EpisodeClosed(self.id, self._closed)
        return self._parked_summary if self._parked is not None and self._conn is None else None

    def changes(self, call_seq: int | None = None) -> list[store.Change]:
        """The change log: every entry, or those of the call numbered `call_seq`."""
        with self._open():
            return store.read_changes(self.conn, call_seq)

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
        with self._lock:
            if (summary := self._summary_if_parked()) is not None:
                return summary[0]  # immutable: its flags are a tuple
        with self._open():
            return store.read_meta(self.conn)

    def table(self, name: str) -> Table:
        try:
            return self.world.metadata.tables[name]
        except KeyError:
            raise ValueError(f"world {self.world.name} has no table {name!r}") from None

    def select(self, table: str, where: dict[str, Any]) -> list[dict[str, Any]]:
        """Rows of `table` matching `where` (see `mcpsim.engine._query`)."""
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
