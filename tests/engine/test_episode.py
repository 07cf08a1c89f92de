"""Episodes: one transaction per call, change capture, determinism, lifecycle."""

from __future__ import annotations

import random
import threading
from datetime import datetime, timedelta
from typing import Any

import pytest
from pydantic import BaseModel
from sqlalchemy import JSON
from sqlalchemy.orm import registry
from sqlmodel import Field, SQLModel

from mcpsim.engine._episode import Episode
from mcpsim.engine._templates import TemplateCache
from mcpsim.world import ToolContext, WorldError, sql
from mcpsim.world._seeding import SeedContext
from tests.support.toyworld import bare_world


@pytest.fixture
def episode(ledger, templates) -> Episode:
    return Episode.create(ledger, seed=1, scale="small", templates=templates)


def accounts(ep: Episode) -> list[dict]:
    return ep.tables()["account"]


def test_a_call_that_breaks_a_rule_changes_nothing_even_after_a_partial_write(episode):
    a, b = accounts(episode)[:2]
    before = episode.state_hash()
    r = episode.call("transfer", {"from_account": a["id"], "to_account": b["id"], "amount": 10**9})
    assert r.is_error and "Insufficient funds" in r.error and not r.bug
    assert episode.state_hash() == before  # the credit written before the check was rolled back
    assert r.changes == [] and episode.changes() == []


def test_a_successful_call_logs_each_changed_row_with_before_and_after(episode):
    a, b = accounts(episode)[:2]
    r = episode.call("transfer", {"from_account": a["id"], "to_account": b["id"], "amount": 1.25})
    assert not r.is_error
    by_key = {c.key: c for c in r.changes}
    assert set(by_key) == {f'["{a["id"]}"]', f'["{b["id"]}"]'}
    payer = by_key[f'["{a["id"]}"]']
    assert payer.op == "update" and payer.table == "account"
    assert payer.before["balance_cents"] - payer.after["balance_cents"] == 125
    opened = episode.call("open_account", {"owner": "New"})
    (insert,) = opened.changes
    assert insert.op == "insert" and insert.before is None and insert.after["owner"] == "New"
    assert [c.call_seq for c in episode.changes()] == [1, 1, 2]
    episode.call("open_account", {"owner": "Third"})
    assert episode.changes(2) == [insert]
    assert [c.call_seq for c in episode.changes(2, through=3)] == [2, 3]
    assert [c.call_seq for c in episode.changes(1, through=2)] == [1, 1, 2]


def test_an_update_that_changes_no_value_logs_nothing(episode):
    episode.conn.execute("UPDATE account SET owner = owner")
    assert episode.changes() == []


def test_bad_arguments_get_the_validation_message_and_unknown_tools_a_list(episode):
    r = episode.call("transfer", {"from_account": "x", "to_account": "y", "amount": -5})
    assert r.is_error and "greater than 0" in r.error and r.call_seq is None
    r = episode.call("open_account", {"owner": "x" * 1000})
    assert r.is_error and "at most 100 characters" in r.error
    r = episode.call("open_account", {"owner": "x", "extra": 1})
    assert r.is_error and "extra is not an argument of open_account (its arguments: owner)" in r.error
    r = episode.call("teleport", {})
    assert r.is_error and "Unknown tool 'teleport'" in r.error and "transfer" in r.error
    assert episode.calls == 0


def test_a_bug_in_a_tool_is_rolled_back_flagged_and_hidden_from_the_agent(episode):
    target = accounts(episode)[0]["id"]
    before = episode.state_hash()
    r = episode.call("close_account_buggy", {"account_id": target})
    assert r.bug and r.is_error and "deliberate" not in r.error
    assert episode.flagged and "KeyError" in episode.flags[0]
    assert episode.state_hash() == before
    assert not episode.call("get_account", {"account_id": target}).is_error


