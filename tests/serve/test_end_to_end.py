"""The retail world through real transports: a stdio subprocess, `mcpsim serve --http` as a real
process on 127.0.0.1, and determinism across processes."""

from __future__ import annotations

import json
import subprocess
import sys

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters

from mcpsim.engine._episode import Episode
from mcpsim.world._registry import load_world
from tests.conftest import CLEAN_ENV

pytestmark = [pytest.mark.system, pytest.mark.anyio]


@pytest.fixture(scope="module")
def retail():
    return load_world("retail")


@pytest.fixture(scope="module")
def small(retail) -> Episode:
    """An untouched small retail episode, seed 0: what a fresh server starts from."""
    return Episode.create(retail, seed=0, scale="small")


def some(ep: Episode, sql: str) -> dict:
    rows = ep.query(sql)
    assert rows, sql
    return rows[0]


async def drive_retail(client: Client, small: Episode) -> None:
    """List tools, call read and write tools, and check the write is visible to a later read."""
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert len(tools) >= 15 and tools["get_order_details"].annotations.read_only_hint
    assert tools["cancel_order"].annotations.destructive_hint
    customer = some(small, "SELECT id, email FROM customers ORDER BY id LIMIT 1")
    found = await client.call_tool("find_customer_by_email", {"email": customer["email"].upper()})
    assert not found.is_error and customer["id"] in json.dumps(found.structured_content)
    added = await client.call_tool(
        "add_customer_address",
        {
            "customer_id": customer["id"],
            "line1": "1 Infinite Loop",
            "city": "Cupertino",
            "state": "CA",
            "zip": "95014",
            "make_default": True,
        },
    )
    assert not added.is_error, added.content
    details = await client.call_tool("get_customer_details", {"customer_id": customer["id"]})
    assert "1 Infinite Loop" in json.dumps(details.structured_content)


async def test_retail_over_stdio_in_a_real_subprocess(small, tmp_path):
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcpsim", "serve", "retail", "--scale", "small", "--no-cache"],
        env=CLEAN_ENV | {"PYTHONUNBUFFERED": "1"},
        cwd=str(tmp_path),
    )
    with anyio.fail_after(60):
        async with Client(params) as client:
            await drive_retail(client, small)
            delivered = some(small, "SELECT id FROM orders WHERE status = 'delivered' LIMIT 1")
            refused = await client.call_tool(
                "cancel_order", {"order_id": delivered["id"], "reason": "ordered by mistake"}
            )
            after = await client.call_tool("get_order_details", {"order_id": delivered["id"]})
    assert refused.is_error and "only pending or processing orders can be cancelled" in refused.content[0].text
    assert after.structured_content["status"] == "delivered"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_retail_over_http_from_the_cli_in_both_protocol_eras(http_process, small, mode):
    auth = {"Authorization": "Bearer tok"}
    async with httpx.AsyncClient(base_url=http_process, headers=auth) as http:
        ep = (await http.post("/episodes", json={"world": "retail", "seed": 0, "scale": "small"})).json()
        assert (await http.get(f"/episodes/{ep['id']}/state")).json()["state_hash"] == small.state_hash()
        with anyio.fail_after(60):
            async with Client(ep["mcp_url"], mode=mode) as client:
                await drive_retail(client, small)
        changes = (await http.get(f"/episodes/{ep['id']}/changes")).json()["changes"]
        assert {c["table"] for c in changes} == {"addresses", "customers"}
        await http.delete(f"/episodes/{ep['id']}")
    with anyio.fail_after(30):
        async with Client(f"{http_process}/mcp", mode=mode) as client:  # the default episode
            assert len((await client.list_tools()).tools) >= 15


async def test_a_call_that_breaks_a_business_rule_leaves_the_state_hash_unchanged(http_process, small):
    auth = {"Authorization": "Bearer tok"}
    shipped = some(small, "SELECT id FROM orders WHERE status IN ('shipped', 'delivered') LIMIT 1")
    paid = some(
        small,
        "SELECT order_id, payment_method_id, sum(amount_cents) AS paid FROM payments "
        "WHERE kind = 'charge' AND status = 'captured' GROUP BY order_id ORDER BY order_id LIMIT 1",
    )
    async with httpx.AsyncClient(base_url=http_process, headers=auth) as http:
        ep = (await http.post("/episodes", json={"world": "retail", "seed": 0, "scale": "small"})).json()
        before = (await http.get(f"/episodes/{ep['id']}/state")).json()["state_hash"]
        with anyio.fail_after(60):
            async with Client(ep["mcp_url"]) as client:
                cancel = await client.call_tool(
                    "cancel_order", {"order_id": shipped["id"], "reason": "no longer needed"}
                )
                refund = await client.call_tool(
                    "issue_partial_refund",
                    {
                        "order_id": paid["order_id"],
                        "amount": paid["paid"] / 100 + 1000,
                        "payment_method_id": paid["payment_method_id"],
                        "reason": "service recovery",
                    },
                )
                missing = await client.call_tool("get_order_details", {"order_id": "#W0000000x"})
        after = (await http.get(f"/episodes/{ep['id']}/state")).json()["state_hash"]
        info = (await http.get(f"/episodes/{ep['id']}")).json()
    assert cancel.is_error and "only pending or processing orders can be cancelled" in cancel.content[0].text
    assert refund.is_error and "exceed" in refund.content[0].text.lower()
    assert missing.is_error and "not found" in missing.content[0].text
    assert after == before and info["flagged"] is False


def build_hash(seed: int, hashseed: str) -> dict:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcpsim",
            "build",
            "retail",
            "--seed",
            str(seed),
            "--scale",
            "small",
            "--no-cache",
            "--json",
            "--log-level",
            "WARNING",
        ],
        env=CLEAN_ENV | {"PYTHONHASHSEED": hashseed},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(out.stdout)


def test_same_world_seed_and_scale_give_the_same_state_hash_in_two_processes(small):
    first, second = build_hash(0, "1"), build_hash(0, "2")
    assert first["state_hash"] == second["state_hash"] == small.state_hash()
    assert first["rows"]["customers"] >= 30 and first["version"] == second["version"]
    assert build_hash(1, "1")["state_hash"] != first["state_hash"]


def test_the_cli_server_runs_jobs_with_the_built_in_agents_and_refuses_a_model(http_process):
    """`mcpsim serve --http` installs the runner's job runner: `POST /jobs` streams one line per
    rollout, then a summary; a model agent is refused, since the operator configured no endpoint."""
    auth = {"Authorization": "Bearer tok"}
    body = {"world": "retail", "tasks": ["gift-card-balance"], "trials": 2, "agent": "oracle"}
    answer = httpx.post(f"{http_process}/jobs", json=body, headers=auth, timeout=600)
    assert answer.status_code == 200, answer.text
    *results, summary = [json.loads(line) for line in answer.text.splitlines()]
    assert [r["reward"] for r in results] == [1.0, 1.0] and summary["passed"] == 2
    refused = httpx.post(f"{http_process}/jobs", json=body | {"agent": "openai:m"}, headers=auth, timeout=60)
    assert refused.status_code == 422 and "openai" in refused.text, refused.text
    assert httpx.post(f"{http_process}/jobs", json=body, timeout=60).status_code == 401  # the control plane's token
