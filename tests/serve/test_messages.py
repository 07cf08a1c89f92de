"""What clients and operators read: tool errors without SDK or pydantic noise, the reason an
episode is gone, call counts that include refusals, and `--record` journaling ended episodes.
Real servers: the SDK's in-memory transport and uvicorn on 127.0.0.1."""

from __future__ import annotations

import anyio
import httpx
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcpsim.engine._episode import Episode
from mcpsim.serve._mcp import build_server

pytestmark = pytest.mark.anyio

NOISE = ("Error executing tool", "validation error for", "errors.pydantic.dev", "type=", "input_type", "Arguments")

BAD_CALLS = [
    ({"account_id": 7}, "Invalid arguments for get_account: account_id: Input should be a valid string (got 7)"),
    ({}, "Invalid arguments for get_account: account_id is required"),
    (
        {"account_id": "acc_1", "verbose": True},
        "Invalid arguments for get_account: verbose is not an argument of get_account (its arguments: account_id)",
    ),
]


async def _call_all(client: Client) -> list[tuple[bool, str]]:
    seen = []
    for arguments, _ in BAD_CALLS:
        result = await client.call_tool("get_account", arguments)
        seen.append((result.is_error, result.content[0].text))
    missing = await client.call_tool("get_account", {"account_id": "acc_999999"})
    seen.append((missing.is_error, missing.content[0].text))
    return seen


def _check(seen: list[tuple[bool, str]]) -> None:
    for (is_error, text), (_, expected) in zip(seen, BAD_CALLS, strict=False):
        assert is_error and text == expected
    is_error, text = seen[-1]
    assert is_error and text == "Account acc_999999 not found"  # a business error: its own text, no prefix
    assert not any(noise in text for noise in NOISE for _, text in seen), seen


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_invalid_arguments_say_which_argument_is_wrong_and_nothing_else_in_process(ledger, templates, mode):
    episode = Episode.create(ledger, seed=1, scale="small", templates=templates)
    with anyio.fail_after(20):
        async with Client(build_server(ledger, lambda _id: episode), mode=mode) as client:
            seen = await _call_all(client)
    _check(seen)
    # The transcript records the same words the agent read.
    assert [call.error for call in episode.transcript()] == [text for _, text in seen]


async def test_invalid_arguments_say_which_argument_is_wrong_and_nothing_else_over_http(serve_http, ledger):
    live = serve_http([ledger])
    async with httpx.AsyncClient(base_url=live.url, timeout=30) as http:
        ep = (await http.post("/episodes", json={"world": "ledger", "seed": 1, "scale": "small"})).json()
        with anyio.fail_after(30):
            async with Client(ep["mcp_url"]) as client:
                seen = await _call_all(client)
                unknown = await client.call_tool("get_acount", {})
    _check(seen)
    assert unknown.is_error and unknown.content[0].text.startswith("Unknown tool 'get_acount'. Available tools: ")
    assert "get_account" in unknown.content[0].text


def test_the_episode_formats_validation_errors_the_same_way_without_mcp(ledger, templates):
    episode = Episode.create(ledger, seed=1, scale="small", templates=templates)
    for arguments, expected in BAD_CALLS:
        assert episode.call("get_account", arguments).error == expected
    assert episode.argument_error("get_account", {"account_id": "acc_1"}) is None
    assert episode.argument_error("get_account", ["acc_1"]) == (
        "Invalid arguments for get_account: the arguments must be a JSON object"
    )


async def _gone_reason(url: str, *, mode: str) -> str:
    """What an MCP client connected before the episode went reads when it calls a tool."""
    messages: list[str] = []
    try:
        async with Client(url, mode=mode) as client:
            await client.call_tool("list_accounts", {})
    except* MCPError as group:  # raised while connecting: inside the client's task group
        messages = [leaf.error.message for leaf in _leaves(group)]
    assert messages, "the call succeeded"
    return messages[0]


def _leaves(group: BaseExceptionGroup) -> list:
    return [leaf for e in group.exceptions for leaf in (_leaves(e) if isinstance(e, BaseExceptionGroup) else [e])]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_deleted_or_expired_episode_reaches_its_clients_with_the_reason(serve_http, ledger, mode):
    live = serve_http([ledger], ttl=60.0)
    async with httpx.AsyncClient(base_url=live.url, timeout=30) as http:
        deleted = (await http.post("/episodes", json={"world": "ledger", "scale": "small"})).json()
        expired = (await http.post("/episodes", json={"world": "ledger", "scale": "small"})).json()
        with anyio.fail_after(60):
            async with Client(deleted["mcp_url"], mode=mode) as client:  # connected, then the episode goes
                assert not (await client.call_tool("list_accounts", {})).is_error
                assert (await http.delete(f"/episodes/{deleted['id']}")).status_code == 204
                with pytest.raises(MCPError) as raised:
                    await client.call_tool("list_accounts", {})
            message = raised.value.error.message
            assert message == f"episode {deleted['id']} was deleted by the operator; it no longer exists"
            assert "Session terminated" not in message
            live.clock.now += 61
            assert await _gone_reason(expired["mcp_url"], mode=mode) == (
                f"episode {expired['id']} was expired after 60 s idle; it no longer exists"
            )
            r = await http.get(f"/episodes/{deleted['id']}")
            assert r.status_code == 404 and "deleted by the operator" in r.json()["error"]
            assert await _gone_reason(f"{live.url}/episodes/never-made/mcp", mode=mode) == (
                "episode never-made does not exist (it was deleted or expired)"
            )


async def test_episodes_closed_at_shutdown_say_so(serve_http, ledger):
    live = serve_http([ledger])
    async with httpx.AsyncClient(base_url=live.url, timeout=30) as http:
        ep = (await http.post("/episodes", json={"world": "ledger", "scale": "small"})).json()
        live.manager.close()  # what the server's shutdown does, while this client still talks to it
        with anyio.fail_after(30):
            message = await _gone_reason(ep["mcp_url"], mode="legacy")
    assert message == f"episode {ep['id']} was closed (the server shut down); it no longer exists"


async def test_episode_info_counts_every_call_with_the_split(serve_http, ledger):
    live = serve_http([ledger])
    async with httpx.AsyncClient(base_url=live.url, timeout=30) as http:
        ep = (await http.post("/episodes", json={"world": "ledger", "scale": "small"})).json()
        assert (ep["calls"], ep["calls_ok"], ep["calls_failed"]) == (0, 0, 0)
        with anyio.fail_after(30):
            async with Client(ep["mcp_url"]) as client:
                assert not (await client.call_tool("open_account", {"owner": "Ada"})).is_error
                assert (await client.call_tool("get_account", {})).is_error  # refused by validation
                assert (await client.call_tool("get_account", {"account_id": "acc_404"})).is_error  # business error
                assert (await client.call_tool("no_such_tool", {})).is_error  # refused: unknown tool
        info = (await http.get(f"/episodes/{ep['id']}")).json()
        listed = {e["id"]: e for e in (await http.get("/episodes")).json()}[ep["id"]]
    assert (info["calls"], info["calls_ok"], info["calls_failed"]) == (4, 1, 3)
    assert (listed["calls"], listed["calls_ok"], listed["calls_failed"]) == (4, 1, 3)
