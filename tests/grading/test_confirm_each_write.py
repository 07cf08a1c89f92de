"""One confirmation per write, naming the action (issue 28, item 3): on real tasks of every world
whose policy puts writes under confirmation (workspace has none), each write needs a yes to a
request before it that asserts its action and names its record; the scripted user says no to a
request for another action. Both ways: natural correct forms pass, the cheap forms fail."""

from __future__ import annotations

from typing import Any

import pytest

from mcpsim.grading import Verifier
from mcpsim.tasks import Action, Say, Task, gold_steps, load_tasks, names_action
from mcpsim.tasks._action_words import asks_another_action, named_actions, tool_actions
from mcpsim.tasks._dialogue import YES_REPLY, confirmation_question, confirmation_reply
from mcpsim.tasks._scenario import run_solution, task_episode
from mcpsim.world._registry import load_world

# (world, a task with confirmed writes, a task whose writes include one tool twice on two records)
CASES = [
    ("airline", "add-gift-card-and-book-round-trip", None),
    ("bank", "update-email-and-phone", "stolen-card-two-unauthorized-charges"),
    ("retail", "return-and-update-address", "cancel-two-pending-orders"),
]


def _grade(world_name: str, task: Task, steps: list[Any], *, always_yes: bool = False) -> Any:
    """The `confirmed` check of `task` after `steps`; with `always_yes`, every reply the scripted
    user gave to a request is replaced by a yes (to grade the request, not the user)."""
    world, tasks = load_world(world_name), load_tasks(world_name)
    episode = task_episode(world, task)
    try:
        said = run_solution(episode, task, steps)
        if always_yes:
            said = [
                {**m, "content": YES_REPLY} if m["role"] == "user" and k and said[k - 1].get("content") else m
                for k, m in enumerate(said)
            ]
        verdict = Verifier(world, tasks).grade(episode, task, task.oracle_answer(), conversation=said)
    finally:
        episode.close()
    (check,) = [c for c in verdict.checks if c.type == "confirmed"]
    return check


def _flat(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _flat(v)]
    if isinstance(value, list):
        return [s for v in value for s in _flat(v)]
    return [str(value)]


def _writes(world_name: str, task: Task) -> list[int]:
    world = load_world(world_name)
    return [i for i, a in enumerate(task.gold) if world.tools[a.tool].writes]


def _reworded(question: str) -> str:
    """The oracle's request in other words: same content, another frame."""
    body = question.split(": ", 1)[1].rsplit(". ", 1)[0]
    return f"Before I make any change, I'd like to {body}. Is that OK?"


def _each_asked(world_name: str, task: Task, say: Any = confirmation_question) -> list[Any]:
    steps: list[Any] = []
    writes = set(_writes(world_name, task))
    for i, action in enumerate(task.gold):
        if i in writes:
            steps.append(Say(say=say([action])))
        steps.append(action)
    return steps


@pytest.mark.parametrize(("world_name", "task_id", "_twice"), CASES)
def test_natural_requests_pass(world_name, task_id, _twice):
    task = load_tasks(world_name).get(task_id)
    world = load_world(world_name)
    assert _grade(world_name, task, gold_steps(task, world)).passed  # one request naming every write
    each = _grade(world_name, task, _each_asked(world_name, task))  # a request before each write
    assert each.passed, each.reason
    reworded = _grade(world_name, task, _each_asked(world_name, task, lambda a: _reworded(confirmation_question(a))))
    assert reworded.passed, reworded.reason


@pytest.mark.parametrize(("world_name", "task_id", "_twice"), CASES)
def test_a_request_for_the_first_write_does_not_cover_the_next(world_name, task_id, _twice):
    task = load_tasks(world_name).get(task_id)
    writes = _writes(world_name, task)
    first = writes[0]
    steps = [*task.gold[:first], Say(say=confirmation_question([task.gold[first]])), *task.gold[first:]]
    check = _grade(world_name, task, steps, always_yes=True)
    assert not check.passed, check.reason


@pytest.mark.parametrize(("world_name", "task_id", "_twice"), CASES)
@pytest.mark.parametrize(
    "frame",
    [
        "I'll leave it as it is ({what}). Shall I go ahead? (yes/no)",
        "I won't do that; instead I'll delete {what}. Shall I go ahead? (yes/no)",
    ],
    ids=["keep-it", "another-action"],
)
def test_a_request_for_another_action_fails_and_the_user_says_no(world_name, task_id, _twice, frame):
    task = load_tasks(world_name).get(task_id)
    writes = _writes(world_name, task)
    if "delete" in frame and any("delete" in tool_actions(task.gold[i].tool) for i in writes):
        pytest.skip("the task deletes: 'delete' is its own action")
    what = ", ".join(v for i in writes for v in _flat(task.gold[i].args))  # the records' values
    question = frame.format(what=what)
    assert confirmation_reply(question, task) != YES_REPLY  # the scripted user reads the action
    steps = [*task.gold[: writes[0]], Say(say=question), *task.gold[writes[0] :]]
    check = _grade(world_name, task, steps, always_yes=True)  # and a yes would not save it
    assert not check.passed and "does not ask to" in check.reason, check.reason


