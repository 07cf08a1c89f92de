"""Raw SQLite for episodes: cloning bytes, the bookkeeping tables, the episode's metadata
(`EpisodeMeta`), row-level change capture and the canonical state hash.

Change capture uses triggers, not ORM events: every write is logged, whether a tool went
through SQLModel or raw SQL. The log and the episode's clock and id counters live in the database
itself, so cloning or snapshotting the bytes carries all of an episode's state.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Mapping
from datetime import datetime
from functools import cache
from typing import Annotated, Any, Literal, NamedTuple, cast, get_type_hints

from pydantic import BaseModel, BeforeValidator, ConfigDict, PlainSerializer, TypeAdapter, ValidationError
from sqlalchemy import MetaData, Table

from mcpsim.engine import _query as query
from mcpsim.engine._faults import FaultProfile, FaultRecord

META = "_mcpsim_meta"
CHANGES = "_mcpsim_changes"
CALLS = "_mcpsim_calls"
IDS = "_mcpsim_ids"  # the ids each committed call drew from the episode's IdGenerator
FAULTS = "_faults"  # the change log's pseudo-table for injected faults
FORMAT = 5  # bump when the bookkeeping tables change: cached templates of another format are rebuilt


class CallRecord(NamedTuple):
    """One tool call as the episode saw it: committed (`call_seq` set, `ok`) or refused/rolled
    back (`call_seq` None). `arguments` are as sent; `result` is the JSON the agent got."""

    seq: int
    call_seq: int | None
    tool: str
    arguments: Any
    ok: bool
    error: str | None
    bug: bool
    result: Any
    clock: str
    writes: bool
    fault: FaultRecord | None = None  # what the fault injector did to this call


RowOp = Literal["insert", "update", "delete"]
ChangeOp = Literal["insert", "update", "delete", "fault"]  # a row's change, or an injected fault's record


class Change(NamedTuple):
    """One entry of the change log. A row changed by one call: `key` is the row's primary key as a
    JSON array; `before`/`after` are the whole row (None for an insert's before or a delete's
    after). Or an injected fault (`op` "fault", table FAULTS): `key` is `[tool, attempt]`, `after`
    the `FaultRecord`, and `call_seq` 0 for a call that never ran."""

    call_seq: int
    table: str
    op: ChangeOp
    key: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None

    @property
    def fault(self) -> FaultRecord | None:
        """The fault this entry records, if it records one."""
        return cast(FaultRecord, self.after) if self.op == "fault" else None


MetaKey = Literal[
    "world",
    "version",
    "seed",
    "scale",
    "call_seq",
    "clock",
    "ids",
    "base_hash",
    "edge_data",
    "task",
    "faults",
    "fault_attempts",
    "ended",
    "flags",
    "verdict",
    "roles",
]


def _from_iso(value: Any) -> Any:
    return datetime.fromisoformat(value) if isinstance(value, str) else value


# Stored as `datetime.isoformat()` writes it ("+00:00", not pydantic's "Z"), as it always was.
IsoDatetime = Annotated[datetime, BeforeValidator(_from_iso), PlainSerializer(datetime.isoformat, return_type=str)]


class EpisodeMeta(BaseModel):
    """An episode's metadata, as its database's META table holds it: one row per field, the value
    as JSON (the format of every database and snapshot written so far). A template sets the
    identity, the clock and the counters; the rest is written as the episode goes (`write_meta`)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    world: str
    version: str  # the world's version the database was built by
    seed: int
    scale: str
    call_seq: int  # the number of the latest committed call (0 before the first)
    clock: IsoDatetime  # the episode's virtual time
    ids: dict[str, int]  # the id generator's counters, by namespace
    base_hash: str | None = None  # the full state hash of the rows the episode started from
    edge_data: bool = False  # the world's edge-case data was added to the template
    task: str | None = None  # the task the episode was created for
    faults: FaultProfile | None = None  # the fault profile in force
    fault_attempts: dict[str, int] = {}  # attempts per tool so far (what fault draws are keyed by)
    ended: bool = False  # frozen: write tools are refused
    flags: tuple[str, ...] = ()  # simulator bugs the episode hit: it can never pass
    verdict: dict[str, Any] | None = None  # the stored verdict (`mcpsim.grading`'s JSON), once graded
    roles: dict[int, str] = {}  # the task role that made each call, by transcript position (`label_calls`)

    def rows(self, *, only_set: bool = False) -> dict[str, Any]:
        """The JSON value of each field by META key (with `only_set`, the fields given explicitly)."""
        return self.model_dump(mode="json", exclude_unset=only_set)


