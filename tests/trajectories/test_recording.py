"""Recording whoever the client is: an episode driven by a plain MCP SDK client over HTTP comes
back as a trajectory, and `--record DIR` writes every episode when it ends."""

from __future__ import annotations

import json

import anyio
import httpx
import pytest
from mcp import Client

from mcpsim.serve._app import ServeConfig, create_app, serve_in_thread
from mcpsim.tasks import load_tasks
from mcpsim.tasks._scenario import gold_steps, run_solution, task_episode
from mcpsim.trajectories._records import Trajectory
from mcpsim.world._registry import load_world

pytestmark = pytest.mark.anyio


async def test_an_episode_driven_by_a_plain_sdk_client_comes_back_with_every_call_result_and_change(tmp_path):
    task = next(t for t in load_tasks("retail").tasks if len(t.gold) >= 3)
    app = create_app(
        ServeConfig(world="retail", scale="small", cache_dir=None, record_dir=str(tmp_path / "rec"), token="tok")
    )
    with serve_in_thread(app) as url:
        async with httpx.AsyncClient(base_url=url, headers={"Authorization": "Bearer tok"}) as http:
            ep = (await http.post("/episodes", json={"world": "retail", "task": task.id})).json()
            with anyio.fail_after(60):
                async with Client(ep["mcp_url"], mode="legacy") as client:
                    for action in task.gold:
                        await client.call_tool(action.tool, action.args)
                    await client.call_tool("get_order_details", {"order_id": "#W0000000"})  # a refused call
                    await client.call_tool("get_order_details", {"order_id": 12})  # rejected by the schema
            record = Trajectory.model_validate((await http.get(f"/episodes/{ep['id']}/trajectory")).json())
            # The harness passes the dialogue it had with the agent (the policy's confirmation turn is
            # graded on it); a plain SDK client has none, so it is the gold conversation here.
            world = load_world("retail")
            dialogue = run_solution(task_episode(world, task), task, gold_steps(task, world))
            verdict = (
                await http.post(
                    f"/episodes/{ep['id']}/verify", json={"answer": task.oracle_answer(), "messages": dialogue}
                )
            ).json()
            assert (await http.delete(f"/episodes/{ep['id']}")).status_code == 204
    assert [c.tool for c in record.calls] == [a.tool for a in task.gold] + ["get_order_details"] * 2
    assert all(c.ok for c in record.calls[: len(task.gold)]) and not any(c.ok for c in record.calls[-2:])
    assert "not found" in record.calls[-2].error and record.calls[-1].arguments == {"order_id": 12}
    assert all(c.result is not None for c in record.calls[: len(task.gold)])
    changed = [c for c in record.calls if c.changes]
    assert changed and all(ch.after or ch.before for c in changed for ch in c.changes)
    assert record.messages[0].role == "system" and len(record.messages) == 1 + 2 * len(record.calls)
    assert record.task_id == task.id and record.termination == "recorded" and record.state_hash
    (line,) = (tmp_path / "rec" / "trajectories.jsonl").read_text().splitlines()
    written = Trajectory.model_validate_json(line)
    assert written.verdict == verdict and written.reward == verdict["reward"] == 1.0
    assert len(written.calls) == len(record.calls)
    assert json.loads(written.messages[1].tool_calls[0].function.arguments) == task.gold[0].args


async def test_the_default_episode_is_recorded_when_the_server_stops(tmp_path):
    app = create_app(
        ServeConfig(
            world="retail", scale="small", cache_dir=None, record_dir=str(tmp_path), shared_default=True, no_auth=True
        )
    )
    with serve_in_thread(app) as url:
        with anyio.fail_after(60):
            async with Client(f"{url}/mcp") as client:
                await client.call_tool("list_product_categories", {})
    (line,) = (tmp_path / "trajectories.jsonl").read_text().splitlines()
    t = Trajectory.model_validate_json(line)
    assert t.episode_id == "default" and [c.tool for c in t.calls] == ["list_product_categories"]
