"""The generator keeps no task a transcribing agent passes: a candidate the `transcriber` or the
one-step greedy agent solves (every argument in its instruction, one call) is dropped under the
acceptance criterion `not_trivial`, so a generated world's transcribing rate stays at 0 and the
acceptance gate (`TRIVIAL_GATE`, 5%) can only be reached by a spec's own tasks."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from mcpsim.acceptance._validate import TRIVIAL_GATE
from mcpsim.specs._compiler import compile_spec
from mcpsim.specs._spec import load_spec
from mcpsim.taskgen._generator import TaskGenerator, keep_sound, task_check
from mcpsim.tasks import Task

SPECS = Path(__file__).resolve().parents[2] / "examples" / "specs"


@pytest.fixture(scope="module")
def generator():
    made = TaskGenerator(compile_spec(load_spec(SPECS / "library.yaml")), seed=0, scale="small")
    yield made
    made.close()


def suspend(member: str, instruction: str) -> Task:
    return Task.model_validate(
        {
            "id": "suspend-spelled-out",
            "instruction": instruction,
            "gold": [{"tool": "suspend_member", "args": {"member_id": member}}],
            "rubric": [{"type": "gold_state", "requirement": "The member is suspended.", "noop_passes": False}],
            "difficulty": "easy",
            "split": "test",
        }
    )


def test_a_candidate_a_transcriber_solves_is_dropped_as_not_trivial(generator):
    member = generator.start.query("SELECT id FROM members WHERE status = 'active' ORDER BY id LIMIT 1")[0]["id"]
    spelled = suspend(member, f"Please suspend member {member}.")
    problems = generator.sound(spelled)
    assert any(p.startswith("a transcribing agent (") for p in problems), problems
    assert task_check(next(p for p in problems if p.startswith("a transcribing agent"))) == "not_trivial"
    dropped: Counter[str] = Counter()
    assert keep_sound([spelled], 1, generator.sound, dropped) == [] and dropped == {"not_trivial": 1}
    assert TRIVIAL_GATE == 0.05


def test_generated_tasks_pass_no_transcribing_agent(generator):
    kept = generator.generate(6)
    assert kept
    for task in kept:  # each was audited with the rated baselines and none passed it
        assert not any(p.startswith("a transcribing agent") for p in generator.sound(task)), task.id
