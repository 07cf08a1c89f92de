"""Retail's task set under the verifier: `mcpsim check`, sampled perturbations of the gold
solutions, and the canary scan over real MCP responses. Tasks are picked by their shape, so the
tests follow the task files as they grow."""

from __future__ import annotations

import json
import subprocess
import sys

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client

from mcpsim.audit._baselines import RATED
from mcpsim.audit._transcriber import TRIVIAL_LIMIT
from mcpsim.cli import main
from mcpsim.grading import Verifier
from mcpsim.serve._mcp import build_server, policy_uri
from mcpsim.tasks._scenario import gold_steps, oracle_answer, run_actions, run_solution, task_episode
from tests.conftest import CLEAN_ENV
from tests.support.commands import verify_args

pytestmark = pytest.mark.anyio


WORLD = "retail"  # for the `world` and `task_set` fixtures


@pytest.fixture(scope="module")
def verifier(world, task_set):
    return Verifier(world, task_set)


def writes(world, task):
    return [a for a in task.gold if world.tools[a.tool].writes]


def test_mcpsim_check_passes_for_every_world_and_retail_has_at_least_50_tasks():
    out = subprocess.run(
        [sys.executable, "-m", "mcpsim", "check", "--json"], capture_output=True, text=True, timeout=1800, env=CLEAN_ENV
    )
    reports = {r["world"]: r for r in json.loads(out.stdout)}
    bad = {
        r["world"]: [(t["task_id"], t["problems"]) for t in r["tasks"] if not t["ok"]] + r["problems"]
        for r in reports.values()
        if not r["ok"]
    }
    assert out.returncode == 0 and not bad, bad
    for r in reports.values():
        # every cheating baseline passed nothing; the rated ones (a correct but trivial agent) stay under the limit
        cheats = {name: b for name, b in r["baselines"].items() if name not in RATED}
        assert all(b["passed"] == 0 for b in cheats.values()), (r["world"], cheats)
        assert all(rate <= TRIVIAL_LIMIT for rate in r["pass_rates"].values()), (r["world"], r["pass_rates"])
        assert r["baselines"]["policy_text"]["applied"] == len(r["tasks"])
        assert r["alternatives"]["behaved"] == r["alternatives"]["run"], r["world"]
        assert r["near_misses"]["behaved"] == r["near_misses"]["run"], r["world"]
    assert len(reports["retail"]["tasks"]) >= 50
    assert all(t["gold_reward"] == 1.0 and t["noop_reward"] == 0.0 for t in reports["retail"]["tasks"])


def test_gold_plus_one_unrelated_write_fails_strict_naming_the_collateral_change(world, task_set, verifier):
    sample = [t for t in task_set.tasks if writes(world, t)][:6]
    assert sample
    for task in sample:
        ep = task_episode(world, task)
        run_actions(ep, task.gold)
        someone = ep.query("SELECT id FROM customers ORDER BY id DESC LIMIT 1")[0]["id"]
        extra = ep.call(
            "add_customer_address",
            {"customer_id": someone, "line1": "9 Unrelated Road", "city": "Nowhere", "state": "KS", "zip": "66002"},
        )
        assert not extra.is_error, extra.error
        verdict = verifier.grade(ep, task, oracle_answer(task))
        assert not verdict.passed and verdict.reward == 0.0, task.id
        collateral = [c for c in verdict.checks if c.type == "allowed_changes"]
        assert collateral and not collateral[0].passed and "addresses" in collateral[0].reason, task.id
        assert any(d.table == "addresses" and d.op == "insert" for d in verdict.diff), task.id


def test_half_the_gold_actions_fail_strict_with_a_partial_reward_between_0_and_1(world, task_set, verifier):
    sample = [t for t in task_set.tasks if len(writes(world, t)) >= 2][:6]
    assert sample, "no task with two or more writes"
    for task in sample:
        last_write = max(i for i, a in enumerate(task.gold) if world.tools[a.tool].writes)
        ep = task_episode(world, task)
        run_actions(ep, task.gold[:last_write])  # everything but the last write
        verdict = verifier.grade(ep, task, oracle_answer(task))
        assert not verdict.passed and verdict.reward == 0.0, task.id
        assert 0 < verdict.partial_reward < 1, (task.id, verdict.report())


def test_calling_a_forbidden_tool_fails_that_check(world, task_set, verifier):
    sample = [t for t in task_set.tasks if any(c.type == "tool_not_called" for c in t.rubric)][:6]
    assert sample, "no task forbids a tool"
    for task in sample:
        check = next(c for c in task.rubric if c.type == "tool_not_called")
        forbidden = next(
            name for name in sorted(world.tools) if any(__import__("fnmatch").fnmatchcase(name, p) for p in check.tools)
        )
        ep = task_episode(world, task)
        run_actions(ep, task.gold)
        ep.call(forbidden, {})  # an attempt with bad arguments: a violation where the task says attempts are
        attempts_count = [c.model_copy(update={"include_refused": True}) if c is check else c for c in task.rubric]
        verdict = verifier.grade(ep, task.model_copy(update={"rubric": attempts_count}), oracle_answer(task))
        result = next(c for c in verdict.checks if c.type == "tool_not_called" and c.requirement == check.requirement)
        assert not result.passed and forbidden in result.reason and not verdict.passed, task.id


