"""Serving worlds: `mcpsim serve` over stdio or streamable HTTP."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from mcpsim import logs
from mcpsim.cli._app import _apply, main, runtime_options, spec_options
from mcpsim.cli._lookup import (
    DEFAULT_CACHE,
    find_profile,
    find_tasks,
    find_world,
    lookup_message,
    open_templates,
    world_at_scale,
)
from mcpsim.cli._options import port_option
from mcpsim.serve import ClientLimits, ServeConfig

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from mcpsim.engine import Episode, TemplateCache
    from mcpsim.world import World

DEFAULTS = ServeConfig()  # the options' defaults are the settings' (tests/serve/test_config.py)


@dataclass
class _Stdio:
    """What `serve` over stdio was asked for; `load` makes its episode and the world's MCP server."""

    world: str
    seed: int
    scale: str
    task_id: str | None
    start_snapshot: str | None
    episode_path: str | None
    faults_spec: str | None
    cache_dir: str | None
    no_cache: bool
    template_cache_bytes: str
    log_level: str
    log_format: str
    progress: logs.Progress
    card: dict[str, Any] | None = None  # the card initialize was answered from, if any
    episode: Episode | None = None

    @property
    def cards_dir(self) -> Path | None:
        return None if self.no_cache else Path(self.cache_dir or DEFAULT_CACHE) / "cards"

    def load(self) -> MCPServer:
        from mcpsim.serve import build_server

        logs.configure_structlog(self.log_level, self.log_format)
        self.progress.step(f"loading world {self.world}")
        w = world_at_scale(self.world, self.scale)
        templates = open_templates(self.cache_dir, self.no_cache)
        templates.set_max_bytes(_size_option(self.template_cache_bytes, "--template-cache-bytes"))
        built = templates.builds
        self.progress.step("preparing the episode (a template not in the cache is built now, once)")
        episode = self.episode = self._episode(w, templates, find_profile(self.faults_spec))
        if templates.builds > built:
            self.progress.step("template built and cached" if templates.cache_dir else "template built")
        server = build_server(w, lambda _id: episode)
        self._keep_card(server, list(w.scales))
        self.progress.step(f"ready: {len(w.tools)} tools")
        return server

    def _episode(self, w: World, templates: TemplateCache, profile: Any) -> Episode:
        from mcpsim.engine import Episode
        from mcpsim.serve import EpisodeFileError, FileEpisode

        task = None
        if self.task_id:
            try:
                task = find_tasks(w.name).get(self.task_id)
            except LookupError as exc:
                raise click.BadParameter(lookup_message(exc), param_hint="--task") from None

        def fresh() -> Episode:
            if task is not None:
                from mcpsim.tasks import task_episode

                return task_episode(w, task, templates=templates, faults=profile if profile is not None else "task")
            return Episode.create_with_faults(w, self.seed, self.scale, profile, templates=templates)

        if self.episode_path:
            # a task fixes its own seed and scale
            identity = {
                "world": w.name,
                "seed": task.seed if task else self.seed,
                "scale": task.scale if task else self.scale,
                "task": task.id if task else None,
            }
            try:
                return FileEpisode.attach(w, Path(self.episode_path), identity, fresh)
            except EpisodeFileError as exc:
                raise click.ClickException(str(exc)) from None
        if self.start_snapshot:
            try:
                return Episode.restore(w, Path(self.start_snapshot).read_bytes())
            except Exception as exc:
                raise click.ClickException(
                    f"{self.start_snapshot} is not an mcpsim episode of {w.name}: {exc}"
                ) from None
        return fresh()

    def _keep_card(self, server: MCPServer, scales: list[str]) -> None:
        """Keep the world's card current for the next start (`WorldCards.keep`)."""
        from mcpsim.serve import WorldCards

        if self.cards_dir is not None:
            WorldCards(self.cards_dir).keep(self.world, server, scales, self.card)


