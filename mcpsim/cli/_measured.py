"""Measured difficulty for the commands that select tasks: each task's features and tier
(`mcpsim.tasks.TaskFeatures`, for `mcpsim tasks --json` and `mcpsim run --tier`) and a calibration
file's pass rates (`mcpsim calibrate`, for `mcpsim run --calibration FILE --max-pass-rate R`).

A calibration file is JSON: the world, its version, the agent, the trials per task, and per task
id its trials, passes, pass@1 and pass^k (k = the trials), its features and tier.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from mcpsim.cli._lookup import find_world
from mcpsim.tasks import TaskFeatures

TIER_NAMES = ("easy", "medium", "hard")


def features_by_task(world: str, tasks: list[Any]) -> dict[str, TaskFeatures]:
    """Each task's measured features (its gold solution replayed once)."""
    w = find_world(world)
    return {t.id: TaskFeatures.of(t, w) for t in tasks}


def read_calibration(path: Path, world: str) -> dict[str, dict[str, Any]]:
    """Per task id, its measured pass rates (a `mcpsim calibrate` file of `world`)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise click.BadParameter(f"{path}: {exc}", param_hint="--calibration") from None
    if not isinstance(data, dict) or not isinstance(data.get("tasks"), dict):
        raise click.BadParameter(f"{path} is not a calibration file (no 'tasks')", param_hint="--calibration")
    if data.get("world") != world:
        raise click.BadParameter(f"{path} calibrates {data.get('world')!r}, not {world!r}", param_hint="--calibration")
    return data["tasks"]


def select_measured(
    world: str,
    tasks: list[Any],
    tier: str | None,
    calibration_path: Path | None,
    max_rate: float | None,
    min_rate: float | None,
) -> list[Any]:
    """The `tasks` of tier `tier` (if given) whose calibrated pass@1 lies within the bounds given
    (a task the file does not measure is left out when a bound is given)."""
    if (max_rate is not None or min_rate is not None) and calibration_path is None:
        raise click.UsageError("--max-pass-rate and --min-pass-rate need --calibration FILE (mcpsim calibrate)")
    if tier is not None:
        tiers = features_by_task(world, tasks)
        tasks = [t for t in tasks if tiers[t.id].tier == tier]
    if calibration_path is not None:
        measured = read_calibration(calibration_path, world)
        low, high = min_rate if min_rate is not None else 0.0, max_rate if max_rate is not None else 1.0
        tasks = [t for t in tasks if t.id in measured and low <= measured[t.id]["pass_at_1"] <= high]
    return tasks
