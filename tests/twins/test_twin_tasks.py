"""Tasks for a twin, without a third-party server (tests/twins/test_twin_servers.py generates them for
the real servers' twins): every kind over the notes twin, each audited by `mcpsim check`'s
machinery again here, the same tasks in another process, and an audit that refuses a broken task.
End to end: `mcpsim gen --from-mcp --tasks N` against a real stdio server written with the MCP
SDK writes the tasks beside the twin, and `--world-spec TWIN.json` lists and runs them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml
from click.testing import CliRunner

from mcpsim.acceptance._validate import tasks_digest
from mcpsim.audit._audit import check_task
from mcpsim.cli import main
from mcpsim.grading import Verifier
from mcpsim.tasks import RowExists, Solution, Task, TaskFile
from mcpsim.twins._infer import infer_twin
from mcpsim.twins._tasks import generate_twin_tasks, twin_task_set, validate_twin_tasks
from mcpsim.twins._twin_spec import load_twin
from mcpsim.twins._world import compile_twin
from tests.conftest import CLEAN_ENV
from tests.support.commands import mcpsim_argv
from tests.twins.test_twin import SURFACE

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
    assert not [t.id for t in report.tasks if "\\u0000" in t.model_dump_json()]  # no slot left in any field
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
        [sys.executable, "-m", "mcpsim.twins", "tasks", str(path), "--count", "8"],
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


NOTES_SERVER = """
from pydantic import BaseModel
from mcp.server.mcpserver import MCPServer

server = MCPServer("notes-server")
NOTES = {}


class Note(BaseModel):
    title: str
    body: str


class Notes(BaseModel):
    notes: list[Note]


@server.tool()
def create_notes(notes: list[Note]) -> Notes:
    \"\"\"Create notes; a title already taken is skipped.\"\"\"
    made = [n for n in notes if n.title not in NOTES]
    NOTES.update({n.title: n for n in made})
    return Notes(notes=made)


@server.tool()
def search_notes(query: str) -> Notes:
    \"\"\"The notes whose title or body contains the query.\"\"\"
    return Notes(notes=[n for n in NOTES.values() if query.lower() in f"{n.title} {n.body}".lower()])


@server.tool()
def delete_notes(titles: list[str]) -> str:
    \"\"\"Delete notes by title.\"\"\"
    for title in titles:
        NOTES.pop(title, None)
    return "Notes deleted successfully"


if __name__ == "__main__":
    server.run()
"""
PING_SERVER = """
from mcp.server.mcpserver import MCPServer

server = MCPServer("ping-server")


@server.tool()
def ping() -> str:
    \"\"\"Answer pong.\"\"\"
    return "pong"


if __name__ == "__main__":
    server.run()