def _serve_stdio(stdio: _Stdio, exit_snapshot: str | None, record_dir: str | None) -> None:
    """Serve one episode over stdio until the client hangs up. With the world's card (see
    mcpsim.serve._startup), `initialize` is answered while a thread loads the world; without
    it, the world is loaded first."""
    from mcpsim.serve import DeferredServer, WorldCards

    cards = WorldCards(stdio.cards_dir) if stdio.cards_dir else None
    card = cards.read(stdio.world) if cards is not None else None
    if card is not None and cards is not None:  # usage errors exit 2 before the handshake, as without a card
        problem = cards.usage_problem(stdio.world, task_id=stdio.task_id, faults_spec=stdio.faults_spec)
        if problem is not None:
            raise click.BadParameter(problem[1], param_hint=problem[0])
    try:
        if card is not None and stdio.scale in card["scales"]:
            stdio.progress.step(f"answering the handshake while world {stdio.world} loads")
            stdio.card = card
            deferred = DeferredServer(card, stdio.world)
            loading = deferred.start(stdio.load)
            try:
                deferred.run("stdio")
            finally:
                loading.join()
            if deferred.failure is not None:
                raise deferred.failure
        else:
            stdio.load().run("stdio")
    finally:
        if stdio.episode is not None:
            _finish(stdio.episode, exit_snapshot, record_dir)


def _finish(episode: Episode, exit_snapshot: str | None, record_dir: str | None) -> None:
    """After the client hung up: the episode's snapshot and trajectory, if asked for."""
    from mcpsim.serve import FileEpisode

    if isinstance(episode, FileEpisode):
        episode.sync()  # what other processes wrote since this one's last call
    if exit_snapshot:
        tmp = Path(f"{exit_snapshot}.tmp")
        tmp.write_bytes(episode.snapshot())
        os.replace(tmp, exit_snapshot)
    if record_dir:
        from mcpsim.trajectories import Recorder

        Recorder(record_dir).record(episode)


def _size_default(size: int | None) -> str:
    """A byte budget as the option shows and reads it (`4GiB`; `0`: none)."""
    from mcpsim._sizes import format_size

    return format_size(size).replace(".0 ", "").replace(" ", "") if size else "0"


def _size_option(text: str, name: str) -> int | None:
    """A byte budget from the command line (`0`: none)."""
    from mcpsim._sizes import parse_size

    try:
        size = parse_size(text)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint=name) from None
    return size or None


def _field(flag: str) -> str:
    """The setting an option stands for: `--max-episode-bytes` is `max_episode_bytes`."""
    return flag.removeprefix("--").replace("-", "_")


def _setting(flag: str, *decls: str, field: str | None = None, **kwargs: Any) -> Any:
    """An option of a ServeConfig field, by default the one its parameter is named after: the
    field's environment variable sets it too."""
    field = field or (decls[0] if decls else _field(flag))
    return click.option(flag, *decls, envvar=ServeConfig.env_var(field), **kwargs)


def _size_setting(flag: str, help_text: str, *, parsed: bool = False) -> Any:
    """An option of a ServeConfig byte budget: its default and environment variable are the field's
    (`parsed`: its value is the number of bytes, None for 0, not the text)."""
    var = ServeConfig.env_var(_field(flag))
    return click.option(
        flag,
        default=_size_default(ServeConfig.default_of(_field(flag))),
        show_default=True,
        metavar="SIZE",
        envvar=var,
        help=f"{help_text} [env {var}].",
        callback=(lambda _ctx, _param, text: _size_option(text, flag)) if parsed else None,
    )


def _limit_setting(flag: str, field: str, help_text: str) -> Any:
    """An option of a ClientLimits field (0 on the command line: no limit); its default, its type
    (seconds or a count) and its environment variable are the field's."""
    default = ClientLimits.default_of(field)
    var = ClientLimits.env_var(field)
    return click.option(
        flag,
        default=default or 0,
        show_default=True,
        type=click.FloatRange(min=0) if isinstance(default, float) else click.IntRange(min=0),
        envvar=var,
        help=f"HTTP: {help_text} [env {var}].",
    )


