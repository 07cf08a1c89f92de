"""Where episodes live while an agent acts: in this process (the default; MCP in memory), on an
mcpsim HTTP server (the control plane plus the episode's own MCP URL), or in one `mcpsim serve`
subprocess per episode over stdio. Agents only ever talk MCP; the backend does the rest."""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Protocol, cast

import anyio
import httpx
import structlog
from mcp import Client, StdioServerParameters
from mcp.types import ListToolsResult, RequestParamsMeta

# serve's names load on first use (its `__init__`, PEP 562): `mcpsim --help` imports the runner, not the server
from mcpsim import serve
from mcpsim.engine import Episode, FaultProfile
from mcpsim.grading import GradingUnavailable, Verdict, VerdictSummary, load_verdict
from mcpsim.runner._outputs import checked_first
from mcpsim.serve import off_the_loop
from mcpsim.tasks import Task
from mcpsim.trajectories import Trajectory, episode_trajectory

log = structlog.get_logger("mcpsim.runner")


class BackendError(RuntimeError):
    pass


class GradingFailed(BackendError):
    """Grading could not finish (the grader stalled): an infrastructure error, not a verdict.
    The runner retries it."""


@dataclass
class Outcome:
    verdict: Verdict | VerdictSummary  # a summary when the server shows no more
    record: Trajectory  # the server's view: every call with its row changes


class LiveEpisode(Protocol):
    @property
    def id(self) -> str: ...

    async def policy(self) -> str: ...

    async def list_tools(self) -> list[Any]: ...

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any: ...

    async def finish(self, answer: str | None, conversation: list[dict[str, Any]] | None = None) -> Outcome:
        """End the episode, grade it (on the final answer and, for checks on the dialogue, the
        conversation as OpenAI-style message dicts), and return the verdict and the server's record."""
        ...

    async def suspend(self) -> bytes:
        """Stop here and return the episode's snapshot, to resume in a later run."""
        ...


class Backend(Protocol):
    name: str

    def episode(
        self, world: str, task: Task, snapshot: bytes | None, faults: FaultProfile | None = None
    ) -> AbstractAsyncContextManager[LiveEpisode]:
        """An episode of `task` (or resumed from `snapshot`), with `faults` instead of the task's
        own profile when given."""
        ...


_VALIDATORS: dict[str, Any] = {}  # an output schema (canonical JSON) -> its compiled validator
MAX_SHARED_VALIDATORS = 10_000  # distinct output schemas kept (every tool of many worlds)


def share_validators(client: Client) -> Client:
    """Let this client reuse the output-schema validators every client of the process compiled.

    The SDK client checks a tool's output schema against the JSON Schema metaschema and compiles
    a validator the first time the tool is called, once per client session, and the runner opens
    a client per episode: that check was most of a graded episode's CPU. A compiled validator is
    immutable and depends only on the schema, so one per distinct schema serves every session
    (the result is still validated on every call, first by the fast checks of
    `runner/_outputs.py`, then by the SDK's validator unless they say yes). Relies on
    `ClientSession._output_schema_validator` and `_tool_output_validators` (mcp 2.3); with an SDK
    without them, the client is left as it is."""
    session = client.session
    compile_validator = getattr(session, "_output_schema_validator", None)
    if compile_validator is None or not isinstance(getattr(session, "_tool_output_validators", None), dict):
        return client

    def shared(name: str, schema: dict[str, Any]) -> Any:
        own = session._tool_output_validators  # replaced, not updated, when tools are listed again
        if (validator := own.get(name)) is not None:
            return validator
        key = json.dumps(schema, sort_keys=True)
        validator = _VALIDATORS.get(key)
        if validator is None:
            # the metaschema check, once per schema per process; a fast yes in front (_outputs)
            validator = checked_first(compile_validator(name, schema), schema)
            if len(_VALIDATORS) >= MAX_SHARED_VALIDATORS:
                _VALIDATORS.clear()
            _VALIDATORS[key] = validator
        own[name] = validator
        return validator

    session._output_schema_validator = shared  # type: ignore[method-assign,assignment]
    return client


