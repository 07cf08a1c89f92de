"""Refusals graded on claims, ownership, and lookups that need the read (issues 27 item 5, 28 item 5):
a refusal never forbids a phrase the instruction, the tool's description or the world's message uses;
acting on another person's record is a refusal task, never a gold; generated lookups and refusals
check that the value was read, so a zero-call guess of the right value fails."""

from __future__ import annotations

from typing import Any

import pytest

from mcpsim.acceptance._wording import column_phrases
from mcpsim.catalogue._blueprints import blueprints, expand
from mcpsim.engine._templates import TemplateCache
from mcpsim.grading import Verifier
from mcpsim.specs._compiler import compile_spec
from mcpsim.specs._spec import parse_spec
from mcpsim.taskgen._generator import TaskGenerator, task_set
from mcpsim.taskgen._lookups import field_phrase
from mcpsim.taskgen._ownership import acts_for_another, owner_of
from mcpsim.taskgen._plan import Plan
from mcpsim.taskgen._refusals import _refused, _sole_blocker, unsaid, used
from mcpsim.tasks import Action, PhraseFact, Task, ToolCalled
from mcpsim.tasks._scenario import run_solution, task_episode

CANDIDATES = 40


@pytest.fixture(scope="module")
def clinic():
    """A catalogue clinic world: patients own appointments and invoices, doctors refuse bookings."""
    return compile_spec(expand(blueprints()["clinic"], 3, name="clinic_00003"))


@pytest.fixture(scope="module")
def generator(clinic):
    found = TaskGenerator(clinic, seed=0, scale="small")
    yield found
    found.close()


@pytest.fixture(scope="module")
def candidates(generator) -> list[Task]:
    return [task for task, _ in zip(generator.candidates(), range(CANDIDATES), strict=False)]


def of_kind(tasks: list[Task], kind: str, tag: str | None = None) -> list[Task]:
    found = [t for t in tasks if t.tags[0] == kind and (tag is None or tag in t.tags)]
    assert found, f"no {kind} task {tag or ''}"
    return found


def graded(clinic, task: Task, steps: list[Any], answer: str) -> bool:
    verifier = Verifier(clinic.world, task_set(clinic, [task]), templates=TemplateCache(None))
    episode = task_episode(clinic.world, task, templates=verifier.templates)
    try:
        conversation = run_solution(episode, task, steps)
        conversation.append({"role": "assistant", "content": answer})
        return verifier.grade(episode, task, answer, conversation).passed
    finally:
        episode.close()


# -- forbidden words ------------------------------------------------------------------------------


def test_a_phrase_is_used_in_any_inflection_but_only_with_its_words_in_a_row():
    assert used("booked", "Cancel a booked appointment")
    assert used("resolved", "only new or resolve tickets")
    assert used("full list", "The doctor's full lists are closed")
    assert not used("checked in", "Check a patient in for a booked appointment")
    assert not used("all done", "If it cannot be done, tell me why. All of it.")


def test_a_refusal_never_forbids_a_word_the_tool_description_uses():
    """ "only new or resolved tickets can be closed": the natural answer repeats the description."""
    forbidden = [PhraseFact(phrase="new"), PhraseFact(phrase="archived"), PhraseFact(phrase="resolved")]
    kept = unsaid(forbidden, "Close a ticket; only new or resolved tickets can be closed.")
    assert kept == [PhraseFact(phrase="archived")]
    claim = PhraseFact(phrase="been closed", synonyms=["is closed", "now closed"])
    assert unsaid([claim], "Close a ticket. Here is what you need.") == [claim]
    assert unsaid([claim], "Ticket T1 is closed already") == []


def test_no_generated_refusal_forbids_a_phrase_of_its_instruction_description_or_message(clinic, candidates):
    for task in of_kind(candidates, "refusal"):
        tool = task.tags[1]
        attempt = [s for s in task.near_misses[0].steps if getattr(s, "tool", None) == tool]
        episode = task_episode(clinic.world, task, templates=TemplateCache(None))
        try:
            message = " ".join(episode.call(a.tool, a.args).error or "" for a in attempt)
        finally:
            episode.close()
        said = " ".join([task.instruction, clinic.world.tools[tool].description, message])
        for fact in task.forbidden or []:
            if isinstance(fact, PhraseFact):
                assert not any(used(p, said) for p in [fact.phrase, *fact.synonyms]), (task.id, fact)


def test_relaying_the_worlds_own_reason_passes_a_refusal(clinic, candidates):
    """The agent reads the record, tries the write, and passes the world's refusal on word for word."""
    relayed = 0
    for task in of_kind(candidates, "refusal"):
        if "not_their_record" in task.tags:
            continue
        [attempt] = [s for s in task.near_misses[0].steps if getattr(s, "expect", "") == "error"]
        episode = task_episode(clinic.world, task, templates=TemplateCache(None))
        try:
            message = episode.call(attempt.tool, attempt.args).error or ""
        finally:
            episode.close()
        key = next(iter(task.gold[-1].args.values()))
        steps = [*task.gold, attempt]
        if graded(clinic, task, steps, f"I could not do that for {key}: {message}."):
            relayed += 1
        assert not graded(clinic, task, steps, f"All done: {key} is taken care of."), task.id
    assert relayed