LIMITS = [
    (
        "--sessions-per-client",
        "sessions_per_client",
        "MCP sessions one client (its bearer token, else its address) may hold open; past it its least "
        "recently used idle session is closed, or it gets 429 if all are busy (0: no limit)",
    ),
    (
        "--sessions-per-address",
        "sessions_per_address",
        "MCP sessions all clients at one remote address may hold open together (0: no limit)",
    ),
    (
        "--session-idle-timeout",
        "session_idle_seconds",
        "seconds an MCP session may go without a request before it is closed (0: never)",
    ),
    (
        "--max-sessions",
        "max_sessions",
        "open MCP sessions per world, all clients together; past it, initialize gets 503 (0: no limit)",
    ),
    (
        "--mcp-episodes-per-client",
        "mcp_episodes_per_client",
        "live episodes one client may hold through /mcp (each session there makes one); past it, "
        "initialize gets 429 (0: no limit)",
    ),
    (
        "--mcp-episodes-per-address",
        "mcp_episodes_per_address",
        "live /mcp episodes all clients at one address may hold together (0: no limit)",
    ),
    (
        "--header-timeout",
        "header_timeout_seconds",
        "seconds a connection has to send a request's headers; past them it is closed (0: never)",
    ),
    (
        "--body-timeout",
        "body_timeout_seconds",
        "seconds a request has to send its whole body once its headers are in; past them its "
        "connection is closed (0: never)",
    ),
    (
        "--connections-per-address",
        "connections_per_address",
        "open HTTP connections from one remote address; one more gets 503 and is closed (0: no limit)",
    ),
]
"""The ClientLimits options: flag, field, help."""
limit_options = [_limit_setting(flag, field, help_text) for flag, field, help_text in LIMITS]


per_episode_option = _size_setting(
    "--max-bytes-per-episode",
    "One episode's database (0: no limit); a tool call writing past it is rolled back and the agent reads why",
    parsed=True,
)


def _client_limits(params: dict[str, Any]) -> dict[str, Any]:
    """The ClientLimits fields as the options give them (0: no limit, None)."""
    return {field: params[_field(flag)] or None for flag, field, _ in LIMITS}


