"""Running agents: `mcpsim run`, `mcpsim demo`, `mcpsim export`."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import Any, get_args

import anyio
import click
from rich.console import Console

from mcpsim import logs
from mcpsim.cli._app import _apply, cache_options, log_options, main, progress_option, spec_options
from mcpsim.cli._lookup import find_profile, find_tasks, find_world, lookup_message, open_templates
from mcpsim.cli._measured import TIER_NAMES, select_measured
from mcpsim.cli._output import print_json
from mcpsim.cli._remote import check_served_run, check_served_world
from mcpsim.cli._run_summary import _print_summary, _report_run
from mcpsim.runner import Executor, RunConfig, Transport


def _select_tasks(task_set: Any, spec: str) -> list[Any]:
    if spec == "all":
        return list(task_set.tasks)
    if spec in ("train", "dev", "test", "hard"):
        return [t for t in task_set.tasks if t.split == spec]
    try:
        return [task_set.get(i.strip()) for i in spec.split(",") if i.strip()]
    except LookupError as exc:
        raise click.BadParameter(lookup_message(exc), param_hint="--tasks") from None


def _plan_option(flag: str, *decls: str, **kwargs: Any) -> Any:
    """An option whose default, shown in --help, is the RunConfig field named after it."""
    default = getattr(RunConfig, flag.removeprefix("--").replace("-", "_"))
    return click.option(flag, *decls, default=default, show_default=True, **kwargs)


def _out_option(default: str, help_text: str) -> Any:
    """The folder a command writes its run to (`out_dir`)."""
    return click.option(
        "--out", "out_dir", default=default, show_default=True, type=click.Path(file_okay=False), help=help_text
    )


@main.command()
@click.argument("world")
@click.option(
    "--agent",
    "agent_spec",
    default="oracle",
    show_default=True,
    help="oracle, noop, random, openai:MODEL (any OpenAI-compatible endpoint), or your own agent class as "
    "package.module:Class (importable from the current directory; see docs/real-model.md).",
)
@click.option(
    "--tasks",
    "task_spec",
    default="all",
    show_default=True,
    help="all, a split (train, dev, test, hard), or comma-separated task ids.",
)
@click.option("--tier", type=click.Choice(TIER_NAMES), help="Only --tasks of this measured tier (mcpsim tasks --json).")
@click.option(
    "--calibration",
    "calibration_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A `mcpsim calibrate` file: with --max-pass-rate/--min-pass-rate, only tasks it measured within them.",
)
@click.option(
    "--max-pass-rate", type=click.FloatRange(0, 1), help="Only tasks whose calibrated pass@1 is at most this."
)
@click.option(
    "--min-pass-rate", type=click.FloatRange(0, 1), help="Only tasks whose calibrated pass@1 is at least this."
)
@_plan_option("--trials", type=click.IntRange(min=1), help="Runs per task (pass^k).")
@_plan_option("--concurrency", type=click.IntRange(min=1), help="Episodes at once.")
@_plan_option(
    "--seed", type=click.IntRange(min=0), help="Seed of the agents' sampling (worlds take theirs from the task)."
)
@_out_option("runs/latest", "Where trajectories.jsonl and summary.json go.")
@click.option(
    "--resume", is_flag=True, help="Finish an earlier run in --out: skip finished episodes, resume partial ones."
)
@click.option(
    "--keep-first",
    type=click.IntRange(min=1),
    metavar="M",
    help="Stop once M episodes are done; snapshot the unfinished ones for a later --resume.",
)
@_plan_option(
    "--transport",
    type=click.Choice(get_args(Transport)),
    help="inprocess: MCP in memory; http: a loopback server in this process; stdio: a server process per episode.",
)
@click.option("--server", "server_url", metavar="URL", help="Use a running `mcpsim serve --http` at URL.")
@_plan_option(
    "--executor",
    type=click.Choice(get_args(Executor)),
    help="local: this process runs the episodes; ray: a Ray cluster's workers do, one episode host per core "
    "(docs/trainers/ray.md).",
)
@click.option(
    "--address",
    metavar="ADDR",
    help="The Ray cluster (host:port of its head) for --executor ray [default: RAY_ADDRESS, else a local cluster].",
)
@click.option("--token", envvar="MCPSIM_TOKEN", help="The --server's control-plane token [env MCPSIM_TOKEN].")
@_plan_option("--max-steps", type=click.IntRange(min=1), help="Assistant messages an agent may send per episode.")
@_plan_option("--timeout", type=click.FloatRange(min=0.1), help="Seconds per episode.")
@_plan_option("--user", "user_spec", help="The simulated user: scripted (the task's turns) or openai:MODEL.")
@_plan_option("--base-url", help="OpenAI-compatible endpoint of openai: agents and users (vLLM, SGLang, ...).")
@_plan_option("--api-key-env", help="Environment variable holding the endpoint's API key.")
@click.option("--user-base-url", metavar="URL", help="The simulated user's own endpoint, when it is not --base-url's.")
@click.option(
    "--user-api-key-env",
    metavar="VAR",
    help="Environment variable holding the simulated user's API key [default: --api-key-env's].",
)
@click.option("--temperature", type=float, help="Sampling temperature of openai: agents.")
@click.option("--max-tokens", type=click.IntRange(min=1), help="Longest completion of openai: agents (max_tokens).")
@click.option(
    "--extra-body",
    metavar="JSON",
    help='More fields for every openai: agent request, as a JSON object (e.g. \'{"top_k": 20, '
    '"chat_template_kwargs": {"enable_thinking": false}}\' for vLLM or SGLang).',
)
@click.option(
    "--token-ids",
    is_flag=True,
    help="Ask openai: agents' endpoint (vLLM, SGLang) for token ids and log-probabilities and record them "
    "per assistant turn with the prompt's ids (`mcpsim export --format tokens`); OpenAI's API refuses this.",
)
@click.option(
    "--faults",
    "faults_spec",
    metavar="PROFILE",
    help="Inject faults in every episode: none, flaky, hostile or a YAML file [default: each task's own].",
)
@click.option(
    "--max-failures",
    default=0,
    show_default=True,
    type=click.IntRange(min=0),
    help="Episodes that may end in an infrastructure failure (model_error, server_error, grader_error, "
    "timeout) before the run exits 3.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary (summary.json) as JSON instead of a table.")
@_apply(cache_options + log_options)
@_apply(spec_options)
def run(
    world: str,
    agent_spec: str,
    task_spec: str,
    tier: str | None,
    calibration_path: Path | None,
    max_pass_rate: float | None,
    min_pass_rate: float | None,
    trials: int,
    concurrency: int,
    seed: int,
    out_dir: str,
    resume: bool,
    keep_first: int | None,
    transport: Transport,
    server_url: str | None,
    executor: Executor,
    address: str | None,
    token: str | None,
    max_steps: int,
    timeout: float,
    user_spec: str,
    base_url: str,
    api_key_env: str,
    user_base_url: str | None,
    user_api_key_env: str | None,
    temperature: float | None,
    max_tokens: int | None,
    extra_body: str | None,
    token_ids: bool,
    faults_spec: str | None,
    max_failures: int,
    as_json: bool,
    cache_dir: str | None,
    no_cache: bool,
    log_level: str,
    log_format: str,
) -> None:
    """Run an agent on a world's tasks over MCP, grade every episode, write trajectories.

    \b
    Writes OUT/trajectories.jsonl (one line per episode, flushed as it ends) and
    OUT/summary.json, and prints pass@1, pass^k, rewards, calls, tokens and errors per task.

    \b
    Exit codes:
      0  the episodes ran, at most --max-failures of them into an infrastructure failure
         (failed tasks, step limits and agent errors are results, whatever the rewards)
      1  the run could not go on (e.g. --out already holds a run and --resume is missing)
      2  usage error (an unknown option, world, task or agent)
      3  more than --max-failures episodes ended in an infrastructure failure: the model
         endpoint failed (model_error), the world server failed or could not be reached
         (server_error), grading could not finish (grader_error) or the episode ran out of
         time (timeout); the run tells nothing about the agent there, and `--resume` with
         the same --out reruns the server_error and grader_error episodes
    """
    logs.configure("WARNING" if log_level.upper() == "INFO" else log_level, log_format)
    # the server's copy of the world against this client's; a listing of its tasks if only the server has it
    served = check_served_world(world, server_url, token) if server_url else None
    if served is not None:
        check_served_run(_check_agent(agent_spec, base_url), user_spec, tier, executor)
    selected = _select_tasks(served if served is not None else find_tasks(world), task_spec)
    selected = select_measured(world, selected, tier, calibration_path, max_pass_rate, min_pass_rate)
    if not selected:
        bounds = " within --tier and the pass-rate bounds" if tier or calibration_path else ""
        raise click.BadParameter(f"no task matches {task_spec!r}{bounds}", param_hint="--tasks")
    _check_run_options(server_url, transport, user_base_url, user_api_key_env, user_spec, address, executor, keep_first)
    _check_agent(agent_spec, base_url)
    plan = _plan(selected, click.get_current_context().params, served_tasks=served is not None)
    result = anyio.run(_execute, plan)
    _report_run(result, plan, as_json, max_failures, server_url)


def _check_run_options(
    server_url: str | None,
    transport: Transport,
    user_base_url: str | None,
    user_api_key_env: str | None,
    user_spec: str,
    address: str | None,
    executor: Executor,
    keep_first: int | None,
) -> None:
    """A usage error for `run`'s options that do not go together."""
    if server_url and transport != "inprocess":
        raise click.UsageError("--server talks HTTP to a running server; leave --transport out")
    if (user_base_url or user_api_key_env) and not user_spec.startswith("openai:"):
        raise click.UsageError("--user-base-url and --user-api-key-env configure a --user openai:MODEL")
    if user_spec != "scripted" and not user_spec.startswith("openai:"):
        raise click.BadParameter("use scripted or openai:MODEL", param_hint="--user")
    if address and executor != "ray":
        raise click.UsageError("--address names a Ray cluster: add --executor ray")
    if executor == "ray" and (server_url or transport != "inprocess" or keep_first):
        raise click.UsageError(
            "--executor ray runs episodes in its workers' own episode hosts: leave out --server, --transport "
            "and --keep-first"
        )


