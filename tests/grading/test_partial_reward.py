"""Partial reward that means progress (issue 28, item 7) and answers that need a call: a
do-nothing agent earns 0 on tasks of every kind and world, whatever bland thing it says; each
check is a named reward component; a guard (a check a do-nothing agent passes) adds nothing
but costs when broken; only a passing verdict earns 1; and a right answer given without a
single call fails where the gold solution makes one."""

from __future__ import annotations

import pytest

from mcpsim.engine import TemplateCache
from mcpsim.grading import Verifier
from mcpsim.grading._progress import BLAND_ANSWERS, CALLS_CHECK
from mcpsim.tasks import Action, load_tasks
from mcpsim.tasks._scenario import gold_steps, oracle_answer, task_episode
from mcpsim.world import load_world
from tests.support.verifier_fixtures import play


@pytest.fixture(scope="module")
def airline(templates: TemplateCache) -> Verifier:
    return Verifier(load_world("airline"), load_tasks("airline"), templates=templates)


def do_nothing(verifier: Verifier, task_id: str, answer: str | None):
    task = verifier.tasks.get(task_id)
    episode = task_episode(verifier.world, task, templates=verifier.templates)
    said = [] if answer is None else [{"role": "assistant", "content": answer}]
    try:
        return verifier.grade(episode, task, answer, [{"role": "user", "content": task.instruction}, *said])
    finally:
        episode.close()


CASES = [  # a lookup, a refusal and a write of each world
    ("airline", "lookup-next-trip"),
    ("airline", "refuse-change-basic-fare"),
    ("airline", "downgrade-cabin-refund-to-gift-card"),
    ("bank", "refuse-transfer-over-daily-limit"),
    ("bank", "pay-saved-payee-with-memo"),
    ("retail", "pay-pending-order-with-gift-card"),
    ("workspace", "refuse-answer-for-colleague"),
    ("workspace", "cal-accept-allhands"),
]


@pytest.mark.parametrize(("world", "task_id"), CASES)
@pytest.mark.parametrize("answer", [*BLAND_ANSWERS, "Let me know if there is anything else."])
def test_a_do_nothing_agent_earns_no_partial_reward(request, world, task_id, answer):
    verifier = request.getfixturevalue(world)
    verdict = do_nothing(verifier, task_id, answer)
    assert not verdict.passed and verdict.partial_reward == 0.0, verdict.report()
    assert set(verdict.guards) <= set(verifier.noop_passes(verifier.tasks.get(task_id)))
    assert verdict.guards and all(verdict.components[g] == 1.0 for g in verdict.guards if answer is None)


def test_the_gold_earns_one_and_every_component_is_named(bank):
    task = bank.tasks.get("pay-saved-payee-with-memo")
    verdict, _ = play(bank, task, gold_steps(task, bank.world))
    assert verdict.passed and verdict.partial_reward == 1.0
    assert list(verdict.components) == [f"{i}:{c.type}" for i, c in enumerate(verdict.checks, 1)]
    assert set(verdict.components.values()) == {1.0} and CALLS_CHECK in {c.type for c in verdict.checks}
    summary = verdict.summary()
    assert summary.components == verdict.components and summary.guards == verdict.guards


def test_part_of_the_work_earns_part_and_a_broken_guard_costs(bank, retail):
    task = bank.tasks.get("month-start-chores")
    steps = gold_steps(task, bank.world)
    payments = [i for i, s in enumerate(steps) if isinstance(s, Action) and s.tool == "transfer_to_payee"]
    half, _ = play(bank, task, [s for i, s in enumerate(steps) if i != payments[-1]])
    assert not half.passed and 0.0 < half.partial_reward < 1.0, half.report()
    task = retail.tasks.get("gift-card-balance")  # read-only: "nothing changed" is a guard here
    customer = task.gold[-1].args["customer_id"]
    episode = task_episode(retail.world, task, templates=retail.templates)
    other = episode.query(
        "SELECT a.id FROM addresses a JOIN customers c ON c.id = a.customer_id "
        "WHERE c.id = ? AND a.id != c.default_address_id LIMIT 1",
        [customer],
    )[0]["id"]
    episode.close()
    move = Action(tool="set_default_address", args={"customer_id": customer, "address_id": other})
    careless, _ = play(retail, task, [*gold_steps(task, retail.world), move])
    broken = [n for n, v in careless.components.items() if not v]
    assert not careless.passed and broken and set(broken) <= set(careless.guards), careless.report()
    assert 0.0 < careless.partial_reward < 1.0


# -- an answer needs a call --------------------------------------------------------------------------


@pytest.mark.parametrize("task_id", ["lookup-next-trip", "lookup-baggage-allowance", "refuse-change-basic-fare"])
def test_the_right_answer_without_a_call_fails_and_with_the_reads_passes(airline, task_id):
    task = airline.tasks.get(task_id)
    guess = do_nothing(airline, task_id, oracle_answer(task))
    assert not guess.passed
    assert [c.reason for c in guess.checks if not c.passed] == [
        "no call took effect: the answer was given without a look"
    ], guess.report()
    verdict, _ = play(airline, task, gold_steps(task, airline.world))
    assert verdict.passed, verdict.report()


def test_a_task_the_instruction_alone_settles_needs_no_call(airline):
    task = airline.tasks.get("refuse-unidentified-user")
    assert not task.gold
    verdict = do_nothing(airline, task.id, oracle_answer(task))
    assert CALLS_CHECK not in {c.type for c in verdict.checks}
