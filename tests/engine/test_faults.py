"""Fault injection: rates, determinism, recorded faults, and what each kind does to state."""

from __future__ import annotations

import math

import pytest

from mcpsim.engine._episode import Episode
from mcpsim.engine._faults import BUILTIN, FaultProfile, FaultProfileError, load_profile


def profile(**fields) -> FaultProfile:
    return FaultProfile.model_validate({"name": "test", **fields})


def rates(tools: str = "*", **rates) -> dict:
    return {"tools": tools, "rates": rates}


def episode(ledger, templates, faults: FaultProfile | None, seed: int = 1) -> Episode:
    return Episode.create_with_faults(ledger, seed, "small", faults, templates=templates)


def accounts(ep: Episode) -> list[str]:
    return [r["id"] for r in ep.tables()["account"]]


def test_each_configured_rate_is_met_within_a_statistical_bound_over_10000_calls(ledger, templates):
    configured = {"transient": 0.10, "rate_limit": 0.05, "timeout": 0.03, "stale": 0.0}
    ep = episode(ledger, templates, profile(rules=[rates(**configured)]))
    target = accounts(ep)[0]
    n = 10_000
    for _ in range(n):
        ep.call("get_account", {"account_id": target})
    seen = {kind: 0 for kind in configured}
    for record in ep.transcript():
        if record.fault:
            seen[record.fault["kind"]] += 1
    for kind, p in configured.items():
        bound = 5 * math.sqrt(n * p * (1 - p)) + 1  # five standard deviations
        assert abs(seen[kind] - n * p) <= bound, (kind, seen[kind], n * p)


def test_the_same_seed_and_profile_inject_identical_faults_at_identical_calls(ledger, templates):
    flaky = profile(rules=[rates(transient=0.2, rate_limit=0.1, timeout=0.1)], latency_s=(0.5, 3.0))

    def run(seed: int) -> tuple[list, str]:
        ep = episode(ledger, templates, flaky, seed=seed)
        ids = accounts(ep)
        for i in range(60):
            ep.call("transfer", {"from_account": ids[i % 3], "to_account": ids[(i + 1) % 3], "amount": 0.5})
            ep.call("get_account", {"account_id": ids[i % 3]})
        faults = [(r.tool, r.fault) for r in ep.transcript()]
        return faults, ep.state_hash()

    first, second, other = run(1), run(1), run(2)
    assert first == second  # same faults at the same calls, same final state
    assert sum(1 for _, f in first[0] if f) > 10
    assert first[0] != other[0]  # another seed, other faults


def test_a_transient_fault_on_a_write_changes_nothing_and_the_retry_succeeds(ledger, templates):
    ep = episode(ledger, templates, profile(script=[{"tool": "transfer", "call": 1, "fault": "transient"}]))
    a, b = accounts(ep)[:2]
    before = ep.state_hash()
    failed = ep.call("transfer", {"from_account": a, "to_account": b, "amount": 5})
    assert failed.is_error and "503 Service Unavailable" in failed.error and "Nothing was changed" in failed.error
    assert ep.state_hash() == before and ep.calls == 0
    retried = ep.call("transfer", {"from_account": a, "to_account": b, "amount": 5})
    assert not retried.is_error and ep.state_hash() != before
    first, second = ep.transcript()
    assert first.fault == {"kind": "transient", "attempt": 1} and not first.ok and first.call_seq is None
    assert second.fault is None and second.ok
    logged = [c for c in ep.changes() if c.op == "fault"]
    assert len(logged) == 1 and logged[0].table == "_faults" and logged[0].after["kind"] == "transient"


def test_a_rate_limit_says_when_to_retry(ledger, templates):
    ep = episode(
        ledger, templates, profile(script=[{"tool": "get_account", "call": 1, "fault": "rate_limit"}], retry_after_s=7)
    )
    r = ep.call("get_account", {"account_id": accounts(ep)[0]})
    assert r.is_error and "429" in r.error and "retry after 7 seconds" in r.error
    assert r.fault["retry_after_s"] == 7


