"""Every cheating baseline of `mcpsim check` on a small catalogue sample, unscreened.

The catalogue's CI sample (`tests/catalogue/test_catalog.py`, acceptance's `baselines_fail`) runs
the same battery, but on generated tasks only as the generator's screen: a candidate a baseline
passes is dropped and counted, never reported, so "every baseline passes 0 there" holds by
construction. Here the generator's candidates are taken as drawn, before any screen, and each is
audited as `mcpsim check` audits a task (`check_task` with every baseline); every baseline must
pass none of them, and the report must name every baseline `mcpsim check` has. A transcribing
baseline (`RATED`) is judged by its rate over a world, so it is held to that rate here. This test
found one class passing unscreened candidates (`other_action_confirmed`: "Shall I keep them as
they are?" and a yes, then the writes, for a tool whose name has no known verb); the scripted user
and the `confirmed` check now read keeping things as they are as another action for any write."""

from __future__ import annotations

from collections import Counter

import pytest

from mcpsim.audit import check_task
from mcpsim.audit._baselines import BASELINES, RATED
from mcpsim.catalogue._blueprints import catalogue_specs
from mcpsim.grading import Verifier
from mcpsim.specs import compile_spec
from mcpsim.taskgen._generator import TaskGenerator, task_set

WORLDS = 2  # the first catalogue worlds of seed 0, as `mcpsim gen --catalog --count 2` draws them
CANDIDATES = 4  # the first candidates of each, unscreened: about 10 CPU-s in all
TRIVIAL_RATE = 0.05  # acceptance's TRIVIAL_GATE


@pytest.fixture(scope="module")
def audited() -> tuple[Counter[str], Counter[str], int, list[str]]:
    """Per baseline: the candidates it applied to and those it passed; the candidates audited, and
    the problems `mcpsim check` found of a baseline passing."""
    applied: Counter[str] = Counter()
    passed: Counter[str] = Counter()
    count, problems = 0, []
    for _, _, _, spec in catalogue_specs(WORLDS, seed=0):
        assert not isinstance(spec, Exception), spec
        compiled = compile_spec(spec)
        generator = TaskGenerator(compiled, seed=0, scale="small")
        try:
            for _, task in zip(range(CANDIDATES), generator.candidates(), strict=False):
                tasks = task_set(compiled, [task])
                verifier = Verifier(compiled.world, tasks, templates=generator.probe.templates)
                report = check_task(compiled.world, verifier, task, tasks.canaries)
                assert set(report.baselines) == set(BASELINES), f"{task.id}: {sorted(report.baselines)}"
                for name, result in report.baselines.items():
                    applied[name] += result.applied
                    passed[name] += result.passed
                cheats = [p for p in report.problems if "baseline" in p]
                problems += [f"{spec.name}/{task.id}: {p}" for p in cheats]
                count += 1
        finally:
            generator.close()
    return applied, passed, count, problems


def test_every_cheating_baseline_passes_no_unscreened_catalogue_task(audited):
    applied, passed, count, problems = audited
    assert count == WORLDS * CANDIDATES
    cheats = {name: passed[name] for name in BASELINES if name not in RATED}
    assert cheats == dict.fromkeys(cheats, 0), {n: p for n, p in cheats.items() if p}
    assert problems == []
    for name in RATED:
        assert passed[name] <= TRIVIAL_RATE * count, f"{name} passes {passed[name]} of {count}"


def test_the_sample_exercises_the_baselines_of_every_kind_of_task(audited):
    """Not a vacuous zero: the answer, report, confirmation and process baselines each apply to
    some candidate (those of effects and injected text need tools the sample's worlds may lack)."""
    applied, _, count, _ = audited
    for name in ("policy_text", "pasted_reads", "extra_write", "zero_call_guess", "false_report", "random_agent"):
        assert applied[name] == count, name
    for name in ("negated_answer", "denied_after", "spread_guesses", "blind_yes", "other_action_confirmed"):
        assert applied[name] >= 1, name