def test_the_virtual_clock_advances_one_tick_per_committed_call(episode, ledger):
    assert episode.clock() == ledger.epoch
    episode.call("list_accounts")
    episode.call("get_account", {"account_id": "missing"})  # failed: rolled back, clock included
    assert episode.clock() == ledger.epoch + ledger.tick
    assert episode.calls == 1


def test_the_same_calls_on_the_same_seed_give_the_same_state_hash(ledger):
    def run(templates: TemplateCache) -> str:
        ep = Episode.create(ledger, seed=7, scale="small", templates=templates)
        first = ep.tables()["account"][0]["id"]
        ep.call("open_account", {"owner": "A"})
        ep.call("transfer", {"from_account": first, "to_account": first, "amount": 1})
        return ep.state_hash()

    assert run(TemplateCache()) == run(TemplateCache())  # two independent builds


def test_different_seeds_give_different_worlds(ledger, templates):
    a = Episode.create(ledger, seed=1, scale="small", templates=templates)
    b = Episode.create(ledger, seed=2, scale="small", templates=templates)
    assert a.state_hash() != b.state_hash()
    assert {r["id"] for r in accounts(a)}.isdisjoint({r["id"] for r in accounts(b)})


def test_new_ids_are_seeded_and_never_collide_with_seeded_rows(episode):
    seeded = {r["id"] for r in accounts(episode)}
    new = [episode.call("open_account", {"owner": f"o{i}"}).value.id for i in range(50)]
    assert len(set(new)) == 50 and seeded.isdisjoint(new)


def test_episodes_cloned_from_one_template_are_isolated(ledger, templates):
    a = Episode.create(ledger, seed=1, scale="small", templates=templates)
    b = Episode.create(ledger, seed=1, scale="small", templates=templates)
    assert a.state_hash() == b.state_hash()
    a.call("open_account", {"owner": "only in a"})
    assert a.state_hash() != b.state_hash()
    assert "only in a" not in [r["owner"] for r in accounts(b)]


def test_an_ended_episode_refuses_writes_and_answers_reads(episode):
    episode.end()
    before = episode.state_hash()
    assert "ended" in episode.call("open_account", {"owner": "late"}).error
    assert not episode.call("list_accounts").is_error
    assert episode.state_hash() == before


def test_a_snapshot_restores_rows_clock_ids_and_log(episode, ledger):
    episode.call("open_account", {"owner": "snap"})
    snap = episode.snapshot()
    restored = Episode.restore(ledger, snap)
    assert restored.state_hash() == episode.state_hash()
    assert restored.clock() == episode.clock() and restored.changes() == episode.changes()
    # Both continue identically: the id counter travelled with the bytes.
    assert (
        restored.call("open_account", {"owner": "x"}).value.id == episode.call("open_account", {"owner": "x"}).value.id
    )


def test_concurrent_callers_from_threads_are_serialised(episode):
    a, b = accounts(episode)[:2]
    total = sum(r["balance_cents"] for r in accounts(episode))

    def worker() -> None:
        for _ in range(25):
            episode.call("transfer", {"from_account": a["id"], "to_account": b["id"], "amount": 0.01})
            episode.call("transfer", {"from_account": b["id"], "to_account": a["id"], "amount": 0.01})

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert sum(r["balance_cents"] for r in accounts(episode)) == total
    assert episode.calls == 200 and not episode.flagged


def test_query_is_read_only(episode):
    assert episode.query("SELECT count(*) AS n FROM account") == [{"n": 3}]
    with pytest.raises(Exception, match="readonly"):
        episode.query("DELETE FROM account")
    assert len(accounts(episode)) == 3


def test_a_database_of_another_world_is_refused(ledger, templates):
    other = bare_world("other", ledger.metadata)
    with pytest.raises(ValueError, match="belongs to world 'ledger'"):
        Episode.restore(other, Episode.create(ledger, 1, "small", templates=templates).snapshot())


