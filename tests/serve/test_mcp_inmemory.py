"""The MCP server through the SDK's Client in memory, in both protocol eras."""

from __future__ import annotations

import anyio
import pytest
from mcp import Client

from mcpsim.engine._episode import Episode
from mcpsim.serve._mcp import build_server, policy_uri

pytestmark = pytest.mark.anyio


@pytest.fixture
def episode(ledger, templates) -> Episode:
    return Episode.create(ledger, seed=1, scale="small", templates=templates)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_tools_carry_schemas_and_hints_and_state_persists_across_calls(ledger, episode, mode):
    server = build_server(ledger, lambda _id: episode)
    with anyio.fail_after(10):
        async with Client(server, mode=mode) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == set(ledger.tools)
            assert tools["get_account"].annotations.read_only_hint is True
            assert tools["close_account_buggy"].annotations.destructive_hint is True
            assert tools["transfer"].input_schema["properties"]["amount"]["exclusiveMinimum"] == 0
            assert tools["get_account"].output_schema["required"] == ["id", "owner", "balance"]
            opened = await client.call_tool("open_account", {"owner": "Grace"})
            got = await client.call_tool("get_account", {"account_id": opened.structured_content["id"]})
    assert got.structured_content == {"id": opened.structured_content["id"], "owner": "Grace", "balance": 0.0}
    assert episode.calls == 2


async def test_the_policy_is_served_as_instructions_and_as_a_resource(ledger, episode):
    server = build_server(ledger, lambda _id: episode)
    with anyio.fail_after(10):
        async with Client(server, mode="legacy") as client:
            assert client.instructions == ledger.policy
            resource = await client.read_resource(policy_uri(ledger))
    assert resource.contents[0].text == ledger.policy


async def test_business_errors_and_bad_arguments_come_back_as_tool_errors(ledger, episode):
    server = build_server(ledger, lambda _id: episode)
    before = episode.state_hash()
    with anyio.fail_after(10):
        async with Client(server) as client:
            missing = await client.call_tool("get_account", {"account_id": "acc_000000"})
            bad = await client.call_tool("transfer", {"from_account": "a", "to_account": "b", "amount": "lots"})
            huge = await client.call_tool("get_account", {"account_id": "x" * 100_000})
    assert missing.is_error and "Account acc_000000 not found" in missing.content[0].text
    assert bad.is_error and "amount" in bad.content[0].text and "valid number" in bad.content[0].text
    assert huge.is_error and "at most 64 characters" in huge.content[0].text
    assert episode.state_hash() == before and not episode.flagged


async def test_a_call_to_an_episode_that_is_gone_is_a_clear_tool_error(ledger):
    def gone(_id):
        raise LookupError("episode abc does not exist (it was deleted or expired)")

    with anyio.fail_after(10):
        async with Client(build_server(ledger, gone)) as client:
            r = await client.call_tool("list_accounts", {})
    assert r.is_error and "does not exist" in r.content[0].text


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_calls_the_sdk_rejects_still_reach_the_transcript(ledger, episode, mode):
    server = build_server(ledger, lambda _id: episode)
    with anyio.fail_after(10):
        async with Client(server, mode=mode) as client:
            await client.call_tool("list_accounts", {})
            await client.call_tool("transfer", {"from_account": "a", "to_account": "b", "amount": "lots"})
            await client.call_tool("warp_drive", {"speed": 9})
            await client.call_tool("get_account", {"account_id": "missing"})
    t = episode.transcript()
    assert [c.tool for c in t] == ["list_accounts", "transfer", "warp_drive", "get_account"]
    assert [c.ok for c in t] == [True, False, False, False]
    assert t[1].arguments == {"from_account": "a", "to_account": "b", "amount": "lots"} and "amount" in t[1].error
    assert "warp_drive" in t[2].error
    assert "missing not found" in t[3].error  # reached the episode: recorded once, not twice


async def test_output_schemas_are_published_lean_and_accept_and_refuse_what_the_full_ones_do(templates):
    """No `$ref` to resolve and no `anyOf` for a nullable field: cheap for every client to check
    each result against, and equivalent to pydantic's schema on real results and broken ones."""
    import json

    from jsonschema import Draft202012Validator
    from mcpsim_worlds.retail import world as retail
    from pydantic import TypeAdapter

    episode = Episode.create(retail, scale="small", templates=templates)
    order_id = episode.query("SELECT order_id FROM returns LIMIT 1")[0]["order_id"]
    customer_id = episode.query("SELECT customer_id FROM orders WHERE id = ?", (order_id,))[0]["customer_id"]
    calls = [("get_order_details", {"order_id": order_id}), ("get_customer_details", {"customer_id": customer_id})]
    with anyio.fail_after(30):
        async with Client(build_server(retail, lambda _id: episode)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            results = [(name, await client.call_tool(name, args)) for name, args in calls]
    published = json.dumps([t.output_schema for t in tools.values()])
    assert "$ref" not in published and "anyOf" not in published and '"null"' in published
    for name, result in results:
        assert not result.is_error
        value = result.structured_content
        full = Draft202012Validator(TypeAdapter(retail.tools[name].return_annotation).json_schema())
        lean = Draft202012Validator(tools[name].output_schema)
        assert full.is_valid(value) and lean.is_valid(value)
        broken = [
            {**value, key: bad}
            for key in value
            for bad in (None, "text", [1], {"a": 1})
            if not isinstance(value[key], type(bad))
        ]
        broken += [{k: v for k, v in value.items() if k != key} for key in value]  # each required field dropped
        assert broken and all(full.is_valid(b) == lean.is_valid(b) for b in broken)
        assert any(not lean.is_valid(b) for b in broken)


def test_lean_schema_leaves_what_it_cannot_prove_equivalent():
    from mcpsim.serve._mcp import lean_schema

    recursive = {"$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
                 "$ref": "#/$defs/Node"}  # fmt: skip
    assert lean_schema(recursive) == recursive
    nullable_enum = {"anyOf": [{"enum": ["a", "b"], "type": "string"}, {"type": "null"}], "title": "Pick"}
    assert lean_schema(nullable_enum) == nullable_enum  # "null" in a type list would not pass the enum
    assert lean_schema({"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}], "default": None}) == {
        "type": ["integer", "null"],
        "minimum": 1,
        "default": None,
    }
