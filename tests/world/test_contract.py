"""The contract every installed world keeps, checked over real MCP (the SDK's client in memory, and a
stdio subprocess): its tools are listed with input and output schemas and with the hints its
ToolSpecs declare; a read-only tool changes nothing whatever schema-valid arguments it gets; every
error is a business error, never a simulator bug; the same seed builds the same world and another
seed another; the policy is served as instructions and as a resource.

The last section holds what the four bundled worlds promise beyond the contract (which tools are
read-only or destructive, the policy's first rule, a schema detail, one write and one refusal
over MCP), moved here from their former per-world MCP tests."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from mcp import Client

from mcpsim.engine import _store as store
from mcpsim.engine._episode import Episode
from mcpsim.engine._templates import TemplateCache, build_template
from mcpsim.engine._transaction import BUG_MESSAGE
from mcpsim.serve._mcp import policy_uri
from mcpsim.testing._driver import WorldDriver, stdio_server
from mcpsim.world import World
from mcpsim.world._registry import load_world, world_names
from tests.serve.test_fuzz import Gen, known_ids

pytestmark = pytest.mark.anyio

WORLDS = world_names()
BUG = BUG_MESSAGE.split("{tool}")[0]  # the text every simulator-bug answer starts with
CALLS_PER_TOOL = 4
INVALID = re.compile(r"Invalid arguments|validation error", re.IGNORECASE)  # refused before the tool ran


@pytest.fixture(params=WORLDS, ids=WORLDS)
def world(request: pytest.FixtureRequest) -> World:
    return load_world(request.param)


@pytest.fixture
def driver(world: World, world_driver: Callable[..., WorldDriver]) -> WorldDriver:
    return world_driver(world)


def valid_arguments(driver: WorldDriver, tool: str, rng: random.Random, count: int) -> list[dict[str, Any]]:
    """Schema-valid arguments for `tool`, strings drawn from the episode's seeded rows."""
    schema = driver.world.tools[tool].input_schema()
    gen = Gen(rng, known_ids(driver.ep))
    return [gen.object(schema, schema) for _ in range(count)]


def error_text(result: Any) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


# -- the contract ------------------------------------------------------------------------------------------


async def test_tools_are_listed_with_schemas_and_the_hints_their_specs_declare(world, driver):
    async with driver.mcp() as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    assert set(listed) == set(world.tools)
    for name, tool in listed.items():
        spec = world.tools[name]
        declared = spec.input_schema()
        assert tool.input_schema["type"] == "object", name
        assert set(tool.input_schema.get("properties", {})) == set(declared.get("properties", {})), name
        assert sorted(tool.input_schema.get("required", [])) == sorted(declared.get("required", [])), name
        assert tool.output_schema and tool.output_schema["type"] == "object", f"{name} has no output schema"
        hints = tool.annotations
        assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint, hints.open_world_hint) == (
            spec.read_only,
            spec.destructive,
            spec.idempotent,
            False,
        ), name
        assert not (spec.read_only and spec.destructive), f"{name} cannot be both read-only and destructive"
        assert tool.description and len(tool.description) >= 40, f"{name}: describe the tool for the agent"
    assert any(s.read_only for s in world.tools.values()) and any(s.writes for s in world.tools.values())


async def test_the_policy_is_served_as_instructions_and_as_a_resource(world, driver):
    async with driver.mcp() as client:
        instructions = client.instructions
        resources = {str(r.uri): r for r in (await client.list_resources()).resources}
        policy = await client.read_resource(policy_uri(world))
    assert world.policy.strip() and instructions == world.policy
    assert resources[policy_uri(world)].mime_type == "text/markdown"
    assert policy.contents[0].text == world.policy


async def test_read_only_tools_change_nothing_whatever_valid_arguments_they_get(world, driver):
    rng = random.Random(f"contract-read-{world.name}")
    outcomes = {"answered": 0, "business error": 0}
    async with driver.mcp() as client:
        for tool in sorted(n for n, s in world.tools.items() if s.read_only):
            for arguments in valid_arguments(driver, tool, rng, CALLS_PER_TOOL):
                before, logged = driver.state_hash(), len(driver.ep.changes())
                result = await client.call_tool(tool, arguments)
                text = error_text(result)
                assert BUG not in text, f"{tool}({arguments}): {text}"
                assert not INVALID.search(text), f"the generator broke {tool}'s schema: {arguments}: {text}"
                assert driver.state_hash() == before, f"read-only {tool}({arguments}) changed the state"
                assert len(driver.ep.changes()) == logged, f"read-only {tool}({arguments}) logged changes"
                outcomes["business error" if result.is_error else "answered"] += 1
    print(f"{world.name} read-only calls: {outcomes}")  # bank's reads mostly stop at its identity check
    driver.assert_no_bug()


