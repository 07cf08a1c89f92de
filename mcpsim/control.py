"""The control plane: plain HTTP JSON for harnesses, beside the MCP endpoints and never part of
them. Create, inspect, verify, snapshot, restore, fork and delete episodes; optionally behind a
bearer token that agents never see."""

from __future__ import annotations

import hmac
import json
import sqlite3
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.to_thread
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpsim import __version__
from mcpsim.episode import Episode, snapshot_world
from mcpsim.faults import FaultProfile, load_profile
from mcpsim.manager import EpisodeLimitReached, EpisodeManager
from mcpsim.recording import episode_trajectory
from mcpsim.scenario import GoldActionError, TaskSetupError
from mcpsim.tasks import TaskFileError
from mcpsim.verifier import GradingUnavailable
from mcpsim.world import World

MAX_BODY_BYTES = 64 * 1024
MAX_SNAPSHOT_BYTES = 1024 * 1024 * 1024


class CreateEpisode(BaseModel):
    model_config = ConfigDict(extra="forbid")
    world: str | None = Field(None, max_length=64, description="World name; the server's default world if omitted")
    seed: int | None = Field(None, ge=0, le=2**63 - 1, description="Default 0; a task brings its own")
    scale: str | None = Field(None, max_length=32, description="Default 'default'; a task brings its own")
    task: str | None = Field(None, max_length=100, description="A task id: its seed, scale and setup are used")
    faults: str | dict[str, Any] | None = Field(
        None, description="A fault profile: none, flaky, hostile, or one written inline; default: the task's, "
                          "else the server's --faults")


class VerifyEpisode(BaseModel):
    model_config = ConfigDict(extra="forbid")
    answer: str | None = Field(None, max_length=100_000, description="The agent's final answer to the user")
    messages: list[dict[str, Any]] | None = Field(
        None, max_length=10_000, description="The conversation (OpenAI-style messages: role, content, tool_calls, "
                                             "tool_call_id), for checks on the dialogue such as a confirmation")