def test_the_transcript_records_every_call_in_order_with_results_and_errors(episode):
    a = accounts(episode)[0]["id"]
    episode.call("get_account", {"account_id": a})
    episode.call("get_account", {"account_id": "nope"})
    episode.call("transfer", {"from_account": a, "to_account": a, "amount": -1})
    episode.call("teleport", {"to": "mars"})
    episode.call("close_account_buggy", {"account_id": a})
    t = episode.transcript()
    assert [c.tool for c in t] == ["get_account", "get_account", "transfer", "teleport", "close_account_buggy"]
    assert t[0].ok and t[0].call_seq == 1 and t[0].result["id"] == a and not t[0].writes
    assert not t[1].ok and t[1].call_seq is None and "not found" in t[1].error
    assert "greater than 0" in t[2].error and t[2].writes and t[2].arguments["amount"] == -1
    assert "Unknown tool" in t[3].error and t[3].arguments == {"to": "mars"}
    assert t[4].bug and "Internal error" in t[4].error
    assert [c.clock for c in t] == sorted(c.clock for c in t)


def test_a_write_refused_after_the_end_is_in_the_transcript(episode):
    episode.end()
    episode.call("open_account", {"owner": "late"})
    (record,) = episode.transcript()
    assert record.tool == "open_account" and not record.ok and "ended" in record.error


def test_the_state_hash_follows_the_rows_whatever_path_led_to_them(episode, ledger, templates):
    from mcpsim.engine import _store as store

    a, b = accounts(episode)[:2]
    start = episode.state_hash()
    assert start == store.full_state_hash(episode.conn, ledger.metadata)  # no change yet: the base
    episode.call("transfer", {"from_account": a["id"], "to_account": b["id"], "amount": 2})
    moved = episode.state_hash()
    assert moved != start
    episode.call("transfer", {"from_account": b["id"], "to_account": a["id"], "amount": 2})
    assert episode.state_hash() == start  # money back where it was: the same rows, the same hash
    other = Episode.create(ledger, seed=1, scale="small", templates=templates)
    other.call("transfer", {"from_account": a["id"], "to_account": b["id"], "amount": 1})
    other.call("transfer", {"from_account": a["id"], "to_account": b["id"], "amount": 1})
    assert other.state_hash() == moved  # another path to the same rows


# -- plain SQL in tools (mcpsim.world.sql) and the call's transaction ----------------------------


class PlainTable(SQLModel, registry=registry()):
    pass


class Gadget(PlainTable, table=True):
    __label__ = "Gadget"
    id: str = Field(primary_key=True)
    tags: dict[str, Any] = Field(sa_type=JSON)
    active: bool
    price_cents: int


class Stamp(PlainTable, table=True):  # a column type plain reads do not decode
    id: str = Field(primary_key=True)
    at: datetime


class GadgetView(BaseModel):
    gadget_id: str
    tags: dict[str, Any]
    active: bool
    price_cents: int


plain_world = bare_world("plainsql", PlainTable.metadata, {"default": {"n": 3}})  # tools on plain SQL, the ORM, or both


@plain_world.seeder
def _seed_gadgets(ctx: SeedContext) -> None:
    for n in range(ctx.params["n"]):
        ctx.session.add(Gadget(id=f"g{n}", tags={"n": n, "even": n % 2 == 0}, active=n != 1, price_cents=100 * n))


def _gadget_view(row: Any) -> GadgetView:
    return sql.view(GadgetView, row, gadget_id=row.id)


@plain_world.tool(read_only=True)
def get_gadget(ctx: ToolContext, gadget_id: str) -> GadgetView:
    """One gadget, read with plain SQL."""
    return _gadget_view(sql.get(ctx.session, Gadget, gadget_id))


@plain_world.tool()
def add_and_list(ctx: ToolContext, gadget_id: str) -> list[GadgetView]:
    """Add a gadget through the ORM, then list every gadget with plain SQL (it must see the new one)."""
    ctx.add(Gadget(id=gadget_id, tags={}, active=True, price_cents=1))
    return [_gadget_view(row) for row in sql.select(ctx.session, Gadget, order="id")]


