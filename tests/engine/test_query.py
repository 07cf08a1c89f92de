"""The where-DSL (mcpsim.engine._query): `where_sql` over SQLite and `row_matches` in Python give the
same answer for every where clause over the same rows (every operator; integers, floats, text
that reads as a number, accents, case, NULL, lists), and refuse the same malformed clauses."""

from __future__ import annotations

import itertools
import json
import random
import sqlite3
from typing import Any

import pytest
from sqlalchemy import Boolean, Column, DateTime, Float, Integer, LargeBinary, MetaData, Numeric, String, Table, Text

from mcpsim.engine import _query as query
from mcpsim.engine import _store as store
from mcpsim.engine._templates import engine_for

METADATA = MetaData()
THINGS = Table(
    "things", METADATA,
    Column("id", Integer, primary_key=True),
    Column("n_int", Integer), Column("n_float", Float), Column("n_num", Numeric), Column("flag", Boolean),
    Column("s_varchar", String), Column("s_text", Text), Column("at", DateTime), Column("raw", LargeBinary),
)  # fmt: skip
COLUMNS = [c.name for c in THINGS.columns if c.name != "id"]

INTS = [0, 1, 42, -7, 2**62, -(2**63)]
FLOATS = [42.0, 4.5, -0.5, 1e20, 0.1, 1.0]
DIGITS = ["42", " 42 ", "42.0", "4.5", "042", "1e3", "0x10", "+5", "-0", "4.2e1", "1"]
ACCENTS = ["café", "CAFÉ", "cafe\u0301", "Café au lait", "école", "ÉCOLE", "Ecole", "straße", "STRASSE", "ǅ", "ı"]
TEXT = ["Abc", "ABC", "abc", "", "%", "_", "a_c", "2026-05-15T09:00:00", "2026-05-01", "zzz", "Ω≈ç"]
VALUES: list[Any] = [*INTS, *FLOATS, *DIGITS, *ACCENTS, *TEXT, None]
PATTERNS = ["%afé%", "caf_", "CAF%", "%É%", "%e\u0301%", "%4%", "4_", "%.0", "_", "%", "", "ecole", "ÉCOLE", "%ss%",
            "%SS%", "a\\_c", "a_c", "%_%", "2026-05%", 42, 4.5, "ǆ", "I"]  # fmt: skip


@pytest.fixture(scope="module")
def db() -> tuple[sqlite3.Connection, list[dict[str, Any]], list[dict[str, Any]]]:
    """A table holding every kind of value in every column (stored with the column's affinity),
    and its rows read back two ways: plain SELECT, and as JSON as the change log records them
    (leaving out rows JSON cannot carry exactly: json_object writes a REAL with 15 significant
    digits, so 2.0**62 comes back as another number)."""
    conn = store.connect()
    METADATA.create_all(engine_for(conn))
    rng = random.Random(12)
    rows = [[i, *(VALUES[(i + k) % len(VALUES)] for k in range(len(COLUMNS)))] for i in range(len(VALUES))]
    rows += [[len(rows) + i, *(rng.choice(VALUES) for _ in COLUMNS)] for i in range(60)]
    marks = ", ".join("?" * (len(COLUMNS) + 1))
    conn.executemany(f"INSERT INTO things VALUES ({marks})", rows)
    cur = conn.execute("SELECT * FROM things ORDER BY id")
    names = [d[0] for d in cur.description]
    plain = [dict(zip(names, row, strict=True)) for row in cur]
    as_json = "json_object(" + ", ".join(f"'{n}', \"{n}\"" for n in names) + ")"
    logged = [json.loads(text) for (text,) in conn.execute(f"SELECT {as_json} FROM things ORDER BY id")]
    faithful = [row for row, original in zip(logged, plain, strict=True) if row == original]
    assert len(faithful) > len(plain) * 3 // 4
    return conn, plain, faithful


def both_ways(
    db: tuple[sqlite3.Connection, list[dict[str, Any]], list[dict[str, Any]]], where: dict[str, Any]
) -> tuple[list[int], list[int], list[int]]:
    conn, plain, logged = db
    clause, params = query.where_sql(THINGS, where)
    in_sql = [row[0] for row in conn.execute(f"SELECT id FROM things WHERE {clause} ORDER BY id", params)]
    in_python = [row["id"] for row in plain if query.row_matches(THINGS, row, where)]
    in_log = [row["id"] for row in logged if query.row_matches(THINGS, row, where)]
    return in_sql, in_python, in_log