@main.command()
@click.argument("world", required=False)
@click.option("--http", "use_http", is_flag=True, help="Serve streamable HTTP (many episodes) instead of stdio.")
@_setting("--host", default=DEFAULTS.host, show_default=True, help="HTTP bind address.")
@port_option(default=8000, help_text="HTTP port.")
@_setting(
    "--seed", default=DEFAULTS.seed, show_default=True, type=click.IntRange(min=0), help="Seed of the default episode."
)
@_setting("--scale", default=DEFAULTS.scale, show_default=True, help="Scale of the default episode.")
@_setting(
    "--token",
    metavar="TOKEN",
    help="HTTP: the bearer token the control plane requires [env MCPSIM_TOKEN]; none given: one is "
    "generated and printed to stderr. Agents never need it (docs/security.md).",
)
@_setting(
    "--no-auth",
    is_flag=True,
    help="HTTP: open the control plane to anyone who can reach the server, for local experiments "
    "(an agent could then fork and verify its own episode) [env MCPSIM_NO_AUTH].",
)
@_setting(
    "--public-url",
    metavar="URL",
    help="HTTP: the base URL clients reach this server at; episodes' mcp_url are built from it, never "
    "from a request's Host header, and its host is always allowed. Default: http://HOST:PORT "
    "(127.0.0.1 for a 0.0.0.0 bind) [env MCPSIM_PUBLIC_URL].",
)
@_setting(
    "--verdict-detail",
    type=click.Choice(["full", "summary"]),
    help="HTTP: what POST /episodes/{id}/verify returns: full (checks' requirements and reasons, the row "
    "diff, the answer) or summary (passed, rewards, failure, each check's name and pass/fail). "
    "Default: full with a token, summary with --no-auth [env MCPSIM_VERDICT_DETAIL].",
)
@_setting(
    "--shared-default",
    is_flag=True,
    help="HTTP: /mcp serves one episode shared by every client (they can see each other's writes); "
    "default: a fresh episode per client session [env MCPSIM_SHARED_DEFAULT].",
)
@_setting(
    "--ttl",
    field="ttl_seconds",
    default=DEFAULTS.ttl_seconds or 0,
    show_default=True,
    type=click.FloatRange(min=0),
    help="Seconds an idle episode lives (0: forever).",
)
@_setting(
    "--max-episodes",
    default=DEFAULTS.max_episodes,
    show_default=True,
    type=click.IntRange(min=1),
    help="Live episodes allowed at once; more get 503.",
)
@_size_setting(
    "--max-episode-bytes",
    "Memory the live episodes' databases may hold together (page count x page size; e.g. 512MiB, "
    "8GB; 0: no limit); past it, creating, forking or restoring gets 503 with the reason",
)
@per_episode_option
@_size_setting(
    "--template-cache-bytes",
    "Memory for built templates (one per world, seed, scale and task); past it the least recently "
    "used are dropped and reloaded from the disk cache or rebuilt when needed (0: no limit)",
)
@_setting(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    metavar="HOST[:PORT]",
    help="HTTP: accepted Host headers of every request, control plane and MCP (DNS-rebinding "
    "protection; exact, HOST:* for any port; default: the loopback names; the --public-url host "
    "always). Repeatable [env MCPSIM_ALLOWED_HOSTS, space-separated].",
)
@_setting(
    "--allowed-origin",
    "allowed_origins",
    multiple=True,
    metavar="ORIGIN",
    help="HTTP: accepted Origin headers of browser requests (exact, SCHEME://HOST:* for any port; "
    "default: the loopback origins; the --public-url origin always). Repeatable "
    "[env MCPSIM_ALLOWED_ORIGINS].",
)
@_setting(
    "--record",
    "record_dir",
    type=click.Path(file_okay=False),
    help="Append every episode's trajectory to DIR/trajectories.jsonl, fsynced, as soon as it is ended or "
    "graded (and again if it changes before it is deleted or expires); each live episode's calls are "
    "journaled as they are answered, and the episodes alive at a crash are written with their calls "
    "on the next start [env MCPSIM_RECORD_DIR].",
)
@_setting(
    "--faults",
    "faults_spec",
    field="faults",
    metavar="PROFILE",
    help="Inject faults: none, flaky, hostile, or a profile YAML file (HTTP: the default for new "
    "episodes; a task's own profile applies otherwise) [env MCPSIM_FAULTS].",
)
@_setting(
    "--faults-dir",
    "faults_dirs",
    multiple=True,
    metavar="DIR",
    type=click.Path(exists=True, file_okay=False),
    help='HTTP: profiles (NAME.yaml/.yml/.json) that POST /episodes may name with "faults": "NAME"; '
    "requests never name files. Repeatable [env MCPSIM_FAULTS_DIRS, space-separated].",
)
@_setting(
    "--snapshot-key",
    "snapshot_key_text",
    field="snapshot_key",
    metavar="KEY",
    help="HTTP: the key that signs snapshots (GET /episodes/{id}/snapshot) and that POST /episodes/restore "
    "checks; at least 16 characters. Default: generated per process, so snapshots restore only "
    "on the server that made them [env MCPSIM_SNAPSHOT_KEY].",
)
@_setting(
    "--only",
    "only",
    multiple=True,
    metavar="WORLD",
    help="HTTP: serve only these worlds (and WORLD); default: every installed world, or without WORLD the "
    "worlds --worlds-dir and --world-spec load. Repeatable [env MCPSIM_ONLY, space-separated].",
)
@_apply(limit_options)
@click.option("--task", "task_id", help="stdio: serve an episode of this task (its seed, scale and setup).")
@click.option(
    "--snapshot",
    "start_snapshot",
    type=click.Path(exists=True, dir_okay=False),
    help="stdio: start from this episode database instead of a fresh one.",
)
@click.option(
    "--exit-snapshot",
    type=click.Path(dir_okay=False),
    help="stdio: write the episode's database here when the client hangs up.",
)
@click.option(
    "--episode",
    "episode_path",
    type=click.Path(dir_okay=False),
    help="stdio: keep the episode in this file, shared by every server process started with it: the first "
    "creates it (from --seed/--scale/--task), later ones attach and each call sees every earlier call's "
    "writes. For clients that start a server process per tool call (docs/frameworks.md). A file of another "
    "world, seed, scale or task is refused.",
)
@_apply(runtime_options)
@_apply(spec_options)
def serve(
    world: str | None,
    use_http: bool,
    host: str,
    port: int,
    seed: int,
    scale: str,
    token: str | None,
    no_auth: bool,
    public_url: str | None,
    verdict_detail: str | None,
    shared_default: bool,
    ttl: float,
    max_episodes: int,
    max_episode_bytes: str,
    max_bytes_per_episode: int | None,
    template_cache_bytes: str,
    allowed_hosts: tuple[str, ...],
    allowed_origins: tuple[str, ...],
    record_dir: str | None,
    faults_spec: str | None,
    faults_dirs: tuple[str, ...],
    snapshot_key_text: str | None,
    only: tuple[str, ...],
    task_id: str | None,
    start_snapshot: str | None,
    exit_snapshot: str | None,
    episode_path: str | None,
    cache_dir: str | None,
    no_cache: bool,
    log_level: str,
    log_format: str,
    progress: bool | None,
    **client_limits: Any,  # the LIMITS options, which _client_limits reads from the context
) -> None:
    """Serve WORLD over MCP.

    \b
    stdio (default): one process, one episode; what desktop clients launch.
    --http: one process, many episodes; POST /episodes creates one and returns its MCP URL,
    /mcp serves a fresh episode of WORLD per client. Every installed world can be created over
    HTTP (--only limits them; the worlds served are printed on stderr). Without WORLD, the
    worlds --worlds-dir and --world-spec load are served, the first of them behind /mcp. The
    control plane requires a bearer token (--token, or a generated one) unless --no-auth.

    \b
    Exit codes:
      0  the client hung up (stdio) or the server was stopped (HTTP: Ctrl-C, SIGTERM)
      1  it could not start: the port is in use, the --episode file holds another episode...
      2  usage error (an unknown world, scale or option; options of the other transport)
    """
    world = _served(world, only, use_http)
    if not use_http:
        logs.configure_stdlib(log_level)  # structlog once the world loads: not before the handshake
        _check_episode_options(episode_path, start_snapshot, record_dir)
        stdio = _Stdio(
            *(world, seed, scale, task_id, start_snapshot, episode_path, faults_spec, cache_dir, no_cache),
            *(template_cache_bytes, log_level, log_format, logs.Progress(progress)),
        )
        _serve_stdio(stdio, exit_snapshot, record_dir)
        return
    _serve_over_http(world, click.get_current_context().params)


