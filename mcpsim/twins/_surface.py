"""Reading a real MCP server: connect to it (a URL or a stdio command line) and read what it shows
a client, its name, version, instructions, tools and resources."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError


@dataclass
class ServerSurface:
    """What a server shows a client: its name, version, instructions, tools and resources."""

    name: str
    version: str
    instructions: str
    tools: list[dict[str, Any]]  # as on the wire: name, title, description, inputSchema, outputSchema, annotations
    resources: list[dict[str, Any]] = field(default_factory=list)
    source: str = ""


def target_of(target: str | list[str], env: dict[str, str] | None = None) -> Any:
    """A URL, or a stdio command line (run with `env` added to the SDK's safe default
    environment), as the MCP SDK client's target."""
    if isinstance(target, str):
        if not re.match(r"^https?://", target):
            raise ValueError(f"not an http(s) URL: {target!r}")
        return target
    if not target:
        raise ValueError("no command given: put the server's command line after --")
    return StdioServerParameters(command=target[0], args=list(target[1:]), env=env)


async def read_surface(
    target: str | list[str], *, env: dict[str, str] | None = None, limit_s: float = 60.0
) -> ServerSurface:
    """Connect to a real server (a URL or a stdio command line) and read its tools and resources."""
    with anyio.fail_after(limit_s):
        async with Client(target_of(target, env), read_timeout_seconds=limit_s) as client:
            tools: list[dict[str, Any]] = []
            cursor: str | None = None
            while True:
                page = await client.list_tools(cursor=cursor)
                tools += [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in page.tools]
                cursor = page.next_cursor
                if not cursor:
                    break
            try:
                listed = await client.list_resources()
                resources = [r.model_dump(mode="json", by_alias=True, exclude_none=True) for r in listed.resources]
            except MCPError:  # a server without resources answers "method not found"
                resources = []
            info = client.server_info
            instructions = client.instructions or ""
    source = target if isinstance(target, str) else " ".join(target)
    name, version = (info.name, info.version or "") if info is not None else ("server", "")
    return ServerSurface(name, version, instructions, tools, resources, source)