def test_a_partial_failure_leaves_exactly_the_documented_intermediate_state(ledger, templates):
    ep = episode(ledger, templates, profile(script=[{"tool": "wire", "call": 1, "fault": "partial"}]))
    a, b = accounts(ep)[:2]
    balance = {r["id"]: r["balance_cents"] for r in ep.tables()["account"]}
    r = ep.call("wire", {"from_account": a, "to_account": b, "amount": 12.5})
    assert r.is_error and "is pending" in r.error and r.call_seq == 1
    after = {row["id"]: row["balance_cents"] for row in ep.tables()["account"]}
    assert after[a] == balance[a] - 1250 and after[b] == balance[b]  # debited, not credited
    (wire,) = ep.tables()["wire"]
    assert (wire["from_account"], wire["to_account"], wire["amount_cents"], wire["status"]) == (a, b, 1250, "pending")
    assert {(c.table, c.op) for c in r.changes} == {("account", "update"), ("wire", "insert"), ("_faults", "fault")}
    (record,) = ep.transcript()
    assert not record.ok and record.call_seq == 1 and record.fault["kind"] == "partial"


def test_partial_failures_only_hit_tools_that_support_them(ledger, templates):
    ep = episode(ledger, templates, profile(rules=[rates(partial=1.0)]))
    a, b = accounts(ep)[:2]
    assert not ep.call("transfer", {"from_account": a, "to_account": b, "amount": 1}).is_error
    assert "pending" in ep.call("wire", {"from_account": a, "to_account": b, "amount": 1}).error


def test_a_timeout_applies_the_write_but_loses_the_answer(ledger, templates):
    ep = episode(ledger, templates, profile(script=[{"tool": "open_account", "call": 1, "fault": "timeout"}]))
    r = ep.call("open_account", {"owner": "Timed Out"})
    assert r.is_error and "504" in r.error and "may or may not have been applied" in r.error and r.value is None
    assert "Timed Out" in [row["owner"] for row in ep.tables()["account"]]  # it was applied


def test_a_read_right_after_a_write_may_answer_from_the_state_before_it(ledger, templates):
    ep = episode(ledger, templates, profile(script=[{"tool": "get_account", "call": 2, "fault": "stale"}]))
    a, b = accounts(ep)[:2]
    old = ep.call("get_account", {"account_id": b}).value.balance
    ep.call("transfer", {"from_account": a, "to_account": b, "amount": 3})
    stale = ep.call("get_account", {"account_id": b})
    fresh = ep.call("get_account", {"account_id": b})
    assert stale.value.balance == old and stale.fault == {"kind": "stale", "attempt": 2}
    assert fresh.value.balance == pytest.approx(old + 3) and fresh.fault is None
    assert ep.transcript()[2].result["balance"] == old  # the transcript holds what the agent saw


def test_pagination_caps_the_limit_and_truncation_cuts_long_strings(ledger, templates, tmp_path):
    from tests.support.toyworld import world

    assert not world.tools["list_accounts"].has_limit  # the ledger lists everything: nothing to page
    ep = episode(
        ledger, templates, profile(script=[{"tool": "get_account", "call": 1, "fault": "truncate"}], truncate_at=10)
    )
    target = accounts(ep)[0]
    ep.edit("UPDATE account SET owner = ? WHERE id = ?", ("A very long owner name indeed", target))
    cut = ep.call("get_account", {"account_id": target})
    assert cut.value.owner == "A very lo…" and cut.fault["kind"] == "truncate"
    assert ep.call("get_account", {"account_id": target}).value.owner == "A very long owner name indeed"


def test_virtual_latency_moves_the_clock_and_real_delay_is_asked_of_the_server(ledger, templates):
    slow = profile(latency_s=(10.0, 10.0), real_delay=True)
    ep = episode(ledger, templates, slow)
    start = ep.clock()
    r = ep.call("get_account", {"account_id": accounts(ep)[0]})
    assert (ep.clock() - start).total_seconds() == pytest.approx(10.0 + ledger.tick.total_seconds())
    assert r.delay_s == pytest.approx(10.0)


