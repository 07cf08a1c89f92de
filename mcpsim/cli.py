"""The `mcpsim` command line."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from mcpsim import logs
from mcpsim.registry import UnknownWorld, load_world, world_names
from mcpsim.templates import TemplateCache
from mcpsim.world import World

DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "mcpsim" / "templates"


def _world(name: str) -> World:
    try:
        return load_world(name)
    except UnknownWorld as exc:
        raise click.BadParameter(str(exc), param_hint="WORLD") from None


def _templates(cache_dir: str | None, no_cache: bool) -> TemplateCache:
    return TemplateCache(None if no_cache else Path(cache_dir) if cache_dir else DEFAULT_CACHE)


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    end = flat.find(". ")
    return flat if end < 0 else flat[: end + 1]


def _print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, default=str))


cache_options = [
    click.option("--cache-dir", envvar="MCPSIM_CACHE_DIR", metavar="DIR",
                 help=f"Where built templates are kept [default: {DEFAULT_CACHE}; env MCPSIM_CACHE_DIR]."),
    click.option("--no-cache", is_flag=True, help="Build templates in memory only; never read or write the disk."),
]
log_options = [
    click.option("--log-level", default="INFO", show_default=True, help="Least severe log level shown (on stderr).",
                 type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False)),
    click.option("--log-format", default="console", show_default=True, type=click.Choice(["console", "json"]),
                 help="Log lines for people or for machines."),
]


def _apply(options: list[Any]) -> Any:
    def decorate(fn: Any) -> Any:
        for option in reversed(options):
            fn = option(fn)
        return fn

    return decorate


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mcpsim")
def main() -> None:
    """mcpsim: stateful simulated tool worlds behind real MCP servers.

    Serve a world to any MCP client (stdio or streamable HTTP), one isolated SQLite-backed
    episode per endpoint, with a JSON control plane for harnesses.
    """


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def worlds(as_json: bool) -> None:
    """List the installed worlds."""
    rows = [_world(n) for n in world_names()]
    if as_json:
        _print_json([{"name": w.name, "title": w.title, "description": w.description, "version": w.version,
                      "tools": len(w.tools), "tables": sorted(w.metadata.tables), "scales": w.scales} for w in rows])
        return
    table = Table("world", "title", "tools", "tables", "scales", "version")
    for w in rows:
        table.add_row(w.name, w.title, str(len(w.tools)), str(len(w.metadata.tables)), ", ".join(w.scales), w.version)
    Console().print(table)


@main.command()
@click.argument("world")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output, with full input schemas.")
def tools(world: str, as_json: bool) -> None:
    """List a world's tools: what they do, whether they write, their arguments."""
    w = _world(world)
    specs = [w.tools[n] for n in sorted(w.tools)]
    if as_json:
        _print_json([s.describe() for s in specs])
        return
    table = Table("tool", "kind", "arguments", "description", show_lines=True)
    for s in specs:
        kind = "read" if s.read_only else "write, destructive" if s.destructive else "write"
        args = ", ".join(p.name + ("" if p.default is p.empty else "?") for p in s.parameters)
        table.add_row(s.name, kind, args, _first_sentence(s.description))
    Console().print(table)


