"""The airline world through a real MCP client, in memory: schemas, hints, policy, calls."""

from __future__ import annotations

import anyio
import pytest
from mcp import Client

from mcpsim.serve.mcp import build_server

pytestmark = pytest.mark.anyio

READS = {
    "find_user", "get_user_details", "list_user_reservations", "get_reservation_details", "list_airports",
    "search_direct_flights", "search_onestop_flights", "get_flight_status", "quote_cancellation", "calculate",
}  # fmt: skip
DESTRUCTIVE = {"cancel_reservation"}


async def test_an_agent_sees_typed_tools_with_hints_and_the_policy(airline, episode):
    server = build_server(airline, lambda _id: episode)
    with anyio.fail_after(10):
        async with Client(server, mode="legacy") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            instructions = client.instructions
    assert len(tools) >= 18 and set(tools) == set(airline.tools)
    assert {n for n, t in tools.items() if t.annotations.read_only_hint} == READS
    assert {n for n, t in tools.items() if t.annotations.destructive_hint} == DESTRUCTIVE
    assert "Identify the user first" in instructions
    cancel = tools["cancel_reservation"].input_schema
    assert "family emergency" in str(cancel["properties"]["reason"])
    assert cancel["required"] == ["reservation_id", "reason"]
    for tool in tools.values():
        assert tool.description and len(tool.description) > 40, tool.name


async def test_a_cancellation_through_mcp_changes_the_episode_and_a_refused_one_is_a_tool_error(airline, episode):
    cancelled = episode.query("SELECT id FROM reservations WHERE status = 'cancelled' LIMIT 1")[0]["id"]
    open_ = episode.query(
        "SELECT r.id FROM reservations r WHERE r.status = 'confirmed' AND NOT EXISTS (SELECT 1 FROM reservation_flights l "
        "JOIN flights f ON f.id = l.flight_id WHERE l.reservation_id = r.id AND (f.status IN ('landed', 'departed') "
        "OR f.scheduled_departure < '2026-05-15T12')) LIMIT 1"
    )[0]["id"]
    server = build_server(airline, lambda _id: episode)
    with anyio.fail_after(10):
        async with Client(server) as client:
            done = await client.call_tool("cancel_reservation", {"reservation_id": open_, "reason": "other"})
            refused = await client.call_tool("cancel_reservation", {"reservation_id": cancelled, "reason": "other"})
    assert done.structured_content["status"] == "cancelled"
    assert refused.is_error and "is already cancelled" in refused.content[0].text
    assert episode.query("SELECT status FROM reservations WHERE id = ?", (open_,))[0]["status"] == "cancelled"
