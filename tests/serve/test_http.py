"""The HTTP server end to end: a real uvicorn on 127.0.0.1, the SDK's Client, the control plane."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import httpx
import pytest
from mcp import Client
from structlog.testing import capture_logs

pytestmark = pytest.mark.anyio

MODES = ["auto", "legacy"]


async def create(http: httpx.AsyncClient, **body: object) -> dict:
    r = await http.post("/episodes", json=body)
    assert r.status_code == 201, r.text
    return r.json()


async def test_an_episode_created_over_the_control_plane_keeps_its_state_across_connections(serve_http, ledger):
    live = serve_http([ledger])
    async with httpx.AsyncClient(base_url=live.url) as http:
        ep = await create(http, world="ledger", seed=1, scale="small")
        assert len(ep["id"]) >= 22  # 16 random bytes, url-safe base64
        assert ep["mcp_url"] == f"{live.url}/episodes/{ep['id']}/mcp"
        before = (await http.get(f"/episodes/{ep['id']}/state")).json()
        with anyio.fail_after(20):
            async with Client(ep["mcp_url"]) as client:
                names = {t.name for t in (await client.list_tools()).tools}
                assert {"get_account", "transfer", "open_account"} <= names
                opened = await client.call_tool("open_account", {"owner": "Ada Lovelace"})
                assert not opened.is_error
            async with Client(ep["mcp_url"]) as client:  # a new connection sees the write
                got = await client.call_tool("get_account", {"account_id": opened.structured_content["id"]})
                assert got.structured_content["owner"] == "Ada Lovelace"
        after = (await http.get(f"/episodes/{ep['id']}/state")).json()
    assert after["state_hash"] != before["state_hash"]
    assert "Ada Lovelace" in [a["owner"] for a in after["tables"]["account"]]
    assert len(after["tables"]["account"]) == len(before["tables"]["account"]) + 1


@pytest.mark.parametrize("mode", MODES)
async def test_two_episodes_driven_concurrently_never_see_each_others_writes(serve_http, ledger, mode):
    live = serve_http([ledger])
    async with httpx.AsyncClient(base_url=live.url) as http:
        a, b = (
            await create(http, world="ledger", seed=1, scale="small"),
            await create(http, world="ledger", seed=1, scale="small"),
        )
        seen: dict[str, set[str]] = {}

        async def drive(ep: dict, tag: str) -> None:
            async with Client(ep["mcp_url"], mode=mode) as client:
                for i in range(8):
                    r = await client.call_tool("open_account", {"owner": f"{tag}-{i}"})
                    assert not r.is_error
                    await anyio.lowlevel.checkpoint()
                listed = await client.call_tool("list_accounts", {})
                seen[tag] = {acc["owner"] for acc in listed.structured_content["result"]}

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(drive, a, "A")
                tg.start_soon(drive, b, "B")
        assert {f"A-{i}" for i in range(8)} <= seen["A"] and not any(o.startswith("B-") for o in seen["A"])
        assert {f"B-{i}" for i in range(8)} <= seen["B"] and not any(o.startswith("A-") for o in seen["B"])
        # Same seed, same kind of calls, but different owners: the states differ.
        ha = (await http.get(f"/episodes/{a['id']}/state")).json()["state_hash"]
        hb = (await http.get(f"/episodes/{b['id']}/state")).json()["state_hash"]
        assert ha != hb


async def test_the_default_endpoint_serves_the_default_episode_and_unknown_episodes_get_404(serve_http, ledger):
    live = serve_http([ledger], default=ledger, shared_default=True)
    with anyio.fail_after(20):
        async with Client(f"{live.url}/mcp") as client:
            r = await client.call_tool("open_account", {"owner": "Default User"})
            assert not r.is_error
    owners = [row["owner"] for row in live.manager.default.tables()["account"]]
    assert "Default User" in owners
    async with httpx.AsyncClient(base_url=live.url) as http:
        r = await http.post("/episodes/nope/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert r.status_code == 404 and "does not exist" in r.json()["error"]["message"]
        r = await http.get("/episodes/nope/state")
        assert r.status_code == 404


async def test_a_deleted_episode_is_gone_from_both_planes(serve_http, ledger):
    live = serve_http([ledger])
    async with httpx.AsyncClient(base_url=live.url) as http:
        ep = await create(http, world="ledger", scale="small")
        assert (await http.delete(f"/episodes/{ep['id']}")).status_code == 204
        assert (await http.delete(f"/episodes/{ep['id']}")).status_code == 404
        assert (await http.get(f"/episodes/{ep['id']}")).status_code == 404
        r = await http.post(f"/episodes/{ep['id']}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert r.status_code == 404
    assert len(live.manager) == 0


async def test_state_queries_are_validated(serve_http, ledger):
    live = serve_http([ledger])
    async with httpx.AsyncClient(base_url=live.url) as http:
        ep = await create(http, world="ledger", scale="small")
        r = await http.get(f"/episodes/{ep['id']}/state", params={"tables": "account,ghosts"})
        assert r.status_code == 422 and "ghosts" in r.json()["error"]
        r = await http.get(f"/episodes/{ep['id']}/state", params={"limit": "-3"})
        assert r.status_code == 422
        r = await http.get(f"/episodes/{ep['id']}/state", params={"tables": "account", "limit": "1"})
        assert r.status_code == 200 and len(r.json()["tables"]["account"]) == 1


async def test_the_control_plane_requires_the_token_and_the_agent_endpoint_does_not(serve_http, ledger):
    live = serve_http([ledger], token="s3cret")
    async with httpx.AsyncClient(base_url=live.url) as http:
        assert (await http.post("/episodes", json={"world": "ledger"})).status_code == 401
        wrong = await http.post("/episodes", json={"world": "ledger"}, headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and wrong.headers["www-authenticate"] == "Bearer"
        assert (await http.get("/episodes")).status_code == 401
        r = await http.post(
            "/episodes", json={"world": "ledger", "scale": "small"}, headers={"Authorization": "Bearer s3cret"}
        )
        assert r.status_code == 201
        assert (await http.get("/health")).json()["episodes"] == 1
    with anyio.fail_after(20):
        async with Client(r.json()["mcp_url"]) as client:
            assert not (await client.call_tool("list_accounts", {})).is_error


async def test_idle_episodes_expire_after_the_ttl(serve_http, ledger):
    live = serve_http([ledger], ttl=60.0)
    async with httpx.AsyncClient(base_url=live.url) as http:
        old = await create(http, world="ledger", scale="small")
        live.clock.now += 30
        assert (await http.get(f"/episodes/{old['id']}")).status_code == 200  # touched: idle time restarts
        kept = await create(http, world="ledger", scale="small")
        live.clock.now += 45
        assert (await http.get(f"/episodes/{kept['id']}")).status_code == 200
        live.clock.now += 20  # old: idle 65 s; kept: idle 20 s
        r = await http.get(f"/episodes/{old['id']}")
        assert r.status_code == 404 and "expired" in r.json()["error"]
        assert (await http.get(f"/episodes/{kept['id']}")).status_code == 200
    live.clock.now += 61
    assert live.manager.reap() == [kept["id"]]


async def test_the_episode_cap_answers_503_and_frees_up_after_a_delete(serve_http, ledger):
    live = serve_http([ledger], max_episodes=2)
    async with httpx.AsyncClient(base_url=live.url) as http:
        first = await create(http, world="ledger", scale="small")
        await create(http, world="ledger", scale="small")
        full = await http.post("/episodes", json={"world": "ledger", "scale": "small"})
        assert full.status_code == 503
        assert full.headers["retry-after"] == "5" and "maximum of 2" in full.json()["error"]
        assert (await http.post(f"/episodes/{first['id']}/fork")).status_code == 503
        await http.delete(f"/episodes/{first['id']}")
        await create(http, world="ledger", scale="small")
        assert (await http.get("/health")).json()["episodes"] == 2


async def test_a_foreign_origin_is_refused_before_any_tool_runs(serve_http, ledger):
    live = serve_http([ledger], default=ledger)
    async with httpx.AsyncClient(base_url=live.url) as http:
        r = await http.post(
            "/mcp",
            headers={"Origin": "http://evil.example", "Accept": "application/json, text/event-stream"},
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        )
    assert r.status_code == 403


async def test_a_tool_bug_flags_the_episode_is_logged_and_the_server_keeps_serving(serve_http, ledger):
    live = serve_http([ledger])
    async with httpx.AsyncClient(base_url=live.url) as http:
        ep = await create(http, world="ledger", seed=2, scale="small")
        before = (await http.get(f"/episodes/{ep['id']}/state")).json()
        account = before["tables"]["account"][0]["id"]
        with anyio.fail_after(20), capture_logs() as logs:
            async with Client(ep["mcp_url"]) as client:
                r = await client.call_tool("close_account_buggy", {"account_id": account})
                assert r.is_error and "Internal error in the simulator" in r.content[0].text
                assert "deliberate bug" not in r.content[0].text  # internals stay on the server
                again = await client.call_tool("get_account", {"account_id": account})
                assert not again.is_error  # the delete was rolled back, the server still serves
        info = (await http.get(f"/episodes/{ep['id']}")).json()
        after = (await http.get(f"/episodes/{ep['id']}/state")).json()
    assert info["flagged"] is True and "KeyError" in info["flags"][0]
    assert after["state_hash"] == before["state_hash"]
    bug = [e for e in logs if e["event"] == "tool bug"]
    assert bug and bug[0]["tool"] == "close_account_buggy" and bug[0]["exc_info"] is True
    assert bug[0]["episode"] == ep["id"] and bug[0]["world"] == "ledger"


async def test_a_fork_starts_from_the_source_state_and_then_diverges(serve_http, ledger):
    live = serve_http([ledger])
    async with httpx.AsyncClient(base_url=live.url) as http:
        src = await create(http, world="ledger", seed=3, scale="small")
        with anyio.fail_after(20):
            async with Client(src["mcp_url"]) as client:
                await client.call_tool("open_account", {"owner": "Before Fork"})
            fork = (await http.post(f"/episodes/{src['id']}/fork")).json()
            assert fork["id"] != src["id"] and fork["calls"] == 1
            h = lambda e: http.get(f"/episodes/{e['id']}/state")  # noqa: E731
            assert (await h(src)).json()["state_hash"] == (await h(fork)).json()["state_hash"]
            async with Client(fork["mcp_url"]) as client:
                await client.call_tool("open_account", {"owner": "Only In Fork"})
        src_owners = [a["owner"] for a in (await h(src)).json()["tables"]["account"]]
        fork_owners = [a["owner"] for a in (await h(fork)).json()["tables"]["account"]]
    assert "Only In Fork" in fork_owners and "Only In Fork" not in src_owners


async def test_an_ended_episode_refuses_writes_but_still_answers_reads(serve_http, ledger):
    live = serve_http([ledger])
    async with httpx.AsyncClient(base_url=live.url) as http:
        ep = await create(http, world="ledger", scale="small")
        ended = (await http.post(f"/episodes/{ep['id']}/end")).json()
        assert ended["ended"] is True
        with anyio.fail_after(20):
            async with Client(ep["mcp_url"]) as client:
                w = await client.call_tool("open_account", {"owner": "Too Late"})
                r = await client.call_tool("list_accounts", {})
    assert w.is_error and "ended" in w.content[0].text
    assert not r.is_error