class _Listings:
    """One tools/list per world per backend, handed to every episode's client: a world's tools
    are fixed for its version (a run's), and listing them again for each episode's new client
    (the server serializing every schema, the client validating them, or the SDK's response
    cache deep-copying them) cost more than an oracle episode's tool calls. Each client still
    absorbs the listing, so it validates structured results against the output schemas as
    before. Relies on `ClientSession._absorb_tool_listing` (mcp 2.3); without it, each client
    lists the tools itself."""

    def __init__(self) -> None:
        self._results: dict[str, ListToolsResult] = {}

    async def tools(self, client: Client, key: str) -> list[Any]:
        absorb = getattr(client.session, "_absorb_tool_listing", None)
        listing = self._results.get(key)
        if listing is None or absorb is None:
            result = await client.list_tools()
            self._results[key] = result.model_copy(update={"tools": list(result.tools)})
            return result.tools
        absorbed: ListToolsResult = absorb(listing.model_copy(update={"tools": list(listing.tools)}), complete=True)
        return absorbed.tools


async def _policy(client: Client, world: str) -> str:
    if client.instructions:
        return client.instructions
    result = await client.read_resource(f"mcpsim://{world}/policy")
    return "".join(getattr(c, "text", "") for c in result.contents)


# -- in process ---------------------------------------------------------------------------------


class InProcessBackend:
    """Episodes in this process's EpisodeManager, one in-memory MCP server per world; each call
    names its episode in the request's `_meta`."""

    name = "in-process"

    def __init__(self, manager: Any) -> None:
        self.manager = manager
        self._servers: dict[str, Any] = {}
        self._build_server = serve.build_server
        self._listings = _Listings()

    def _server(self, world: str) -> Any:
        if world not in self._servers:
            self._servers[world] = self._build_server(self.manager.worlds(world), self.manager.get)
        return self._servers[world]

    @asynccontextmanager
    async def episode(
        self, world: str, task: Task, snapshot: bytes | None, faults: FaultProfile | None = None
    ) -> AsyncIterator[LiveEpisode]:
        if snapshot is None:
            episode = await off_the_loop(
                partial(
                    self.manager.create, world, task.seed, task.scale, task.id, faults if faults is not None else "task"
                )
            )
        else:
            episode = self.manager.add(Episode.restore(self.manager.worlds(world), snapshot))
        try:
            async with Client(self._server(world)) as client:
                yield _InProcessEpisode(self.manager, episode, share_validators(client), world, self._listings)
        finally:
            self.manager.delete(episode.id)


@dataclass
class _InProcessEpisode:
    manager: Any
    episode: Any
    client: Client
    world: str
    listings: _Listings

    @property
    def id(self) -> str:
        return self.episode.id

    async def policy(self) -> str:
        return await _policy(self.client, self.world)

    async def list_tools(self) -> list[Any]:
        return await self.listings.tools(self.client, self.world)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        meta = cast(RequestParamsMeta, {serve.META_EPISODE: self.episode.id})  # a key of ours, beside the SDK's own
        return await self.client.call_tool(name, arguments, meta=meta)

    async def finish(self, answer: str | None, conversation: list[dict[str, Any]] | None = None) -> Outcome:
        verifier = self.manager.verifier(self.world)
        try:
            # one lane for all of a run's work (a run is one tenant: a slow grade holds up only its
            # own run, and one thread contends least for the GIL); the server keeps grading apart
            verdict = await off_the_loop(
                lambda: verifier.grade(self.episode, self.episode.task_id, answer, conversation=conversation)
            )
        except GradingUnavailable as exc:
            raise GradingFailed(str(exc)) from exc
        record = await off_the_loop(lambda: episode_trajectory(self.episode, verdict=self.episode.verdict))
        return Outcome(verdict, record)

    async def suspend(self) -> bytes:
        return await off_the_loop(self.episode.snapshot)


# -- HTTP ---------------------------------------------------------------------------------------


IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "DELETE"})
RESETS = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)  # the connection dropped under a request
RESET_RETRIES = 2
RESET_BACKOFF_S = 0.05  # times the attempt number


