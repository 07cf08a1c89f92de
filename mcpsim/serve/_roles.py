"""Role endpoints of team tasks (issue 34): `POST /episodes {"world", "task"}` for a task with
`roles` answers one MCP endpoint per role, `"agents": {role: {"mcp_url", "instructions", "tools"}}`,
all acting on the one episode.

Each role's endpoint is `/episodes/{alias}/mcp` with an alias id of its own (as unguessable as an
episode id, so one role's agent cannot reach another's endpoint); the episode's own `mcp_url`
stays the harness's, unrestricted and unattributed. A call through a role endpoint is recorded
with its role (`Episode.run(..., role)`, kept in the episode's metadata, so snapshots and forks
keep it); a call of a tool outside the role's `tools` is refused, changes nothing and is recorded
with the role like any refused call; tools/list through a role endpoint lists that role's tools
only (`RoleToolList`)."""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any, cast

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

from mcpsim.engine import CallResult, Episode
from mcpsim.serve._mcp import _request_episode
from mcpsim.serve._requests import HttpError

if TYPE_CHECKING:
    from mcpsim.serve._host import EpisodeManager
    from mcpsim.world import ToolSpec


class RoleEpisode:
    """An episode as one role's endpoint sees it: every call is made on behalf of `role`, and a
    tool outside `tools` is refused. Everything else is the episode's own (`__getattr__`)."""

    def __init__(self, episode: Episode, role: str, tools: frozenset[str]) -> None:
        self.episode, self.role, self.tools = episode, role, tools

    def __getattr__(self, name: str) -> Any:
        return getattr(self.episode, name)

    def refusal(self, tool: str) -> str:
        return (
            f"Tool {tool!r} is not among the tools of role {self.role!r} ({', '.join(sorted(self.tools))}); "
            "nothing was done. Another role of the team may make this call."
        )

    def run(self, spec: ToolSpec, kwargs: dict[str, Any], role: str | None = None) -> CallResult:
        if spec.name not in self.tools:
            return self.episode.refuse(spec.name, kwargs, self.refusal(spec.name), self.role)
        return self.episode.run(spec, kwargs, self.role)

    def call(self, tool: str, arguments: dict[str, Any] | None = None, role: str | None = None) -> CallResult:
        if tool not in self.tools:
            return self.episode.refuse(tool, arguments, self.refusal(tool), self.role)
        return self.episode.call(tool, arguments, self.role)

    def refuse(self, tool: str, arguments: Any, error: str, role: str | None = None) -> CallResult:
        return self.episode.refuse(tool, arguments, error, self.role)

    def argument_error(self, tool: str, arguments: Any) -> str | None:
        """A tool outside the role's is refused for that, whatever its arguments."""
        return self.refusal(tool) if tool not in self.tools else self.episode.argument_error(tool, arguments)


def _role_of(manager: EpisodeManager, episode_id: str | None) -> tuple[Episode, str] | None:
    """The episode and role of a role endpoint's alias, None for any other id (LookupError if
    the alias's episode is gone)."""
    if episode_id is None or episode_id not in manager.role_endpoints:
        return None
    real_id, role = manager.role_endpoints[episode_id]
    return manager.get(real_id), role


class RoleToolList:
    """Server middleware (`MCPServer.middleware`): tools/list through a role endpoint lists only
    that role's tools, in the world's order; any other request passes as it is."""

    def __init__(self, manager: EpisodeManager) -> None:
        self.manager = manager

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        alias = _request_episode(ctx.request, ctx.meta) if ctx.method == "tools/list" else None
        try:
            found = _role_of(self.manager, alias)
        except LookupError:  # the episode is gone: its tools answer so
            return result
        if found is None:
            return result
        episode, role = found
        allowed = set(self.manager.verifier(episode.world.name).tasks.get(episode.task_id or "").roles[role].tools)
        if isinstance(result, dict):
            return {**result, "tools": [t for t in result.get("tools", []) if t.get("name") in allowed]}
        if result is not None and isinstance(tools := getattr(result, "tools", None), list):
            return result.model_copy(update={"tools": [t for t in tools if t.name in allowed]})
        return result


def endpoint_episode(manager: EpisodeManager, episode_id: str | None) -> Episode:
    """The episode an MCP endpoint's id names: an episode's id, or a role endpoint's alias."""
    found = _role_of(manager, episode_id)
    return found[0] if found is not None else manager.get(episode_id)


def resolve_endpoint(manager: EpisodeManager, episode_id: str | None) -> Episode:
    """What the tools of the endpoint named `episode_id` act on: the episode itself, or, for a
    role endpoint, the episode seen by that role (`RoleEpisode`, which has `Episode`'s call API)."""
    found = _role_of(manager, episode_id)
    if found is None:
        return manager.get(episode_id)
    episode, role = found
    task = manager.verifier(episode.world.name).tasks.get(episode.task_id or "")
    return cast(Episode, RoleEpisode(episode, role, frozenset(task.roles[role].tools)))


def role_agents(manager: EpisodeManager, episode: Episode, mcp_url: str) -> dict[str, Any]:
    """For an episode of a task with roles (created, forked or restored), `{"agents": {role:
    {"mcp_url", "instructions", "tools"}}}` with a new endpoint per role (`mcp_url` is the episode's own, from which the
    roles' are made); {} for any other episode. A role naming a tool the world does not have is a
    broken task (HttpError 500, the episode deleted)."""
    if episode.task_id is None:
        return {}
    try:
        task = manager.verifier(episode.world.name).tasks.get(episode.task_id)
    except LookupError:  # a restored snapshot of a task this server does not have: no roles to serve
        return {}
    if not task.roles:
        return {}
    unknown = sorted({t for role in task.roles.values() for t in role.tools} - set(episode.world.tools))
    if unknown:
        manager.delete(episode.id, "its task is broken")
        raise HttpError(
            500, f"the task is broken: its roles name tools world {episode.world.name} does not have: {unknown}"
        )
    live = {e.id for e in manager.list()}
    for alias, (owner, _) in list(manager.role_endpoints.items()):  # the endpoints of episodes gone
        if owner not in live:
            manager.role_endpoints.pop(alias, None)
    base = mcp_url.rsplit("/episodes/", 1)[0]
    agents = {}
    for name, role in task.roles.items():
        alias = secrets.token_urlsafe(16)
        manager.role_endpoints[alias] = (episode.id, name)
        agents[name] = {
            "mcp_url": f"{base}/episodes/{alias}/mcp",
            "instructions": role.instructions,
            "tools": role.tools,
        }
    return {"agents": agents}


def attributed_changes(episode: Episode) -> list[dict[str, Any]]:
    """The change log as `GET /episodes/{id}/changes` answers it: each entry with the `role` whose
    call made it, for the calls made through a role endpoint."""
    if not episode.meta().roles:
        return [c._asdict() for c in episode.changes()]
    return [{**c._asdict(), "role": role} for c, role in episode.changes_by_role()]
