"""`mcpsim check`'s cheating baselines, alternatives and near misses, on the real retail world:
deliberately weak tasks (built here from the world's own data) are each caught by the baseline
that exploits their weakness, a misbehaving alternative or near miss is a problem, and the
report carries the per-baseline counts.

The answer grader rejects a pasted document or data dump outright, so the baselines that answer
with text from elsewhere (the policy, the read results) can only pass through a weak answer
grader; those tests put back one that matches substrings (the grader before issue 10)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from mcpsim.audit._audit import check_task
from mcpsim.audit._baselines import BASELINES, RATED
from mcpsim.audit._random_agent import run_random_agent
from mcpsim.audit._report import TaskReport, WorldReport
from mcpsim.audit._write_search import find_unrequested_write
from mcpsim.cli import main
from mcpsim.grading import Verifier
from mcpsim.grading import _answers as answers
from mcpsim.tasks import Action, Say, Task, TaskFile, TaskSet, state_fact
from mcpsim.tasks._dialogue import CONFIRM_QUESTION
from mcpsim.tasks._scenario import GoldActionError, gold_steps, run_actions, run_solution, task_episode

CANARY = "MCPSIM-CANARY-check-baselines-0123456789"


def grade_by_substrings(
    facts: list[Any], forbidden: list[Any], answer: str | None, reference: Any = None
) -> tuple[bool, str]:
    """An answer grader that only looks for each fact's text in the answer."""
    missing = [state_fact(f) for f in facts if state_fact(f).lower() not in (answer or "").lower()]
    return not missing, f"missing: {missing}" if missing else "all stated"


@pytest.fixture
def substring_grader(monkeypatch):
    monkeypatch.setattr(answers, "grade_answer", grade_by_substrings)


def policy_title(world) -> str:
    return world.policy.splitlines()[0].lstrip("# ")  # "Retail customer service policy": in no tool result


def make_task(
    task_id: str,
    shop: dict[str, Any],
    *,
    gold: list[dict[str, Any]] | None = None,
    answer: list[Any] = (),
    rubric: list[dict[str, Any]],
    **extra: Any,
) -> Task:
    reads = [
        {"tool": "find_customer_by_email", "args": {"email": shop["email"]}},
        {"tool": "get_order_details", "args": {"order_id": shop["order"]}},
    ]
    return Task.model_validate(
        {
            "id": task_id,
            "instruction": f"Hi, I am {shop['email']}. A question about my order {shop['order']}.",
            "gold": reads if gold is None else gold,
            "answer": list(answer),
            "rubric": rubric,
            "difficulty": "easy",
            "split": "test",
            **extra,
        }
    )


def lookup_task(task_id: str, shop: dict[str, Any], **extra: Any) -> Task:
    """A task whose answer is the shop's order id and which changes nothing (the gold: two reads)."""
    return make_task(
        task_id, shop, answer=[{"id": shop["order"]}], rubric=[answer_checked(), nothing_changed()], **extra
    )


def nothing_changed() -> dict[str, Any]:
    return {"type": "allowed_changes", "allow": [], "requirement": "Nothing in the shop changed.", "noop_passes": True}


def answer_checked() -> dict[str, Any]:
    return {"type": "answer_facts", "requirement": "The answer states the facts.", "noop_passes": False}


def check(world, *tasks: Task) -> dict[str, TaskReport]:
    task_set = TaskSet(world=world.name, files=[TaskFile(world=world.name, canary=CANARY, tasks=list(tasks))])
    verifier = Verifier(world, task_set)
    return {t.id: check_task(world, verifier, t, task_set.canaries) for t in tasks}


def passing(report: TaskReport) -> set[str]:
    """The baselines that fail the task (the rated ones, a rate of the world, are not among them)."""
    return {name for name, result in report.baselines.items() if result.applied and result.passed and name not in RATED}


def test_an_answer_the_policy_text_contains_is_caught_by_the_policy_text_baseline(world, shop, substring_grader):
    weak = make_task(
        "weak-policy-phrase",
        shop,
        answer=[{"phrase": policy_title(world)}],
        rubric=[answer_checked(), nothing_changed()],
    )
    report = check(world, weak)[weak.id]
    # substrings ignore "not", a denial after the value and a question; the policy text, given
    # without a call, fails the derived `calls_made` check whatever the answer grader reads
    assert passing(report) == {"negated_answer", "denied_after", "spread_guesses"}, report.baselines
    assert not report.ok
    assert any("'negated_answer'" in p and "passes this task" in p for p in report.problems), report.problems


