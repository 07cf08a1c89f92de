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
"""

from __future__ import annotations

import json
import sqlite3
from collections import namedtuple
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import JSON, Boolean, Connection, Table
from sqlalchemy.dialects import sqlite
from sqlmodel import Session

from mcpsim.world.core import ToolContext, WorldError
from mcpsim.world.views import V, build_view

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
    """`cls.from_row(row, **values)` (`mcpsim.world.views.RowView`) for any model: every field
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
