"""The world factory: `mcpsim gen --validate SPEC` (the validation report), `mcpsim gen --serve
SPEC` (the spec's world over stdio), and `mcpsim gen --from-mcp` (a twin of a real MCP server)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from mcpsim.cli._app import main, sandbox_check
from mcpsim.cli._lookup import DEFAULT_CACHE

DEFAULT_REPLIES = DEFAULT_CACHE.parent / "replies"  # --describe: the model's replies, by request hash
TASKS = 10  # --tasks, but with --from-mcp


@main.command("gen", context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED, metavar="SPEC | -- COMMAND [ARGS]...")
@click.option("--validate", "mode", flag_value="validate", default=True, help="Validate the spec's world (default).")
@click.option("--serve", "mode", flag_value="serve", help="Serve the spec's world over stdio.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of the world's data.")
@click.option("--scale", default="small", show_default=True, help="One of the spec's scales.")
@click.option(
    "--from-mcp",
    "from_mcp",
    is_flag=False,
    flag_value="-",
    default=None,
    metavar="[URL]",
    help="Write a twin of a real MCP server: at URL, or started as the command after --.",
)
@click.option(
    "--recording",
    "recordings",
    multiple=True,
    type=click.Path(exists=True),
    help="With --from-mcp: a `mcpsim record` directory whose data, answers and errors seed the twin (repeatable).",
)
@click.option(
    "--out",
    type=click.Path(),
    help="With --from-mcp: where to write the twin spec (JSON); with --describe: the spec (YAML); "
    "with --catalog: the output directory.",
)
@click.option("--describe", metavar="TEXT", help="Have a model write a world spec for this description.")
@click.option(
    "--model",
    metavar="openai:MODEL",
    help="With --describe: the model that writes the spec; with --from-mcp: one that reviews the twin's operations.",
)
@click.option(
    "--base-url",
    default="https://api.openai.com/v1",
    show_default=True,
    envvar="OPENAI_BASE_URL",
    help="With --model: the endpoint (vLLM, SGLang, ...) [env OPENAI_BASE_URL]; the key: OPENAI_API_KEY.",
)
@click.option(
    "--rounds",
    type=click.IntRange(0, 10),
    default=3,
    show_default=True,
    help="With --describe: repairs asked for after the first answer.",
)
@click.option(
    "--reply-cache",
    type=click.Path(file_okay=False),
    default=str(DEFAULT_REPLIES),
    show_default=True,
    help="With --model: the model's replies, by request hash (the same replies give the same world).",
)
@click.option(
    "--catalog",
    is_flag=True,
    help="Write --count distinct validated worlds from the blueprint catalogue into --out (docs/catalogue.md).",
)
@click.option("--count", type=click.IntRange(min=1), default=10, show_default=True, help="With --catalog: worlds.")
@click.option(
    "--workers", type=click.IntRange(min=1), default=None, help="With --catalog: processes (default: the cores)."
)
@click.option(
    "--tasks",
    "task_count",
    type=click.IntRange(min=0),
    default=None,
    help="Tasks generated and validated per world (a SPEC's own tasks are validated too) [default: 10]; "
    "with --from-mcp: tasks written beside the twin (OUT's name with .tasks.yaml) [default: none].",
)
def gen(
    args: tuple[str, ...],
    mode: str,
    seed: int,
    scale: str,
    from_mcp: str | None,
    recordings: tuple[str, ...],
    out: str | None,
    catalog: bool,
    count: int,
    workers: int | None,
    task_count: int | None,
    describe: str | None,
    model: str | None,
    base_url: str,
    rounds: int,
    reply_cache: str,
) -> None:
    """Compile a world spec (YAML or JSON) and validate or serve it. Exits 1 when validation rejects
    it. A twin spec (written by --from-mcp) is validated by serving it and checking every tool
    against the real server's schemas.

    With --from-mcp, connect to a real MCP server (a URL, or a stdio command after --), infer its
    entities and operations, and write a twin spec whose tools have the same names and input
    schemas; the report (tools mirrored, schemas equal, answers valid) goes to stdout. With
    --tasks N, also write N audited tasks over the twin beside it (exit 1 if none could be made).

    With --describe TEXT --model openai:MODEL, a model writes the spec, repaired with the
    validator's errors until it passes every check (exit 1 if it never does); the spec goes to
    --out (YAML), the rounds and the validation report to stdout."""
    from mcpsim.acceptance.__main__ import main as factory

    if from_mcp is not None:
        _twin(from_mcp, list(args), recordings, out, seed, model, base_url, Path(reply_cache), task_count)
        return
    task_count = TASKS if task_count is None else task_count
    if describe is not None:
        _describe(describe, model, base_url, rounds, Path(reply_cache), out, seed, scale, task_count)
        return
    if catalog:
        if args or not out:
            raise click.UsageError("--catalog takes no SPEC and needs --out DIR")
        _catalog(out, count, seed, workers, task_count)
        return
    if len(args) != 1:
        raise click.UsageError("give one SPEC file (or --from-mcp)")
    spec = args[0]
    if not Path(spec).is_file():
        raise click.BadParameter(f"{spec!r} is not a file", param_hint="SPEC")
    from mcpsim.twins import is_twin_file

    if is_twin_file(spec):
        sandbox_check(spec)
        _twin_file(spec, mode, seed)
        return
    if mode == "serve":
        sandbox_check(spec)
        sys.exit(factory(["serve", spec, "--seed", str(seed), "--scale", scale]))
    from mcpsim._sandbox import CompileRefused
    from mcpsim.acceptance.__main__ import validate_file
    from mcpsim.logs import configure

    configure("WARNING")  # stdout is the report
    try:  # in the sandbox: the spec is untrusted data (docs/security.md)
        said = validate_file(spec, seed=seed, scale=scale, task_count=task_count)
    except (CompileRefused, ValueError) as exc:
        raise click.ClickException(f"{spec}: {exc}") from None
    if "error" in said:
        raise click.ClickException(said["error"])
    report = said["report"]
    click.echo(json.dumps(report, indent=2))
    if not report["accepted"]:
        failed = [criterion for criterion, count in report["failures_per_criterion"].items() if count]
        click.echo(f"rejected by: {', '.join(failed)}", err=True)
        sys.exit(1)


def _twin(
    source: str,
    command: list[str],
    recordings: tuple[str, ...],
    out: str | None,
    seed: int,
    model: str | None,
    base_url: str,
    cache: Path,
    task_count: int | None = None,
) -> None:
    import anyio

    from mcpsim.logs import configure
    from mcpsim.twins import check_twin, infer_twin, read_surface
    from mcpsim.twins.recordings import learn, load_recording

    if source != "-" and command:
        raise click.UsageError("give --from-mcp a URL or a command after --, not both")
    target: str | list[str] = command if source == "-" else source
    if not out:
        raise click.UsageError("--from-mcp needs --out FILE for the twin spec")
    configure("WARNING")  # stdout is the report
    try:
        surface = anyio.run(lambda: read_surface(target, env=dict(os.environ)))
    except (OSError, ValueError) as exc:
        raise click.ClickException(f"cannot read the server: {exc}") from None
    spec = infer_twin(surface)
    reviewed = None
    if model is not None:
        spec, reviewed = _reviewed(spec, model, base_url, cache)
    if recordings:
        try:
            spec = learn(spec, [load_recording(r) for r in recordings])
        except ValueError as exc:  # a recording past a bound or not what `mcpsim record` writes
            raise click.ClickException(str(exc)) from None
    Path(out).write_text(spec.model_dump_json(indent=2) + "\n", encoding="utf-8")
    report = anyio.run(lambda: check_twin(spec, surface.tools, seed=seed))
    head = {"twin": out, "server": spec.server.get("name")} | ({"model": reviewed} if reviewed else {})
    tasks = _twin_tasks(spec, Path(out), task_count, seed) if task_count else {}
    click.echo(json.dumps(head | report | tasks, indent=2, default=str))
    if tasks and not tasks["tasks"]["kept"]:
        why = "; ".join(tasks["tasks"]["failures"].get("tasks_generated", [])) or "no sound candidate"
        raise click.ClickException(f"no task could be made for the twin ({why})")


def _twin_tasks(spec: Any, out: Path, count: int, seed: int) -> dict[str, Any]:
    """`count` audited tasks over the twin (`validate_twin_tasks`), written beside it as
    OUT.tasks.yaml, where `--world-spec OUT` finds them; what was generated and kept."""
    import yaml

    from mcpsim.twins import twin_task_set, validate_twin_tasks

    report = validate_twin_tasks(spec, count=count, seed=seed)
    summary: dict[str, Any] = {
        "asked": count,
        "kept": len(report.tasks),
        "candidates_dropped": report.dropped,
        "failures": {k: v for k, v in report.failures.items() if v},
    }
    path = out.with_name(f"{out.stem}.tasks.yaml")
    if report.tasks:
        data = twin_task_set(spec, report.tasks).files[0].model_dump(mode="json", exclude_defaults=True)
        path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
        summary["file"] = str(path)
        click.echo(f"{len(report.tasks)} of {count} tasks generated and kept, written to {path}", err=True)
    else:
        path.unlink(missing_ok=True)  # an earlier twin's tasks would be loaded with this one
    return {"tasks": summary}


def _chat(model: str | None, base_url: str) -> Any:
    from mcpsim.runner import ChatClient

    if not model or not model.startswith("openai:") or model == "openai:":
        raise click.BadParameter("give the model as openai:MODEL", param_hint="--model")
    return ChatClient(model=model.split(":", 1)[1], base_url=base_url, temperature=0)


def _reviewed(spec: Any, model: str, base_url: str, cache: Path) -> tuple[Any, dict[str, Any]]:
    """The twin's operations as a model corrects them (`--model` with `--from-mcp`)."""
    import anyio

    from mcpsim.runner import ModelError
    from mcpsim.twins import refine_with_model

    client = _chat(model, base_url)

    async def ask() -> tuple[Any, dict[str, Any]]:
        try:
            return await refine_with_model(spec, client, cache_dir=cache)
        finally:
            await client.aclose()

    try:
        return anyio.run(ask)
    except ModelError as exc:
        raise click.ClickException(str(exc)) from None


