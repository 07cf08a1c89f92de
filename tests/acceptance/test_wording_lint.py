"""The wording lint (issue 27 item 3): each known error shape is found and its correct form is not;
generated catalogue worlds pass it (articles, column phrases, no Faker filler in their text, no
e-mail shared between worlds); a world with filler in a text field fails acceptance's `wording`."""

from __future__ import annotations

import itertools

import pytest

from mcpsim.acceptance import CRITERIA, validate
from mcpsim.acceptance._wording import (
    FINDING_KINDS,
    argument_dumps,
    candidate_problems,
    column_phrases,
    instruction_hits,
    is_filler,
    quoted_descriptions,
    quoted_values,
    repeated_constants,
    wording_hits,
    wording_problems,
    wrong_articles,
)
from mcpsim.catalogue._blueprints import blueprints, expand
from mcpsim.engine._episode import Episode
from mcpsim.engine._templates import TemplateCache
from mcpsim.specs._compiler import compile_spec
from mcpsim.specs._spec import parse_spec
from mcpsim.specs._vocabularies import vocabularies
from mcpsim.taskgen._generator import KINDS, TaskGenerator

# -- each shape, both ways ------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["Book a appointment", "Cancel an booking for me", "It is a item I own"])
def test_a_wrong_article_is_found(text):
    assert wrong_articles(text)


@pytest.mark.parametrize("text", ["Book an appointment", "Cancel a booking", "a user, an hour, a unit, an X-ray"])
def test_a_right_article_is_not(text):
    assert wrong_articles(text) == []


def test_a_column_named_as_a_noun_is_found_and_a_noun_column_is_not():
    columns = ["enrolled", "capacity", "is_active"]
    assert column_phrases("What is the enrolled of lesson block SE09906?", columns) == ["the enrolled of"]
    assert column_phrases("Could you tell me the is active of member M1?", columns) == ["the is active of"]
    assert column_phrases("What is the capacity of lesson block SE09906?", columns) == []
    assert column_phrases("How many are enrolled in lesson block SE09906?", columns) == []


def test_a_quoted_tool_description_is_found_and_a_paraphrase_is_not():
    descriptions = ["Check a client in for a booked appointment.", "Add a new rider."]
    quoted = "Hi. Could you check a client in for a booked appointment? It's AP1."
    assert quoted_descriptions(quoted, descriptions) == ["Check a client in for a booked appointment."]
    assert quoted_descriptions("Hi, I'm here for my 3pm appointment, AP1. Can you check me in?", descriptions) == []
    assert quoted_descriptions("Please add a new rider: Ann Lee.", descriptions) == ["Add a new rider."]


def test_an_argument_dump_is_found_and_a_sentence_is_not():
    labels = ["patient", "doctor", "day", "reason", "name", "email"]
    dump = "Could you book it? The details: patient CL690880; doctor PR7036; day 2026-05-22."
    assert argument_dumps(dump, labels)
    assert argument_dumps("Please add: name: Ann Lee, email: ann@example.org, phone: 555 0101.", labels)
    assert argument_dumps("Could you book me in with Dr Berry on 22 May? It's about my knee; thanks.", labels) == []


@pytest.mark.parametrize(
    "dump",
    [
        "Please cancel it: order_id=OR1001, reason=damaged.",
        "Cancel the order (order_id = OR1001).",
        'Run cancel_order with {"order_id": "OR1001", "reason": "damaged"}.',
        "Cancel it. order: OR1001, reason: damaged, refund: yes.",
        "Could you cancel it? The details: order OR1001; reason damaged.",
    ],
)
def test_an_argument_dump_in_any_form_is_found(dump):
    assert argument_dumps(dump, ["order", "reason", "refund"]), dump


def test_a_quoted_id_or_found_value_is_found_and_the_users_own_words_are_not():
    formats = [("OR", 4), ("CU", 6)]
    assert quoted_values("Cancel my order OR1001, please.", formats) == ["OR1001"]
    assert quoted_values("It's the one for customer CU123456.", formats) == ["CU123456"]
    assert quoted_values('Cancel the order called "Blue Kettle".', formats, ["Blue Kettle"]) == ["Blue Kettle"]
    assert quoted_values("Move it to 2026-05-22.", formats, ["2026-05-22"]) == ["2026-05-22"]
    said = "Hi, this is Ann Lee. Please cancel my pending order for the book with the highest price."
    assert quoted_values(said, formats, ["pending", "OR1001"]) == []  # a state word, no id
    assert quoted_values("Order OR10012 is not an id of the format; nor is XOR1001.", formats) == []


def test_faker_filler_is_found_and_domain_text_is_not():
    assert is_filler("Room institution east personal water.")
    assert is_filler("Business-focused real-time access")
    for text in ["Leaking tap in the kitchen", "Routine dental check-up", "Returned 4 days late", "Ann Lee"]:
        assert not is_filler(text), text


def test_no_vocabulary_value_is_filler_or_has_a_wrong_article():
    for field, variants in vocabularies().items():
        for variant in variants:
            slots = sorted(variant["slots"])
            for pattern in variant["patterns"]:
                for values in itertools.product(*(variant["slots"][s] for s in slots)):
                    text = pattern.format(**dict(zip(slots, values, strict=True)))
                    assert not is_filler(text) and not wrong_articles(text), (field, text)


def test_a_constant_in_several_worlds_is_found_and_distinct_ones_are_not():
    shared = {"a": ["Mail ann@example.org please"], "b": ["Her e-mail is ann@example.org."], "c": ["bob@example.org"]}
    assert repeated_constants(shared) == {"ann@example.org": ["a", "b"]}
    assert repeated_constants({"a": ["call +1 (555) 010-2030"], "b": ["call 555-010-2031"]}) == {}


