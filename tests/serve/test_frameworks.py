"""Frameworks whose MCP tools start a stdio server process per tool call keep their writes with
`mcpsim serve WORLD --episode PATH`, and lose them without it (docs/frameworks.md).

Each framework runs in a virtual environment of its own, because its pins clash with mcpsim's
(langchain-mcp-adapters needs mcp<2; inspect_ai brings its own stack): `tests/support/venvs.py` builds
it under $MCPSIM_TEST_VENVS (default ~/.cache/mcpsim-test-venvs) on first use and reuses it.
The frameworks are the real packages from PyPI; the servers they start are this checkout's
`mcpsim`, launched by this interpreter. Without network on first use, these tests skip.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mcpsim.testing._driver import clean_env
from tests.support.venvs import cached_venv

pytestmark = pytest.mark.system

FRAMEWORKS = {  # name -> the pip requirements of its own venv
    "langchain": ["langchain-mcp-adapters>=0.1,<0.4", "mcp>=1.10,<2"],
    "inspect": ["inspect-ai>=0.3.100,<0.4", "mcp>=1.10,<2"],
}
CUSTOMER = "cus_0558461"  # retail, seed 0, small scale: its first customer
ADDRESS = {"customer_id": CUSTOMER, "line1": "LINE", "city": "Springfield", "state": "IL", "zip": "62701"}


def server(episode: Path | None) -> list[str]:
    """The command line a framework launches: this checkout's `mcpsim serve retail` over stdio."""
    args = ["-m", "mcpsim", "serve", "retail", "--scale", "small", "--no-cache", "--log-level", "WARNING"]
    return [sys.executable, *args, *(["--episode", str(episode)] if episode else [])]


# Each script gets the server command line as JSON in argv[1], makes one write and one read (each
# tool call in a server process of its own: how the framework works outside a persistent session)
# and prints the read's text.
LANGCHAIN = """
import asyncio, json, sys
from langchain_mcp_adapters.client import MultiServerMCPClient

command, address = json.loads(sys.argv[1]), json.loads(sys.argv[2])

async def main():
    client = MultiServerMCPClient(
        {"retail": {"transport": "stdio", "command": command[0], "args": command[1:], "env": json.loads(sys.argv[3])}}
    )
    tools = {tool.name: tool for tool in await client.get_tools()}  # no session: a process per call
    await tools["add_customer_address"].ainvoke(address)
    print(await tools["get_customer_details"].ainvoke({"customer_id": address["customer_id"]}))

asyncio.run(main())
"""

INSPECT = """
import asyncio, json, sys
from inspect_ai.tool import ToolDef, mcp_server_stdio

command, address = json.loads(sys.argv[1]), json.loads(sys.argv[2])

async def main():
    server = mcp_server_stdio(command=command[0], args=command[1:], env=json.loads(sys.argv[3]))
    tools = {ToolDef(tool).name: tool for tool in await server.tools()}  # outside mcp_connection
    await tools["add_customer_address"](**address)
    print(await tools["get_customer_details"](customer_id=address["customer_id"]))

asyncio.run(main())
"""


def _write_then_read(name: str, script: str, tmp_path: Path, line: str, episode: Path | None) -> str:
    python = cached_venv(name, FRAMEWORKS[name], with_client=False)
    path = tmp_path / f"drive_{name}.py"  # not inspect.py: it would shadow the stdlib module
    path.write_text(textwrap.dedent(script))
    out = subprocess.run(
        [
            str(python),
            str(path),
            json.dumps(server(episode)),
            json.dumps(ADDRESS | {"line1": line}),
            json.dumps(clean_env()),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


@pytest.mark.parametrize("name,script", [("langchain", LANGCHAIN), ("inspect", INSPECT)])
def test_per_call_clients_keep_writes_only_with_episode(name: str, script: str, tmp_path: Path) -> None:
    lost = _write_then_read(name, script, tmp_path, "1 Lost Lane", None)
    assert "Kimberly" in lost and "1 Lost Lane" not in lost  # each call's process started afresh
    kept = _write_then_read(name, script, tmp_path, "7 Kept Road", tmp_path / "episode.db")
    assert "7 Kept Road" in kept