@plain_world.tool()
def raise_price_then_refuse(ctx: ToolContext, gadget_id: str) -> str:
    """Raise a price with a plain UPDATE, then refuse: the UPDATE must be undone."""
    sql.connection(ctx.session).execute("UPDATE gadget SET price_cents = price_cents + 1 WHERE id = ?", (gadget_id,))
    raise WorldError("refused after writing")


@plain_world.tool()
def raise_price(ctx: ToolContext, gadget_id: str) -> int:
    """Raise a price with a plain UPDATE (no ORM at all)."""
    sql.connection(ctx.session).execute("UPDATE gadget SET price_cents = price_cents + 1 WHERE id = ?", (gadget_id,))
    return int(sql.scalar(ctx.session, "SELECT price_cents FROM gadget WHERE id = ?", (gadget_id,)))


@plain_world.tool(read_only=True)
def peek(ctx: ToolContext, gadget_id: str) -> dict[str, Any]:
    """Read a gadget with plain SQL through the context; say whether a session was made, and
    draw from the call's random generator."""
    row = sql.get(ctx, Gadget, gadget_id)
    made = ctx.opened_session is not None
    return {"price_cents": row.price_cents, "session_made": made, "draw": ctx.rng.random()}


@plain_world.tool()
def add_then_peek(ctx: ToolContext, gadget_id: str) -> list[str]:
    """Add a gadget through the ORM, then list ids with plain SQL through the context."""
    ctx.add(Gadget(id=gadget_id, tags={}, active=True, price_cents=1))
    return sql.scalars(ctx, "SELECT id FROM gadget ORDER BY id")


opened: list[tuple[Any, Gadget]] = []  # the sessions `load_then_fail` made and the rows it loaded


@plain_world.tool()
def load_then_fail(ctx: ToolContext, gadget_id: str, bug: bool = False) -> str:
    """Load a gadget through the session (so one is made), then refuse or fail."""
    row = ctx.get(Gadget, gadget_id)
    opened.append((ctx.session, row))  # the row is held: the identity map is weak
    row.price_cents += 1
    if bug:
        raise RuntimeError("a bug")
    raise WorldError("refused after loading")


class Escape(BaseException):
    """Not an Exception: the call does not handle it, it escapes (as KeyboardInterrupt would)."""


@plain_world.tool()
def raise_price_then_escape(ctx: ToolContext, gadget_id: str) -> str:
    """Raise a price with a plain UPDATE, then let an exception escape the call."""
    sql.connection(ctx.session).execute("UPDATE gadget SET price_cents = price_cents + 1 WHERE id = ?", (gadget_id,))
    raise Escape


@pytest.fixture
def plain(templates) -> Episode:
    return Episode.create(plain_world, templates=templates)


def test_plain_reads_decode_json_and_booleans_as_the_orm_does(plain):
    got = plain.call("get_gadget", {"gadget_id": "g1"})
    assert got.value.model_dump() == {
        "gadget_id": "g1",
        "tags": {"n": 1, "even": False},
        "active": False,
        "price_cents": 100,
    }
    missing = plain.call("get_gadget", {"gadget_id": "nope"})
    assert missing.error == "Gadget nope not found"


def test_plain_reads_see_the_calls_pending_orm_writes(plain):
    result = plain.call("add_and_list", {"gadget_id": "g9"})
    assert [g.gadget_id for g in result.value] == ["g0", "g1", "g2", "g9"]
    assert [(c.table, c.op, c.key) for c in result.changes] == [("gadget", "insert", '["g9"]')]


def test_a_plain_write_is_one_transaction_with_the_call_and_a_refusal_undoes_it(plain):
    before = plain.state_hash()
    refused = plain.call("raise_price_then_refuse", {"gadget_id": "g2"})
    assert refused.error == "refused after writing" and refused.changes == []
    assert plain.query("SELECT price_cents FROM gadget WHERE id = 'g2'") == [{"price_cents": 200}]
    assert plain.state_hash() == before and plain.calls == 0
    ok = plain.call("raise_price", {"gadget_id": "g2"})
    assert ok.value == 201 and ok.call_seq == 1
    assert [(c.op, c.before["price_cents"], c.after["price_cents"]) for c in ok.changes] == [("update", 200, 201)]
    assert not plain.conn.in_transaction  # committed: nothing left open between calls
    assert plain.state_hash() != before


