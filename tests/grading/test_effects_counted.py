"""Effects counted (issue 28, item 4): a write whose effect leaves the world, made twice or undone
and redone, fails the task on every world, even where the final rows equal the gold solution's;
reversible housekeeping is still graded on the final state; the tools that charge, refund, invite
or notify are declared irreversible in every hand-built world and, from the action, in generated
ones. Assertions read the `gold_state` check, which carries the comparison."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpsim.audit._effect_baselines import repeated_effect
from mcpsim.engine import TemplateCache, process_templates
from mcpsim.grading import Verdict, Verifier
from mcpsim.specs._compiler import compile_spec
from mcpsim.specs._spec import load_spec
from mcpsim.taskgen._generator import generate_tasks, task_set
from mcpsim.tasks import Action, Say, Step, Task, confirmation_question, load_tasks
from mcpsim.tasks._scenario import gold_steps
from mcpsim.world import load_world
from tests.support.verifier_fixtures import gold_state_reason, play

SPECS = Path(__file__).parents[2] / "examples" / "specs"


@pytest.fixture(scope="module")
def airline(templates: TemplateCache) -> Verifier:
    return Verifier(load_world("airline"), load_tasks("airline"), templates=templates)


def with_extra(verifier: Verifier, task: Task, after: int, extra: list[Action]) -> list[Step]:
    """The gold steps with `extra` calls (each asked for first) right after gold action `after`."""
    steps = gold_steps(task, verifier.world)
    at = steps.index(task.gold[after]) + 1
    added: list[Step] = []
    for action in extra:
        added += [Say(say=confirmation_question([action])), action]
    return [*steps[:at], *added, *steps[at:]]


def gold_state(verdict: Verdict) -> bool:
    return next(c.passed for c in verdict.checks if c.type == "gold_state")


def last_write(verifier: Verifier, task: Task) -> tuple[int, Action]:
    index = max(i for i, a in enumerate(task.gold) if verifier.world.tools[a.tool].writes)
    return index, task.gold[index]


# -- the same effect twice: the final rows are the gold's ------------------------------------------


@pytest.mark.parametrize(
    "task_id",
    ["cal-accept-allhands", "files-playbook-to-nadia", "files-photos-link-off"],
)
def test_an_irreversible_call_made_twice_fails_though_the_second_changes_nothing(workspace, task_id):
    task = workspace.tasks.get(task_id)
    index, write = last_write(workspace, task)
    verdict, episode = play(workspace, task, with_extra(workspace, task, index, [write]))
    assert [c.tool for c in episode.transcript() if c.call_seq is not None].count(write.tool) == 2
    assert episode.net_changes().keys() == workspace.gold_changes(task).keys()  # the same rows changed
    assert not verdict.passed and not gold_state(verdict)
    reason = gold_state_reason(verdict)
    assert (
        f"{write.tool}: 1 call(s) repeating an earlier one and changing nothing" in reason
        and "a repeated effect" in reason
    ), reason


def test_the_gold_and_a_read_before_the_answer_still_pass(workspace):
    task = workspace.tasks.get("cal-accept-allhands")
    verdict, _ = play(workspace, task, gold_steps(task, workspace.world))
    assert verdict.passed, verdict.report()
    event = task.gold[-1].args["event_id"]
    steps = [*gold_steps(task, workspace.world), Action(tool="get_event", args={"event_id": event})]
    verdict, _ = play(workspace, task, steps)
    assert verdict.passed, verdict.report()


def test_a_first_call_that_finds_the_world_already_so_repeats_nothing(workspace):
    """Making sure a link is off and restating a role, both already so, sent nothing new."""
    task = workspace.tasks.get("files-hiring-plan-only-priya")
    restating = next(s for s in task.alternatives if "already so" in s.name)
    assert restating.steps is not None
    verdict, _ = play(workspace, task, restating.steps)
    assert gold_state(verdict), gold_state_reason(verdict)


def test_a_payment_made_twice_fails(bank):
    task = bank.tasks.get("pay-saved-payee-with-memo")
    index, pay = last_write(bank, task)
    verdict, _ = play(bank, task, with_extra(bank, task, index, [pay]))
    assert not gold_state(verdict) and "transfer_to_payee is irreversible" in gold_state_reason(verdict)


# -- undone and redone, through the newly declared tools ----------------------------------------------


def test_a_cabin_changed_back_and_again_fails_and_once_passes(airline):
    task = airline.tasks.get("downgrade-cabin-refund-to-gift-card")
    index, change = last_write(airline, task)
    assert change.tool == "update_reservation_cabin" and airline.world.tools[change.tool].irreversible
    back = change.model_copy(update={"args": {**change.args, "cabin": "business"}})
    verdict, _ = play(airline, task, with_extra(airline, task, index, [back, change]))
    assert not gold_state(verdict)
    assert "update_reservation_cabin is irreversible" in gold_state_reason(verdict) or (
        "changed by 3 irreversible call(s)" in gold_state_reason(verdict)
    ), gold_state_reason(verdict)
    verdict, _ = play(airline, task, gold_steps(task, airline.world))
    assert gold_state(verdict), gold_state_reason(verdict)


def test_a_payment_method_switched_back_and_again_fails_and_once_passes(retail):
    task = retail.tasks.get("pay-pending-order-with-gift-card")
    index, switch = next((i, a) for i, a in enumerate(task.gold) if a.tool == "modify_pending_order_payment")
    assert retail.world.tools[switch.tool].irreversible
    verdict, episode = play(retail, task, gold_steps(task, retail.world))
    assert gold_state(verdict), gold_state_reason(verdict)
    original = episode.query(
        "SELECT payment_method_id FROM payments WHERE order_id = ? AND kind = 'charge' ORDER BY created_at LIMIT 1",
        [switch.args["order_id"]],
    )[0]["payment_method_id"]
    back = switch.model_copy(update={"args": {**switch.args, "payment_method_id": original}})
    verdict, _ = play(retail, task, with_extra(retail, task, index, [back, switch]))
    assert not gold_state(verdict) and "modify_pending_order_payment" in gold_state_reason(verdict)


# -- reversible housekeeping: the final state is what counts -------------------------------------------


def test_a_card_frozen_unfrozen_and_frozen_again_is_graded_on_its_final_state(bank):
    task = bank.tasks.get("freeze-misplaced-card")
    index, freeze = last_write(bank, task)
    assert not bank.world.tools["freeze_card"].irreversible and not bank.world.tools["unfreeze_card"].irreversible
    unfreeze = Action(tool="unfreeze_card", args=freeze.args)
    verdict, _ = play(bank, task, with_extra(bank, task, index, [unfreeze, freeze]))
    assert gold_state(verdict), gold_state_reason(verdict)


# -- generated worlds: the compiler declares what moves money --------------------------------------------


@pytest.fixture(scope="module")
def library() -> Verifier:
    compiled = compile_spec(load_spec(SPECS / "library.yaml"))
    tasks = generate_tasks(compiled, count=30, seed=0)
    return Verifier(compiled.world, task_set(compiled, tasks), templates=process_templates())


def test_the_compiler_declares_every_action_that_moves_money_irreversible(library):
    spec = load_spec(SPECS / "library.yaml")
    report_lost = next(a for a in spec.actions if a.name == "report_lost")
    assert not report_lost.irreversible and report_lost.kind == "transition"  # its effect takes a fee from credit
    tools = library.world.tools
    assert tools["report_lost"].irreversible and tools["transfer_credit"].irreversible
    assert [name for name, t in tools.items() if t.writes and not t.irreversible]  # housekeeping stays reversible


def test_a_generated_effect_made_twice_fails_and_the_gold_passes(library):
    tasks = [t for t in library.tasks.tasks if any(library.world.tools[a.tool].irreversible for a in t.gold)]
    assert tasks
    applied = 0
    for task in tasks:
        verdict, _ = play(library, task, gold_steps(task, library.world))
        assert verdict.passed, verdict.report()
        cheat = repeated_effect(library.world, library, task)
        assert not cheat.passed, cheat
        # where the world itself refuses the repeat (the record moved on), there is no cheat to try
        assert cheat.applied or "refuses every repeat" in cheat.detail, cheat
        applied += cheat.applied
    assert applied, "no generated task lets an irreversible call be repeated"