class HttpBackend:
    """An mcpsim HTTP server: episodes through its control plane, tools through their MCP URLs."""

    name = "http"

    def __init__(self, base_url: str, token: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        # uvicorn closes a keep-alive connection after 5 s idle, and httpx keeps one for 5 s: a
        # control-plane request sent on a connection the server is closing at that moment fails
        # with ReadError (seen under load on POST /verify, after a rollout left the connection
        # idle). Expire idle connections well before the server does.
        self.http = httpx.AsyncClient(
            base_url=self.base_url, headers=headers, timeout=120, limits=httpx.Limits(keepalive_expiry=2.0)
        )
        self._listings = _Listings()

    async def aclose(self) -> None:
        await self.http.aclose()

    async def _request(self, method: str, path: str, **kw: Any) -> httpx.Response:
        """One control-plane request. A keep-alive connection reset under the request (the
        server closed an idle connection as the request went out: RemoteProtocolError, or
        ReadError/WriteError) is retried, up to RESET_RETRIES times, for requests that may safely
        be sent twice: GET, DELETE, and POST .../verify (a verdict is final: a second verify
        returns the first). Other POSTs (create, restore, fork, end) may have been applied, and
        are never retried."""
        retry = method in IDEMPOTENT_METHODS or (method == "POST" and path.endswith("/verify"))
        for attempt in range(RESET_RETRIES + 1):
            try:
                return await self.http.request(method, path, **kw)
            except RESETS as exc:
                if not retry or attempt == RESET_RETRIES:
                    raise
                log.warning(
                    "connection reset; retrying",
                    method=method,
                    path=path,
                    attempt=attempt + 1,
                    error=type(exc).__name__,
                )
                await anyio.sleep(RESET_BACKOFF_S * (attempt + 1))
        raise AssertionError("unreachable")

    async def _json(self, method: str, path: str, **kw: Any) -> Any:
        try:
            response = await self._request(method, path, **kw)
        except httpx.TransportError as exc:
            raise BackendError(f"{method} {self.base_url}{path}: {exc}") from exc
        if response.status_code == 503 and path.endswith("/verify"):
            raise GradingFailed(f"{method} {path}: HTTP 503: {response.text[:300]}")
        if response.status_code >= 400:
            raise BackendError(f"{method} {path}: HTTP {response.status_code}: {response.text[:300]}")
        return (
            response.json()
            if response.content and response.headers.get("content-type", "").startswith("application/json")
            else response.content
        )

    @asynccontextmanager
    async def episode(
        self, world: str, task: Task, snapshot: bytes | None, faults: FaultProfile | None = None
    ) -> AsyncIterator[LiveEpisode]:
        if snapshot is None:
            body: dict[str, Any] = {"world": world, "task": task.id}
            if faults is not None:
                body["faults"] = faults.model_dump(mode="json")
            info = await self._json("POST", "/episodes", json=body)
        else:
            info = await self._json(
                "POST", "/episodes/restore", content=snapshot, headers={"Content-Type": "application/vnd.sqlite3"}
            )
        try:
            async with Client(info["mcp_url"]) as client:
                yield _HttpEpisode(self, info["id"], share_validators(client), world)
        finally:
            try:
                await self._request("DELETE", f"/episodes/{info['id']}")
            except httpx.TransportError:
                pass


@dataclass
class _HttpEpisode:
    backend: HttpBackend
    id: str
    client: Client
    world: str

    async def policy(self) -> str:
        return await _policy(self.client, self.world)

    async def list_tools(self) -> list[Any]:
        # every episode of a world on this server lists the same tools (one MCP server per world)
        return await self.backend._listings.tools(self.client, self.world)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        return await self.client.call_tool(name, arguments)

    async def finish(self, answer: str | None, conversation: list[dict[str, Any]] | None = None) -> Outcome:
        body = {"answer": answer, "messages": conversation}
        verdict = await self.backend._json("POST", f"/episodes/{self.id}/verify", json=body)
        record = await self.backend._json("GET", f"/episodes/{self.id}/trajectory")
        return Outcome(load_verdict(verdict), Trajectory.model_validate(record))

    async def suspend(self) -> bytes:
        return await self.backend._json("GET", f"/episodes/{self.id}/snapshot")

    async def user_reply(self, conversation: list[dict[str, Any]]) -> str | None:
        """The server's scripted user's next message after `conversation` (OpenAI-style
        message dicts), from the task this episode was created for; None when it is done."""
        said = await self.backend._json("POST", f"/episodes/{self.id}/user", json={"messages": conversation})
        if not isinstance(said, dict) or not isinstance(said.get("message"), str | None):
            raise BackendError(f"POST /episodes/{self.id}/user: not a user turn: {str(said)[:300]}")
        return said["message"]


# -- stdio --------------------------------------------------------------------------------------


class StdioBackend:
    """One `mcpsim serve WORLD --task ID` subprocess per episode, as a desktop client would run
    it; when the client hangs up, the server writes its database, which `mcpsim verify` grades."""

    name = "stdio"

    def __init__(self, command: list[str] | None = None, *, world_args: list[str] | None = None) -> None:
        self.command = command or [sys.executable, "-m", "mcpsim"]
        self.world_args = world_args or []  # options that load the world in the server (`--world-spec FILE`)

    @asynccontextmanager
    async def episode(
        self, world: str, task: Task, snapshot: bytes | None, faults: FaultProfile | None = None
    ) -> AsyncIterator[LiveEpisode]:
        with tempfile.TemporaryDirectory(prefix="mcpsim-stdio-") as tmp:
            folder = Path(tmp)
            args = [
                "serve",
                world,
                "--task",
                task.id,
                "--exit-snapshot",
                str(folder / "final.sqlite"),
                "--log-level",
                "WARNING",
                *self.world_args,
            ]
            if faults is not None:
                (folder / "faults.yaml").write_text(json.dumps(faults.model_dump(mode="json")))
                args += ["--faults", str(folder / "faults.yaml")]
            if snapshot is not None:
                (folder / "start.sqlite").write_bytes(snapshot)
                args += ["--snapshot", str(folder / "start.sqlite")]
            live = _StdioEpisode(self, world, task, folder, args)
            try:
                yield live
            finally:
                await live.close()


class _StdioEpisode:
    def __init__(self, backend: StdioBackend, world: str, task: Task, folder: Path, args: list[str]) -> None:
        self.backend, self.world, self.task, self.folder = backend, world, task, folder
        self.id = f"stdio-{task.id}"
        params = StdioServerParameters(command=backend.command[0], args=[*backend.command[1:], *args])
        self._cm: Any = Client(params)
        self._client: Client | None = None

    async def _open(self) -> Client:
        if self._client is None:
            self._client = share_validators(await self._cm.__aenter__())
        return self._client

    async def close(self) -> None:
        if self._client is not None:
            self._client = None
            await self._cm.__aexit__(None, None, None)

    async def policy(self) -> str:
        return await _policy(await self._open(), self.world)

    async def list_tools(self) -> list[Any]:
        return (await (await self._open()).list_tools()).tools

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        return await (await self._open()).call_tool(name, arguments)

    async def _final_snapshot(self) -> Path:
        await self._open()
        await self.close()  # the server writes its database as it exits
        path = self.folder / "final.sqlite"
        if not path.exists():
            raise BackendError("the stdio server exited without writing its database")
        return path

    async def finish(self, answer: str | None, conversation: list[dict[str, Any]] | None = None) -> Outcome:
        path = self.folder / "final.sqlite"
        if not path.exists():  # a retried grading reuses the database the server wrote
            path = await self._final_snapshot()
        record_path = self.folder / "record.json"
        command = [
            *self.backend.command,
            "verify",
            self.world,
            "--task",
            self.task.id,
            "--snapshot",
            str(path),
            "--answer-file",
            "-",
            "--json",
            "--record",
            str(record_path),
            *self.backend.world_args,
        ]
        if conversation is not None:
            (self.folder / "conversation.json").write_text(json.dumps(conversation))
            command += ["--conversation", str(self.folder / "conversation.json")]
        result = await anyio.run_process(command, input=(answer or "").encode(), check=False)
        if result.returncode == 3:  # grading stalled: retry (the database stays written)
            raise GradingFailed(f"mcpsim verify could not finish: {result.stderr.decode()[-500:]}")
        if result.returncode not in (0, 1):
            raise BackendError(f"mcpsim verify failed: {result.stderr.decode()[-500:]}")
        return Outcome(load_verdict(json.loads(result.stdout)), Trajectory.model_validate_json(record_path.read_text()))

    async def suspend(self) -> bytes:
        return (await self._final_snapshot()).read_bytes()