def test_an_id_the_gold_reads_return_is_caught_by_the_pasted_reads_and_stuffed_baselines(world, shop, substring_grader):
    weak = make_task(
        "weak-pasted-id",
        shop,
        gold=[{"tool": "find_customer_by_email", "args": {"email": shop["email"]}}],
        answer=[{"id": shop["customer"]}],
        rubric=[answer_checked(), nothing_changed()],
    )
    report = check(world, weak)[weak.id]
    assert "stuffed_answer" in passing(report), report.baselines
    # pasting the gold reads' results without a call of one's own fails the derived `calls_made`
    assert "pasted_reads" not in passing(report) and "policy_text" not in passing(report)
    assert any("'stuffed_answer'" in p for p in report.problems)
    assert any("'stuffed_answer'" in p for p in report.problems)


def test_answer_facts_the_rubric_never_grades_are_caught_by_the_negated_answer_baseline(world, shop):
    weak = make_task(
        "weak-answer-unchecked",
        shop,
        answer=[{"id": shop["order"]}],
        rubric=[
            {
                "type": "tool_called",
                "tool": "get_order_details",
                "requirement": "The agent looked the order up.",
                "noop_passes": False,
            },
            nothing_changed(),
        ],
    )
    report = check(world, weak)[weak.id]
    assert "negated_answer" in passing(report), report.baselines
    assert any("'negated_answer'" in p for p in report.problems)


def test_a_write_task_without_collateral_checks_is_caught_by_the_extra_write_baseline(world, shop):
    gold = [
        {"tool": "find_customer_by_email", "args": {"email": shop["email"]}},
        {"tool": "cancel_order", "args": {"order_id": shop["order"], "reason": "no longer needed"}},
    ]
    cancelled = {
        "type": "field_equals",
        "table": "orders",
        "where": {"id": shop["order"]},
        "values": {"status": "cancelled"},
        "requirement": "The order is cancelled.",
        "noop_passes": False,
    }
    weak = make_task("weak-no-collateral-check", shop, gold=gold, rubric=[cancelled])
    report = check(world, weak)[weak.id]
    assert passing(report) == {"extra_write"}, report.baselines
    assert "the extra write" in report.baselines["extra_write"].detail
    only_gold_rows = {"type": "allowed_changes", "requirement": "Only the order changed.", "noop_passes": True}
    tight = make_task("tight-collateral-check", shop, gold=gold, rubric=[cancelled, only_gold_rows])
    tight_report = check(world, tight)[tight.id]
    assert tight_report.baselines["extra_write"].applied and not passing(tight_report), tight_report.baselines


def test_the_unrequested_write_is_deterministic_and_changes_rows_the_gold_did_not(world, shop):
    task = make_task("write-finder", shop, rubric=[nothing_changed()])
    task_set = TaskSet(world="retail", files=[TaskFile(world="retail", canary=CANARY, tasks=[task])])
    gold = Verifier(world, task_set).gold_changes(task)
    found = []
    for _ in range(2):
        final = task_episode(world, task)
        run_actions(final, task.gold)
        action, episode, result = find_unrequested_write(world, task, final, gold)
        assert world.tools[action.tool].writes and not result.is_error
        assert any((c.table, c.key) not in gold for c in result.changes)
        found.append((action, episode.state_hash()))
        episode.close()
        final.close()
    assert found[0] == found[1]


def test_a_rubric_any_caller_of_a_tool_passes_is_caught_by_the_random_agent(world, shop):
    probe = make_task("weak-random", shop, rubric=[nothing_changed()])  # the random agent is seeded by the task id
    episode, conversation, answer = run_random_agent(
        world,
        probe,
        Verifier(
            world, TaskSet(world="retail", files=[TaskFile(world="retail", canary=CANARY, tasks=[probe])])
        ).templates,
    )
    called = next(r.tool for r in episode.transcript() if r.ok and not r.writes)
    episode.close()
    assert conversation[0] == {"role": "user", "content": probe.instruction} and answer
    weak = make_task(
        "weak-random",
        shop,
        rubric=[
            {"type": "tool_called", "tool": called, "requirement": f"The agent called {called}.", "noop_passes": False}
        ],
    )
    report = check(world, weak)[weak.id]
    assert "random_agent" in passing(report), report.baselines
    assert any("'random_agent'" in p for p in report.problems)


