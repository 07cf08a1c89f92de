"""Grading time per task: `Verifier.grade` on oracle-solved task episodes. The first grade of a
task replays its gold solution (cached afterwards): reported apart from the steady state. The
state hash the verdict carries is timed on its own too. A synthetic retail task, identical at
the default and the large scale, shows how grading grows with the database."""

from __future__ import annotations

import time
from typing import Any

from benchmarks.common import Interleaved, median, rotations, stats
from benchmarks.context import Context

MAX_TASKS = 12  # per world in full mode (each grade hashes the whole database: up to 0.5 s)


_CONVERSATIONS: dict[tuple[str, str], list[dict[str, Any]]] = {}  # the gold dialogue, per task


def _solved(world: Any, task: Any, templates: Any) -> Any:
    """A task episode after its gold solution (with the confirmation turn its rubric may check)."""
    from mcpsim.tasks import gold_steps, run_solution, task_episode

    episode = task_episode(world, task, templates=templates)
    _CONVERSATIONS[(world.name, task.id)] = run_solution(episode, task, gold_steps(task, world))
    return episode


def _grade(verifier: Any, episode: Any, task: Any) -> tuple[float, Any]:
    conversation = _CONVERSATIONS.get((verifier.world.name, task.id))
    start = time.perf_counter()
    verdict = verifier.grade(episode, task, task.oracle_answer(), conversation=conversation)
    return time.perf_counter() - start, verdict


def _world(ctx: Context, name: str, world: Any) -> dict[str, Any]:
    from mcpsim.grading import Verifier
    from mcpsim.tasks import load_tasks, task_episode

    tasks = load_tasks(name)
    chosen = tasks.tasks[:5] if ctx.quick else tasks.tasks[:MAX_TASKS]
    steady_n = 2
    verifier = Verifier(world, tasks, templates=ctx.templates)
    first, steady, hashes, setups = [], [], [], []
    per_task, failed = [], []
    for task in chosen:
        try:
            start = time.perf_counter()
            task_episode(world, task, templates=ctx.templates).close()  # builds the task's template (setup)
            setups.append(time.perf_counter() - start)
            episodes = [_solved(world, task, ctx.templates) for _ in range(1 + steady_n)]
        except Exception as exc:
            failed.append({"task": task.id, "error": f"{type(exc).__name__}: {exc}"[:300]})
            continue
        try:
            t_first, verdict = _grade(verifier, episodes[0], task)
            times = [_grade(verifier, e, task) for e in episodes[1:]]
            start = time.perf_counter()
            episodes[-1].state_hash()
            hashes.append(time.perf_counter() - start)
        finally:
            for e in episodes:
                e.close()
        verdicts = [verdict] + [v for _, v in times]
        if not all(v.passed for v in verdicts):
            bad = next(v for v in verdicts if not v.passed)
            failed.append({"task": task.id, "error": f"oracle not passed: {bad.failure or 'a check failed'}"[:300]})
        first.append(t_first)
        steady.extend(t for t, _ in times)
        per_task.append(
            {
                "task": task.id,
                "first_ms": round(t_first * 1e3, 3),
                "steady_ms": round(median(t for t, _ in times) * 1e3, 3),
                "checks": len(task.rubric),
            }
        )
    return {
        "tasks": len(chosen),
        "graded": len(per_task),
        "failed": failed,
        "first_grade": stats(first),
        "steady_grade": stats(steady),
        "state_hash": stats(hashes),
        "task_template_build": stats(setups),
        "per_task": per_task,
    }


