"""The control plane: plain HTTP JSON for harnesses, beside the MCP endpoints and never part of
them. Create, inspect, verify, snapshot, restore, fork and delete episodes; behind a bearer
token that agents never see (unless the operator opens it with --no-auth), and behind the Host
and Origin check of `mcpsim.serve._access` like every route."""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpsim import __version__
from mcpsim.engine import (
    Episode,
    EpisodeClosed,
    FaultProfile,
    IsoDatetime,
    SnapshotError,
    load_untrusted,
    profile_from_request,
    sign_episode,
)
from mcpsim.serve._access import VERDICT_DETAILS, VerdictDetail, normalize_public_url, socket_base_url
from mcpsim.serve._host import EpisodeLimitReached, EpisodeManager
from mcpsim.serve._jobs import JobRunner, job_response
from mcpsim.serve._requests import (
    MAX_BODY_BYTES,
    MAX_GROUP,
    CreateEpisode,
    HttpError,
    _error,
    parse_json,
    read_body,
    validated,
)
from mcpsim.serve._roles import attributed_changes, role_agents
from mcpsim.serve._task_routes import TaskRoutes
from mcpsim.serve._work import off_the_loop
from mcpsim.tasks import GoldActionError, TaskFileError, TaskSetupError
from mcpsim.world import World

MAX_SNAPSHOT_BYTES = 512 * 1024 * 1024  # restore uploads (ControlPlane.max_snapshot_bytes)


class EpisodeInfo(BaseModel):
    """What the control plane says about an episode: the answer to POST /episodes, GET
    /episodes/{id}, .../end, .../fork and POST /episodes/restore, and each item of GET /episodes."""

    model_config = ConfigDict(frozen=True)

    id: str
    mcp_url: str
    world: str
    world_version: str
    seed: int
    scale: str
    task: str | None
    faults: str | None  # the fault profile's name
    calls: int  # every call so far: successful, refused (unknown tool, invalid arguments) and failed
    calls_ok: int  # of which succeeded (each one ticked the clock)
    calls_failed: int  # of which were refused or failed (a business error, a fault, a frozen episode)
    clock: IsoDatetime  # the virtual clock
    ended: bool
    flagged: bool  # the episode hit a simulator bug: it can never pass
    flags: list[str]

    @classmethod
    def of(cls, episode: Episode, mcp_url: str) -> EpisodeInfo:
        """From one read of the episode's metadata (EpisodeClosed if it was closed meanwhile)."""
        meta = episode.meta()
        calls, failed = episode.call_counts()
        return cls(
            id=episode.id,
            mcp_url=mcp_url,
            world=meta.world,
            world_version=meta.version,
            seed=meta.seed,
            scale=meta.scale,
            task=meta.task,
            faults=meta.faults.name if meta.faults else None,
            calls=calls,
            calls_ok=calls - failed,
            calls_failed=failed,
            clock=meta.clock,
            ended=meta.ended,
            flagged=bool(meta.flags),
            flags=list(meta.flags),
        )

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


Handler = Callable[[Request], Awaitable[Response]]


