"""Episodes: one transaction per call, change capture, determinism, lifecycle."""

from __future__ import annotations

import threading

import pytest

from mcpsim.engine.episode import Episode
from mcpsim.engine.templates import TemplateCache


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
    from mcpsim.world import World

    other = World("other", title="o", description="o", metadata=ledger.metadata, policy="p", scales={"default": {}})
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
    from mcpsim.engine import store

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