# -- ownership ------------------------------------------------------------------------------------


def test_blueprints_declare_who_owns_a_record_and_the_policy_says_so(clinic):
    spec = clinic.spec
    assert spec.entities["appointment"].owner == "patient_id" and spec.entities["invoice"].owner == "patient_id"
    assert "refuse anyone else's" in clinic.world.policy
    bad = spec.model_dump(mode="json", exclude_none=True)
    bad["entities"]["appointment"]["owner"] = "day"
    with pytest.raises(Exception, match="owner 'day' is not a reference field"):
        parse_spec(bad)


def test_a_change_to_someone_elses_record_is_a_refusal_task(clinic, generator, candidates):
    tasks = of_kind(candidates, "refusal", "not_their_record")
    probe = generator.probe
    for task in tasks:
        read = task.gold[-1]
        entity = next(a.entity for a in clinic.spec.actions if a.name == read.tool)
        person = next(iter(task.gold[0].args.values()))
        owner = owner_of(probe, probe.start, entity, next(iter(read.args.values())))
        assert owner is not None and owner != person, task.id
        assert not any(clinic.world.tools[a.tool].writes for a in task.gold)
        key = next(iter(read.args.values()))
        answer = f"I can't change {key}: it is not on your account, so I left it as it is."
        assert graded(clinic, task, task.gold, answer), task.id
        [miss] = task.near_misses  # doing the write for its owner changes someone else's record
        write = [s for s in miss.steps if getattr(s, "tool", None) == task.tags[1]]
        assert write and not graded(clinic, task, [*task.gold, *write], answer), task.id


def test_a_plan_that_writes_another_persons_record_is_never_a_gold(clinic, generator, candidates):
    probe = generator.probe
    rows = probe.start.query("SELECT id, patient_id FROM \"appointments\" WHERE status = 'booked' ORDER BY id")
    row = rows[0]
    other = next(r["patient_id"] for r in rows if r["patient_id"] != row["patient_id"])
    cancel = Action(tool="cancel_appointment", args={"appointment_id": row["id"], "patient_id": row["patient_id"]})
    assert acts_for_another(probe, Plan("write", [cancel], person=other))
    assert not acts_for_another(probe, Plan("write", [cancel], person=row["patient_id"]))
    for task in candidates:  # no generated gold writes for someone else
        person = task.gold[0].args.get("patient_id") if task.gold[0].tool == "get_patient" else None
        writes = [a for a in task.gold if clinic.world.tools[a.tool].writes]
        plan = Plan("write", writes, person=person)
        assert not acts_for_another(probe, plan), task.id


# -- the read ------------------------------------------------------------------------------------


def test_lookups_and_refusals_check_the_read_that_shows_the_value(candidates):
    for task in of_kind(candidates, "lookup") + of_kind(candidates, "refusal"):
        reads = [c for c in task.rubric if isinstance(c, ToolCalled)]
        assert reads and not reads[0].noop_passes, task.id
        assert any(a.tool == reads[0].tool for a in task.gold), task.id


def test_a_zero_call_guess_of_the_right_value_fails_and_the_read_passes(clinic, candidates):
    for task in of_kind(candidates, "lookup")[:4] + of_kind(candidates, "refusal")[:2]:
        oracle = task.oracle_answer()
        assert graded(clinic, task, task.gold, oracle), task.id
        assert not graded(clinic, task, [], oracle), task.id


def test_a_lookup_names_a_column_as_a_noun_phrase():
    assert field_phrase("booked", "int") == "number booked" and field_phrase("due", "money") == "amount due"
    assert field_phrase("capacity", "int") == "capacity" and field_phrase("start_date", "date") == "start date"
    asked = f"What is the {field_phrase('booked', 'int')} of doctor PR1?"
    assert column_phrases(asked, ["booked"]) == []
    assert column_phrases("What is the booked of doctor PR1?", ["booked"]) == ["the booked of"]


def test_a_refusal_with_a_second_blocker_is_dropped(clinic):
    """An invoice over the desk limit is refused for its total alone while the patient can pay a
    smaller one; once the patient's balance is gone too, no other total lets it through: two
    blockers, so no refusal task names one of them as the reason."""
    generator = TaskGenerator(clinic, seed=0, scale="small")
    try:
        probe = generator.probe
        action = next(a for a in clinic.spec.actions if a.name == "pay_invoice")
        refused = [(args, name) for args, name, _ in _refused(probe, action) if name == "invoice_too_large"]
        assert refused
        args, _ = refused[0]
        key = args["invoice_id"]
        assert _sole_blocker(probe, action, args, "invoice", key, "total")
        owner = probe.row("invoice", key)["patient_id"]
        probe.start.conn.execute('UPDATE "patients" SET balance = 0 WHERE id = ?', (owner,))
        probe.start.conn.commit()
        assert not _sole_blocker(probe, action, args, "invoice", key, "total")
    finally:
        generator.close()
