"""Every check of a verdict has a stable id, unique in its verdict: the one the task file gives, else
its type and target; a second check of one name gets `#2`. Adding a check of another kind moves no
other check's id; a task file that gives one id twice is refused; the summary, the export and a
hand-built world's verdicts carry them."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from mcpsim.grading import Verifier
from mcpsim.grading._check_ids import derived_id, with_ids
from mcpsim.grading._verdict import CheckResult
from mcpsim.tasks import Task, load_tasks
from mcpsim.tasks._rubric import CHECK_ID
from mcpsim.tasks._scenario import oracle_answer, run_actions, task_episode
from mcpsim.trajectories._export import _verdict_summary
from tests.support.verifier_fixtures import ledger_tasks


def _result(kind: str) -> CheckResult:
    return CheckResult(type=kind, requirement="a requirement here", weight=1, noop_passes=False, passed=True, reason="")


def test_ids_come_from_type_and_target_and_repeats_are_numbered(ledger, templates):
    task = ledger_tasks(ledger, templates).get("pay-and-open")
    rubric = list(task.rubric)
    results = [_result(c.type) for c in rubric] + [_result("calls"), _result("report")]
    ids = [r.id for r in with_ids(results, rubric)]
    assert len(set(ids)) == len(ids) and all(i for i in ids)
    assert ids[-2:] == ["calls", "report"]
    for check, given in zip(rubric, ids, strict=False):
        assert given.split("#")[0] == derived_id(check.type, check)


def test_a_check_of_another_kind_moves_no_other_id(ledger, templates):
    task = ledger_tasks(ledger, templates).get("pay-and-open")
    rubric = list(task.rubric)
    before = [r.id for r in with_ids([_result(c.type) for c in rubric], rubric)]
    extra = rubric[0].model_copy(update={"type": "row_count", "table": "somewhere_else"})
    grown = [extra, *rubric]
    after = [r.id for r in with_ids([_result(c.type) for c in grown], grown)]
    assert after[1:] == before


def test_same_name_checks_are_numbered_and_a_given_id_wins(ledger, templates):
    task = ledger_tasks(ledger, templates).get("pay-and-open")
    first = task.rubric[0]
    twin = first.model_copy()
    named = first.model_copy(update={"id": f"{derived_id(first.type, first)}#2"})  # takes the name a repeat would get
    ids = [r.id for r in with_ids([_result(first.type)] * 3, [first, twin, named])]
    base = derived_id(first.type, first)
    assert ids == [base, f"{base}#3", f"{base}#2"]


def test_a_task_file_id_is_kept_and_given_twice_is_refused(ledger, templates):
    task = ledger_tasks(ledger, templates).get("pay-and-open")
    data = task.model_dump(mode="json")
    data["rubric"][0]["id"] = "paid-in-full"
    given = Task.model_validate(data)
    assert given.rubric[0].id == "paid-in-full"
    results = with_ids([_result(c.type) for c in given.rubric], given.rubric)
    assert results[0].id == "paid-in-full"
    data["rubric"][1]["id"] = "paid-in-full"
    with pytest.raises(ValidationError, match="paid-in-full name more than one rubric check"):
        Task.model_validate(data)
    data["rubric"][1]["id"] = "Not An Id!"
    with pytest.raises(ValidationError, match="string_pattern_mismatch|should match pattern"):
        Task.model_validate(data)


def test_a_task_without_ids_dumps_as_before(ledger, templates):
    task = ledger_tasks(ledger, templates).get("pay-and-open")
    assert all("id" not in check for check in task.model_dump(mode="json")["rubric"])


def test_verdicts_and_exports_carry_the_ids_and_summaries_do_not(ledger, templates):
    tasks = ledger_tasks(ledger, templates)
    verifier = Verifier(ledger, tasks, templates=templates)
    task = tasks.get("pay-and-open")
    episode = task_episode(ledger, task, templates=templates)
    run_actions(episode, task.gold[:1])
    verdict = verifier.grade(episode, task, oracle_answer(task))
    ids = [c.id for c in verdict.checks]
    assert len(set(ids)) == len(ids) and all(ids)
    # a summary is what an agent under test may see: an id may name the table or tool expected
    assert all(set(c) == {"check", "passed"} for c in verdict.summary().model_dump(mode="json")["checks"])
    exported = _verdict_summary(verdict.model_dump(mode="json"))
    assert exported is not None
    assert exported["failed_check_ids"] == [c.id for c in verdict.checks if not c.passed] != []


@pytest.mark.parametrize("world", ["retail", "airline", "bank", "workspace"])
def test_every_hand_built_task_gets_unique_well_formed_ids(world):
    import re

    tasks = load_tasks(world)
    pattern = re.compile(CHECK_ID)
    for task in tasks.tasks:
        results = with_ids([_result(c.type) for c in task.rubric] + [_result("calls"), _result("report")], task.rubric)
        ids = [r.id for r in results]
        assert len(set(ids)) == len(ids), task.id
        assert all(pattern.match(i) for i in ids), (task.id, ids)  # derived ids are well-formed keys too
