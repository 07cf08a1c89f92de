"""Plain SQL for a tool's hot reads: rows of a world's tables read with statements that are built
once per table (the column list, the decoders of JSON and boolean columns) and run with bound
parameters on the call's own sqlite3 connection, inside the call's transaction.

An ORM query costs its query building, its cache key and the loading of objects, on every call;
these cost a prepared statement (SQLite keeps it per connection) and a tuple per row. The rows
come back as named tuples, one class per table, whose columns read as attributes, with the
values the ORM would have given (JSON decoded, booleans as bool), so view code written for ORM
objects reads them unchanged.

    order = sql.get(ctx, Order, order_id)              # WorldError "Order ... not found"
    items = sql.select(ctx, OrderItem, "order_id = ?", (order.id,))   # in creation order

Each read takes the tool's context (or a session). Pending ORM writes of the call are flushed
first, so a read sees everything the call did; a call that only reads never makes a session.

Writes too: `insert` and `update` store values as the ORM's column types would (JSON as
`json.dumps` text, booleans as 1/0: SQLAlchemy's own bind processors), on the
same connection and in the same transaction, so a refusal later in the call undoes them and the
change log (SQLite triggers) records the same rows as an ORM write of the same values.

    payment = sql.insert(ctx, Payment, id=..., order_id=order.id, ...)   # -> a plain row
    sql.update(ctx, Order, order.id, status="cancelled")                 # WorldError if no such row

A name that is no column is a TypeError naming it; so is an insert leaving a column without a
value or default, or an update of the primary key. `update` of a key with no row raises the
business error "<What> <key> not found" (as `get`). Write a row either through the ORM or with
plain SQL within one call, not both: `update` of a row whose ORM object has changes not yet
written is a TypeError (a simulator bug), and it expires the session's object of that row, if
one is loaded, so a later ORM read reloads it. The other way round (an ORM change to a row
written with plain SQL earlier in the call) is not detected. `Writes` queues writes and writes
them in the order the ORM's flush would, for a tool ported from the ORM whose change log (whose
order `CallResult.changes` shows) must not change.
"""

from __future__ import annotations

import json
import sqlite3
from collections import namedtuple
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic.fields import FieldInfo
from sqlalchemy import JSON, Boolean, Connection, Table
from sqlalchemy.dialects import sqlite
from sqlalchemy.orm.attributes import instance_state
from sqlmodel import Session

from mcpsim.world._core import ToolContext, WorldError
from mcpsim.world._views import V, build_view

_DIALECT = sqlite.dialect()


def _decode_bool(value: Any) -> Any:
    return None if value is None else bool(value)


def _decode_json(value: Any) -> Any:
    return None if value is None else json.loads(value)


@dataclass(frozen=True)
class Reader:
    """How to read one table's rows: its columns, the SELECT over them, and per-column decoders."""

    table: str
    label: str  # what "... not found" calls a row of it
    columns: tuple[str, ...]
    select: str  # SELECT "a", "b", ... FROM "table"
    key: str  # the primary key's single column
    decoders: tuple[tuple[int, Callable[[Any], Any]], ...]
    row_type: Any  # the named tuple of the table's columns

    def row(self, values: Sequence[Any]) -> Any:
        if self.decoders:
            values = list(values)
            for index, decode in self.decoders:
                values[index] = decode(values[index])
        return self.row_type._make(values)


_readers: dict[type[Any], Reader] = {}


def reader(model: type[Any]) -> Reader:
    """The reader of a table class (SQLModel, `table=True`), built once per class. A column type
    whose values SQLAlchemy converts in a way not listed here is refused, so a plain read never
    returns a value the ORM would not have."""
    found = _readers.get(model)
    if found is None:
        found = _readers.setdefault(model, _build_reader(model))
    return found