@cache
def _field_adapter(key: MetaKey) -> TypeAdapter[Any]:
    """Validates and serializes one field alone, exactly as the model does (Annotated kept)."""
    return TypeAdapter(get_type_hints(EpisodeMeta, include_extras=True)[key])


def connect(data: bytes | bytearray | None = None) -> sqlite3.Connection:
    """A private in-memory database, optionally loaded from serialized bytes (about 1 ms)."""
    conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    if data is not None:
        conn.deserialize(data)
    conn.execute("PRAGMA foreign_keys = ON")
    query.install(conn)  # the where-DSL's SQL functions
    return conn


def world_tables(metadata: MetaData) -> list[Table]:
    return sorted(metadata.sorted_tables, key=lambda t: t.name)


def _pk_columns(table: Table) -> list[str]:
    cols = [c.name for c in table.primary_key.columns]
    if not cols:
        raise ValueError(f"table {table.name} has no primary key; every world table needs one")
    return cols


def _json_row(alias: str, columns: Iterable[str]) -> str:
    return "json_object(" + ", ".join(f"'{c}', {alias}.\"{c}\"" for c in columns) + ")"


def install_bookkeeping(conn: sqlite3.Connection, metadata: MetaData, meta: EpisodeMeta | None) -> None:
    """Create the meta and change-log tables and a trigger per table and operation, and write
    `meta`'s explicitly set fields (None: an empty META table, for a reference schema)."""
    conn.execute(f"CREATE TABLE {META} (key TEXT PRIMARY KEY, value)")
    conn.execute(
        f"CREATE TABLE {CHANGES} (seq INTEGER PRIMARY KEY, call_seq INTEGER NOT NULL, tbl TEXT NOT NULL,"
        " op TEXT NOT NULL, pk TEXT NOT NULL, before TEXT, after TEXT)"
    )
    conn.execute(f"CREATE INDEX {CHANGES}_call ON {CHANGES}(call_seq)")
    conn.execute(
        f"CREATE TABLE {CALLS} (seq INTEGER PRIMARY KEY, call_seq INTEGER, tool TEXT NOT NULL, arguments TEXT,"
        " ok INTEGER NOT NULL, error TEXT, bug INTEGER NOT NULL, result TEXT, clock TEXT NOT NULL,"
        " writes INTEGER NOT NULL, fault TEXT)"
    )
    conn.execute(f"CREATE TABLE {IDS} (call_seq INTEGER NOT NULL, namespace TEXT NOT NULL, value NOT NULL)")
    if meta is not None:
        _write_rows(conn, meta.rows(only_set=True))
    call_seq = f"(SELECT value FROM {META} WHERE key = 'call_seq')"
    for table in world_tables(metadata):
        cols = [c.name for c in table.columns]
        pk = _pk_columns(table)

        def key(alias: str, pk: list[str] = pk) -> str:
            return "json_array(" + ", ".join(f'{alias}."{c}"' for c in pk) + ")"

        def log(op: RowOp, key_sql: str, before: str, after: str, name: str = table.name) -> str:
            return (
                f"INSERT INTO {CHANGES}(call_seq, tbl, op, pk, before, after) "
                f"VALUES ({call_seq}, '{name}', '{op}', {key_sql}, {before}, {after});"
            )

        changed = " OR ".join(f'OLD."{c}" IS NOT NEW."{c}"' for c in cols)
        t = table.name
        conn.executescript(
            f"""
            CREATE TRIGGER "_mcpsim_{t}_insert" AFTER INSERT ON "{t}" BEGIN
              {log("insert", key("NEW"), "NULL", _json_row("NEW", cols))}
            END;
            CREATE TRIGGER "_mcpsim_{t}_update" AFTER UPDATE ON "{t}" WHEN {changed} BEGIN
              {log("update", key("NEW"), _json_row("OLD", cols), _json_row("NEW", cols))}
            END;
            CREATE TRIGGER "_mcpsim_{t}_delete" AFTER DELETE ON "{t}" BEGIN
              {log("delete", key("OLD"), _json_row("OLD", cols), "NULL")}
            END;
            """
        )


class MetaError(ValueError):
    """The database's metadata is not an episode's (missing or malformed fields)."""


def _invalid(exc: ValidationError) -> MetaError:
    problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'meta'}: {e['msg']}" for e in exc.errors()[:5])
    return MetaError(f"not an mcpsim episode database: its metadata is invalid ({problems})")