class HttpError(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers


def _error(status: int, message: str, headers: dict[str, str] | None = None, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": message, **extra}, status_code=status, headers=headers)



Handler = Callable[[Request], Awaitable[Response]]


class ControlPlane:
    """The control-plane routes over one EpisodeManager and the worlds a server hosts."""

    def __init__(self, worlds: list[World], manager: EpisodeManager, *, token: str | None = None,
                 faults: FaultProfile | None = None) -> None:
        self.worlds = {w.name: w for w in worlds}
        self.manager = manager
        self.token = token
        self.faults = faults  # for episodes created without a profile of their own
        manager.worlds = self.lookup

    def lookup(self, name: str) -> World:
        try:
            return self.worlds[name]
        except KeyError:
            raise LookupError(f"unknown world {name!r} (this server has: {', '.join(sorted(self.worlds))})") from None

    def authorized(self, request: Request) -> bool:
        if self.token is None:
            return True
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), self.token.encode())

    def guarded(self, handler: Handler) -> Handler:
        """The token check, and HttpError turned into a JSON answer."""

        async def endpoint(request: Request) -> Response:
            if not self.authorized(request):
                return _error(401, "missing or wrong bearer token", {"WWW-Authenticate": "Bearer"})
            try:
                return await handler(request)
            except HttpError as exc:
                return _error(exc.status, exc.message, exc.headers)

        return endpoint

    def routes(self) -> list[Route]:
        g = self.guarded
        return [
            Route("/health", self.health, methods=["GET"]),
            Route("/worlds", g(self.list_worlds), methods=["GET"]),
            Route("/episodes", g(self.create_episode), methods=["POST"]),
            Route("/episodes", g(self.list_episodes), methods=["GET"]),
            Route("/episodes/restore", g(self.restore_episode), methods=["POST"]),
            Route("/episodes/{episode_id}", g(self.get_episode), methods=["GET"]),
            Route("/episodes/{episode_id}", g(self.delete_episode), methods=["DELETE"]),
            Route("/episodes/{episode_id}/state", g(self.get_state), methods=["GET"]),
            Route("/episodes/{episode_id}/changes", g(self.get_changes), methods=["GET"]),
            Route("/episodes/{episode_id}/end", g(self.end_episode), methods=["POST"]),
            Route("/episodes/{episode_id}/fork", g(self.fork_episode), methods=["POST"]),
            Route("/episodes/{episode_id}/verify", g(self.verify_episode), methods=["POST"]),
            Route("/episodes/{episode_id}/snapshot", g(self.snapshot_episode), methods=["GET"]),
            Route("/episodes/{episode_id}/trajectory", g(self.trajectory), methods=["GET"]),
        ]

    def episode_of(self, request: Request) -> Episode:
        try:
            return self.manager.get(request.path_params["episode_id"])
        except LookupError as exc:
            raise HttpError(404, str(exc)) from None

    def mcp_url(self, request: Request, episode: Episode) -> str:
        return f"{str(request.base_url).rstrip('/')}/episodes/{episode.id}/mcp"

    def describe(self, request: Request, episode: Episode) -> dict[str, Any]:
        return {
            "id": episode.id,
            "mcp_url": self.mcp_url(request, episode),
            "world": episode.world.name,
            "world_version": episode.template_version,
            "seed": episode.seed,
            "scale": episode.scale,
            "task": episode.task_id,
            "faults": episode.faults.name if episode.faults else None,
            "calls": episode.calls,
            "clock": episode.clock().isoformat(),
            "ended": episode.ended,
            "flagged": episode.flagged,
            "flags": episode.flags,
        }

    async def read_json(self, request: Request) -> Any:
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY_BYTES:
                raise HttpError(413, f"request body larger than {MAX_BODY_BYTES} bytes")
        if not body:
            return {}
        try:
            return json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise HttpError(400, f"request body is not valid JSON: {exc}") from None

    async def health(self, request: Request) -> Response:
        return JSONResponse({"status": "ok", "version": __version__, "episodes": len(self.manager),
                             "max_episodes": self.manager.max_episodes, "worlds": sorted(self.worlds)})

    async def list_worlds(self, request: Request) -> Response:
        return JSONResponse([{"name": w.name, "title": w.title, "version": w.version, "tools": len(w.tools),
                              "scales": sorted(w.scales)} for w in self.worlds.values()])

    async def create_episode(self, request: Request) -> Response:
        body = await self.read_json(request)
        if not isinstance(body, dict):
            raise HttpError(400, "request body must be a JSON object such as {\"world\": \"retail\", \"seed\": 0}")
        try:
            spec = CreateEpisode.model_validate(body)
        except ValidationError as exc:
            return _error(422, "invalid episode request", details=json.loads(exc.json(include_url=False)))
        world_name = spec.world or (self.manager.default.world.name if self.manager.default else None)
        if world_name is None:
            raise HttpError(422, "no world given and this server has no default world")
        try:
            world = self.lookup(world_name)
            if spec.task is not None:
                task = self.manager.verifier(world.name).tasks.get(spec.task)
                for name, given, own in (("seed", spec.seed, task.seed), ("scale", spec.scale, task.scale)):
                    if given is not None and given != own:
                        raise ValueError(f"task {task.id} runs at {name} {own!r}; leave {name} out or give {own!r}")
            else:
                world.scale_params(spec.scale or "default")
            profile: Any = load_profile(spec.faults) if spec.faults is not None else (
                "task" if spec.task is not None and self.faults is None else self.faults)
            if profile is not None and profile != "task" and profile.edge_data and not world.has_edge_data:
                raise ValueError(f"world {world.name} has no edge-case data for the profile's edge_data")
        except (LookupError, ValueError, TaskFileError) as exc:
            raise HttpError(422, str(exc).strip("'\"")) from None
        try:
            episode = await anyio.to_thread.run_sync(
                self.manager.create, world.name, spec.seed or 0, spec.scale or "default", spec.task, profile)
        except EpisodeLimitReached as exc:
            raise HttpError(503, str(exc), {"Retry-After": "5"}) from None
        except (TaskSetupError, GoldActionError) as exc:
            raise HttpError(500, f"the task is broken: {exc}") from None
        return JSONResponse(self.describe(request, episode), status_code=201)

    async def list_episodes(self, request: Request) -> Response:
        return JSONResponse([self.describe(request, e) for e in self.manager.list()])

    async def get_episode(self, request: Request) -> Response:
        return JSONResponse(self.describe(request, self.episode_of(request)))

    async def delete_episode(self, request: Request) -> Response:
        episode_id = request.path_params["episode_id"]
        if not self.manager.delete(episode_id):
            raise HttpError(404, f"episode {episode_id} does not exist (it was deleted or expired)")
        return Response(status_code=204)

    async def get_state(self, request: Request) -> Response:
        episode = self.episode_of(request)
        names = request.query_params.get("tables")
        wanted = [n for n in names.split(",") if n] if names else None
        known = {t.name for t in episode.world.metadata.sorted_tables}
        if wanted and (unknown := sorted(set(wanted) - known)):
            raise HttpError(422, f"unknown tables {unknown}; this world has {sorted(known)}")
        limit_text = request.query_params.get("limit")
        try:
            limit = int(limit_text) if limit_text is not None else None
            if limit is not None and limit < 0:
                raise ValueError
        except ValueError:
            raise HttpError(422, "limit must be a non-negative integer") from None
        tables, state_hash = await anyio.to_thread.run_sync(
            lambda: (episode.tables(wanted, limit), episode.state_hash())
        )
        return JSONResponse({"id": episode.id, "world": episode.world.name, "world_version": episode.template_version,
                             "state_hash": state_hash, "tables": tables})

    async def get_changes(self, request: Request) -> Response:
        episode = self.episode_of(request)
        return JSONResponse({"id": episode.id, "changes": [c._asdict() for c in episode.changes()]})

    async def end_episode(self, request: Request) -> Response:
        episode = self.episode_of(request)
        episode.end()
        return JSONResponse(self.describe(request, episode))

    async def verify_episode(self, request: Request) -> Response:
        episode = self.episode_of(request)
        body = await self.read_json(request)
        try:
            spec = VerifyEpisode.model_validate(body)
        except ValidationError as exc:
            return _error(422, "invalid verify request", details=json.loads(exc.json(include_url=False)))
        if episode.task_id is None:
            raise HttpError(422, "this episode was not created for a task (POST /episodes with \"task\"); "
                                 "there is no rubric to grade it against")
        verifier = self.manager.verifier(episode.world.name)
        try:
            verdict = await anyio.to_thread.run_sync(
                lambda: verifier.grade(episode, episode.task_id, spec.answer, conversation=spec.messages))
        except GradingUnavailable as exc:  # not a verdict: the caller retries
            return _error(503, str(exc), headers={"Retry-After": "5"})
        return JSONResponse(verdict.model_dump(mode="json"))

    async def snapshot_episode(self, request: Request) -> Response:
        episode = self.episode_of(request)
        data = await anyio.to_thread.run_sync(episode.snapshot)
        return Response(data, media_type="application/vnd.sqlite3",
                        headers={"Content-Disposition": f'attachment; filename="{episode.id}.sqlite"'})

    async def trajectory(self, request: Request) -> Response:
        episode = self.episode_of(request)
        trajectory = await anyio.to_thread.run_sync(lambda: episode_trajectory(episode, verdict=episode.verdict))
        return JSONResponse(trajectory.model_dump(mode="json"))

    async def restore_episode(self, request: Request) -> Response:
        """A new episode from a snapshot's bytes (GET /episodes/{id}/snapshot), e.g. to resume a
        partial rollout."""
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/vnd.sqlite3":
            raise HttpError(415, "send the snapshot's bytes with Content-Type: application/vnd.sqlite3")
        data = b""
        async for chunk in request.stream():
            data += chunk
            if len(data) > MAX_SNAPSHOT_BYTES:
                raise HttpError(413, f"snapshot larger than {MAX_SNAPSHOT_BYTES} bytes")
        try:
            world_name = snapshot_world(data)
            episode = Episode.restore(self.lookup(world_name), data)
        except (ValueError, LookupError, sqlite3.Error) as exc:
            raise HttpError(422, f"not an mcpsim episode of a world this server has: {exc}") from None
        try:
            self.manager.add(episode)
        except EpisodeLimitReached as exc:
            episode.close()
            raise HttpError(503, str(exc), {"Retry-After": "5"}) from None
        return JSONResponse(self.describe(request, episode), status_code=201)

    async def fork_episode(self, request: Request) -> Response:
        source = self.episode_of(request)
        try:
            episode = self.manager.add(source.fork())
        except EpisodeLimitReached as exc:
            raise HttpError(503, str(exc), {"Retry-After": "5"}) from None
        return JSONResponse(self.describe(request, episode), status_code=201)