"""


def mcpsim(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(mcpsim_argv(*args), capture_output=True, text=True, env=CLEAN_ENV, timeout=300)


def twin_of(source: str, folder, *options: str) -> tuple[subprocess.CompletedProcess[str], object]:
    """`mcpsim gen --from-mcp` of a real stdio server (an SDK server run from `source`)."""
    script = folder / "server.py"
    script.write_text(source)
    out = folder / "notes.twin.json"
    return mcpsim("gen", "--from-mcp", "--out", str(out), *options, "--", sys.executable, str(script)), out


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """A twin of a real SDK server, written by `mcpsim gen --from-mcp --tasks 4`."""
    done, out = twin_of(NOTES_SERVER, tmp_path_factory.mktemp("notes"), "--tasks", "4")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), out


@pytest.mark.system
def test_gen_from_mcp_writes_the_twins_audited_tasks_beside_it(written):
    report, out = written
    tasks_file = out.with_name("notes.twin.tasks.yaml")
    assert report["tools"] == report["mirrored"] == 3
    assert report["tasks"] == {
        "asked": 4,
        "kept": 4,
        "candidates_dropped": {},
        "failures": {},
        "file": str(tasks_file),
    }
    spec = load_twin(out)
    on_disk = TaskFile.model_validate(yaml.safe_load(tasks_file.read_text()))
    assert on_disk.world == spec.name == "notes_server" and on_disk.canary == twin_task_set(spec, []).files[0].canary
    assert tasks_digest(on_disk.tasks) == tasks_digest(generate_twin_tasks(spec, count=4))
    assert audit_of(spec, on_disk.tasks) == {t.id: [] for t in on_disk.tasks}
    assert {t.tags[1] for t in on_disk.tasks} >= {"change", "lookup"}


def audit_of(spec, tasks: list[Task]) -> dict[str, list[str]]:
    world = compile_twin(spec)
    task_set = twin_task_set(spec, tasks)
    verifier = Verifier(world, task_set)
    return {t.id: check_task(world, verifier, t, task_set.canaries).problems for t in tasks}


@pytest.mark.system
def test_world_spec_lists_and_runs_a_twins_tasks(written, tmp_path):
    _, out = written
    on_disk = TaskFile.model_validate(yaml.safe_load(out.with_name("notes.twin.tasks.yaml").read_text()))
    listed = mcpsim("tasks", "notes_server", "--world-spec", str(out), "--json")
    assert listed.returncode == 0, listed.stderr
    assert [t["id"] for t in json.loads(listed.stdout)] == [t.id for t in on_disk.tasks]
    ran = mcpsim("run", "notes_server", "--world-spec", str(out), "--agent", "oracle", "--out", str(tmp_path / "run"))
    assert ran.returncode == 0, ran.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert (summary["episodes"], summary["pass_at_1"], summary["errors"]) == (4, 1.0, 0)


@pytest.mark.system
def test_a_twin_without_a_task_file_gets_generated_tasks(written, tmp_path):
    _, out = written
    alone = tmp_path / "alone.json"  # no alone.tasks.yaml beside it
    alone.write_text(out.read_text())
    on_disk = TaskFile.model_validate(yaml.safe_load(out.with_name("notes.twin.tasks.yaml").read_text()))
    listed = mcpsim("tasks", "notes_server", "--world-spec", str(alone), "--json")
    assert listed.returncode == 0, listed.stderr
    ids = [t["id"] for t in json.loads(listed.stdout)]  # stdout is the JSON alone: build logs go to stderr
    assert len(ids) > 4 and ids[:4] == [t.id for t in on_disk.tasks]  # the same candidates, at seed 0


@pytest.mark.system
def test_gen_from_mcp_says_when_no_task_can_be_made(tmp_path):
    done, out = twin_of(PING_SERVER, tmp_path, "--tasks", "2")
    assert done.returncode == 1 and "no task could be made for the twin (0 of 2 tasks generated" in done.stderr
    assert out.is_file() and not out.with_name("notes.twin.tasks.yaml").exists()


def test_a_broken_twin_spec_is_a_usage_error(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"kind": "twin", "name": "Not A Name"}))
    done = CliRunner().invoke(main, ["tasks", "broken", "--world-spec", str(broken)])
    assert done.exit_code == 2 and "not a twin spec" in done.output
    helped = CliRunner().invoke(main, ["gen", "--help"])
    assert "tasks written beside the twin (OUT's name with .tasks.yaml)" in " ".join(helped.output.split())


def test_braces_in_the_data_stay_text() -> None:
    """A record's text with braces (`{"x": 1}`, `{greeting}`) is worded as it is: the greeting is
    filled in by replacement, never by formatting the instruction a second time."""
    from mcpsim.twins._tasks import Plan, TwinTaskGenerator

    generator = TwinTaskGenerator(SPEC, seed=0)
    try:
        plan = next(generator.write_plans())
        odd = Plan(plan.kind, plan.gold, 'keep the note {"x": 1} about {greeting}', plan.tags)
        task = generator.task(odd, 1)
    finally:
        generator.close()
    assert '{"x": 1} about {greeting}' in task.instruction
    assert "\x00" not in task.instruction


def test_sample_arguments_follow_references_in_the_input_schema() -> None:
    """A pydantic parameter (`notes: list[Note]`) reaches the twin as `$defs` and `$ref`: its
    sample is an object with the referenced fields, not a bare string."""
    from mcpsim.twins._world import sample_arguments

    tool = next(t for t in SPEC.tools if t.operation.kind != "call")
    note = {"type": "object", "properties": {"title": {"type": "string"}, "stars": {"type": "integer"}}}
    schema = {
        "type": "object",
        "$defs": {"Note": note},
        "properties": {"notes": {"type": "array", "items": {"$ref": "#/$defs/Note"}}},
        "required": ["notes"],
    }
    args = sample_arguments(SPEC, tool.model_copy(update={"input_schema": schema}), {})
    [sample] = args["notes"]
    assert set(sample) == {"title", "stars"} and isinstance(sample["title"], str) and sample["stars"] == 1
