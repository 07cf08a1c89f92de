"""`mcpsim check`: proves a world's tasks are sound before anyone trusts their rewards.

For every task: the file validates; the gold actions replay and score 1.0 strict; replaying
them twice gives the same state hash; a do-nothing agent scores 0 strict, and every check's
`noop_passes` label says what a do-nothing agent really gets; no canary string appears in
anything an agent sees (policy, tool descriptions, instructions, tool results). For tasks with
injected faults: each gold call marked `expect: error` fails by an injected fault (not a business
error), and an agent that gives up at the first fault fails.

Every task is also run against a battery of cheating agents (`BASELINES`), each of which must
fail strictly, and against the task's own `alternatives` (other correct solutions: each must
pass) and `near_misses` (plausible wrong solutions: each must fail).

The battery lives in `_baselines`, the other solutions in `_solutions`, the gold replay in
`_gold_run` and the report's models in `_report`; this module drives them.
"""

from __future__ import annotations

import json
from collections.abc import Collection

from mcpsim.audit._baselines import BASELINE_LABELS, BASELINES, RATED, BaselineRun, run_baselines
from mcpsim.audit._conversation import instruction_message
from mcpsim.audit._gold_run import GoldRun, replay_gold
from mcpsim.audit._report import TaskReport, WorldReport
from mcpsim.audit._solutions import run_alternative_or_near_miss
from mcpsim.engine import TemplateCache, process_templates
from mcpsim.grading import Verifier
from mcpsim.tasks import Task, TaskFileError, load_tasks, task_episode
from mcpsim.world import World, load_world

__all__ = ["check_task", "check_world"]


def _visible_text(world: World) -> str:
    """What any agent sees before its first call."""
    return json.dumps([world.policy, world.title, world.description, [s.describe() for s in world.tools.values()]])


def check_task(
    world: World, verifier: Verifier, task: Task, canaries: set[str], *, baselines: bool | Collection[str] = True
) -> TaskReport:
    """Everything `mcpsim check` proves of one task; `baselines=False` leaves out the cheating
    battery (the rest still runs: gold twice, do-nothing and its labels, alternatives, near misses),
    a collection of names runs those baselines only. A baseline judged by its rate over the world
    (`RATED`) is reported, not a problem of the task."""
    problems: list[str] = []
    unknown = sorted({a.tool for a in task.gold} - set(world.tools))
    if unknown:
        problems.append(f"gold actions call unknown tools {unknown}")
    unknown_roles = sorted({t for role in task.roles.values() for t in role.tools} - set(world.tools))
    if unknown_roles:
        problems.append(f"roles name unknown tools {unknown_roles}")
    unknown_checks = sorted({c.name for c in task.rubric if c.type == "custom"} - set(world.checks))
    if unknown_checks:
        problems.append(f"rubric uses unknown custom checks {unknown_checks}")
    if problems:
        return TaskReport(task_id=task.id, ok=False, problems=problems)
    for canary in canaries:
        if canary in task.instruction or canary in task.user.model_dump_json():
            problems.append("the instruction or user script contains a canary string")

    runs: list[GoldRun] = []
    for _ in range(2):
        run = replay_gold(world, verifier, task, canaries, problems)
        if run is None:
            for earlier in runs:
                earlier.close()
            return TaskReport(task_id=task.id, ok=False, problems=problems)
        runs.append(run)
    runs[0].close()
    gold = runs[1]
    if runs[0].state_hash != gold.state_hash:
        problems.append(f"two gold runs end in different states ({runs[0].state_hash[:12]} vs {gold.state_hash[:12]})")

    problems += _give_up_passes(world, verifier, task)
    noop = task_episode(world, task, templates=verifier.templates)
    verdict = verifier.grade(noop, task, None, [instruction_message(task)])
    rubric = verdict.checks[: len(task.rubric)]  # a derived check (calls_made) must not hide a lax rubric
    if verdict.passed or (not verdict.failure and rubric and all(c.passed for c in rubric)):
        problems.append("a do-nothing agent passes this task" + ("" if verdict.passed else "'s rubric"))
    if verdict.failure:
        problems.append(f"grading a do-nothing agent failed closed: {verdict.failure}")
    for check in verdict.checks:
        if check.passed != check.noop_passes:
            problems.append(
                f"check {check.requirement!r} is labelled noop_passes={check.noop_passes}, "
                f"but a do-nothing agent {'passes' if check.passed else 'fails'} it ({check.reason})"
            )
    try:
        names = BASELINES if baselines is True else baselines or ()
        cheats = run_baselines(BaselineRun(world, verifier, task, noop, gold, [instruction_message(task)]), names)
    finally:
        noop.close()
        gold.close()
    for name, result in cheats.items():
        if result.applied and result.passed and name not in RATED:
            problems.append(
                f"the cheating baseline {name!r} ({BASELINE_LABELS[name]}) passes this task: {result.detail}"
            )
    solutions = [run_alternative_or_near_miss(world, verifier, task, s, "alternative") for s in task.alternatives]
    solutions += [run_alternative_or_near_miss(world, verifier, task, s, "near_miss") for s in task.near_misses]
    problems += [s.reason for s in solutions if not s.behaved]
    return TaskReport(
        task_id=task.id,
        ok=not problems,
        problems=problems,
        gold_reward=gold.reward,
        noop_reward=verdict.reward,
        noop_partial=verdict.partial_reward,
        state_hash=gold.state_hash,
        baselines=cheats,
        solutions=solutions,
    )


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


def check_world(name: str, templates: TemplateCache | None = None, *, baselines: bool = True) -> WorldReport:
    """`mcpsim check NAME`: every task of the world (see `check_task`)."""
    try:
        world = load_world(name)
        tasks = load_tasks(name)
    except (LookupError, TaskFileError) as exc:
        return WorldReport(world=name, ok=False, problems=[str(exc).strip("'\"")])
    problems = []
    if not tasks.tasks:
        problems.append("the world has no tasks")
    visible = _visible_text(world)
    problems += [
        f"canary {c[:24]}... appears in the policy or tool descriptions" for c in tasks.canaries if c in visible
    ]
    verifier = Verifier(world, tasks, templates=templates or process_templates())
    reports = [check_task(world, verifier, task, tasks.canaries, baselines=baselines) for task in tasks.tasks]
    ok = not problems and all(r.ok for r in reports)
    return WorldReport(world=name, world_version=world.version, ok=ok, problems=problems, tasks=reports)