def read_meta(conn: sqlite3.Connection) -> EpisodeMeta:
    """The whole metadata record (MetaError if it is not an episode's). Keys this version does
    not know are ignored; a null value reads as the field's default."""
    rows = {k: json.loads(v) for k, v in conn.execute(f"SELECT key, value FROM {META}")}
    try:
        return EpisodeMeta.model_validate({k: v for k, v in rows.items() if v is not None})
    except ValidationError as exc:
        raise _invalid(exc) from None


def meta_value(conn: sqlite3.Connection, key: MetaKey) -> Any:
    """One field of the metadata, validated like `read_meta` (for the hot paths that need one
    field: the call counter, the clock, the freeze). A field never written reads as its default."""
    row = conn.execute(f"SELECT value FROM {META} WHERE key = ?", (key,)).fetchone()
    field = EpisodeMeta.model_fields[key]
    if row is None or row[0] is None:
        if field.is_required():
            raise MetaError(f"not an mcpsim episode database: its metadata has no {key}")
        return field.get_default(call_default_factory=True)
    try:
        return _field_adapter(key).validate_python(json.loads(row[0]))
    except ValidationError as exc:
        raise _invalid(exc) from None


def meta_values(conn: sqlite3.Connection, keys: tuple[MetaKey, ...]) -> dict[MetaKey, Any]:
    """Some fields of the metadata in one query, each read as `meta_value` reads it."""
    marks = ", ".join("?" * len(keys))
    stored = dict(conn.execute(f"SELECT key, value FROM {META} WHERE key IN ({marks})", keys).fetchall())
    values: dict[MetaKey, Any] = {}
    for key in keys:
        text = stored.get(key)
        field = EpisodeMeta.model_fields[key]
        if text is None:
            if field.is_required():
                raise MetaError(f"not an mcpsim episode database: its metadata has no {key}")
            values[key] = field.get_default(call_default_factory=True)
            continue
        try:
            values[key] = _field_adapter(key).validate_python(json.loads(text))
        except ValidationError as exc:
            raise _invalid(exc) from None
    return values


def write_meta(conn: sqlite3.Connection, changes: Mapping[MetaKey, Any]) -> None:
    """Set some fields of the metadata. Each value is checked against its field (ValueError for
    an unknown key or a value of the wrong type) and stored as the JSON `read_meta` expects."""
    rows: dict[str, Any] = {}
    for key, value in changes.items():
        if key not in EpisodeMeta.model_fields:
            raise MetaError(f"{key!r} is not a field of an episode's metadata ({', '.join(EpisodeMeta.model_fields)})")
        adapter = _field_adapter(key)
        try:
            rows[key] = adapter.dump_python(adapter.validate_python(value), mode="json")
        except ValidationError as exc:
            raise MetaError(f"invalid value for the episode's {key}: {exc.errors()[0]['msg']}") from None
    _write_rows(conn, rows)


def write_call_meta(conn: sqlite3.Connection, call_seq: int, clock: datetime) -> None:
    """`write_meta(conn, {"call_seq": call_seq, "clock": clock})`, stored the same, without
    validating the engine's own values: every tool call writes these two."""
    _write_rows(conn, {"call_seq": call_seq, "clock": clock.isoformat()})


def _write_rows(conn: sqlite3.Connection, rows: Mapping[str, Any]) -> None:
    conn.executemany(
        f"INSERT INTO {META}(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [(k, json.dumps(v)) for k, v in rows.items()],
    )


def last_position(conn: sqlite3.Connection) -> int:
    """The transcript position of the latest call (0 before the first)."""
    return int(conn.execute(f"SELECT coalesce(max(seq), 0) FROM {CALLS}").fetchone()[0])


def label_calls(conn: sqlite3.Connection, after: int, role: str) -> None:
    """Record `role` as the maker of every call past transcript position `after` (the calls one
    request of that role just added), in the metadata's `roles`."""
    new = [seq for (seq,) in conn.execute(f"SELECT seq FROM {CALLS} WHERE seq > ?", (after,))]
    if new:
        roles = meta_value(conn, "roles")
        write_meta(conn, {"roles": {**roles, **dict.fromkeys(new, role)}})


MAX_REJECTED_ARGUMENTS = 4096  # bytes of a failed or refused call's arguments kept in the transcript
MAX_REJECTED_TEXT = 4096  # characters of its error message kept
MAX_TOOL_NAME = 256  # characters of a tool name kept (an unknown tool's name is whatever was sent)
TRUNCATED = "$truncated"  # marks arguments stored cut short: {"$truncated": true, "$bytes": n, "$head": "..."}


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… [{len(text)} characters in all]"


