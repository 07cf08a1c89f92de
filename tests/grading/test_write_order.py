"""The order of independent writes never changes a verdict: for every task of every world whose
gold solution has two or more writes, replaying the gold with its writes reordered must pass
strictly. Reads keep their places, so lookups still come first, and so do the writes a
`call_order` check gates the others on (bank's `verify_identity`). Writes that depend on each
other cannot be reordered: a permutation in which some action fails is skipped, but enough tasks
must have an order that runs for the test to mean something."""

from __future__ import annotations

import random
from fnmatch import fnmatchcase

import pytest

from mcpsim.engine._episode import Episode
from mcpsim.engine._store import NetChanges
from mcpsim.grading import Verifier
from mcpsim.grading._diff import GeneratedIds, compare_with_gold
from mcpsim.tasks import Action, CallOrder, Task, load_tasks
from mcpsim.tasks._scenario import GoldActionError, gold_steps, run_solution, task_episode
from mcpsim.world import World
from mcpsim.world._registry import load_world, world_names
from mcpsim.world._seeding import IdGenerator, derive_seed

SHUFFLES = 2  # seeded shuffles per task, beside the reversed order: bounds the test's run time
MIN_REORDERABLE_SHARE = 0.4  # of multi-write tasks, those with at least one reordering that runs

# Writes whose order the world itself makes matter, with why: such an order is kept.
DEPENDENT = {
    # The reply's recipient row takes the display name from the address book.
    "flow-bluefin-intro-call": ("add_contact", "reply_to_thread"),
    "hard-elena-intro-follow-through": ("add_contact", "reply_to_thread"),
}


def write_slots(world: World, task: Task) -> list[int]:
    """Positions of the gold's writes that may move: not a `call_order` check's `first` call."""
    gates = [p for c in task.rubric if isinstance(c, CallOrder) for p in c.first]
    return [
        i
        for i, a in enumerate(task.gold)
        if world.tools[a.tool].writes and not any(fnmatchcase(a.tool, p) for p in gates)
    ]


def keeps_dependencies(task: Task, actions: list[Action]) -> bool:
    if task.id not in DEPENDENT:
        return True
    tools = [a.tool for a in actions]
    earlier, later = DEPENDENT[task.id]
    return tools.index(earlier) < tools.index(later)


def reorderings(world: World, task: Task) -> list[list[Action]]:
    """The gold actions with the writes permuted among the writes' positions: reversed, then a
    few seeded shuffles; never the gold order itself, never twice the same order."""
    slots = write_slots(world, task)
    writes = [task.gold[i] for i in slots]
    orders = [list(reversed(range(len(writes))))]
    rng = random.Random(derive_seed("write-order", task.id))
    for _ in range(SHUFFLES * 3):
        order = list(range(len(writes)))
        rng.shuffle(order)
        orders.append(order)
    result: list[list[Action]] = []
    for order in orders:
        actions = list(task.gold)
        for slot, source in zip(slots, order, strict=True):
            actions[slot] = writes[source]
        if actions != task.gold and actions not in result and keeps_dependencies(task, actions):
            result.append(actions)
    return result[: SHUFFLES + 1]


def replay(episode, world: World, task: Task, actions: list[Action]) -> list[dict] | None:
    """Run the actions as the gold would be run (with a confirmation turn before the first write
    where the rubric asks for one); the conversation, or None if an action did not behave as the
    gold says it does."""
    try:
        return run_solution(episode, task, gold_steps(task.model_copy(update={"gold": actions}), world))
    except GoldActionError:
        return None


def multi_write_tasks() -> list[tuple[str, str]]:
    cases = []
    for name in world_names():
        world = load_world(name)
        cases += [(name, t.id) for t in load_tasks(name).tasks if len(write_slots(world, t)) >= 2]
    return cases


CASES = multi_write_tasks()


@pytest.fixture(scope="module")
def verifiers(templates):
    return {name: Verifier(load_world(name), load_tasks(name), templates=templates) for name in world_names()}


@pytest.fixture(scope="module")
def reorderable() -> dict[str, bool]:
    """Task id -> whether some reordering of its writes ran (filled in by the parametrized test)."""
    return {}


@pytest.mark.parametrize(("world_name", "task_id"), CASES, ids=[f"{w}:{t}" for w, t in CASES])
def test_reordered_independent_writes_pass_strictly(world_name, task_id, verifiers, templates, reorderable):
    verifier = verifiers[world_name]
    task = verifier.tasks.get(task_id)
    failures = []
    ran = False
    for actions in reorderings(verifier.world, task):
        episode = task_episode(verifier.world, task, templates=templates)
        try:
            conversation = replay(episode, verifier.world, task, actions)
            if conversation is None:
                continue  # dependent writes: this order cannot run
            ran = True
            verdict = verifier.grade(episode, task, task.oracle_answer(), conversation)
            if not verdict.passed:
                order = [a.tool for a in actions]
                failures.append(f"{order}: {verdict.report()}")
        finally:
            episode.close()
    reorderable[task_id] = ran
    assert not failures, "\n\n".join(failures)