def _check_agent(agent_spec: str, base_url: str) -> Any:
    """A usage error unless `--agent` names an agent this process can make; the agent (closed)."""
    from mcpsim.runner import make_agent

    if os.getcwd() not in sys.path:  # `--agent package.module:Class` from the current directory, as uvicorn does
        sys.path.insert(0, os.getcwd())
    try:
        agent = make_agent(agent_spec, base_url=base_url)  # a custom class: imported and checked here
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--agent") from None
    anyio.run(agent.aclose)
    return agent


# `RunConfig`'s fields that `run` passes on from its option of the same name
_AS_GIVEN = (
    *("world", "trials", "concurrency", "seed", "resume", "keep_first", "server_url", "token", "max_steps"),
    *("timeout", "base_url", "api_key_env", "temperature", "max_tokens", "token_ids", "user_base_url"),
    *("user_api_key_env", "executor", "address"),
)


def _plan(selected: list[Any], options: dict[str, Any], served_tasks: bool = False) -> RunConfig:
    """The run `run`'s options (its parameters by name) ask for, of the `selected` tasks."""
    cache_dir, no_cache = options["cache_dir"], options["no_cache"]
    return RunConfig(
        **{name: options[name] for name in _AS_GIVEN},
        tasks=selected,
        agent=options["agent_spec"],
        out=Path(options["out_dir"]),
        transport="http" if options["server_url"] else options["transport"],
        served_tasks=served_tasks,
        user=options["user_spec"],
        extra_body=_json_object(options["extra_body"], "--extra-body"),
        templates=open_templates(cache_dir, no_cache),
        cache_dir=None if no_cache else cache_dir,
        faults=find_profile(options["faults_spec"]),
        worker_setup=_spec_worlds_for_workers() if options["executor"] == "ray" else None,
    )