async def test_every_error_is_a_business_error_and_a_refused_call_changes_nothing(world, driver):
    """Every tool, writes included, on schema-valid arguments from the seeded data and on an id
    that does not exist: a failure is a tool error the agent can read, never a simulator bug."""
    rng = random.Random(f"contract-errors-{world.name}")
    refused = 0
    async with driver.mcp() as client:
        for tool in sorted(world.tools):
            schema = world.tools[tool].input_schema()
            cases = valid_arguments(driver, tool, rng, 2)
            ids = [p for p in schema.get("required", []) if p.endswith("_id")]
            if ids:
                cases.append({**cases[0], ids[0]: "zz-no-such-id"})
            for arguments in cases:
                before = driver.state_hash()
                result = await client.call_tool(tool, arguments)
                if result.is_error:
                    refused += 1
                    assert error_text(result).strip() and BUG not in error_text(result), (tool, arguments)
                    assert driver.state_hash() == before, f"a refused {tool}({arguments}) changed the state"
    assert refused > 0
    driver.assert_no_bug()
    assert all(not call.bug for call in driver.ep.transcript())


def full_hash(world: World, seed: int) -> str:
    conn = store.connect(build_template(world, seed, "small"))
    try:
        return store.full_state_hash(conn, world.metadata)
    finally:
        conn.close()


def test_the_same_seed_builds_the_same_world_and_another_seed_another(world):
    first, again, other = full_hash(world, 3), full_hash(world, 3), full_hash(world, 4)
    assert first == again
    assert other != first
    built, rebuilt = (Episode.create(world, seed=3, scale="small", templates=TemplateCache()) for _ in range(2))
    assert built.tables() == rebuilt.tables() and built.state_hash() == rebuilt.state_hash()


@pytest.mark.system
@pytest.mark.parametrize("name", WORLDS[:1])  # a child process per world costs ~10 s; one shows the transport
async def test_a_stdio_server_lists_the_same_tools_and_answers_a_read_as_in_process(name, world_driver, tmp_path):
    """`mcpsim serve <world>` in a child process: the same tools and hints, the policy, and a read
    answered exactly as an in-process episode of the same seed and scale answers it."""
    local = world_driver(name)
    reader = min(n for n, s in local.world.tools.items() if s.read_only)
    arguments = valid_arguments(local, reader, random.Random(f"contract-stdio-{name}"), 1)[0]
    async with local.mcp() as client:
        expected = await client.call_tool(reader, arguments)
    with anyio.fail_after(90):
        async with Client(stdio_server(name, seed=0, scale="small", cwd=str(tmp_path)), mode="legacy") as client:
            listed = {t.name: t.annotations for t in (await client.list_tools()).tools}
            instructions = client.instructions
            answer = await client.call_tool(reader, arguments)
    assert {n: (a.read_only_hint, a.destructive_hint) for n, a in listed.items()} == {
        n: (s.read_only, s.destructive) for n, s in local.world.tools.items()
    }
    assert instructions == local.world.policy
    assert (answer.is_error, answer.structured_content, error_text(answer)) == (
        expected.is_error,
        expected.structured_content,
        error_text(expected),
    )


# -- what the bundled worlds promise beyond the contract -----------------------------------------------------

BUNDLED: dict[str, dict[str, Any]] = {
    "airline": {
        "reads": {
            "find_user",
            "get_user_details",
            "list_user_reservations",
            "get_reservation_details",
            "list_airports",
            "search_direct_flights",
            "search_onestop_flights",
            "get_flight_status",
            "quote_cancellation",
            "calculate",
        },
        "destructive": {"cancel_reservation"},
        "policy": "Identify the user first",
    },
    "bank": {
        "reads": {
            "find_customer",
            "get_customer_profile",
            "list_accounts",
            "get_account",
            "list_transactions",
            "get_transaction",
            "get_statement",
            "list_cards",
            "list_payees",
            "list_transfers",
            "get_transfer",
            "list_disputes",
            "get_dispute",
            "calculate",
        },
        "destructive": {"replace_card", "remove_payee", "cancel_pending_transfer"},
        "policy": "verify their identity",
    },
    "retail": {
        "reads": {
            "find_customer_by_email",
            "find_customer_by_name_zip",
            "get_customer_details",
            "get_order_details",
            "list_customer_orders",
            "track_shipment",
            "get_product_details",
            "search_products",
            "list_product_categories",
            "calculate",
        },
        "destructive": {
            "cancel_order",
            "return_delivered_order_items",
            "exchange_delivered_order_items",
            "issue_partial_refund",
        },
        "policy": "Authenticate the customer first",
    },
    "workspace": {
        "reads": {
            "verify_owner",
            "get_current_time",
            "convert_time",
            "search_mail",
            "get_thread",
            "list_labels",
            "list_events",
            "get_event",
            "get_free_busy",
            "find_meeting_slot",
            "search_contacts",
            "get_contact",
            "search_files",
            "get_file",
            "list_file_permissions",
        },
        "destructive": {"empty_trash", "cancel_event", "revoke_access"},
        "policy": "Verify the owner first",
    },
}


def bundled(name: str) -> Any:
    return pytest.mark.skipif(name not in WORLDS, reason=f"the {name} world is not installed")


