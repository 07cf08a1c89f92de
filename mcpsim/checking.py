"""`mcpsim check`: proves a world's tasks are sound before anyone trusts their rewards.

For every task: the file validates; the gold actions replay and score 1.0 strict; replaying
them twice gives the same state hash; a do-nothing agent scores 0 strict, and every check's
`noop_passes` label says what a do-nothing agent really gets; no canary string appears in
anything an agent sees (policy, tool descriptions, instructions, tool results). For tasks with
injected faults: each gold call marked `expect: error` fails by an injected fault (not a business
error), and an agent that gives up at the first fault fails.
"""

from __future__ import annotations

import json

from pydantic import BaseModel

from mcpsim.registry import load_world
from mcpsim.scenario import oracle_answer, run_actions, task_episode
from mcpsim.tasks import Task, TaskFileError, load_tasks
from mcpsim.templates import TemplateCache, process_templates
from mcpsim.verifier import Verifier
from mcpsim.world import World


class TaskReport(BaseModel):
    task_id: str
    ok: bool
    problems: list[str]
    gold_reward: float | None = None
    noop_reward: float | None = None
    noop_partial: float | None = None
    state_hash: str | None = None


class WorldReport(BaseModel):
    world: str
    world_version: str | None = None
    ok: bool
    problems: list[str]
    tasks: list[TaskReport] = []

    @property
    def task_count(self) -> int:
        return len(self.tasks)


def _visible_text(world: World) -> str:
    """What any agent sees before its first call."""
    return json.dumps([world.policy, world.title, world.description, [s.describe() for s in world.tools.values()]])


def check_task(world: World, verifier: Verifier, task: Task, canaries: set[str]) -> TaskReport:
    problems: list[str] = []
    unknown = sorted({a.tool for a in task.gold} - set(world.tools))
    if unknown:
        problems.append(f"gold actions call unknown tools {unknown}")
    unknown_checks = sorted({c.name for c in task.rubric if c.type == "custom"} - set(world.checks))
    if unknown_checks:
        problems.append(f"rubric uses unknown custom checks {unknown_checks}")
    if problems:
        return TaskReport(task_id=task.id, ok=False, problems=problems)
    for canary in canaries:
        if canary in task.instruction or canary in task.user.model_dump_json():
            problems.append("the instruction or user script contains a canary string")

    hashes = []
    gold_reward = None
    for _ in range(2):
        episode = task_episode(world, task, templates=verifier.templates)
        try:
            run_actions(episode, task.gold)
        except Exception as exc:
            problems.append(str(exc))
            episode.close()
            return TaskReport(task_id=task.id, ok=False, problems=problems)
        hashes.append(episode.state_hash())
        transcript = episode.transcript()
        for number, (action, record) in enumerate(zip(task.gold, transcript, strict=False), 1):
            if action.expect == "error" and not record.fault:
                problems.append(f"gold action {number} ({action.tool}) is expected to fail by an injected fault, "
                                f"but it failed on its own: {record.error}")
        seen = json.dumps([c.result for c in episode.transcript()], default=str)
        if any(canary in seen for canary in canaries):
            problems.append("a tool result of the gold run contains a canary string")
        verdict = verifier.grade(episode, task, oracle_answer(task))
        gold_reward = verdict.reward
        if not verdict.passed:
            problems.append("the gold actions do not pass: " + (verdict.failure or "; ".join(
                f"{c.requirement} ({c.reason})" for c in verdict.checks if not c.passed)))
        episode.close()
    if hashes[0] != hashes[1]:
        problems.append(f"two gold runs end in different states ({hashes[0][:12]} vs {hashes[1][:12]})")

    problems += _give_up_passes(world, verifier, task)
    noop = task_episode(world, task, templates=verifier.templates)
    verdict = verifier.grade(noop, task, None)
    noop.close()
    if verdict.passed:
        problems.append("a do-nothing agent passes this task")
    if verdict.failure:
        problems.append(f"grading a do-nothing agent failed closed: {verdict.failure}")
    for check in verdict.checks:
        if check.passed != check.noop_passes:
            problems.append(f"check {check.requirement!r} is labelled noop_passes={check.noop_passes}, "
                            f"but a do-nothing agent {'passes' if check.passed else 'fails'} it ({check.reason})")
    return TaskReport(task_id=task.id, ok=not problems, problems=problems, gold_reward=gold_reward,
                      noop_reward=verdict.reward, noop_partial=verdict.partial_reward, state_hash=hashes[0])


def _give_up_passes(world: World, verifier: Verifier, task: Task) -> list[str]:
    """A task that injects faults must fail an agent that gives up at the first one."""
    first = next((i for i, a in enumerate(task.gold) if a.expect == "error"), None)
    if first is None:
        return []
    episode = task_episode(world, task, templates=verifier.templates)
    try:
        for action in task.gold[: first + 1]:
            episode.call(action.tool, action.args)
        verdict = verifier.grade(episode, task, "Sorry, the system is failing right now; please try again later.")
    finally:
        episode.close()
    if verdict.passed:
        return ["an agent that gives up at the first injected fault passes this task"]
    return []


def check_world(name: str, templates: TemplateCache | None = None) -> WorldReport:
    try:
        world = load_world(name)
        tasks = load_tasks(name)
    except (LookupError, TaskFileError) as exc:
        return WorldReport(world=name, ok=False, problems=[str(exc).strip("'\"")])
    problems = []
    if not tasks.tasks:
        problems.append("the world has no tasks")
    visible = _visible_text(world)
    problems += [f"canary {c[:24]}... appears in the policy or tool descriptions" for c in tasks.canaries if c in visible]
    verifier = Verifier(world, tasks, templates=templates or process_templates())
    reports = [check_task(world, verifier, task, tasks.canaries) for task in tasks.tasks]
    ok = not problems and all(r.ok for r in reports)
    return WorldReport(world=name, world_version=world.version, ok=ok, problems=problems, tasks=reports)
