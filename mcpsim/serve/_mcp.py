"""MCP exposure of a world: the only module that imports the MCP SDK's server side.

`build_server(world, resolve)` turns a `World` into an `MCPServer`: one MCP tool per world tool
(input/output schemas and read-only/destructive/idempotent hints derived from the signature),
the policy as server instructions and as a resource. Which episode a call acts on is decided per
request by `resolve`, from the URL path (`/episodes/{id}/mcp`) on HTTP, or the process's single
episode on stdio and in memory. Nothing depends on MCP sessions, so the stateless 2026-07-28
protocol and the session-based legacy protocol reach the same episode.
"""

from __future__ import annotations

import contextvars
import copy
import functools
import inspect
import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.caching import CacheHint
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent, ToolAnnotations

from mcpsim import __version__

if TYPE_CHECKING:  # imported where used: a stdio server answers initialize before it loads a world
    from mcpsim.engine import Episode
    from mcpsim.world import ToolSpec, World

EPISODE_PATH = re.compile(r"/episodes/([^/]+)/mcp/?$")

EpisodeResolver = Callable[[str | None], "Episode"]
"""Given the episode id in the request's URL (None: no URL, or the default `/mcp`), return the
episode, or raise LookupError if it no longer exists."""


# Set by the middleware for each tools/call; the tool wrapper marks it when the call reaches an episode.
_reached: contextvars.ContextVar[list[bool] | None] = contextvars.ContextVar("mcpsim_reached", default=None)


def _episode_id(request: Any) -> str | None:
    path = getattr(getattr(request, "url", None), "path", None)
    if path is None:
        return None
    match = EPISODE_PATH.search(path)
    return match.group(1) if match else None


META_EPISODE = "mcpsim/episode"
"""Request `_meta` key naming the episode, for transports without URLs (the in-process runner
drives many episodes through one in-memory server). Ignored on HTTP, where the URL decides."""


def _request_episode(request: Any, meta: Any) -> str | None:
    if request is not None:
        return _episode_id(request)
    value = meta.get(META_EPISODE) if isinstance(meta, dict) else getattr(meta, META_EPISODE, None)
    return value if isinstance(value, str) else None


def episode_id_of(ctx: Context) -> str | None:
    return _request_episode(ctx.request_context.request, ctx.request_context.meta)


class _RecordRejectedCalls:
    """Server middleware: a tools/call that the SDK answered without reaching the episode
    (unknown tool, arguments failing the input schema) is still written to the episode's
    transcript, so a transcript holds every call whoever the client is. Arguments the tool does
    not take are refused here (the SDK would drop them silently, and a misspelt optional
    argument would quietly mean its default), as the world's own validation refuses them."""

    def __init__(self, resolve: EpisodeResolver, world: World) -> None:
        self.resolve = resolve
        self.accepted = {  # each tool's argument names, as sent (aliases: `from`, `dry-run`) or not
            name: {n for field_name, f in spec.args_model.model_fields.items() for n in (field_name, f.alias) if n}
            for name, spec in world.tools.items()
        }

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method != "tools/call":
            return await call_next(ctx)
        params = ctx.params or {}
        name, arguments = str(params.get("name")), params.get("arguments")
        text = f"Invalid arguments for {name}: an argument it does not take"  # worded by the episode below
        if not self._extra_arguments(name, arguments):
            reached: list[bool] = []
            token = _reached.set(reached)
            try:
                result = await call_next(ctx)
            finally:
                _reached.reset(token)
            if reached:
                return result
            match result:  # the model, or its wire form
                case CallToolResult(is_error=True, content=content):
                    text = " ".join(getattr(block, "text", "") for block in content)
                case {"isError": True, "content": list(content)}:
                    text = " ".join(str(block.get("text", "")) for block in content if isinstance(block, dict))
                case _:
                    return result
        # The agent reads the episode's own wording (which argument is wrong and how), not the
        # SDK's (its prefix, pydantic's model names and documentation URLs).
        text = SDK_ERROR_PREFIX.sub("", text)
        try:
            episode = self.resolve(_request_episode(ctx.request, ctx.meta))
            text = episode.argument_error(name, arguments) or text
            episode.refuse(name, arguments, text)
        except LookupError as exc:  # gone, or deleted meanwhile (EpisodeClosed): nothing to record it in
            text = str(exc)
        return error_result(text)

    def _extra_arguments(self, name: str, arguments: Any) -> bool:
        accepted = self.accepted.get(name)
        return accepted is not None and isinstance(arguments, dict) and not arguments.keys() <= accepted


SDK_ERROR_PREFIX = re.compile(r"^Error executing tool [^:]*: ?")
"""What the SDK writes before the text of a tool error it raised or caught."""


def error_result(text: str) -> CallToolResult:
    """A tool call's error as the agent reads it: the text alone, no SDK prefix."""
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def policy_uri(world: World) -> str:
    return f"mcpsim://{world.name}/policy"


def _mcp_tool(spec: ToolSpec, resolve: EpisodeResolver) -> Callable[..., Any]:
    """An async function with the world tool's signature, minus its ToolContext plus the MCP
    Context, so the SDK derives the same schemas the world declared."""

    import structlog

    from mcpsim.engine import EpisodeClosed

    async def call(mcp_context: Context, **arguments: Any) -> Any:
        if (reached := _reached.get()) is not None:
            reached.append(True)
        try:
            episode = resolve(episode_id_of(mcp_context))
        except LookupError as exc:
            return error_result(str(exc))
        with structlog.contextvars.bound_contextvars(world=episode.world.name, episode=episode.id):
            try:
                result = episode.run(spec, arguments)
            except EpisodeClosed as exc:  # deleted or expired while the request was on its way
                return error_result(str(exc))
        if result.delay_s > 0:  # a fault profile with real delays
            await anyio.sleep(result.delay_s)
        if result.error is not None:  # returned, not raised: the SDK would prefix "Error executing tool NAME: "
            return error_result(result.error)
        return result.value

    parameters = [inspect.Parameter("mcp_context", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Context)]
    parameters += list(spec.parameters)
    call.__signature__ = inspect.Signature(parameters, return_annotation=spec.return_annotation)  # type: ignore[attr-defined]
    call.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": spec.return_annotation}
    call.__name__ = spec.name
    call.__doc__ = spec.description
    return call


