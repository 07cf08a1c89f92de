"""Twins of three real third-party MCP servers, end to end (benchmarks/twins.py holds the servers
and the client sessions): each real server runs behind `mcpsim record`; its twin mirrors every tool
with an equal input schema and answers within the real output schemas; replaying the recordings
against the twin measures its fidelity; the twin's generated tasks validate. .ci/run installs the
servers (pinned) and sets MCPSIM_THIRD_PARTY_SERVERS=required, so in CI a missing server fails
instead of skipping."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client, StdioServerParameters

from benchmarks import twins
from mcpsim.audit._audit import check_task
from mcpsim.cli import main
from mcpsim.grading import Verifier
from mcpsim.twins._tasks import twin_task_set
from mcpsim.twins._twin_spec import load_twin
from mcpsim.twins._world import compile_twin
from tests.conftest import CLEAN_ENV
from tests.support.commands import mcpsim_argv

REQUIRED = os.environ.get("MCPSIM_THIRD_PARTY_SERVERS") == "required"
MCPSIM = mcpsim_argv()


def server(name: str) -> twins.Server:
    found = twins.SERVERS[name]
    if not found.installed:
        reason = f"{twins.PINS[name]} is not installed at {found.binary} (.ci/run installs it)"
        if REQUIRED:
            pytest.fail(reason)
        pytest.skip(reason)
    return found


@pytest.fixture(scope="module", params=sorted(twins.SERVERS))
def measured(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict:
    found = server(request.param)
    return anyio.run(twins.measure, found, tmp_path_factory.mktemp(request.param)) | {"name": request.param}


@pytest.mark.system
def test_every_tool_is_mirrored_with_an_equal_input_schema_and_valid_answers(measured):
    check = measured["check"]
    assert check["tools"] >= 9
    assert check["mirrored"] == check["schemas_equal"] == check["tools"], check["schema_differs"]
    bad = {name: a for name, a in check["answers"].items() if a["is_error"] or a["schema_problem"]}
    assert not bad


@pytest.mark.system
def test_the_twin_reproduces_the_recorded_session(measured):
    seen = measured["reports"]["seen"]
    assert seen["calls"] >= 9
    assert seen["same_outcome"] == 1.0 and seen["same_shape"] == 1.0
    minimum = {"memory": 1.0, "filesystem": 0.6, "git": 0.8}[measured["name"]]
    assert seen["same_values"] >= minimum, seen["differences"]


@pytest.mark.system
def test_the_held_out_session_measures_the_simulation(measured):
    held = measured["reports"]["held_out"]
    assert held["calls"] >= 6
    if measured["name"] == "memory":  # every tool is simulated, none replayed: a session it never saw
        assert held == held | {"same_outcome": 1.0, "same_shape": 1.0, "same_values": 1.0}, held["differences"]
    else:
        assert held["same_outcome"] >= 0.8


@pytest.mark.system
def test_recordings_seed_the_twin(measured):
    spec = measured["spec"]
    if measured["name"] == "filesystem":  # files read in the session existed before it: they seed the twin
        paths = [Path(row["path"]).name for row in spec.seed_rows["file"]]
        assert "notes.txt" in paths and "todo.txt" not in paths  # todo.txt was written during the session
        read = spec.tool("read_text_file")
        assert read.not_found is not None and "ENOENT" in read.not_found and "{key}" in read.not_found
    if measured["name"] == "memory":
        assert spec.seed_rows == {}  # the graph starts empty: everything read was written in the session
        assert spec.tool("add_observations").not_found == "Entity with name {key} not found"
    if measured["name"] == "git":
        assert {"git_status", "git_log", "git_show"} <= set(spec.answers)  # replayed, not simulated


TASKS_AT_LEAST = {  # of 10 asked: git's twin simulates two tools (a branch's creation and the list)
    "memory": {"recorded": 10, "synthetic": 10},
    "filesystem": {"recorded": 10, "synthetic": 10},
    "git": {"recorded": 5, "synthetic": 6},
}


@pytest.mark.system
def test_the_twins_tasks_validate(measured):
    """Tasks for the twin, on the data the recording seeded and on synthetic data: each kept one
    passed `mcpsim check`'s audit, and passes it again here."""
    for which, report in measured["task_reports"].items():
        spec = measured["spec"] if which == "recorded" else measured["inferred"]
        problems = {c: found for c, found in report.failures.items() if found and c != "tasks_generated"}
        assert not problems and not report.dropped
        assert len(report.tasks) >= TASKS_AT_LEAST[measured["name"]][which], report.failures
        world = compile_twin(spec)
        tasks = twin_task_set(spec, report.tasks)
        verifier = Verifier(world, tasks)
        for task in report.tasks:
            assert check_task(world, verifier, task, tasks.canaries).problems == [], task.id
    kinds = {t.tags[1] for t in measured["task_reports"]["synthetic"].tasks}
    expected = {"memory": {"write", "change", "lookup", "workflow"}, "git": {"write", "lookup"}}
    assert kinds >= expected.get(measured["name"], {"write", "change", "lookup", "workflow"})


@pytest.mark.system
def test_the_cli_writes_a_twin_that_serves_and_keeps_state(tmp_path):
    memory = server("memory")
    out = tmp_path / "memory.twin.json"
    env = {**CLEAN_ENV, "MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")}
    done = subprocess.run(
        [*MCPSIM, "gen", "--from-mcp", "--out", str(out), "--", str(memory.binary)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["tools"] == report["mirrored"] == report["schemas_equal"] == report["answers_ok"] == 9
    assert load_twin(out).server["name"] == "memory-server"

    async def use() -> tuple[dict, dict]:
        params = StdioServerParameters(command=MCPSIM[0], args=[*MCPSIM[1:], "gen", "--serve", str(out)], env=CLEAN_ENV)
        with anyio.fail_after(120):
            async with Client(params, read_timeout_seconds=120) as client:
                entity = {"name": "Tim", "entityType": "person", "observations": ["likes tea"]}
                await client.call_tool("create_entities", {"entities": [entity]})
                found = await client.call_tool("search_nodes", {"query": "tea"})
                graph = await client.call_tool("read_graph", {})
                return found.structured_content or {}, graph.structured_content or {}

    found, graph = anyio.run(use)
    assert [e["name"] for e in found["entities"]] == ["Tim"]
    assert "Tim" in [e["name"] for e in graph["entities"]] and len(graph["entities"]) == 6  # 5 seeded + Tim

    wrong = CliRunner().invoke(main, ["gen", "--from-mcp", "--", str(memory.binary)])
    assert wrong.exit_code == 2 and "--from-mcp needs --out FILE" in wrong.output


@pytest.mark.system
def test_the_fidelity_command_reports_per_recording(measured, tmp_path):
    """`mcpsim fidelity TWIN RECORDING...` prints what `fidelity()` measured, per recording."""
    twin = tmp_path / "twin.json"
    twin.write_text(measured["spec"].model_dump_json())
    first, held_out = measured["work"] / "first", measured["work"] / "held-out"
    done = CliRunner().invoke(main, ["fidelity", str(twin), str(first), str(held_out)])
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert report[str(first)] | {"per_tool": None} == measured["reports"]["seen"] | {"per_tool": None}
    assert report[str(held_out)]["same_values"] == measured["reports"]["held_out"]["same_values"]


def test_the_docs_table_is_the_generated_one():
    assert twins.main(["--check"]) == 0