@main.command()
@click.argument("world")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0), help="Seed of the generated data.")
@click.option("--scale", default="default", show_default=True, help="Size of the world (see `mcpsim worlds`).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@_apply(cache_options + log_options)
def build(world: str, seed: int, scale: str, as_json: bool, cache_dir: str | None, no_cache: bool,
          log_level: str, log_format: str) -> None:
    """Build (or load from the cache) a world's template and print its state hash and row counts."""
    from mcpsim.episode import Episode

    logs.configure(log_level, log_format)
    w = _world(world)
    try:
        w.scale_params(scale)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--scale") from None
    started = time.perf_counter()
    episode = Episode.create(w, seed, scale, templates=_templates(cache_dir, no_cache))
    seconds = time.perf_counter() - started
    counts = {t: r[0]["n"] for t in sorted(w.metadata.tables) if (r := episode.query(f'SELECT count(*) AS n FROM "{t}"'))}
    info = {"world": w.name, "version": w.version, "seed": seed, "scale": scale, "state_hash": episode.state_hash(),
            "rows": counts, "bytes": len(episode.snapshot()), "seconds": round(seconds, 3)}
    if as_json:
        _print_json(info)
    else:
        click.echo(f"{w.name} {scale} seed {seed}: {sum(counts.values())} rows, state hash {info['state_hash']}")
        for t, n in counts.items():
            click.echo(f"  {t:<24}{n:>8}")


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
@_apply(cache_options + log_options)
def serve(world: str, use_http: bool, host: str, port: int, seed: int, scale: str, token: str | None, ttl: float,
          max_episodes: int, allowed_hosts: tuple[str, ...], allowed_origins: tuple[str, ...],
          cache_dir: str | None, no_cache: bool, log_level: str, log_format: str) -> None:
    """Serve WORLD over MCP.

    \b
    stdio (default): one process, one episode; what desktop clients launch.
    --http: one process, many episodes; POST /episodes creates one and returns its MCP URL,
    /mcp serves a default episode. All installed worlds can be created over HTTP.
    """
    logs.configure(log_level, log_format)
    w = _world(world)
    try:
        w.scale_params(scale)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--scale") from None
    templates = _templates(cache_dir, no_cache)
    if not use_http:
        from mcpsim.episode import Episode
        from mcpsim.mcp_server import serve_stdio

        serve_stdio(w, Episode.create(w, seed, scale, templates=templates))
        return

    import uvicorn

    from mcpsim.http_app import ServeConfig, create_app

    app = create_app(ServeConfig(
        world=w.name, seed=seed, scale=scale, token=token, host=host, max_episodes=max_episodes,
        ttl_seconds=ttl or None, cache_dir=None if no_cache else str(templates.cache_dir),
        allowed_hosts=list(allowed_hosts), allowed_origins=list(allowed_origins),
    ))
    print(f"mcpsim: serving {w.name} on http://{host}:{port}/mcp (control plane: http://{host}:{port}/episodes)",
          file=sys.stderr, flush=True)
    uvicorn.run(app, host=host, port=port, log_config=None, access_log=False, lifespan="on")


def _tasks(world: str):
    from mcpsim.tasks import TaskFileError, load_tasks

    try:
        return load_tasks(world)
    except TaskFileError as exc:
        raise click.ClickException(str(exc)) from None
    except LookupError as exc:
        raise click.BadParameter(str(exc).strip("'\""), param_hint="WORLD") from None


@main.command()
@click.argument("world")
@click.option("--split", type=click.Choice(["train", "dev", "test"]), help="Only tasks of this split.")
@click.option("--tag", "tags", multiple=True, help="Only tasks with this tag (repeatable: any of them).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output: whole tasks, gold actions and rubrics.")
def tasks(world: str, split: str | None, tags: tuple[str, ...], as_json: bool) -> None:
    """List a world's tasks, with their gold actions and rubrics (--json).

    This is a harness's and an author's view: it shows the answers, so it is never the agent's
    channel (agents only see MCP).
    """
    selected = [t for t in _tasks(world).tasks
                if (split is None or t.split == split) and (not tags or set(tags) & set(t.tags))]
    if as_json:
        _print_json([t.model_dump(mode="json") for t in selected])
        return
    table = Table("task", "difficulty", "split", "tags", "gold calls", "checks", "instruction")
    for t in selected:
        table.add_row(t.id, t.difficulty, t.split, ", ".join(t.tags), str(len(t.gold)), str(len(t.rubric)),
                      _first_sentence(t.instruction))
    Console().print(table)
    click.echo(f"{len(selected)} tasks", err=True)


@main.command()
@click.argument("worlds", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable report.")
@_apply(log_options)
def check(worlds: tuple[str, ...], as_json: bool, log_level: str, log_format: str) -> None:
    """Validate every task of WORLDS (default: all installed worlds).

    \b
    For each task: the file is valid; the gold actions replay and score 1.0 strict; two
    replays end in the same state hash; a do-nothing agent scores 0 strict and every check's
    noop_passes label matches what it gets; no canary string reaches anything an agent sees.
    Exits 1 if anything fails.
    """
    from rich.progress import Progress

    from mcpsim.checking import check_world

    logs.configure("WARNING" if log_level.upper() == "INFO" else log_level, log_format)
    names = list(worlds) or world_names()
    for name in names:
        _world(name)
    reports = []
    with Progress(console=Console(stderr=True), transient=True, disable=as_json) as progress:
        bar = progress.add_task("checking", total=len(names))
        for name in names:
            progress.update(bar, description=f"checking {name}")
            reports.append(check_world(name))
            progress.advance(bar)
    if as_json:
        _print_json([r.model_dump(mode="json") for r in reports])
    else:
        for r in reports:
            bad = [t for t in r.tasks if not t.ok]
            mark = "ok" if r.ok else "FAILED"
            click.echo(f"{r.world} (version {r.world_version}): {r.task_count - len(bad)}/{r.task_count} tasks ok  {mark}")
            for problem in r.problems:
                click.echo(f"  {problem}")
            for t in bad:
                for problem in t.problems:
                    click.echo(f"  {t.task_id}: {problem}")
    if not all(r.ok for r in reports):
        sys.exit(1)


@main.command()
@click.argument("world")
@click.option("--task", "task_id", required=True, help="The task the episode was created for.")
@click.option("--snapshot", type=click.Path(exists=True, dir_okay=False, path_type=Path), required=True,
              help="The episode's database (GET /episodes/{id}/snapshot).")
@click.option("--answer", help="The agent's final answer to the user.")
@click.option("--answer-file", type=click.File("r"), help="Read the final answer from a file ('-': stdin).")
@click.option("--json", "as_json", is_flag=True, help="The verdict as JSON.")
def verify(world: str, task_id: str, snapshot: Path, answer: str | None, answer_file: Any, as_json: bool) -> None:
    """Grade a recorded episode against its task. Exits 0 if it passes, 1 if not."""
    from mcpsim.episode import Episode
    from mcpsim.verifier import Verifier

    logs.configure("WARNING")
    if answer is not None and answer_file is not None:
        raise click.UsageError("give --answer or --answer-file, not both")
    w = _world(world)
    task_set = _tasks(world)
    try:
        task = task_set.get(task_id)
    except LookupError as exc:
        raise click.BadParameter(str(exc).strip("'\""), param_hint="--task") from None
    try:
        episode = Episode.restore(w, snapshot.read_bytes())
    except Exception as exc:
        raise click.ClickException(f"{snapshot} is not an mcpsim episode of {world}: {exc}") from None
    verdict = Verifier(w, task_set).grade(episode, task, answer_file.read() if answer_file else answer)
    click.echo(verdict.model_dump_json(indent=2) if as_json else verdict.report())
    sys.exit(0 if verdict.passed else 1)