def test_enough_multi_write_tasks_have_a_reordering_that_runs(reorderable):
    if len(reorderable) < len(CASES):
        pytest.skip("runs after the whole parametrized write-order test")
    assert CASES
    share = sum(reorderable.values()) / len(reorderable)
    assert share >= MIN_REORDERABLE_SHARE, (
        f"only {share:.0%} of {len(CASES)} multi-write tasks had a write order other than the gold's that runs: "
        f"{sorted(t for t, ok in reorderable.items() if ok)}"
    )


# -- generated ids: known exactly, renamed wherever they appear ---------------------------------


def gold_episode(world: World, task: Task, templates, actions: list[Action] | None = None):
    episode = task_episode(world, task, templates=templates, faults=None)
    for action in actions if actions is not None else task.gold:
        assert not episode.call(action.tool, action.args).is_error, action
    return episode


def test_an_episode_records_exactly_the_ids_its_committed_calls_drew_and_a_snapshot_keeps_them(templates):
    world, task = load_world("retail"), load_tasks("retail").get("late-deliveries-goodwill")
    episode = gold_episode(world, task, templates)
    refused = episode.call(
        "issue_partial_refund",
        {"order_id": "#W6251351", "amount": 100_000, "payment_method_id": "pm_0996285", "reason": "late delivery"},
    )
    assert refused.is_error  # it drew nothing that lasted: its transaction was rolled back
    refunds = [c.after["id"] for c in episode.net_changes().values() if c.table == "payments" and c.before is None]
    assert len(refunds) == 2
    assert episode.net_changes().generated == {refund: "payment" for refund in refunds}
    restored = Episode.restore(world, episode.snapshot())
    assert restored.net_changes().generated == episode.net_changes().generated


def test_seeding_draws_ids_without_recording_them():
    ids = IdGenerator(7)
    assert ids.code("order", "#W") and ids.number("reservation", 9) >= 0 and ids.drawn == []
    recording = IdGenerator(7, record=True)
    assert recording.code("order", "#W") == IdGenerator(7).code("order", "#W")  # recording changes no id
    assert recording.drawn == [("order", IdGenerator(7).code("order", "#W"))]


def test_a_generated_id_is_renamed_as_a_value_and_inside_text_but_nothing_else_is():
    ids = GeneratedIds({"ret_0382915": "return", "715988538288": "tracking", 382915: "reservation"})
    assert ids.rename("ret_0382915") == "<new return>"
    assert ids.rename("Your return ret_0382915 is approved.") == "Your return <new return> is approved."
    assert ids.rename("UPS 1Z715988538288.") == "UPS 1Z<new tracking>."  # a letter, not a digit, touches it
    assert ids.rename("9715988538288") == "9715988538288"  # part of a longer number: another value
    assert ids.rename("xret_0382915") == "xret_0382915" and ids.rename("ret_03829150") == "ret_03829150"
    assert ids.rename(382915) == "<new reservation>" and ids.rename(382915.0) == 382915.0
    assert ids.rename(True) is True and ids.rename("dana@example.com") == "dana@example.com"


def test_the_same_state_reached_by_writes_in_another_order_matches_even_where_text_names_a_new_id(templates):
    world, tasks = load_world("retail"), load_tasks("retail")
    task = tasks.get("late-deliveries-goodwill")
    first, second = (i for i, a in enumerate(task.gold) if a.tool == "issue_partial_refund")
    reordered = list(task.gold)
    reordered[first], reordered[second] = task.gold[second], task.gold[first]

    def with_handoff(actions: list[Action], mention: str | None = None) -> NetChanges:
        episode = gold_episode(world, task, templates, actions)
        refund = next(
            c.after["id"]
            for c in episode.net_changes().values()
            if c.table == "payments" and c.before is None and c.after["order_id"] == "#W6251351"
        )
        summary = f"Goodwill refund {mention or refund} for the late tent; the customer wants a call back."
        assert not episode.call("transfer_to_human_agent", {"summary": summary, "customer_id": "cus_2420617"}).is_error
        return episode.net_changes()

    gold = with_handoff(task.gold)
    volatile = tasks.volatile_for(task)
    assert compare_with_gold(with_handoff(reordered), gold, volatile) == []
    wrong = compare_with_gold(with_handoff(reordered, mention="txn_69618561"), gold, volatile)  # the purchase
    assert wrong and all("tickets" in p for p in wrong) and "txn_69618561" in wrong[0]


def test_an_email_in_a_new_rows_key_is_compared_as_it_is(templates):
    world, tasks = load_world("workspace"), load_tasks("workspace")
    task = tasks.get("flow-budget-walkthrough")
    invite = next(i for i, a in enumerate(task.gold) if a.tool == "create_event")
    attendees = ["dana.whitfield@larkspurlabs.com", "ravi.iyer@larkspurlabs.com", "hana.sato@larkspurlabs.com"]
    wrong = list(task.gold)
    wrong[invite] = wrong[invite].model_copy(update={"args": {**wrong[invite].args, "attendees": attendees}})
    gold = gold_episode(world, task, templates).net_changes()
    problems = compare_with_gold(
        gold_episode(world, task, templates, wrong).net_changes(), gold, tasks.volatile_for(task)
    )
    attendee_rows = " ".join(p for p in problems if p.startswith("event_attendees"))
    assert (
        "email='hana.sato@larkspurlabs.com'" in attendee_rows
        and "email='lukas.becker@larkspurlabs.com'" in attendee_rows
    )
