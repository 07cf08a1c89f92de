"""Issue 13's first "Done when": a small spec (examples/specs/bikes.yaml) compiled, served over
HTTP (`mcpsim serve --world-spec`, uvicorn on 127.0.0.1) and stdio to the SDK client, its tasks
run with the oracle and a do-nothing agent and audited with the cheating baselines, and the world
validated; a spec with a broken precondition, an unsatisfiable task or a task satisfied at the
start is rejected with the check that caught it. Every command runs in a subprocess, so this
test process's registry of worlds stays as it was."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
import yaml
from mcp import Client, StdioServerParameters

from mcpsim.acceptance._validate import CRITERIA, validate
from mcpsim.audit._baselines import RATED
from mcpsim.engine._episode import Episode
from mcpsim.engine._templates import TemplateCache
from mcpsim.grading import Verifier
from mcpsim.specs._compiler import compile_spec
from mcpsim.specs._spec import load_spec, parse_spec
from mcpsim.taskgen._generator import KINDS, task_set
from mcpsim.tasks import Say
from mcpsim.tasks._dialogue import confirmation_reply
from mcpsim.tasks._scenario import gold_steps
from mcpsim.world._registry import world_names
from tests.conftest import CLEAN_ENV, free_port, wait_until_healthy

pytestmark = pytest.mark.anyio
EXAMPLE = Path(__file__).parents[2] / "examples" / "specs" / "bikes.yaml"
TASKS = 3  # generated per process: bikes has few sound ones (most are one-call tasks a transcriber passes)


@pytest.fixture(scope="module")
def spec(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("spec") / "bikes.yaml"
    path.write_text(EXAMPLE.read_text() + f"generated_tasks: {TASKS}\n")
    return path


def mcpsim(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpsim", *args], capture_output=True, text=True, env=CLEAN_ENV, cwd=cwd, timeout=600
    )


@pytest.fixture(scope="module")
def bikes(spec):
    return compile_spec(load_spec(spec))


@pytest.fixture(scope="module")
def report(bikes):
    return validate(bikes)  # two fresh processes included: the same template hash and candidate tasks


@pytest.fixture(scope="module")
def bike_tasks(bikes, report):
    return task_set(bikes, report.tasks)  # what every process generates from the spec (the server's too)


@pytest.fixture(scope="module")
def server(spec, tmp_path_factory):
    """`mcpsim serve bikes --world-spec SPEC --http` as a real process; yields its base URL."""
    folder = tmp_path_factory.mktemp("bikes-server")
    port = free_port()
    log = (folder / "stderr.log").open("wb")
    command = ["serve", "bikes", "--world-spec", str(spec), "--http", "--port", str(port), "--token", "tok"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpsim", *command, "--no-cache", "--log-level", "WARNING"],
        env=CLEAN_ENV,
        stdout=subprocess.DEVNULL,
        stderr=log,
        cwd=folder,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(url, proc, Path(log.name))
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()


@pytest.mark.system
async def test_served_over_http_like_a_hand_built_world(server, bikes):
    with anyio.fail_after(60):
        async with Client(f"{server}/mcp") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            listed = await client.call_tool("list_bikes", {"status": "available"})
    assert set(tools) == {a.name for a in bikes.spec.actions}
    assert tools["get_bike"].annotations.read_only_hint is True
    assert listed.structured_content["total"] >= 1
    assert {b["status"] for b in listed.structured_content["items"]} == {"available"}


@pytest.mark.system
def test_its_tasks_run_with_the_oracle_over_http(spec, server, tmp_path):
    done = mcpsim(
        "run", "bikes", "--world-spec", str(spec), "--agent", "oracle", "--server", server, "--token", "tok",
        "--out", str(tmp_path), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["episodes"] == TASKS and summary["pass_at_1"] == 1.0


@pytest.mark.system
async def test_a_task_episode_served_over_stdio_is_graded_like_any_other(spec, bikes, bike_tasks, tmp_path):
    """The gold steps (with the confirmation turn the policy asks for) sent to `mcpsim serve
    --world-spec --task` over stdio; the database it writes on exit is graded with that conversation."""
    task = next(t for t in bike_tasks.tasks if not t.faults and all(a.expect == "ok" for a in t.gold))  # no fault
    final = tmp_path / "final.sqlite"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcpsim", "serve", "bikes", "--world-spec", str(spec), "--task", task.id, "--no-cache"]
        + ["--exit-snapshot", str(final), "--log-level", "WARNING"],
        env=CLEAN_ENV,
        cwd=str(tmp_path),
    )
    conversation: list[dict] = [{"role": "user", "content": task.instruction}]
    with anyio.fail_after(120):
        async with Client(params) as client:
            for n, step in enumerate(gold_steps(task, bikes.world)):
                if isinstance(step, Say):
                    conversation.append({"role": "assistant", "content": step.say})
                    conversation.append({"role": "user", "content": confirmation_reply(step.say, task, conversation)})
                    continue
                result = await client.call_tool(step.tool, step.args)
                assert not result.is_error, result.content[0].text
                call = {"id": f"call_{n}", "type": "function"}
                call["function"] = {"name": step.tool, "arguments": json.dumps(step.args)}
                conversation.append({"role": "assistant", "content": None, "tool_calls": [call]})
                conversation.append({"role": "tool", "tool_call_id": call["id"], "content": result.content[0].text})
    episode = Episode.restore(bikes.world, final.read_bytes())
    verifier = Verifier(bikes.world, bike_tasks, templates=TemplateCache(None))
    verdict = verifier.grade(episode, task, task.oracle_answer(), conversation)
    assert verdict.passed, verdict.failure or [c for c in verdict.checks if not c.passed]


def test_mcpsim_check_runs_the_cheating_baselines_on_its_tasks(spec, tmp_path):
    done = mcpsim("check", "--world-spec", str(spec), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    [report] = json.loads(done.stdout)
    assert report["world"] == "bikes" and report["ok"] and len(report["tasks"]) == TASKS
    applied = {name: tally["applied"] for name, tally in report["baselines"].items()}
    # the transcribing agents are judged by their rate over a world's tasks (docs/rewards.md), not here
    assert all(tally["passed"] == 0 for name, tally in report["baselines"].items() if name not in RATED)
    assert applied["policy_text"] == applied["random_agent"] == applied["extra_write"] == TASKS
    assert report["near_misses"]["run"] >= TASKS and report["near_misses"]["behaved"] == report["near_misses"]["run"]


def test_a_worlds_dir_serves_the_task_files_written_beside_it(bikes, report, tmp_path):
    """`mcpsim gen --catalog`'s layout: worlds/NAME.yaml and tasks/NAME.yaml; the written tasks are
    the world's, none generated."""
    (tmp_path / "worlds").mkdir()
    (tmp_path / "tasks").mkdir()
    (tmp_path / "worlds" / "bikes.yaml").write_text(EXAMPLE.read_text())
    written = task_set(bikes, report.tasks[:2]).files[0].model_dump(mode="json", exclude_defaults=True)
    (tmp_path / "tasks" / "bikes.yaml").write_text(yaml.safe_dump(written))
    done = mcpsim("tasks", "bikes", "--worlds-dir", str(tmp_path / "worlds"), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert [t["id"] for t in json.loads(done.stdout)] == [t.id for t in report.tasks[:2]]


def test_a_spec_may_not_take_an_installed_worlds_name(tmp_path):
    spec = tmp_path / "retail.yaml"
    spec.write_text(EXAMPLE.read_text().replace("name: bikes", "name: retail"))
    done = mcpsim("tools", "retail", "--world-spec", str(spec), cwd=tmp_path)
    assert done.returncode == 2
    assert "world 'retail' is already installed; give the generated world another name" in done.stderr


def test_the_spec_is_validated_and_accepted(bikes, report):
    assert report.ok, report.to_json()["failures"]
    assert report.criteria_run == list(CRITERIA)  # every check ran, the process check included
    assert len(report.tasks) == TASKS and all(report.actions[a.name].successes for a in bikes.spec.actions)
    kinds = {t.tags[0] for t in report.tasks}
    assert len(kinds) >= 3 and kinds <= set(KINDS), kinds
    assert "bikes" not in world_names()  # nothing was registered in this process


# -- rejections ---------------------------------------------------------------------------------------


def spec_data() -> dict:
    return yaml.safe_load(EXAMPLE.read_text())


def rejected_by(data: dict) -> tuple[list[str], dict[str, list[str]]]:
    report = validate(compile_spec(parse_spec(data)), processes=False, task_count=0)
    return report.failed_criteria(), report.failures


def a_bike(status: str) -> str:
    episode = Episode.create(compile_spec(load_spec(EXAMPLE)).world, 0, "small", templates=TemplateCache(None))
    try:
        return episode.query("SELECT id FROM bikes WHERE status = ? ORDER BY id LIMIT 1", (status,))[0]["id"]
    finally:
        episode.close()


def declared_task(bike: str, status: str, requirement: str, gold: list[dict]) -> dict:
    """A task the spec declares, whose rubric wants `bike` in `status`."""
    check = {"type": "field_equals", "requirement": requirement, "table": "bikes", "where": {"id": bike}}
    return {
        "id": "declared",
        "instruction": f"Please take bike {bike} out of service.",
        "scale": "small",
        "difficulty": "easy",
        "split": "test",
        "gold": gold,
        "rubric": [check | {"values": {"status": status}, "noop_passes": False}],
    }


def test_a_broken_precondition_is_rejected_by_precondition_violated():
    data = spec_data()
    start = next(a for a in data["actions"] if a["name"] == "start_rental")
    start["preconditions"].append(
        {"name": "always", "message": "Renting is closed", "require": {"left": 1, "op": "le", "right": 2}}
    )
    checks, failures = rejected_by(data)
    assert checks == ["precondition_violated"]
    assert failures["precondition_violated"][0].startswith("start_rental: always was never violated")


def test_an_unsatisfiable_task_is_rejected_by_gold_passes_twice():
    bike = a_bike("available")
    repair = [{"tool": "send_to_repair", "args": {"bike_id": bike}}]
    task = declared_task(bike, "stolen", f"Bike {bike} is stolen, a status bikes never have.", repair)
    checks, failures = rejected_by(spec_data() | {"tasks": [task]})
    assert checks == ["gold_passes_twice"]
    assert failures["gold_passes_twice"][0].startswith("task declared: the gold actions do not pass")


def test_a_task_satisfied_at_the_start_is_rejected_by_not_satisfied_at_start():
    bike = a_bike("repair")
    task = declared_task(bike, "repair", f"Bike {bike} is out of service for repair.", [])
    checks, failures = rejected_by(spec_data() | {"tasks": [task]})
    # every agent passes it, a transcribing one too: over the world's 5% (`not_trivial`)
    assert "not_satisfied_at_start" in checks
    assert set(checks) <= {"not_satisfied_at_start", "baselines_fail", "not_trivial"}
    assert "task declared: a do-nothing agent passes this task" in failures["not_satisfied_at_start"]