def _serve_over_http(world: str, params: dict[str, Any]) -> None:
    """`serve --http` of `world` (WORLD, or the one `_served` chose), `params` its options."""
    if any(params[name] for name in ("task_id", "start_snapshot", "exit_snapshot", "episode_path")):
        raise click.UsageError(
            "--task, --snapshot, --exit-snapshot and --episode are for stdio; over HTTP, "
            "POST /episodes with a task or POST /episodes/restore"
        )
    only = tuple(params["only"])
    params["only"] = _only(world, only) if only or params["world"] is None else []  # []: every world
    logs.configure(params["log_level"], params["log_format"])
    steps = logs.Progress(params["progress"])
    steps.step(f"loading world {world}")
    w = world_at_scale(world, params["scale"])
    templates = open_templates(params["cache_dir"], params["no_cache"])
    episode_budget = _size_option(params["max_episode_bytes"], "--max-episode-bytes")
    templates.set_max_bytes(_size_option(params["template_cache_bytes"], "--template-cache-bytes"))
    find_profile(params["faults_spec"])  # a clear error now, not in the first request
    from mcpsim.cli._serving_http import serve_http  # over HTTP only: stdio's start-up never imports it

    serve_http(w, templates, episode_budget, steps, params, _client_limits(params))


def _served(world: str | None, only: tuple[str, ...], use_http: bool) -> str:
    """WORLD, or without it the first of --only, else of the worlds --worlds-dir and --world-spec
    loaded (stdio: the only one); a usage error if there is none to choose."""
    if only and not use_http:
        raise click.UsageError("--only chooses the worlds an HTTP server serves: add --http")
    for name in only:
        try:
            find_world(name)
        except click.BadParameter as exc:
            raise click.BadParameter(exc.message, param_hint="--only") from None
    if world is not None:
        return world
    from mcpsim.catalogue import loaded_worlds

    choices = list(only) or loaded_worlds()
    if not choices:
        raise click.UsageError(
            "Missing argument 'WORLD': name the world to serve, or serve a folder of world specs with "
            "--worlds-dir DIR (or --world-spec FILE)"
        )
    if not use_http and len(choices) > 1:
        raise click.UsageError(f"stdio serves one world: name it (one of {', '.join(choices)})")
    return choices[0]


def _only(world: str, only: tuple[str, ...]) -> list[str]:
    """The worlds an HTTP server serves when they are limited: WORLD and --only's, or without
    --only the worlds the spec options loaded."""
    from mcpsim.catalogue import loaded_worlds

    return list(dict.fromkeys([world, *(only or loaded_worlds())]))


def _check_episode_options(episode_path: str | None, start_snapshot: str | None, record_dir: str | None) -> None:
    """stdio: --episode (one episode shared by server processes) refuses what would start or
    write it once per process."""
    if episode_path and start_snapshot:
        raise click.UsageError(
            "--episode and --snapshot exclude each other: to start a shared episode from a snapshot, "
            "copy the snapshot to the --episode path"
        )
    if episode_path and record_dir:
        raise click.UsageError(
            "--record with --episode would write the shared episode once per server process; grade or "
            "export the --episode file itself (mcpsim verify --snapshot PATH)"
        )