def confirm_cancel(shop: dict[str, Any], *, describe: bool = True) -> Task:
    """A task that cancels the shop's order after the user's yes, graded by a `confirmed` check."""
    cancel = {"tool": "cancel_order", "args": {"order_id": shop["order"], "reason": "no longer needed"}}
    confirmed = {
        "type": "confirmed",
        "tools": ["cancel_*"],
        "requirement": "The customer agreed first.",
        "noop_passes": True,
    }
    return make_task(
        "confirm-cancel",
        shop,
        gold=[{"tool": "find_customer_by_email", "args": {"email": shop["email"]}}, cancel],
        rubric=[
            {"type": "gold_state", "requirement": "The order was cancelled.", "noop_passes": False},
            confirmed | {"describe": describe},
        ],
    )


def test_a_confirmation_check_that_takes_a_blind_yes_is_caught_by_the_blind_yes_baseline(world, shop, monkeypatch):
    report = check(world, confirm_cancel(shop))["confirm-cancel"]
    assert report.ok and report.baselines["blind_yes"].applied and "blind_yes" not in passing(report)
    assert "without saying what it would do" in report.baselines["blind_yes"].detail
    from mcpsim.grading import _checks as checks

    monkeypatch.setattr(checks, "names_the_change", lambda *_, **__: True)  # the check as it was: any request will do
    monkeypatch.setattr(checks, "names_action", lambda *_: None)
    weak = check(world, confirm_cancel(shop))["confirm-cancel"]
    assert "blind_yes" in passing(weak) and any("'blind_yes'" in p for p in weak.problems), weak.problems
    bare = check(world, confirm_cancel(shop, describe=False))["confirm-cancel"]  # the task accepts a bare request
    assert not bare.baselines["blind_yes"].applied


def test_a_failing_alternative_and_a_passing_near_miss_are_problems(world, shop):
    task = lookup_task(
        "solutions",
        shop,
        alternatives=[
            {
                "name": "look the order up first, then the customer",
                "steps": [
                    {"tool": "get_order_details", "args": {"order_id": shop["order"]}},
                    {"tool": "find_customer_by_email", "args": {"email": shop["email"]}},
                ],
            },
            {"name": "an answer that leaves out the order id", "answer": "Your order is fine."},
        ],
        near_misses=[
            {"name": "say nothing about the order", "steps": [], "answer": "I cannot help."},
            {"name": "the gold solution itself, wrongly listed as a near miss"},
        ],
    )
    report = check(world, task)[task.id]
    behaved = {(s.kind, s.name): s.behaved for s in report.solutions}
    assert behaved == {
        ("alternative", "look the order up first, then the customer"): True,
        ("alternative", "an answer that leaves out the order id"): False,
        ("near_miss", "say nothing about the order"): True,
        ("near_miss", "the gold solution itself, wrongly listed as a near miss"): False,
    }
    assert not report.ok
    assert any("alternative 'an answer that leaves out the order id' fails" in p for p in report.problems)
    assert any(
        "near miss 'the gold solution itself, wrongly listed as a near miss' passes" in p for p in report.problems
    )
    summary = WorldReport(world="retail", ok=False, problems=[], tasks=[report])
    assert summary.alternatives.model_dump() == {"run": 2, "behaved": 1}
    assert summary.near_misses.model_dump() == {"run": 2, "behaved": 1}


def test_a_near_miss_whose_steps_do_not_replay_is_a_problem(world, shop):
    task = lookup_task(
        "bad-near-miss",
        shop,
        near_misses=[
            {
                "name": "cancel an order that does not exist",
                "steps": [{"tool": "cancel_order", "args": {"order_id": "#W0000000", "reason": "no longer needed"}}],
            }
        ],
    )
    report = check(world, task)[task.id]
    assert [s.behaved for s in report.solutions] == [False]
    assert any("does not replay" in p and "cancel_order" in p for p in report.problems), report.problems


