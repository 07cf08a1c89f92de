"""Serving a folder of world specs lazily: `mcpsim serve-worlds`."""

from __future__ import annotations

import sys
from typing import Any

import click

from mcpsim import logs
from mcpsim.cli._app import _apply, cache_options, log_options, main
from mcpsim.cli._lookup import open_templates
from mcpsim.cli._options import port_option
from mcpsim.cli._serving import DEFAULTS, _client_limits, _setting, _size_option, limit_options, per_episode_option


def _compile_option(name: str, default: object, text: str, **kwargs: Any) -> Any:
    """`--compile-NAME`: a bound on loading one world in its sandbox process, also set by the
    environment variable MCPSIM_COMPILE_NAME (which its help names)."""
    flag, var = f"--compile-{name}", "MCPSIM_COMPILE_" + name.upper().replace("-", "_")
    return click.option(flag, default=default, show_default=True, envvar=var, help=f"{text} [env {var}].", **kwargs)


@main.command("serve-worlds")
@click.argument("folder", metavar="DIR", type=click.Path(exists=True, file_okay=False))
@_setting("--host", default=DEFAULTS.host, show_default=True, help="HTTP bind address.")
@port_option(default=8000, help_text="HTTP port.")
@_setting(
    "--token",
    metavar="TOKEN",
    help="The bearer token the control planes require, and loading a world [env MCPSIM_TOKEN]; none "
    "given: one is generated and printed to stderr.",
)
@_setting("--no-auth", is_flag=True, help="Open the control planes to anyone who can reach the server.")
@_apply(
    [
        click.option(flag, default=default, show_default=True, type=kind, help=text)
        for flag, default, kind, text in [
            (
                "--max-worlds",
                16,
                click.IntRange(min=1),
                "Worlds loaded at once; loading one more evicts the least recently used idle one.",
            ),
            (
                "--world-idle",
                600.0,
                click.FloatRange(min=0),
                "Seconds without a request after which a loaded world is evicted (its episodes closed).",
            ),
        ]
    ]
)
@_compile_option(
    "cpu-seconds", 60, "CPU seconds loading one world may take in its sandbox process", type=click.IntRange(min=1)
)
@_compile_option(
    "memory", "2GiB", "Memory (address space) loading a world may add in its sandbox process", metavar="SIZE"
)
@_compile_option(
    "timeout",
    120.0,
    "Seconds loading one world may take in its sandbox process before it is killed",
    type=click.FloatRange(min=0.1),
)
@per_episode_option
@_apply(cache_options + log_options + limit_options)
def serve_worlds(
    folder: str,
    host: str,
    port: int,
    token: str | None,
    no_auth: bool,
    max_worlds: int,
    world_idle: float,
    compile_cpu_seconds: int,
    compile_memory: str,
    compile_timeout: float,
    cache_dir: str | None,
    no_cache: bool,
    log_level: str,
    log_format: str,
    max_bytes_per_episode: int | None,
    **client_limits: Any,  # the connection and session limits `serve --http` takes (`LIMITS`)
) -> None:
    """Serve every world spec in DIR (such as `mcpsim gen --catalog`'s OUT/worlds) and every twin
    spec (such as `python -m mcpsim.twins build`'s DIR/worlds, each under its world's name) over
    HTTP, each loaded on its first request with its task file's tasks (else generated ones), and
    evicted when idle: POST /w/NAME/episodes creates an episode of world NAME and returns its MCP
    URL; GET /worlds lists the worlds and the loaded ones. With "tools": {"only": [...],
    "distractors": N, "seed": S} in the request, the episode's agent is shown those of the world's
    tools plus N tools of other worlds, in an order fixed by S.

    Each world is loaded in a sandbox process first (--compile-cpu-seconds, --compile-memory,
    --compile-timeout): a spec that fails or goes past a limit answers its own requests with the
    reason (422), and never holds up the other worlds or /health. Every episode is capped at
    --max-bytes-per-episode, and every connection and client held to the limits `serve --http`
    takes (docs/security.md)."""
    import uvicorn

    from mcpsim.catalogue import spec_world_loader
    from mcpsim.serve import ClientLimits, WorldHost
    from mcpsim.specs import SpecError

    logs.configure(log_level, log_format)
    if token is not None and no_auth:
        raise click.UsageError("--token and --no-auth exclude each other")
    try:
        names, load = spec_world_loader(folder)
    except SpecError as exc:  # two files naming one world
        raise click.BadParameter(str(exc), param_hint="DIR") from None
    if not names:
        raise click.BadParameter(f"{folder} holds no spec file (*.yaml, *.yml, *.json)", param_hint="DIR")
    access: dict[str, Any] = {"token": token, "no_auth": no_auth, "host": host, "max_loaded": max_worlds}
    templates = open_templates(cache_dir, no_cache)
    memory = _size_option(compile_memory, "--compile-memory") or 2 * 1024**3
    access["sandbox"] = {"cpu_seconds": compile_cpu_seconds, "memory_bytes": memory, "wall_seconds": compile_timeout}
    access["app_options"] = {"client_limits": ClientLimits(**_client_limits(client_limits))}
    access["episode_limits"] = {"max_bytes_per_episode": max_bytes_per_episode}
    world_host = WorldHost(names, load, templates=templates, idle_seconds=world_idle, describe=load.world, **access)
    print(f"mcpsim: {len(names)} worlds from {folder}, at most {max_worlds} loaded", file=sys.stderr, flush=True)
    protocol = world_host.app.state.http_protocol  # its connections' deadlines (docs/security.md)
    uvicorn.run(world_host.app, host=host, port=port, log_level="warning", http=protocol)