class JsonText(str):
    """A result already serialized as JSON (by pydantic-core, once): the transcript stores it as is."""


def record_call(
    conn: sqlite3.Connection,
    call_seq: int | None,
    tool: str,
    arguments: Any,
    *,
    ok: bool,
    error: str | None,
    bug: bool,
    result: Any,
    clock: str,
    writes: bool,
    fault: FaultRecord | None = None,
) -> None:
    """Append one call to the transcript. A call that did not succeed (refused, invalid, failed)
    is whatever a client sent: its arguments are kept whole only up to MAX_REJECTED_ARGUMENTS
    bytes of JSON, else as `{"$truncated": true, "$bytes": <full size>, "$head": <first bytes>}`,
    and its tool name and error are clipped, so junk cannot grow an episode without bound."""
    text = json.dumps(arguments, default=str)  # ASCII: one character per byte
    if not ok:
        if len(text) > MAX_REJECTED_ARGUMENTS:
            text = json.dumps({TRUNCATED: True, "$bytes": len(text), "$head": text[:MAX_REJECTED_ARGUMENTS]})
        tool = _clip(tool, MAX_TOOL_NAME)
        error = None if error is None else _clip(error, MAX_REJECTED_TEXT)
    conn.execute(
        f"INSERT INTO {CALLS}(call_seq, tool, arguments, ok, error, bug, result, clock, writes, fault)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            call_seq,
            tool,
            text,
            ok,
            error,
            bug,
            None if result is None else result if isinstance(result, JsonText) else json.dumps(result, default=str),
            clock,
            writes,
            None if fault is None else json.dumps(fault),
        ),
    )
    if fault is not None:  # faults are part of the change log too, under a table of their own
        conn.execute(
            f"INSERT INTO {CHANGES}(call_seq, tbl, op, pk, before, after) VALUES (?, ?, 'fault', ?, NULL, ?)",
            (call_seq or 0, FAULTS, json.dumps([tool, fault["attempt"]]), json.dumps(fault)),
        )


def record_ids(conn: sqlite3.Connection, call_seq: int, drawn: Iterable[tuple[str, int | str]]) -> None:
    """Store the ids a call drew (inside the call's transaction: a refused call keeps none)."""
    conn.executemany(
        f"INSERT INTO {IDS}(call_seq, namespace, value) VALUES (?, ?, ?)",
        [(call_seq, namespace, value) for namespace, value in drawn],
    )


def read_ids(conn: sqlite3.Connection) -> dict[int | str, str]:
    """Every id the episode's calls drew, with its namespace."""
    return {value: namespace for namespace, value in conn.execute(f"SELECT namespace, value FROM {IDS}")}


def read_calls(conn: sqlite3.Connection, after: int = 0) -> list[CallRecord]:
    """The transcript, in order; `after`: only the calls whose position (`seq`) is past it."""
    rows = conn.execute(
        f"SELECT seq, call_seq, tool, arguments, ok, error, bug, result, clock, writes, fault FROM {CALLS}"
        " WHERE seq > ? ORDER BY seq",
        (after,),
    )
    return [
        CallRecord(
            seq,
            cs,
            tool,
            json.loads(a) if a else None,
            bool(ok),
            err,
            bool(bug),
            json.loads(r) if r is not None else None,
            clock,
            bool(w),
            cast(FaultRecord, json.loads(f)) if f else None,
        )
        for seq, cs, tool, a, ok, err, bug, r, clock, w, f in rows
    ]


def clear_log(conn: sqlite3.Connection) -> None:
    """Forget the change log and transcript (after a task's setup: they belong to the author)."""
    conn.execute(f"DELETE FROM {CHANGES}")
    conn.execute(f"DELETE FROM {CALLS}")
    conn.execute(f"DELETE FROM {IDS}")


class NetChange(NamedTuple):
    table: str
    key: str
    before: dict[str, Any] | None  # the row at the start of the episode (None: it did not exist)
    after: dict[str, Any] | None  # the row at the end (None: it no longer exists)

    @property
    def op(self) -> RowOp:
        return "insert" if self.before is None else "delete" if self.after is None else "update"


class NetChanges(dict[tuple[str, str], NetChange]):
    """Net row changes by (table, primary-key JSON), and the ids the episode's calls drew
    (`generated`: id -> namespace). Which id a new row gets depends on the order of the writes
    that drew ids, so comparisons rename exactly these values."""

    def __init__(
        self,
        changes: Mapping[tuple[str, str], NetChange] | None = None,
        generated: Mapping[int | str, str] | None = None,
    ) -> None:
        super().__init__(changes or {})
        self.generated: dict[int | str, str] = dict(generated or {})