def clauses() -> list[dict[str, Any]]:
    """Every operator on every column, with operands of every kind."""
    found: list[dict[str, Any]] = []
    operands: list[Any] = [*VALUES, True, False]
    for column in COLUMNS:
        for op in ("eq", "ne", "gt", "gte", "lt", "lte"):
            found += [{column: {op: v}} for v in operands if v is not None or op in ("eq", "ne")]
        found += [{column: v} for v in operands]
        found += [{column: {"like": p}} for p in PATTERNS]
        found += [{column: {"is_null": b}} for b in (True, False)]
        lists: list[list[Any]] = [
            [],
            [None],
            [42],
            ["42"],
            [42, None],
            ["café", "abc"],
            [4.5, "4.5", 1e20],
            ["CAFÉ", None, 0],
            [True, "ABC"],
            [" 42 ", -7, "zzz"],
        ]
        found += [{column: {op: items}} for op in ("in", "not_in") for items in lists]
    return found


def test_sql_and_python_agree_on_every_operator_and_kind_of_value(db):
    checked = disagreements = 0
    problems: list[str] = []
    for where in clauses():
        in_sql, in_python, in_log = both_ways(db, where)
        checked += 1
        logged_ids = {row["id"] for row in db[2]}
        if in_python != in_sql or in_log != [i for i in in_sql if i in logged_ids]:
            disagreements += 1
            problems.append(f"{where}: sql {in_sql} python {in_python} log {in_log}")
    print(f"{checked} where clauses over {len(db[1])} rows, {disagreements} disagreements")
    assert checked > 2000
    assert not problems, "\n".join(problems[:20])


def test_combined_conditions_agree_too(db):
    rng = random.Random(5)
    pool = clauses()
    for _ in range(300):
        first, second = rng.sample(pool, 2)
        (c1, cond1), (c2, cond2) = next(iter(first.items())), next(iter(second.items()))
        if c1 == c2:
            ops = {
                **(cond1 if isinstance(cond1, dict) else {"eq": cond1}),
                **(cond2 if isinstance(cond2, dict) else {"eq": cond2}),
            }
            where = {c1: ops}
        else:
            where = {c1: cond1, c2: cond2}
        in_sql, in_python, _ = both_ways(db, where)
        assert in_python == in_sql, where


def ids(db: Any, where: dict[str, Any]) -> list[int]:
    in_sql, in_python, _ = both_ways(db, where)
    assert in_sql == in_python, where
    return in_sql


def values_of(db: Any, column: str, where: dict[str, Any]) -> set[Any]:
    chosen = set(ids(db, where))
    return {repr(row[column]) for row in db[1] if row["id"] in chosen}


def test_a_number_and_the_text_of_that_number_meet_as_sqlite_decides(db):
    # A numeric column reads the text as a number; a text column compares the number as its text.
    assert values_of(db, "n_int", {"n_int": "42"}) == {"42"}
    assert values_of(db, "n_int", {"n_int": " 42 "}) == {"42"}
    assert values_of(db, "n_int", {"n_int": 42.0}) == {"42"}
    assert values_of(db, "s_varchar", {"s_varchar": 42}) == {"'42'"}
    assert values_of(db, "s_varchar", {"s_varchar": 42.0}) == {"'42.0'"}  # 42.0's text is '42.0', not '42'
    assert values_of(db, "raw", {"raw": 42}) == {"42", "42.0"}  # a column without affinity: '42' stays text
    assert values_of(db, "flag", {"flag": True}) == {"1"}
    # Numbers order before text: every text is greater than any number, whatever its digits.
    assert {"'42'", "'abc'", "''"} <= values_of(db, "raw", {"raw": {"gt": 2**62}})
    assert not any(v.startswith("'") for v in values_of(db, "raw", {"raw": {"lt": 0}}))


