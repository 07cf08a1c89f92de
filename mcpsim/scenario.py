"""Episodes for tasks: the world at the task's seed and scale, plus its initial-state setup
(cached, so setup runs once per process), and the replay of a task's gold actions."""

from __future__ import annotations

import sqlite3
from typing import Literal

from mcpsim import sqlite
from mcpsim.episode import Episode
from mcpsim.faults import FaultProfile
from mcpsim.tasks import Action, SetupCall, SetupDelete, SetupInsert, SetupStep, SetupUpdate, Task
from mcpsim.templates import TemplateCache, process_templates
from mcpsim.world import World


class TaskSetupError(RuntimeError):
    pass


class GoldActionError(RuntimeError):
    pass


def task_episode(world: World, task: Task, *, templates: TemplateCache | None = None, id: str = "default",
                 faults: FaultProfile | None | Literal["task"] = "task") -> Episode:
    """A fresh episode of `task`: cloned from the task's cached template (world + setup), with
    the task's fault profile unless another (or None) is given."""
    templates = templates or process_templates()
    profile = task.fault_profile() if faults == "task" else faults
    edge = bool(profile and profile.edge_data and world.has_edge_data)
    data = templates.get_or_build(("task", world.name, world.version, task.id, edge),
                                  lambda: _build_task_template(world, task, templates, edge))
    episode = Episode.restore(world, data, id=id)
    if profile is not None:
        episode.set_faults(profile)
    return episode


def _build_task_template(world: World, task: Task, templates: TemplateCache, edge: bool) -> bytes:
    episode = Episode.restore(world, templates.get(world, task.seed, task.scale, edge_data=edge))
    try:
        for number, step in enumerate(task.setup, 1):
            try:
                apply_step(episode, step)
            except (ValueError, TaskSetupError, sqlite3.Error) as exc:
                raise TaskSetupError(f"task {task.id}: setup step {number}: {exc}") from None
        with episode._lock:
            sqlite.rebase(episode.conn, world.metadata)  # the setup's changes are the author's, not the agent's
            sqlite.write_meta(episode.conn, {"task": task.id})
        return episode.snapshot()
    finally:
        episode.close()


def apply_step(episode: Episode, step: SetupStep) -> None:
    match step:
        case SetupCall(call=tool, args=args):
            result = episode.call(tool, args)
            if result.is_error:
                raise TaskSetupError(f"{tool} failed: {result.error}")
        case SetupUpdate(update=table, where=where, set=values):
            t = episode.table(table)
            unknown = sorted(set(values) - set(t.columns.keys()))
            if unknown or not values:
                raise TaskSetupError(f"table {table} has no columns {unknown}" if unknown else "nothing to set")
            clause, params = sqlite.where_sql(t, where)
            assignments = ", ".join(f'"{c}" = ?' for c in values)
            if episode.edit(f'UPDATE "{table}" SET {assignments} WHERE {clause}', [*values.values(), *params]) == 0:
                raise TaskSetupError(f"no row of {table} matches {where}")
        case SetupInsert(insert=table, row=row):
            t = episode.table(table)
            unknown = sorted(set(row) - set(t.columns.keys()))
            if unknown:
                raise TaskSetupError(f"table {table} has no columns {unknown}")
            columns = ", ".join(f'"{c}"' for c in row)
            marks = ", ".join("?" * len(row))
            episode.edit(f'INSERT INTO "{table}" ({columns}) VALUES ({marks})', list(row.values()))
        case SetupDelete(delete=table, where=where):
            clause, params = sqlite.where_sql(episode.table(table), where)
            if episode.edit(f'DELETE FROM "{table}" WHERE {clause}', params) == 0:
                raise TaskSetupError(f"no row of {table} matches {where}")


def run_actions(episode: Episode, actions: list[Action]) -> None:
    """Replay actions (a task's gold solution); each must succeed, or fail where it says so."""
    for number, action in enumerate(actions, 1):
        result = episode.call(action.tool, action.args)
        if result.is_error and action.expect == "ok":
            raise GoldActionError(f"gold action {number} ({action.tool}) failed: {result.error}")
        if not result.is_error and action.expect == "error":
            raise GoldActionError(f"gold action {number} ({action.tool}) was expected to fail (a fault) "
                                  "but succeeded")



def oracle_answer(task: Task) -> str:
    return task.oracle_answer()