def _twin_file(path: str, mode: str, seed: int) -> None:
    import anyio

    from mcpsim.logs import configure
    from mcpsim.twins import check_twin, compile_twin, load_twin

    configure("WARNING")  # stdout is the MCP channel, or the report
    try:
        spec = load_twin(path)
    except ValueError as exc:  # past its bound, or not a twin spec
        raise click.ClickException(str(exc)) from None
    if mode == "serve":
        from mcpsim.engine import Episode, TemplateCache
        from mcpsim.serve import serve_stdio

        world = compile_twin(spec)
        serve_stdio(world, Episode.create(world, seed, "default", templates=TemplateCache(None)))
        return
    report = anyio.run(lambda: check_twin(spec, spec.real_tools(), seed=seed))
    click.echo(json.dumps(report, indent=2, default=str))
    equal = min(report["schemas_equal"], report["output_schemas_equal"])
    if report["answers_ok"] != report["tools"] or equal != report["tools"]:
        sys.exit(1)


def _describe(
    text: str,
    model: str | None,
    base_url: str,
    rounds: int,
    cache: Path,
    out: str | None,
    seed: int,
    scale: str,
    task_count: int,
) -> None:
    import anyio
    import yaml

    from mcpsim._sandbox import CompileLimits
    from mcpsim.acceptance import DescribeError, describe_world
    from mcpsim.logs import configure
    from mcpsim.runner import ModelError

    if not out:
        raise click.UsageError("--describe needs --out FILE for the spec")
    try:
        limits = CompileLimits.from_env()  # each answer is validated in the sandbox
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    client = _chat(model, base_url)
    configure("WARNING")  # stdout is the report

    async def ask() -> Any:
        try:
            return await describe_world(
                text,
                client,
                cache_dir=cache,
                rounds=rounds,
                seed=seed,
                scale=scale,
                task_count=task_count,
                sandbox=limits,
            )
        finally:
            await client.aclose()

    try:
        found = anyio.run(ask)
    except DescribeError as exc:
        click.echo(json.dumps({"accepted": False, "rounds": [r.to_json() for r in exc.rounds]}, indent=2))
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    except (ModelError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    data = found.spec.model_dump(mode="json", exclude_defaults=True)
    Path(out).write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    report = {"spec": out, "accepted": True, "rounds": [r.to_json() for r in found.rounds]}
    click.echo(json.dumps(report | {"validation": found.report}, indent=2, default=str))


def _catalog(out: str, count: int, seed: int, workers: int | None, task_count: int) -> None:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from mcpsim.catalogue import run_catalogue
    from mcpsim.logs import configure

    configure("WARNING")
    console = Console(stderr=True)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console) as bar:
        accepted = bar.add_task("worlds accepted", total=count)

        def progress(result: Any, done: int) -> None:
            bar.update(accepted, completed=done)
            if not result.accepted:
                bar.console.print(f"rejected {result.name}: {', '.join(result.rejected_by)}")

        report = run_catalogue(out, count, seed, workers=workers, task_count=task_count, progress=progress)
    click.echo(json.dumps(report.to_json(), indent=2))
    rejections = ", ".join(f"{c} {n}" for c, n in report.rejections_per_criterion.items() if n) or "none"
    console.print(
        f"{report.worlds} worlds, {report.tools} tools, {report.tasks} tasks, {report.distinct_tool_sets} distinct "
        f"tool sets; {report.rejected} rejected ({rejections}); {report.seconds:.0f} s on {report.workers} workers"
    )
    if report.worlds < count:
        sys.exit(1)
