"""`Client` (blocking) and `AsyncClient` (asyncio or trio through httpx): the same methods over
an mcpsim server's control plane and its episodes' MCP endpoints. The requests, retry rules
and parsing live in `_protocol`, the exchanges (retries, MCP sessions) in `_Core`; the two
classes only send and sleep."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any, TypeAlias, TypedDict, TypeVar, cast

import anyio
import httpx

from mcpsim_client import _protocol as p
from mcpsim_client.errors import EpisodeNotFound
from mcpsim_client.models import EpisodeInfo, EpisodeOptions, TaskInfo, Tool, ToolResult, Verdict

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing's from 3.11; the client runs on 3.10 too

Episode: TypeAlias = str | EpisodeInfo  # an episode's id, or what the server said about it
T = TypeVar("T")
# What an agent of `rollout_group` returns: its final answer (or None), or (answer, messages)
# with the conversation (OpenAI-style) for checks on the dialogue
AgentResult: TypeAlias = "str | None | tuple[str | None, list[dict[str, Any]] | None]"
Faults: TypeAlias = "str | dict[str, Any] | None"


def _headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def _timeout(timeout: float | httpx.Timeout) -> httpx.Timeout:
    return timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout, connect=min(timeout, 10.0))


def _group(size: int, world: str | None, options: EpisodeOptions) -> p.Request:
    """POST /episodes with {"group": size}: `size` episodes of the same start in one request."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"a group has at least one episode, not {size!r}")
    request = p.create(world, **options)
    request.json["group"] = size
    request.what = request.what.replace("create an episode", f"create a group of {size} episodes", 1)
    return request


def _as_group(response: httpx.Response) -> list[EpisodeInfo]:
    return [EpisodeInfo.from_json(e) for e in response.json()["episodes"]]


def _graded(result: AgentResult) -> tuple[str | None, list[dict[str, Any]] | None]:
    """An agent's result as (answer, messages) for verify."""
    if isinstance(result, tuple) and len(result) == 2:
        return result
    if result is None or isinstance(result, str):
        return result, None
    raise TypeError(f"an agent returns its final answer (str or None) or (answer, messages), not {result!r:.100}")


class _JobOptions(TypedDict, total=False):
    """`run_job`'s options beside its tasks (None or left out: the server's default)."""

    world: str | None
    split: str | None
    trials: int  # 1
    agent: str  # oracle
    concurrency: int | None
    max_steps: int | None
    rollout_timeout: float | None  # seconds per rollout (the server's default: 300)


def _job(tasks: list[str] | None, options: _JobOptions) -> tuple[p.Request, httpx.Timeout]:
    """POST /jobs with `tasks` and `options` (those not None; `rollout_timeout` as `timeout`), and
    the wait for each line: a rollout's timeout (the server's default 300 s) and a minute more."""
    unknown = sorted(set(options) - set(_JobOptions.__annotations__))
    if unknown:
        raise TypeError(f"run_job() got unexpected keyword arguments: {', '.join(unknown)}")
    given: dict[str, Any] = {"tasks": tasks, "trials": 1, "agent": "oracle", **options}
    given["timeout"] = given.pop("rollout_timeout", None)
    body = {k: v for k, v in given.items() if v is not None}
    what = f"run a job of {body.get('agent', 'oracle')} on {body.get('world') or 'the default world'}"
    seconds = float(body.get("timeout", 300.0)) + 60.0
    return p.Request("POST", "/jobs", json=body, what=what), httpx.Timeout(seconds, connect=10.0)


def _job_line(line: str) -> dict[str, Any] | None:
    return json.loads(line) if line.strip() else None


Step: TypeAlias = "p.Request | float"  # what an exchange asks its client for: send a request, or wait (seconds)
Outcome: TypeAlias = "httpx.Response | httpx.TransportError | None"  # what the client gives back
Exchange: TypeAlias = Generator[Step, Outcome, T]