def _build_reader(model: type[Any]) -> Reader:
    table: Table = model.__table__
    decoders: list[tuple[int, Callable[[Any], Any]]] = []
    for index, column in enumerate(table.columns):
        if isinstance(column.type, JSON):
            decoders.append((index, _decode_json))
        elif isinstance(column.type, Boolean):
            decoders.append((index, _decode_bool))
        elif column.type.result_processor(_DIALECT, None) is not None:
            raise TypeError(f"{table.name}.{column.name}: plain reads do not decode {column.type!r} columns")
    keys = [c.name for c in table.primary_key.columns]
    if len(keys) != 1:
        raise TypeError(f"{table.name}: plain reads need a single-column primary key")
    columns = tuple(c.name for c in table.columns)
    return Reader(
        table=table.name,
        label=getattr(model, "__label__", None) or model.__name__,
        columns=columns,
        select="SELECT " + ", ".join(f'"{c}"' for c in columns) + f' FROM "{table.name}"',
        key=keys[0],
        decoders=tuple(decoders),
        row_type=namedtuple(f"{model.__name__}Row", columns),
    )


def view(cls: type[V], row: Any, /, **values: Any) -> V:
    """`cls.from_row(row, **values)` (`mcpsim.world._views.RowView`) for any model: every field
    not given as a keyword is read from the row's attribute of the same name (the `id_field`
    from `row.id`); a field the row lacks, or a keyword the view does not have, is a TypeError
    naming it. The field plan is made once per view class."""
    return build_view(cls, row, values)


Source = Session | ToolContext  # what the reads below take: a tool's context, or a session


def connection(source: Source) -> sqlite3.Connection:
    """The call's sqlite3 connection, in the call's transaction, with the call's pending ORM
    writes flushed to it. Given a tool's context whose session was never asked for, that is the
    context's connection, as is (no session is made). While a session has done nothing (no ORM
    statement, nothing added), the connection it is bound to is the call's, in the call's
    transaction (begun on the driver): it is used as is, and the session does not begin a
    transaction of its own for a plain read."""
    if isinstance(source, ToolContext):
        session = source.opened_session
        if session is None:
            if source.connection is not None:
                return source.connection
            session = source.session
    else:
        session = source
    bind = session.bind
    if (
        isinstance(bind, Connection)
        and not session.in_transaction()
        and not session.new
        and not session.deleted
        and not len(session.identity_map)
    ):
        driver = bind.connection.driver_connection
    else:
        session.flush()  # returns at once when nothing is pending
        driver = session.connection().connection.driver_connection
    if not isinstance(driver, sqlite3.Connection):
        raise TypeError(f"plain reads need a sqlite3 connection, not {type(driver).__name__}")
    return driver


def select(
    session: Source,
    model: type[Any],
    where: str = "",
    params: Sequence[Any] = (),
    *,
    order: str = "rowid",
    limit: int | None = None,
    offset: int = 0,
) -> list[Any]:
    """Rows of `model`'s table matching `where` (SQL with `?` parameters), in `order` (default:
    the order they were created), at most `limit` of them from `offset` on."""
    r = reader(model)
    text = r.select + (f" WHERE {where}" if where else "") + (f" ORDER BY {order}" if order else "")
    if limit is not None or offset:
        text += " LIMIT ? OFFSET ?"
        params = (*params, -1 if limit is None else limit, offset)
    return [r.row(values) for values in connection(session).execute(text, tuple(params))]


def first(session: Source, model: type[Any], where: str, params: Sequence[Any] = ()) -> Any:
    """The first row of `model` matching `where` (in creation order), or None."""
    rows = select(session, model, where, params, limit=1)
    return rows[0] if rows else None


def find(session: Source, model: type[Any], key: Any) -> Any:
    """The row of `model` with primary key `key`, or None."""
    if key is None:
        return None
    r = reader(model)
    values = connection(session).execute(f'{r.select} WHERE "{r.key}" = ?', (key,)).fetchone()
    return None if values is None else r.row(values)


def get(session: Source, model: type[Any], key: Any, *, what: str | None = None) -> Any:
    """The row of `model` with primary key `key`, or the business error "<What> <key> not found"
    (as `ToolContext.get` words it)."""
    row = find(session, model, key)
    if row is None:
        raise WorldError(f"{what or reader(model).label} {key} not found")
    return row