def test_orm_and_plain_calls_alternate_on_one_episode(plain):
    for n in range(3):  # the ORM joins the transaction the call began, and commits it, every time
        assert plain.call("add_and_list", {"gadget_id": f"n{n}"}).error is None
        assert plain.call("raise_price", {"gadget_id": "g0"}).value == n + 1
        assert plain.call("raise_price_then_refuse", {"gadget_id": "g0"}).error is not None
    assert plain.calls == 6 and not plain.conn.in_transaction
    assert [r["id"] for r in plain.query("SELECT id FROM gadget ORDER BY id")] == ["g0", "g1", "g2", "n0", "n1", "n2"]


def test_a_view_built_from_a_row_names_what_is_missing_or_unknown():
    class Shown(BaseModel):
        a: int
        b: int

    assert sql.view(Shown, object(), a=1, b=2) == Shown(a=1, b=2)
    with pytest.raises(TypeError, match="has no 'b'"):
        sql.view(Shown, type("R", (), {"a": 1})(), a=1)
    with pytest.raises(TypeError, match="no field.s. c"):
        sql.view(Shown, object(), a=1, b=2, c=3)
    assert sql.reader(Gadget).row_type._fields == ("id", "tags", "active", "price_cents")


def test_a_column_type_plain_reads_cannot_decode_is_refused():
    with pytest.raises(TypeError, match="stamp.at: plain reads do not decode"):
        sql.reader(Stamp)


def test_an_exception_escaping_a_call_leaves_no_transaction_open(plain):
    with pytest.raises(Escape):
        plain.call("raise_price_then_escape", {"gadget_id": "g2"})
    assert not plain.conn.in_transaction
    assert plain.call("raise_price", {"gadget_id": "g2"}).value == 201  # the escaped UPDATE was undone
    with pytest.raises(Escape):
        plain.call("raise_price_then_escape", {"gadget_id": "g2"})
    assert plain.call("add_and_list", {"gadget_id": "g8"}).error is None and plain.calls == 2


def test_a_session_a_failed_call_made_is_closed_and_its_change_undone(plain):
    """A refused call and a simulator bug both close the session the tool asked for: nothing
    stays in its identity map (a rollback alone keeps loaded rows there), and the change is undone."""
    opened.clear()
    assert plain.call("load_then_fail", {"gadget_id": "g2"}).error == "refused after loading"
    assert plain.call("load_then_fail", {"gadget_id": "g2", "bug": True}).bug
    assert len(opened) == 2 and all(row not in s and not s.in_transaction() for s, row in opened)
    assert plain.call("peek", {"gadget_id": "g2"}).value["price_cents"] == 200


def test_a_plain_read_through_the_context_makes_no_session_and_sees_pending_orm_writes(plain):
    from mcpsim.world._seeding import derive_seed

    got = plain.call("peek", {"gadget_id": "g2"})
    assert got.value == {
        "price_cents": 200,
        "session_made": False,  # nothing asked for it: the call ran on the connection alone
        "draw": random.Random(derive_seed(plain.seed, got.call_seq)).random(),  # the same seeded draw as ever
    }
    assert plain.call("peek", {"gadget_id": "nope"}).error == "Gadget nope not found"
    listed = plain.call("add_then_peek", {"gadget_id": "g7"})
    assert listed.value == ["g0", "g1", "g2", "g7"]  # the session was made by `add`: flushed before the read
    assert [(c.table, c.op) for c in listed.changes] == [("gadget", "insert")]