def _json_object(text: str | None, option: str) -> dict[str, Any] | None:
    """A JSON object given on the command line."""
    if text is None:
        return None
    import json

    try:
        value = json.loads(text)
    except ValueError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint=option) from None
    if not isinstance(value, dict):
        raise click.BadParameter("a JSON object is needed: {...}", param_hint=option)
    return value


def _loopback_snapshot_key(out: Path) -> str:
    """The key of the loopback server's snapshots: $MCPSIM_SNAPSHOT_KEY, else one kept (mode 0600)
    in the run's folder, so a later --resume (another process, another server) restores what
    --keep-first suspended."""
    import os
    import secrets

    if os.environ.get("MCPSIM_SNAPSHOT_KEY"):
        return os.environ["MCPSIM_SNAPSHOT_KEY"]
    path = out / ".snapshot-key"
    if not path.exists():
        out.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_urlsafe(32))
    return path.read_text().strip()


def _spec_worlds_for_workers() -> Callable[[], object] | None:
    """What a Ray worker runs to load the spec worlds this process loaded (`--world-spec`,
    `--worlds-dir`): their files' texts, shipped with the run (a worker may be on a machine that
    has none of them), registered there as here."""
    from mcpsim.catalogue import register_shipped, shipped_specs

    shipped = shipped_specs()
    return partial(register_shipped, shipped) if shipped else None


