"""Team tasks over HTTP (issue 34): one MCP endpoint per role on one episode, each role held to
its tools, every call and row change attributed to its role, the team graded as one."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest
from mcp import Client

from mcpsim.grading import Verifier

pytestmark = pytest.mark.anyio

TASK = "team-damaged-lamp-refund"


@pytest.fixture
def live(serve_http, retail: Verifier):
    return serve_http([retail.world], tasks={"retail": retail.tasks}, verdict_detail="full")


async def _create(http: httpx.AsyncClient) -> dict[str, Any]:
    response = await http.post("/episodes", json={"world": "retail", "task": TASK})
    assert response.status_code == 201, response.text
    return response.json()


async def _play(url: str, actions: list[Any]) -> None:
    """One role's gold actions through its own MCP client."""
    with anyio.fail_after(60):
        async with Client(url) as client:
            for action in actions:
                result = await client.call_tool(action.tool, action.args)
                assert not result.is_error, result.content


async def test_each_role_gets_its_own_endpoint_on_one_episode(live, retail):
    task = retail.tasks.get(TASK)
    async with httpx.AsyncClient(base_url=live.url) as http:
        ep = await _create(http)
        plain = (await http.post("/episodes", json={"world": "retail", "task": "cancel-pending-order"})).json()
    assert "agents" not in plain  # a one-agent task answers as it always did
    agents = ep["agents"]
    assert set(agents) == {"approver", "agent"}
    urls = {agents[r]["mcp_url"] for r in agents} | {ep["mcp_url"]}
    assert len(urls) == 3 and all(u.startswith(live.url) and u.endswith("/mcp") for u in urls)
    assert ep["id"] not in agents["agent"]["mcp_url"]  # a role's URL does not reveal the episode's
    for name, role in task.roles.items():
        assert agents[name]["tools"] == role.tools and agents[name]["instructions"] == role.instructions
    with anyio.fail_after(60):
        for name, role in task.roles.items():  # each role lists its own tools only
            async with Client(agents[name]["mcp_url"]) as client:
                assert {t.name for t in (await client.list_tools()).tools} == set(role.tools)
        async with Client(ep["mcp_url"]) as client:  # the harness's endpoint lists them all
            assert {t.name for t in (await client.list_tools()).tools} == set(retail.world.tools)


async def test_two_clients_one_per_role_solve_the_task_and_changes_carry_their_roles(live, retail):
    task = retail.tasks.get(TASK)
    async with httpx.AsyncClient(base_url=live.url) as http:
        ep = await _create(http)
        for name in ("approver", "agent"):  # the order the task lists: the approval comes first
            await _play(ep["agents"][name]["mcp_url"], task.roles[name].gold)
        changes = (await http.get(f"/episodes/{ep['id']}/changes")).json()["changes"]
        trajectory = (await http.get(f"/episodes/{ep['id']}/trajectory")).json()
        verdict = (await http.post(f"/episodes/{ep['id']}/verify", json={"answer": "Done."})).json()
    assert verdict["passed"] is True and verdict["reward"] == 1.0, verdict["checks"]
    role_checks = [c for c in verdict["checks"] if c["type"] == "role_tools"]
    assert len(role_checks) == 2 and all(c["passed"] for c in role_checks)
    by_table = {(c["table"], c["role"]) for c in changes}
    assert ("tickets", "approver") in by_table and ("payments", "agent") in by_table
    assert all(c["role"] in ("approver", "agent") for c in changes)
    made_by = [(c["tool"], c.get("role")) for c in trajectory["calls"]]
    assert made_by == [(a.tool, r) for r in ("approver", "agent") for a in task.roles[r].gold]


@pytest.mark.parametrize("idle", ["approver", "agent"])
async def test_the_team_fails_when_either_role_does_nothing(live, retail, idle):
    task = retail.tasks.get(TASK)
    active = "agent" if idle == "approver" else "approver"
    async with httpx.AsyncClient(base_url=live.url) as http:
        ep = await _create(http)
        await _play(ep["agents"][active]["mcp_url"], task.roles[active].gold)
        verdict = (await http.post(f"/episodes/{ep['id']}/verify", json={"answer": "Done."})).json()
    assert verdict["passed"] is False and verdict["reward"] == 0.0


async def test_a_role_calling_another_roles_tool_is_refused_and_recorded_with_its_role(live):
    async with httpx.AsyncClient(base_url=live.url) as http:
        ep = await _create(http)
        with anyio.fail_after(60):
            async with Client(ep["agents"]["approver"]["mcp_url"]) as client:
                refused = await client.call_tool(
                    "issue_partial_refund",
                    {
                        "order_id": "#W6331386",
                        "amount": 99.99,
                        "payment_method_id": "pm_6546695",
                        "reason": "damaged item",
                    },
                )
                unknown = await client.call_tool("no_such_tool", {})
        state = (await http.get(f"/episodes/{ep['id']}/state?tables=payments")).json()
        trajectory = (await http.get(f"/episodes/{ep['id']}/trajectory")).json()
        changes = (await http.get(f"/episodes/{ep['id']}/changes")).json()["changes"]
        verdict = (await http.post(f"/episodes/{ep['id']}/verify", json={"answer": "Done."})).json()
    text = refused.content[0].text
    assert refused.is_error and "'issue_partial_refund' is not among the tools of role 'approver'" in text
    assert unknown.is_error
    assert not [p for p in state["tables"]["payments"] if p["order_id"] == "#W6331386" and p["kind"] == "refund"]
    assert changes == []
    calls = trajectory["calls"]
    assert [(c["tool"], c["ok"], c["role"]) for c in calls] == [
        ("issue_partial_refund", False, "approver"),
        ("no_such_tool", False, "approver"),
    ]
    approver = next(c for c in verdict["checks"] if c["type"] == "role_tools" and "approver" in c["requirement"])
    assert approver["passed"] is False and "issue_partial_refund" in approver["reason"]