def test_a_call_reads_metadata_written_between_calls(episode, ledger):
    from mcpsim.engine import _store as store

    episode.call("list_accounts")
    later = ledger.epoch + timedelta(days=3)
    store.write_meta(episode.conn, {"clock": later, "call_seq": 40})  # as the control plane or a setup would
    result = episode.call("list_accounts")
    assert result.call_seq == 41 and episode.clock() == later + ledger.tick
    episode.call("get_account", {"account_id": "missing"})  # refused: rolled back, transcript row written
    assert episode.call("list_accounts").call_seq == 42
    episode.edit("UPDATE account SET owner = owner")  # any other write, even of equal values
    store.write_meta(episode.conn, {"call_seq": 7})
    assert episode.call("list_accounts").call_seq == 8


def test_the_metadata_a_call_writes_is_stored_as_write_meta_stores_it(ledger, templates):
    from mcpsim.engine import _store as store

    a = Episode.create(ledger, seed=1, scale="small", templates=templates)
    b = Episode.create(ledger, seed=1, scale="small", templates=templates)
    a.call("list_accounts")
    when = a.clock()
    store.write_meta(b.conn, {"call_seq": 1, "clock": when})
    rows = f"SELECT key, value FROM {store.META} WHERE key IN ('call_seq', 'clock') ORDER BY key"
    assert a.conn.execute(rows).fetchall() == b.conn.execute(rows).fetchall()


# -- plain SQL writes (sql.insert, sql.update, sql.Writes) ---------------------------------------


@plain_world.tool()
def put_gadget(ctx: ToolContext, gadget_id: str, tags: dict[str, Any], active: bool, plain: bool) -> str:
    """Insert a gadget with plain SQL or through the ORM."""
    if plain:
        return str(sql.insert(ctx, Gadget, id=gadget_id, tags=tags, active=active, price_cents=7).id)
    ctx.add(Gadget(id=gadget_id, tags=tags, active=active, price_cents=7))
    return gadget_id


@plain_world.tool()
def set_gadget(ctx: ToolContext, gadget_id: str, tags: dict[str, Any], active: bool, plain: bool) -> str:
    """Change a gadget's tags and flag with plain SQL or through the ORM."""
    if plain:
        sql.update(ctx, Gadget, gadget_id, tags=tags, active=active)
    else:
        gadget = ctx.get(Gadget, gadget_id)
        gadget.tags, gadget.active = tags, active
        ctx.add(gadget)
    return gadget_id


@plain_world.tool()
def write_then_refuse(ctx: ToolContext, gadget_id: str) -> str:
    """Insert and update with plain SQL, then refuse: both must be undone."""
    sql.insert(ctx, Gadget, id=gadget_id, tags={}, active=True, price_cents=1)
    sql.update(ctx, Gadget, "g0", price_cents=999)
    raise WorldError("refused after plain writes")


@plain_world.tool()
def bad_writes(ctx: ToolContext) -> list[str]:
    """What each wrong plain write says."""
    said = []
    for write in (
        lambda: sql.insert(ctx, Gadget, id="x", tags={}, active=True, price_cents=1, colour="red"),
        lambda: sql.insert(ctx, Gadget, id="x", tags={}, active=True),
        lambda: sql.update(ctx, Gadget, "g0", colour="red"),
        lambda: sql.update(ctx, Gadget, "g0", id="g9"),
        lambda: sql.update(ctx, Gadget, "nope", price_cents=1),
    ):
        try:
            write()
        except (TypeError, WorldError) as exc:
            said.append(f"{type(exc).__name__}: {exc}")
    return said


@plain_world.tool()
def reprice_loaded(ctx: ToolContext, gadget_id: str) -> list[int]:
    """Load a gadget through the ORM, reprice it with plain SQL, load it again through the ORM."""
    gadget = ctx.get(Gadget, gadget_id)  # held: the session keeps it loaded
    before = gadget.price_cents
    sql.update(ctx, Gadget, gadget_id, price_cents=before + 5)
    again = ctx.get(Gadget, gadget_id)
    return [before, again.price_cents, int(again is gadget)]


