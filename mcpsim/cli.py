"""The `mcpsim` command line."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
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


def _profile(spec: str | None) -> Any:
    from mcpsim.faults import FaultProfileError, load_profile

    try:
        return load_profile(spec)
    except FaultProfileError as exc:
        raise click.BadParameter(str(exc), param_hint="--faults") from None


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
    w = _world(world)
    try:
        w.scale_params(scale)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--scale") from None
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
@click.option("--record", "record_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the episode's trajectory (every call with its row changes) as JSON here.")
def verify(world: str, task_id: str, snapshot: Path, answer: str | None, answer_file: Any, as_json: bool,
           record_path: Path | None) -> None:
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
    if record_path is not None:
        from mcpsim.recording import episode_trajectory

        record_path.write_text(episode_trajectory(episode, verdict=episode.verdict).model_dump_json())
    click.echo(verdict.model_dump_json(indent=2) if as_json else verdict.report())
    sys.exit(0 if verdict.passed else 1)


def _select_tasks(task_set: Any, spec: str) -> list[Any]:
    if spec == "all":
        return list(task_set.tasks)
    if spec in ("train", "dev", "test"):
        return [t for t in task_set.tasks if t.split == spec]
    try:
        return [task_set.get(i.strip()) for i in spec.split(",") if i.strip()]
    except LookupError as exc:
        raise click.BadParameter(str(exc).strip("'\""), param_hint="--tasks") from None


@main.command()
@click.argument("world")
@click.option("--agent", "agent_spec", default="oracle", show_default=True,
              help="oracle, noop, random, or openai:MODEL (any OpenAI-compatible endpoint).")
@click.option("--tasks", "task_spec", default="all", show_default=True,
              help="all, a split (train, dev, test), or comma-separated task ids.")
@click.option("--trials", default=1, show_default=True, type=click.IntRange(min=1), help="Runs per task (pass^k).")
@click.option("--concurrency", default=8, show_default=True, type=click.IntRange(min=1), help="Episodes at once.")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0),
              help="Seed of the agents' sampling (worlds take theirs from the task).")
@click.option("--out", "out_dir", default="runs/latest", show_default=True, type=click.Path(file_okay=False),
              help="Where trajectories.jsonl and summary.json go.")
@click.option("--resume", is_flag=True, help="Finish an earlier run in --out: skip finished episodes, resume partial ones.")
@click.option("--keep-first", type=click.IntRange(min=1), metavar="M",
              help="Stop once M episodes are done; snapshot the unfinished ones for a later --resume.")
@click.option("--transport", type=click.Choice(["inprocess", "http", "stdio"]), default="inprocess", show_default=True,
              help="inprocess: MCP in memory; http: a loopback server in this process; stdio: a server process per episode.")
@click.option("--server", "server_url", metavar="URL", help="Use a running `mcpsim serve --http` at URL.")
@click.option("--token", envvar="MCPSIM_TOKEN", help="The --server's control-plane token [env MCPSIM_TOKEN].")
@click.option("--max-steps", default=30, show_default=True, type=click.IntRange(min=1),
              help="Assistant messages an agent may send per episode.")
@click.option("--timeout", default=300.0, show_default=True, type=click.FloatRange(min=0.1),
              help="Seconds per episode.")
@click.option("--user", "user_spec", default="scripted", show_default=True,
              help="The simulated user: scripted (the task's turns) or openai:MODEL.")
@click.option("--base-url", default="https://api.openai.com/v1", show_default=True,
              help="OpenAI-compatible endpoint of openai: agents and users (vLLM, SGLang, ...).")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True,
              help="Environment variable holding the endpoint's API key.")
@click.option("--temperature", type=float, help="Sampling temperature of openai: agents.")
@click.option("--faults", "faults_spec", metavar="PROFILE",
              help="Inject faults in every episode: none, flaky, hostile or a YAML file [default: each task's own].")
@_apply(cache_options + log_options)
def run(world: str, agent_spec: str, task_spec: str, trials: int, concurrency: int, seed: int, out_dir: str,
        resume: bool, keep_first: int | None, transport: str, server_url: str | None, token: str | None,
        max_steps: int, timeout: float, user_spec: str, base_url: str, api_key_env: str, temperature: float | None,
        faults_spec: str | None, cache_dir: str | None, no_cache: bool, log_level: str, log_format: str) -> None:
    """Run an agent on a world's tasks over MCP, grade every episode, write trajectories.

    \b
    Writes OUT/trajectories.jsonl (one line per episode, flushed as it ends) and
    OUT/summary.json, and prints pass@1, pass^k, rewards, calls, tokens and errors per task.
    """
    logs.configure("WARNING" if log_level.upper() == "INFO" else log_level, log_format)
    _world(world)
    selected = _select_tasks(_tasks(world), task_spec)
    if not selected:
        raise click.BadParameter(f"no task matches {task_spec!r}", param_hint="--tasks")
    if server_url and transport != "inprocess":
        raise click.UsageError("--server talks HTTP to a running server; leave --transport out")
    from mcpsim.runner.agents import make_agent

    try:
        make_agent(agent_spec, base_url=base_url)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--agent") from None
    result = anyio.run(_run, world, selected, agent_spec, trials, concurrency, seed, Path(out_dir), resume,
                       keep_first, "http" if server_url else transport, server_url, token, max_steps, timeout,
                       user_spec, base_url, api_key_env, temperature, _templates(cache_dir, no_cache),
                       _profile(faults_spec))
    _print_summary(result, Path(out_dir))
    if result.summary.errors:
        click.echo(f"{result.summary.errors} episodes ended in errors (see termination and error in the JSONL)",
                   err=True)


async def _run(world: str, selected: list[Any], agent_spec: str, trials: int, concurrency: int, seed: int, out: Path,
               resume: bool, keep_first: int | None, transport: str, server_url: str | None, token: str | None,
               max_steps: int, timeout: float, user_spec: str, base_url: str, api_key_env: str,
               temperature: float | None, templates: TemplateCache, faults: Any = None) -> Any:
    from contextlib import ExitStack

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from mcpsim.runner.agents import make_agent
    from mcpsim.runner.backends import HttpBackend, InProcessBackend, StdioBackend
    from mcpsim.runner.llm import ChatClient
    from mcpsim.runner.loop import RolloutSettings
    from mcpsim.runner.run import RunConfig, RunError, run_episodes
    from mcpsim.runner.users import LlmUser, ScriptedUser

    def make_user(task: Any) -> Any:
        if user_spec == "scripted":
            return ScriptedUser(task)
        if user_spec.startswith("openai:"):
            return LlmUser(task, ChatClient(model=user_spec.split(":", 1)[1], base_url=base_url,
                                            api_key_env=api_key_env))
        raise click.BadParameter("use scripted or openai:MODEL", param_hint="--user")

    config = RunConfig(world=world, tasks=selected, out=out, trials=trials, concurrency=concurrency, seed=seed,
                       resume=resume, keep_first=keep_first, faults=faults,
                       settings=RolloutSettings(max_steps=max_steps, timeout=timeout))
    with ExitStack() as stack:
        if transport == "inprocess":
            from mcpsim.manager import EpisodeManager

            backend: Any = InProcessBackend(EpisodeManager(templates, max_episodes=concurrency + 8, ttl_seconds=None))
        elif transport == "stdio":
            backend = StdioBackend()
        else:
            if server_url is None:
                from mcpsim.http_app import ServeConfig, create_app, serve_in_thread

                app = create_app(ServeConfig(world=world, scale="small", max_episodes=concurrency + 8, ttl_seconds=None,
                                             cache_dir=str(templates.cache_dir) if templates.cache_dir else None))
                server_url = stack.enter_context(serve_in_thread(app))
            backend = HttpBackend(server_url, token)
        total = len(selected) * trials
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TextColumn("pass {task.fields[passed]}"), TimeElapsedColumn(),
                      console=Console(stderr=True), transient=True) as progress:
            bar = progress.add_task(f"{world} {agent_spec}", total=total, passed=0)
            passed = 0

            def on_progress(t: Any) -> None:
                nonlocal passed
                passed += t.reward == 1.0
                progress.update(bar, advance=1, passed=passed)

            try:
                result = await run_episodes(config, backend, lambda: make_agent(
                    agent_spec, base_url=base_url, api_key_env=api_key_env, temperature=temperature, seed=seed),
                    make_user, on_progress=on_progress)
            except RunError as exc:
                raise click.ClickException(str(exc)) from None
            finally:
                if isinstance(backend, HttpBackend):
                    await backend.aclose()
    (out / "summary.json").write_text(result.summary.model_dump_json(indent=2))
    return result


def _print_summary(result: Any, out: Path) -> None:
    s = result.summary
    table = Table("task", "trials", "passed", "mean reward", "partial", "calls", "tool errors", "tokens", "ended by")
    for t in s.tasks:
        table.add_row(t.task_id, str(t.trials), str(t.passes), f"{t.mean_reward:.2f}", f"{t.mean_partial:.2f}",
                      str(t.tool_calls), str(t.tool_errors), str(t.tokens),
                      ", ".join(f"{k} {v}" for k, v in sorted(t.terminations.items())))
    console = Console()
    console.print(table)
    hats = "  ".join(f"pass^{k} {v:.3f}" for k, v in s.pass_hat_k.items())
    console.print(f"[bold]{', '.join(s.agents)}[/bold] on {s.world}: {s.episodes} episodes, pass@1 {s.pass_at_1:.3f}  "
                  f"{hats}  mean reward {s.mean_reward:.3f}  partial {s.mean_partial:.3f}  tool calls {s.tool_calls} "
                  f"({s.tool_errors} errors)  tokens {s.tokens}  episode errors {s.errors}")
    extra = []
    if result.skipped:
        extra.append(f"{result.skipped} already done")
    if result.cancelled:
        extra.append(f"{result.cancelled} suspended (resume with --resume)")
    if result.not_started:
        extra.append(f"{result.not_started} not started")
    console.print(f"trajectories: {out / 'trajectories.jsonl'}" + (f"  ({'; '.join(extra)})" if extra else ""))


DEMO_TASKS = 8


@main.command()
@click.option("--world", default="retail", show_default=True, help="The world to demonstrate.")
@click.option("--tasks", "task_count", default=DEMO_TASKS, show_default=True, type=click.IntRange(min=1),
              help="How many tasks (one of each tag first).")
@click.option("--out", "out_dir", default="runs/demo", show_default=True, type=click.Path(file_okay=False),
              help="Where the oracle's and the do-nothing agent's trajectories go.")
@_apply(cache_options)
def demo(world: str, task_count: int, out_dir: str, cache_dir: str | None, no_cache: bool) -> None:
    """Serve a world on 127.0.0.1, run the oracle and a do-nothing agent over real MCP (HTTP),
    grade every episode, print the results and write the trajectories. No configuration."""
    import shutil

    from mcpsim.runner.agents import make_agent

    logs.configure("WARNING")
    _world(world)
    task_set = _tasks(world)
    picked: list[Any] = []
    for task in task_set.tasks:  # one task per leading tag first, for variety
        if len(picked) < task_count and task.tags[:1] not in [t.tags[:1] for t in picked]:
            picked.append(task)
    picked += [t for t in task_set.tasks if t not in picked][: task_count - len(picked)]
    if not picked:
        raise click.ClickException(f"world {world} has no tasks")
    templates = _templates(cache_dir, no_cache)
    out = Path(out_dir)
    console = Console()
    console.print(f"[bold]mcpsim demo[/bold]: {len(picked)} {world} tasks over MCP (streamable HTTP on 127.0.0.1)")
    for agent in ("oracle", "noop"):
        shutil.rmtree(out / agent, ignore_errors=True)
        make_agent(agent)
        result = anyio.run(_run, world, picked, agent, 1, 4, 0, out / agent, False, None, "http", None, None, 30,
                           60.0, "scripted", "https://api.openai.com/v1", "OPENAI_API_KEY", None, templates)
        _print_summary(result, out / agent)
    console.print("The oracle replays each task's gold actions and passes; the do-nothing agent fails every task "
                  "(its partial reward is the share of checks a do-nothing agent should pass). Next: "
                  "`mcpsim run retail --agent openai:MODEL --base-url URL`.")


@main.command()
@click.argument("run_path", metavar="RUN", type=click.Path(exists=True, path_type=Path))
@click.option("--format", "fmt", required=True, type=click.Choice(["openai", "trl", "verifiers", "parquet"]),
              help="openai: chat fine-tuning JSONL (arguments as JSON strings); trl: arguments as objects; "
                   "verifiers: its rollout records; parquet: one row per episode.")
@click.option("--out", "dest", type=click.Path(dir_okay=False, path_type=Path),
              help="The file to write [default: RUN/export.FORMAT.jsonl, or RUN/export.parquet].")
@click.option("--min-reward", type=float, help="Only episodes with at least this reward (1.0: passed only).")
def export(run_path: Path, fmt: str, dest: Path | None, min_reward: float | None) -> None:
    """Export a run's completed episodes (RUN: a run directory or a trajectories .jsonl) for training."""
    from mcpsim import export as exporting

    folder = run_path if run_path.is_dir() else run_path.parent
    logs.configure("WARNING")
    dest = dest or folder / ("export.parquet" if fmt == "parquet" else f"export.{fmt}.jsonl")
    try:
        report = exporting.export(run_path, fmt, dest, min_reward=min_reward)  # type: ignore[arg-type]
    except exporting.ExportError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(report.summary())
