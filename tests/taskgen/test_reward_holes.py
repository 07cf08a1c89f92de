"""Reward holes a red team found in generated (factory) tasks, each closed and shown here: rival
enum values are forbidden (listing every value fails), count guesses across sentences conflict,
refusals never ask for the state the record already holds and their near miss claims success
with the record's id, a transfer undone by its inverse is seen, the user does not know the id a
recovery task asks for; and the correct answers the grader used to refuse now pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpsim.engine._templates import TemplateCache
from mcpsim.grading import Verifier
from mcpsim.grading._answers import grade_answer
from mcpsim.specs._compiler import compile_spec
from mcpsim.specs._spec import load_spec
from mcpsim.taskgen import _facts
from mcpsim.taskgen._generator import TaskGenerator, generate_tasks, task_set
from mcpsim.taskgen._lookups import field_lookup
from mcpsim.tasks import (
    Action,
    AllowedChanges,
    AnswerFacts,
    CountFact,
    GoldState,
    IdFact,
    PhraseFact,
    Task,
)
from mcpsim.tasks._scenario import run_solution, task_episode

SPECS = Path(__file__).parents[2] / "examples" / "specs"


@pytest.fixture(scope="module")
def specs():
    """The example specs with a transfer (library) and with refusals on enum values (clinic)."""
    return {name: compile_spec(load_spec(SPECS / f"{name}.yaml")) for name in ("library", "clinic")}


library = pytest.fixture(scope="module", name="library")(lambda specs: specs["library"])
clinic = pytest.fixture(scope="module", name="clinic")(lambda specs: specs["clinic"])
clinic_tasks = pytest.fixture(scope="module", name="clinic_tasks")(
    # the one-call kinds these tests are about, in the order they took turns before the composed kinds
    lambda clinic: generate_tasks(
        clinic, count=12, seed=0, turns=("write", "lookup", "refusal", "workflow", "recovery")
    )
)


# -- the grader -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "You have 3 bills. You have 4 bills. You have 5 bills.",
        "14 bills? 15 bills?",
        "There are 3 bills in all; 4 bills are open.",
    ],
)
def test_count_guesses_in_separate_sentences_conflict(answer):
    fact = CountFact(count=3 if answer.startswith("You") or answer.startswith("There") else 14, noun="bill")
    passed, reason = grade_answer([fact], [], answer)
    assert not passed and "hedged with" in reason, reason


@pytest.mark.parametrize(
    ("count", "answer"),
    [
        (2, "You have 1 bill. You have 2 bills. You have 3 bills."),  # a count before the fact's
        (2, "1 bill out of 2 bills out of 3 bills."),
        (1, "You have 1 bill out of 2 bills out of 3 bills."),  # only one whole
        (3, "You have 3 bills. You have 4 bills."),
        (4, "You have 3 bills. You have 4 bills."),
    ],
)
def test_a_list_of_counts_passes_only_as_its_first_count_would(count, answer):
    """Parts and the whole after a count are not guesses; anything else is, so a list of counts
    gains nothing over its first one."""
    passed, reason = grade_answer([CountFact(count=count, noun="bill")], [], answer)
    assert not passed and "hedged with" in reason, reason


@pytest.mark.parametrize(
    ("count", "answer"),
    [
        (3, "You have 3 bills: 1 bill is overdue and 2 bills are paid."),  # its parts
        (3, "3 bills are unpaid (out of 10 bills on the account)."),  # the whole it is part of
        (3, "3 of your bills are unpaid, of the 10 bills on file."),
        (6, "There are 6 leave requests; 2 leave requests were approved."),
        (5, "You have 5 bills. 4 bills. 3 bills."),  # descending: passes only where the first is true
    ],
)
def test_a_count_with_its_parts_or_its_whole_is_stated(count, answer):
    passed, reason = grade_answer(
        [CountFact(count=count, noun="bill" if "bill" in answer else "leave request")], [], answer
    )
    assert passed, reason


@pytest.mark.parametrize(
    "answer",
    [
        "Booking BK274901 is checked in. Nothing has been cancelled.",
        "Booking BK274901 is checked in, so nothing was cancelled and your booking is unchanged.",
    ],
)
def test_nothing_negates_a_forbidden_claim(answer):
    facts = [IdFact(id="BK274901"), PhraseFact(phrase="checked in")]
    forbidden = [PhraseFact(phrase="been cancelled", synonyms=["was cancelled"])]
    assert grade_answer(facts, forbidden, answer)[0]
    assert not grade_answer(facts, forbidden, "Booking BK274901 is checked in. It has been cancelled.")[0]


@pytest.mark.parametrize(
    ("fact", "answer"),
    [
        (CountFact(count=4, noun="capacity"), "The capacity is 4."),
        (CountFact(count=4, noun="capacity"), "Capacity: 4"),
        (CountFact(count=1, noun="workload"), "The workload of engineer AG2032 is 1."),
        (CountFact(count=1, noun="workload"), "The workload of AG2032 is one."),
        (CountFact(count=6, noun="leave request"), "There are 6 leave requests."),
        (CountFact(count=6, noun="account holder"), "You have six account holders on file."),
        (CountFact(count=3, noun="bill"), "You have 3 bills, not 4 bills."),
    ],
)
def test_count_nouns_of_two_words_and_before_the_number_are_read(fact, answer):
    passed, reason = grade_answer([fact], [], answer)
    assert passed, reason


@pytest.mark.parametrize(
    "answer",
    [
        "The capacity of room 12 is 4.",
        "There are 6 leave days and 2 requests.",
        "There are 6 requests.",
        "The capacity of the big room AG2032 is 12.",
    ],
)
def test_a_count_noun_elsewhere_in_the_sentence_does_not_count(answer):
    fact = CountFact(count=12 if "room" in answer else 6, noun="capacity" if "room" in answer else "leave request")
    assert not grade_answer([fact], [], answer)[0]


def test_rival_values_as_forbidden_facts_refuse_a_listed_enum():
    facts, rivals = [PhraseFact(phrase="premium")], [PhraseFact(phrase="basic"), PhraseFact(phrase="standard")]
    assert not grade_answer(facts, rivals, "It is basic or standard or premium.")[0]
    assert grade_answer(facts, rivals, "It is premium.")[0]
    assert grade_answer(facts, rivals, "It is not basic: your plan is premium.")[0]


# -- generated tasks --------------------------------------------------------------------------------


def test_enum_answers_forbid_their_rivals_and_listing_every_value_fails(clinic, clinic_tasks):
    """Every generated task answered by an enum value forbids the field's other values, so
    "It is X or Y or Z" with every value the schemas offer fails; the oracle's answer passes."""
    enums = [
        tuple(f.values or [])
        for e in clinic.spec.entities.values()
        for f in e.fields.values()
        if f.type == "enum" and f.values
    ]
    checked = 0
    for task in clinic_tasks:
        phrase = next((f.phrase for f in task.answer if isinstance(f, PhraseFact)), None)
        if phrase is None:
            continue
        values = next(v for v in enums if phrase.replace(" ", "_") in v)
        assert task.forbidden, task.id
        ident = next((f.id for f in task.answer if isinstance(f, IdFact)), "")
        listed = f"It is {ident} " + " or ".join(v.replace("_", " ") for v in values) + "."
        assert not grade_answer(task.answer, task.forbidden, listed)[0], (task.id, listed)
        assert grade_answer(task.answer, task.forbidden, task.oracle_answer())[0], task.id
        checked += 1
    assert checked >= 2


