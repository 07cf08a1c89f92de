"""Validation of compiled worlds: the examples are accepted with their generated tasks; a
precondition that can never be violated, one that can never be satisfied, and seed data that
breaks its own constraints are rejected with the check that caught them (the tool checks run
without tasks here: tests/acceptance/test_pipeline.py rejects bad tasks)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mcpsim.acceptance._validate import CRITERIA, validate
from mcpsim.specs._compiler import compile_spec
from mcpsim.specs._spec import load_spec, parse_spec
from tests.conftest import CLEAN_ENV

SPECS = Path(__file__).parents[2] / "examples" / "specs"


def library() -> dict:
    return yaml.safe_load((SPECS / "library.yaml").read_text())


def lend_book(data: dict) -> dict:
    return next(a for a in data["actions"] if a["name"] == "lend_book")


@pytest.mark.parametrize("name", ["library", "clinic"])
def test_the_examples_are_accepted_by_every_check(name):
    report = validate(compile_spec(load_spec(SPECS / f"{name}.yaml")), task_count=2)
    assert report.ok, report.to_json()["failures"]
    assert set(report.counts()) == set(CRITERIA) and not any(report.counts().values())
    assert len(report.tasks) == 2 and report.to_json()["tasks"] == [t.id for t in report.tasks]
    assert all(stats.successes for stats in report.actions.values())
    assert report.actions["lend_book" if name == "library" else "pay_invoice"].refusals


def test_a_precondition_that_can_never_be_violated_is_rejected():
    data = library()
    lend_book(data)["preconditions"].append(
        {"name": "always_true", "message": "This never happens", "require": {"left": 1, "op": "eq", "right": 1}}
    )
    report = validate(compile_spec(parse_spec(data)), processes=False, task_count=0)
    assert report.failed_criteria() == ["precondition_violated"]
    assert report.failures["precondition_violated"] == [
        f"lend_book: always_true was never violated in {report.actions['lend_book'].calls} calls"
    ]
    assert report.counts()["precondition_violated"] == 1


def test_a_precondition_that_can_never_be_satisfied_is_rejected_with_what_blocked_it():
    data = library()
    lend_book(data)["preconditions"].insert(
        0, {"name": "never", "message": "Lending is closed", "require": {"left": "book.copies", "op": "lt", "right": 0}}
    )
    report = validate(compile_spec(parse_spec(data)), processes=False, task_count=0)
    assert "tool_succeeds" in report.failed_criteria()
    [failure] = report.failures["tool_succeeds"]
    assert failure.startswith("lend_book never succeeded in ") and "(refused by: never x" in failure
    # every other lend_book rule sits behind it, so none of them is ever met either
    assert any("no_copy_left was never violated" in f for f in report.failures["precondition_violated"])


def test_seed_data_that_breaks_a_constraint_is_rejected():
    data = library()
    data["entities"]["book"]["fields"]["copies"]["generator"] = {"range": [-2, 3]}
    report = validate(compile_spec(parse_spec(data)), processes=False, task_count=0)
    assert "seed_constraints" in report.failed_criteria()
    assert any("is below the minimum 0" in f for f in report.failures["seed_constraints"])
    assert any("breaks non_negative_book_copies" in f for f in report.failures["seed_constraints"])


def test_a_refusal_that_writes_is_caught(monkeypatch):
    """A tool that writes and then refuses (a simulator that forgot to roll back) is rejected."""
    compiled = compile_spec(load_spec(SPECS / "library.yaml"))
    from mcpsim.engine import _episode as episode_module

    original = episode_module.Episode.call

    def leaky(self, tool, arguments=None):
        result = original(self, tool, arguments)
        if tool == "suspend_member" and result.is_error:
            self.edit("UPDATE books SET copies = copies + 1")
        return result

    monkeypatch.setattr(episode_module.Episode, "call", leaky)
    report = validate(compiled, processes=False, task_count=0)
    assert report.failed_criteria() == ["refusal_changes_nothing"]
    assert all(f.startswith("suspend_member(") for f in report.failures["refusal_changes_nothing"])


def test_mcpsim_gen_validate_exits_nonzero_and_names_the_check(tmp_path):
    data = library()
    lend_book(data)["preconditions"].append(
        {"name": "always_true", "message": "This never happens", "require": {"left": 1, "op": "eq", "right": 1}}
    )
    spec = tmp_path / "broken.yaml"
    spec.write_text(yaml.safe_dump(data))
    done = subprocess.run(
        [sys.executable, "-m", "mcpsim", "gen", "--validate", str(spec), "--tasks", "0"],
        capture_output=True,
        text=True,
        env=CLEAN_ENV,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "rejected by: precondition_violated" in done.stderr
    assert '"precondition_violated": 1' in done.stdout