class ControlPlane:
    """The control-plane routes over one EpisodeManager and the worlds a server hosts."""

    faults_dirs: tuple[str, ...] = ()  # the operator's directories of named fault profiles (--faults-dir)
    snapshot_key: bytes | None = None  # signs snapshots (--snapshot-key); None: the process's generated key
    max_snapshot_bytes: int = MAX_SNAPSHOT_BYTES  # largest restore upload
    max_group: int = MAX_GROUP  # most episodes one POST /episodes creates ({"group": N})
    jobs: JobRunner | None = None  # runs POST /jobs (installed by the layer above: mcpsim.runner._jobs)

    def __init__(
        self,
        worlds: list[World],
        manager: EpisodeManager,
        *,
        token: str | None = None,
        no_auth: bool = False,
        faults: FaultProfile | None = None,
        public_url: str | None = None,
        verdict_detail: VerdictDetail | None = None,
        bind_host: str = "127.0.0.1",
    ) -> None:
        """Closed by default: every route but /health needs `token` as a bearer token; only an
        explicit `no_auth=True` opens it. `mcp_url`s are built from `public_url` (None: the address
        of the socket that accepted the request), never from the request's Host header.
        `verdict_detail`: what POST .../verify (and the trajectory) tell a caller; None: "full"
        behind a token (the caller is the operator's harness), "summary" without one."""
        if token is None and not no_auth:
            raise ValueError("the control plane needs a token, or no_auth=True to open it (local experiments)")
        if token is not None and no_auth:
            raise ValueError("give a control-plane token or no_auth=True, not both")
        if verdict_detail is not None and verdict_detail not in VERDICT_DETAILS:
            raise ValueError(f"verdict_detail must be one of {', '.join(VERDICT_DETAILS)}, not {verdict_detail!r}")
        self.worlds = {w.name: w for w in worlds}
        self.manager = manager
        self.token = token
        self.public_url = normalize_public_url(public_url) if public_url else None
        self.bind_host = bind_host
        self.verdict_detail: VerdictDetail = verdict_detail or ("full" if token is not None else "summary")
        self.tasks = TaskRoutes(
            manager, self.verdict_detail, lookup=self.lookup, episode_of=self.episode_of, read_json=self.read_json
        )
        self.faults = faults  # for episodes created without a profile of their own
        manager.worlds = self.lookup

    def lookup(self, name: str) -> World:
        try:
            return self.worlds[name]
        except KeyError:
            raise LookupError(f"unknown world {name!r} (this server has: {', '.join(sorted(self.worlds))})") from None

    def authorized(self, request: Request) -> bool:
        if self.token is None:  # no_auth: opened by the operator
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
                extra = {} if exc.details is None else {"details": exc.details}
                return _error(exc.status, exc.message, exc.headers, **extra)

        return endpoint

    def routes(self) -> list[Route]:
        def g(handler: Handler) -> Handler:
            return self.guarded(self.lifecycle(handler))

        return [
            Route("/health", self.health, methods=["GET"]),
            Route("/worlds", g(self.list_worlds), methods=["GET"]),
            Route("/worlds/{world}/tasks", g(self.tasks.list_tasks), methods=["GET"]),
            Route("/episodes", g(self.create_episode), methods=["POST"]),
            Route("/episodes", g(self.list_episodes), methods=["GET"]),
            Route("/jobs", g(self.run_job), methods=["POST"]),
            Route("/episodes/restore", g(self.restore_episode), methods=["POST"]),
            Route("/episodes/{episode_id}", g(self.get_episode), methods=["GET"]),
            Route("/episodes/{episode_id}", g(self.delete_episode), methods=["DELETE"]),
            Route("/episodes/{episode_id}/state", g(self.get_state), methods=["GET"]),
            Route("/episodes/{episode_id}/changes", g(self.get_changes), methods=["GET"]),
            Route("/episodes/{episode_id}/end", g(self.end_episode), methods=["POST"]),
            Route("/episodes/{episode_id}/fork", g(self.fork_episode), methods=["POST"]),
            Route("/episodes/{episode_id}/verify", g(self.tasks.verify_episode), methods=["POST"]),
            Route("/episodes/{episode_id}/user", g(self.tasks.user_turn), methods=["POST"]),
            Route("/episodes/{episode_id}/snapshot", g(self.snapshot_episode), methods=["GET"]),
            Route("/episodes/{episode_id}/trajectory", g(self.tasks.trajectory), methods=["GET"]),
        ]

    @staticmethod
    def lifecycle(handler: Handler) -> Handler:
        """An episode deleted or expired while a request on it was running: the operation was
        refused before touching its database (`EpisodeClosed`), answered 404 with the reason."""

        async def endpoint(request: Request) -> Response:
            try:
                return await handler(request)
            except EpisodeClosed as exc:
                raise HttpError(404, str(exc)) from None

        return endpoint

    def episode_of(self, request: Request) -> Episode:
        try:
            return self.manager.get(request.path_params["episode_id"])
        except LookupError as exc:
            raise HttpError(404, str(exc)) from None

    def mcp_url(self, request: Request, episode: Episode) -> str:
        """From the configured public URL (or the listening socket), never from the Host header:
        a client cannot make the server hand out URLs of a host of its choosing."""
        base = self.public_url or socket_base_url(request.scope, self.bind_host)
        return f"{base}/episodes/{episode.id}/mcp"

    def describe(self, request: Request, episode: Episode) -> dict[str, Any]:
        return EpisodeInfo.of(episode, self.mcp_url(request, episode)).to_json()

    async def read_json(self, request: Request) -> Any:
        """The request's JSON body, refused with the reason: 413 past MAX_BODY_BYTES, 400 for
        invalid UTF-8 or JSON, 422 for nesting deeper than MAX_JSON_DEPTH, non-finite numbers
        (NaN, Infinity, 1e400) and lone surrogates ("\\udcff")."""
        body = await read_body(request, MAX_BODY_BYTES, "request body")
        if not body:
            return {}
        return parse_json(body)

    async def health(self, request: Request) -> Response:
        return JSONResponse(
            {
                "status": "ok",
                "version": __version__,
                "episodes": len(self.manager),
                "max_episodes": self.manager.max_episodes,
                "worlds": sorted(self.worlds),
            }
        )

    async def list_worlds(self, request: Request) -> Response:
        return JSONResponse(
            [
                {
                    "name": w.name,
                    "title": w.title,
                    "version": w.version,
                    "tools": len(w.tools),
                    "scales": sorted(w.scales),
                }
                for w in self.worlds.values()
            ]
        )

    async def create_episode(self, request: Request) -> Response:
        body = await self.read_json(request)
        if not isinstance(body, dict):
            raise HttpError(400, 'request body must be a JSON object such as {"world": "retail", "seed": 0}')
        spec = validated(CreateEpisode, body, "episode")
        if spec.group is not None and spec.group > min(self.max_group, self.manager.max_episodes):
            cap, what = min((self.max_group, "per request"), (self.manager.max_episodes, "live on this server"))
            raise HttpError(422, f"group of {spec.group} episodes is over the maximum of {cap} {what}")
        world_name = spec.world or (self.manager.default_world.name if self.manager.default_world else None)
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
            profile: FaultProfile | Literal["task"] | None = (
                profile_from_request(spec.faults, self.faults_dirs)
                if spec.faults is not None
                else ("task" if spec.task is not None and self.faults is None else self.faults)
            )
            if profile is not None and profile != "task" and profile.edge_data and not world.has_edge_data:
                raise ValueError(f"world {world.name} has no edge-case data for the profile's edge_data")
        except (LookupError, ValueError, TaskFileError) as exc:
            raise HttpError(422, str(exc).strip("'\"")) from None
        make = partial(self.manager.create, world.name, spec.seed or 0, spec.scale or "default", spec.task, profile)
        try:  # a group ({"group": N}): N episodes of the same start, all or none
            episodes = await off_the_loop(partial(self.manager.create_group, spec.group or 1, make))
        except EpisodeLimitReached as exc:
            raise HttpError(503, str(exc), {"Retry-After": "5"}) from None
        except (TaskSetupError, GoldActionError) as exc:
            raise HttpError(500, f"the task is broken: {exc}") from None
        described = [
            self.describe(request, e) | role_agents(self.manager, e, self.mcp_url(request, e)) for e in episodes
        ]
        if spec.group is None:
            return JSONResponse(described[0], status_code=201)
        return JSONResponse({"episodes": described}, status_code=201)

    async def run_job(self, request: Request) -> Response:
        """N rollouts run by the server, their results streamed (`mcpsim.serve._jobs`)."""
        return await job_response(self.jobs, self.manager, self.read_json, request)

    async def list_episodes(self, request: Request) -> Response:
        described = []
        for episode in self.manager.list():
            try:
                described.append(self.describe(request, episode))
            except EpisodeClosed:  # deleted meanwhile: no longer listed
                pass
        return JSONResponse(described)

    async def get_episode(self, request: Request) -> Response:
        return JSONResponse(self.describe(request, self.episode_of(request)))

    async def delete_episode(self, request: Request) -> Response:
        episode_id = request.path_params["episode_id"]
        # Off the event loop: closing waits for the operation in progress on the episode.
        if not await off_the_loop(partial(self.manager.delete, episode_id, "deleted by the operator")):
            raise HttpError(404, self.manager.gone_message(episode_id))
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
            if limit is not None and not 0 <= limit <= 2**63 - 1:  # SQLite's LIMIT is a 64-bit integer
                raise ValueError
        except ValueError:
            raise HttpError(422, "limit must be a non-negative integer of at most 2**63 - 1") from None
        tables, state_hash = await off_the_loop(lambda: (episode.tables(wanted, limit), episode.state_hash()))
        return JSONResponse(
            {
                "id": episode.id,
                "world": episode.world.name,
                "world_version": episode.template_version,
                "state_hash": state_hash,
                "tables": tables,
            }
        )

    async def get_changes(self, request: Request) -> Response:
        episode = self.episode_of(request)
        changes = await off_the_loop(partial(attributed_changes, episode))
        return JSONResponse({"id": episode.id, "changes": changes})

    async def end_episode(self, request: Request) -> Response:
        episode = self.episode_of(request)
        await off_the_loop(episode.end)
        return JSONResponse(self.describe(request, episode))

    async def snapshot_episode(self, request: Request) -> Response:
        """The episode's database with a signed trailer (see `mcpsim.engine._snapshots`): restorable on a
        server with the same snapshot key, and still a plain SQLite file."""
        episode = self.episode_of(request)
        data = await off_the_loop(partial(sign_episode, episode, self.snapshot_key))
        return Response(
            data,
            media_type="application/vnd.sqlite3",
            headers={"Content-Disposition": f'attachment; filename="{episode.id}.sqlite"'},
        )

    async def restore_episode(self, request: Request) -> Response:
        """A new episode from a snapshot's bytes (GET /episodes/{id}/snapshot), e.g. to resume a
        partial rollout."""
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/vnd.sqlite3":
            raise HttpError(415, "send the snapshot's bytes with Content-Type: application/vnd.sqlite3")
        data = await read_body(request, self.max_snapshot_bytes, "snapshot")
        # Checked off the event loop: the signature, then the schema (see mcpsim.engine._snapshots).
        try:
            episode = await off_the_loop(partial(load_untrusted, self.lookup, data, self.snapshot_key))
        except SnapshotError as exc:
            raise HttpError(422, f"snapshot refused: {exc}") from None
        except LookupError as exc:
            raise HttpError(422, "snapshot refused: " + str(exc).strip("'\"")) from None
        try:
            self.manager.add(episode)
        except EpisodeLimitReached as exc:
            episode.close()
            raise HttpError(503, str(exc), {"Retry-After": "5"}) from None
        return _created(self, request, episode)

    async def fork_episode(self, request: Request) -> Response:
        source = self.episode_of(request)
        fork = await off_the_loop(source.fork)
        try:
            episode = self.manager.add(fork)
        except EpisodeLimitReached as exc:
            fork.close("refused (the server is full)")
            raise HttpError(503, str(exc), {"Retry-After": "5"}) from None
        return _created(self, request, episode)


def _created(plane: ControlPlane, request: Request, episode: Episode) -> Response:
    """A forked or restored episode as created: of a team task, with endpoints of its own per
    role (the source's stay the source's)."""
    agents = role_agents(plane.manager, episode, plane.mcp_url(request, episode))
    return JSONResponse(plane.describe(request, episode) | agents, status_code=201)
