"""Episodes for tasks: the world at the task's seed and scale, plus its initial-state setup
(cached, so setup runs once per process), and the replay of a task's gold actions or of any
other solution's steps (with the conversation a harness would have recorded)."""

from __future__ import annotations

import fnmatch
import json
import sqlite3
from typing import Any, Literal

from pydantic_core import to_jsonable_python

from mcpsim.engine import (
    CallResult,
    Episode,
    FaultProfile,
    TemplateCache,
    process_templates,
    rebase,
    where_sql,
    write_meta,
)
from mcpsim.tasks import datalock
from mcpsim.tasks._dialogue import confirmation_question, confirmation_reply, dialogue_steps, scripted_reply
from mcpsim.tasks._rubric import Confirmed
from mcpsim.tasks._task import (
    Action,
    Say,
    SetupCall,
    SetupDelete,
    SetupInsert,
    SetupStep,
    SetupUpdate,
    Step,
    Task,
)
from mcpsim.world import World


class TaskSetupError(RuntimeError):
    pass


class GoldActionError(RuntimeError):
    pass


def task_episode(
    world: World,
    task: Task,
    *,
    templates: TemplateCache | None = None,
    id: str = "default",
    faults: FaultProfile | None | Literal["task"] = "task",
) -> Episode:
    """A fresh episode of `task`: cloned from the task's cached template (world + setup), with
    the task's fault profile unless another (or None) is given."""
    templates = templates or process_templates()
    profile = task.fault_profile() if faults == "task" else faults
    edge = bool(profile and profile.edge_data and world.has_edge_data)
    data = templates.get_or_build(
        ("task", world.name, world.version, task.id, edge), lambda: _build_task_template(world, task, templates, edge)
    )
    episode = Episode.restore(world, data, id=id)
    if profile is not None:
        episode.set_faults(profile)
    return episode


def _build_task_template(world: World, task: Task, templates: TemplateCache, edge: bool) -> bytes:
    try:
        datalock.verify(world, task.seed, task.scale, templates.get(world, task.seed, task.scale))
    except datalock.StaleData as exc:
        raise TaskSetupError(f"task {task.id}: {exc}") from None
    episode = Episode.restore(world, templates.get(world, task.seed, task.scale, edge_data=edge))
    try:
        for number, step in enumerate(task.setup, 1):
            try:
                apply_step(episode, step)
            except (ValueError, TaskSetupError, sqlite3.Error) as exc:
                raise TaskSetupError(f"task {task.id}: setup step {number}: {exc}") from None
        with episode._lock:
            rebase(episode.conn, world.metadata)  # the setup's changes are the author's, not the agent's
            write_meta(episode.conn, {"task": task.id})
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
            clause, params = where_sql(t, where)
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
            clause, params = where_sql(episode.table(table), where)
            if episode.edit(f'DELETE FROM "{table}" WHERE {clause}', params) == 0:
                raise TaskSetupError(f"no row of {table} matches {where}")


def run_actions(episode: Episode, actions: list[Action]) -> None:
    """Replay actions (a task's gold solution); each must succeed, or fail where it says so."""
    for number, action in enumerate(actions, 1):
        result = episode.call(action.tool, action.args)
        if result.is_error and action.expect == "ok":
            raise GoldActionError(f"gold action {number} ({action.tool}) failed: {result.error}")
        if not result.is_error and action.expect == "error":
            raise GoldActionError(f"gold action {number} ({action.tool}) was expected to fail (a fault) but succeeded")


def run_solution(episode: Episode, task: Task, steps: list[Step]) -> list[dict[str, Any]]:
    """Run a solution's steps on `episode` and return the conversation a harness would have
    recorded (OpenAI-style message dicts), without the final answer: the user's instruction,
    then for an Action the assistant's tool call and the tool's result (its JSON, or
    "Error: ..."), for a Say the assistant's message and the scripted user's reply, as a live run
    gets it (`scripted_reply`: the go-ahead, a detail asked for, the next scripted turn). Each
    action must succeed, or fail where it says `expect: error`; a Say after which the user has
    nothing more to say ends a live run, so steps after it are a GoldActionError too."""
    conversation: list[dict[str, Any]] = [{"role": "user", "content": task.instruction}]
    calls = 0
    for number, step in enumerate(steps, 1):
        if isinstance(step, Say):
            conversation.append({"role": "assistant", "content": step.say})
            reply = scripted_reply(task, conversation)
            if reply is None:
                if number < len(steps):
                    raise GoldActionError(f"step {number} (say) gets no reply: a live run would end there")
                reply = confirmation_reply(step.say, task, conversation)  # the last step: what it says is recorded
            conversation.append({"role": "user", "content": reply})
            continue
        result = episode.call(step.tool, step.args)
        call_id = f"call_{calls}"
        calls += 1
        conversation.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": step.tool, "arguments": json.dumps(step.args)},
                    }
                ],
            }
        )
        conversation.append(
            {"role": "tool", "tool_call_id": call_id, "name": step.tool, "content": result_text(result)}
        )
        if result.is_error and step.expect == "ok":
            raise GoldActionError(f"step {number} ({step.tool}) failed: {result.error}")
        if not result.is_error and step.expect == "error":
            raise GoldActionError(f"step {number} ({step.tool}) was expected to fail (a fault) but succeeded")
    return conversation


def result_text(result: CallResult) -> str:
    """A call's result as an agent reads it: the value's JSON, or the error."""
    if result.is_error:
        return f"Error: {result.error}"
    return json.dumps(to_jsonable_python(result.value, fallback=str))


def gold_steps(task: Task, world: World) -> list[Step]:
    """The gold actions as solution steps: with a request for the go-ahead that names them
    (`confirmation_question`) before the first action that a `confirmed` check of the rubric
    needs confirmed, and the task's dialogue, if it has one (`_dialogue.dialogue_steps`)."""
    steps: list[Step] = list(task.gold)
    confirmed = [c for c in task.rubric if isinstance(c, Confirmed)]
    needed = [i for i, a in enumerate(task.gold) if any(_needs_confirmation(world, a, c) for c in confirmed)]
    if needed:
        steps.insert(needed[0], Say(say=confirmation_question([task.gold[i] for i in needed])))
    return dialogue_steps(task, steps)  # a generated task's questions and turned-down requests (`_asking`)


def _needs_confirmation(world: World, action: Action, check: Confirmed) -> bool:
    spec = world.tools.get(action.tool)
    if check.tools == "writes":
        return spec is not None and spec.writes
    return any(fnmatch.fnmatchcase(action.tool, pattern) for pattern in check.tools)


def oracle_answer(task: Task) -> str:
    return task.oracle_answer()
