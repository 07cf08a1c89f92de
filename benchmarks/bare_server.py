"""The baseline: a bare MCP SDK server with one async no-op tool and nothing else.

Imported by the suite (in memory, and over HTTP via `streamable_http_app(json_response=True)`),
and run as a script for stdio: `python benchmarks/bare_server.py`.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer


def build_bare_server() -> MCPServer:
    server = MCPServer(name="bare-noop")

    @server.tool()
    async def noop() -> str:
        """Do nothing and answer "ok"."""
        return "ok"

    return server


if __name__ == "__main__":
    build_bare_server().run("stdio")