@plain_world.tool()
def shuffle(ctx: ToolContext, plain: bool) -> str:
    """Change g2, add n1, change g0, then flush: through the ORM, or queued on sql.Writes."""
    if plain:
        writes = sql.Writes(ctx)
        writes.update(Gadget, "g2", price_cents=1)
        writes.insert(Gadget, id="n1", tags={"k": [1]}, active=False, price_cents=3)
        writes.update(Gadget, "n1", price_cents=4)  # changes what is inserted
        writes.update(Gadget, "g0", price_cents=2)
        writes.update(Gadget, "g2", active=False)  # one UPDATE of g2 with both columns
        writes.flush()
    else:
        session = ctx.session
        g2, g0 = ctx.get(Gadget, "g2"), ctx.get(Gadget, "g0")
        g2.price_cents = 1
        new = Gadget(id="n1", tags={"k": [1]}, active=False, price_cents=3)
        session.add_all([g2, new])
        new.price_cents = 4
        g0.price_cents = 2
        g2.active = False
        session.add(g0)
        session.flush()
    return "done"


TAGS = {"name": "Zoë ✓", "n": [1, 2.5, None, True], "nested": {"b": False, "a": 'x"y'}}


@pytest.mark.parametrize("tags, active", [(TAGS, True), ({}, False)])
def test_a_plain_insert_or_update_stores_what_the_orm_stores(templates, tags, active):
    runs = {}
    for plain in (False, True):
        ep = Episode.create(plain_world, templates=templates)
        put = ep.call("put_gadget", {"gadget_id": "n1", "tags": tags, "active": active, "plain": plain})
        changed = ep.call("set_gadget", {"gadget_id": "g1", "tags": tags, "active": not active, "plain": plain})
        assert put.error is None and changed.error is None
        raw = ep.conn.execute("SELECT id, tags, active, typeof(active) FROM gadget ORDER BY rowid").fetchall()
        runs[plain] = (ep.state_hash(), put.changes, changed.changes, raw)
        ep.close()
    assert runs[True] == runs[False]
    assert runs[True][1] and runs[True][2]  # each call logged its row


def test_a_refusal_after_plain_writes_undoes_them(plain):
    before = plain.state_hash()
    refused = plain.call("write_then_refuse", {"gadget_id": "n1"})
    assert refused.error == "refused after plain writes" and refused.changes == []
    assert plain.state_hash() == before and plain.calls == 0
    assert plain.query("SELECT id, price_cents FROM gadget WHERE id IN ('g0', 'n1')") == [
        {"id": "g0", "price_cents": 0}
    ]


def test_wrong_plain_writes_name_the_column_or_the_missing_row(plain):
    assert plain.call("bad_writes").value == [
        "TypeError: gadget has no column 'colour'",
        "TypeError: gadget.price_cents: no value given and no default",
        "TypeError: gadget has no column 'colour'",
        "TypeError: gadget.id: a row's primary key is not updated",
        "WorldError: Gadget nope not found",
    ]


def test_an_orm_object_of_a_row_written_with_plain_sql_is_read_again(plain):
    assert plain.call("reprice_loaded", {"gadget_id": "g2"}).value == [200, 205, 1]


def test_queued_plain_writes_are_written_in_the_orms_flush_order(templates):
    logs = {}
    for plain in (False, True):
        ep = Episode.create(plain_world, templates=templates)
        result = ep.call("shuffle", {"plain": plain})
        logs[plain] = ([(c.table, c.op, c.key, c.after) for c in result.changes], ep.state_hash())
        ep.close()
    assert logs[True] == logs[False]
    assert [(table, op, pk) for table, op, pk, _ in logs[True][0]] == [
        ("gadget", "update", '["g0"]'),  # rows it loaded, by key
        ("gadget", "update", '["g2"]'),
        ("gadget", "insert", '["n1"]'),  # then new rows, in the order they were added
    ]
