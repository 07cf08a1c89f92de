"""The where-DSL: one definition of the row conditions that tasks, checks and setups write, and its
two evaluations, as SQL over a table (`where_sql`) and in Python over a row already in memory
(`row_matches`, for rows of the change log). Both give the same answer for every row.

A where is `{"column": value}` or `{"column": {"op": value, ...}}`; every condition must hold.

| op | meaning |
|---|---|
| `eq`, `ne` | equal, not equal; `null` as the value means IS NULL / IS NOT NULL |
| `gt`, `gte`, `lt`, `lte` | ordered comparisons |
| `in`, `not_in` | one of a list / none of a list |
| `like` | `%` any run of characters, `_` exactly one; case-insensitive |
| `is_null` | `true`: the column is NULL; `false`: it is not |

Semantics are SQLite's, so the SQL path is the reference and Python follows it:

- Comparisons follow SQLite's type conversions before a comparison: against a column of numeric
  affinity (INTEGER, REAL, NUMERIC, BOOLEAN, DATETIME...) text that reads as a number is that
  number (`42` matches `'42'`, `' 42 '`, `'4.2e1'`); against a text column a number is compared
  as its text (`'42'` matches 42, not 42.0, whose text is `'42.0'`). Values of different kinds
  order as NULL < numbers < text < blobs; text compares by code point, case-sensitively.
- NULL is never equal, unequal, greater or smaller than anything: `ne` does not match a NULL
  column, nor does `not_in` (nor `not_in` a list holding `null`), except `not_in: []`.
- `like` is the one operator SQLite does not define the way we want (it folds ASCII case only),
  so both paths call `like()` below (registered on every connection as `mcpsim_like`): case is
  folded with Unicode case folding and both sides are NFC-normalised, so 'ÉCOLE' matches
  '%école%' and a composed é matches a decomposed one; accents still matter ('ecole' does not).
  There is no escape character: `%` and `_` are always wildcards.
"""

from __future__ import annotations

import math
import re
import sqlite3
import threading
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal, cast

from sqlalchemy import Column, Table
from sqlalchemy.dialects import sqlite as sqlite_dialect

Op = Literal["eq", "ne", "gt", "gte", "lt", "lte", "in", "not_in", "like", "is_null"]
Affinity = Literal["integer", "text", "blob", "real", "numeric"]
Scalar = int | float | str | None

