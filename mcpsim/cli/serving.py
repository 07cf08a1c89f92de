"""Serving worlds: `mcpsim serve` over stdio or streamable HTTP."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from mcpsim import logs
from mcpsim.cli._app import (
    _apply,
    _profile,
    _tasks,
    _templates,
    _world_at_scale,
    cache_options,
    log_options,
    main,
)
from mcpsim.templates import TemplateCache
from mcpsim.world import World


def _serve_stdio(w: World, seed: int, scale: str, templates: TemplateCache, task_id: str | None,
                 start_snapshot: str | None, exit_snapshot: str | None, record_dir: str | None,
                 profile: Any) -> None:
    from mcpsim.episode import Episode
    from mcpsim.mcp_server import serve_stdio
    from mcpsim.recording import Recorder
    from mcpsim.scenario import task_episode

    if start_snapshot:
        try:
            episode = Episode.restore(w, Path(start_snapshot).read_bytes())
        except Exception as exc:
            raise click.ClickException(f"{start_snapshot} is not an mcpsim episode of {w.name}: {exc}") from None
    elif task_id:
        try:
            task = _tasks(w.name).get(task_id)
        except LookupError as exc:
            raise click.BadParameter(str(exc).strip("'\""), param_hint="--task") from None
        episode = task_episode(w, task, templates=templates, faults=profile if profile is not None else "task")
    else:
        episode = Episode.create_with_faults(w, seed, scale, profile, templates=templates)
    try:
        serve_stdio(w, episode)
    finally:
        if exit_snapshot:
            tmp = Path(f"{exit_snapshot}.tmp")
            tmp.write_bytes(episode.snapshot())
            os.replace(tmp, exit_snapshot)
        if record_dir:
            Recorder(record_dir).record(episode)


@main.command()
@click.argument("world")
@click.option("--http", "use_http", is_flag=True, help="Serve streamable HTTP (many episodes) instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP bind address.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="HTTP port.")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0), help="Seed of the default episode.")
@click.option("--scale", default="default", show_default=True, help="Scale of the default episode.")
@click.option("--token", envvar="MCPSIM_TOKEN", metavar="TOKEN",
              help="Require this bearer token on the control plane [env MCPSIM_TOKEN]. Agents never need it.")
@click.option("--ttl", default=3600.0, show_default=True, type=click.FloatRange(min=0),
              help="Seconds an idle episode lives (0: forever).")
@click.option("--max-episodes", default=1000, show_default=True, type=click.IntRange(min=1),
              help="Live episodes allowed at once; more get 503.")
@click.option("--allowed-host", "allowed_hosts", multiple=True, metavar="HOST[:PORT]", envvar="MCPSIM_ALLOWED_HOSTS",
              help="Accepted Host headers of MCP requests (DNS-rebinding protection; needed when binding "
                   "0.0.0.0). Repeatable [env MCPSIM_ALLOWED_HOSTS, space-separated].")
@click.option("--allowed-origin", "allowed_origins", multiple=True, metavar="ORIGIN", envvar="MCPSIM_ALLOWED_ORIGINS",
              help="Accepted Origin headers of MCP requests. Repeatable [env MCPSIM_ALLOWED_ORIGINS].")
@click.option("--record", "record_dir", type=click.Path(file_okay=False), envvar="MCPSIM_RECORD_DIR",
              help="Append every episode's trajectory to DIR/trajectories.jsonl when it ends [env MCPSIM_RECORD_DIR].")
@click.option("--faults", "faults_spec", metavar="PROFILE", envvar="MCPSIM_FAULTS",
              help="Inject faults: none, flaky, hostile, or a profile YAML file (HTTP: the default for new "
                   "episodes; a task's own profile applies otherwise) [env MCPSIM_FAULTS].")
@click.option("--task", "task_id", help="stdio: serve an episode of this task (its seed, scale and setup).")
@click.option("--snapshot", "start_snapshot", type=click.Path(exists=True, dir_okay=False),
              help="stdio: start from this episode database instead of a fresh one.")
@click.option("--exit-snapshot", type=click.Path(dir_okay=False),
              help="stdio: write the episode's database here when the client hangs up.")
@_apply(cache_options + log_options)
def serve(world: str, use_http: bool, host: str, port: int, seed: int, scale: str, token: str | None, ttl: float,
          max_episodes: int, allowed_hosts: tuple[str, ...], allowed_origins: tuple[str, ...], record_dir: str | None,
          faults_spec: str | None, task_id: str | None, start_snapshot: str | None, exit_snapshot: str | None,
          cache_dir: str | None, no_cache: bool, log_level: str, log_format: str) -> None:
    """Serve WORLD over MCP.

    \b
    stdio (default): one process, one episode; what desktop clients launch.
    --http: one process, many episodes; POST /episodes creates one and returns its MCP URL,
    /mcp serves a default episode. All installed worlds can be created over HTTP.
    """
    logs.configure(log_level, log_format)
    w = _world_at_scale(world, scale)
    templates = _templates(cache_dir, no_cache)
    profile = _profile(faults_spec)
    if not use_http:
        _serve_stdio(w, seed, scale, templates, task_id, start_snapshot, exit_snapshot, record_dir, profile)
        return
    if task_id or start_snapshot or exit_snapshot:
        raise click.UsageError("--task, --snapshot and --exit-snapshot are for stdio; over HTTP, "
                               "POST /episodes with a task or POST /episodes/restore")

    import uvicorn

    from mcpsim.http_app import ServeConfig, create_app

    app = create_app(ServeConfig(
        world=w.name, seed=seed, scale=scale, token=token, host=host, max_episodes=max_episodes,
        ttl_seconds=ttl or None, cache_dir=None if no_cache else str(templates.cache_dir),
        allowed_hosts=list(allowed_hosts), allowed_origins=list(allowed_origins), record_dir=record_dir,
        faults=faults_spec,
    ))
    print(f"mcpsim: serving {w.name} on http://{host}:{port}/mcp (control plane: http://{host}:{port}/episodes)",
          file=sys.stderr, flush=True)
    uvicorn.run(app, host=host, port=port, log_config=None, access_log=False, lifespan="on")


