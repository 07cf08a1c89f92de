"""The bank world through a real MCP client, in memory: hints, schemas, the policy, and a call."""

from __future__ import annotations

import anyio
import pytest
from mcp import Client

from mcpsim.serve.mcp import build_server

pytestmark = pytest.mark.anyio

READS = {
    "find_customer", "get_customer_profile", "list_accounts", "get_account", "list_transactions", "get_transaction",
    "get_statement", "list_cards", "list_payees", "list_transfers", "get_transfer", "list_disputes", "get_dispute",
    "calculate",
}  # fmt: skip
DESTRUCTIVE = {"replace_card", "remove_payee", "cancel_pending_transfer"}


async def test_an_agent_sees_typed_tools_with_hints_and_the_policy(bank, episode):
    server = build_server(bank, lambda _id: episode)
    with anyio.fail_after(10):
        async with Client(server, mode="legacy") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            instructions = client.instructions
    assert len(tools) >= 18 and set(tools) == set(bank.tools)
    assert {n for n, t in tools.items() if t.annotations.read_only_hint} == READS
    assert {n for n, t in tools.items() if t.annotations.destructive_hint} == DESTRUCTIVE
    assert "verify their identity" in instructions
    replace = tools["replace_card"].input_schema
    assert "stolen" in str(replace["properties"]["reason"]) and replace["required"] == ["customer_id", "card_id",
                                                                                        "reason"]
    for tool in tools.values():
        assert tool.description and len(tool.description) > 40, tool.name


async def test_a_refused_call_through_mcp_is_a_tool_error(bank, episode):
    customer = episode.query("SELECT id FROM customers WHERE status = 'active' LIMIT 1")[0]["id"]
    server = build_server(bank, lambda _id: episode)
    with anyio.fail_after(10):
        async with Client(server) as client:
            refused = await client.call_tool("list_accounts", {"customer_id": customer})
    assert refused.is_error and "has not verified their identity" in refused.content[0].text