def test_edge_case_data_comes_from_the_worlds_hook_only_when_the_profile_asks(ledger, templates):
    plain = episode(ledger, templates, None)
    edgy = episode(ledger, templates, profile(edge_data=True))
    owners = [r["owner"] for r in edgy.tables()["account"]]
    assert any("Zoë" in o and len(o) > 300 for o in owners)
    assert not any("Zoë" in r["owner"] for r in plain.tables()["account"])
    assert episode(ledger, templates, profile(edge_data=True)).state_hash() == edgy.state_hash()


def test_a_snapshot_keeps_the_profile_and_the_attempt_counters(ledger, templates):
    ep = episode(ledger, templates, profile(script=[{"tool": "get_account", "call": 2, "fault": "transient"}]))
    target = accounts(ep)[0]
    assert not ep.call("get_account", {"account_id": target}).is_error
    resumed = Episode.restore(ledger, ep.snapshot())
    assert resumed.faults == ep.faults
    assert "503" in resumed.call("get_account", {"account_id": target}).error  # attempt 2, as scripted


def test_profiles_load_by_name_from_yaml_or_inline_and_bad_ones_are_refused(tmp_path):
    assert load_profile("flaky") is BUILTIN["flaky"] and load_profile(None) is None
    path = tmp_path / "mine.yaml"
    path.write_text("name: mine\nrules:\n  - tools: 'cancel_*'\n    rates: {transient: 0.5}\n")
    mine = load_profile(str(path))
    assert mine.rates_for("cancel_order").transient == 0.5 and mine.rates_for("get_order").transient == 0
    assert load_profile({"name": "inline", "page_size": 3}).page_size == 3
    with pytest.raises(FaultProfileError, match="unknown fault profile 'nope'"):
        load_profile("nope")
    path.write_text("name: bad\nrules:\n  - rates: {transient: 0.7, timeout: 0.6}\n")
    with pytest.raises(FaultProfileError, match="add up to more than 1"):
        load_profile(str(path))


def test_a_scripted_fault_that_cannot_apply_to_the_tool_does_not_fire(ledger, templates):
    ep = episode(
        ledger,
        templates,
        profile(
            script=[
                {"tool": "get_account", "call": 1, "fault": "paginate"},  # no limit argument to cap
                {"tool": "transfer", "call": 1, "fault": "partial"},  # transfer has no partial failure
                {"tool": "list_accounts", "call": 1, "fault": "stale"},  # nothing was written yet
            ]
        ),
    )
    a, b = accounts(ep)[:2]
    for tool, args in (
        ("list_accounts", {}),
        ("get_account", {"account_id": a}),
        ("transfer", {"from_account": a, "to_account": b, "amount": 1}),
    ):
        result = ep.call(tool, args)
        assert not result.is_error and result.fault is None, (tool, result.error)
    assert not ep.flagged


def test_a_write_that_timed_out_still_counts_as_done_for_ordering_checks(ledger, templates):
    from mcpsim.grading._checks import GradingContext, evaluate
    from mcpsim.tasks import CallOrder, Task, ToolCalled

    ep = episode(ledger, templates, profile(script=[{"tool": "open_account", "call": 1, "fault": "timeout"}]))
    ep.call("open_account", {"owner": "Before Any Lookup"})  # answered 504, but applied
    ep.call("get_account", {"account_id": accounts(ep)[0]})
    task = Task.model_validate(
        {
            "id": "t",
            "instruction": "Do the thing, please.",
            "gold": [],
            "difficulty": "easy",
            "split": "dev",
            "rubric": [
                {
                    "type": "row_count",
                    "requirement": "Some rows exist",
                    "table": "account",
                    "equals": 4,
                    "noop_passes": False,
                }
            ],
        }
    )
    ctx = GradingContext(
        task=task, episode=ep, answer=None, transcript=ep.transcript(), changes={}, volatile=[], gold_changes=dict
    )
    order = CallOrder(type="call_order", requirement="Look up before writing", noop_passes=True, first=["get_account"])
    assert evaluate(ctx, order)[0] is False
    called = ToolCalled(type="tool_called", requirement="An account was opened", noop_passes=False, tool="open_account")
    assert evaluate(ctx, called) == (True, "open_account succeeded 1 time")