def test_refusals_never_ask_for_the_state_the_record_holds(clinic, clinic_tasks):
    """The blocking value is never the state the refused action moves to (the user's own request
    would name the answer), and the near miss claims success with the record's id and must fail
    on the forbidden claim or the missing reason."""
    actions = {a.name: a for a in clinic.spec.actions}
    refusals = [t for t in clinic_tasks if t.tags[0] == "refusal"]
    assert refusals
    for task in refusals:
        action = actions[task.tags[1]]
        phrases = [f.phrase for f in task.answer if isinstance(f, PhraseFact)]
        assert action.to is None or action.to.replace("_", " ") not in phrases, task.id
        [miss] = [m for m in task.near_misses if m.answer]
        assert miss.answer.startswith("Done: ") and any(
            str(v) in miss.answer for v in task.near_misses[0].steps[-1].args.values()
        )
        assert not grade_answer(task.answer, task.forbidden, miss.answer)[0]


def test_a_refusal_forbids_the_claim_that_the_target_state_was_reached(library):
    generator = TaskGenerator(library, seed=0, scale="small")
    try:
        cancel = next(a for a in library.spec.actions if a.kind == "transition" and a.to)
        entity = cancel.entity
        state = library.models[entity].state_field
        values = library.spec.entities[entity].fields[state].values or []
        held = next(v for v in values if v != cancel.to)
        rivals = _facts.rivals(library.spec, entity, state, held, cancel)
    finally:
        generator.close()
    target = cancel.to.replace("_", " ")
    facts = [PhraseFact(phrase=held.replace("_", " "))]
    assert not grade_answer(facts, rivals, f"All done: it has been {target}, it was {held.replace('_', ' ')}.")[0]
    verb = cancel.name.split("_")[0]
    assert grade_answer(facts, rivals, f"Your request to {verb} it was refused: it is {held.replace('_', ' ')}.")[0]


