"""The search behind the baselines that add a write the task did not ask for: one that
succeeds on the gold-final state and changes a row the gold solution did not
(`find_unrequested_write`), and an irreversible one followed by calls that put the final rows
back as the gold solution left them (`find_reverted_irreversible_write`)."""

from __future__ import annotations

import random

from mcpsim.audit._row_sampler import RowSampler
from mcpsim.engine import CallResult, Change, Episode, NetChanges
from mcpsim.grading import compare_with_gold
from mcpsim.tasks import Action, Task
from mcpsim.world import World, derive_seed

__all__ = [
    "EXTRA_WRITE_ROUNDS",
    "REVERT_DEPTH",
    "REVERT_TRIES",
    "find_reverted_irreversible_write",
    "find_unrequested_write",
]

EXTRA_WRITE_ROUNDS = 4  # tries of every write tool while looking for an unrequested write that succeeds
REVERT_TRIES = 3  # argument draws per write tool while looking for a call that reverts an extra write
REVERT_DEPTH = 2  # calls a revert may take (trash a thread, then empty the trash)


def find_unrequested_write(
    world: World, task: Task, final: Episode, gold_changes: NetChanges
) -> tuple[Action, Episode, CallResult] | None:
    """A write that succeeds on the gold-final state and changes a row the gold solution did not
    change, found by trying the world's write tools (in an order seeded by the task id) with
    arguments drawn from the episode's rows. Returns the call, a fork of `final` (without faults)
    on which it was made and its result, or None if none was found."""
    rng = random.Random(derive_seed("unrequested-write", task.id))
    rows = RowSampler(final, rng)
    tools = sorted(name for name, spec in world.tools.items() if spec.writes)
    rng.shuffle(tools)
    gold_rows = set(gold_changes)
    scratch = _fork_without_faults(final, "scratch")
    try:
        for _ in range(EXTRA_WRITE_ROUNDS):
            for tool in tools:
                args = rows.arguments(world.tools[tool].input_schema())
                result = scratch.call(tool, args)
                if result.is_error:
                    continue
                if any((c.table, c.key) not in gold_rows for c in result.changes):
                    episode = _fork_without_faults(final, "extra-write")
                    again = episode.call(tool, args)
                    if not again.is_error:
                        return Action(tool=tool, args=args), episode, again
                    episode.close()
                scratch.close()
                scratch = _fork_without_faults(final, "scratch")
    finally:
        scratch.close()
    return None


def find_reverted_irreversible_write(
    world: World, task: Task, final: Episode, gold_changes: NetChanges, ignored: list[str]
) -> tuple[list[Action], Episode, list[CallResult]] | None:
    """An irreversible call that succeeds on the gold-final state, followed by at most
    `REVERT_DEPTH` calls after which the final rows equal the gold solution's again (a file
    shared then unshared, a message sent then trashed and deleted for good). Found by trying the
    world's irreversible tools, then every write tool with arguments drawn from the rows the
    irreversible call changed. Returns the calls, a fork of `final` (without faults) on which
    they were made and their results, or None."""
    rng = random.Random(derive_seed("reverted-irreversible", task.id))
    rows = RowSampler(final, rng)
    irreversible = sorted(name for name, spec in world.tools.items() if spec.irreversible)
    rng.shuffle(irreversible)
    for _ in range(EXTRA_WRITE_ROUNDS):
        for tool in list(irreversible):
            action = Action(tool=tool, args=rows.arguments(world.tools[tool].input_schema()))
            scratch = _fork_without_faults(final, "scratch")
            try:
                result = scratch.call(action.tool, action.args)
                if result.is_error or not compare_with_gold(scratch.net_changes(), gold_changes, ignored):
                    continue  # refused, or nothing visible to revert
                path = _revert(world, scratch, result.changes, gold_changes, ignored, rows, REVERT_DEPTH)
            finally:
                scratch.close()
            if path is not None:
                return _replay(final, [action, *path])
            irreversible.remove(tool)  # one search per tool: the costly part, and other rows rarely differ
    return None


def _revert(
    world: World,
    episode: Episode,
    written: list[Change],
    gold_changes: NetChanges,
    ignored: list[str],
    rows: RowSampler,
    depth: int,
) -> list[Action] | None:
    """Calls (at most `depth`) after which `episode`'s final rows equal the gold solution's."""
    keys = {(c.table, c.key) for c in written}
    anchors = [(c.table, c.after if c.after is not None else c.before) for c in written]
    for tool in sorted(name for name, spec in world.tools.items() if spec.writes):
        for _ in range(REVERT_TRIES):
            table, row = rows.rng.choice(anchors)
            action = Action(tool=tool, args=rows.arguments(world.tools[tool].input_schema(), anchor=(table, row or {})))
            attempt = episode.fork(id="revert")
            try:
                result = attempt.call(action.tool, action.args)
                if result.is_error:
                    continue
                if not compare_with_gold(attempt.net_changes(), gold_changes, ignored):
                    return [action]
                if depth > 1 and any((c.table, c.key) in keys for c in result.changes):
                    rest = _revert(world, attempt, written, gold_changes, ignored, rows, depth - 1)
                    if rest is not None:
                        return [action, *rest]
            finally:
                attempt.close()
    return None


def _replay(final: Episode, actions: list[Action]) -> tuple[list[Action], Episode, list[CallResult]] | None:
    episode = _fork_without_faults(final, "reverted-irreversible")
    results = [episode.call(a.tool, a.args) for a in actions]
    if any(r.is_error for r in results):  # the search found it on the same state: never expected
        episode.close()
        return None
    return actions, episode, results


def _fork_without_faults(episode: Episode, id: str) -> Episode:
    fork = episode.fork(id=id)
    fork.set_faults(None)
    return fork
