"""`Client` (blocking) and `AsyncClient` (asyncio or trio through httpx): the same methods over
an mcpsim server's control plane and its episodes' MCP endpoints. The requests, retry rules
and parsing live in `_protocol`; these classes only send and sleep."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, TypeAlias

import anyio
import httpx

from mcpsim_client import _protocol as p
from mcpsim_client.errors import EpisodeNotFound
from mcpsim_client.models import EpisodeInfo, TaskInfo, Tool, ToolResult, Verdict

Episode: TypeAlias = str | EpisodeInfo  # an episode's id, or what the server said about it


def _headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def _timeout(timeout: float | httpx.Timeout) -> httpx.Timeout:
    return timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout, connect=min(timeout, 10.0))


class _Sessions:
    """MCP sessions by episode URL, and the JSON-RPC request counter."""

    def __init__(self) -> None:
        self.ids: dict[str, str | None] = {}
        self.instructions: dict[str, str] = {}
        self.counter = 0

    def next_id(self) -> int:
        self.counter += 1
        return self.counter


class Client:
    """A blocking client. `base_url` is the server's root (http://127.0.0.1:8000); `token` its
    control-plane bearer token (None for a server started with --no-auth); `timeout` seconds
    per request (grading a large episode can take a while); `retry` the retry policy."""

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        timeout: float | httpx.Timeout = 120.0,
        retry: p.Retry | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.retry = retry or p.Retry()
        # Idle connections expire before uvicorn's 5 s keep-alive closes them under a request.
        self._http = httpx.Client(
            base_url=self.base_url,
            headers=_headers(token),
            timeout=_timeout(timeout),
            limits=httpx.Limits(keepalive_expiry=2.0),
            transport=transport,
        )
        self._mcp = _Sessions()

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, request: p.Request) -> httpx.Response:
        attempt, retried = 0, False
        while True:
            attempt += 1
            error: Exception | None = None
            response = None
            try:
                response = self._http.request(request.method, request.path, **request.kwargs())
            except httpx.TransportError as exc:
                error = exc
            if not p.should_retry(request, attempt, self.retry, error, response):
                if error is not None:
                    raise p.transport_failed(request, error, attempt) from error
                assert response is not None
                return p.check(request, response, retried=retried)
            retried = retried or error is not None
            time.sleep(self.retry.delay(attempt, response.headers.get("retry-after") if response is not None else None))

    # -- the control plane ----------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        """The open /health route: status, version, live episodes, worlds."""
        return self._send(p.health()).json()

    def worlds(self) -> list[dict[str, Any]]:
        return self._send(p.worlds()).json()

    def tasks(self, world: str) -> list[TaskInfo]:
        """A world's tasks: id, split, the user's first message, whether it needs a dialogue."""
        return [TaskInfo.from_json(t) for t in self._send(p.tasks(world)).json()]

    def create(
        self,
        world: str | None = None,
        *,
        task: str | None = None,
        seed: int | None = None,
        scale: str | None = None,
        faults: str | dict[str, Any] | None = None,
    ) -> EpisodeInfo:
        """A new episode: of `task` (its world state, seed, scale and fault profile), or of
        `world` at `seed` and `scale`. `faults`: a profile's name (none, flaky, hostile) or one
        written inline, instead of the task's."""
        return p.as_episode(self._send(p.create(world, task, seed, scale, faults)))

    def get(self, episode: Episode) -> EpisodeInfo:
        return p.as_episode(self._send(p.get(episode)))

    def episodes(self) -> list[EpisodeInfo]:
        """Every live episode of the server."""
        return [EpisodeInfo.from_json(e) for e in self._send(p.listing()).json()]

    def state(self, episode: Episode, tables: list[str] | None = None, limit: int | None = None) -> dict[str, Any]:
        """The episode's rows (`tables`, `state_hash`, ...), of some tables only, `limit` rows each."""
        return self._send(p.state(episode, tables, limit)).json()

    def changes(self, episode: Episode) -> list[dict[str, Any]]:
        return self._send(p.changes(episode)).json()["changes"]

    def fork(self, episode: Episode) -> EpisodeInfo:
        """A new episode with a copy of this one's database (state, transcript, clock)."""
        return p.as_episode(self._send(p.fork(episode)))

    def end(self, episode: Episode) -> EpisodeInfo:
        """Freeze the episode: writes are refused from now on, reads still answer."""
        return p.as_episode(self._send(p.end(episode)))

    def verify(
        self, episode: Episode, answer: str | None = None, messages: list[dict[str, Any]] | None = None
    ) -> Verdict:
        """Grade the episode (of a task) on its final state, the agent's final `answer` and the
        conversation (`messages`, OpenAI-style, for checks on the dialogue). The first verdict
        is final: a later verify returns it unchanged."""
        return p.as_verdict(self._send(p.verify(episode, answer, messages)))

    def snapshot(self, episode: Episode) -> bytes:
        """The episode's database, signed by the server: `restore` it on the same server (or one
        with the same --snapshot-key)."""
        return self._send(p.snapshot(episode)).content

    def restore(self, data: bytes) -> EpisodeInfo:
        return p.as_episode(self._send(p.restore(data)))

    def trajectory(self, episode: Episode) -> dict[str, Any]:
        """The server's record of the episode: every call with its row changes."""
        return self._send(p.trajectory(episode)).json()

    def delete(self, episode: Episode, *, missing_ok: bool = False) -> bool:
        """Delete the episode; False if it did not exist and `missing_ok`."""
        try:
            response = self._send(p.delete(episode))
        except EpisodeNotFound:
            if missing_ok:
                return False
            raise
        self._mcp.ids.pop(self._mcp_url(episode), None)
        return response.status_code == 204

    @contextmanager
    def episode(self, world: str | None = None, **kw: Any) -> Iterator[EpisodeInfo]:
        """`create(...)`, deleted when the block ends."""
        info = self.create(world, **kw)
        try:
            yield info
        finally:
            self.delete(info, missing_ok=True)

    # -- MCP --------------------------------------------------------------------------------------

    def _mcp_url(self, episode: Episode) -> str:
        return episode.mcp_url if isinstance(episode, EpisodeInfo) else f"{self.base_url}/episodes/{episode}/mcp"

    def _session(self, url: str, fresh: bool = False) -> str | None:
        if fresh or url not in self._mcp.ids:
            response = self._send(p.mcp_initialize(url))
            result = p.mcp_result(p.mcp_initialize(url), response) or {}
            self._mcp.instructions[url] = result.get("instructions") or ""
            session = response.headers.get("mcp-session-id")
            self._send(p.mcp_initialized(url, session))
            self._mcp.ids[url] = session
        return self._mcp.ids[url]

    def _rpc(self, episode: Episode, method: str, params: dict[str, Any]) -> Any:
        url = self._mcp_url(episode)
        session = self._session(url)
        request = p.mcp_request(url, session, self._mcp.next_id(), method, params)
        try:
            response = self._send(request)
        except EpisodeNotFound:
            if session is None:
                raise
            # the session was closed (idle, or the server's per-client cap): open a new one once
            request = p.mcp_request(url, self._session(url, fresh=True), self._mcp.next_id(), method, params)
            response = self._send(request)
        return p.mcp_result(request, response)

    def tools(self, episode: Episode) -> list[Tool]:
        """The episode's tools (MCP tools/list)."""
        return [Tool.from_json(t) for t in self._rpc(episode, "tools/list", {})["tools"]]

    def call_tool(self, episode: Episode, name: str, arguments: dict[str, Any] | None = None) -> ToolResult:
        """Call a tool of the episode (MCP tools/call), as an agent would."""
        return p.as_tool_result(self._rpc(episode, "tools/call", {"name": name, "arguments": arguments or {}}))

    def policy(self, episode: Episode) -> str:
        """The world's policy (the MCP server's instructions), which agents get as their system prompt."""
        url = self._mcp_url(episode)
        self._session(url)
        return self._mcp.instructions[url]