def test_recovery_user_does_not_know_the_new_id(clinic_tasks):
    [task] = [t for t in clinic_tasks if t.tags[0] == "recovery"]
    [answer] = [f for f in task.answer if isinstance(f, IdFact)]
    assert answer.id not in {str(v) for v in task.user.knows.values()}
    assert task.user.knows, "the ids the user gave are still known"


def test_a_transfer_undone_by_its_inverse_is_seen(library):
    """A transfer is irreversible by a factory rule: A->B then B->A leaves the final rows equal
    to the gold's, and grading still refuses it."""
    transfer = next(a for a in library.spec.actions if a.kind == "transfer")
    assert library.world.tools[transfer.name].irreversible
    templates = TemplateCache(None)
    get = next(a for a in library.spec.actions if a.kind == "get" and a.entity == transfer.entity)
    probe = task_episode(
        library.world,
        _lookup_task(get.name, "M0"),
        templates=templates,
    )
    try:
        rows = probe.query("SELECT id, credit FROM members WHERE status = 'active' ORDER BY credit DESC, id LIMIT 2")
    finally:
        probe.close()
    rich, other = rows[0]["id"], rows[1]["id"]
    task = _lookup_task(get.name, rich)
    verifier = Verifier(library.world, task_set(library, [task]), templates=templates)
    there = Action(tool=transfer.name, args={"source_member_id": rich, "target_member_id": other, "amount": 0.25})
    back = Action(tool=transfer.name, args={"source_member_id": other, "target_member_id": rich, "amount": 0.25})
    for steps, reward in (([*task.gold], 1.0), ([*task.gold, there, back], 0.0)):
        episode = task_episode(library.world, task, templates=templates)
        try:
            run_solution(episode, task, steps)
            verdict = verifier.grade(episode, task, answer=f"Member {rich} is on file.")
        finally:
            episode.close()
        assert verdict.reward == reward, [c.reason for c in verdict.checks if not c.passed]


def _lookup_task(get: str, member: str) -> Task:
    return Task(
        id="lookup-member",
        instruction=f"Is member {member} on file?",
        seed=0,
        scale="small",
        gold=[Action(tool=get, args={"member_id": member})],
        answer=[IdFact(id=member)],
        rubric=[
            GoldState(type="gold_state", requirement="Nothing in the records changed.", noop_passes=True),
            AllowedChanges(type="allowed_changes", requirement="Nothing else changed at all.", noop_passes=True),
            AnswerFacts(type="answer_facts", requirement="States the member id.", noop_passes=False),
        ],
        difficulty="easy",
        split="test",
    )