def test_the_check_json_carries_per_baseline_counts_and_the_table_names_every_baseline(world, shop, monkeypatch):
    fine = lookup_task("fine-lookup", shop)
    weak = make_task(
        "weak-policy-phrase",
        shop,
        answer=[{"phrase": policy_title(world)}],
        rubric=[answer_checked(), nothing_changed()],
    )
    reports = check(world, fine)
    with monkeypatch.context() as patched:
        patched.setattr(answers, "grade_answer", grade_by_substrings)
        reports |= check(world, weak)
    assert reports[fine.id].ok, reports[fine.id].problems
    canned = WorldReport(
        world="retail", world_version=world.version, ok=False, problems=[], tasks=list(reports.values())
    )
    monkeypatch.setattr("mcpsim.audit.check_world", lambda name: canned)

    result = CliRunner().invoke(main, ["check", "retail", "--json"])
    assert result.exit_code == 1, result.output
    [data] = json.loads(result.stdout)
    assert list(data["baselines"]) == list(BASELINES)
    assert data["baselines"]["negated_answer"] == {"applied": 2, "passed": 1, "not_applicable": 0}
    assert data["baselines"]["extra_write"]["passed"] == 0
    assert data["alternatives"] == {"run": 0, "behaved": 0}
    assert all(set(t["baselines"]) == set(BASELINES) for t in data["tasks"])

    table = CliRunner().invoke(main, ["check", "retail"])
    assert table.exit_code == 1
    lines = {line.split(":")[0].strip(): line for line in table.output.splitlines()}
    for name in BASELINES:
        assert name in lines, table.output
    assert lines["negated_answer"].split()[-1] == "FAILED" and lines["random_agent"].split()[-1] == "ok"
    assert "weak-policy-phrase: the cheating baseline 'negated_answer'" in table.output


def test_gold_steps_ask_for_confirmation_before_the_first_write_a_confirmed_check_covers(world, shop):
    cancel = {"tool": "cancel_order", "args": {"order_id": shop["order"], "reason": "no longer needed"}}
    task = make_task(
        "confirm-cancel",
        shop,
        gold=[{"tool": "find_customer_by_email", "args": {"email": shop["email"]}}, cancel],
        rubric=[
            {
                "type": "confirmed",
                "tools": ["cancel_*"],
                "requirement": "The customer confirmed the cancellation.",
                "noop_passes": True,
            }
        ],
    )
    steps = gold_steps(task, world)
    question = (
        f"Here is what I will do: cancel order with order id {shop['order']}, reason no longer needed. "
        + CONFIRM_QUESTION
    )
    assert steps == [task.gold[0], Say(say=question), task.gold[1]]
    unconfirmed = make_task("no-confirm", shop, rubric=[nothing_changed()])
    assert gold_steps(unconfirmed, world) == unconfirmed.gold

    conversation = run_solution(task_episode(world, task), task, steps)
    assert [m["role"] for m in conversation] == ["user", "assistant", "tool", "assistant", "user", "assistant", "tool"]
    assert conversation[0]["content"] == task.instruction
    assert conversation[3]["content"] == question and conversation[4]["content"].lower().startswith("yes")
    call = conversation[5]["tool_calls"][0]
    assert call["function"]["name"] == "cancel_order" and json.loads(call["function"]["arguments"]) == cancel["args"]
    assert conversation[6]["tool_call_id"] == call["id"]
    assert json.loads(conversation[6]["content"])["status"] == "cancelled"


def test_run_solution_shows_errors_and_refuses_steps_that_do_not_go_as_written(world, shop):
    task = make_task("errors", shop, rubric=[nothing_changed()])
    refused = Action(tool="cancel_order", args={"order_id": "#W0000000", "reason": "no longer needed"})
    with pytest.raises(GoldActionError, match=r"step 1 \(cancel_order\) failed"):
        run_solution(task_episode(world, task), task, [refused])
    expected = refused.model_copy(update={"expect": "error"})
    with pytest.raises(GoldActionError, match="expected to fail"):
        run_solution(task_episode(world, task), task, [task.gold[0].model_copy(update={"expect": "error"})])
    conversation = run_solution(task_episode(world, task), task, [expected])
    assert conversation[-1]["role"] == "tool" and conversation[-1]["content"].startswith("Error: ")
