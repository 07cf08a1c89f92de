"""The answer grader held to the issue's targets by the red team of `claims_redteam`: on every
task with answer facts of the four hand-built worlds and of a generated world, at most 3% of the
correct answers refused and at most 2% of the wrong ones passed."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpsim.specs import compile_spec, load_spec
from mcpsim.taskgen import generate_tasks
from mcpsim.tasks import load_tasks
from tests.grading.claims_redteam import WORLDS, cases, run

REFUSED_AT_MOST, PASSED_AT_MOST = 0.03, 0.02
SPECS = Path(__file__).parents[2] / "examples" / "specs"


@pytest.mark.parametrize("world", WORLDS)
def test_correct_answers_pass_and_wrong_ones_fail_on_a_hand_built_world(world):
    refused, passed, n_correct, n_wrong = run({world: load_tasks(world).tasks})[world]
    assert n_correct >= 100 and n_wrong >= 300
    assert refused <= REFUSED_AT_MOST and passed <= PASSED_AT_MOST, (refused, passed)


def test_correct_answers_pass_and_wrong_ones_fail_on_a_generated_world():
    tasks = generate_tasks(compile_spec(load_spec(SPECS / "clinic.yaml")), count=12, seed=0)
    refused, passed, n_correct, n_wrong = run({"clinic": tasks})["clinic"]
    assert n_correct >= 20 and n_wrong >= 60
    assert refused <= REFUSED_AT_MOST and passed <= PASSED_AT_MOST, (refused, passed)


def test_every_wrong_class_is_tried():
    classes = {case.cls for case in cases("airline", load_tasks("airline").tasks) if not case.correct}
    assert classes >= {"denied after", "correction", "question", "hedge", "guesses", "swapped"}