def _backend(plan: RunConfig, stack: ExitStack) -> Any:
    from mcpsim.runner import HttpBackend, InProcessBackend, StdioBackend

    if plan.transport == "inprocess":
        from mcpsim.serve import EpisodeManager

        assert plan.templates is not None
        return InProcessBackend(EpisodeManager(plan.templates, max_episodes=plan.concurrency + 8, ttl_seconds=None))
    if plan.transport == "stdio":
        from mcpsim.catalogue import loaded_sources

        return StdioBackend(world_args=loaded_sources())
    url = plan.server_url
    if url is None:  # a loopback server in this process
        from mcpsim.serve import ServeConfig, create_app, serve_in_thread

        cache = str(plan.templates.cache_dir) if plan.templates and plan.templates.cache_dir else None
        import secrets

        token = secrets.token_urlsafe(32)  # the control plane is closed; only this process holds its token
        app = create_app(
            ServeConfig(
                world=plan.world,
                scale="small",
                max_episodes=plan.concurrency + 8,
                ttl_seconds=None,
                cache_dir=cache,
                snapshot_key=_loopback_snapshot_key(plan.out),
                token=token,
            )
        )
        url = stack.enter_context(serve_in_thread(app))
        return HttpBackend(url, token)
    return HttpBackend(url, plan.token)


async def _execute(plan: RunConfig) -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from mcpsim.runner import HttpBackend, RunError, run_episodes

    with ExitStack() as stack:
        backend = None if plan.executor == "ray" else _backend(plan, stack)
        with Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("pass {task.fields[passed]}"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        ) as progress:
            bar = progress.add_task(f"{plan.world} {plan.agent}", total=len(plan.tasks) * plan.trials, passed=0)

            def on_progress(t: Any) -> None:
                progress.update(bar, advance=1, passed=progress.tasks[0].fields["passed"] + (t.reward == 1.0))

            try:
                if backend is None:
                    from mcpsim.runner import run_on_ray

                    result = await run_on_ray(plan, on_progress=on_progress)
                else:
                    result = await run_episodes(plan, backend, plan.make_agent, plan.make_user, on_progress=on_progress)
            except RunError as exc:
                raise click.ClickException(str(exc)) from None
            finally:
                if isinstance(backend, HttpBackend):
                    await backend.aclose()
    (plan.out / "summary.json").write_text(result.summary.model_dump_json(indent=2))
    return result


DEMO_TASKS = 8


