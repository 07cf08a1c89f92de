"""What the sync and async clients share: each operation as a `Request` (method, path, body,
whether it may be sent twice), the retry rules, and the parsing of answers. The two clients
differ only in how they send a request and sleep."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import httpx

from mcpsim_client.errors import (
    ApiError,
    Conflict,
    EpisodeNotFound,
    InvalidRequest,
    McpError,
    ServerBusy,
    TransportFailed,
    Unauthorized,
)
from mcpsim_client.models import EpisodeInfo, EpisodeOptions, ToolResult, Verdict

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing's from 3.11; the client runs on 3.10 too

SNAPSHOT_TYPE = "application/vnd.sqlite3"
MCP_PROTOCOL_VERSION = "2025-06-18"
MCP_ACCEPT = "application/json, text/event-stream"

# Failures where the request never reached the server: safe to resend whatever it was.
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
# Failures after the request may have been applied (the answer was lost): resent only when idempotent.
MAYBE_APPLIED = (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError, httpx.ReadTimeout, httpx.WriteTimeout)


@dataclass(frozen=True)
class Retry:
    """How hard a client tries. A request is resent when it failed before reaching the server
    (connection refused or timed out), when the server refused it without acting (503: full,
    or grading unavailable; 429), or, for idempotent requests only (GET, DELETE, verify, which
    returns the first verdict again), when the connection broke or timed out while waiting
    for the answer. Creating, forking, restoring and ending an episode are never resent after
    the request may have been applied: a second episode could be created behind your back."""

    attempts: int = 4  # in all, the first included
    backoff: float = 0.25  # seconds before the first retry; doubled each time
    max_backoff: float = 8.0  # cap of a wait, also of a server's Retry-After

    def delay(self, attempt: int, retry_after: str | None = None) -> float:
        if retry_after is not None:
            try:
                return min(max(float(retry_after), 0.0), self.max_backoff)
            except ValueError:
                pass
        base = min(self.backoff * 2 ** (attempt - 1), self.max_backoff)
        return base * (1 + random.random() / 4)  # jitter spreads a fleet's retries out


@dataclass
class Request:
    method: Literal["GET", "POST", "DELETE"]
    path: str  # relative to the base URL, or an absolute URL (an episode's MCP URL)
    json: Any = None
    content: bytes | None = None
    params: dict[str, str] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    idempotent: bool = False
    what: str = ""  # for error messages: "create an episode", "verify episode ep_..."

    def kwargs(self) -> dict[str, Any]:
        kw: dict[str, Any] = {"headers": self.headers}
        if self.json is not None:
            kw["json"] = self.json
        if self.content is not None:
            kw["content"] = self.content
        if self.params:
            kw["params"] = self.params
        return kw


def should_retry(request: Request, attempt: int, policy: Retry, error: Exception | None, response: Any) -> bool:
    """Whether the attempt numbered `attempt` (from 1) that failed with `error` or answered
    `response` is worth repeating under `policy`."""
    if attempt >= policy.attempts:
        return False
    if error is not None:
        return isinstance(error, NOT_SENT) or (request.idempotent and isinstance(error, MAYBE_APPLIED))
    return response.status_code in (429, 503)


def transport_failed(request: Request, error: Exception, attempts: int) -> TransportFailed:
    return TransportFailed(
        f"could not {request.what or request.method + ' ' + request.path} after {attempts} attempt(s): "
        f"{type(error).__name__}: {error}"
    )


def check(request: Request, response: httpx.Response, *, retried: bool = False) -> httpx.Response:
    """The response if it is a success; else the matching ApiError with the server's message.
    A DELETE resent after a lost answer that now finds nothing succeeded the first time."""
    status = response.status_code
    if status < 400:
        return response
    if status == 404 and request.method == "DELETE" and retried:
        return response
    try:
        body = response.json()
    except ValueError:
        body = None
    message: str = body["error"] if isinstance(body, dict) and isinstance(body.get("error"), str) else response.text
    details = body.get("details") if isinstance(body, dict) else None
    if isinstance(details, list):  # pydantic's validation errors: say which field and why
        reasons = [
            f"{'.'.join(str(part) for part in d.get('loc', []))}: {d.get('msg', '')}"
            for d in details
            if isinstance(d, dict)
        ]
        message = f"{message} ({'; '.join(reasons)})" if reasons else message
    text = f"could not {request.what or request.method + ' ' + request.path}: HTTP {status}: {message[:500]}"
    kind: type[ApiError] = {
        401: Unauthorized,
        404: EpisodeNotFound,
        409: Conflict,
        400: InvalidRequest,
        413: InvalidRequest,
        415: InvalidRequest,
        422: InvalidRequest,
        429: ServerBusy,
        503: ServerBusy,
    }.get(status, ApiError)
    raise kind(text, status=status, server_message=message, details=details)


def episode_id(episode: str | EpisodeInfo) -> str:
    return episode.id if isinstance(episode, EpisodeInfo) else episode


# -- the control plane's operations --------------------------------------------------------------


def create(world: str | None, **options: Unpack[EpisodeOptions]) -> Request:
    unknown = sorted(set(options) - EpisodeOptions.__optional_keys__)
    if unknown:
        raise TypeError(f"unknown episode option(s) {', '.join(unknown)}: the options are task, seed, scale, faults")
    body = {k: v for k, v in {"world": world, **options}.items() if v is not None}
    task = options.get("task")
    label = f"task {task}" if task else f"world {world or '(default)'}"
    return Request("POST", "/episodes", json=body, what=f"create an episode of {label}")


def get(episode: str | EpisodeInfo) -> Request:
    eid = episode_id(episode)
    return Request("GET", f"/episodes/{eid}", idempotent=True, what=f"read episode {eid}")


def listing() -> Request:
    return Request("GET", "/episodes", idempotent=True, what="list episodes")


def worlds() -> Request:
    return Request("GET", "/worlds", idempotent=True, what="list worlds")


def tasks(world: str) -> Request:
    return Request("GET", f"/worlds/{world}/tasks", idempotent=True, what=f"list the tasks of {world}")


def health() -> Request:
    return Request("GET", "/health", idempotent=True, what="check the server's health")


def state(episode: str | EpisodeInfo, tables: list[str] | None, limit: int | None) -> Request:
    eid = episode_id(episode)
    params = {}
    if tables:
        params["tables"] = ",".join(tables)
    if limit is not None:
        params["limit"] = str(limit)
    return Request("GET", f"/episodes/{eid}/state", params=params, idempotent=True, what=f"read the state of {eid}")


def changes(episode: str | EpisodeInfo) -> Request:
    eid = episode_id(episode)
    return Request("GET", f"/episodes/{eid}/changes", idempotent=True, what=f"read the changes of {eid}")


def fork(episode: str | EpisodeInfo) -> Request:
    eid = episode_id(episode)
    return Request("POST", f"/episodes/{eid}/fork", what=f"fork episode {eid}")


def end(episode: str | EpisodeInfo) -> Request:
    eid = episode_id(episode)
    return Request("POST", f"/episodes/{eid}/end", what=f"end episode {eid}")


def verify(episode: str | EpisodeInfo, answer: str | None, messages: list[dict[str, Any]] | None) -> Request:
    eid = episode_id(episode)
    body: dict[str, Any] = {}
    if answer is not None:
        body["answer"] = answer
    if messages is not None:
        body["messages"] = messages
    # a verdict is final: a second verify returns the first, so it may be resent
    return Request("POST", f"/episodes/{eid}/verify", json=body, idempotent=True, what=f"verify episode {eid}")


def user_reply(episode: str | EpisodeInfo, messages: list[dict[str, Any]]) -> Request:
    eid = episode_id(episode)
    # the reply is worked out from the conversation alone: asking twice gives the same answer
    return Request(
        "POST", f"/episodes/{eid}/user", json={"messages": messages}, idempotent=True, what=f"ask the user of {eid}"
    )


def as_user_message(response: httpx.Response) -> str | None:
    message = response.json().get("message")
    return message if isinstance(message, str) else None


def snapshot(episode: str | EpisodeInfo) -> Request:
    eid = episode_id(episode)
    return Request("GET", f"/episodes/{eid}/snapshot", idempotent=True, what=f"snapshot episode {eid}")


def restore(data: bytes) -> Request:
    return Request(
        "POST", "/episodes/restore", content=data, headers={"Content-Type": SNAPSHOT_TYPE}, what="restore a snapshot"
    )


def trajectory(episode: str | EpisodeInfo) -> Request:
    eid = episode_id(episode)
    return Request("GET", f"/episodes/{eid}/trajectory", idempotent=True, what=f"read the trajectory of {eid}")


def delete(episode: str | EpisodeInfo) -> Request:
    eid = episode_id(episode)
    return Request("DELETE", f"/episodes/{eid}", idempotent=True, what=f"delete episode {eid}")


def as_episode(response: httpx.Response) -> EpisodeInfo:
    return EpisodeInfo.from_json(response.json())


def as_verdict(response: httpx.Response) -> Verdict:
    return Verdict.from_json(response.json())


# -- MCP over streamable HTTP (JSON-RPC; the server answers JSON) --------------------------------


def mcp_initialize(url: str) -> Request:
    return Request(
        "POST",
        url,
        json={
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": MCP_PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "mcpsim-client", "version": "0.1.0"},
            },
        },
        headers={"Accept": MCP_ACCEPT},
        idempotent=True,  # a second session is harmless: the episode lives on the control plane
        what=f"open an MCP session at {url}",
    )


def mcp_initialized(url: str, session: str | None) -> Request:
    return Request(
        "POST",
        url,
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers=mcp_headers(session),
        idempotent=True,
        what=f"open an MCP session at {url}",
    )


def mcp_headers(session: str | None) -> dict[str, str]:
    headers = {"Accept": MCP_ACCEPT, "MCP-Protocol-Version": MCP_PROTOCOL_VERSION}
    if session:
        headers["Mcp-Session-Id"] = session
    return headers


def mcp_request(url: str, session: str | None, number: int, method: str, params: dict[str, Any]) -> Request:
    # tools/list may be resent; a tool call may have been applied, so it is not resent after a lost answer
    return Request(
        "POST",
        url,
        json={"jsonrpc": "2.0", "id": number, "method": method, "params": params},
        headers=mcp_headers(session),
        idempotent=method != "tools/call",
        what=f"{method} at {url}",
    )


def mcp_result(request: Request, response: httpx.Response) -> Any:
    """The JSON-RPC result of a response (JSON, or a one-event SSE stream)."""
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
        text = data[-1] if data else ""
    try:
        message = json.loads(text)
    except ValueError:
        raise McpError(f"could not {request.what}: the server answered no JSON-RPC message: {text[:300]}") from None
    if "error" in message:
        error = message["error"] or {}
        raise McpError(f"could not {request.what}: {error.get('message', error)}", code=error.get("code"))
    return message.get("result")


def as_tool_result(result: Any) -> ToolResult:
    return ToolResult.from_json(result or {})