def scalars(session: Source, text: str, params: Sequence[Any] = ()) -> list[Any]:
    """The first column of every row a query returns."""
    return [values[0] for values in connection(session).execute(text, tuple(params))]


def tuples(session: Source, text: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """Every row a query returns, as tuples."""
    return list(connection(session).execute(text, tuple(params)))


def scalar(session: Source, text: str, params: Sequence[Any] = ()) -> Any:
    """The first column of the first row a query returns (None if none)."""
    values = connection(session).execute(text, tuple(params)).fetchone()
    return None if values is None else values[0]


# -- writes --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Writer:
    """How to write one table's rows: its INSERT over every column, the column defaults of the
    table class, and per-column encoders (SQLAlchemy's own bind processors: JSON text as the
    ORM writes it, None in a JSON column as JSON's null as the ORM does, booleans as 1/0)."""

    reader: Reader
    insert: str  # INSERT INTO "table" ("a", "b", ...) VALUES (?, ?, ...)
    defaults: dict[str, FieldInfo]  # column -> its field in the table class, if that has a default
    encoders: dict[str, Callable[[Any], Any]]
    updates: dict[tuple[str, ...], str]  # UPDATE statements by the columns they set, made on first use

    def encode(self, column: str, value: Any) -> Any:
        encode = self.encoders.get(column)
        return value if encode is None else encode(value)

    def values(self, given: dict[str, Any]) -> dict[str, Any]:
        """Every column's value for a new row: `given`, else the class's default (a default
        factory is called for each row)."""
        unknown = [name for name in given if name not in self.reader.columns]
        if unknown:
            raise TypeError(f"{self.reader.table} has no column {unknown[0]!r}")
        values = {}
        for name in self.reader.columns:
            if name in given:
                values[name] = given[name]
            elif name in self.defaults:
                values[name] = self.defaults[name].get_default(call_default_factory=True)
            else:
                raise TypeError(f"{self.reader.table}.{name}: no value given and no default")
        return values

    def update(self, columns: tuple[str, ...]) -> str:
        text = self.updates.get(columns)
        if text is None:
            for name in columns:
                if name not in self.reader.columns:
                    raise TypeError(f"{self.reader.table} has no column {name!r}")
                if name == self.reader.key:
                    raise TypeError(f"{self.reader.table}.{name}: a row's primary key is not updated")
            if not columns:
                raise TypeError(f"{self.reader.table}: an update needs at least one column")
            assignments = ", ".join(f'"{name}" = ?' for name in columns)
            text = self.updates.setdefault(
                columns, f'UPDATE "{self.reader.table}" SET {assignments} WHERE "{self.reader.key}" = ?'
            )
        return text


_writers: dict[type[Any], Writer] = {}


def writer(model: type[Any]) -> Writer:
    """The writer of a table class, built once per class (see `reader` for the columns allowed)."""
    found = _writers.get(model)
    if found is None:
        found = _writers.setdefault(model, _build_writer(model))
    return found


def _build_writer(model: type[Any]) -> Writer:
    r = reader(model)
    table: Table = model.__table__
    encoders: dict[str, Callable[[Any], Any]] = {}
    for column in table.columns:
        encode = column.type.bind_processor(_DIALECT)
        if encode is not None:
            encoders[column.name] = encode
    defaults: dict[str, FieldInfo] = {}
    fields = getattr(model, "model_fields", {})
    for name in r.columns:
        field = fields.get(name)
        if field is not None and not field.is_required():
            defaults[name] = field
    columns = ", ".join(f'"{c}"' for c in r.columns)
    return Writer(
        reader=r,
        insert=f'INSERT INTO "{r.table}" ({columns}) VALUES ({", ".join("?" * len(r.columns))})',
        defaults=defaults,
        encoders=encoders,
        updates={},
    )


def insert(source: Source, model: type[Any], /, **values: Any) -> Any:
    """Insert a row of `model` with `values` (a column not given takes the table class's
    default; a column without one, or a name that is no column, is a TypeError naming it) and
    return it as a plain row. The values are stored as the ORM would store them, so the row and
    its change-log entry are the same as an ORM insert's."""
    w = writer(model)
    row = w.values(values)
    connection(source).execute(w.insert, tuple(w.encode(name, value) for name, value in row.items()))
    return w.reader.row_type._make(row.values())


def update(source: Source, model: type[Any], key: Any, /, **values: Any) -> int:
    """Set `values` on the row of `model` with primary key `key`; a name that is no column (or
    the key column) is a TypeError. The business error "<What> <key> not found" (a WorldError,
    as `get` words it) if there is no such row. Returns the number of rows written (1). An ORM
    object of that row already loaded in the call's session is expired, so it is read again."""
    w = writer(model)
    columns = tuple(values)
    text = w.update(columns)
    session = source.opened_session if isinstance(source, ToolContext) else source
    loaded = _loaded(session, model, key)
    conn = connection(source)
    params = (*(w.encode(name, values[name]) for name in columns), key)
    if conn.execute(text, params).rowcount != 1:
        raise WorldError(f"{w.reader.label} {key} not found")
    if loaded is not None:
        assert session is not None
        session.expire(loaded)
    return 1


def _loaded(session: Session | None, model: type[Any], key: Any) -> Any:
    """The ORM object of the row of `model` with key `key` loaded in the call's session, if any.
    One with changes the ORM has not written yet is a TypeError: that row is being written both
    ways in one call (costs nothing on a call that made no session or loaded nothing)."""
    if session is None or not len(session.identity_map):
        return None
    loaded = session.identity_map.get(session.identity_key(model, key))
    if loaded is not None and instance_state(loaded).modified:
        raise TypeError(
            f"{reader(model).table} {key}: a plain SQL update of a row with ORM changes not yet written; "
            "write a row through the ORM or with plain SQL within one call, not both"
        )
    return loaded


def _flush_order(model: type[Any]) -> str:
    return f"{model.__module__}.{model.__name__}"


class Writes:
    """Writes queued and written the way the ORM's flush writes them, for a tool ported from
    the ORM that must leave the same change log (its order is observable: `CallResult.changes`).

    A flush of SQLAlchemy's unit of work (tables here have no relationships, so no dependency
    orders them) writes table by table in the order of their classes' qualified names; for each
    table, first the updates of rows it loaded, by primary key, then the inserts, in the order
    the rows were added. `update` and `insert` queue; `flush` writes what is queued in that
    order (several updates of one row become one UPDATE, an update of a queued insert changes
    what it inserts). The tool calls `flush` where the ORM flushed: an explicit flush, a query,
    or a `Session.get` of a row not loaded yet (autoflush)."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self._updates: dict[type[Any], dict[Any, dict[str, Any]]] = {}
        self._inserts: dict[type[Any], dict[Any, dict[str, Any]]] = {}

    def update(self, model: type[Any], key: Any, /, **values: Any) -> None:
        """Queue setting `values` on the row of `model` with key `key` (checked at once: a name
        that is no column is a TypeError)."""
        writer(model).update(tuple(values))
        inserted = self._inserts.get(model, {}).get(key)
        if inserted is not None:
            inserted.update(values)
        else:
            self._updates.setdefault(model, {}).setdefault(key, {}).update(values)

    def insert(self, model: type[Any], /, **values: Any) -> Any:
        """Queue a new row of `model` (its values checked and completed with the class's
        defaults at once, see `insert`) and return it as a plain row."""
        w = writer(model)
        row = w.values(values)
        self._inserts.setdefault(model, {})[row[w.reader.key]] = row
        return w.reader.row_type._make(row.values())

    def flush(self) -> None:
        """Write what is queued, in the ORM's order, and forget it."""
        updates, inserts = self._updates, self._inserts
        if not updates and not inserts:
            return
        self._updates, self._inserts = {}, {}
        for model in sorted({*updates, *inserts}, key=_flush_order):
            for key, values in sorted(updates.get(model, {}).items(), key=lambda pair: pair[0]):
                update(self.source, model, key, **values)
            for row in inserts.get(model, {}).values():
                insert(self.source, model, **row)
