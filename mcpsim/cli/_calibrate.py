"""`mcpsim calibrate`: pass@1 and pass^k per task from a model's trials, written to a calibration
file (`_measured` reads it back for `mcpsim run`'s selection)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import click

from mcpsim import logs
from mcpsim.cli._app import _apply, main, spec_options
from mcpsim.cli._lookup import find_tasks, find_world, open_templates
from mcpsim.cli._measured import features_by_task
from mcpsim.cli._output import print_table
from mcpsim.cli._running import _check_agent, _execute, _select_tasks
from mcpsim.grading import pass_hat_k
from mcpsim.runner import RunConfig
from mcpsim.tasks import TaskFeatures

CALIBRATION_FILE = "calibration.json"


def calibration(summary: Any, world: str, agent: str, trials: int, features: dict[str, TaskFeatures]) -> dict[str, Any]:
    """The calibration file's content from a run's summary."""
    tasks = {}
    for stats in summary.tasks:
        n, p = stats.trials, stats.passes
        tasks[stats.task_id] = {
            "trials": n,
            "passes": p,
            "pass_at_1": round(p / n, 4) if n else 0.0,
            "pass_hat_k": round(pass_hat_k([(p, n)], [n])[n], 4) if n else 0.0,
            **({"features": features[stats.task_id].model_dump()} if stats.task_id in features else {}),
        }
    return {
        "world": world,
        "world_version": find_world(world).version,
        "agent": agent,
        "trials": trials,
        "tasks": tasks,
    }


@main.command()
@click.argument("world")
@click.option(
    "--agent",
    "agent_spec",
    required=True,
    help="openai:MODEL (any OpenAI-compatible endpoint), or any agent run takes.",
)
@click.option("--trials", default=4, show_default=True, type=click.IntRange(min=1), help="Runs per task (pass^k).")
@click.option(
    "--tasks", "task_spec", default="all", show_default=True, help="all, a split, or comma-separated task ids."
)
@click.option(
    "--base-url", default=RunConfig.base_url, show_default=True, help="The agent's OpenAI-compatible endpoint."
)
@click.option("--api-key-env", default=RunConfig.api_key_env, show_default=True, help="Variable holding its API key.")
@click.option(
    "--concurrency",
    default=RunConfig.concurrency,
    show_default=True,
    type=click.IntRange(min=1),
    help="Episodes run at once.",
)
@click.option(
    "--out",
    "out_dir",
    default="runs/calibrate",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Where the run's trajectories go.",
)
@click.option("--resume", is_flag=True, help="Finish an earlier calibration run in --out.")
@click.option(
    "--calibration",
    "calibration_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help=f"Where the pass rates go [default: OUT/{CALIBRATION_FILE}].",
)
@click.option("--json", "as_json", is_flag=True, help="Print the calibration as JSON instead of a table.")
@_apply(spec_options)
def calibrate(
    world: str,
    agent_spec: str,
    trials: int,
    task_spec: str,
    base_url: str,
    api_key_env: str,
    concurrency: int,
    out_dir: str,
    resume: bool,
    calibration_path: Path | None,
    as_json: bool,
) -> None:
    """Measure each task's difficulty: run --agent --trials times on every task and write pass@1
    and pass^k per task (with its features and tier) to a JSON file that `mcpsim run --calibration
    FILE --max-pass-rate R` selects by. Exits 0 when the file is written."""
    logs.configure("WARNING")
    selected = _select_tasks(find_tasks(world), task_spec)
    if not selected:
        raise click.BadParameter(f"no task matches {task_spec!r}", param_hint="--tasks")
    _check_agent(agent_spec, base_url)
    plan = RunConfig(
        world=world,
        tasks=selected,
        agent=agent_spec,
        out=Path(out_dir),
        trials=trials,
        concurrency=concurrency,
        resume=resume,
        base_url=base_url,
        api_key_env=api_key_env,
        templates=open_templates(None, False),
    )
    result = anyio.run(_execute, plan)
    data = calibration(result.summary, world, agent_spec, trials, features_by_task(world, selected))
    path = calibration_path or Path(out_dir) / CALIBRATION_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    if as_json:
        click.echo(json.dumps(data, indent=2))
    else:
        rows = [
            [
                task_id,
                m.get("features", {}).get("tier", "?"),
                str(m["trials"]),
                f"{m['pass_at_1']:.2f}",
                f"{m['pass_hat_k']:.2f}",
            ]
            for task_id, m in data["tasks"].items()
        ]
        print_table(
            ["task", "tier", "trials", "pass@1", f"pass^{trials}"], rows, numbers=("trials", "pass@1", f"pass^{trials}")
        )
    click.echo(f"wrote {path}", err=True)