def test_like_folds_case_beyond_ascii_and_treats_composed_and_decomposed_accents_alike(db):
    matched = values_of(db, "s_text", {"s_text": {"like": "%café%"}})
    assert {"'café'", "'CAFÉ'", repr("cafe\u0301"), "'Café au lait'"} <= matched
    assert values_of(db, "s_text", {"s_text": {"like": "école"}}) == {"'école'", "'ÉCOLE'"}  # 'Ecole' has no accent
    assert "'STRASSE'" in values_of(db, "s_text", {"s_text": {"like": "%ß%"}})  # case folding, not lower()
    assert values_of(db, "n_float", {"n_float": {"like": "%.5"}}) == {"4.5", "-0.5"}  # numbers as SQLite writes them
    assert "'a_c'" in values_of(db, "s_text", {"s_text": {"like": "A_C"}}) and "'abc'" in values_of(
        db, "s_text", {"s_text": {"like": "A_C"}}
    )  # '_' is a wildcard: there is no escape character
    assert query.like("%É%", "école") and not query.like("ecole", "école") and not query.like("%", None)


def test_null_is_neither_equal_nor_unequal_to_anything(db):
    everything = ids(db, {})
    nulls = ids(db, {"s_text": None})
    assert nulls == ids(db, {"s_text": {"is_null": True}}) and nulls
    assert not set(nulls) & set(ids(db, {"s_text": {"ne": "abc"}}))  # ne does not match NULL
    assert not set(nulls) & set(ids(db, {"s_text": {"not_in": ["abc"]}}))
    assert ids(db, {"s_text": {"not_in": ["abc", None]}}) == []  # NOT IN a list with a NULL: never true
    assert ids(db, {"s_text": {"not_in": []}}) == everything and ids(db, {"s_text": {"in": []}}) == []
    assert sorted(ids(db, {"s_text": {"ne": None}}) + nulls) == everything


@pytest.mark.parametrize(("where", "message"), [
    ({"nope": 1}, "table things has no column 'nope'"),
    ({"n_int": {"between": [1, 2]}}, "n_int: unknown operator 'between'"),
    ({"n_int": [1, 2]}, 'use {"in": [...]}'),
    ({"n_int": {"in": 5}}, "'in' takes a list"),
    ({"n_int": {"gt": None}}, "'gt' cannot compare with null"),
    ({"n_int": {"like": None}}, "'like' cannot compare with null"),
    ({"n_int": {"eq": float("nan")}}, "takes a finite number"),
    ({"n_int": {"eq": 2**63}}, "outside SQLite's 64-bit integer range"),
    ({"n_int": {"is_null": 1}}, "'is_null' takes true or false"),
    ({"n_int": {"in": [{"a": 1}]}}, "not dict"),
    ({"n_int": {}}, "an empty condition"),
])  # fmt: skip
def test_both_paths_refuse_a_malformed_where_with_the_same_reason(where, message):
    with pytest.raises(ValueError, match=None) as in_sql:
        query.where_sql(THINGS, where)
    with pytest.raises(ValueError) as in_python:
        query.row_matches(THINGS, {c.name: 1 for c in THINGS.columns}, where)
    assert message in str(in_sql.value) and str(in_sql.value) == str(in_python.value)


def test_a_connection_without_the_where_functions_says_which_is_missing():
    clause, params = query.where_sql(THINGS, {"s_text": {"like": "á%"}})
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE things (s_text TEXT)")
    with pytest.raises(sqlite3.OperationalError, match="no such function: mcpsim_like"):
        conn.execute(f"SELECT * FROM things WHERE {clause}", params)
    query.install(conn)
    conn.execute("INSERT INTO things VALUES ('Ábc')")
    assert conn.execute(f"SELECT * FROM things WHERE {clause}", params).fetchall() == [("Ábc",)]


def test_column_affinities_follow_sqlites_rules_for_declared_types():
    assert [query.column_affinity(THINGS.columns[c]) for c in COLUMNS] == [
        "integer",
        "real",
        "numeric",
        "numeric",
        "text",
        "text",
        "numeric",
        "blob",
    ]
    assert [query._declared_affinity(t) for t in ("BIGINT", "NCHAR(5)", "CLOB", "", "DOUBLE", "DECIMAL(10,2)")] == [
        "integer",
        "text",
        "text",
        "blob",
        "real",
        "numeric",
    ]


def test_the_clauses_cover_every_operator():
    used = {op for where in clauses() for cond in where.values() for op in (cond if isinstance(cond, dict) else {"eq"})}
    assert used == set(query.OPERATORS)
    assert len(list(itertools.chain(INTS, FLOATS, DIGITS, ACCENTS))) > 30