def test_a_refusal_answer_claiming_success_fails(clinic_tasks):
    """A true blocking value beside a false report of success ("All done ... as you asked") fails."""
    for task in [t for t in clinic_tasks if t.tags[0] == "refusal"]:
        oracle = task.oracle_answer()
        assert grade_answer(task.answer, task.forbidden, oracle)[0], task.id
        assert not grade_answer(task.answer, task.forbidden, f"All done as you asked: {oracle}")[0], task.id
        assert grade_answer(task.answer, task.forbidden, f"As requested, I checked. It is not all done: {oracle}")[0]


def test_a_refusal_blocker_is_the_only_reason(clinic, clinic_tasks):
    """Where the blocking value is an enum, another value of it lets the refused call through (no
    second blocker the answer would have to name instead)."""
    entities = clinic.spec.entities
    checked = 0
    for task in [t for t in clinic_tasks if t.tags[0] == "refusal"]:
        phrase = next((f.phrase for f in task.answer if isinstance(f, PhraseFact)), None)
        [attempt] = [s for s in task.near_misses[0].steps if getattr(s, "expect", "") == "error"]
        read = task.gold[-1]
        entity = next(a.entity for a in clinic.spec.actions if a.name == read.tool)
        field = next(
            (
                n
                for n, f in entities[entity].fields.items()
                if f.type == "enum" and phrase and phrase.replace(" ", "_") in (f.values or [])
            ),
            None,
        )
        if field is None:
            continue
        passed = []
        for value in entities[entity].fields[field].values or []:
            episode = task_episode(clinic.world, task, templates=TemplateCache(None))
            try:
                key = next(iter(read.args.values()))
                episode.conn.execute(
                    f'UPDATE "{clinic.models[entity].table.name}" SET "{field}" = ? WHERE id = ?', (value, key)
                )
                episode.conn.commit()
                passed.append(not episode.call(attempt.tool, attempt.args).is_error)
            finally:
                episode.close()
        assert any(passed), task.id
        checked += 1
    assert checked


def test_relaying_the_worlds_refusal_message_states_the_blocking_value():
    from mcpsim.taskgen._facts import relayed as _relayed

    found = _relayed("Doctor {doctor.name} is not accepting new appointments", ["accepting", "full_list"], "full list")
    assert found == ["not accepting new appointments"]
    fact = PhraseFact(phrase="full list", synonyms=found)
    assert grade_answer([fact], [PhraseFact(phrase="accepting")], "Dr. Berry is not accepting new appointments.")[0]
    # a clause that names another value of the field (not under a negation) is no synonym
    assert (
        _relayed("Booking {b.id} is {b.status}; only reserved bookings can start", ["reserved", "active"], "active")
        == []
    )


def test_an_enum_lookup_asks_for_a_less_common_value(library, clinic):
    """Guessing the commonest value of a field never answers a generated enum lookup (where the
    values are not all equally common)."""
    checked = 0
    for compiled in (library, clinic):
        generator = TaskGenerator(compiled, seed=0, scale="small")
        try:
            for entity, get in generator.probe.gets.items():
                table = compiled.models[entity].table.name
                for _ in range(6):
                    plan = field_lookup(generator.probe, entity, get)
                    if plan is None or not isinstance(plan.facts[0], PhraseFact):
                        continue
                    value = plan.facts[0].phrase.replace(" ", "_")
                    field = plan.tags[1]
                    counts = {
                        r["v"]: r["n"]
                        for r in generator.start.query(
                            f'SELECT "{field}" AS v, count(*) AS n FROM "{table}" GROUP BY v'
                        )
                    }
                    top = max(counts.values())
                    assert counts[value] < top or min(counts.values()) == top, (entity, field, counts, value)
                    checked += 1
        finally:
            generator.close()
    assert checked


def test_a_count_requirement_names_its_noun_in_the_plural():
    from mcpsim.taskgen._facts import stated as _stated

    assert _stated(CountFact(count=4, noun="capacity")) == "4 capacities"
    assert _stated(CountFact(count=6, noun="leave request")) == "6 leave requests"
    assert _stated(CountFact(count=1, noun="bill")) == "1 bill"