class _Core:
    """What both clients hold and decide: the base URL, the retry policy, the MCP sessions, and
    every exchange with the server as a generator of steps (send this request, wait this long)
    that `Client` drives blocking and `AsyncClient` awaited, so retries, MCP sessions and deletes
    are written once."""

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        timeout: float | httpx.Timeout = 120.0,
        retry: p.Retry | None = None,
        transport: httpx.BaseTransport | httpx.AsyncBaseTransport | None = None,
    ) -> None:
        """`base_url` is the server's root (http://127.0.0.1:8000); `token` its control-plane
        bearer token (None for a server started with --no-auth); `timeout` seconds per request
        (grading a large episode can take a while); `retry` the retry policy; `transport`
        httpx's (for tests)."""
        self.base_url = base_url.rstrip("/")
        self.retry = retry or p.Retry()
        # Idle connections expire before uvicorn's 5 s keep-alive closes them under a request.
        options: dict[str, Any] = {
            "base_url": self.base_url,
            "headers": _headers(token),
            "timeout": _timeout(timeout),
            "limits": httpx.Limits(keepalive_expiry=2.0),
            "transport": transport,
        }
        self._http = self._connect(options)
        self._sessions: dict[str, str | None] = {}  # MCP session ids by episode URL
        self._instructions: dict[str, str] = {}  # the MCP servers' instructions by episode URL
        self._counter = 0  # JSON-RPC request ids

    def _exchange(self, request: p.Request) -> Exchange[httpx.Response]:
        """Send `request`, again after a pause while the retry rules allow; its checked response."""
        attempt, retried = 0, False
        while True:
            attempt += 1
            outcome = yield request
            error = outcome if isinstance(outcome, httpx.TransportError) else None
            response = outcome if isinstance(outcome, httpx.Response) else None
            if not p.should_retry(request, attempt, self.retry, error, response):
                if error is not None:
                    raise p.transport_failed(request, error, attempt) from error
                assert response is not None
                return p.check(request, response, retried=retried)
            retried = retried or error is not None
            yield self.retry.delay(attempt, response.headers.get("retry-after") if response is not None else None)

    def _connect(self, options: dict[str, Any]) -> Any:
        raise NotImplementedError

    @staticmethod
    def _advance(exchange: Exchange[Any], outcome: Outcome) -> tuple[Step | None, Any]:
        """The exchange's next step, or (None, its result) once it is done."""
        try:
            return exchange.send(outcome), None
        except StopIteration as done:
            return None, done.value

    def _mcp_url(self, episode: Episode) -> str:
        return episode.mcp_url if isinstance(episode, EpisodeInfo) else f"{self.base_url}/episodes/{episode}/mcp"

    def _session(self, url: str, fresh: bool = False) -> Exchange[str | None]:
        """The MCP session at `url`, opened (initialize, initialized) on first use or `fresh`."""
        if fresh or url not in self._sessions:
            response = yield from self._exchange(p.mcp_initialize(url))
            result = p.mcp_result(p.mcp_initialize(url), response) or {}
            self._instructions[url] = result.get("instructions") or ""
            session = response.headers.get("mcp-session-id")
            yield from self._exchange(p.mcp_initialized(url, session))
            self._sessions[url] = session
        return self._sessions[url]

    def _rpc(self, episode: Episode, method: str, params: dict[str, Any]) -> Exchange[Any]:
        url = self._mcp_url(episode)
        session = yield from self._session(url)
        self._counter += 1
        request = p.mcp_request(url, session, self._counter, method, params)
        try:
            response = yield from self._exchange(request)
        except EpisodeNotFound:
            if session is None:
                raise
            # the session was closed (idle, or the server's per-client cap): open a new one once
            session = yield from self._session(url, fresh=True)
            self._counter += 1
            request = p.mcp_request(url, session, self._counter, method, params)
            response = yield from self._exchange(request)
        return p.mcp_result(request, response)

    def _policy(self, episode: Episode) -> Exchange[str]:
        url = self._mcp_url(episode)
        yield from self._session(url)
        return self._instructions[url]

    def _delete(self, episode: Episode, missing_ok: bool) -> Exchange[bool]:
        try:
            response = yield from self._exchange(p.delete(episode))
        except EpisodeNotFound:
            if missing_ok:
                return False
            raise
        self._sessions.pop(self._mcp_url(episode), None)
        return response.status_code == 204


