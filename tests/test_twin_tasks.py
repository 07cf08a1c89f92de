"""Tasks for a twin, without a third-party server (tests/test_twin_servers.py generates them for
the real servers' twins): every kind over the notes twin, each audited by `mcpsim check`'s
machinery again here, the same tasks in another process, and an audit that refuses a broken task."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from mcpsim.audit import check_task
from mcpsim.factory.twin import infer_twin
from mcpsim.factory.twin_tasks import generate_twin_tasks, twin_task_set, validate_twin_tasks
from mcpsim.factory.twin_world import compile_twin
from mcpsim.factory.validate import tasks_digest
from mcpsim.grading import Verifier
from mcpsim.tasks import RowExists, Solution, Task, TaskFile
from tests.conftest import CLEAN_ENV
from tests.test_twin import SURFACE

SPEC = infer_twin(SURFACE)


@pytest.fixture(scope="module")
def report():
    return validate_twin_tasks(SPEC, count=8, seed=0)


def audit(tasks: list[Task]) -> dict[str, list[str]]:
    """`mcpsim check`'s audit of each task, on a world and verifier of its own."""
    world = compile_twin(SPEC)
    task_set = twin_task_set(SPEC, tasks)
    verifier = Verifier(world, task_set)
    return {t.id: check_task(world, verifier, t, task_set.canaries).problems for t in tasks}


def test_the_twin_gets_tasks_of_every_kind_that_validate(report):
    assert report.ok, report.failures
    assert len(report.tasks) == 8 and report.to_json()["accepted"]
    kinds = {t.tags[1] for t in report.tasks}
    assert kinds == {"write", "change", "lookup", "workflow"}
    assert audit(report.tasks) == {t.id: [] for t in report.tasks}  # every check passes again
    tools = {t.name for t in SPEC.tools if t.operation.kind != "call"}
    assert {a.tool for t in report.tasks for a in t.gold} <= tools  # replayed tools are never asked for


def test_a_task_is_graded_on_the_twins_rows(report):
    write = next(t for t in report.tasks if t.tags[1] == "write")
    created = [c for c in write.rubric if isinstance(c, RowExists)]
    assert created and created[0].table == "note_records" and not created[0].noop_passes
    key = created[0].where["id"]
    assert key in write.instruction  # the user names the new note
    lookup = next(t for t in report.tasks if t.tags[1] == "lookup")
    assert lookup.answer and "match" in lookup.instruction and lookup.near_misses[0].answer


def test_the_audit_refuses_a_broken_task(report):
    write = next(t for t in report.tasks if t.tags[1] == "write")
    same = write.model_copy(update={"near_misses": [Solution(name="does exactly the gold steps")]})
    lax = write.model_copy(update={"rubric": [c for c in write.rubric if c.type == "allowed_changes"]})
    problems = audit([same, lax.model_copy(update={"id": "lax"})])
    assert any("near miss" in p for p in problems[write.id])
    assert any("do-nothing agent passes" in p for p in problems["lax"])


def test_the_same_spec_gives_the_same_tasks_in_another_process(report, tmp_path):
    path = tmp_path / "notes.twin.json"
    path.write_text(SPEC.model_dump_json())
    done = subprocess.run(
        [sys.executable, "-m", "mcpsim.factory.twin_tasks", str(path), "--count", "8"],
        capture_output=True,
        text=True,
        env=CLEAN_ENV,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    written = TaskFile.model_validate(yaml.safe_load(done.stdout))
    assert written.world == SPEC.name and written.canary == twin_task_set(SPEC, []).files[0].canary
    assert tasks_digest(written.tasks) == tasks_digest(report.tasks)
    assert json.loads(done.stderr.strip().splitlines()[-1])["accepted"] is True
    other = generate_twin_tasks(SPEC, count=3, seed=1)
    assert tasks_digest(other) != tasks_digest(report.tasks[:3])  # the seed picks the data and the values


def test_a_twin_without_simulated_tools_gets_no_tasks_and_says_so():
    replayed = SPEC.model_copy(
        update={
            "tools": [
                t.model_copy(update={"operation": t.operation.model_copy(update={"kind": "call"})}) for t in SPEC.tools
            ]
        }
    )
    found = validate_twin_tasks(replayed, count=2)
    assert not found.ok and found.tasks == []
    assert found.failures["tasks_generated"] == ["0 of 2 tasks generated (candidates dropped: none; no more plans)"]