def _bench_task(ctx: Context, scale: str) -> Any:
    """The same task at any scale: add an address for the first customer, and check it the way
    real rubrics do (rows, gold state, allowed changes, transcript, answer)."""
    from mcpsim.engine import Episode

    world = ctx.worlds["retail"]
    episode = Episode.create(world, 0, scale, templates=ctx.templates)
    try:
        customer = episode.query("SELECT id, email FROM customers ORDER BY id LIMIT 1")[0]
        count = episode.query("SELECT count(*) AS n FROM addresses WHERE customer_id = ?", (customer["id"],))[0]["n"]
    finally:
        episode.close()
    where = {"customer_id": customer["id"], "line1": "1 Verifier Way"}
    return {
        "id": f"bench-address-{scale}",
        "scale": scale,
        "seed": 0,
        "difficulty": "easy",
        "split": "dev",
        "instruction": "Add 1 Verifier Way, Springfield CA 94107 to my address book.",
        "gold": [
            {"tool": "find_customer_by_email", "args": {"email": customer["email"]}},
            {
                "tool": "add_customer_address",
                "args": {
                    "customer_id": customer["id"],
                    "line1": "1 Verifier Way",
                    "city": "Springfield",
                    "state": "CA",
                    "zip": "94107",
                },
            },
            {"tool": "get_customer_details", "args": {"customer_id": customer["id"]}},
        ],
        "answer": ["1 Verifier Way"],
        "rubric": [
            {
                "type": "row_exists",
                "requirement": "The new address is stored",
                "noop_passes": False,
                "table": "addresses",
                "where": where,
            },
            {
                "type": "field_equals",
                "requirement": "The address has the right city and ZIP",
                "noop_passes": False,
                "table": "addresses",
                "where": where,
                "values": {"city": "Springfield", "zip": "94107"},
            },
            {
                "type": "row_count",
                "requirement": "Exactly one address was added",
                "noop_passes": False,
                "table": "addresses",
                "where": {"customer_id": customer["id"]},
                "equals": count + 1,
            },
            {"type": "gold_state", "requirement": "The final state equals the gold state", "noop_passes": False},
            {"type": "allowed_changes", "requirement": "Nothing else was changed", "noop_passes": True},
            {
                "type": "tool_called",
                "requirement": "The address tool was called",
                "noop_passes": False,
                "tool": "add_customer_address",
                "args": {"customer_id": customer["id"]},
            },
            {
                "type": "call_order",
                "requirement": "The customer was identified before any write",
                "noop_passes": True,
                "first": ["find_customer_*"],
            },
            {"type": "answer_facts", "requirement": "The answer names the new address", "noop_passes": False},
        ],
    }


def _scaling(ctx: Context) -> dict[str, Any]:
    from mcpsim.grading import Verifier
    from mcpsim.tasks import CANARY_PREFIX, TaskSet

    world = ctx.worlds["retail"]
    scales = ctx.world_scales(world)
    taskset = TaskSet.model_validate(
        {
            "world": "retail",
            "files": [
                {
                    "world": "retail",
                    "canary": f"{CANARY_PREFIX}-benchmark-0123456789abcdef",
                    "tasks": [_bench_task(ctx, s) for s in scales],
                }
            ],
        }
    )
    verifier = Verifier(world, taskset, templates=ctx.templates)
    tasks = {s: taskset.get(f"bench-address-{s}") for s in scales}
    out: dict[str, Any] = {
        "task": "add an address, 8 checks (rows, gold_state, allowed_changes, transcript, answer)",
        "scales": {},
    }
    firsts = {}
    for scale, task in tasks.items():
        episode = _solved(world, task, ctx.templates)
        try:
            seconds, verdict = _grade(verifier, episode, task)
        finally:
            episode.close()
        firsts[scale] = (seconds, verdict.passed, verdict.failure)
    grades, hashes = Interleaved(), Interleaved()
    rounds = 3 if ctx.quick else 8
    for order in rotations(scales, rounds):
        for scale in order:
            episode = _solved(world, tasks[scale], ctx.templates)
            try:
                seconds, _ = _grade(verifier, episode, tasks[scale])
                start = time.perf_counter()
                episode.state_hash()
                hashed = time.perf_counter() - start
            finally:
                episode.close()
            grades.add_round(scale, [seconds])
            hashes.add_round(scale, [hashed])
    g, h = grades.summary("default"), hashes.summary("default")
    for scale in scales:
        seconds, passed, failure = firsts[scale]
        out["scales"][scale] = {
            "first_grade_ms": round(seconds * 1e3, 3),
            "passed": passed,
            "failure": failure,
            "steady_grade": g[scale],
            "state_hash": h[scale],
        }
    return out


def run(ctx: Context) -> dict[str, Any]:
    out: dict[str, Any] = {"worlds": {}}
    names = ["retail"] if ctx.quick else list(ctx.worlds)
    for name in names:
        if name not in ctx.worlds:
            continue
        print(f"  grading {name}", flush=True)
        try:
            out["worlds"][name] = _world(ctx, name, ctx.worlds[name])
        except Exception as exc:
            import traceback

            traceback.print_exc()
            ctx.skip("grading", name, f"{type(exc).__name__}: {exc}"[:300])
    if "retail" in ctx.worlds:
        print("  grading: default vs large (synthetic retail task)", flush=True)
        try:
            out["scaling"] = _scaling(ctx)
        except Exception as exc:
            import traceback

            traceback.print_exc()
            ctx.skip("grading", "scaling", f"{type(exc).__name__}: {exc}"[:300])
    return out
