"""Every task grades its report (issue 28, item 2): the derived `report` check, on real tasks of
every world, with no hand-written fact. Both ways: the oracle's answer and other natural reports
pass; a report of failure after a change that took effect, of another action than the one taken,
or (on a refusal or a lookup) of a change never made, fails."""

from __future__ import annotations

import pytest

from mcpsim.grading import Verifier
from mcpsim.grading._report import REPORT_CHECK, _claims
from mcpsim.tasks import Task, gold_steps, load_tasks
from mcpsim.tasks._scenario import run_solution, task_episode
from mcpsim.world._registry import load_world

# world, a write task, a report that claims its action in other words
WRITES = [
    ("airline", "book-one-way-economy", "All done: I've booked the flight for you."),
    ("bank", "update-email-and-phone", "I have gone ahead and updated your email and phone number."),
    ("retail", "cancel-two-pending-orders", "Both orders are now cancelled; the refunds go back to your card."),
    ("workspace", "cal-accept-allhands", "I've accepted the all-hands invitation for you."),
]
# world, a task whose gold solution changes nothing the agent asked for (a refusal or a lookup)
NO_CHANGE = [
    ("airline", "refuse-change-basic-fare"),
    ("airline", "lookup-next-trip"),
    ("retail", "refuse-cancel-shipped-order"),
    ("retail", "track-shipped-order"),
    ("workspace", "refuse-share-someone-elses-file"),
    ("workspace", "lookup-next-one-on-one"),
]


def _report(world_name: str, task: Task, answer: str, *, act: bool = True):
    world, tasks = load_world(world_name), load_tasks(world_name)
    episode = task_episode(world, task)
    try:
        said = run_solution(episode, task, gold_steps(task, world) if act else [])
        verdict = Verifier(world, tasks).grade(episode, task, answer, conversation=said)
    finally:
        episode.close()
    (check,) = [c for c in verdict.checks if c.type == REPORT_CHECK]
    return check


@pytest.mark.parametrize(("world_name", "task_id", "other_words"), WRITES)
def test_true_reports_of_a_write_pass(world_name, task_id, other_words):
    task = load_tasks(world_name).get(task_id)
    for answer in (task.oracle_answer(), other_words, "Done. Is there anything else I can help you with?"):
        check = _report(world_name, task, answer)
        assert check.passed, (answer, check.reason)


@pytest.mark.parametrize(("world_name", "task_id", "_words"), WRITES)
@pytest.mark.parametrize(
    "lie",
    [
        "Sorry, the request failed and nothing was changed.",
        "Unfortunately that did not go through; no changes were made to your account.",
        "I've deleted your profile as requested.",
    ],
    ids=["failed", "not-through", "another-action"],
)
def test_a_report_that_contradicts_the_write_fails(world_name, task_id, _words, lie):
    task = load_tasks(world_name).get(task_id)
    check = _report(world_name, task, f"{task.oracle_answer()} {lie}")
    assert not check.passed, check.reason
    assert "report" in check.reason


@pytest.mark.parametrize(("world_name", "task_id"), NO_CHANGE)
def test_a_refusal_or_lookup_that_claims_a_change_fails(world_name, task_id):
    task = load_tasks(world_name).get(task_id)
    assert _report(world_name, task, task.oracle_answer()).passed
    check = _report(world_name, task, f"{task.oracle_answer()} I've also cancelled it and updated the booking.")
    assert not check.passed and "no call that does it took effect" in check.reason, check.reason


def test_a_bank_refusal_after_identity_check_claims_nothing():
    world, tasks = load_world("bank"), load_tasks("bank")
    only_verify = next(
        t for t in tasks.tasks if [a.tool for a in t.gold if world.tools[a.tool].writes] == ["verify_identity"]
    )
    assert _report("bank", only_verify, only_verify.oracle_answer()).passed
    check = _report("bank", only_verify, "I've transferred the money and closed the account.")
    assert not check.passed


def test_saying_the_done_action_was_not_done_fails_naming_its_record():
    task = load_tasks("retail").get("cancel-two-pending-orders")
    order = next(a.args["order_id"] for a in task.gold if a.tool == "cancel_order")
    check = _report("retail", task, f"I couldn't cancel order {order}; it is still pending.")
    assert not check.passed and order.lstrip("#").lower() in check.reason
    # another record, refused for a reason, is a true partial report
    assert _report("retail", task, f"{task.oracle_answer()} I could not cancel order #W0000000.").passed


def test_doing_nothing_with_a_bland_report_passes_the_report_check():
    task = load_tasks("retail").get("cancel-two-pending-orders")
    assert _report("retail", task, "I looked into it.", act=False).passed


@pytest.mark.parametrize(
    ("sentence", "done", "undone"),
    [
        ("I've cancelled order #W1 for you.", {"cancel"}, set()),
        ("We went ahead and updated your address.", {"change"}, set()),
        ("Your reservation was successfully updated.", {"change"}, set()),
        ("The refund has been issued to your card.", set(), set()),  # a record's history, not a claim
        ("I will cancel it once you confirm.", set(), set()),
        ("I couldn't cancel order #W1 because it has shipped.", set(), {"cancel"}),
        ("Your order has not been cancelled.", set(), {"cancel"}),
    ],
)
def test_claims_read_from_sentences(sentence, done, undone):
    got_done, got_undone = _claims(sentence)
    assert set().union(*got_done) == done and set().union(*got_undone) == undone
