"""The task generator: real mcpsim tasks of every kind, from plans found on the seeded world, with
rubrics that `mcpsim check` accepts (run again here, independently of the generator's own run),
the same in every process for a seed and different for another."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from mcpsim.acceptance._validate import tasks_digest
from mcpsim.audit._audit import check_task
from mcpsim.audit._baselines import RATED
from mcpsim.engine._episode import Episode
from mcpsim.engine._templates import TemplateCache
from mcpsim.grading import Verifier
from mcpsim.specs._arguments import Arguments
from mcpsim.specs._compiler import compile_spec
from mcpsim.specs._operands import message_pattern
from mcpsim.specs._spec import load_spec, parse_spec
from mcpsim.taskgen import _generator as taskgen_module
from mcpsim.taskgen._generator import KINDS, TURNS, TaskGenerator, generate_tasks, task_set
from mcpsim.taskgen._wording import ask
from mcpsim.tasks import CallOrder, Confirmed, IdFact, TaskFile
from mcpsim.tasks._scenario import task_episode

SPECS = Path(__file__).parents[2] / "examples" / "specs"


@pytest.fixture(scope="module")
def clinic():
    return compile_spec(load_spec(SPECS / "clinic.yaml"))


@pytest.fixture(scope="module")
def tasks(clinic):
    # the composed kinds take most turns: 17 reach every kind but the dialogue ones (test_dialogue_tasks.py)
    turns = [t for t in TURNS if t not in ("ask", "change", "decline")]
    return generate_tasks(clinic, count=17, seed=0, turns=turns)


def of_kind(tasks, kind):
    found = [t for t in tasks if t.tags[0] == kind]
    assert found, f"no {kind} task"
    return found


def test_every_kind_is_generated_as_a_valid_task_file(clinic, tasks):
    assert len(tasks) == 17 and len({t.id for t in tasks}) == 17
    # the clinic offers no triage (no set of records two changes apply to) and no tally (its
    # appointments hold no amount): tests/taskgen/test_composed_tasks.py shows those
    kinds = {t.tags[0] for t in tasks}  # errand pairs two jobs of one person: rare on 17 tasks
    assert {"pick", "branch", "sweep"} <= kinds <= set(KINDS) - {"triage", "tally"}, kinds
    dumped = task_set(clinic, tasks).files[0].model_dump(mode="json", exclude_defaults=True)
    again = TaskFile.model_validate(yaml.safe_load(yaml.safe_dump(dumped)))
    assert again.tasks == tasks and again.canary.startswith("MCPSIM-CANARY-")
    for task in tasks:
        assert task.seed == 0 and task.scale == "small"
        assert task.alternatives or task.near_misses, task.id
        assert any(c.type == "gold_state" for c in task.rubric) and any(
            c.type == "allowed_changes" for c in task.rubric
        )


def test_every_task_passes_an_independent_mcpsim_check(clinic, tasks):
    """Gold twice, do-nothing, the cheating baselines, alternatives and near misses, on a fresh
    verifier and template cache (not the generator's)."""
    verifier = Verifier(clinic.world, task_set(clinic, tasks), templates=TemplateCache(None))
    for task in tasks:
        report = check_task(clinic.world, verifier, task, verifier.tasks.canaries)
        assert report.ok, (task.id, report.problems)
        assert report.noop_reward == 0 and report.gold_reward == 1
        assert not any(r.applied and r.passed for name, r in report.baselines.items() if name not in RATED)
        assert all(s.behaved for s in report.solutions) and report.solutions


def test_writes_carry_row_checks_and_the_policy_rules(clinic, tasks):
    # the one-call writes the transcriber solves are dropped (`not_trivial`): on this sample the
    # workflows are the plain writes left
    writing = [t for t in tasks if t.tags[0] in ("write", "workflow")]
    assert writing
    for task in writing:
        writes = [a.tool for a in task.gold if clinic.world.tools[a.tool].writes]
        assert writes and any(c.type in ("row_exists", "field_equals", "row_absent") for c in task.rubric)
        identity = [c for c in task.rubric if isinstance(c, CallOrder)]
        if task.gold[0].tool == "get_patient":  # the user is a patient: looked up before any change
            assert identity and identity[0].first_result == task.gold[0].args
            assert task.gold[0].args["patient_id"] in task.instruction
        confirm = [c for c in task.rubric if isinstance(c, Confirmed)]
        needed = sorted(set(writes) & {"cancel_appointment", "pay_invoice"})
        assert (confirm[0].tools if confirm else []) == needed


def test_a_refusal_task_asks_for_a_write_the_world_refuses(clinic, tasks):
    for task in of_kind(tasks, "refusal"):
        _, write, rule = task.tags
        assert not any(clinic.world.tools[a.tool].writes for a in task.gold)
        [attempt] = [s for s in task.near_misses[0].steps if getattr(s, "expect", "") == "error"]
        assert attempt.tool == write
        for key in attempt.args.values():
            assert str(key) in task.instruction
        episode = task_episode(clinic.world, task, templates=TemplateCache(None))
        try:
            before = episode.state_hash()
            refused = episode.call(write, attempt.args)
            assert refused.is_error and episode.state_hash() == before
        finally:
            episode.close()
        [template] = [r.template for r in clinic.actions[write].refusals if r.name == rule]
        assert message_pattern(template).match(refused.error), (task.id, refused.error)
        blocking = task.answer[0]
        assert isinstance(blocking, IdFact) and blocking.id in task.gold[-1].args.values()


def test_a_recovery_task_scripts_the_partial_failure_and_forbids_a_second_write(tasks):
    [task] = of_kind(tasks, "recovery")
    write = task.gold[-2]
    assert write.expect == "error" and task.gold[-1].tool == "get_appointment"
    assert task.fault_profile() is not None and task.fault_profile().script[0].fault == "partial"
    assert isinstance(task.answer[0], IdFact) and task.answer[0].id == task.gold[-1].args["appointment_id"]
    [twice] = task.near_misses
    assert [a.tool for a in twice.steps if hasattr(a, "tool")][-2:] == [write.tool, write.tool]


def test_instructions_and_personas_vary(tasks):
    openings = {t.instruction.split(",")[0].split(".")[0] for t in tasks}
    assert len(openings) >= 3
    assert len({t.user.persona for t in tasks}) >= 3


def test_the_same_seed_gives_the_same_tasks_and_another_seed_others():
    bikes = compile_spec(load_spec(SPECS / "bikes.yaml"))
    first = generate_tasks(bikes, count=4, seed=3)
    assert tasks_digest(generate_tasks(compile_spec(load_spec(SPECS / "bikes.yaml")), count=4, seed=3)) == (
        tasks_digest(first)
    )
    assert tasks_digest(generate_tasks(bikes, count=4, seed=4)) != tasks_digest(first)


def test_a_candidate_mcpsim_check_refuses_is_dropped_and_counted(monkeypatch):
    bikes = compile_spec(load_spec(SPECS / "bikes.yaml"))
    real = taskgen_module.check_task

    def refuse_lookups(world, verifier, task, canaries, **kwargs):
        report = real(world, verifier, task, canaries, **kwargs)
        if task.tags[0] == "lookup":
            report.problems.insert(0, "a do-nothing agent passes this task")
        return report

    monkeypatch.setattr(taskgen_module, "check_task", refuse_lookups)
    generator = TaskGenerator(bikes, seed=0, scale="small")
    try:
        kept = generator.generate(5)
    finally:
        generator.close()
    assert kept and not [t for t in kept if t.tags[0] == "lookup"]
    assert generator.dropped["not_satisfied_at_start"] >= 1


def test_amount_means_a_transfer_amount_only_in_a_transfer():
    """`amount` is what the spec declares it to be: in a transfer, so much of the moved field (its
    type and bounds); in any other action, an input like any other, with its own field's."""
    data = yaml.safe_load((SPECS / "library.yaml").read_text())
    data["entities"]["donation"] = {
        "id": {"prefix": "DN", "digits": 4},
        "fields": {
            "member_id": {"type": "ref", "entity": "member"},
            "amount": {
                "type": "int",
                "min": 1,
                "max": 5,
                "description": "Books given.",
                "generator": {"range": [1, 5]},
            },
        },
    }
    data["scales"] = {scale: counts | {"donation": 3} for scale, counts in data["scales"].items()}
    data["actions"].append(
        {
            "name": "give_books",
            "kind": "create",
            "entity": "donation",
            "inputs": ["member_id", "amount"],
            "description": "Record books a member gives.",
        }
    )
    compiled = compile_spec(parse_spec(data))
    give = next(a for a in compiled.spec.actions if a.name == "give_books")
    episode = Episode.create(compiled.world, 0, "small", templates=TemplateCache(None))
    try:
        values = Arguments(compiled, seed=0).parameter_values(give, episode)  # drawn from its own field
        assert values["amount"] == [1, 3, 5]
        member = values["member_id"][0]
        assert not episode.call("give_books", {"member_id": member, "amount": 5}).is_error
        assert "less than or equal to 5" in (episode.call("give_books", {"member_id": member, "amount": 6}).error or "")
    finally:
        episode.close()
    generator = TaskGenerator(compiled, seed=0, scale="small")
    try:
        transfer = next(a for a in compiled.spec.actions if a.kind == "transfer")
        assert ask(generator.probe, give, {"member_id": "M00001", "amount": 3}).details == "member M00001; amount 3"
        moved = ask(generator.probe, transfer, {"source_member_id": "M1", "target_member_id": "M2", "amount": 2.5})
        assert moved.details == "from member M1; to member M2; $2.50 of credit"
    finally:
        generator.close()