@main.command()
@click.option("--world", default="retail", show_default=True, help="The world to demonstrate.")
@click.option(
    "--tasks",
    "task_count",
    default=DEMO_TASKS,
    show_default=True,
    type=click.IntRange(min=1),
    help="How many tasks (one of each tag first).",
)
@_out_option("runs/demo", "Where the oracle's and the do-nothing agent's trajectories go.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='Print {"oracle": SUMMARY, "noop": SUMMARY} (each as in summary.json) instead of tables.',
)
@progress_option
@_apply(cache_options)
def demo(
    world: str,
    task_count: int,
    out_dir: str,
    as_json: bool,
    progress: bool | None,
    cache_dir: str | None,
    no_cache: bool,
) -> None:
    """Serve a world on 127.0.0.1, run the oracle and a do-nothing agent over real MCP (HTTP),
    grade every episode, print the results and write the trajectories. No configuration."""
    import shlex
    import shutil

    from mcpsim.runner import make_agent

    logs.configure("WARNING")
    find_world(world)
    task_set = find_tasks(world)
    picked: list[Any] = []
    for task in task_set.tasks:  # one task per leading tag first, for variety
        if len(picked) < task_count and task.tags[:1] not in [t.tags[:1] for t in picked]:
            picked.append(task)
    picked += [t for t in task_set.tasks if t not in picked][: task_count - len(picked)]
    if not picked:
        raise click.ClickException(f"world {world} has no tasks")
    templates = open_templates(cache_dir, no_cache)
    out = Path(out_dir)
    console = Console()
    steps = logs.Progress(progress)
    if not as_json:
        console.print(f"[bold]mcpsim demo[/bold]: {len(picked)} {world} tasks over MCP (streamable HTTP on 127.0.0.1)")
    summaries: dict[str, Any] = {}
    for agent in ("oracle", "noop"):
        shutil.rmtree(out / agent, ignore_errors=True)
        make_agent(agent)
        steps.step(
            f"serving {world} on 127.0.0.1 for the {agent} agent"
            + (" (its template is built once, then cached)" if agent == "oracle" else "")
        )
        result = anyio.run(
            _execute,
            RunConfig(
                world=world,
                tasks=picked,
                agent=agent,
                out=out / agent,
                templates=templates,
                concurrency=4,
                transport="http",
                timeout=60.0,
            ),
        )
        steps.step(f"{agent}: {result.summary.episodes} episodes graded, pass@1 {result.summary.pass_at_1:.3f}")
        summaries[agent] = result.summary.model_dump(mode="json")
        if not as_json:
            _print_summary(result, out / agent)
    if as_json:
        print_json(summaries)
        return
    console.print(
        "The oracle replays each task's gold actions and passes; the do-nothing agent fails every task "
        "(its partial reward is the share of checks a do-nothing agent should pass). Next: "
        "`mcpsim run retail --agent openai:MODEL --base-url URL`."
    )
    # not console.print: its wrapping would cut the command in two
    click.echo(
        "See every call, the rows it changed and each verdict in your browser, and compare the two agents:\n"
        f"  {shlex.join(['mcpsim', 'view', str(out / 'oracle'), str(out / 'noop')])}"
    )


@main.command()
@click.argument("run_path", metavar="RUN", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--format",
    "fmt",
    required=True,
    type=click.Choice(["openai", "trl", "verifiers", "parquet", "tokens"]),
    help="openai: chat fine-tuning JSONL (arguments as JSON strings); trl: arguments as objects; "
    "verifiers: its rollout records; parquet: one row per episode; tokens: each assistant turn's "
    "prompt and completion token ids and log-probabilities (runs made with --token-ids).",
)
@click.option(
    "--out",
    "dest",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The file to write [default: RUN/export.FORMAT.jsonl, or RUN/export.parquet].",
)
@click.option("--min-reward", type=float, help="Only episodes with at least this reward (1.0: passed only).")
def export(run_path: Path, fmt: str, dest: Path | None, min_reward: float | None) -> None:
    """Export a run's completed episodes (RUN: a run directory or a trajectories .jsonl) for training."""
    from mcpsim.trajectories import ExportError, export

    folder = run_path if run_path.is_dir() else run_path.parent
    logs.configure("WARNING")
    dest = dest or folder / ("export.parquet" if fmt == "parquet" else f"export.{fmt}.jsonl")
    try:
        report = export(run_path, fmt, dest, min_reward=min_reward)  # type: ignore[arg-type]
    except ExportError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(report.summary())
