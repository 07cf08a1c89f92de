"""A third-party MCP client, MCP Inspector's CLI (Node), against mcpsim over stdio and HTTP.

.ci/run installs it and sets MCPSIM_INSPECTOR; without it (a laptop without Node) these skip.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

INSPECTOR = os.environ.get("MCPSIM_INSPECTOR")
pytestmark = [
    pytest.mark.system,
    pytest.mark.skipif(not INSPECTOR, reason="MCP Inspector not installed (set MCPSIM_INSPECTOR)"),
]


def inspector(*args: str) -> dict:
    """Run the Inspector CLI; it prints the result as JSON (and exits 5 when the tool erred)."""
    out = subprocess.run([INSPECTOR, "--cli", *args], capture_output=True, text=True, timeout=120)
    assert out.returncode in (0, 5) and out.stdout, out.stderr
    return json.loads(out.stdout)


def test_inspector_lists_and_calls_tools_over_stdio():
    server = [sys.executable, "-m", "mcpsim", "serve", "retail", "--scale", "small", "--no-cache"]
    tools = inspector(*server, "--method", "tools/list")["tools"]
    assert len(tools) >= 15 and all(t["inputSchema"]["type"] == "object" for t in tools)
    result = inspector(*server, "--method", "tools/call", "--tool-name", "list_product_categories")
    assert result["isError"] is False and result["structuredContent"]


def test_inspector_reaches_an_episode_over_http_and_sees_its_writes(http_process):
    import httpx

    auth = {"Authorization": "Bearer tok"}
    ep = httpx.post(f"{http_process}/episodes", json={"world": "retail", "scale": "small"}, headers=auth).json()
    customer = httpx.get(
        f"{http_process}/episodes/{ep['id']}/state", params={"tables": "customers", "limit": 1}, headers=auth
    ).json()["tables"]["customers"][0]
    written = inspector(
        ep["mcp_url"],
        "--method",
        "tools/call",
        "--tool-name",
        "add_customer_address",
        "--tool-arg",
        f"customer_id={customer['id']}",
        "--tool-arg",
        "line1=42 Inspector Way",
        "--tool-arg",
        "city=Springfield",
        "--tool-arg",
        "state=IL",
        "--tool-arg",
        'zip="62701"',
    )
    assert written["isError"] is False, written
    read = inspector(
        ep["mcp_url"],
        "--method",
        "tools/call",
        "--tool-name",
        "get_customer_details",
        "--tool-arg",
        f"customer_id={customer['id']}",
    )  # a new connection, same episode
    assert "42 Inspector Way" in json.dumps(read["structuredContent"])
    refused = inspector(
        ep["mcp_url"], "--method", "tools/call", "--tool-name", "get_order_details", "--tool-arg", "order_id=#W9999999"
    )
    assert refused["isError"] is True