class AsyncClient:
    """The same as `Client`, awaited."""

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        timeout: float | httpx.Timeout = 120.0,
        retry: p.Retry | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.retry = retry or p.Retry()
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            headers=_headers(token),
            timeout=_timeout(timeout),
            limits=httpx.Limits(keepalive_expiry=2.0),
            transport=transport,
        )
        self._mcp = _Sessions()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _send(self, request: p.Request) -> httpx.Response:
        attempt, retried = 0, False
        while True:
            attempt += 1
            error: Exception | None = None
            response = None
            try:
                response = await self._http.request(request.method, request.path, **request.kwargs())
            except httpx.TransportError as exc:
                error = exc
            if not p.should_retry(request, attempt, self.retry, error, response):
                if error is not None:
                    raise p.transport_failed(request, error, attempt) from error
                assert response is not None
                return p.check(request, response, retried=retried)
            retried = retried or error is not None
            await anyio.sleep(
                self.retry.delay(attempt, response.headers.get("retry-after") if response is not None else None)
            )

    async def health(self) -> dict[str, Any]:
        return (await self._send(p.health())).json()

    async def worlds(self) -> list[dict[str, Any]]:
        return (await self._send(p.worlds())).json()

    async def tasks(self, world: str) -> list[TaskInfo]:
        return [TaskInfo.from_json(t) for t in (await self._send(p.tasks(world))).json()]

    async def create(
        self,
        world: str | None = None,
        *,
        task: str | None = None,
        seed: int | None = None,
        scale: str | None = None,
        faults: str | dict[str, Any] | None = None,
    ) -> EpisodeInfo:
        return p.as_episode(await self._send(p.create(world, task, seed, scale, faults)))

    async def get(self, episode: Episode) -> EpisodeInfo:
        return p.as_episode(await self._send(p.get(episode)))

    async def episodes(self) -> list[EpisodeInfo]:
        return [EpisodeInfo.from_json(e) for e in (await self._send(p.listing())).json()]

    async def state(
        self, episode: Episode, tables: list[str] | None = None, limit: int | None = None
    ) -> dict[str, Any]:
        return (await self._send(p.state(episode, tables, limit))).json()

    async def changes(self, episode: Episode) -> list[dict[str, Any]]:
        return (await self._send(p.changes(episode))).json()["changes"]

    async def fork(self, episode: Episode) -> EpisodeInfo:
        return p.as_episode(await self._send(p.fork(episode)))

    async def end(self, episode: Episode) -> EpisodeInfo:
        return p.as_episode(await self._send(p.end(episode)))

    async def verify(
        self, episode: Episode, answer: str | None = None, messages: list[dict[str, Any]] | None = None
    ) -> Verdict:
        return p.as_verdict(await self._send(p.verify(episode, answer, messages)))

    async def snapshot(self, episode: Episode) -> bytes:
        return (await self._send(p.snapshot(episode))).content

    async def restore(self, data: bytes) -> EpisodeInfo:
        return p.as_episode(await self._send(p.restore(data)))

    async def trajectory(self, episode: Episode) -> dict[str, Any]:
        return (await self._send(p.trajectory(episode))).json()

    async def delete(self, episode: Episode, *, missing_ok: bool = False) -> bool:
        try:
            response = await self._send(p.delete(episode))
        except EpisodeNotFound:
            if missing_ok:
                return False
            raise
        self._mcp.ids.pop(self._mcp_url(episode), None)
        return response.status_code == 204

    @asynccontextmanager
    async def episode(self, world: str | None = None, **kw: Any) -> AsyncIterator[EpisodeInfo]:
        info = await self.create(world, **kw)
        try:
            yield info
        finally:
            with anyio.CancelScope(shield=True):
                await self.delete(info, missing_ok=True)

    def _mcp_url(self, episode: Episode) -> str:
        return episode.mcp_url if isinstance(episode, EpisodeInfo) else f"{self.base_url}/episodes/{episode}/mcp"

    async def _session(self, url: str, fresh: bool = False) -> str | None:
        if fresh or url not in self._mcp.ids:
            response = await self._send(p.mcp_initialize(url))
            result = p.mcp_result(p.mcp_initialize(url), response) or {}
            self._mcp.instructions[url] = result.get("instructions") or ""
            session = response.headers.get("mcp-session-id")
            await self._send(p.mcp_initialized(url, session))
            self._mcp.ids[url] = session
        return self._mcp.ids[url]

    async def _rpc(self, episode: Episode, method: str, params: dict[str, Any]) -> Any:
        url = self._mcp_url(episode)
        session = await self._session(url)
        request = p.mcp_request(url, session, self._mcp.next_id(), method, params)
        try:
            response = await self._send(request)
        except EpisodeNotFound:
            if session is None:
                raise
            request = p.mcp_request(url, await self._session(url, fresh=True), self._mcp.next_id(), method, params)
            response = await self._send(request)
        return p.mcp_result(request, response)

    async def tools(self, episode: Episode) -> list[Tool]:
        return [Tool.from_json(t) for t in (await self._rpc(episode, "tools/list", {}))["tools"]]

    async def call_tool(self, episode: Episode, name: str, arguments: dict[str, Any] | None = None) -> ToolResult:
        return p.as_tool_result(await self._rpc(episode, "tools/call", {"name": name, "arguments": arguments or {}}))

    async def policy(self, episode: Episode) -> str:
        url = self._mcp_url(episode)
        await self._session(url)
        return self._mcp.instructions[url]