# Keywords that apply to one JSON type only: a schema made of them and a `type` accepts null too
# once "null" joins its type list. (`enum`, `const` and the combinators would not.)
_TYPED_KEYWORDS = frozenset(
    {
        "type", "title", "description", "default", "format", "minLength", "maxLength", "pattern",
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "items", "prefixItems",
        "minItems", "maxItems", "uniqueItems", "properties", "required", "additionalProperties",
    }
)  # fmt: skip


def lean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The same JSON schema, cheaper to validate against: every `$ref` to its `$defs` inlined (a
    validator resolves no reference per value) and `anyOf: [S, {"type": "null"}]` written as S
    with "null" in its type list. A schema whose definitions refer to themselves is returned
    unchanged; so is any part the rewrite cannot prove equivalent."""
    defs = schema.get("$defs", {})

    def inline(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [inline(item, seen) for item in node]
        if not isinstance(node, dict):
            return node
        node = {k: v for k, v in node.items() if k != "$defs"}
        if "$ref" in node:
            ref = node["$ref"]
            if len(node) > 1 or not isinstance(ref, str) or not ref.startswith("#/$defs/"):
                raise _Unleanable  # a reference beside other keywords, or outside $defs
            name = ref.removeprefix("#/$defs/")
            if name in seen or name not in defs:
                raise _Unleanable
            return inline(defs[name], (*seen, name))
        out = {k: inline(v, seen) for k, v in node.items()}
        branches = out.get("anyOf")
        if isinstance(branches, list) and len(branches) == 2 and {"type": "null"} in branches:
            other = branches[0] if branches[1] == {"type": "null"} else branches[1]
            if isinstance(other, dict) and isinstance(other.get("type"), str) and other.keys() <= _TYPED_KEYWORDS:
                rest = {k: v for k, v in out.items() if k != "anyOf"}
                if rest.keys() <= _TYPED_KEYWORDS and "type" not in rest:
                    out = {**other, **rest, "type": [other["type"], "null"]}
        return out

    try:
        lean: dict[str, Any] = inline(schema, ())
    except _Unleanable:
        return schema
    return lean


class _Unleanable(Exception):
    """A schema `lean_schema` leaves as it is (a recursive or unresolvable reference)."""


@functools.lru_cache(maxsize=1024)
def _lean_cached(schema_json: str) -> dict[str, Any]:
    """The published output schema (`lean_schema`), made once per schema in the process (every
    server of a world, every world host). The server itself checks results with the pydantic
    model, not with the schema."""
    return lean_schema(json.loads(schema_json))


TOOLS_TTL_MS = 3_600_000
"""How long a client may reuse a tools/list (a world's tools are fixed for its version, which is
fixed while a server runs): a client opened per episode, such as the runner's, lists once per world."""


def build_server(world: World, resolve: EpisodeResolver) -> MCPServer:
    tools = []
    for spec in world.tools.values():
        tool = Tool.from_function(
            _mcp_tool(spec, resolve),
            name=spec.name,
            title=spec.title,
            description=spec.description,
            annotations=ToolAnnotations(
                title=spec.title,
                read_only_hint=spec.read_only,
                destructive_hint=spec.destructive,
                idempotent_hint=spec.idempotent,
                open_world_hint=False,
            ),
        )
        if spec.listed_input_schema is not None:  # a twin's: the real server's, as it listed it
            tool.parameters = copy.deepcopy(spec.listed_input_schema)
        if spec.listed_output_schema is not None:
            tool.fn_metadata.output_schema = copy.deepcopy(spec.listed_output_schema)
        elif tool.fn_metadata.output_schema is not None:  # what every client validates each result against
            tool.fn_metadata.output_schema = _lean_cached(json.dumps(tool.fn_metadata.output_schema))
        tools.append(tool)
    server = MCPServer(
        name=f"mcpsim-{world.name}",
        title=world.title,
        description=world.description,
        instructions=world.policy,
        version=__version__,
        middleware=[_RecordRejectedCalls(resolve, world)],
        cache_hints={"tools/list": CacheHint(ttl_ms=TOOLS_TTL_MS, scope="public")},
        tools=tools,
    )

    @server.resource(
        policy_uri(world),
        name="policy",
        title=f"{world.title} policy",
        mime_type="text/markdown",
        description="The rules an agent must follow in this world.",
    )
    def policy() -> str:
        return world.policy

    return server


def serve_stdio(world: World, episode: Episode) -> None:
    """Serve one episode over stdio until the client closes the stream."""
    build_server(world, lambda _id: episode).run("stdio")


def http_security(host: str, allowed_hosts: list[str], allowed_origins: list[str]) -> TransportSecuritySettings | None:
    """DNS-rebinding protection. The SDK enables it by itself for loopback hosts; bound elsewhere
    (0.0.0.0 in a container) it is off unless hosts and origins are listed explicitly."""
    if not allowed_hosts and not allowed_origins:
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=allowed_hosts, allowed_origins=allowed_origins
    )
