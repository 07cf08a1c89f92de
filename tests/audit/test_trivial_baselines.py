"""The transcriber and the one-step greedy agent (`mcpsim check`'s rated baselines) on the real
retail world: a task whose instruction holds every argument passes them, one whose arguments only
a result shows does not; their passes are rates of the world (`WorldReport.pass_rates`), not
problems of the task; acceptance records the rates and rejects a world above its limit."""

from __future__ import annotations

from typing import Any

from mcpsim.acceptance._validate import ValidationReport, Validator
from mcpsim.audit._audit import check_task
from mcpsim.audit._greedy import greedy_step
from mcpsim.audit._report import WorldReport
from mcpsim.audit._transcriber import fill_arguments, instruction_values, transcribe
from mcpsim.grading import Verifier
from mcpsim.tasks import Task, TaskFile, TaskSet

CANARY = "MCPSIM-CANARY-trivial-baselines-0123456789"
VOLATILE = ["*.created_at", "*.updated_at", "*.cancelled_at"]  # as the world's own task files say


def one_task(t: Task) -> TaskSet:
    return TaskSet(world="retail", files=[TaskFile(world="retail", canary=CANARY, volatile=VOLATILE, tasks=[t])])


def task(
    task_id: str, instruction: str, gold: list[dict[str, Any]], rubric: list[dict[str, Any]], **extra: Any
) -> Task:
    return Task.model_validate(
        {
            "id": task_id,
            "instruction": instruction,
            "gold": gold,
            "rubric": rubric,
            "difficulty": "easy",
            "split": "test",
        }
        | extra
    )


def cancel(shop: dict[str, Any], instruction: str) -> Task:
    return task(
        "cancel",
        instruction,
        [{"tool": "cancel_order", "args": {"order_id": shop["order"], "reason": "no longer needed"}}],
        [
            {"type": "gold_state", "requirement": "The order is cancelled.", "noop_passes": False},
            {"type": "allowed_changes", "requirement": "Nothing else changed.", "noop_passes": True},
        ],
    )


def lookup(shop: dict[str, Any], instruction: str) -> Task:
    return task(
        "lookup",
        instruction,
        [{"tool": "get_order_details", "args": {"order_id": shop["order"]}}],
        [
            {"type": "answer_facts", "requirement": "The answer gives the status.", "noop_passes": False},
            {"type": "allowed_changes", "allow": [], "requirement": "No row changed.", "noop_passes": True},
        ],
        answer=[{"phrase": "pending"}],
    )


def passes(world, t: Task, agent) -> bool:
    verifier = Verifier(world, one_task(t))
    played = agent(world, t, verifier.templates)
    try:
        return verifier.grade(played.episode, t, played.answer, played.conversation).passed
    finally:
        played.episode.close()


def test_values_are_copied_from_the_instruction_by_kind_and_by_the_words_before_them(world):
    text = "I am jo@x.com; order #W1234567, code GC-2779-7012-7959, on May 3, 2026 pay $2,000.50 (city East Sherry)."
    values = {(v.kind, v.value) for v in instruction_values(text)}
    assert {("email", "jo@x.com"), ("id", "#W1234567"), ("id", "GC-2779-7012-7959")} <= values
    assert {("date", "2026-05-03"), ("number", 2000.5)} <= values
    args, named = fill_arguments(world.tools["get_order_details"], text, instruction_values(text))
    assert args == {"order_id": "#W1234567"} and named == 1  # the id after "order", not the gift card's code


def test_a_task_the_instruction_spells_out_passes_the_transcriber_and_one_to_work_out_does_not(world, shop):
    spelled = cancel(shop, f"Hi, {shop['email']} here. Cancel order {shop['order']}, reason: no longer needed.")
    assert passes(world, spelled, transcribe) and passes(world, spelled, greedy_step)
    hidden = cancel(shop, f"Hi, {shop['email']} here. Cancel my pending order, I no longer need it.")
    assert not passes(world, hidden, transcribe) and not passes(world, hidden, greedy_step)


def test_the_greedy_agent_echoes_its_one_result_and_the_transcriber_reads_nothing(world, shop):
    asked = lookup(shop, f"What is the status of my order {shop['order']}?")
    assert passes(world, asked, greedy_step)  # one call, its result said back
    assert not passes(world, asked, transcribe)  # never reads a result: it cannot say the status


def test_rated_passes_are_a_rate_of_the_world_not_a_problem_of_the_task(world, shop):
    spelled = cancel(shop, f"Hi, {shop['email']} here. Cancel order {shop['order']}, reason: no longer needed.")
    task_set = one_task(spelled)
    report = check_task(world, Verifier(world, task_set), spelled, task_set.canaries)
    assert report.baselines["transcriber"].passed and report.baselines["one_step_greedy"].passed
    assert report.ok, report.problems  # the task itself is sound
    only = check_task(world, Verifier(world, task_set), spelled, task_set.canaries, baselines=["transcriber"])
    assert set(only.baselines) == {"transcriber"}
    other = report.model_copy(update={"task_id": "other", "baselines": {}})
    world_report = WorldReport(world="retail", ok=True, problems=[], tasks=[report, other])
    assert world_report.pass_rates == {"transcriber": 1.0, "one_step_greedy": 1.0}  # of the tasks they ran on
    assert world_report.model_dump(mode="json")["pass_rates"]["transcriber"] == 1.0


def test_acceptance_records_the_rates_and_rejects_above_the_limit_only_when_one_is_set():
    def judged(limit: float | None, passed: int) -> ValidationReport:
        validator = Validator.__new__(Validator)
        validator.trivial_limit = limit
        report = ValidationReport("w", "hash", tasks=[object()] * 20)  # type: ignore[list-item]
        validator._check_trivial(report, {"transcriber": passed, "one_step_greedy": 0})
        return report

    assert judged(None, 10).trivial_rates == {"transcriber": 0.5, "one_step_greedy": 0.0}
    assert judged(None, 10).ok  # recorded, not enforced
    assert judged(0.05, 1).ok  # 5% is allowed
    rejected = judged(0.05, 2)
    assert not rejected.ok and rejected.failed_criteria() == ["not_trivial"]
    assert "transcriber baseline passes 2 of 20 tasks (10%, more than 5%)" in rejected.failures["not_trivial"][0]