async def test_a_role_endpoint_of_a_deleted_episode_answers_404(live):
    async with httpx.AsyncClient(base_url=live.url) as http:
        ep = await _create(http)
        assert (await http.delete(f"/episodes/{ep['id']}")).status_code == 204
        gone = await http.post(
            ep["agents"]["agent"]["mcp_url"],
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Accept": "application/json, text/event-stream"},
        )
    assert gone.status_code == 404


@pytest.mark.parametrize("how", ["fork", "restore"])
async def test_a_forked_or_restored_team_episode_gets_role_endpoints_of_its_own(live, retail, how):
    """After the approver's part, the episode is forked (or snapshotted and restored): the copy
    answers with new endpoints per role, which act on the copy only, keep the calls' roles, and
    finish the task there; the source's endpoints still act on the source."""
    task = retail.tasks.get(TASK)
    async with httpx.AsyncClient(base_url=live.url) as http:
        ep = await _create(http)
        await _play(ep["agents"]["approver"]["mcp_url"], task.roles["approver"].gold)
        if how == "fork":
            made = await http.post(f"/episodes/{ep['id']}/fork")
        else:
            snapshot = (await http.get(f"/episodes/{ep['id']}/snapshot")).content
            made = await http.post(
                "/episodes/restore", content=snapshot, headers={"Content-Type": "application/vnd.sqlite3"}
            )
        assert made.status_code == 201, made.text
        copy = made.json()
        assert set(copy["agents"]) == {"approver", "agent"}
        source_urls = {a["mcp_url"] for a in ep["agents"].values()}
        assert not source_urls & {a["mcp_url"] for a in copy["agents"].values()}
        with anyio.fail_after(60):  # the copy's approver is held to its tools too
            async with Client(copy["agents"]["approver"]["mcp_url"]) as client:
                assert {t.name for t in (await client.list_tools()).tools} == set(task.roles["approver"].tools)
        await _play(copy["agents"]["agent"]["mcp_url"], task.roles["agent"].gold)
        on_copy = (await http.post(f"/episodes/{copy['id']}/verify", json={"answer": "Done."})).json()
        on_source = (await http.post(f"/episodes/{ep['id']}/verify", json={"answer": "Done."})).json()
        changes = (await http.get(f"/episodes/{copy['id']}/changes")).json()["changes"]
    assert on_copy["passed"] is True, on_copy["checks"]
    assert on_source["passed"] is False  # the agent's part was played on the copy only
    assert {(c["table"], c["role"]) for c in changes} >= {("tickets", "approver"), ("payments", "agent")}


async def test_concurrent_forks_of_a_team_episode_each_get_endpoints_of_their_own(live, retail):
    """Three forks made at once of one team episode: every fork's role endpoints are distinct from
    the source's and each other's, and a role's part played on one fork changes that fork only."""
    task = retail.tasks.get(TASK)
    async with httpx.AsyncClient(base_url=live.url) as http:
        ep = await _create(http)
        await _play(ep["agents"]["approver"]["mcp_url"], task.roles["approver"].gold)
        made: list[httpx.Response] = []

        async def fork() -> None:
            made.append(await http.post(f"/episodes/{ep['id']}/fork"))

        with anyio.fail_after(120):
            async with anyio.create_task_group() as forks:
                for _ in range(3):
                    forks.start_soon(fork)
        assert all(r.status_code == 201 for r in made), [r.text for r in made]
        copies = [r.json() for r in made]
        urls = [a["mcp_url"] for c in [ep, *copies] for a in c["agents"].values()]
        assert len(set(urls)) == len(urls) == 8 and len({c["id"] for c in copies}) == 3
        await _play(copies[1]["agents"]["agent"]["mcp_url"], task.roles["agent"].gold)
        passed = [
            (await http.post(f"/episodes/{c['id']}/verify", json={"answer": "Done."})).json()["passed"]
            for c in [ep, *copies]
        ]
    assert passed == [False, False, True, False]


async def test_a_restored_team_episode_of_a_task_this_server_lacks_has_no_role_endpoints(live, serve_http, retail):
    """A snapshot of a team episode restored on a server without its task: the episode is restored
    (its calls keep their roles) but no role endpoint is made, since no task says which tools each
    role has."""
    task = retail.tasks.get(TASK)
    async with httpx.AsyncClient(base_url=live.url) as http:
        ep = await _create(http)
        await _play(ep["agents"]["approver"]["mcp_url"], task.roles["approver"].gold)
        snapshot = (await http.get(f"/episodes/{ep['id']}/snapshot")).content
    other = serve_http([retail.world])  # the world, none of its tasks
    async with httpx.AsyncClient(base_url=other.url) as http:
        made = await http.post(
            "/episodes/restore", content=snapshot, headers={"Content-Type": "application/vnd.sqlite3"}
        )
        assert made.status_code == 201, made.text
        assert "agents" not in made.json()
        changes = (await http.get(f"/episodes/{made.json()['id']}/changes")).json()["changes"]
    assert changes and {c["role"] for c in changes} == {"approver"}