@pytest.mark.parametrize("name", [n for n in BUNDLED if n in WORLDS])
async def test_a_bundled_world_marks_exactly_its_reads_and_destructive_tools(name, world_driver):
    d = world_driver(name)
    async with d.mcp() as client:
        tools = (await client.list_tools()).tools
        instructions = client.instructions
    assert {t.name for t in tools if t.annotations.read_only_hint} == BUNDLED[name]["reads"]
    assert {t.name for t in tools if t.annotations.destructive_hint} == BUNDLED[name]["destructive"]
    assert BUNDLED[name]["policy"] in instructions


@bundled("retail")
async def test_retail_over_mcp_cancels_a_pending_order_and_refuses_a_shipped_one(world_driver):
    shop = world_driver("retail")
    pending = shop.row("SELECT id, customer_id FROM orders WHERE status = 'pending' ORDER BY id")
    shipped = shop.value("SELECT id FROM orders WHERE status = 'shipped' ORDER BY id")
    email = shop.value("SELECT email FROM customers WHERE id = ?", pending["customer_id"])
    async with shop.mcp() as client:
        schemas = {t.name: t for t in (await client.list_tools()).tools}
        found = await client.call_tool("find_customer_by_email", {"email": email})
        cancelled = await client.call_tool("cancel_order", {"order_id": pending["id"], "reason": "ordered by mistake"})
        refused = await client.call_tool("cancel_order", {"order_id": shipped, "reason": "ordered by mistake"})
    cancel = schemas["cancel_order"].input_schema
    assert "no longer needed" in str(cancel["properties"]["reason"]) and cancel["required"] == ["order_id", "reason"]
    assert schemas["get_order_details"].output_schema["properties"]["items"]["type"] == "array"
    assert found.structured_content["customer_id"] == pending["customer_id"]
    assert cancelled.structured_content["status"] == "cancelled"
    assert refused.is_error and "only pending or processing orders can be cancelled" in error_text(refused)
    assert shop.value("SELECT status FROM orders WHERE id = ?", pending["id"]) == "cancelled"


@bundled("airline")
async def test_airline_over_mcp_cancels_an_open_reservation_and_refuses_a_cancelled_one(world_driver):
    desk = world_driver("airline")
    cancelled = desk.value("SELECT id FROM reservations WHERE status = 'cancelled' ORDER BY id")
    open_ = desk.value(
        "SELECT r.id FROM reservations r WHERE r.status = 'confirmed' AND NOT EXISTS (SELECT 1 FROM "
        "reservation_flights l JOIN flights f ON f.id = l.flight_id WHERE l.reservation_id = r.id AND "
        "(f.status IN ('landed', 'departed') OR f.scheduled_departure < '2026-05-15T12')) ORDER BY r.id"
    )
    async with desk.mcp() as client:
        schemas = {t.name: t.input_schema for t in (await client.list_tools()).tools}
        done = await client.call_tool("cancel_reservation", {"reservation_id": open_, "reason": "other"})
        refused = await client.call_tool("cancel_reservation", {"reservation_id": cancelled, "reason": "other"})
    cancel = schemas["cancel_reservation"]
    assert "family emergency" in str(cancel["properties"]["reason"])
    assert cancel["required"] == ["reservation_id", "reason"]
    assert done.structured_content["status"] == "cancelled"
    assert refused.is_error and "is already cancelled" in error_text(refused)
    assert desk.value("SELECT status FROM reservations WHERE id = ?", open_) == "cancelled"


@bundled("bank")
async def test_bank_over_mcp_refuses_an_unverified_customer(world_driver):
    bank = world_driver("bank")
    customer = bank.value("SELECT id FROM customers WHERE status = 'active' ORDER BY id")
    async with bank.mcp() as client:
        schemas = {t.name: t.input_schema for t in (await client.list_tools()).tools}
        refused = await client.call_tool("list_accounts", {"customer_id": customer})
    replace = schemas["replace_card"]
    assert "stolen" in str(replace["properties"]["reason"])
    assert replace["required"] == ["customer_id", "card_id", "reason"]
    assert refused.is_error and "has not verified their identity" in error_text(refused)


@bundled("workspace")
async def test_workspace_over_mcp_shares_an_owned_file_and_refuses_another_owners(world_driver):
    desk = world_driver("workspace")
    budget = desk.value("SELECT id FROM files WHERE name = 'Q3 Budget Draft'")
    roadmap = desk.value("SELECT id FROM files WHERE name = 'Product Roadmap H2 2026'")
    ravi = ["ravi.iyer@larkspurlabs.com"]
    async with desk.mcp() as client:
        schemas = {t.name: t for t in (await client.list_tools()).tools}
        shared = await client.call_tool("share_file", {"file_id": budget, "emails": ravi, "role": "commenter"})
        refused = await client.call_tool("share_file", {"file_id": roadmap, "emails": ravi, "role": "viewer"})
    assert schemas["share_file"].input_schema["properties"]["role"]["enum"] == ["viewer", "commenter", "editor"]
    assert all(len(t.description or "") > 60 for t in schemas.values())
    assert ravi[0] in str(shared.structured_content["permissions"])
    assert refused.is_error and "Only the owner of 'Product Roadmap H2 2026'" in error_text(refused)
