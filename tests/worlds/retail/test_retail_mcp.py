"""The retail world through a real MCP client, in memory: schemas, hints, policy, calls."""

from __future__ import annotations

import anyio
import pytest
from mcp import Client

from mcpsim.serve.mcp import build_server

pytestmark = pytest.mark.anyio

READS = {
    "find_customer_by_email", "find_customer_by_name_zip", "get_customer_details", "get_order_details",
    "list_customer_orders", "track_shipment", "get_product_details", "search_products",
    "list_product_categories", "calculate",
}  # fmt: skip
DESTRUCTIVE = {"cancel_order", "return_delivered_order_items", "exchange_delivered_order_items", "issue_partial_refund"}


async def test_an_agent_sees_typed_tools_with_hints_and_the_policy(retail, episode):
    server = build_server(retail, lambda _id: episode)
    with anyio.fail_after(10):
        async with Client(server, mode="legacy") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            instructions = client.instructions
    assert len(tools) >= 17 and set(tools) == set(retail.tools)
    assert {n for n, t in tools.items() if t.annotations.read_only_hint} == READS
    assert {n for n, t in tools.items() if t.annotations.destructive_hint} == DESTRUCTIVE
    assert "Authenticate the customer first" in instructions
    cancel = tools["cancel_order"].input_schema
    assert "no longer needed" in str(cancel["properties"]["reason"]) and cancel["required"] == ["order_id", "reason"]
    assert tools["get_order_details"].output_schema["properties"]["items"]["type"] == "array"
    for tool in tools.values():
        assert tool.description and len(tool.description) > 40, tool.name


async def test_a_cancellation_through_mcp_changes_the_episode_and_a_refused_one_is_a_tool_error(retail, episode):
    pending = episode.query("SELECT id, customer_id FROM orders WHERE status = 'pending' LIMIT 1")[0]
    shipped = episode.query("SELECT id FROM orders WHERE status = 'shipped' LIMIT 1")[0]
    email = episode.query("SELECT email FROM customers WHERE id = ?", (pending["customer_id"],))[0]["email"]
    server = build_server(retail, lambda _id: episode)
    with anyio.fail_after(10):
        async with Client(server) as client:
            found = await client.call_tool("find_customer_by_email", {"email": email})
            cancelled = await client.call_tool(
                "cancel_order", {"order_id": pending["id"], "reason": "ordered by mistake"}
            )
            refused = await client.call_tool(
                "cancel_order", {"order_id": shipped["id"], "reason": "ordered by mistake"}
            )
    assert found.structured_content["customer_id"] == pending["customer_id"]
    assert cancelled.structured_content["status"] == "cancelled"
    assert refused.is_error and "only pending or processing orders can be cancelled" in refused.content[0].text
    assert episode.query("SELECT status FROM orders WHERE id = ?", (pending["id"],))[0]["status"] == "cancelled"