async def test_no_mcp_response_of_any_oracle_run_contains_a_canary(world, task_set):
    seen: list[str] = []
    for task in task_set.tasks:
        episode = task_episode(world, task)
        with anyio.fail_after(60):
            async with Client(build_server(world, lambda _id, ep=episode: ep)) as client:
                seen.append(client.instructions or "")
                seen.append((await client.list_tools()).model_dump_json())
                seen.append((await client.list_resources()).model_dump_json())
                seen.append((await client.read_resource(policy_uri(world))).model_dump_json())
                for action in task.gold:
                    result = await client.call_tool(action.tool, action.args)
                    assert result.is_error == (action.expect == "error"), (task.id, action.tool, result.content)
                    seen.append(result.model_dump_json())
    assert len(seen) > 4 * len(task_set.tasks)
    for canary in task_set.canaries:
        assert not any(canary in text for text in seen)


def test_the_tasks_command_shows_gold_actions_and_rubrics(task_set):
    result = CliRunner().invoke(main, ["tasks", "retail", "--json", "--split", "test"])
    assert result.exit_code == 0, result.output
    listed = json.loads(result.stdout)
    assert listed and all(t["split"] == "test" and t["rubric"] for t in listed)
    assert {t["id"] for t in listed} == {t.id for t in task_set.tasks if t.split == "test"}


def test_verify_grades_a_recorded_episode_from_its_snapshot(world, task_set, tmp_path):
    task = next(t for t in task_set.tasks if writes(world, t))
    ep = task_episode(world, task)
    conversation = tmp_path / "conversation.json"  # write tasks check the confirmation on the dialogue
    conversation.write_text(json.dumps(run_solution(ep, task, gold_steps(task, world))))
    snapshot = tmp_path / "episode.sqlite"
    snapshot.write_bytes(ep.snapshot())
    runner = CliRunner()
    ok = runner.invoke(
        main,
        verify_args("retail", task, snapshot, conversation),
    )
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["passed"] is True
    other = next(t for t in task_set.tasks if t.id != task.id)
    wrong = runner.invoke(main, ["verify", "retail", "--task", other.id, "--snapshot", str(snapshot)])
    assert wrong.exit_code == 1 and "FAIL" in wrong.stdout and "created for task" in wrong.stdout
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"not a database")
    bad = runner.invoke(main, ["verify", "retail", "--task", task.id, "--snapshot", str(garbage)])
    assert bad.exit_code == 1 and "is not an mcpsim episode" in bad.output
    unknown = runner.invoke(main, ["verify", "retail", "--task", "nope", "--snapshot", str(snapshot)])
    assert unknown.exit_code == 2 and "unknown task 'nope'" in unknown.output


def test_check_of_an_unknown_world_is_a_usage_error():
    result = CliRunner().invoke(main, ["check", "atlantis"])
    assert result.exit_code == 2 and "unknown world 'atlantis'" in result.output


def test_fault_recovery_tasks_need_the_recovery_and_an_agent_that_gives_up_fails(world, task_set, verifier):
    faulty = [t for t in task_set.tasks if t.faults is not None]
    assert len(faulty) >= 10
    for task in faulty:
        first_error = next(i for i, a in enumerate(task.gold) if a.expect == "error")
        ep = task_episode(world, task)
        run_actions(ep, task.gold[: first_error + 1])  # the fault happens, then the agent gives up
        verdict = verifier.grade(ep, task, "Sorry, the system is failing right now; please try again later.")
        assert not verdict.passed and verdict.reward == 0.0, task.id
        assert any(r.fault for r in ep.transcript()), task.id


def test_a_run_with_a_fault_profile_records_the_faults_in_the_trajectories(tmp_path):
    code = CliRunner().invoke(
        main,
        [
            "run",
            "retail",
            "--agent",
            "random",
            "--tasks",
            "train",
            "--faults",
            "hostile",
            "--out",
            str(tmp_path),
            "--max-steps",
            "12",
        ],
    )
    assert code.exit_code == 0, code.output
    lines = [json.loads(x) for x in (tmp_path / "trajectories.jsonl").read_text().splitlines()]
    faults = [c["fault"] for t in lines for c in t["calls"] if c["fault"]]
    assert faults and {f["kind"] for f in faults} & {"transient", "rate_limit", "timeout", "paginate", "stale"}
    assert all(t["status"] == "completed" for t in lines)
