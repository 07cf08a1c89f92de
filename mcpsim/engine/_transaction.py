"""The call transaction: a tool call's arguments validated (`check_call`), the call run in one
SQLite transaction (BEGIN, the tool, the session's flush, the transcript, the change log, COMMIT:
`CallTransaction`), and what it answers (`CallResult`). Calls that never ran or changed nothing
are recorded in the transcript outside any transaction (`record_refusal`, `record_failure`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

import structlog
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError, to_json, to_jsonable_python
from sqlalchemy import Connection
from sqlmodel import Session

from mcpsim.engine import _store as store
from mcpsim.engine._faults import FaultRecord
from mcpsim.engine._metadata import add_flag
from mcpsim.engine._storage import StorageLimit, is_full
from mcpsim.engine._templates import orm_connection
from mcpsim.engine._textsafe import lone_surrogate, scrub
from mcpsim.world import IdGenerator, PartialFailure, ToolContext, ToolSpec, World, WorldError, derive_seed

FAULT_MESSAGES = {
    "transient": "503 Service Unavailable: {tool} is temporarily unavailable. Nothing was changed; retry the call.",
    "rate_limit": "429 Too Many Requests: the rate limit for {tool} is exceeded. Nothing was changed; "
    "retry after {retry_after} seconds.",
    "timeout": "504 Gateway Timeout: {tool} did not answer in time. The request may or may not have been "
    "applied: check its effect before retrying.",
}


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


log = structlog.get_logger("mcpsim.engine._transaction")

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


class CallTarget(Protocol):
    """What a call runs against, read when it runs: an `Episode` (its id, world, seed, logger and
    database connection)."""

    id: str
    world: World
    seed: int
    log: Any

    @property
    def conn(self) -> sqlite3.Connection: ...


def check_call(world: World, tool: str, arguments: Any) -> str | tuple[ToolSpec, Any]:
    """The tool and its validated arguments, or why the call is refused before running."""
    spec = world.tools.get(tool)
    if spec is None:
        known = ", ".join(sorted(world.tools))
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


def clock_text(conn: sqlite3.Connection) -> str:
    """The clock as transcripts record it (the caller holds the lock)."""
    clock: datetime = store.meta_value(conn, "clock")
    return clock.isoformat()


def _record_unless_full(conn: sqlite3.Connection, tool: str, **record: Any) -> None:
    """Append a call that changed nothing to the transcript, unless the episode's storage limit
    and its reserve are full (then the record is dropped, and logged: `mcpsim.engine._storage`)."""
    try:
        store.record_call(conn, None, tool, **record)
    except sqlite3.OperationalError as exc:
        if not is_full(exc):
            raise
        log.warning("transcript entry dropped: the episode's storage is full", tool=tool[:256])


def record_refusal(conn: sqlite3.Connection, tool: str, arguments: Any, error: str, *, writes: bool) -> None:
    """Log a call that never ran (its tool and error already scrubbed) in the transcript."""
    clock = clock_text(conn)
    _record_unless_full(
        conn,
        tool,
        arguments=to_jsonable_python(scrub(arguments), fallback=str),
        ok=False,
        error=error,
        bug=False,
        result=None,
        clock=clock,
        writes=writes,
    )


def record_failure(
    conn: sqlite3.Connection,
    spec: ToolSpec,
    kwargs: dict[str, Any],
    error: str,
    *,
    bug: bool,
    fault: FaultRecord | None = None,
) -> None:
    """Log a call that changed nothing in the transcript, outside its rolled-back transaction
    (it consumed no call number)."""
    clock = clock_text(conn)
    _record_unless_full(
        conn,
        spec.name,
        arguments=to_jsonable_python(kwargs, fallback=str),
        ok=False,
        error=error,
        bug=bug,
        result=None,
        clock=clock,
        writes=spec.writes,
        fault=fault,
    )


def _rollback(conn: sqlite3.Connection, session: Session | None, limit: StorageLimit | None) -> None:
    """Undo everything the failed call did, through the session if the tool made one; then the
    storage limit between calls again (its reserve for the failure's record)."""
    if session is not None:
        session.rollback()
    _close(conn, limit)


def _close(conn: sqlite3.Connection, limit: StorageLimit | None) -> None:
    """Roll back whatever transaction is still open on `conn`; then the storage limit between calls again."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")
    if limit is not None:
        limit.wide(conn)


class CallTransaction:
    """Runs an episode's tool calls, one transaction each. It keeps what outlives a call: the
    SQLAlchemy connection the calls run on and the counters the last call committed. The
    episode holds its lock around every use."""

    def __init__(self) -> None:
        self.orm: Connection | None = None  # the SQLAlchemy connection tool calls run on, opened by the first
        # (changed-row count, call_seq, clock, id counters) as the last call committed them (`_call_meta`)
        self.meta: tuple[int, int, datetime, dict[str, int]] | None = None
        self.limit: StorageLimit | None = None  # the episode's storage limit (`mcpsim.engine._storage`)

    def close(self) -> None:
        """Close the SQLAlchemy connection (which closes the episode's sqlite3 connection too)."""
        if self.orm is not None:
            self.orm.close()  # closes the sqlite3 connection too
            self.orm = None

    def forget(self) -> None:
        """Drop the counters the last call committed: the database changed under them."""
        self.meta = None

    def execute(
        self,
        episode: CallTarget,
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
        conn = episode.conn
        if self.orm is None:  # one SQLAlchemy connection for the episode's life (no pool per call)
            self.orm = orm_connection(conn)
        orm = self.orm
        limit = self.limit
        if limit is not None and spec.writes:  # a write may fill the episode up to its limit, not its reserve
            limit.tight(conn)
        conn.execute("BEGIN")  # the bookkeeping below is part of the call
        session: Session | None = None
        ctx: ToolContext | None = None
        try:
            call_seq, clock, counters = self._call_meta(conn)
            call_seq += 1
            now = clock + episode.world.tick + timedelta(seconds=latency)
            ids = IdGenerator(episode.seed, counters, record=True, formats=episode.world.id_formats)
            store.write_call_meta(conn, call_seq, now)  # the change log's triggers read call_seq
            written = conn.total_changes  # rows changed so far, triggers included
            ctx = ToolContext(
                open_session=lambda: Session(bind=orm, expire_on_commit=False),
                connection=conn,
                now=now,
                ids=ids,
                seed=derive_seed(episode.seed, call_seq),
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
            except Exception as exc:  # a business error, the storage limit reached, or a bug
                _rollback(conn, ctx.opened_session, limit)
                return _failed(episode, spec, kwargs, exc, call_seq, fault, limit)
            if timeout:  # applied, but the answer is lost
                value, result, error = None, None, FAULT_MESSAGES["timeout"].format(tool=spec.name, retry_after=0)
            try:
                changes = self._log_and_commit(
                    conn, spec, kwargs, call_seq, now, ids, counters, session, result, error, fault, logged
                )
            except Exception as exc:  # the transcript entry (a large result) did not fit
                if limit is None or not is_full(exc):
                    raise
                _rollback(conn, session, limit)
                return _failed(episode, spec, kwargs, exc, call_seq, fault, limit)
        finally:  # an exception that escaped (not a tool's: those are handled above) leaves nothing open
            made = ctx.opened_session if ctx is not None else None
            if made is not None:
                made.close()
            _close(conn, limit)
        return CallResult(spec.name, value=value, error=error, changes=changes, call_seq=call_seq, fault=fault)

    def _log_and_commit(
        self,
        conn: sqlite3.Connection,
        spec: ToolSpec,
        kwargs: dict[str, Any],
        call_seq: int,
        now: datetime,
        ids: IdGenerator,
        counters: dict[str, int],
        session: Session | None,
        result: Any,
        error: str | None,
        fault: FaultRecord | None,
        logged: bool,
    ) -> list[store.Change]:
        """The end of a call that ran: the ids it drew, its transcript entry, its change log read
        back (if it `logged` any), and COMMIT. Returns the call's changes."""
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
        self.meta = (conn.total_changes, call_seq, now, ids.counters)
        return changes

    def _call_meta(self, conn: sqlite3.Connection) -> tuple[int, datetime, dict[str, int]]:
        """The call counter, the clock and the id counters, as the metadata holds them. The values
        the last call committed are used as they are while the connection has changed no row
        since (SQLite's count of changed rows on it has not moved: no other write, no rollback of
        one); else they are read, three fields in one query (a call never decodes the profile or
        the verdict)."""
        if self.meta is not None and self.meta[0] == conn.total_changes:
            return self.meta[1], self.meta[2], self.meta[3]
        meta = store.meta_values(conn, ("call_seq", "clock", "ids"))
        return meta["call_seq"], meta["clock"], meta["ids"]


def _failed(
    episode: CallTarget,
    spec: ToolSpec,
    kwargs: dict[str, Any],
    exc: Exception,
    call_seq: int,
    fault: FaultRecord | None,
    limit: StorageLimit | None,
) -> CallResult:
    """What a call whose tool raised answers, once rolled back (in the `except` block, so a bug's
    traceback is logged): the episode's storage limit reached, a business error (`WorldError`),
    or a bug in the simulator, never the agent's fault (the episode is flagged)."""
    conn = episode.conn
    if limit is not None and is_full(exc):  # the agent's writes reached the episode's limit
        error = limit.message  # recorded in the limit's reserve, like any call that changed nothing
    elif isinstance(exc, WorldError):
        error = str(exc)
    else:
        add_flag(conn, f"call {call_seq} to {spec.name} raised {type(exc).__name__}: {exc}")
        episode.log.exception("tool bug", tool=spec.name, call_seq=call_seq, arguments=repr(kwargs)[:2000])
        error = BUG_MESSAGE.format(tool=spec.name)
        record_failure(conn, spec, kwargs, error, bug=True, fault=fault)
        return CallResult(spec.name, error=error, bug=True, call_seq=call_seq, fault=fault)
    record_failure(conn, spec, kwargs, error, bug=False, fault=fault)
    return CallResult(spec.name, error=error, call_seq=call_seq, fault=fault)
