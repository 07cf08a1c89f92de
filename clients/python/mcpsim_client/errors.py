"""The client's errors: one base class, and one subclass per way a request can fail."""

from __future__ import annotations

from typing import Any


class MCPSimError(Exception):
    """Anything the client raises."""


class TransportFailed(MCPSimError):
    """The server could not be reached, or the connection failed, after every retry allowed."""


class ApiError(MCPSimError):
    """The server answered with an error status; `server_message` is its reason."""

    def __init__(self, message: str, *, status: int, server_message: str = "", details: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.server_message = server_message
        self.details = details  # validation details of a 422, when the server gives them


class Unauthorized(ApiError):
    """401: the token is missing or wrong."""


class EpisodeNotFound(ApiError):
    """404: no such episode (deleted, expired, or never created)."""


class InvalidRequest(ApiError):
    """400, 413, 415 or 422: the request itself is wrong (unknown world or task, bad seed...)."""


class Conflict(ApiError):
    """409."""


class ServerBusy(ApiError):
    """503 or 429 after every retry: the server is full, or grading could not finish."""


class McpError(MCPSimError):
    """An MCP request failed (a JSON-RPC error, such as an unknown tool)."""

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.code = code
