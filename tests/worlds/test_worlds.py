"""Every installed world, together: sizes, and one process serving them all at once."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import httpx
import pytest
from mcp import Client

from mcpsim.engine._episode import Episode
from mcpsim.serve._app import ServeConfig, create_app, serve_in_thread
from mcpsim.tasks import load_tasks
from mcpsim.tasks._scenario import gold_steps, run_solution, task_episode
from mcpsim.world._registry import load_world, world_names

pytestmark = pytest.mark.anyio


def test_the_worlds_hold_at_least_75_tools_and_170_tasks():
    names = world_names()
    assert {"retail", "airline", "workspace", "bank"} <= set(names)
    tools = sum(len(load_world(n).tools) for n in names)
    tasks = sum(len(load_tasks(n).tasks) for n in names)
    assert tools >= 75 and tasks >= 170, (tools, tasks)
    for name in names:
        assert len(load_world(name).tools) >= 15, name


def write_task(name: str):
    world = load_world(name)
    return next(
        t
        for t in load_tasks(name).tasks
        if sum(world.tools[a.tool].writes for a in t.gold) >= 1 and all(a.expect == "ok" for a in t.gold)
    )


async def test_one_process_serves_episodes_of_every_world_concurrently_without_interference():
    names = world_names()
    expected, conversations = {}, {}
    for name in names:  # the state each task's gold solution reaches alone, in process
        world, task = load_world(name), write_task(name)
        ep = task_episode(world, task)
        conversations[name] = run_solution(ep, task, gold_steps(task, world))
        expected[name] = ep.state_hash()
    app = create_app(ServeConfig(world="retail", scale="small", cache_dir=None, token="tok"))
    got: dict[str, list[str]] = {name: [] for name in names}
    with serve_in_thread(app) as url:
        async with httpx.AsyncClient(base_url=url, timeout=60, headers={"Authorization": "Bearer tok"}) as http:

            async def drive(name: str, copy: int) -> None:
                task = write_task(name)
                ep = (await http.post("/episodes", json={"world": name, "task": task.id})).json()
                async with Client(ep["mcp_url"]) as client:
                    for action in task.gold:
                        result = await client.call_tool(action.tool, action.args)
                        assert not result.is_error, (name, action.tool, result.content)
                        await anyio.lowlevel.checkpoint()
                dialogue = conversations[name]  # the harness's conversation: the confirmation turn is graded
                verdict = (
                    await http.post(
                        f"/episodes/{ep['id']}/verify", json={"answer": task.oracle_answer(), "messages": dialogue}
                    )
                ).json()
                assert verdict["passed"], (name, verdict["failure"], verdict["checks"])
                got[name].append(verdict["state_hash"])

            with anyio.fail_after(120):
                async with anyio.create_task_group() as tg:
                    for copy in range(2):  # two episodes per world, all at once
                        for name in names:
                            tg.start_soon(drive, name, copy)
    assert got == {name: [expected[name]] * 2 for name in names}


def test_every_world_is_deterministic_across_builds():
    from mcpsim.engine._templates import TemplateCache

    for name in world_names():
        world = load_world(name)
        a = Episode.create(world, 5, "small", templates=TemplateCache())
        b = Episode.create(world, 5, "small", templates=TemplateCache())
        assert a.state_hash() == b.state_hash(), name