# -- generated worlds -----------------------------------------------------------------------------

FAMILIES = ("clinic", "customer_support", "library", "property_management")


@pytest.fixture(scope="module")
def worlds():
    return {name: compile_spec(expand(blueprints()[name], 5, name=f"{name}_00005")) for name in FAMILIES}


def test_generated_worlds_pass_the_enforced_lint(worlds):
    """Every kind's candidates, the composed and dialogue ones (which must name no id and dump no
    argument) too."""
    finding = 0
    for name, compiled in worlds.items():
        generator = TaskGenerator(compiled, seed=0, scale="small")
        try:
            tasks = [t for t, _ in zip(generator.candidates(), range(30), strict=False)]
            hits = wording_hits(compiled, tasks, generator.start)
        finally:
            generator.close()
        finding += sum(t.tags[0] in FINDING_KINDS for t in tasks)
        assert wording_problems(hits) == [], name
    assert finding >= 20


def test_the_finding_kinds_are_generated_kinds():
    assert FINDING_KINDS <= set(KINDS)


@pytest.fixture(scope="module")
def drawn(worlds):
    """The clinic's first candidates: a task that finds things out and a one-call write."""
    compiled = worlds["clinic"]
    generator = TaskGenerator(compiled, seed=0, scale="small")
    try:
        tasks = [t for t, _ in zip(generator.candidates(), range(40), strict=False)]
    finally:
        generator.close()
    finding = next(t for t in tasks if t.tags[0] in FINDING_KINDS)
    write = next(t for t in tasks if t.tags[0] == "write")
    return compiled, finding, write


def _ids(task) -> list[str]:
    return [str(v) for a in task.gold for k, v in a.args.items() if k.endswith("_id")]


def test_a_finding_task_in_the_users_words_passes_and_its_dumps_are_refused(drawn):
    compiled, task, _ = drawn
    assert candidate_problems(compiled, task) == [], task.instruction
    target = _ids(task)[-1]  # the record the gold acts on: the agent is to find it
    arg = next(k for a in task.gold for k, v in a.args.items() if str(v) == target)
    dumps = [
        f"{task.instruction} It's {target}.",
        f'{task.instruction} (the one called "{target}")',
        f"{task.instruction} {arg}={target}",
        f'{task.instruction} {{"{arg}": "{target}"}}',
        f"{task.instruction} The details: {arg.replace('_id', '')} {target}; reason none.",
    ]
    for text in dumps:
        refused = candidate_problems(compiled, task.model_copy(update={"instruction": text}))
        assert refused and all("argument dump" in p or "quoted value" in p for p in refused), text


def test_a_one_call_write_may_state_its_arguments(drawn):
    """The one-call kinds ask for a write by its details: counted, not refused."""
    compiled, _, write = drawn
    hits = instruction_hits(compiled, write)
    assert any(h.kind == "argument_dump" for h in hits), write.instruction
    assert candidate_problems(compiled, write) == []


def test_acceptance_drops_a_candidate_that_dumps_arguments_and_counts_it(worlds, monkeypatch):
    """A candidate whose instruction quotes its target's id is dropped under `wording` before its
    audit; the world is still accepted with the others, none of which quotes an id."""
    compiled = worlds["clinic"]
    made = TaskGenerator.task
    spoiled: list[str] = []

    def quoting(self, plan, number):
        task = made(self, plan, number)
        if task.tags[0] in FINDING_KINDS and len(spoiled) < 2:
            spoiled.append(task.id)
            return task.model_copy(update={"instruction": f"{task.instruction} It is {_ids(task)[-1]}."})
        return task

    monkeypatch.setattr(TaskGenerator, "task", quoting)
    report = validate(compiled, processes=False, task_count=3)
    assert len(spoiled) == 2 and report.dropped.get("wording") == 2, report.dropped
    assert report.failures["wording"] == [] and report.failures["tasks_generated"] == []
    assert not {t.id for t in report.tasks} & set(spoiled)


def test_worlds_seeded_alike_share_no_email(worlds):
    texts = {}
    for name, compiled in worlds.items():
        if not any("email" in m.spec.fields for m in compiled.models.values()):
            continue
        episode = Episode.create(compiled.world, 0, "small", templates=TemplateCache(None))
        try:
            texts[name] = [
                str(v) for r in episode.query('SELECT * FROM "' + _people(compiled) + '"') for v in r.values()
            ]
        finally:
            episode.close()
        assert any("@" in t for t in texts[name]), name
    assert len(texts) >= 2 and repeated_constants(texts) == {}


def _people(compiled) -> str:
    return next(m.table.name for m in compiled.models.values() if "email" in m.spec.fields)


# -- acceptance -----------------------------------------------------------------------------------


def _spec(text_field: str) -> dict:
    return {
        "name": "repair_desk",
        "title": "Repair desk",
        "description": "Repairs reported by tenants.",
        "scales": {"small": {"repair": 6}, "default": {"repair": 12}},
        "entities": {
            "repair": {
                "id": {"prefix": "RP", "digits": 4},
                "fields": {text_field: {"type": "str", "max_length": 200, "generator": {"faker": "sentence"}}},
            }
        },
        "actions": [{"name": "get_repair", "kind": "get", "entity": "repair", "description": "Look up a repair."}],
    }


def test_acceptance_refuses_filler_and_accepts_the_worlds_own_words():
    assert "wording" in CRITERIA
    filler = validate(compile_spec(parse_spec(_spec("blurb"))), processes=False, task_count=0)
    assert filler.failures["wording"] and "lorem" in filler.failures["wording"][0]
    assert filler.wording["lorem"] > 0
    words = validate(compile_spec(parse_spec(_spec("problem"))), processes=False, task_count=0)
    assert words.failures["wording"] == [] and "wording" in words.criteria_run
