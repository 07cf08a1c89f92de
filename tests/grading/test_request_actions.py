"""Requests for the go-ahead before writes whose tool names say no known action (`settle_invoice`,
`publish_manuscript`, `write_off_invoice`, `start_rental`): both ways.

- Correct work: one request per write, or one list of all writes, in any order, gets the scripted
  user's yes, although the request's frame ("Here is the change I'd like to make") says a word
  that fits any write and the write's own verb is no known action.
- Wrong work: a request naming the write's record with another action ("cancel the invoice", a
  verb of another write of the world) gets a no, and the `confirmed` check refuses it even with a
  yes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcpsim.grading import Verifier
from mcpsim.specs import compile_spec
from mcpsim.specs._spec import load_spec
from mcpsim.taskgen import generate_tasks
from mcpsim.taskgen._generator import task_set
from mcpsim.tasks import Action, Say, Task, names_action, oracle_answer, run_solution, task_episode
from mcpsim.tasks._action_words import own_verb, tool_actions
from mcpsim.tasks._dialogue import NO_REPLY, YES_REPLY, confirmation_reply
from tests.grading.solution_audit import ask_list, ask_other_action, ask_prose

BIKES = Path(__file__).parents[2] / "examples" / "specs" / "bikes.yaml"


def _task(gold: list[tuple[str, dict[str, Any]]], confirm: list[str], instruction: str) -> Task:
    """A generated-style task: its gold (reads and writes), a `confirmed` check listing `confirm`."""
    return Task.model_validate(
        {
            "id": "t",
            "difficulty": "easy",
            "split": "dev",
            "instruction": instruction,
            "user": {"knows": {"name": "Steve Holt"}},
            "gold": [{"tool": tool, "args": args} for tool, args in gold],
            "rubric": [
                {"type": "gold_state", "requirement": "The records end as asked.", "noop_passes": False},
                {"type": "confirmed", "requirement": "The user said yes.", "tools": confirm, "noop_passes": True},
            ],
        }
    )


def _manuscript(tool: str, ms: str) -> tuple[str, dict[str, Any]]:
    return tool, {"manuscript_id": ms, "author_id": "AU010218"}


# errand-004 of a generated journals world: two withdrawals (a known action, "withdraw" pays out),
# then a publication (a verb no class knows)
ERRAND = _task(
    [
        ("search_authors", {"query": "Steve Holt"}),
        ("list_manuscripts", {"author_id": "AU010218", "status": "in_review"}),
        _manuscript("withdraw_manuscript", "MS790392"),
        _manuscript("withdraw_manuscript", "MS255301"),
        _manuscript("publish_manuscript", "MS953971"),
    ],
    ["publish_manuscript", "withdraw_manuscript"],
    "Please withdraw my in review manuscript. After that, withdraw my revise manuscript. And then publish "
    "my in production manuscript, please.",
)


def _invoice(tool: str, inv: str) -> tuple[str, dict[str, Any]]:
    return tool, {"invoice_id": inv, "customer_id": "CU67048"}


# sweep-003 of a generated receivables world: two write-offs under confirmation, a mark-overdue not
SWEEP = _task(
    [
        ("search_customers", {"query": "Taylor-Dunn"}),
        _invoice("write_off_invoice", "INV229585"),
        _invoice("write_off_invoice", "INV233235"),
        _invoice("mark_overdue", "INV828529"),
    ],
    ["write_off_invoice"],
    "Please write off all my overdue invoices, and mark overdue for my sent invoice.",
)
SETTLE = _task([_invoice("settle_invoice", "INV233235")], ["settle_invoice"], "Could you settle my invoice?")
START = _task(
    [("start_job", {"work_order_id": "WO105392", "customer_id": "CUS07007"})], ["start_job"], "Please start my job."
)


def _writes(task: Task, confirm: bool = True) -> list[Action]:
    listed = {t for c in task.rubric if c.type == "confirmed" for t in c.tools}
    return [a for a in task.gold if a.tool in listed or not confirm and a.tool == "mark_overdue"]


@pytest.mark.parametrize("task", [ERRAND, SWEEP, SETTLE, START], ids=["errand", "sweep", "settle", "start"])
def test_each_write_and_the_list_of_them_get_a_yes_in_any_order(task):
    writes = _writes(task)
    assert any(not tool_actions(a.tool) for a in writes)  # the class: a write of no known action
    for order in (writes, writes[::-1]):
        assert confirmation_reply(ask_list(order), task) == YES_REPLY, ask_list(order)
        assert confirmation_reply(ask_prose(order), task) == YES_REPLY, ask_prose(order)
        for write in order:
            for ask in (ask_list, ask_prose):
                assert confirmation_reply(ask([write]), task) == YES_REPLY, ask([write])


@pytest.mark.parametrize("task", [ERRAND, SWEEP, SETTLE, START], ids=["errand", "sweep", "settle", "start"])
def test_another_action_on_the_record_gets_a_no(task):
    for write in _writes(task):
        for form in (0, 1):
            request = ask_other_action(write, form)  # "cancel the invoice (invoice id: ...)"
            assert confirmation_reply(request, task) == NO_REPLY, request
            assert names_action(request, write.tool) is False, request
    # a request that keeps things as they are, or only denies the write, asks for no change either
    (first, *_) = _writes(task)
    verb = first.tool.split("_")[0]
    assert confirmation_reply(f"I won't {verb} anything for {first.args[next(iter(first.args))]}. OK?", task) == (
        NO_REPLY
    )
    assert confirmation_reply(f"Shall I leave {first.args[next(iter(first.args))]} as it is?", task) == NO_REPLY


def test_a_task_without_verbless_writes_is_read_as_before():
    """Every write a known action (the hand-built worlds' tasks): a request of a word that fits
    any write only ("make the change") is still another action than the one wanted."""
    task = _task([_invoice("cancel_invoice", "INV1")], ["cancel_invoice"], "Please cancel my invoice INV1.")
    assert confirmation_reply("Shall I cancel invoice INV1?", task) == YES_REPLY
    assert confirmation_reply("Shall I update invoice INV1?", task) == NO_REPLY


@pytest.mark.parametrize(
    ("text", "tool", "expected"),
    [
        (
            "Here is the change I'd like to make:\n- Settle invoice\n  - invoice id: INV1\nProceed?",
            "settle_invoice",
            True,
        ),
        ("Shall I settle invoice INV1 for you?", "settle_invoice", True),
        ("Settle invoice: INV1. Shall I go ahead?", "settle_invoice", True),  # the verb, not a field's name
        ("Shall I make the change to invoice INV1?", "settle_invoice", None),  # fits any write
        ("Shall I update invoice INV1?", "settle_invoice", None),
        ("Shall I go ahead with invoice INV1?", "settle_invoice", None),
        ("Would you like me to cancel the invoice (invoice id: INV1) for you?", "settle_invoice", False),
        ("Shall I refund invoice INV1?", "settle_invoice", False),
        ("Shall I delete invoice INV1?", "settle_invoice", False),
        ("Shall I close invoice INV1?", "settle_invoice", False),
        (
            "I'd rather not write anything; I'll simply cancel the off invoice (invoice id: INV1). OK?",
            "write_off_invoice",
            False,
        ),
        ("I won't settle invoice INV1. Shall I go ahead?", "settle_invoice", False),  # only denies it
        ("Would you like me to cancel the job (work order id: WO1) for you?", "start_job", False),
        ("Shall I start job WO1, then cancel job WO2?", "start_job", True),  # one list of two writes
    ],
)
def test_a_verbless_tool_s_action(text, tool, expected):
    assert own_verb(tool) == tool.split("_")[0]
    assert names_action(text, tool) is expected


def test_the_verb_of_another_write_of_the_world_is_another_action():
    world = ["publish_manuscript", "resubmit_manuscript", "withdraw_manuscript"]
    ask = "Shall I resubmit manuscript MS1?"
    assert names_action(ask, "publish_manuscript") is None  # without the world: a verb it cannot read
    assert names_action(ask, "publish_manuscript", world) is False
    assert names_action("Shall I publish manuscript MS1?", "publish_manuscript", world) is True
    assert names_action("Shall I publish MS1 and resubmit MS2?", "publish_manuscript", world) is True
    assert names_action("Shall I withdraw manuscript MS1?", "publish_manuscript", world) is False
    assert own_verb("withdraw_manuscript") is None  # a known action: its class is read instead


@pytest.fixture(scope="module")
def bikes() -> Any:
    compiled = compile_spec(load_spec(BIKES))
    tasks = generate_tasks(compiled, count=10, seed=0)
    task = next(t for t in tasks if any(c.type == "confirmed" for c in t.rubric))
    return compiled, task


def _confirmed(compiled: Any, task: Task, request: str, *, yes: bool) -> Any:
    """The `confirmed` check after the gold with `request` before the write (with `yes`, the
    user's reply replaced by a yes, to grade the request rather than the user)."""
    steps: list[Any] = []
    for action in task.gold:
        if action.tool == "start_rental":
            steps.append(Say(say=request.format(**action.args)))
        steps.append(action)
    episode = task_episode(compiled.world, task)
    try:
        said = run_solution(episode, task, steps)
        if yes:
            said = [{**m, "content": YES_REPLY} if m["role"] == "user" and k > 0 else m for k, m in enumerate(said)]
        verdict = Verifier(compiled.world, task_set(compiled, [task])).grade(
            episode, task, oracle_answer(task), conversation=said
        )
    finally:
        episode.close()
    (check,) = [c for c in verdict.checks if c.type == "confirmed"]
    return check, said


# (request, the check passes it, the scripted user refuses it: the user knows the gold's writes,
# not every tool of the world, so only the grader reads `end_rental`'s verb as another action)
@pytest.mark.parametrize(
    ("request_text", "passes", "refused"),
    [
        ("Shall I start a rental of bike {bike_id} for rider {rider_id}?", True, False),
        (
            "Here is the change I'd like to make:\n- Start rental\n  - bike id: {bike_id}\n"
            "Would you like me to proceed?",
            True,
            False,
        ),
        ("Would you like me to cancel the rental (bike id: {bike_id}) for you?", False, True),
        ("Shall I end the rental of bike {bike_id}?", False, False),  # the world's `end_rental`
    ],
)
def test_the_confirmed_check_reads_the_action_of_a_verbless_write(bikes, request_text, passes, refused):
    compiled, task = bikes
    assert "start_rental" in [a.tool for a in task.gold] and not tool_actions("start_rental")
    check, said = _confirmed(compiled, task, request_text, yes=True)
    assert check.passed is passes, check.reason
    if not passes:
        assert "names another action" in check.reason
    _, said = _confirmed(compiled, task, request_text, yes=False)
    asked = next(k for k, m in enumerate(said) if m["role"] == "assistant" and "bike" in (m.get("content") or ""))
    assert said[asked + 1]["content"] == (NO_REPLY if refused else YES_REPLY)
