"""The `repeated_effect` and `zero_call_guess` baselines of `mcpsim check` on real tasks: each
fails the graded tasks it applies to, and each catches its class when the grading has the hole
again (repeats not counted; no call needed)."""

from __future__ import annotations

import pytest

from mcpsim.audit._baselines import BASELINE_LABELS, BASELINES
from mcpsim.audit._effect_baselines import repeated_effect, zero_call_guess
from mcpsim.engine import TemplateCache
from mcpsim.grading import Verifier, _effects, _grader
from mcpsim.tasks import load_tasks
from mcpsim.world import load_world


@pytest.fixture(scope="module")
def airline(templates: TemplateCache) -> Verifier:
    return Verifier(load_world("airline"), load_tasks("airline"), templates=templates)


def test_both_are_registered_and_labelled():
    assert {"repeated_effect", "zero_call_guess"} <= set(BASELINES) <= set(BASELINE_LABELS)


@pytest.mark.parametrize("task_id", ["cal-accept-allhands", "files-playbook-to-nadia"])
def test_a_repeated_effect_fails_and_would_pass_if_repeats_went_uncounted(workspace, monkeypatch, task_id):
    task = workspace.tasks.get(task_id)
    result = repeated_effect(workspace.world, workspace, task)
    assert result.applied and not result.passed and "repeating an earlier one" in result.detail, result
    monkeypatch.setattr(_effects, "repeats_of", lambda changes: {})
    hole = Verifier(workspace.world, workspace.tasks, templates=workspace.templates)
    assert repeated_effect(workspace.world, hole, task).passed


def test_a_repeated_effect_does_not_apply_without_an_irreversible_call(bank):
    result = repeated_effect(bank.world, bank, bank.tasks.get("dispute-status"))
    assert not result.applied and "no irreversible call" in result.detail


@pytest.mark.parametrize("task_id", ["lookup-next-trip", "refuse-cancel-trip-in-progress"])
def test_a_zero_call_guess_fails_and_would_pass_without_the_calls_check(airline, monkeypatch, task_id):
    task = airline.tasks.get(task_id)
    result = zero_call_guess(airline.world, airline, task)
    assert result.applied and not result.passed and "no call took effect" in result.detail, result
    monkeypatch.setattr(_grader, "calls_check", lambda task, transcript: None)
    hole = Verifier(airline.world, airline.tasks, templates=airline.templates)
    assert zero_call_guess(airline.world, hole, task).passed


def test_a_zero_call_guess_does_not_apply_where_the_gold_makes_no_call(airline):
    result = zero_call_guess(airline.world, airline, airline.tasks.get("refuse-unidentified-user"))
    assert not result.applied