@pytest.mark.parametrize(("world_name", "task_id"), [(w, twice) for w, _, twice in CASES if twice])
def test_two_writes_of_one_tool_need_each_record_named(world_name, task_id):
    task = load_tasks(world_name).get(task_id)
    world = load_world(world_name)
    writes = _writes(world_name, task)
    tools = [task.gold[i].tool for i in writes]
    twice = next(t for t in tools if tools.count(t) > 1)
    repeated = [i for i in writes if task.gold[i].tool == twice]
    assert _grade(world_name, task, gold_steps(task, world)).passed
    # the request names every write but only the first of the repeated tool's
    named = [task.gold[i] for i in writes if i not in repeated[1:]]
    steps = [*task.gold[: writes[0]], Say(say=confirmation_question(named)), *task.gold[writes[0] :]]
    check = _grade(world_name, task, steps, always_yes=True)
    assert not check.passed and "apart from the other" in check.reason, check.reason


@pytest.mark.parametrize(
    ("text", "tool", "expected"),
    [
        ("Shall I cancel order #W1 for you?", "cancel_pending_order", True),
        ("I'll cancel the reservation ABC123 now, OK?", "cancel_reservation", True),
        ("I'll change its address instead. OK?", "cancel_pending_order", False),
        ("I will not cancel order #W1. Shall I go ahead?", "cancel_pending_order", False),
        ("Instead of cancelling, shall I return the items?", "cancel_pending_order", False),
        ("I'll leave order #W1 as it is, ok?", "cancel_pending_order", False),
        ("To confirm: update the email to a@b.com. Reply yes or no.", "update_contact_info", True),
        ("To confirm: email a@b.com. Please reply yes or no.", "update_contact_info", False),  # no action
        ("About order #W1: shall I go ahead?", "cancel_order", False),
        ("Shall I swap the items of order #W1?", "modify_pending_order_items", True),
        ("Shall I book flight HAT001 on May 1?", "book_reservation", True),
        ("Shall I move $50 to savings?", "transfer_between_own_accounts", True),
        ("Shall I go ahead?", "get_order_details", None),  # a read: nothing to name
        # a setting's name is no action: this request updates, it does not add
        ("Shall I update your address to 1 Main St, make default: yes?", "add_address", False),
        ("Address: 1 Main St. Make default: yes. Shall I go ahead?", "add_address", False),
        ("Shall I add 1 Main St and make it your default?", "add_address", True),
        ("Proceed to cancel: yes or no?", "cancel_pending_order", True),
    ],
)
def test_action_words(text, tool, expected):
    assert names_action(text, tool) is expected


def test_denial_and_formula_reading():
    assert named_actions("Please reply yes or no.") == (frozenset(), frozenset())
    asserted, denied = named_actions("I won't cancel it, rather I will update the address.")
    assert asserted == {"change"} and denied == {"cancel"}
    assert asks_another_action("Nothing will be changed.", frozenset({"change"}))
    assert not asks_another_action("Shall I proceed?", frozenset({"change"}))


def test_the_scripted_user_says_yes_to_its_own_action_in_other_words():
    task = load_tasks("retail").get("cancel-two-pending-orders")
    cancels = [a for a in task.gold if a.tool == "cancel_order"]
    assert cancels
    ids = " and ".join(str(a.args.get("order_id")) for a in cancels)
    assert confirmation_reply(f"Shall I cancel orders {ids}?", task) == YES_REPLY
    assert confirmation_reply(f"Shall I return orders {ids}?", task) != YES_REPLY
    assert isinstance(cancels[0], Action)


def test_keeping_things_as_they_are_is_another_action_for_a_tool_with_no_known_verb():
    """`dock_bike` says no action the words know: a request to keep the records as they are still
    asks for no change, so neither the scripted user's yes nor the `confirmed` check may count it
    for the write (the `other_action_confirmed` baseline passed such generated tasks)."""
    assert tool_actions("dock_bike") == frozenset()
    keep = "Shall I keep bikes BK0001 and BK0002 as they are?"
    assert asks_another_action(keep, frozenset())
    assert names_action(keep, "dock_bike") is False
    # a request that names the records and no action still asks nothing of such a tool, nor does
    # one that keeps only the other records as they are
    for plain in (
        "Shall I go ahead with bikes BK0001 and BK0002?",
        "Shall I go ahead with BK0001? No changes to your other bikes.",
        "I'll do BK0001 and leave the rest as they are. OK?",
    ):
        assert not asks_another_action(plain, frozenset()) and names_action(plain, "dock_bike") is None, plain
    # keeping one thing while doing another the words know asserts an action: not a keep-only request
    # (None, or True: the noun "dock" reads as the tool's own verb, `own_verb`)
    assert names_action("I'll keep the note unchanged and update BK0001's dock.", "dock_bike") is not False
    assert names_action("I'll keep the note unchanged and update BK0001's slot.", "dock_bike") is None