COMPARISONS: dict[str, str] = {"eq": "=", "ne": "!=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
OPERATORS: tuple[str, ...] = (*COMPARISONS, "in", "not_in", "like", "is_null")
LIKE_FUNCTION = "mcpsim_like"
_INT64 = (-(2**63), 2**63 - 1)


@dataclass(frozen=True)
class Condition:
    """One validated condition: `column op operand` (operand: a scalar, or a tuple for in/not_in)."""

    column: str
    op: Op
    operand: Any
    affinity: Affinity


# -- parsing (shared by both paths) -------------------------------------------------------------------


def parse_where(table: Table, where: Mapping[str, Any]) -> list[Condition]:
    """The conditions of `where`, checked against the table's columns: ValueError with the reason
    for an unknown column or operator, or an operand the operator cannot take."""
    if not isinstance(where, Mapping):
        raise ValueError(f"a where must be an object of column conditions, not {type(where).__name__}")
    conditions: list[Condition] = []
    for column, condition in where.items():
        if column not in table.columns:
            raise ValueError(f"table {table.name} has no column {column!r}")
        affinity = column_affinity(table.columns[column])
        ops = condition if isinstance(condition, Mapping) else {"eq": condition}
        if not ops:
            raise ValueError(f"{column}: an empty condition; give a value or {{operator: value}}")
        for name, value in ops.items():
            op = _op(column, name)
            conditions.append(Condition(column, op, _operand(column, op, value), affinity))
    return conditions


def _op(column: str, op: Any) -> Op:
    if op not in OPERATORS:
        raise ValueError(f"{column}: unknown operator {op!r} (use {', '.join(OPERATORS)})")
    return cast(Op, op)


def _scalar(column: str, op: Op, value: Any) -> Scalar:
    """An operand as SQLite binds it: booleans are 1 and 0; NaN, infinities and integers past
    64 bits have no SQLite value and are refused."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        if not _INT64[0] <= value <= _INT64[1]:
            raise ValueError(f"{column}: {op} {value} is outside SQLite's 64-bit integer range")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{column}: {op} takes a finite number, not {value}")
        return value
    if value is None or isinstance(value, str):
        return value
    hint = ' (for one of several values, use {"in": [...]})' if isinstance(value, list | tuple) else ""
    raise ValueError(f"{column}: {op} takes a number, text, true/false or null, not {type(value).__name__}{hint}")


def _operand(column: str, op: Op, value: Any) -> Any:
    if op in ("in", "not_in"):
        if not isinstance(value, list | tuple):
            raise ValueError(f"{column}: '{op}' takes a list, not {type(value).__name__}")
        return tuple(_scalar(column, op, v) for v in value)
    if op == "is_null":
        if not isinstance(value, bool):
            raise ValueError(f"{column}: 'is_null' takes true or false, not {value!r}")
        return value
    scalar = _scalar(column, op, value)
    if scalar is None and op not in ("eq", "ne"):
        raise ValueError(f"{column}: '{op}' cannot compare with null (use is_null)")
    return scalar


@lru_cache(maxsize=1024)
def _declared_affinity(declared: str) -> Affinity:
    """SQLite's rules for the affinity of a declared column type (datatype3.html, 3.1)."""
    name = declared.upper()
    if "INT" in name:
        return "integer"
    if any(word in name for word in ("CHAR", "CLOB", "TEXT")):
        return "text"
    if "BLOB" in name or not name:
        return "blob"
    if any(word in name for word in ("REAL", "FLOA", "DOUB")):
        return "real"
    return "numeric"


def column_affinity(column: Column[Any]) -> Affinity:
    """The affinity SQLite gives the column, from the type its CREATE TABLE declares."""
    try:
        declared = str(column.type.compile(dialect=sqlite_dialect.dialect()))
    except Exception:  # a type without a SQLite spelling is declared as none
        declared = ""
    return _declared_affinity(declared)


# -- SQL -------------------------------------------------------------------------------------------------


def where_sql(table: Table, where: Mapping[str, Any]) -> tuple[str, list[Any]]:
    """A WHERE clause (and its parameters) for `where` over `table`; "1" for no conditions. The
    clause calls `mcpsim_like`, which `install` registers (every `store.connect` connection has it)."""
    clauses: list[str] = []
    params: list[Any] = []
    for c in parse_where(table, where):
        column = f'"{c.column}"'
        if c.op in ("eq", "ne") and c.operand is None:
            clauses.append(f"{column} IS {'NOT ' if c.op == 'ne' else ''}NULL")
        elif c.op in COMPARISONS:
            clauses.append(f"{column} {COMPARISONS[c.op]} ?")
            params.append(c.operand)
        elif c.op in ("in", "not_in"):
            marks = ", ".join("?" * len(c.operand))
            clauses.append(f"{column} {'NOT ' if c.op == 'not_in' else ''}IN ({marks})")
            params.extend(c.operand)
        elif c.op == "is_null":
            clauses.append(f"{column} IS {'' if c.operand else 'NOT '}NULL")
        else:  # like
            clauses.append(f"{LIKE_FUNCTION}(?, {column})")
            params.append(c.operand)
    return (" AND ".join(clauses) or "1"), params


def install(conn: sqlite3.Connection) -> None:
    """Register the SQL functions `where_sql` clauses call on a connection."""
    conn.create_function(LIKE_FUNCTION, 2, _like_sql, deterministic=True)


def _like_sql(pattern: Any, value: Any) -> int | None:
    if pattern is None or value is None:
        return None
    return int(like(pattern, value))


# -- Python ----------------------------------------------------------------------------------------------


def row_matches(table: Table, row: Mapping[str, Any], where: Mapping[str, Any]) -> bool:
    """Whether a row of `table` (as read from it: a change log's before or after) satisfies
    `where`, with exactly the answer `where_sql` gives for the same row."""
    for c in parse_where(table, where):
        if c.column not in row:
            raise ValueError(f"the row of {table.name} has no value for column {c.column!r}")
        if _evaluate(c, _stored(row[c.column])) is not True:
            return False
    return True


def _stored(value: Any) -> Scalar | bytes:
    if isinstance(value, bool):
        return int(value)
    if value is None or isinstance(value, int | float | str | bytes):
        return value
    raise ValueError(f"a row value must be a number, text, bytes or null, not {type(value).__name__}")


def _evaluate(c: Condition, value: Scalar | bytes) -> bool | None:
    """SQL's three-valued answer: True, False, or None (unknown: a NULL took part)."""
    if c.op == "is_null":
        return bool((value is None) == c.operand)
    if c.op in ("eq", "ne") and c.operand is None:
        return (value is None) == (c.op == "eq")
    if c.op == "like":
        return None if value is None else like(c.operand, value)
    if c.op in ("in", "not_in"):
        found = _in(value, c.operand, c.affinity)
        if c.op == "in" or not c.operand:
            return found if c.op == "in" else True
        return None if found is None else not found
    order = _compare(value, convert(c.operand, c.affinity))
    return None if order is None else _ORDERED[c.op](order)


_ORDERED: dict[str, Callable[[int], bool]] = {
    "eq": lambda o: o == 0,
    "ne": lambda o: o != 0,
    "gt": lambda o: o > 0,
    "gte": lambda o: o >= 0,
    "lt": lambda o: o < 0,
    "lte": lambda o: o <= 0,
}


def _in(value: Scalar | bytes, items: tuple[Scalar, ...], affinity: Affinity) -> bool | None:
    if not items:
        return False
    if value is None:
        return None
    if any(_compare(value, convert(item, affinity)) == 0 for item in items):
        return True
    return None if None in items else False


def _rank(value: Scalar | bytes) -> int:
    return 1 if isinstance(value, int | float) else 2 if isinstance(value, str) else 3


def _compare(value: Scalar | bytes, operand: Scalar | bytes) -> int | None:
    """SQLite's order of two values: -1, 0 or 1, or None when either is NULL."""
    if value is None or operand is None:
        return None
    left, right = _rank(value), _rank(operand)
    if left != right:
        return -1 if left < right else 1
    # Same kind: numbers numerically; text by code point, as BINARY collation orders UTF-8 bytes.
    return (value > operand) - (value < operand)  # type: ignore[operator]


# -- SQLite's conversions, asked of SQLite itself ------------------------------------------------------------

_converter_lock = threading.Lock()
_converter: sqlite3.Connection | None = None


def convert(operand: Scalar, affinity: Affinity) -> Scalar | bytes:
    """The operand as SQLite converts it before comparing it with a column of this affinity:
    numeric columns give it NUMERIC affinity, text columns TEXT affinity, blob columns none."""
    if operand is None or affinity == "blob":
        return operand
    target = "text" if affinity == "text" else "numeric"
    return _converted(target, type(operand).__name__, operand)


@lru_cache(maxsize=8192)
def _converted(target: str, _kind: str, operand: Scalar) -> Scalar | bytes:
    # `_kind` keeps 1, 1.0 and True apart in the cache (they hash alike).
    global _converter
    with _converter_lock:
        if _converter is None:
            _converter = sqlite3.connect(":memory:", check_same_thread=False)
            _converter.execute("CREATE TABLE affinity (numeric NUMERIC, text TEXT)")
        _converter.execute("DELETE FROM affinity")
        _converter.execute(f"INSERT INTO affinity ({target}) VALUES (?)", (operand,))
        (value,) = _converter.execute(f"SELECT {target} FROM affinity").fetchone()
        return cast(Scalar | bytes, value)


def as_text(value: Scalar | bytes) -> str:
    """A value as text, the way SQLite renders it (4.0 is '4.0', 1e20 is '1.0e+20')."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, float):
        return str(_converted("text", "float", value))
    return str(value)


def fold(text: str) -> str:
    """The case folding of `like`, the one definition: Unicode case folding, NFC on both sides."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())


@lru_cache(maxsize=1024)
def _like_regex(pattern: str) -> re.Pattern[str]:
    parts = (".*" if ch == "%" else "." if ch == "_" else re.escape(ch) for ch in fold(pattern))
    return re.compile("".join(parts), re.DOTALL)


def like(pattern: Scalar | bytes, value: Scalar | bytes) -> bool:
    """`value LIKE pattern` as the where-DSL defines it (see the module's docstring)."""
    if pattern is None or value is None:
        return False
    return _like_regex(as_text(pattern)).fullmatch(fold(as_text(value))) is not None