def net_changes(changes: list[Change], generated: Mapping[int | str, str] | None = None) -> NetChanges:
    """First `before` and last `after` per row; rows that ended as they began are dropped.
    `generated` (from `read_ids`) travels with them."""
    first: dict[tuple[str, str], dict[str, Any] | None] = {}
    last: dict[tuple[str, str], dict[str, Any] | None] = {}
    for c in changes:
        if c.op == "fault":  # injected faults are logged beside row changes; they are not rows
            continue
        key = (c.table, c.key)
        first.setdefault(key, c.before)
        last[key] = c.after
    return NetChanges({k: NetChange(k[0], k[1], first[k], last[k]) for k in first if first[k] != last[k]}, generated)


def read_changes(conn: sqlite3.Connection, call_seq: int | None = None, through: int | None = None) -> list[Change]:
    """The change log in order: every entry, those of the call numbered `call_seq`, or with
    `through` those of the calls numbered `call_seq` to `through`."""
    sql = f"SELECT call_seq, tbl, op, pk, before, after FROM {CHANGES}"
    if call_seq is None:
        rows = conn.execute(sql + " ORDER BY seq")
    elif through is None:
        rows = conn.execute(sql + " WHERE call_seq = ? ORDER BY seq", (call_seq,))
    else:
        rows = conn.execute(sql + " WHERE call_seq BETWEEN ? AND ? ORDER BY seq", (call_seq, through))
    return [
        Change(seq, tbl, op, pk, json.loads(b) if b else None, json.loads(a) if a else None)
        for seq, tbl, op, pk, b, a in rows
    ]


def read_changes_by_role(conn: sqlite3.Connection) -> list[tuple[Change, str | None]]:
    """The change log in order, each entry with the task role whose call made it (the metadata's
    `roles`: a team episode's role endpoints label their calls; None for any other call)."""
    roles = meta_value(conn, "roles")
    made = conn.execute(f"SELECT seq, call_seq FROM {CALLS} WHERE call_seq IS NOT NULL") if roles else []
    by_call = {call_seq: roles[seq] for seq, call_seq in made if seq in roles}
    return [(change, by_call.get(change.call_seq)) for change in read_changes(conn)]


def dump_table(conn: sqlite3.Connection, table: Table, limit: int | None = None) -> list[dict[str, Any]]:
    order = ", ".join(f'"{c}"' for c in _pk_columns(table))
    sql = f'SELECT * FROM "{table.name}" ORDER BY {order}' + (f" LIMIT {int(limit)}" if limit is not None else "")
    cur = conn.execute(sql)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur]


def state_hash(conn: sqlite3.Connection, metadata: MetaData) -> str:
    """The episode's state hash: its base hash (the full hash of the rows it started from,
    computed once per template) combined with its net row changes from the change log. The
    cost grows with what changed, not with the database. Two episodes from bases with the same
    rows hash the same exactly when their rows are the same."""
    base = meta_value(conn, "base_hash")
    if base is None:
        return full_state_hash(conn, metadata)
    net = net_changes(read_changes(conn))
    if not net:
        return str(base)  # unchanged: the full hash of the rows, as for a database without a base
    h = hashlib.sha256(base.encode())
    for (table, key), change in sorted(net.items()):
        h.update(json.dumps([table, key, change.after], sort_keys=True, default=str, separators=(",", ":")).encode())
        h.update(b"\n")
    return h.hexdigest()


def rebase(conn: sqlite3.Connection, metadata: MetaData) -> None:
    """Make the current rows the episode's base: clear the change log and transcript and record
    the rows' full hash (after building a template, its edge-case data or a task's setup)."""
    clear_log(conn)
    write_meta(conn, {"base_hash": full_state_hash(conn, metadata)})


def full_state_hash(conn: sqlite3.Connection, metadata: MetaData) -> str:
    """sha256 over every world table's rows in primary-key order. Bookkeeping (clock, ids,
    change log) is left out: two databases whose tables hold the same rows hash the same."""
    h = hashlib.sha256()
    for table in world_tables(metadata):
        order = ", ".join(f'"{c}"' for c in _pk_columns(table))
        cur = conn.execute(f'SELECT * FROM "{table.name}" ORDER BY {order}')
        h.update(json.dumps([table.name, [d[0] for d in cur.description]]).encode())
        for row in cur:
            h.update(json.dumps(row, default=str, separators=(",", ":")).encode())
            h.update(b"\n")
    return h.hexdigest()
