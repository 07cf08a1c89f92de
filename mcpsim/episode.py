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
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import structlog
from pydantic import ValidationError
from pydantic_core import to_jsonable_python
from sqlalchemy import Table
from sqlmodel import Session

from mcpsim import sqlite
from mcpsim.seeding import IdGenerator, derive_seed
from mcpsim.templates import TemplateCache, engine_for, process_templates
from mcpsim.world import ToolContext, ToolSpec, World, WorldError

log = structlog.get_logger("mcpsim.episode")

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
    changes: list[sqlite.Change] = field(default_factory=list)
    call_seq: int | None = None  # set for calls that ran (committed or rolled back)

    @property
    def is_error(self) -> bool:
        return self.error is not None


def snapshot_world(data: bytes) -> str:
    """The world name recorded in a snapshot's bytes (ValueError if they are not an episode)."""
    conn = sqlite.connect(data)
    try:
        world = sqlite.read_meta(conn).get("world")
    except sqlite3.Error as exc:
        raise ValueError(f"not an mcpsim episode database ({exc})") from None
    finally:
        conn.close()
    if not isinstance(world, str):
        raise ValueError("not an mcpsim episode database (no world recorded)")
    return world


class Episode:
    """One world instance. Create with `Episode.create(world, seed, scale)`."""

    def __init__(self, world: World, conn: sqlite3.Connection, *, id: str = "default") -> None:
        self.world = world
        self.id = id
        self.conn = conn
        self.engine = engine_for(conn)
        meta = sqlite.read_meta(conn)
        if meta.get("world") != world.name:
            raise ValueError(f"database belongs to world {meta.get('world')!r}, not {world.name!r}")
        self.seed: int = meta["seed"]
        self.scale: str = meta["scale"]
        self.template_version: str = meta["version"]
        self.task_id: str | None = meta.get("task")
        self.flags: list[str] = []  # why this episode must not be graded as a pass
        self.verdict: dict[str, Any] | None = None  # the last verdict, once graded
        self.ended = False
        self.last_used = 0.0  # set by the EpisodeManager that hosts it (its own clock)
        self._lock = threading.Lock()
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
        return cls(world, sqlite.connect(data), id=id)

    @classmethod
    def restore(cls, world: World, snapshot: bytes, *, id: str = "default") -> Episode:
        return cls(world, sqlite.connect(snapshot), id=id)

    # -- tool calls -------------------------------------------------------------------------

    def call(self, tool: str, arguments: dict[str, Any] | None = None) -> CallResult:
        """Validate raw (JSON-like) arguments and run the tool."""
        spec = self.world.tools.get(tool)
        if spec is None:
            known = ", ".join(sorted(self.world.tools))
            return self.refuse(tool, arguments, f"Unknown tool {tool!r}. Available tools: {known}")
        try:
            args = spec.args_model.model_validate(arguments or {})
        except ValidationError as exc:
            return self.refuse(tool, arguments, f"Invalid arguments for {tool}: {exc}")
        return self.run(spec, {name: getattr(args, name) for name in type(args).model_fields})

    def refuse(self, tool: str, arguments: Any, error: str) -> CallResult:
        """Record a call that never ran (unknown tool, invalid arguments) and return its error."""
        spec = self.world.tools.get(tool)
        with self._lock:
            clock = sqlite.read_meta(self.conn)["clock"]
            sqlite.record_call(self.conn, None, tool, to_jsonable_python(arguments, fallback=str), ok=False,
                               error=error, bug=False, result=None, clock=clock, writes=bool(spec and spec.writes))
        return CallResult(tool, error=error)

    def run(self, spec: ToolSpec, kwargs: dict[str, Any]) -> CallResult:
        """Run a tool with already-validated arguments in one transaction."""
        with self._lock:
            if self.ended and spec.writes:
                error = "This episode has ended; its state is frozen and no longer changes."
                self._record_failure(spec, kwargs, error, bug=False)
                return CallResult(spec.name, error=error)
            with Session(self.engine, expire_on_commit=False) as session:
                db = session.connection()  # BEGIN: the bookkeeping below is part of the call
                meta = {k: v for k, v in sqlite.read_meta(self.conn).items() if k in ("call_seq", "clock", "ids")}
                call_seq = meta["call_seq"] + 1
                now = datetime.fromisoformat(meta["clock"]) + self.world.tick
                ids = IdGenerator(self.seed, meta["ids"])
                sqlite.write_meta(self.conn, {"call_seq": call_seq})
                ctx = ToolContext(
                    session=session, now=now, ids=ids, rng=random.Random(derive_seed(self.seed, call_seq)),
                    call_seq=call_seq,
                )
                try:
                    value = spec.fn(ctx, **kwargs)
                    session.flush()
                    result = to_jsonable_python(value)
                except WorldError as exc:
                    session.rollback()
                    self._record_failure(spec, kwargs, str(exc), bug=False)
                    return CallResult(spec.name, error=str(exc), call_seq=call_seq)
                except Exception as exc:  # a bug in the simulator, never the agent's fault
                    session.rollback()
                    reason = f"call {call_seq} to {spec.name} raised {type(exc).__name__}: {exc}"
                    self.flags.append(reason)
                    self.log.exception("tool bug", tool=spec.name, call_seq=call_seq, arguments=repr(kwargs)[:2000])
                    error = BUG_MESSAGE.format(tool=spec.name)
                    self._record_failure(spec, kwargs, error, bug=True)
                    return CallResult(spec.name, error=error, bug=True, call_seq=call_seq)
                sqlite.write_meta(self.conn, {"clock": now.isoformat(), "ids": ids.counters})
                sqlite.record_call(self.conn, call_seq, spec.name, to_jsonable_python(kwargs), ok=True, error=None,
                                   bug=False, result=result, clock=now.isoformat(), writes=spec.writes)
                changes = sqlite.read_changes(self.conn, call_seq)
                del db
                session.commit()
        return CallResult(spec.name, value=value, changes=changes, call_seq=call_seq)

    def _record_failure(self, spec: ToolSpec, kwargs: dict[str, Any], error: str, *, bug: bool) -> None:
        """Log a call that changed nothing in the transcript, outside its rolled-back transaction
        (it consumed no call number)."""
        clock = sqlite.read_meta(self.conn)["clock"]
        sqlite.record_call(self.conn, None, spec.name, to_jsonable_python(kwargs, fallback=str), ok=False,
                           error=error, bug=bug, result=None, clock=clock, writes=spec.writes)

    # -- lifecycle ---------------------------------------------------------------------------

    def end(self) -> None:
        """Freeze the episode: from now on write tools are refused, reads still answer."""
        self.ended = True

    @property
    def flagged(self) -> bool:
        return bool(self.flags)

    def close(self) -> None:
        self.engine.dispose()
        self.conn.close()

    def snapshot(self) -> bytes:
        """The database bytes: world rows, clock, id counters and change log."""
        with self._lock:
            return self.conn.serialize()

    def fork(self, id: str = "default") -> Episode:
        """A new, independent episode starting from this one's current state."""
        return Episode.restore(self.world, self.snapshot(), id=id)

    # -- reading state -----------------------------------------------------------------------

    def state_hash(self) -> str:
        with self._lock:
            return sqlite.state_hash(self.conn, self.world.metadata)

    def tables(self, names: list[str] | None = None, limit: int | None = None) -> dict[str, list[dict[str, Any]]]:
        with self._lock:
            return {
                t.name: sqlite.dump_table(self.conn, t, limit)
                for t in sqlite.world_tables(self.world.metadata)
                if names is None or t.name in names
            }

    def transcript(self) -> list[sqlite.CallRecord]:
        """Every call this episode saw, in order, refused and failed ones included."""
        with self._lock:
            return sqlite.read_calls(self.conn)

    def changes(self) -> list[sqlite.Change]:
        with self._lock:
            return sqlite.read_changes(self.conn)

    def clock(self) -> datetime:
        with self._lock:
            return datetime.fromisoformat(sqlite.read_meta(self.conn)["clock"])

    @property
    def calls(self) -> int:
        with self._lock:
            return sqlite.read_meta(self.conn)["call_seq"]

    def table(self, name: str) -> Table:
        try:
            return self.world.metadata.tables[name]
        except KeyError:
            raise ValueError(f"world {self.world.name} has no table {name!r}") from None

    def select(self, table: str, where: dict[str, Any]) -> list[dict[str, Any]]:
        """Rows of `table` matching `where` (see `sqlite.where_sql`)."""
        clause, params = sqlite.where_sql(self.table(table), where)
        return self.query(f'SELECT * FROM "{table}" WHERE {clause}', tuple(params))

    def edit(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> int:
        """Run one write statement outside any tool (task setup, never an agent's path); returns
        the number of rows it changed. Logged like a call's changes, under call number 0."""
        with self._lock:
            saved = sqlite.read_meta(self.conn)["call_seq"]
            self.conn.execute("BEGIN")
            try:
                sqlite.write_meta(self.conn, {"call_seq": 0})
                count = self.conn.execute(sql, tuple(params)).rowcount
                sqlite.write_meta(self.conn, {"call_seq": saved})
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")
            return count

    def query(self, sql: str, params: tuple[Any, ...] | dict[str, Any] = ()) -> list[dict[str, Any]]:
        """Read-only SQL over the episode's database (tests, graders, debugging)."""
        with self._lock:
            self.conn.execute("PRAGMA query_only = ON")
            try:
                cur = self.conn.execute(sql, params)
                names = [d[0] for d in cur.description or ()]
                return [dict(zip(names, row, strict=True)) for row in cur]
            finally:
                self.conn.execute("PRAGMA query_only = OFF")