class Client(_Core):
    """A blocking client (see `_Core.__init__` for its arguments)."""

    _http: httpx.Client

    def _connect(self, options: dict[str, Any]) -> httpx.Client:
        return httpx.Client(**options)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _drive(self, exchange: Exchange[T]) -> T:
        """Run an exchange: send its requests, sleep its pauses."""
        step, value = self._advance(exchange, None)
        while step is not None:
            step, value = self._advance(exchange, self._perform(step))
        return cast(T, value)

    def _perform(self, step: Step) -> Outcome:
        if not isinstance(step, p.Request):
            time.sleep(step)
            return None
        try:
            return self._http.request(step.method, step.path, **step.kwargs())
        except httpx.TransportError as exc:
            return exc

    def _send(self, request: p.Request) -> httpx.Response:
        return self._drive(self._exchange(request))

    # -- the control plane ----------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        """The open /health route: status, version, live episodes, worlds."""
        return self._send(p.health()).json()

    def worlds(self) -> list[dict[str, Any]]:
        return self._send(p.worlds()).json()

    def tasks(self, world: str) -> list[TaskInfo]:
        """A world's tasks: id, split, the user's first message, whether it needs a dialogue."""
        return [TaskInfo.from_json(t) for t in self._send(p.tasks(world)).json()]

    def create(self, world: str | None = None, **options: Unpack[EpisodeOptions]) -> EpisodeInfo:
        """A new episode of `world` (None: the server's default world), with `options`:
        `task`, `seed`, `scale`, `faults` (`EpisodeOptions`)."""
        return p.as_episode(self._send(p.create(world, **options)))

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

    def user_reply(self, episode: Episode, messages: list[dict[str, Any]]) -> str | None:
        """The task's simulated user's next message after the agent's latest answer (the last of
        `messages`, the conversation so far, OpenAI-style), or None when the user has nothing more
        to say: then the conversation is over and the episode can be verified. Deterministic: it
        depends on the task and the conversation only."""
        return p.as_user_message(self._send(p.user_reply(episode, messages)))

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
        return self._drive(self._delete(episode, missing_ok))

    @contextmanager
    def episode(self, world: str | None = None, **options: Unpack[EpisodeOptions]) -> Iterator[EpisodeInfo]:
        """`create(...)`, deleted when the block ends."""
        info = self.create(world, **options)
        try:
            yield info
        finally:
            self.delete(info, missing_ok=True)

    def create_group(self, size: int, world: str | None = None, **options: Unpack[EpisodeOptions]) -> list[EpisodeInfo]:
        """`size` episodes of the same start state (a GRPO group: one `task`, or the world at one
        seed and scale), each with its own id, made in one request, all or none (the server
        caps a group: 64 episodes by default)."""
        return _as_group(self._send(_group(size, world, options)))

    def rollout_group(
        self,
        task: str,
        size: int,
        agent: Callable[[Client, EpisodeInfo], AgentResult],
        *,
        world: str | None = None,
        faults: Faults = None,
    ) -> list[Verdict]:
        """A group of `size` episodes of `task` (`create_group`), `agent(client, episode)` run on
        each in turn, each verified with what its agent returned (the final answer, or (answer,
        messages)); the verdicts in the group's order. The episodes are deleted afterwards,
        also when an agent raises."""
        group = self.create_group(size, world, task=task, faults=faults)
        try:
            return [self.verify(episode, *_graded(agent(self, episode))) for episode in group]
        finally:
            for episode in group:
                self.delete(episode, missing_ok=True)

    def run_job(self, tasks: list[str] | None = None, **options: Unpack[_JobOptions]) -> Iterator[dict[str, Any]]:
        """POST /jobs: the server runs `trials` rollouts of each of `tasks` (None: the `split`'s,
        else every task of `world`) with a built-in `agent` (oracle, noop, random, or openai:MODEL
        against the endpoint its operator configured); yields each rollout's result as it comes
        (task, trial, termination, reward, ...), the last one the summary (`"done": True`). Not
        retried once sent; `rollout_timeout`: seconds per rollout (the server's default 300)."""
        request, wait = _job(tasks, options)
        try:
            with self._http.stream("POST", request.path, json=request.json, timeout=wait) as response:
                if response.status_code >= 400:
                    response.read()
                    p.check(request, response)
                for line in response.iter_lines():
                    if (result := _job_line(line)) is not None:
                        yield result
        except httpx.TransportError as exc:
            raise p.transport_failed(request, exc, 1) from exc

    # -- MCP --------------------------------------------------------------------------------------

    def tools(self, episode: Episode) -> list[Tool]:
        """The episode's tools (MCP tools/list)."""
        return [Tool.from_json(t) for t in self._drive(self._rpc(episode, "tools/list", {}))["tools"]]

    def call_tool(self, episode: Episode, name: str, arguments: dict[str, Any] | None = None) -> ToolResult:
        """Call a tool of the episode (MCP tools/call), as an agent would."""
        return p.as_tool_result(
            self._drive(self._rpc(episode, "tools/call", {"name": name, "arguments": arguments or {}}))
        )

    def policy(self, episode: Episode) -> str:
        """The world's policy (the MCP server's instructions), which agents get as their system prompt."""
        return self._drive(self._policy(episode))


