"""Run by tests/clients/test_client.py with the python of a venv that has the light client and some `mcp`
release but not mcpsim: drives a real server through the client, prints one JSON report.

usage: python client_probe.py BASE_URL TOKEN TASK
"""

from __future__ import annotations

import importlib.metadata
import json
import sys

import anyio
from mcpsim_client import AsyncClient, Client, EpisodeNotFound


def _call(call_id: str, name: str, arguments: dict) -> dict:
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {"role": "assistant", "tool_calls": [{"id": call_id, "type": "function", "function": function}]}


def main(url: str, token: str, task: str) -> dict:
    report: dict = {"mcp": importlib.metadata.version("mcp"), "client": importlib.metadata.version("mcpsim-client")}
    try:
        import mcpsim  # noqa: F401

        report["mcpsim_importable"] = True
    except ImportError:
        report["mcpsim_importable"] = False
    with Client(url, token) as client:
        episode = client.create(task=task)
        report["created"] = {"task": episode.task, "calls": episode.calls, "mcp_url": episode.mcp_url}
        report["tools"] = len(client.tools(episode))
        lookup = {"email": "derek.smith@yahoo.com"}
        found = client.call_tool(episode, "find_customer_by_email", lookup)
        report["found"] = found.structured
        before = client.state(episode, tables=["addresses"])
        fork = client.fork(episode)
        address = {
            "customer_id": found.structured["customer_id"],
            "line1": "88 Harbor View Rd",
            "line2": "Apt 12",
            "city": "Traverse City",
            "state": "MI",
            "zip": "49684",
            "make_default": True,
        }
        added = client.call_tool(fork, "add_customer_address", address)
        forked = client.get(fork)
        report["fork"] = {
            "calls": forked.calls,
            "calls_ok": forked.calls_ok,
            "calls_failed": forked.calls_failed,
            "source_calls": client.get(episode).calls,
        }
        report["source_hash_unchanged"] = client.state(episode)["state_hash"] == before["state_hash"]
        conversation = [
            {"role": "user", "content": "Please add 88 Harbor View Rd, Apt 12 and make it my default."},
            _call("c1", "find_customer_by_email", lookup),
            {"role": "tool", "tool_call_id": "c1", "content": found.as_message_content()},
            {"role": "assistant", "content": "I will add 88 Harbor View Rd, Apt 12 as your default. Shall I go ahead?"},
            {"role": "user", "content": "Yes, please go ahead."},
            _call("c2", "add_customer_address", address),
            {"role": "tool", "tool_call_id": "c2", "content": added.as_message_content()},
            {"role": "assistant", "content": "Done."},
        ]
        report["fork_verdict"] = client.verify(fork, answer="Done.", messages=conversation).reward
        report["source_verdict"] = client.verify(episode, answer="Done.").reward
        restored = client.restore(client.snapshot(fork))
        report["restored_hash_equal"] = client.state(restored)["state_hash"] == client.state(fork)["state_hash"]
        for e in (episode, fork, restored):
            client.delete(e)
        try:
            client.get(episode)
            report["deleted"] = False
        except EpisodeNotFound:
            report["deleted"] = True

    async def asynchronous() -> dict:
        async with AsyncClient(url, token) as client, client.episode("retail", seed=1, scale="small") as e:
            return {"seed": e.seed, "scale": e.scale, "tools": len(await client.tools(e))}

    report["async"] = anyio.run(asynchronous)
    return report


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:4])))
