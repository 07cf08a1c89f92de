"""mcpsim-client: a light client for mcpsim servers (httpx only, no MCP SDK pin).

`Client` and `AsyncClient` create episodes of a task (world, seed, scale, faults), give their
MCP URLs, read state, fork, snapshot, restore, verify and delete them over the control plane,
and call tools over MCP's JSON-RPC, with retries of what may safely be resent and timeouts.
"""

from mcpsim_client._protocol import Retry
from mcpsim_client.client import AsyncClient, Client
from mcpsim_client.errors import (
    ApiError,
    Conflict,
    EpisodeNotFound,
    InvalidRequest,
    McpError,
    MCPSimError,
    ServerBusy,
    TransportFailed,
    Unauthorized,
)
from mcpsim_client.models import Check, EpisodeInfo, EpisodeOptions, TaskInfo, Tool, ToolResult, Verdict

__version__ = "0.1.0"

__all__ = [
    "ApiError",
    "AsyncClient",
    "Check",
    "Client",
    "Conflict",
    "EpisodeInfo",
    "EpisodeNotFound",
    "EpisodeOptions",
    "InvalidRequest",
    "MCPSimError",
    "McpError",
    "Retry",
    "ServerBusy",
    "TaskInfo",
    "Tool",
    "ToolResult",
    "TransportFailed",
    "Unauthorized",
    "Verdict",
]