class AsyncClient(_Core):
    """The same as `Client`, awaited."""

    _http: httpx.AsyncClient

    def _connect(self, options: dict[str, Any]) -> httpx.AsyncClient:
        return httpx.AsyncClient(**options)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _drive(self, exchange: Exchange[T]) -> T:
        step, value = self._advance(exchange, None)
        while step is not None:
            step, value = self._advance(exchange, await self._perform(step))
        return cast(T, value)

    async def _perform(self, step: Step) -> Outcome:
        if not isinstance(step, p.Request):
            await anyio.sleep(step)
            return None
        try:
            return await self._http.request(step.method, step.path, **step.kwargs())
        except httpx.TransportError as exc:
            return exc

    async def _send(self, request: p.Request) -> httpx.Response:
        return await self._drive(self._exchange(request))

    async def health(self) -> dict[str, Any]:
        return (await self._send(p.health())).json()

    async def worlds(self) -> list[dict[str, Any]]:
        return (await self._send(p.worlds())).json()

    async def tasks(self, world: str) -> list[TaskInfo]:
        return [TaskInfo.from_json(t) for t in (await self._send(p.tasks(world))).json()]

    async def create(self, world: str | None = None, **options: Unpack[EpisodeOptions]) -> EpisodeInfo:
        return p.as_episode(await self._send(p.create(world, **options)))

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

    async def user_reply(self, episode: Episode, messages: list[dict[str, Any]]) -> str | None:
        return p.as_user_message(await self._send(p.user_reply(episode, messages)))

    async def snapshot(self, episode: Episode) -> bytes:
        return (await self._send(p.snapshot(episode))).content

    async def restore(self, data: bytes) -> EpisodeInfo:
        return p.as_episode(await self._send(p.restore(data)))

    async def trajectory(self, episode: Episode) -> dict[str, Any]:
        return (await self._send(p.trajectory(episode))).json()

    async def delete(self, episode: Episode, *, missing_ok: bool = False) -> bool:
        return await self._drive(self._delete(episode, missing_ok))

    @asynccontextmanager
    async def episode(self, world: str | None = None, **options: Unpack[EpisodeOptions]) -> AsyncIterator[EpisodeInfo]:
        info = await self.create(world, **options)
        try:
            yield info
        finally:
            with anyio.CancelScope(shield=True):
                await self.delete(info, missing_ok=True)

    async def create_group(
        self, size: int, world: str | None = None, **options: Unpack[EpisodeOptions]
    ) -> list[EpisodeInfo]:
        return _as_group(await self._send(_group(size, world, options)))

    async def rollout_group(
        self,
        task: str,
        size: int,
        agent: Callable[[AsyncClient, EpisodeInfo], Awaitable[AgentResult]],
        *,
        world: str | None = None,
        faults: Faults = None,
        concurrency: int | None = None,
    ) -> list[Verdict]:
        """As `Client.rollout_group`, the agents run at once (at most `concurrency` at a time;
        None: the whole group)."""
        group = await self.create_group(size, world, task=task, faults=faults)
        limiter = anyio.CapacityLimiter(concurrency or size)
        verdicts: list[Verdict | None] = [None] * size

        async def roll(index: int, episode: EpisodeInfo) -> None:
            async with limiter:
                verdicts[index] = await self.verify(episode, *_graded(await agent(self, episode)))

        try:
            async with anyio.create_task_group() as tasks:
                for index, episode in enumerate(group):
                    tasks.start_soon(roll, index, episode)
        finally:
            with anyio.CancelScope(shield=True):
                for episode in group:
                    await self.delete(episode, missing_ok=True)
        return [v for v in verdicts if v is not None]

    async def run_job(
        self, tasks: list[str] | None = None, **options: Unpack[_JobOptions]
    ) -> AsyncIterator[dict[str, Any]]:
        """As `Client.run_job`, iterated with `async for`."""
        request, wait = _job(tasks, options)
        try:
            async with self._http.stream("POST", request.path, json=request.json, timeout=wait) as response:
                if response.status_code >= 400:
                    await response.aread()
                    p.check(request, response)
                async for line in response.aiter_lines():
                    if (result := _job_line(line)) is not None:
                        yield result
        except httpx.TransportError as exc:
            raise p.transport_failed(request, exc, 1) from exc

    async def tools(self, episode: Episode) -> list[Tool]:
        return [Tool.from_json(t) for t in (await self._drive(self._rpc(episode, "tools/list", {})))["tools"]]

    async def call_tool(self, episode: Episode, name: str, arguments: dict[str, Any] | None = None) -> ToolResult:
        call = self._rpc(episode, "tools/call", {"name": name, "arguments": arguments or {}})
        return p.as_tool_result(await self._drive(call))

    async def policy(self, episode: Episode) -> str:
        return await self._drive(self._policy(episode))
